"""The weighted average (:func:`dndask.average`) and the layout of its weights.

Weights of ``a``'s shape are distributed like ``a``; 1-D weights along
``axis`` are transposed and broadcast as numpy does, then aligned with ``a``
(:func:`dndask._ops.align`) so that ``a * weights`` and the sums line up.
"""

from __future__ import annotations

import dask.array as da
import numpy as np

from .. import _dndarray, _layout, _ops
from . import _checks, _rows


def _given_axes(axis, ndim: int) -> tuple[int, ...] | None:
    """``axis`` normalised but in the order given (numpy orders 1-D weights by it)."""
    if axis is None:
        return None
    _layout.normalize_axes(axis, ndim)
    items = axis if isinstance(axis, tuple) else (axis,)
    return tuple(int(ax) % ndim for ax in items)


def _broadcast_weights(weights, a: _dndarray.DNDarray, given: tuple[int, ...]):
    """Weights of shape ``a.shape[given]`` laid out to broadcast against ``a`` (numpy's rule)."""
    perm = tuple(int(p) for p in np.argsort(given))
    index = tuple(slice(None) if ax in given else None for ax in range(a.ndim))
    if not isinstance(weights, _dndarray.DNDarray):
        data = _checks.to_numpy(weights, "weights").transpose(perm)
        return data[index]
    x = weights.to_dask().transpose(perm)[index]
    split = None
    if weights.split is not None:
        split = sorted(given)[perm.index(weights.split)]
    return _dndarray.from_dask(x, split, weights.comm, parents=(weights,))


def _weights_layout(weights, a: _dndarray.DNDarray, axis) -> _dndarray.DNDarray:
    """``weights`` checked against numpy's shape rules, as a DNDarray that broadcasts like ``a``."""
    shape = _checks.shape_of(weights)
    if shape == a.shape:
        return _checks.distributed_like(weights, a, "weights")
    given = _given_axes(axis, a.ndim)
    if given is None:
        raise TypeError(
            f"`weights` must have the shape of `a` {a.shape} when `axis` is None, got {shape}"
        )
    expected = tuple(a.shape[ax] for ax in given)
    if shape != expected:
        raise ValueError(
            f"`weights` must have shape {a.shape} or {expected} (the shape of `a` along "
            f"`axis`={axis}), got {shape}"
        )
    return _checks.distributed_like(_broadcast_weights(weights, a, given), a, "weights")


def _aligned(a: _dndarray.DNDarray, wgt: _dndarray.DNDarray) -> tuple:
    """``a`` and the (broadcastable) weights laid out alike, so their sums line up too."""
    (x, w), split, comm, parents = _ops.align((a, wgt), "average")
    w_split = split if split is not None and wgt.shape[split] == a.shape[split] else None
    return (
        _dndarray.from_dask(x, split, comm, parents=parents),
        _dndarray.from_dask(w, w_split, comm, parents=parents),
    )


def _cast_multiply(dtype):
    def multiply(x, w):
        return x.astype(dtype) * w.astype(dtype)

    return multiply


def _full_like(value):
    def full(x):
        return da.full_like(x, value, dtype=x.dtype)

    return full


def _broadcast_like(x, s):
    return da.broadcast_to(s, x.shape, chunks=x.chunks)


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """Weighted average over ``axis``, as :func:`numpy.average`.

    ``avg = sum(a * weights, axis) / sum(weights, axis)``, computed in numpy's
    result dtype (at least float64 for integer or boolean ``a``). Without
    weights this is the mean, and ``sum_of_weights`` is the number of elements
    averaged.

    Parameters
    ----------
    a : DNDarray
        Numeric data.
    axis : None, int or tuple of ints, optional
        Axes to average over; all of them by default.
    weights : DNDarray, numpy array or torch tensor, optional
        Either the shape of ``a`` or, with ``axis`` given, the shape of ``a``
        along ``axis`` (1-D for one axis). Distributed weights are resplit and
        redistributed to line up with ``a``.
    returned : bool, optional
        Also return ``sum_of_weights``, broadcast to the shape of the average.
    keepdims : bool, optional
        Keep the reduced axes as length-one axes.

    Returns
    -------
    DNDarray or tuple of DNDarray
        The average (and the sum of weights); split as a reduction: ``None``
        if ``axis`` includes the split, otherwise the split shifted. The split
        is ``a.split``, or the weights' if ``a`` is not split and they are
        (Heat's rule for operands with different splits).

    Raises
    ------
    ZeroDivisionError
        When the weights sum to zero along ``axis`` (checked now: one bool
        travels to the driver).
    TypeError
        When ``axis`` is None and ``weights`` does not have the shape of ``a``.
    ValueError
        When ``weights`` has neither the shape of ``a`` nor of ``a`` along ``axis``.

    Examples
    --------
    >>> import dndask as ht
    >>> a = ht.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], split=0)
    >>> ht.average(a, axis=1, weights=ht.array([3.0, 1.0])).numpy().tolist()
    [1.25, 3.25, 5.25]
    >>> avg, total = ht.average(a, axis=0, returned=True)
    >>> avg.numpy().tolist(), total.numpy().tolist(), avg.split
    ([3.0, 4.0], [3.0, 3.0], None)
    """
    a = _checks.check_array(a, "average")
    _checks.check_kind(a.dtype, "biufc", "average", "a", "a numeric")
    returned = _checks.check_bool(returned, "returned")
    keepdims = _checks.check_bool(keepdims, "keepdims")
    axes = _layout.normalize_axes(axis, a.ndim)
    if weights is None:
        avg = _ops.reduce(np.mean, da.mean, a, axes, keepdims)
        if not returned:
            return avg
        count = avg.dtype.type(a.size / max(avg.size, 1))
        return avg, _ops.elementwise(_full_like(count), avg, name="average")
    _checks.check_kind(_checks.dtype_of(weights), "biufc", "average", "weights", "a numeric")
    a, wgt = _aligned(a, _weights_layout(weights, a, axis))
    if a.dtype.kind in "biu":
        dtype = np.result_type(a.dtype, wgt.dtype, "f8")
    else:
        dtype = np.result_type(a.dtype, wgt.dtype)
    # the check needs the sums now; keep them on the workers instead of computing them twice
    total = _ops.reduce(np.sum, da.sum, wgt, axes, keepdims, dtype=dtype).persist(wait=True)
    if bool(_rows.small((total == 0).to_dask().any(), total, {})):
        raise ZeroDivisionError("`weights` sum to zero along `axis`, can't be normalized")
    product = _ops.elementwise(_cast_multiply(dtype), a, wgt, name="average")
    avg = _ops.reduce(np.sum, da.sum, product, axes, keepdims, dtype=dtype) / total
    if not returned:
        return avg
    if total.shape != avg.shape:
        total = _ops.elementwise(_broadcast_like, avg, total, name="average")
    return avg, total
