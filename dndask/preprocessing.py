"""Feature scaling of DNDarrays: Standard, MinMax, MaxAbs and Robust scalers, Normalizer.

``fit`` learns per-feature statistics in one pass (:func:`dndask.base.per_chunk`): each
rank summarizes its own block (count, mean, squared deviations, min, max), the driver
merges the summaries (Chan's pairwise rule for the variance); a split along the
features needs no merge. ``transform`` is lazy elementwise work on the data's chunks.
The learned attributes are unsplit DNDarrays of one value per feature.

Features whose scale is below the dtype's resolution (1e-7 for float32, 1e-14 for
float64, as Heat) are not scaled. ``copy=False`` writes the result into the input
array (as Heat does) and returns it.

>>> import dndask as ht
>>> from dndask.preprocessing import StandardScaler
>>> x = ht.array([[1.0, 10.0], [3.0, 10.0]], split=0)
>>> StandardScaler().fit_transform(x).numpy().tolist()
[[-1.0, 0.0], [1.0, 0.0]]
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

import dndask as ht
from dndask.base import BaseEstimator, TransformMixin, check_fitted, per_chunk

__all__ = ["MaxAbsScaler", "MinMaxScaler", "Normalizer", "RobustScaler", "StandardScaler"]

_TOL = {np.dtype(np.float32): 1e-7, np.dtype(np.float64): 1e-14}


def _check(x, name: str = "X", n_features: int | None = None) -> ht.DNDarray:
    """A 2-D floating DNDarray (Heat's rule: integer data is a TypeError)."""
    if not isinstance(x, ht.DNDarray):
        raise TypeError(f"`{name}` must be a DNDarray, got {type(x).__name__}")
    if x.ndim != 2:
        raise ValueError(f"`{name}` must be 2-D (samples, features), got {x.ndim}-D")
    dtype = x.to_dask().dtype
    if not np.issubdtype(dtype, np.floating):
        raise TypeError(f"`{name}` must have a floating dtype (float32 or float64), got {dtype}")
    if n_features is not None and x.shape[1] != n_features:
        raise ValueError(
            f"`{name}` must have {n_features} features (as the data fitted), got {x.shape[1]}"
        )
    return x


def _tol(x: ht.DNDarray) -> float:
    return _TOL.get(x.to_dask().dtype, 1e-7)


def _summary(block) -> tuple:
    """One block's per-column count, mean, sum of squared deviations, min and max."""
    b = np.asarray(block, dtype=np.float64)
    n = b.shape[0]
    if n == 0:
        f = b.shape[1]
        return 0, np.zeros(f), np.zeros(f), np.full(f, np.inf), np.full(f, -np.inf)
    mean = b.mean(axis=0)
    return n, mean, ((b - mean) ** 2).sum(axis=0), b.min(axis=0), b.max(axis=0)


def _count_nonfinite(block) -> int:
    return int(np.size(block) - np.count_nonzero(np.isfinite(block)))


def _merge(a: tuple, b: tuple) -> tuple:
    """Chan's parallel rule: the summary of two disjoint sets of rows."""
    na, ma, sa, lo_a, hi_a = a
    nb, mb, sb, lo_b, hi_b = b
    n = na + nb
    if n == 0:
        return a
    delta = mb - ma
    mean = ma + delta * (nb / n)
    m2 = sa + sb + delta**2 * (na * nb / n)
    return n, mean, m2, np.minimum(lo_a, lo_b), np.maximum(hi_a, hi_b)


def column_stats(x: ht.DNDarray) -> dict:
    """Per-feature ``mean``, ``var`` (population), ``min`` and ``max`` of ``x`` in one pass."""
    parts = per_chunk(x, _summary)
    if x.split == 1:  # each chunk holds whole columns
        parts = [p for p in parts if len(p[1])]
        n = x.shape[0]
        mean = np.concatenate([p[1] for p in parts])
        m2 = np.concatenate([p[2] for p in parts])
        lo = np.concatenate([p[3] for p in parts])
        hi = np.concatenate([p[4] for p in parts])
    else:
        total = parts[0]
        for p in parts[1:]:
            total = _merge(total, p)
        n, mean, m2, lo, hi = total
    _finite(mean + lo + hi)
    return {"n": n, "mean": mean, "var": m2 / max(n, 1), "min": lo, "max": hi}


def _finite(values: np.ndarray, name: str = "X") -> None:
    """ValueError when a per-feature statistic is NaN or infinite: its feature holds one."""
    bad = np.flatnonzero(~np.isfinite(values))
    if len(bad):
        raise ValueError(
            f"`{name}` must be finite, got NaN or infinite values in feature(s) {bad.tolist()}"
        )


def _param(values: np.ndarray, x: ht.DNDarray) -> ht.DNDarray:
    return ht.array(np.asarray(values, dtype=x.to_dask().dtype), comm=x.comm)


def _safe(scale: np.ndarray, tol: float) -> np.ndarray:
    """Scales below ``tol`` become 1: those features are left unscaled."""
    return np.where(np.abs(scale) >= tol, scale, 1.0)


def _out(x: ht.DNDarray, result: ht.DNDarray, copy: bool) -> ht.DNDarray:
    if copy:
        return result
    x[...] = result
    return x


class _AffineScaler(TransformMixin, BaseEstimator):
    """``transform(x) = (x - shift_) * scale_``; subclasses learn ``shift_`` and ``scale_``."""

    _n_features_attr = "scale_"

    def _fitted(self) -> tuple[np.ndarray, np.ndarray]:
        check_fitted(self, self._n_features_attr)
        return self._shift, self._scale

    def transform(self, X: ht.DNDarray) -> ht.DNDarray:
        """Scale ``X`` with the learned statistics (into ``X`` itself if ``copy=False``)."""
        shift, scale = self._fitted()
        X = _check(X, n_features=len(scale))
        dtype = X.to_dask().dtype
        result = (X - ht.array(shift.astype(dtype), comm=X.comm)) * ht.array(
            scale.astype(dtype), comm=X.comm
        )
        return _out(X, result, self.copy)

    def inverse_transform(self, Y: ht.DNDarray) -> ht.DNDarray:
        """Undo :meth:`transform` (into ``Y`` itself if ``copy=False``)."""
        shift, scale = self._fitted()
        Y = _check(Y, "Y", n_features=len(scale))
        dtype = Y.to_dask().dtype
        result = Y / ht.array(scale.astype(dtype), comm=Y.comm) + ht.array(
            shift.astype(dtype), comm=Y.comm
        )
        return _out(Y, result, self.copy)


class StandardScaler(_AffineScaler):
    """Center each feature on its mean and scale it to unit variance.

    Sets ``mean_``, ``var_`` (population variance) and ``scale_`` (``1 / std``, 1 for
    a constant feature).

    >>> import dndask as ht
    >>> from dndask.preprocessing import StandardScaler
    >>> s = StandardScaler().fit(ht.array([[0.0], [2.0], [4.0]], split=0, dtype="float64"))
    >>> s.mean_.numpy().tolist(), s.var_.numpy().round(4).tolist()
    ([2.0], [2.6667])
    """

    def __init__(self, *, copy: bool = True, with_mean: bool = True, with_std: bool = True):
        self.copy = copy
        self.with_mean = with_mean
        self.with_std = with_std
        self.mean_ = self.var_ = self.scale_ = None

    def fit(self, X: ht.DNDarray, sample_weight=None) -> StandardScaler:
        """Learn each feature's mean and variance (one pass)."""
        if sample_weight is not None:
            raise NotImplementedError("`sample_weight` is not supported")
        X = _check(X)
        stats = column_stats(X)
        var = _safe(stats["var"], _tol(X))
        self._shift = stats["mean"] if self.with_mean else np.zeros_like(stats["mean"])
        self._scale = 1 / np.sqrt(var) if self.with_std else np.ones_like(var)
        self.mean_, self.var_ = _param(stats["mean"], X), _param(stats["var"], X)
        self.scale_ = _param(self._scale, X)
        return self


class MinMaxScaler(_AffineScaler):
    """Map each feature's ``[min, max]`` onto ``feature_range``.

    Sets ``data_min_``, ``data_max_``, ``data_range_``, ``scale_`` and ``min_``
    (``transform(x) = x * scale_ + min_``).

    >>> import dndask as ht
    >>> from dndask.preprocessing import MinMaxScaler
    >>> x = ht.array([[0.0], [5.0], [10.0]], split=0)
    >>> MinMaxScaler((-1.0, 1.0)).fit_transform(x).numpy().tolist()
    [[-1.0], [0.0], [1.0]]
    """

    def __init__(self, feature_range=(0.0, 1.0), *, copy: bool = True, clip: bool = False):
        if clip:
            raise NotImplementedError("`clip=True` is not supported")
        lo, hi = feature_range
        if not hi > lo:
            raise ValueError(
                f"`feature_range` must have its upper bound above its lower, got {feature_range}"
            )
        self.feature_range = feature_range
        self.copy = copy
        self.clip = clip
        self.data_min_ = self.data_max_ = self.data_range_ = self.scale_ = self.min_ = None

    def fit(self, X: ht.DNDarray) -> MinMaxScaler:
        """Learn each feature's minimum and maximum (one pass)."""
        X = _check(X)
        stats = column_stats(X)
        lo, hi = self.feature_range
        data_range = stats["max"] - stats["min"]
        scale = 1 / _safe(data_range / (hi - lo), _tol(X))
        # transform: (x - shift) * scale with shift = min - lo / scale
        self._scale = scale
        self._shift = stats["min"] - lo / scale
        self.data_min_, self.data_max_ = _param(stats["min"], X), _param(stats["max"], X)
        self.data_range_ = _param(data_range, X)
        self.scale_ = _param(scale, X)
        self.min_ = _param(lo - stats["min"] * scale, X)
        return self


class MaxAbsScaler(_AffineScaler):
    """Scale each feature by its largest absolute value (no shift).

    >>> import dndask as ht
    >>> from dndask.preprocessing import MaxAbsScaler
    >>> MaxAbsScaler().fit_transform(ht.array([[-4.0], [2.0]], split=0)).numpy().tolist()
    [[-1.0], [0.5]]
    """

    def __init__(self, *, copy: bool = True):
        self.copy = copy
        self.max_abs_ = self.scale_ = None

    def fit(self, X: ht.DNDarray) -> MaxAbsScaler:
        """Learn each feature's largest absolute value (one pass)."""
        X = _check(X)
        stats = column_stats(X)
        max_abs = np.maximum(np.abs(stats["min"]), np.abs(stats["max"]))
        self._scale = 1 / _safe(max_abs, _tol(X))
        self._shift = np.zeros_like(max_abs)
        self.max_abs_, self.scale_ = _param(max_abs, X), _param(self._scale, X)
        return self


class RobustScaler(_AffineScaler):
    """Center on the median and scale by the inter-quantile range (numpy's linear percentiles).

    Sets ``center_`` (with centering) and ``iqr_``, ``scale_`` (``1 / iqr_``; with scaling).

    >>> import dndask as ht
    >>> from dndask.preprocessing import RobustScaler
    >>> x = ht.array([[1.0], [2.0], [3.0], [4.0], [100.0]], split=0)
    >>> RobustScaler().fit_transform(x).numpy().tolist()
    [[-1.0], [-0.5], [0.0], [0.5], [48.5]]
    """

    _n_features_attr = "_scale"

    def __init__(
        self,
        *,
        with_centering: bool = True,
        with_scaling: bool = True,
        quantile_range=(25.0, 75.0),
        copy: bool = True,
        unit_variance: bool = False,
    ):
        if not with_centering and not with_scaling:
            raise ValueError("`with_centering` and `with_scaling` must not both be False")
        lo, hi = quantile_range
        if not 0.0 <= lo < hi <= 100.0:
            raise ValueError(
                f"`quantile_range` must satisfy 0 <= low < high <= 100, got {quantile_range}"
            )
        if unit_variance:
            raise NotImplementedError("`unit_variance=True` is not supported")
        self.with_centering = with_centering
        self.with_scaling = with_scaling
        self.quantile_range = quantile_range
        self.copy = copy
        self.unit_variance = unit_variance
        self.center_ = self.iqr_ = self.scale_ = None
        self._scale = None

    def fit(self, X: ht.DNDarray) -> RobustScaler:
        """Learn each feature's median and inter-quantile range."""
        X = _check(X)
        lo, hi = self.quantile_range
        q = np.asarray(ht.percentile(X, [lo, 50.0, hi], axis=0).numpy(), dtype=np.float64)
        _finite(q.sum(axis=0))
        f = X.shape[1]
        self._shift = q[1] if self.with_centering else np.zeros(f)
        iqr = q[2] - q[0]
        self._scale = 1 / _safe(iqr, _tol(X)) if self.with_scaling else np.ones(f)
        if self.with_centering:
            self.center_ = _param(q[1], X)
        if self.with_scaling:
            self.iqr_, self.scale_ = _param(iqr, X), _param(self._scale, X)
        return self


class Normalizer(TransformMixin, BaseEstimator):
    """Scale each sample (row) to unit norm: ``norm`` 'l2', 'l1' or 'max'.

    Rows whose norm is below the dtype's resolution are left as they are. ``fit``
    learns nothing (it checks ``X``).

    >>> import dndask as ht
    >>> from dndask.preprocessing import Normalizer
    >>> x = ht.array([[3.0, 4.0], [0.0, 0.0]], split=0, dtype="float64")
    >>> Normalizer().transform(x).numpy().tolist()
    [[0.6, 0.8], [0.0, 0.0]]
    """

    _ORDS: ClassVar[dict] = {"l2": 2, "l1": 1, "max": np.inf}

    def __init__(self, norm: str = "l2", *, copy: bool = True):
        if norm not in self._ORDS:
            raise NotImplementedError(f"`norm` must be 'l2', 'l1' or 'max', got {norm!r}")
        self.norm = norm
        self.copy = copy

    def fit(self, X: ht.DNDarray, y=None) -> Normalizer:
        """Check ``X`` (its shape, dtype and that it is finite: one pass); there is nothing
        to learn."""
        X = _check(X)
        bad = sum(per_chunk(X, _count_nonfinite))
        if bad:
            raise ValueError(f"`X` must be finite, got {bad} NaN or infinite values")
        return self

    def transform(self, X: ht.DNDarray) -> ht.DNDarray:
        """``X`` with every row divided by its norm (into ``X`` itself if ``copy=False``)."""
        X = _check(X)
        norms = ht.linalg.vector_norm(X, ord=self._ORDS[self.norm], axis=1, keepdims=True)
        tol = _tol(X)
        safe = ht.where(norms >= tol, norms, ht.ones_like(norms))
        return _out(X, X / safe, self.copy)
