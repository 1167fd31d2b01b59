"""Reductions and cumulative operations; the split of each result follows the reduced axes.

Reducing axes other than ``split`` runs locally on every rank (each chunk
holds those axes whole) and keeps the split, shifted past removed axes.
Reducing ``split`` combines the ranks' partial results in a tree and gives
``split=None``. Cumulative operations keep the input's distribution.

Every function takes numpy's argument names; all but ``axis`` are keyword-only
(numpy and Heat order them differently). ``out`` receives the result in place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import dask.array as da
import numpy as np

from . import _ops

if TYPE_CHECKING:
    from ._dndarray import DNDarray


def sum(a: DNDarray, axis=None, *, dtype=None, out=None, keepdims: bool = False) -> DNDarray:
    """Sum over ``axis`` (all axes by default).

    Examples
    --------
    >>> import dndask as ht
    >>> a = ht.arange(12, split=0).reshape(4, 3)
    >>> ht.sum(a, axis=1).numpy().tolist(), ht.sum(a, axis=1).split
    ([3, 12, 21, 30], 0)
    >>> int(ht.sum(a)), ht.sum(a).split is None
    (66, True)
    """
    return _ops.reduce(np.sum, da.sum, a, axis, keepdims, out=out, dtype=dtype)


def prod(a: DNDarray, axis=None, *, dtype=None, out=None, keepdims: bool = False) -> DNDarray:
    """Product over ``axis``.

    >>> import dndask as ht
    >>> int(ht.prod(ht.arange(1, 6, split=0)))
    120
    """
    return _ops.reduce(np.prod, da.prod, a, axis, keepdims, out=out, dtype=dtype)


def mean(a: DNDarray, axis=None, *, dtype=None, out=None, keepdims: bool = False) -> DNDarray:
    """Arithmetic mean over ``axis``.

    >>> import dndask as ht
    >>> ht.mean(ht.arange(6, split=0).reshape(2, 3), axis=0).numpy().tolist()
    [1.5, 2.5, 3.5]
    """
    return _ops.reduce(np.mean, da.mean, a, axis, keepdims, out=out, dtype=dtype)


def _check_ddof(ddof: object) -> int:
    if isinstance(ddof, bool) or not isinstance(ddof, (int, np.integer)):
        raise TypeError(f"`ddof` must be an int, got {type(ddof).__name__}")
    if ddof < 0:
        raise ValueError(f"`ddof` must be non-negative, got {ddof}")
    return int(ddof)


def var(
    a: DNDarray, axis=None, *, dtype=None, out=None, ddof: int = 0, keepdims: bool = False
) -> DNDarray:
    """Variance over ``axis`` with ``ddof`` delta degrees of freedom.

    Over the split axis the ranks' partial moments are combined in a tree
    (numerically stable pairwise update), not gathered.

    >>> import dndask as ht
    >>> float(ht.var(ht.arange(4, split=0), ddof=1))
    1.6666666666666667
    """
    ddof = _check_ddof(ddof)
    return _ops.reduce(np.var, da.var, a, axis, keepdims, out=out, dtype=dtype, ddof=ddof)


def std(
    a: DNDarray, axis=None, *, dtype=None, out=None, ddof: int = 0, keepdims: bool = False
) -> DNDarray:
    """Standard deviation over ``axis`` (square root of :func:`var`).

    >>> import dndask as ht
    >>> float(ht.std(ht.array([1.0, 3.0], split=0)))
    1.0
    """
    ddof = _check_ddof(ddof)
    return _ops.reduce(np.std, da.std, a, axis, keepdims, out=out, dtype=dtype, ddof=ddof)


def min(a: DNDarray, axis=None, *, out=None, keepdims: bool = False) -> DNDarray:
    """Minimum over ``axis``; a zero-size reduction raises ValueError (no identity).

    >>> import dndask as ht
    >>> ht.min(ht.array([[3, 1], [2, 5]], split=0), axis=0).numpy().tolist()
    [2, 1]
    """
    return _ops.reduce(np.min, da.min, a, axis, keepdims, out=out, needs_elements=True)


def max(a: DNDarray, axis=None, *, out=None, keepdims: bool = False) -> DNDarray:
    """Maximum over ``axis``; a zero-size reduction raises ValueError (no identity).

    >>> import dndask as ht
    >>> ht.max(ht.array([[3, 1], [2, 5]], split=1), axis=1).numpy().tolist()
    [3, 5]
    """
    return _ops.reduce(np.max, da.max, a, axis, keepdims, out=out, needs_elements=True)


def argmin(a: DNDarray, axis: int | None = None, *, out=None, keepdims: bool = False) -> DNDarray:
    """Index of the minimum along ``axis``, or into the flattened array (``axis=None``).

    >>> import dndask as ht
    >>> int(ht.argmin(ht.array([4, 2, 7, 2], split=0)))
    1
    """
    return _ops.arg_reduce(np.argmin, da.argmin, a, axis, keepdims, out=out)


def argmax(a: DNDarray, axis: int | None = None, *, out=None, keepdims: bool = False) -> DNDarray:
    """Index of the maximum along ``axis``, or into the flattened array (``axis=None``).

    >>> import dndask as ht
    >>> ht.argmax(ht.array([[1, 9], [8, 2]], split=0), axis=0).numpy().tolist()
    [1, 0]
    """
    return _ops.arg_reduce(np.argmax, da.argmax, a, axis, keepdims, out=out)


def all(a: DNDarray, axis=None, *, out=None, keepdims: bool = False) -> DNDarray:
    """Whether every element along ``axis`` is true.

    >>> import dndask as ht
    >>> bool(ht.all(ht.arange(1, 5, split=0) > 0))
    True
    """
    return _ops.reduce(np.all, da.all, a, axis, keepdims, out=out)


def any(a: DNDarray, axis=None, *, out=None, keepdims: bool = False) -> DNDarray:
    """Whether any element along ``axis`` is true.

    >>> import dndask as ht
    >>> bool(ht.any(ht.zeros(5, split=0)))
    False
    """
    return _ops.reduce(np.any, da.any, a, axis, keepdims, out=out)


def cumsum(a: DNDarray, axis: int | None = None, *, dtype=None, out=None) -> DNDarray:
    """Cumulative sum along ``axis``; ``None`` works on the flattened array.

    Along the split axis each rank adds the running total of the ranks
    before it (one small carry per rank), so the distribution is kept.

    >>> import dndask as ht
    >>> ht.cumsum(ht.arange(5, split=0), axis=0).numpy().tolist()
    [0, 1, 3, 6, 10]
    """
    return _ops.cumulative(np.cumsum, da.cumsum, a, axis, dtype, out=out)


def cumprod(a: DNDarray, axis: int | None = None, *, dtype=None, out=None) -> DNDarray:
    """Cumulative product along ``axis``; ``None`` works on the flattened array.

    >>> import dndask as ht
    >>> ht.cumprod(ht.arange(1, 5, split=0), axis=0).numpy().tolist()
    [1, 2, 6, 24]
    """
    return _ops.cumulative(np.cumprod, da.cumprod, a, axis, dtype, out=out)
