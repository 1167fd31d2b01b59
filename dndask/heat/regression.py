"""Heat's ``ht.regression``: :class:`dndask.regression.Lasso` with Heat's checks, face arrays.

>>> import dndask.heat as ht
>>> ht.regression.Lasso().get_params()
{'lam': 0.1, 'max_iter': 100, 'tol': 1e-06}
"""

from __future__ import annotations

import sys

from .. import regression as _core
from . import _adapt

__all__ = ["Lasso", "lasso"]


class Lasso(_core.Lasso):
    """Heat's ``Lasso`` (see :class:`dndask.regression.Lasso`): a split along the
    features is a NotImplementedError, results are face arrays."""

    def fit(self, x, y):
        for name, a in (("x", x), ("y", y)):
            if getattr(a, "ndim", 0) > 2:
                raise ValueError(f"`{name}` must have at most 2 axes, got {a.ndim}")
        if getattr(x, "split", None) not in (None, 0) or getattr(y, "split", None) not in (None, 0):
            raise NotImplementedError(
                f"splits along the features are not supported (as in Heat), "
                f"got x.split={x.split}, y.split={y.split}"
            )
        super().fit(x, y)
        self.theta = _adapt.face(self.theta)
        return self

    def predict(self, x):
        return _adapt.face(super().predict(x))

    @property
    def coef_(self):
        return None if self.theta is None else _adapt.face(super().coef_)

    @property
    def intercept_(self):
        return None if self.theta is None else _adapt.face(super().intercept_)


# Heat's ``ht.regression.lasso`` is the module holding ``Lasso``
lasso = sys.modules[__name__]
