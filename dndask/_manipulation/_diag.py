"""Diagonals and triangles: ``diag``, ``diagonal``, ``triu``, ``tril``.

``triu``/``tril`` work on every rank's own chunk (the chunk's global offsets
shift the diagonal), so nothing moves and the split is kept. ``diagonal`` picks
each rank's part of the diagonal from its chunk; where the split axis is one of
the two diagonal axes the result's split is its last axis (the diagonal) and the
result is rebalanced; otherwise the split axis keeps its place among the others.
"""

from __future__ import annotations

import numbers

import dask.array as da
import numpy as np

from .. import _dndarray, _layout
from .._graph import meta_of
from . import _checks
from ._broadcast import broadcast_to


def _offset(value, name: str) -> int:
    if not _checks.is_int(value):
        raise TypeError(f"`{name}` must be an int, got {type(value).__name__}")
    return int(value)


def _triangle(a: _dndarray.DNDarray, k, upper: bool, name: str) -> _dndarray.DNDarray:
    _checks.check_dndarray(a)
    k = _offset(k, "k")
    if a.ndim == 0:
        raise ValueError(f"`a` of `{name}` must have at least 1 dimension, got 0")
    if a.ndim == 1:  # numpy's rule: the vector is a row repeated into a square matrix
        a = broadcast_to(a, (a.shape[0], a.shape[0]))
    x = a.to_dask()
    starts = [np.cumsum((0, *c[:-1])) for c in x.chunks]

    def local(block, block_id=None):
        row = starts[-2][block_id[-2]]
        col = starts[-1][block_id[-1]]
        shift = k + row - col
        return np.triu(block, shift) if upper else np.tril(block, shift)

    out = x.map_blocks(local, dtype=x.dtype, meta=meta_of(x.dtype, x.ndim, like=x))
    return _dndarray.from_dask(out, a.split, a.comm, parents=(a,))


def triu(a: _dndarray.DNDarray, k: int = 0) -> _dndarray.DNDarray:
    """The array with the elements below the ``k``-th diagonal zeroed (last two axes).

    Each rank zeroes its own chunk; the split is kept and nothing moves. A 1-D
    input is first repeated into a square matrix, as numpy does (split on axis 1).

    >>> import dndask as ht
    >>> ht.triu(ht.ones((3, 3), split=0)).numpy().tolist()
    [[1.0, 1.0, 1.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]]
    """
    return _triangle(a, k, True, "triu")


def tril(a: _dndarray.DNDarray, k: int = 0) -> _dndarray.DNDarray:
    """The array with the elements above the ``k``-th diagonal zeroed (last two axes).

    >>> import dndask as ht
    >>> ht.tril(ht.ones((2, 3), split=1), k=1).numpy().tolist()
    [[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]
    """
    return _triangle(a, k, False, "tril")


def diagonal(a: _dndarray.DNDarray, offset: int = 0, axis1: int = 0, axis2: int = 1):
    """The ``offset``-th diagonal of the ``axis1``/``axis2`` planes, as :func:`numpy.diagonal`.

    The diagonal becomes the last axis. If ``split`` is one of the two axes the
    result is split along that last axis; otherwise the split axis keeps its
    order among the remaining axes.

    >>> import dndask as ht
    >>> ht.diagonal(ht.arange(9, split=0).reshape((3, 3)), offset=1).numpy().tolist()
    [1, 5]
    """
    _checks.check_dndarray(a)
    offset = _offset(offset, "offset")
    if a.ndim < 2:
        raise ValueError(f"`a` of `diagonal` must have at least 2 dimensions, got {a.ndim}")
    ax1 = _layout.normalize_axis(axis1, a.ndim, "axis1")
    ax2 = _layout.normalize_axis(axis2, a.ndim, "axis2")
    if ax1 == ax2:
        raise ValueError(f"`axis1` and `axis2` of `diagonal` must differ, got {axis1} and {axis2}")
    out = da.diagonal(a.to_dask(), offset=offset, axis1=ax1, axis2=ax2)
    if a.split is None:
        split = None
    elif a.split in (ax1, ax2):
        split = out.ndim - 1
    else:
        split = a.split - sum(1 for ax in (ax1, ax2) if ax < a.split)
    return _dndarray.from_dask(out, split, a.comm, parents=(a,))


def diag(a: _dndarray.DNDarray, offset: int = 0) -> _dndarray.DNDarray:
    """A 2-D array with ``a`` (1-D) on its ``offset``-th diagonal, or the diagonal of a 2-D ``a``.

    A split 1-D input gives a matrix split along axis 0; a 2-D input is
    :func:`diagonal`.

    >>> import dndask as ht
    >>> ht.diag(ht.array([1, 2], split=0)).numpy().tolist()
    [[1, 0], [0, 2]]
    """
    _checks.check_dndarray(a)
    offset = _offset(offset, "offset")
    if a.ndim == 2:
        return diagonal(a, offset)
    if a.ndim != 1:
        raise ValueError(f"`a` of `diag` must be 1-D or 2-D, got {a.ndim} dimensions")
    out = da.diag(a.to_dask().rechunk(-1), k=offset)
    return _dndarray.from_dask(out, a.split, a.comm, parents=(a,))


def fill_diagonal(a: _dndarray.DNDarray, value) -> _dndarray.DNDarray:
    """Set the main diagonal of a 2-D array to ``value``, in place (returns ``a``).

    Each rank writes the part of the diagonal in its own chunk; the split and the
    distribution are kept. ``value`` must be a real or complex scalar.

    >>> import dndask as ht
    >>> ht.fill_diagonal(ht.zeros((2, 3), split=1), 5.0).numpy().tolist()
    [[5.0, 0.0, 0.0], [0.0, 5.0, 0.0]]
    """
    _checks.check_dndarray(a)
    if a.ndim != 2:
        raise ValueError(f"`a` of `fill_diagonal` must be 2-D, got {a.ndim}-D")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Number, np.generic)):
        raise TypeError(f"`value` of `fill_diagonal` must be a number, got {type(value).__name__}")
    x = a.to_dask()
    if not np.can_cast(np.min_scalar_type(value), x.dtype, "same_kind"):
        raise TypeError(f"`value` {value!r} cannot be stored in an array of {x.dtype}")
    starts = [np.cumsum((0, *c[:-1])) for c in x.chunks]

    def local(block, block_id=None):
        out = block.copy()
        rows = np.arange(block.shape[0])
        cols = rows + starts[0][block_id[0]] - starts[1][block_id[1]]
        ok = (cols >= 0) & (cols < block.shape[1])
        out[rows[ok], cols[ok]] = value
        return out

    result = x.map_blocks(local, dtype=x.dtype, meta=meta_of(x.dtype, 2, like=x))
    return a._set(result, a.split, a._task_ranks)
