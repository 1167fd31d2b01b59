"""Heat's ``heat.classification.kneighborsclassifier``: :class:`KNeighborsClassifier` over
:class:`dndask.classification.KNeighborsClassifier`, with Heat's errors (ValueError for bad
shapes) and face arrays.

>>> import dndask.heat as ht
>>> ht.classification.KNeighborsClassifier(n_neighbors=3).get_params()
{'n_neighbors': 3}
"""

from __future__ import annotations

from dndask import classification as _core
from dndask.heat import _adapt

__all__ = ["KNeighborsClassifier"]


class KNeighborsClassifier(_core.KNeighborsClassifier):
    """Heat's ``KNeighborsClassifier`` (see :class:`dndask.classification.KNeighborsClassifier`)."""

    @staticmethod
    def one_hot_encoding(x):
        return _adapt.face(_core.KNeighborsClassifier.one_hot_encoding(x))

    def fit(self, x, y):
        if getattr(x, "ndim", 2) != 2:
            raise ValueError(f"`x` must be 2-D, got {x.ndim}-D")
        super().fit(x, y)
        return self

    def predict(self, x):
        return _adapt.face(super().predict(x))
