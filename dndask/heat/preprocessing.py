"""Heat's ``ht.preprocessing``: :mod:`dndask.preprocessing`'s scalers returning face arrays.

Heat's extra arguments are accepted: ``RobustScaler``'s ``sketched`` and
``sketch_size`` (the face computes the exact quantiles). Integer data is a TypeError,
as in Heat.

>>> import dndask.heat as ht
>>> x = ht.array([[1.0], [3.0]], split=0)
>>> ht.preprocessing.MinMaxScaler().fit_transform(x).numpy().tolist()
[[0.0], [1.0]]
"""

from __future__ import annotations

from .. import preprocessing as _core
from . import _adapt

__all__ = ["MaxAbsScaler", "MinMaxScaler", "Normalizer", "RobustScaler", "StandardScaler"]

_FITTED = (
    "mean_",
    "var_",
    "scale_",
    "data_min_",
    "data_max_",
    "data_range_",
    "min_",
    "max_abs_",
    "center_",
    "iqr_",
)


class _Face:
    """Face arrays in and out: the fitted attributes and every result."""

    def fit(self, X, *args, **kwargs):
        super().fit(X, *args, **kwargs)
        for name in _FITTED:
            if getattr(self, name, None) is not None:
                setattr(self, name, _adapt.face(getattr(self, name)))
        return self

    def transform(self, X):
        return _adapt.face(super().transform(X))

    def inverse_transform(self, Y):
        return _adapt.face(super().inverse_transform(Y))


class StandardScaler(_Face, _core.StandardScaler):
    """Heat's ``StandardScaler`` (see :class:`dndask.preprocessing.StandardScaler`)."""


class MinMaxScaler(_Face, _core.MinMaxScaler):
    """Heat's ``MinMaxScaler`` (see :class:`dndask.preprocessing.MinMaxScaler`)."""


class MaxAbsScaler(_Face, _core.MaxAbsScaler):
    """Heat's ``MaxAbsScaler`` (see :class:`dndask.preprocessing.MaxAbsScaler`)."""


class RobustScaler(_Face, _core.RobustScaler):
    """Heat's ``RobustScaler`` (see :class:`dndask.preprocessing.RobustScaler`)."""

    def __init__(
        self,
        *,
        with_centering=True,
        with_scaling=True,
        quantile_range=(25.0, 75.0),
        copy=True,
        unit_variance=False,
        sketched=False,
        sketch_size=None,
    ):
        super().__init__(
            with_centering=with_centering,
            with_scaling=with_scaling,
            quantile_range=quantile_range,
            copy=copy,
            unit_variance=unit_variance,
        )
        self.sketched = sketched
        self.sketch_size = sketch_size


class Normalizer(_core.Normalizer):
    """Heat's ``Normalizer`` (see :class:`dndask.preprocessing.Normalizer`); Heat's
    ``norm_`` and ``ord_`` attributes."""

    def __init__(self, norm="l2", *, copy=True):
        super().__init__(norm, copy=copy)
        self.norm_ = norm
        self.ord_ = self._ORDS[norm]

    def transform(self, X):
        return _adapt.face(super().transform(X))
