"""NaN-skipping reductions and differences: ``nansum``, ``nanprod``, ``diff``.

``nansum``/``nanprod`` are reductions (see :func:`dndask._ops.reduce` for the split
of the result). ``diff`` subtracts neighbouring slices, so the split is kept; along
the split axis each rank needs one row of its right neighbour.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

import dask.array as da
import numpy as np

from . import _elementwise, _factories, _layout, _ops
from ._manipulation import concatenate

if TYPE_CHECKING:
    from ._dndarray import DNDarray

__all__ = ["diff", "nanprod", "nansum"]


def nansum(a: DNDarray, axis=None, *, dtype=None, out=None, keepdims: bool = False) -> DNDarray:
    """Sum over ``axis`` with NaNs counted as zero.

    >>> import dndask as ht
    >>> float(ht.nansum(ht.array([1.0, float("nan"), 2.0], split=0)))
    3.0
    """
    return _ops.reduce(np.nansum, da.nansum, a, axis, keepdims, out=out, dtype=dtype)


def nanprod(a: DNDarray, axis=None, *, dtype=None, out=None, keepdims: bool = False) -> DNDarray:
    """Product over ``axis`` with NaNs counted as one.

    >>> import dndask as ht
    >>> float(ht.nanprod(ht.array([2.0, float("nan"), 3.0], split=0)))
    6.0
    """
    return _ops.reduce(np.nanprod, da.nanprod, a, axis, keepdims, out=out, dtype=dtype)


def diff(a: DNDarray, n: int = 1, axis: int = -1, prepend=None, append=None) -> DNDarray:
    """The ``n``-th discrete difference along ``axis``, as :func:`numpy.diff`.

    ``prepend``/``append`` (DNDarrays or scalars) are joined to ``a`` first.

    >>> import dndask as ht
    >>> ht.diff(ht.array([1, 4, 9, 16], split=0)).numpy().tolist()
    [3, 5, 7]
    """
    _ops._check_operand(a, "diff")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"`n` must be an int, got {type(n).__name__}")
    if n < 0:
        raise ValueError(f"`n` must be non-negative, got {n}")
    if a.ndim == 0:
        raise ValueError("`a` of `diff` must have at least one dimension")
    ax = _layout.normalize_axis(axis, a.ndim)
    parts = []
    for extra in (prepend, append):
        if extra is None:
            parts.append(None)
            continue
        if not isinstance(extra, type(a)) and not hasattr(extra, "to_dask"):
            shape = list(a.shape)
            shape[ax] = 1
            dtype = np.result_type(a.to_dask().dtype, np.asarray(extra).dtype)
            split = None if a.split == ax else a.split
            extra = _factories.full(
                tuple(shape), extra, dtype=dtype, split=split, comm=a.comm, device=a.device
            )
        parts.append(extra)
    joined = [p for p in (parts[0], a, parts[1]) if p is not None]
    x = concatenate(joined, axis=ax) if len(joined) > 1 else a
    for _ in range(int(n)):
        if x.shape[ax] == 0:
            break
        hi = tuple(slice(1, None) if i == ax else slice(None) for i in range(x.ndim))
        lo = tuple(slice(None, -1) if i == ax else slice(None) for i in range(x.ndim))
        x = _elementwise.subtract(x[hi], x[lo])
    return x
