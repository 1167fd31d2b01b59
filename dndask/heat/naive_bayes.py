"""Heat's ``ht.naive_bayes``: :class:`dndask.naive_bayes.GaussianNB` with Heat's errors
(ValueError for a non-DNDarray input) and face arrays (``epsilon_`` a 0-d array).

>>> import dndask.heat as ht
>>> ht.naive_bayes.GaussianNB().get_params()
{'priors': None, 'var_smoothing': 1e-09}
"""

from __future__ import annotations

import sys

from .. import _dndarray, _factories
from .. import naive_bayes as _core
from . import _adapt

__all__ = ["GaussianNB", "gaussianNB"]

_FITTED = ("classes_", "class_count_", "class_prior_", "theta_", "var_")


def _check(**arrays) -> None:
    for name, value in arrays.items():
        if value is not None and not isinstance(value, _dndarray.DNDarray):
            raise ValueError(f"`{name}` must be a DNDarray, got {type(value).__name__}")


class GaussianNB(_core.GaussianNB):
    """Heat's ``GaussianNB`` (see :class:`dndask.naive_bayes.GaussianNB`)."""

    def _partial_fit(self, x, y, classes, sample_weight, refit):
        _check(x=x, y=y, sample_weight=sample_weight)
        super()._partial_fit(x, y, classes, sample_weight, refit)
        for name in _FITTED:
            setattr(self, name, _adapt.face(getattr(self, name)))
        self.epsilon_ = _adapt.face(
            _factories.array(float(self.epsilon_), dtype=self.theta_.to_dask().dtype)
        )
        return self

    def predict(self, x):
        _check(x=x)
        return _adapt.face(super().predict(x))

    def predict_log_proba(self, x):
        _check(x=x)
        return _adapt.face(super().predict_log_proba(x))

    def predict_proba(self, x):
        _check(x=x)
        return _adapt.face(super().predict_proba(x))


# Heat's module name
gaussianNB = sys.modules[__name__]  # noqa: N816
