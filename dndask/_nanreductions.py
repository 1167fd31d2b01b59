"""NaN-skipping reductions and differences: ``nansum``, ``nanmean``, ..., ``diff``.

The NaN-skipping reductions (``nansum``, ``nanprod``, ``nanmean``, ``nanvar``,
``nanstd``, ``nanmin``, ``nanmax``, ``nanargmin``, ``nanargmax``) are reductions
(see :func:`dndask._ops.reduce` for the split of the result); ``nancumsum`` and
``nancumprod`` keep the distribution (see :func:`dndask._ops.cumulative`).
numpy's ``np.nan*`` functions dispatch to them, which is what xarray's
``mean``/``std``/``max``/``cumsum``... call on a DNDarray-backed DataArray
(``skipna`` is xarray's default for floats). ``diff`` subtracts neighbouring
slices, so the split is kept; along the split axis each rank needs one row of
its right neighbour.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

import dask.array as da
import numpy as np

from . import _elementwise, _factories, _layout, _ops
from ._manipulation import concatenate
from ._protocols import implements
from ._reductions import _check_ddof

if TYPE_CHECKING:
    from ._dndarray import DNDarray

__all__ = [
    "diff",
    "nanargmax",
    "nanargmin",
    "nancumprod",
    "nancumsum",
    "nanmax",
    "nanmean",
    "nanmin",
    "nanprod",
    "nanstd",
    "nansum",
    "nanvar",
]


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


def nanmean(a: DNDarray, axis=None, *, dtype=None, out=None, keepdims: bool = False) -> DNDarray:
    """Mean over ``axis`` of the values that are not NaN (an all-NaN slice gives NaN).

    Over the split axis the ranks' sums and counts are combined in a tree.

    >>> import dndask as ht, numpy as np
    >>> float(np.nanmean(ht.array([1.0, float("nan"), 2.0], split=0)))
    1.5
    """
    return _ops.reduce(np.nanmean, da.nanmean, a, axis, keepdims, out=out, dtype=dtype)


def nanvar(
    a: DNDarray, axis=None, *, dtype=None, out=None, ddof: int = 0, keepdims: bool = False
) -> DNDarray:
    """Variance over ``axis`` of the values that are not NaN, with ``ddof``.

    >>> import dndask as ht, numpy as np
    >>> float(np.nanvar(ht.array([1.0, float("nan"), 3.0], split=0)))
    1.0
    """
    ddof = _check_ddof(ddof)
    return _ops.reduce(np.nanvar, da.nanvar, a, axis, keepdims, out=out, dtype=dtype, ddof=ddof)


def nanstd(
    a: DNDarray, axis=None, *, dtype=None, out=None, ddof: int = 0, keepdims: bool = False
) -> DNDarray:
    """Standard deviation over ``axis`` of the values that are not NaN, with ``ddof``.

    >>> import dndask as ht, numpy as np
    >>> float(np.nanstd(ht.array([1.0, float("nan"), 3.0], split=0)))
    1.0
    """
    ddof = _check_ddof(ddof)
    return _ops.reduce(np.nanstd, da.nanstd, a, axis, keepdims, out=out, dtype=dtype, ddof=ddof)


def nanmin(a: DNDarray, axis=None, *, out=None, keepdims: bool = False) -> DNDarray:
    """Minimum over ``axis`` ignoring NaNs; a zero-size reduction raises ValueError.

    >>> import dndask as ht, numpy as np
    >>> float(np.nanmin(ht.array([3.0, float("nan"), 2.0], split=0)))
    2.0
    """
    return _ops.reduce(np.nanmin, da.nanmin, a, axis, keepdims, out=out, needs_elements=True)


def nanmax(a: DNDarray, axis=None, *, out=None, keepdims: bool = False) -> DNDarray:
    """Maximum over ``axis`` ignoring NaNs; a zero-size reduction raises ValueError.

    >>> import dndask as ht, numpy as np
    >>> float(np.nanmax(ht.array([3.0, float("nan"), 2.0], split=0)))
    3.0
    """
    return _ops.reduce(np.nanmax, da.nanmax, a, axis, keepdims, out=out, needs_elements=True)


def nanargmin(a: DNDarray, axis: int | None = None, *, out=None, keepdims: bool = False):
    """Index of the minimum along ``axis`` ignoring NaNs (``None``: of the flattened array).

    >>> import dndask as ht, numpy as np
    >>> int(np.nanargmin(ht.array([float("nan"), 3.0, 2.0], split=0)))
    2
    """
    return _ops.arg_reduce(np.nanargmin, da.nanargmin, a, axis, keepdims, out=out)


def nanargmax(a: DNDarray, axis: int | None = None, *, out=None, keepdims: bool = False):
    """Index of the maximum along ``axis`` ignoring NaNs (``None``: of the flattened array).

    >>> import dndask as ht, numpy as np
    >>> int(np.nanargmax(ht.array([float("nan"), 3.0, 2.0], split=0)))
    1
    """
    return _ops.arg_reduce(np.nanargmax, da.nanargmax, a, axis, keepdims, out=out)


def nancumsum(a: DNDarray, axis: int | None = None, *, dtype=None, out=None) -> DNDarray:
    """Cumulative sum along ``axis`` with NaNs counted as zero; keeps the distribution.

    >>> import dndask as ht, numpy as np
    >>> np.nancumsum(ht.array([1.0, float("nan"), 2.0], split=0)).numpy().tolist()
    [1.0, 1.0, 3.0]
    """
    return _ops.cumulative(np.nancumsum, da.nancumsum, a, axis, dtype, out=out)


def nancumprod(a: DNDarray, axis: int | None = None, *, dtype=None, out=None) -> DNDarray:
    """Cumulative product along ``axis`` with NaNs counted as one; keeps the distribution.

    >>> import dndask as ht, numpy as np
    >>> np.nancumprod(ht.array([2.0, float("nan"), 3.0], split=0)).numpy().tolist()
    [2.0, 2.0, 6.0]
    """
    return _ops.cumulative(np.nancumprod, da.nancumprod, a, axis, dtype, out=out)


for _numpy_function, _function in (
    (np.nancumsum, nancumsum),
    (np.nancumprod, nancumprod),
    (np.nansum, nansum),
    (np.nanprod, nanprod),
    (np.nanmean, nanmean),
    (np.nanvar, nanvar),
    (np.nanstd, nanstd),
    (np.nanmin, nanmin),
    (np.nanmax, nanmax),
    (np.nanargmin, nanargmin),
    (np.nanargmax, nanargmax),
):
    implements(_numpy_function)(_function)


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
            extra = _factories.full(tuple(shape), extra, dtype=dtype, split=split, comm=a.comm)
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
