"""The numpy functions dndask implements for DNDarrays: one registry entry each.

``np.f(a, ...)`` on a DNDarray calls the function registered here for ``np.f`` (see
:mod:`dndask._protocols` for the registry and how to add to it); every other numpy
function raises NotImplementedError. Functions defined elsewhere may register
themselves with ``@implements(np.f)`` instead of a line in :data:`TABLE`.

>>> import numpy as np
>>> import dndask as ht
>>> np.sum(ht.arange(4, split=0)).item()
6
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import (
    _elementwise,
    _factories,
    _linalg,
    _manipulation,
    _reductions,
    _signal,
    _sorting,
    _statistics,
    _ufuncs_extra,
)
from ._dndarray import DNDarray
from ._protocols import implements, implements_ufunc, outputs, unsupported


# ------------------------------------------------- numpy-specific conventions
def _shape(a, *args, **kwargs):
    """``numpy.shape``: metadata only, no data touched."""
    return a.shape if isinstance(a, DNDarray) else np.shape(a)


def _ndim(a, *args, **kwargs):
    """``numpy.ndim``: metadata only."""
    return a.ndim if isinstance(a, DNDarray) else np.ndim(a)


def _size(a, axis=None):
    """``numpy.size``: metadata only."""
    if not isinstance(a, DNDarray):
        return np.size(a, axis)
    return a.size if axis is None else a.shape[axis]


def _numpy_qr(a, mode="reduced"):
    """``numpy.linalg.qr``: numpy's return convention (``R`` alone for ``mode="r"``)."""
    q, r = _linalg.qr(a, mode=mode)
    return r if mode == "r" else (q, r)


def _numpy_svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """``numpy.linalg.svd``: numpy's convention, ``(U, S, Vh)`` with ``Vh = V^H``."""
    if hermitian:
        raise unsupported("numpy.linalg.svd with `hermitian=True`")
    if not compute_uv:
        return _linalg.svd(a, full_matrices=False, compute_uv=False)  # S is the same either way
    return tuple(_linalg.svd(a, full_matrices=full_matrices))


def _c_order(order: str, name: str) -> None:
    if order != "C":
        raise unsupported(f"numpy.{name} with `order={order!r}`")


# ``np.ones(3, like=a)``: numpy passes every default, ``order`` and ``device`` too
def _numpy_ones(shape, dtype=None, order="C", *, device=None):
    """``numpy.ones(..., like=a)``: a DNDarray of ones on the default comm."""
    _c_order(order, "ones")
    return _factories.ones(shape, dtype=np.float64 if dtype is None else dtype)


def _numpy_full(shape, fill_value, dtype=None, order="C", *, device=None):
    """``numpy.full(..., like=a)``."""
    _c_order(order, "full")
    return _factories.full(shape, fill_value, dtype=dtype)


def _numpy_eye(N, M=None, k=0, dtype=float, order="C", *, device=None):  # noqa: N803 (numpy's)
    """``numpy.eye(..., like=a)``."""
    _c_order(order, "eye")
    if k != 0:
        raise unsupported("numpy.eye with `k` other than 0")
    return _factories.eye(N if M is None else (N, M), dtype=dtype)


# numpy function -> the dndask function called with numpy's arguments
TABLE: dict[Callable, Callable] = {
    # reductions and scans
    np.all: _reductions.all,
    np.any: _reductions.any,
    np.sum: _reductions.sum,
    np.prod: _reductions.prod,
    np.mean: _reductions.mean,
    np.var: _reductions.var,
    np.std: _reductions.std,
    np.min: _reductions.min,
    np.amin: _reductions.min,
    np.max: _reductions.max,
    np.amax: _reductions.max,
    np.argmin: _reductions.argmin,
    np.argmax: _reductions.argmax,
    np.cumsum: _reductions.cumsum,
    np.cumprod: _reductions.cumprod,
    # elementwise functions with more than one ufunc's arguments
    np.round: _elementwise.round,
    np.around: _elementwise.round,
    np.clip: _elementwise.clip,
    np.where: _sorting.where,
    np.isclose: _elementwise.isclose,
    np.allclose: _elementwise.allclose,
    np.nan_to_num: _elementwise.nan_to_num,
    np.real: _elementwise.FUNCTIONS["real"],
    np.imag: _elementwise.FUNCTIONS["imag"],
    # creation (``np.zeros(3, like=a)``) and the ``*_like`` functions
    np.arange: _factories.arange,
    np.array: _factories.array,
    np.empty: _factories.empty,
    np.eye: _numpy_eye,
    np.full: _numpy_full,
    np.ones: _numpy_ones,
    np.zeros: _factories.zeros,
    np.empty_like: _factories.empty_like,
    np.full_like: _factories.full_like,
    np.ones_like: _factories.ones_like,
    np.zeros_like: _factories.zeros_like,
    # manipulation
    np.broadcast_arrays: _manipulation.broadcast_arrays,
    np.broadcast_to: _manipulation.broadcast_to,
    np.concatenate: _manipulation.concatenate,
    np.expand_dims: _manipulation.expand_dims,
    np.flip: _manipulation.flip,
    np.hstack: _manipulation.hstack,
    np.moveaxis: _manipulation.moveaxis,
    np.pad: _manipulation.pad,
    np.ravel: _manipulation.ravel,
    np.repeat: _manipulation.repeat,
    np.reshape: _manipulation.reshape,
    np.roll: _manipulation.roll,
    np.rot90: _manipulation.rot90,
    np.lib.stride_tricks.sliding_window_view: _manipulation.sliding_window_view,
    np.squeeze: _manipulation.squeeze,
    np.stack: _manipulation.stack,
    np.swapaxes: _manipulation.swapaxes,
    np.tile: _manipulation.tile,
    np.transpose: _manipulation.transpose,
    np.vstack: _manipulation.vstack,
    # elementwise functions that are not ufuncs
    np.angle: _ufuncs_extra.angle,
    np.iscomplex: _ufuncs_extra.iscomplex,
    np.isreal: _ufuncs_extra.isreal,
    # products
    np.dot: _linalg.dot,
    np.outer: _linalg.outer,
    np.tensordot: _linalg.tensordot,
    np.linalg.norm: _linalg.norm,
    np.linalg.qr: _numpy_qr,
    np.linalg.svd: _numpy_svd,
    # statistics
    np.average: _statistics.average,
    np.bincount: _statistics.bincount,
    np.histogram: _statistics.histogram,
    np.convolve: _signal.convolve,
    np.median: _statistics.median,
    np.nanmedian: _statistics.nanmedian,
    np.nanpercentile: _statistics.nanpercentile,
    np.nanquantile: _statistics.nanquantile,
    np.percentile: _statistics.percentile,
    np.quantile: _statistics.quantile,
    # sorting and sets
    np.argpartition: _sorting.argpartition,
    np.argsort: _sorting.argsort,
    np.isin: _sorting.isin,
    np.nonzero: _sorting.nonzero,
    np.partition: _sorting.partition,
    np.searchsorted: _sorting.searchsorted,
    np.sort: _sorting.sort,
    np.take: _sorting.take,
    np.take_along_axis: _sorting.take_along_axis,
    np.unique: _sorting.unique,
    # metadata
    np.shape: _shape,
    np.ndim: _ndim,
    np.size: _size,
}

# names that only some numpy releases have (numpy 2's array API spellings, numpy 1's round_)
for _module, _numpy_name, _function in (
    (np, "concat", _manipulation.concatenate),
    (np, "permute_dims", _manipulation.transpose),
    (np, "cumulative_sum", _reductions.cumsum),
    (np, "cumulative_prod", _reductions.cumprod),
    (np, "round_", _elementwise.round),
    (np, "unique_all", _sorting.unique_all),
    (np, "unique_counts", _sorting.unique_counts),
    (np, "unique_inverse", _sorting.unique_inverse),
    (np, "unique_values", _sorting.unique_values),
    (np.linalg, "matmul", _linalg.matmul),
    (np.linalg, "matrix_norm", _linalg.matrix_norm),
    (np.linalg, "outer", _linalg.outer),
    (np.linalg, "tensordot", _linalg.tensordot),
    (np.linalg, "vecdot", _linalg.vecdot),
    (np.linalg, "vector_norm", _linalg.vector_norm),
):
    if hasattr(_module, _numpy_name):
        TABLE[getattr(_module, _numpy_name)] = _function

for _numpy_function, _function in TABLE.items():
    implements(_numpy_function)(_function)


# -------------------------------------------------------------- ufunc methods
@implements_ufunc(np.matmul, "__call__")
def _matmul(a, b, /, **kwargs):
    """``np.matmul(a, b)`` and ``a @ b`` from numpy's side."""
    (out,) = outputs(kwargs, 1)
    if kwargs or out is not None:
        raise unsupported("numpy.matmul with keyword arguments")
    return _linalg.matmul(a, b)


def _vecdot(a, b, /, **kwargs):
    """``np.vecdot(a, b, axis=...)`` (numpy 2)."""
    outputs(kwargs, 1)
    axis = kwargs.pop("axis", -1)
    if kwargs:
        raise unsupported(f"numpy.vecdot with {sorted(kwargs)}")
    return _linalg.vecdot(a, b, axis=axis)


if hasattr(np, "vecdot"):
    implements_ufunc(np.vecdot, "__call__")(_vecdot)


def _along_axis_0(function: Callable) -> Callable:
    """``ufunc.reduce`` / ``ufunc.accumulate``: numpy's default axis is 0."""

    def method(a, /, axis=0, **kwargs):
        return function(a, axis, **kwargs)

    method.__name__ = function.__name__
    return method


for _ufunc, _method, _function in (
    (np.add, "reduce", _reductions.sum),
    (np.multiply, "reduce", _reductions.prod),
    (np.minimum, "reduce", _reductions.min),
    (np.maximum, "reduce", _reductions.max),
    (np.logical_and, "reduce", _reductions.all),
    (np.logical_or, "reduce", _reductions.any),
    (np.add, "accumulate", _reductions.cumsum),
    (np.multiply, "accumulate", _reductions.cumprod),
):
    implements_ufunc(_ufunc, _method)(_along_axis_0(_function))


__all__ = ["TABLE"]
