"""``reshape`` and its 1-D forms ``flatten`` and ``ravel``.

Where the C-order reshape maps every rank's chunk onto itself, each rank
reshapes its own chunk (no data moves); otherwise the C-order flat ranges of
the split-0 chunks are redistributed to the balanced layout of the new shape.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import _dndarray, _layout, _xp
from .._distribution import relayout
from .._layout import Distribution
from . import _checks, _graph, _plan


def _blank(chunk, lshape: tuple[int, ...]):
    return _xp.empty_like_meta(chunk, lshape)


def _resolve_shape(shape: tuple, size: int) -> tuple[int, ...]:
    """numpy's reading of ``reshape``'s shape: ints or one sequence, one -1 allowed."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    for item in shape:
        if not _checks.is_int(item):
            raise TypeError(f"`shape` must hold ints, got {type(item).__name__}")
    shape = tuple(int(s) for s in shape)
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise ValueError(f"`shape` must hold at most one -1, got {shape}")
    if any(s < -1 for s in shape):
        raise ValueError(f"`shape` must hold non-negative ints and at most one -1, got {shape}")
    known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
    if unknown:
        if known == 0 or size % known:
            raise ValueError(f"`shape` {shape} cannot hold {size} elements")
        shape = tuple(size // known if s == -1 else s for s in shape)
    elif known != size:
        raise ValueError(f"`shape` {shape} must have {size} elements, got {known}")
    return shape


def _reshape_split(a: _dndarray.DNDarray, shape: tuple[int, ...], new_split) -> int | None:
    ndim = len(shape)
    if new_split is not None:
        return _layout.normalize_axis(new_split, ndim, "new_split")
    if a.split is None or ndim == 0:
        return None
    if a.split < ndim:
        return a.split
    local = _plan.local_reshape_axes(a.shape, a.split, shape)
    return local[-1] if local else ndim - 1


def _reshape_local(
    d: _dndarray.DNDarray, shape: tuple[int, ...], split, counts: Sequence[int], fn=np.reshape
) -> _dndarray.DNDarray:
    """Chunk ``r`` is ``fn(chunk r, its share of shape)``: each rank reshapes its own chunk.

    ``fn=_blank`` makes the empty shares of an array without elements.
    """
    lshapes = _graph.local_shapes(shape, split, counts)
    return _graph.local(
        [d], fn, tuple(shape), split, counts, prefix="reshape", args_of=lambda r: (lshapes[r],)
    )


def _reshape_chunks(
    d: _dndarray.DNDarray, shape: tuple[int, ...], counts: Sequence[int]
) -> _dndarray.DNDarray:
    """Each rank reshapes its own chunk to its share of ``shape`` (split 0 or None)."""
    if d.shape == tuple(shape) and d.distribution.counts == tuple(counts):
        return d.copy()
    return _reshape_local(d, shape, 0 if d.split is not None else None, counts)


def _reshape_rows(b: _dndarray.DNDarray, shape: tuple[int, ...]) -> _dndarray.DNDarray:
    """Reshape a split-0 array to split 0 by moving C-order flat ranges (minimal movement).

    Rank ``r``'s chunk is the flat range of its rows; the balanced target
    chunks are flat ranges too, so the move is a 1-D redistribution.
    """
    inner_in = int(np.prod(b.shape[1:], dtype=np.int64))
    inner_out = int(np.prod(shape[1:], dtype=np.int64))
    flat_src = tuple(c * inner_in for c in b.distribution.counts)
    dst = _layout.balanced_counts(shape[0], b.comm.size)
    flat_dst = tuple(c * inner_out for c in dst)
    flat = _reshape_chunks(b, (b.size,), flat_src)
    return _reshape_chunks(relayout(flat, Distribution(0, flat_dst, flat.comm)), shape, dst)


def reshape(a: _dndarray.DNDarray, *shape, new_split: int | None = None) -> _dndarray.DNDarray:
    """Give ``a`` a new shape (C order), as :func:`numpy.reshape`.

    Parameters
    ----------
    a : DNDarray
        The array.
    *shape : int or tuple of ints
        The new shape, as ints or one tuple; one entry may be ``-1``.
    new_split : int, optional
        The split of the result. By default ``a.split`` (Heat's rule); when
        ``a.split`` is not an axis of the new shape, the axis that keeps every
        rank's rows in place if there is one, else the last axis. A 0-d
        result has split None. A ``split=None`` input stays None unless
        ``new_split`` is given.

    Returns
    -------
    DNDarray

    Notes
    -----
    What moves:

    - ``split=None``: nothing, the single chunk is reshaped where it lives.
    - the axes before the split hold as many elements as the new axes before
      ``new_split``, and ``new_split`` has the split axis's length (e.g. the
      axes up to the split are unchanged): nothing, every rank reshapes its
      own chunk and the counts stay.
    - split 0 to ``new_split=0``: every chunk is a C-order flat range, so the
      flat ranges are redistributed with minimal movement to the balanced
      layout of the new shape, then reshaped locally.
    - anything else: resplit to 0, the case above, then resplit to ``new_split``.

    Examples
    --------
    >>> import dndask as ht
    >>> a = ht.arange(12, split=0).reshape(3, 4)
    >>> a.split, a.lshape_map.tolist()
    (0, [[1, 4], [1, 4], [1, 4], [0, 4]])
    >>> ht.arange(12, split=0).reshape((2, -1), new_split=1).lshape_map.tolist()
    [[2, 2], [2, 2], [2, 1], [2, 1]]
    """
    _checks.check_dndarray(a)
    if not shape:
        raise TypeError("`shape` is required, got nothing")
    shape = _resolve_shape(shape, a.size)
    split = _reshape_split(a, shape, new_split)
    if a.split is None:
        out = _reshape_chunks(a, shape, ())
        return out if split is None else out.resplit(split)
    if split is None:
        return _reshape_chunks(a.resplit(None), shape, ())
    if split in _plan.local_reshape_axes(a.shape, a.split, shape):
        return _reshape_local(a, shape, split, a.distribution.counts)
    if a.size == 0:  # no data: every rank makes its empty share
        counts = _layout.balanced_counts(shape[split], a.comm.size)
        return _reshape_local(a, shape, split, counts, fn=_blank)
    rows = _reshape_rows(a if a.split == 0 else a.resplit(0), shape)
    return rows if split == 0 else rows.resplit(split)


def flatten(a: _dndarray.DNDarray) -> _dndarray.DNDarray:
    """The array as 1-D in C order; split 0 if ``a`` is split, else None.

    Built by :func:`reshape`: a split-0 array moves only the flat ranges that
    change owner, to the balanced layout; another split is resplit to 0 first.

    >>> import dndask as ht
    >>> b = ht.zeros((3, 4), split=1).flatten()
    >>> b.split, b.lshape_map.tolist()
    (0, [[3], [3], [3], [3]])
    """
    _checks.check_dndarray(a)
    return reshape(a, (a.size,), new_split=0 if a.split is not None else None)


def ravel(a: _dndarray.DNDarray) -> _dndarray.DNDarray:
    """The array as 1-D in C order (same as :func:`flatten`; always a new array).

    >>> import dndask as ht
    >>> ht.zeros((2, 3), split=0).ravel().shape
    (6,)
    """
    return flatten(a)
