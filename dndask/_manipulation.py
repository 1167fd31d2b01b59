"""Shape manipulation of DNDarrays: each result keeps the one-chunk-per-rank invariant.

Every function works chunk by chunk where the numpy operation leaves the
split axis alone, so those cases move no data: each rank's result chunk is
built from its own chunk only (``transpose``, ``expand_dims``, ``repeat``
along a non-split axis, ...). Where rows must change owner, the pieces are
planned by pure functions in :mod:`dndask._layout` and assembled here from
slices that run on the rank holding the source chunk, so only the rows that
change owner travel (``concatenate`` along the split axis, ``roll``,
``tile``, the flat-range redistribution of ``reshape``).
"""

from __future__ import annotations

import numbers
import operator
from collections.abc import Callable, Sequence

import dask.array as da
import numpy as np
import torch
from dask._task_spec import Alias, Task, TaskRef
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from . import _distribution, _dndarray, _graph, _layout, _torch

# ----------------------------------------------------------------- chunk functions
# Module-level so that tasks pickle and tokenize by name.


def _join(*parts: np.ndarray, axis: int) -> np.ndarray:
    return np.concatenate(parts, axis=axis)


def _blank(chunk: np.ndarray, lshape: tuple[int, ...]) -> np.ndarray:
    return np.empty(lshape, dtype=chunk.dtype)


def _empty(lshape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    return np.empty(lshape, dtype=dtype)


def _pad_chunk(chunk: np.ndarray, pad_width: tuple, mode: str, kwargs: dict) -> np.ndarray:
    return np.pad(chunk, pad_width, mode=mode, **kwargs)


def _pad_side(
    window: np.ndarray, axis: int, widths: tuple[int, int], mode: str, kwargs: dict, side: int
) -> np.ndarray:
    """The ``before`` (side 0) or ``after`` (side 1) rows numpy pads ``window`` with."""
    pad_width = tuple(widths if a == axis else (0, 0) for a in range(window.ndim))
    padded = np.pad(window, pad_width, mode=mode, **kwargs)
    n = widths[side]
    index = slice(0, n) if side == 0 else slice(padded.shape[axis] - n, None)
    return padded[(slice(None),) * axis + (index,)]


_STAT_FUNCTIONS = {"mean": np.sum, "maximum": np.max, "minimum": np.min}


def _partial_stat(chunk: np.ndarray, axis: int, stat: str) -> np.ndarray:
    return _STAT_FUNCTIONS[stat](chunk, axis=axis, keepdims=True)


def _stat_rows(
    *partials: np.ndarray, axis: int, stat: str, n: int, width: int, dtype
) -> np.ndarray:
    """``width`` rows of the statistic over the whole axis, combined from per-rank partials."""
    joined = np.concatenate(partials, axis=axis)
    if stat == "mean":
        value = np.sum(joined, axis=axis, keepdims=True) / n
        if np.dtype(dtype).kind in "iu":
            value = np.round(value)
    else:
        value = _STAT_FUNCTIONS[stat](joined, axis=axis, keepdims=True)
    shape = list(joined.shape)
    shape[axis] = width
    return np.broadcast_to(value, shape).astype(dtype)


# ------------------------------------------------------------------- graph helpers
def _check_dndarray(a, name: str = "a") -> None:
    if not isinstance(a, _dndarray.DNDarray):
        raise TypeError(f"`{name}` must be a DNDarray, got {type(a).__name__}")


def _counts(a: _dndarray.DNDarray) -> tuple[int, ...]:
    return a.counts_displs()[0] if a.split is not None else ()


def _chunk_key(a: _dndarray.DNDarray, rank: int) -> tuple:
    return (a.to_dask().name, *_graph.block_index(a.split, a.ndim, rank))


def _wrap(
    dsk: dict, name: str, chunks: tuple, dtype, sources, split, comm, hints=None
) -> _dndarray.DNDarray:
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[s.to_dask() for s in sources])
    x = da.Array(graph, name, chunks, meta=_graph.meta_of(dtype, len(chunks)))
    out = _dndarray.from_dask(x, split, comm, parents=tuple(sources))
    out._hints.update(hints or {})
    return out


def _local(
    sources: Sequence[_dndarray.DNDarray],
    fn: Callable,
    shape: tuple[int, ...],
    split: int | None,
    counts: Sequence[int],
    *,
    prefix: str,
    dtype=None,
    args_of: Callable[[int], tuple] = lambda r: (),
    src_of: Callable[[int], int] = lambda r: r,
    kwargs: dict | None = None,
) -> _dndarray.DNDarray:
    """Chunk ``r`` of the result is ``fn(*source chunks src_of(r), *args_of(r), **kwargs)``.

    With the default ``src_of`` each rank only reads its own chunks: no data moves.
    """
    comm = sources[0].comm
    dtype = sources[0].dtype if dtype is None else dtype
    blocks = comm.size if split is not None else 1
    chunks = _layout.chunks_for(shape, split, counts)
    args = [args_of(r) for r in range(blocks)]
    srcs = [src_of(r) for r in range(blocks)]
    kwargs = kwargs or {}
    names = [s.to_dask().name for s in sources]
    name = f"{prefix}-{tokenize(names, fn, chunks, split, args, srcs, kwargs, str(dtype))}"
    dsk = {}
    for r in range(blocks):
        key = (name, *_graph.block_index(split, len(shape), r))
        refs = [TaskRef(_chunk_key(s, srcs[r])) for s in sources]
        dsk[key] = Task(key, fn, *refs, *args[r], **kwargs)
    return _wrap(dsk, name, chunks, dtype, sources, split, comm)


def _pieces_graph(
    sources: Sequence[_dndarray.DNDarray],
    plan: Sequence[Sequence[_layout.OperandPiece]],
    out_keys: Sequence[tuple],
    axis: int,
    lshapes: Sequence[tuple[int, ...]],
    dtype,
    name: str,
) -> tuple[dict, dict]:
    """Tasks joining, for every output key, its planned pieces along ``axis``.

    A piece that is a whole source chunk is referenced directly; any other
    piece is one slicing task, pinned (through the returned hints) to the
    rank that holds its source chunk, so only the slice travels.
    """
    dsk: dict = {}
    hints: dict = {}
    for out_key, pieces, lshape in zip(out_keys, plan, lshapes, strict=True):
        keys = []
        for p in pieces:
            src_key = _chunk_key(sources[p.operand], p.src)
            if p.whole:
                keys.append(src_key)
                continue
            key = (f"{name}-piece", p.operand, p.src, p.start, p.stop)
            if key not in dsk:
                index = (slice(None),) * axis + (slice(p.start, p.stop),)
                dsk[key] = _distribution.SliceTask(key, operator.getitem, TaskRef(src_key), index)
                hints[key] = p.src
            keys.append(key)
        if not keys:
            dsk[out_key] = Task(out_key, _empty, tuple(lshape), dtype)
        elif len(keys) == 1:
            dsk[out_key] = Alias(out_key, keys[0])
        else:
            dsk[out_key] = Task(out_key, _join, *(TaskRef(k) for k in keys), axis=axis)
    return dsk, hints


def _assemble(
    sources: Sequence[_dndarray.DNDarray],
    plan: Sequence[Sequence],
    shape: tuple[int, ...],
    split: int,
    counts: Sequence[int],
    prefix: str,
) -> _dndarray.DNDarray:
    """The DNDarray (split ``split``, ``counts``) whose chunk ``r`` joins the pieces ``plan[r]``.

    ``plan[r]`` holds :class:`~dndask._layout.OperandPiece` (or, for a single
    source, :class:`~dndask._layout.Piece`) entries slicing along ``split``.
    """
    plan = [
        [p if isinstance(p, _layout.OperandPiece) else _layout.OperandPiece(0, *p) for p in ps]
        for ps in plan
    ]
    comm, dtype, ndim = sources[0].comm, sources[0].dtype, len(shape)
    chunks = _layout.chunks_for(shape, split, counts)
    names = [s.to_dask().name for s in sources]
    name = f"{prefix}-{tokenize(names, plan, chunks, split)}"
    out_keys = [(name, *_graph.block_index(split, ndim, r)) for r in range(comm.size)]
    lshapes = [tuple(c if a == split else s for a, s in enumerate(shape)) for c in counts]
    dsk, hints = _pieces_graph(sources, plan, out_keys, split, lshapes, dtype, name)
    return _wrap(dsk, name, chunks, dtype, sources, split, comm, hints)


def _with_counts(d: _dndarray.DNDarray, axis: int, counts: Sequence[int]) -> _dndarray.DNDarray:
    """``d`` split along ``axis`` with ``counts`` rows per rank, moving only what must move.

    A ``split=None`` array is sliced where it lives (rank 0) rather than
    first balanced and then redistributed.
    """
    counts = tuple(int(c) for c in counts)
    if d.split is None:
        src = (d.shape[axis],)
    else:
        if d.split != axis:
            d = d.resplit(axis)
        src = _counts(d)
        if src == counts:
            return d
    x, hints = _distribution.redistribute(d.to_dask(), axis, src, counts)
    out = _dndarray.from_dask(x, axis, d.comm, parents=(d,))
    out._hints.update(hints)
    return out


def _cast(d: _dndarray.DNDarray, dtype) -> _dndarray.DNDarray:
    return d if d.dtype == dtype else d.astype(dtype)


# ----------------------------------------------------------------- argument checks
def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _int_tuple(value, name: str, what: str = "an int or a tuple of ints") -> tuple[int, ...]:
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    for item in items:
        if not _is_int(item):
            raise TypeError(f"`{name}` must be {what}, got {type(item).__name__}")
    return tuple(int(i) for i in items)


def _ordered_axes(value, ndim: int, name: str) -> tuple[int, ...]:
    """Axes in the order given, normalised, without repeats."""
    axes = tuple(_layout.normalize_axis(a, ndim, name) for a in _int_tuple(value, name))
    if len(set(axes)) != len(axes):
        raise ValueError(f"`{name}` must not repeat an axis, got {value}")
    return axes


def _resolve_shape(shape: tuple, size: int) -> tuple[int, ...]:
    """numpy's reading of ``reshape``'s shape: ints or one sequence, one -1 allowed."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    for item in shape:
        if not _is_int(item):
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


def _operands(arrays, name: str) -> list[_dndarray.DNDarray]:
    """The entries of ``arrays`` as DNDarrays on one comm; numpy/torch ones become split=None."""
    if not isinstance(arrays, (list, tuple)):
        raise TypeError(f"`arrays` must be a list or tuple of arrays, got {type(arrays).__name__}")
    if not arrays:
        raise ValueError(f"`arrays` of `{name}` must hold at least one array, got none")
    first = next((i for i, v in enumerate(arrays) if isinstance(v, _dndarray.DNDarray)), None)
    if first is None:
        raise TypeError(f"`arrays` of `{name}` must hold at least one DNDarray")
    comm = arrays[first].comm
    out = []
    for i, v in enumerate(arrays):
        if isinstance(v, _dndarray.DNDarray):
            if v.comm != comm:
                raise ValueError(
                    f"`arrays` of `{name}` must share one comm, got {comm!r} at {first} "
                    f"and {v.comm!r} at {i}"
                )
            out.append(v)
        elif isinstance(v, (np.ndarray, torch.Tensor)):
            values = _torch.from_torch(v) if isinstance(v, torch.Tensor) else v
            x = da.from_array(values, chunks=tuple(max(s, 1) for s in values.shape))
            out.append(_dndarray.from_dask(x, None, comm))
        else:
            raise TypeError(
                f"`arrays` of `{name}` must hold DNDarrays, numpy arrays or torch tensors, "
                f"got {type(v).__name__} at {i}"
            )
    return out


def _describe(d: _dndarray.DNDarray, index: int) -> str:
    return f"DNDarray(shape={d.shape}, split={d.split}) at {index}"


def _reference(operands: Sequence[_dndarray.DNDarray]) -> _dndarray.DNDarray | None:
    """Heat's rule: the first split operand sets the result's split."""
    return next((d for d in operands if d.split is not None), None)


# ------------------------------------------------------------------------- reshape
def _reshape_split(a: _dndarray.DNDarray, shape: tuple[int, ...], new_split) -> int | None:
    ndim = len(shape)
    if new_split is not None:
        return _layout.normalize_axis(new_split, ndim, "new_split")
    if a.split is None or ndim == 0:
        return None
    if a.split < ndim:
        return a.split
    local = _layout.local_reshape_axes(a.shape, a.split, shape)
    return local[-1] if local else ndim - 1


def _reshape_chunks(
    d: _dndarray.DNDarray, shape: tuple[int, ...], counts: Sequence[int]
) -> _dndarray.DNDarray:
    """Each rank reshapes its own chunk to its share of ``shape`` (split 0 or None)."""
    if d.shape == tuple(shape) and _counts(d) == tuple(counts):
        return d.copy()

    def lshape(r: int) -> tuple[tuple[int, ...]]:
        return ((counts[r], *shape[1:]) if d.split is not None else tuple(shape),)

    split = 0 if d.split is not None else None
    return _local([d], np.reshape, tuple(shape), split, counts, prefix="reshape", args_of=lshape)


def _reshape_rows(b: _dndarray.DNDarray, shape: tuple[int, ...]) -> _dndarray.DNDarray:
    """Reshape a split-0 array to split 0 by moving C-order flat ranges (minimal movement).

    Rank ``r``'s chunk is the flat range of its rows; the balanced target
    chunks are flat ranges too, so the move is a 1-D redistribution.
    """
    inner_in = int(np.prod(b.shape[1:], dtype=np.int64))
    inner_out = int(np.prod(shape[1:], dtype=np.int64))
    flat_src = tuple(c * inner_in for c in _counts(b))
    dst = _layout.balanced_counts(shape[0], b.comm.size)
    flat_dst = tuple(c * inner_out for c in dst)
    flat = _reshape_chunks(b, (b.size,), flat_src)
    return _reshape_chunks(_with_counts(flat, 0, flat_dst), shape, dst)


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
    _check_dndarray(a)
    if not shape:
        raise TypeError("`shape` is required, got nothing")
    shape = _resolve_shape(shape, a.size)
    split = _reshape_split(a, shape, new_split)
    if a.split is None:
        out = _reshape_chunks(a, shape, ())
        return out if split is None else out.resplit(split)
    if split is None:
        return _reshape_chunks(a.resplit(None), shape, ())
    if split in _layout.local_reshape_axes(a.shape, a.split, shape):
        counts = _counts(a)
        lshapes = [tuple(c if i == split else s for i, s in enumerate(shape)) for c in counts]
        return _local(
            [a], np.reshape, shape, split, counts, prefix="reshape", args_of=lambda r: (lshapes[r],)
        )
    counts = _layout.balanced_counts(shape[split], a.comm.size)
    if a.size == 0:  # no data: every rank makes its empty share
        lshapes = [tuple(c if i == split else s for i, s in enumerate(shape)) for c in counts]
        return _local(
            [a], _blank, shape, split, counts, prefix="reshape", args_of=lambda r: (lshapes[r],)
        )
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
    _check_dndarray(a)
    return reshape(a, (a.size,), new_split=0 if a.split is not None else None)


def ravel(a: _dndarray.DNDarray) -> _dndarray.DNDarray:
    """The array as 1-D in C order (same as :func:`flatten`; always a new array).

    >>> import dndask as ht
    >>> ht.zeros((2, 3), split=0).ravel().shape
    (6,)
    """
    return flatten(a)


# ----------------------------------------------------------------- axis permutations
def transpose(a: _dndarray.DNDarray, axes=None) -> _dndarray.DNDarray:
    """Permute the axes (reversed by default); the split follows its axis. Moves no data.

    >>> import dndask as ht
    >>> b = ht.zeros((2, 3, 4), split=2).transpose((2, 0, 1))
    >>> b.shape, b.split
    ((4, 2, 3), 0)
    """
    _check_dndarray(a)
    if axes is None:
        axes = tuple(reversed(range(a.ndim)))
    else:
        axes = _ordered_axes(axes, a.ndim, "axes")
        if len(axes) != a.ndim:
            raise ValueError(
                f"`axes` must hold {a.ndim} axes for a {a.ndim}-dimensional array, got {len(axes)}"
            )
    split = None if a.split is None else axes.index(a.split)
    shape = tuple(a.shape[i] for i in axes)
    return _local(
        [a], np.transpose, shape, split, _counts(a), prefix="transpose", args_of=lambda r: (axes,)
    )


def swapaxes(a: _dndarray.DNDarray, axis1: int, axis2: int) -> _dndarray.DNDarray:
    """Interchange two axes; the split follows its axis. Moves no data.

    >>> import dndask as ht
    >>> ht.zeros((2, 3), split=0).swapaxes(0, 1).split
    1
    """
    _check_dndarray(a)
    axis1 = _layout.normalize_axis(axis1, a.ndim, "axis1")
    axis2 = _layout.normalize_axis(axis2, a.ndim, "axis2")
    order = list(range(a.ndim))
    order[axis1], order[axis2] = axis2, axis1
    return transpose(a, tuple(order))


def moveaxis(a: _dndarray.DNDarray, source, destination) -> _dndarray.DNDarray:
    """Move axes to new positions (as :func:`numpy.moveaxis`); the split follows. Moves no data.

    >>> import dndask as ht
    >>> b = ht.moveaxis(ht.zeros((2, 3, 4), split=0), 0, -1)
    >>> b.shape, b.split
    ((3, 4, 2), 2)
    """
    _check_dndarray(a)
    source = _ordered_axes(source, a.ndim, "source")
    destination = _ordered_axes(destination, a.ndim, "destination")
    if len(source) != len(destination):
        raise ValueError(
            "`source` and `destination` must hold as many axes, "
            f"got {len(source)} and {len(destination)}"
        )
    order = [i for i in range(a.ndim) if i not in source]
    for dst, src in sorted(zip(destination, source, strict=True)):
        order.insert(dst, src)
    return transpose(a, tuple(order))


# -------------------------------------------------------------- length-one axes
def expand_dims(a: _dndarray.DNDarray, axis) -> _dndarray.DNDarray:
    """Insert length-one axes at ``axis`` (int or tuple); the split shifts. Moves no data.

    >>> import dndask as ht
    >>> b = ht.zeros((2, 3), split=1).expand_dims(0)
    >>> b.shape, b.split
    ((1, 2, 3), 2)
    """
    _check_dndarray(a)
    if axis is None:
        raise TypeError("`axis` must be an int or a tuple of ints, got NoneType")
    ndim = a.ndim + len(_int_tuple(axis, "axis"))
    axes = _ordered_axes(axis, ndim, "axis")
    kept = [i for i in range(ndim) if i not in axes]
    shape = [1] * ndim
    for i, s in zip(kept, a.shape, strict=True):
        shape[i] = s
    split = None if a.split is None else kept[a.split]
    return _local(
        [a],
        np.expand_dims,
        tuple(shape),
        split,
        _counts(a),
        prefix="expand_dims",
        args_of=lambda r: (axes,),
    )


def squeeze(a: _dndarray.DNDarray, axis=None) -> _dndarray.DNDarray:
    """Remove length-one axes (all of them by default); the split shifts.

    Squeezing a length-one split axis gives split=None: the one rank that
    holds its row sends the chunk to rank 0. Any other squeeze moves no data.

    >>> import dndask as ht
    >>> ht.zeros((1, 3, 1), split=1).squeeze().split
    0
    >>> ht.zeros((1, 3), split=0).squeeze().split is None
    True
    """
    _check_dndarray(a)
    if axis is None:
        axes = tuple(i for i, s in enumerate(a.shape) if s == 1)
    else:
        axes = _ordered_axes(axis, a.ndim, "axis")
        for i in axes:
            if a.shape[i] != 1:
                raise ValueError(
                    f"`axis` must name axes of length 1, got axis {i} of length {a.shape[i]}"
                )
    shape = tuple(s for i, s in enumerate(a.shape) if i not in axes)
    if a.split is not None and a.split in axes:
        holder = _counts(a).index(1)
        return _local(
            [a],
            np.squeeze,
            shape,
            None,
            (),
            prefix="squeeze",
            args_of=lambda r: (axes,),
            src_of=lambda r: holder,
        )
    split = None if a.split is None else a.split - sum(1 for i in axes if i < a.split)
    return _local(
        [a], np.squeeze, shape, split, _counts(a), prefix="squeeze", args_of=lambda r: (axes,)
    )


# ------------------------------------------------------------------------- joining
def _check_join_shapes(operands: Sequence[_dndarray.DNDarray], axis: int, name: str) -> None:
    ref = operands[0]
    for i, d in enumerate(operands):
        if d.ndim != ref.ndim:
            raise ValueError(
                f"`arrays` of `{name}` must have the same number of dimensions, got "
                f"{_describe(ref, 0)} and {_describe(d, i)}"
            )
        if any(
            s != t for k, (s, t) in enumerate(zip(d.shape, ref.shape, strict=True)) if k != axis
        ):
            raise ValueError(
                f"`arrays` of `{name}` must have the same shape except along axis {axis}, got "
                f"{_describe(ref, 0)} and {_describe(d, i)}"
            )


def _concatenate(operands: Sequence[_dndarray.DNDarray], axis: int) -> _dndarray.DNDarray:
    dtype = np.result_type(*(d.dtype for d in operands))
    operands = [_cast(d, dtype) for d in operands]
    shape = list(operands[0].shape)
    shape[axis] = sum(d.shape[axis] for d in operands)
    shape = tuple(shape)
    ref = _reference(operands)
    if ref is None:
        return _local(operands, _join, shape, None, (), prefix="concatenate", kwargs={"axis": axis})
    split = ref.split
    if axis != split:
        counts = _counts(ref)
        aligned = [_with_counts(d, split, counts) for d in operands]
        return _local(
            aligned, _join, shape, split, counts, prefix="concatenate", kwargs={"axis": axis}
        )
    # along the split axis: a split=None operand is one chunk on rank 0, so it joins as is
    sources = [d if d.split in (None, split) else d.resplit(split) for d in operands]
    counts = [_counts(d) if d.split is not None else (d.shape[split],) for d in sources]
    dst, plan = _layout.plan_concatenation(counts, ref.comm.size)
    return _assemble(sources, plan, shape, split, dst, "concatenate")


def concatenate(arrays, axis: int | None = 0) -> _dndarray.DNDarray:
    """Join arrays along an existing axis, as :func:`numpy.concatenate`.

    The result takes the split of the first split operand (Heat's rule; split
    None if none is split); numpy arrays and torch tensors in ``arrays`` join as
    split=None operands. Along a non-split axis the other operands are
    brought to the reference's counts and every rank joins its own chunks
    (the counts stay, no rebalance). Along the split axis the result is
    balanced, and only the rows that change owner move. ``axis=None``
    flattens every operand first.

    >>> import dndask as ht
    >>> c = ht.concatenate([ht.arange(3, split=0), ht.arange(5, split=0)])
    >>> c.numpy().tolist(), c.lshape_map.tolist()
    ([0, 1, 2, 0, 1, 2, 3, 4], [[2], [2], [2], [2]])
    """
    operands = _operands(arrays, "concatenate")
    if axis is None:
        operands = [flatten(d) for d in operands]
        axis = 0
    if any(d.ndim == 0 for d in operands):
        bad = next(i for i, d in enumerate(operands) if d.ndim == 0)
        raise ValueError(
            f"`arrays` of `concatenate` must be at least 1-dimensional, got "
            f"{_describe(operands[bad], bad)}"
        )
    axis = _layout.normalize_axis(axis, operands[0].ndim, "axis")
    _check_join_shapes(operands, axis, "concatenate")
    return _concatenate(operands, axis)


def stack(arrays, axis: int = 0) -> _dndarray.DNDarray:
    """Join arrays of one shape along a new axis, as :func:`numpy.stack`.

    The result takes the split of the first split operand, shifted past the
    new axis; the new axis is never the split, so every rank joins its own
    chunks once the operands share the reference's counts.

    >>> import dndask as ht
    >>> s = ht.stack([ht.arange(4, split=0), ht.arange(4, split=0)], axis=0)
    >>> s.shape, s.split
    ((2, 4), 1)
    """
    operands = _operands(arrays, "stack")
    for i, d in enumerate(operands):
        if d.shape != operands[0].shape:
            raise ValueError(
                "`arrays` of `stack` must all have the same shape, got "
                f"{_describe(operands[0], 0)} and {_describe(d, i)}"
            )
    axis = _layout.normalize_axis(axis, operands[0].ndim + 1, "axis")
    return _concatenate([expand_dims(d, axis) for d in operands], axis)


def vstack(arrays) -> _dndarray.DNDarray:
    """Stack arrays row-wise (1-D arrays become rows), as :func:`numpy.vstack`.

    >>> import dndask as ht
    >>> v = ht.vstack([ht.arange(3, split=0), ht.arange(3, split=0)])
    >>> v.shape, v.split
    ((2, 3), 1)
    """
    operands = _operands(arrays, "vstack")
    operands = [
        d if d.ndim >= 2 else expand_dims(d, 0) if d.ndim == 1 else reshape(d, (1, 1))
        for d in operands
    ]
    _check_join_shapes(operands, 0, "vstack")
    return _concatenate(operands, 0)


def hstack(arrays) -> _dndarray.DNDarray:
    """Stack arrays column-wise (1-D arrays join end to end), as :func:`numpy.hstack`.

    >>> import dndask as ht
    >>> ht.hstack([ht.arange(3, split=0), ht.arange(2)]).numpy().tolist()
    [0, 1, 2, 0, 1]
    """
    operands = _operands(arrays, "hstack")
    operands = [d if d.ndim >= 1 else reshape(d, (1,)) for d in operands]
    axis = 0 if operands[0].ndim == 1 else 1
    _check_join_shapes(operands, axis, "hstack")
    return _concatenate(operands, axis)


# ------------------------------------------------------------------ reordering
def flip(a: _dndarray.DNDarray, axis=None) -> _dndarray.DNDarray:
    """Reverse the order of elements along ``axis`` (all axes by default).

    Along the split axis the counts are reversed: rank ``r`` receives the
    chunk of rank ``size - 1 - r``, flipped, so data moves between mirrored
    ranks only. Other axes flip locally.

    >>> import dndask as ht
    >>> f = ht.arange(7, split=0).flip(0)
    >>> f.numpy().tolist(), f.lshape_map.tolist()
    ([6, 5, 4, 3, 2, 1, 0], [[1], [2], [2], [2]])
    """
    _check_dndarray(a)
    axes = _layout.normalize_axes(axis, a.ndim)
    counts = _counts(a)
    size = a.comm.size
    mirrored = a.split is not None and a.split in axes
    return _local(
        [a],
        np.flip,
        a.shape,
        a.split,
        counts[::-1] if mirrored else counts,
        prefix="flip",
        args_of=lambda r: (axes,),
        src_of=(lambda r: size - 1 - r) if mirrored else (lambda r: r),
    )


def _roll_shifts(shift, axis, ndim: int) -> dict[int, int]:
    shifts = _int_tuple(shift, "shift")
    axes = _int_tuple(axis, "axis")
    try:
        pairs = np.broadcast(np.asarray(shifts), np.asarray(axes))
    except ValueError:
        raise ValueError(
            f"`shift` and `axis` must have matching lengths, got {len(shifts)} and {len(axes)}"
        ) from None
    total: dict[int, int] = {}
    for s, ax in pairs:
        ax = _layout.normalize_axis(int(ax), ndim, "axis")
        total[ax] = total.get(ax, 0) + int(s)
    return total


def roll(a: _dndarray.DNDarray, shift, axis=None) -> _dndarray.DNDarray:
    """Roll elements along ``axis``, as :func:`numpy.roll` (tuple shifts and axes too).

    Along the split axis the counts stay; each rank receives the global rows
    it must hold (at most two wrapped ranges) as slices of the source
    chunks. Other axes roll locally. ``axis=None`` rolls the flattened array
    and reshapes it back, keeping the split (balanced along it).

    >>> import dndask as ht
    >>> r = ht.roll(ht.arange(7, split=0), 2)
    >>> r.numpy().tolist(), r.lshape_map.tolist()
    ([5, 6, 0, 1, 2, 3, 4], [[2], [2], [2], [1]])
    """
    _check_dndarray(a)
    if axis is None:
        total = sum(_int_tuple(shift, "shift"))
        rolled = roll(flatten(a), total, 0)
        return reshape(rolled, a.shape, new_split=a.split)
    shifts = _roll_shifts(shift, axis, a.ndim)
    out = a
    if a.split in shifts:
        n = a.shape[a.split]
        step = shifts.pop(a.split) % n if n else 0
        if step:
            plan = _layout.plan_roll(_counts(a), step)
            out = _assemble([a], plan, a.shape, a.split, _counts(a), "roll")
    shifts = {ax: s for ax, s in shifts.items() if a.shape[ax] and s % a.shape[ax]}
    if not shifts:
        return a.copy() if out is a else out
    steps, axes = tuple(shifts.values()), tuple(shifts)
    return _local(
        [out],
        np.roll,
        a.shape,
        a.split,
        _counts(out),
        prefix="roll",
        args_of=lambda r: (steps, axes),
    )


# -------------------------------------------------------------------------- pad
_PAD_MODES = (
    "constant",
    "edge",
    "linear_ramp",
    "maximum",
    "mean",
    "minimum",
    "reflect",
    "symmetric",
    "wrap",
    "empty",
)
_STAT_MODES = ("maximum", "mean", "minimum")


def _pairs(value, ndim: int, name: str, *, ints: bool) -> np.ndarray:
    """numpy's ``(before, after)`` per axis reading of a pad argument, as an ``(ndim, 2)`` array."""
    arr = np.asarray(value)
    if ints and (arr.dtype.kind not in "iu"):
        raise TypeError(f"`{name}` must hold ints, got {arr.dtype}")
    if not ints and arr.dtype.kind not in "biufc":
        raise TypeError(f"`{name}` must hold numbers, got {arr.dtype}")
    try:
        out = np.broadcast_to(arr, (ndim, 2))
    except ValueError:
        raise ValueError(
            f"`{name}` must broadcast to ({ndim}, 2) (before, after) pairs, got shape {arr.shape}"
        ) from None
    if ints and (out < 0).any():
        raise ValueError(f"`{name}` must hold non-negative ints, got {arr.tolist()}")
    return out


def _pad_options(mode, ndim, constant_values, end_values, stat_length, reflect_type) -> dict:
    """Checked per-axis numpy keywords of ``mode``: ``{axis: kwargs}``."""
    if mode == "median":
        raise NotImplementedError("`pad` does not support mode 'median'")
    if not isinstance(mode, str):
        raise TypeError(f"`mode` must be a str, got {type(mode).__name__}")
    if mode not in _PAD_MODES:
        raise ValueError(f"`mode` must be one of {', '.join(_PAD_MODES)}, got {mode!r}")
    if mode == "constant":
        values = _pairs(constant_values, ndim, "constant_values", ints=False)
        return {ax: {"constant_values": tuple(values[ax])} for ax in range(ndim)}
    if mode == "linear_ramp":
        values = _pairs(end_values, ndim, "end_values", ints=False)
        return {ax: {"end_values": tuple(values[ax])} for ax in range(ndim)}
    if mode in _STAT_MODES:
        if stat_length is None:
            return {ax: {"stat_length": None} for ax in range(ndim)}
        lengths = _pairs(stat_length, ndim, "stat_length", ints=True)
        if (lengths == 0).any():
            raise ValueError(f"`stat_length` must hold positive ints, got {lengths.tolist()}")
        return {ax: {"stat_length": tuple(int(v) for v in lengths[ax])} for ax in range(ndim)}
    if mode in ("reflect", "symmetric"):
        if reflect_type not in ("even", "odd"):
            raise ValueError(f"`reflect_type` must be 'even' or 'odd', got {reflect_type!r}")
        return {ax: {"reflect_type": reflect_type} for ax in range(ndim)}
    return {ax: {} for ax in range(ndim)}


def _axis_kwargs(kwargs: dict, axis: int, ndim: int) -> dict:
    """``kwargs`` of one axis as numpy wants them for a pad of that axis only."""
    out = {}
    for key, value in kwargs.items():
        if key == "reflect_type" or value is None:
            out[key] = value
        else:
            filler = (1, 1) if key == "stat_length" else (0, 0)
            out[key] = tuple(value if a == axis else filler for a in range(ndim))
    return out


def _pad_width(ndim: int, axis: int, widths: tuple[int, int]) -> tuple:
    return tuple(tuple(widths) if a == axis else (0, 0) for a in range(ndim))


def _window(mode: str, n: int, widths: tuple[int, int], side: int, kwargs: dict):
    """Rows ``[lo, hi)`` one side's padding depends on, and the widths to pad them with.

    ``None`` means a statistic over the whole axis (combined from per-rank
    partials). A side that reaches past what one reflection covers depends
    on the whole axis and on the other side, so it pads all rows with both widths.
    """
    width = widths[side]
    own = (width, 0) if side == 0 else (0, width)
    if mode in ("edge", "linear_ramp"):
        return ((0, 1) if side == 0 else (n - 1, n)), own
    if mode in _STAT_MODES:
        length = kwargs["stat_length"]
        length = n if length is None else min(length[side], n)
        if length >= n:
            return None, own
        return ((0, length) if side == 0 else (n - length, n)), own
    reach = {"reflect": n - 1, "symmetric": n, "wrap": n}[mode]
    if width > reach:
        return (0, n), tuple(widths)
    if mode == "wrap":
        return ((n - width, n) if side == 0 else (0, width)), own
    rows = width + (mode == "reflect")
    return ((0, rows) if side == 0 else (n - rows, n)), own


def _pad_local(
    d: _dndarray.DNDarray, axis: int, widths, mode: str, kwargs: dict
) -> _dndarray.DNDarray:
    """Pad a non-split axis: every rank pads its own chunk."""
    shape = tuple(s + sum(widths) if a == axis else s for a, s in enumerate(d.shape))
    pad_width = _pad_width(d.ndim, axis, widths)
    kw = _axis_kwargs(kwargs, axis, d.ndim)
    return _local(
        [d],
        _pad_chunk,
        shape,
        d.split,
        _counts(d),
        prefix="pad",
        args_of=lambda r: (pad_width, mode, kw),
    )


def _pad_split_constant(
    d: _dndarray.DNDarray, widths, mode: str, kwargs: dict
) -> _dndarray.DNDarray:
    """Constant/empty padding of the split axis: rank 0 and the last rank pad their own chunk."""
    axis, size = d.split, d.comm.size
    counts = _layout.padded_counts(_counts(d), *widths)
    shape = tuple(s + sum(widths) if a == axis else s for a, s in enumerate(d.shape))
    kw = _axis_kwargs(kwargs, axis, d.ndim)

    def args(r: int) -> tuple:
        own = (widths[0] if r == 0 else 0, widths[1] if r == size - 1 else 0)
        return (_pad_width(d.ndim, axis, own), mode, kw)

    return _local([d], _pad_chunk, shape, axis, counts, prefix="pad", args_of=args)


def _side_task(
    d: _dndarray.DNDarray,
    side: int,
    widths,
    mode: str,
    kwargs: dict,
    name: str,
    dsk: dict,
    hints: dict,
):
    """Add the tasks of one side's padding rows to ``dsk``; return their key."""
    axis, n, size = d.split, d.shape[d.split], d.comm.size
    target = 0 if side == 0 else size - 1
    counts = _counts(d)
    key = (f"{name}-side", side)
    hints[key] = target
    window, pad = _window(mode, n, widths, side, kwargs)
    if window is None:  # a statistic of the whole axis: one partial row per non-empty rank
        parts = []
        for r, c in enumerate(counts):
            if c:
                part = (f"{name}-partial", side, r)
                dsk[part] = Task(part, _partial_stat, TaskRef(_chunk_key(d, r)), axis, mode)
                hints[part] = r
                parts.append(TaskRef(part))
        dsk[key] = Task(
            key, _stat_rows, *parts, axis=axis, stat=mode, n=n, width=widths[side], dtype=d.dtype
        )
        return key
    pieces = [_layout.OperandPiece(0, *p) for p in _layout.plan_ranges(counts, [window])]
    lshape = tuple(window[1] - window[0] if a == axis else s for a, s in enumerate(d.shape))
    window_key = (f"{name}-window", side)
    part_dsk, part_hints = _pieces_graph(
        [d], [pieces], [window_key], axis, [lshape], d.dtype, f"{name}-{side}"
    )
    dsk.update(part_dsk)
    hints.update(part_hints)
    hints[window_key] = target
    kw = _axis_kwargs(kwargs, axis, d.ndim)
    dsk[key] = Task(key, _pad_side, TaskRef(window_key), axis, tuple(pad), mode, kw, side)
    return key


def _pad_split_rows(d: _dndarray.DNDarray, widths, mode: str, kwargs: dict) -> _dndarray.DNDarray:
    """Padding of the split axis that depends on the data: rows built from the axis's ends.

    Each side's rows are computed from the few rows numpy would read (moved
    to rank 0 or the last rank), or from per-rank partial statistics.
    """
    axis, size = d.split, d.comm.size
    counts = _layout.padded_counts(_counts(d), *widths)
    shape = tuple(s + sum(widths) if a == axis else s for a, s in enumerate(d.shape))
    chunks = _layout.chunks_for(shape, axis, counts)
    name = f"pad-{tokenize(d.to_dask().name, widths, mode, kwargs)}"
    dsk: dict = {}
    hints: dict = {}
    before = _side_task(d, 0, widths, mode, kwargs, name, dsk, hints) if widths[0] else None
    after = _side_task(d, 1, widths, mode, kwargs, name, dsk, hints) if widths[1] else None
    for r in range(size):
        keys = [_chunk_key(d, r)]
        if r == 0 and before is not None:
            keys.insert(0, before)
        if r == size - 1 and after is not None:
            keys.append(after)
        out_key = (name, *_graph.block_index(axis, d.ndim, r))
        if len(keys) == 1:
            dsk[out_key] = Alias(out_key, keys[0])
        else:
            dsk[out_key] = Task(out_key, _join, *(TaskRef(k) for k in keys), axis=axis)
    return _wrap(dsk, name, chunks, d.dtype, [d], axis, d.comm, hints)


def pad(
    a: _dndarray.DNDarray,
    pad_width,
    mode: str = "constant",
    constant_values=0,
    *,
    end_values=0,
    stat_length=None,
    reflect_type: str = "even",
) -> _dndarray.DNDarray:
    """Pad an array, as :func:`numpy.pad`.

    Modes: ``constant``, ``edge``, ``linear_ramp``, ``maximum``, ``mean``,
    ``minimum``, ``reflect``, ``symmetric``, ``wrap``, ``empty`` (``median``
    and callables raise ``NotImplementedError``). ``end_values``,
    ``stat_length`` and ``reflect_type`` are numpy's keywords of those modes.

    The split stays. Along the split axis the ``before`` rows go to rank 0
    and the ``after`` rows to the last rank (as in Heat); the other ranks keep
    their counts. Constant and empty padding is made where it goes; the other
    modes move to rank 0 / the last rank only the rows numpy reads for the
    padding (the edge rows, a reflection's width, ``stat_length`` rows; for a
    statistic over the whole axis one partial row per rank). Other axes pad
    locally. Axes are padded in order, as numpy does.

    >>> import dndask as ht
    >>> p = ht.pad(ht.arange(5, split=0), (2, 1), mode="edge")
    >>> p.numpy().tolist(), p.lshape_map.tolist()
    ([0, 0, 0, 1, 2, 3, 4, 4], [[4], [1], [1], [2]])
    """
    _check_dndarray(a)
    kwargs = _pad_options(mode, a.ndim, constant_values, end_values, stat_length, reflect_type)
    widths = _pairs(pad_width, a.ndim, "pad_width", ints=True)
    for axis, (b, f) in enumerate(widths):
        if (b or f) and a.shape[axis] == 0 and mode not in ("constant", "empty"):
            raise ValueError(
                f"`mode` {mode!r} cannot pad the empty axis {axis}; use 'constant' or 'empty'"
            )
    out = a.copy()
    for axis, (b, f) in enumerate(widths):
        b, f = int(b), int(f)
        if not (b or f):
            continue
        if axis != out.split:
            out = _pad_local(out, axis, (b, f), mode, kwargs[axis])
        elif mode in ("constant", "empty"):
            out = _pad_split_constant(out, (b, f), mode, kwargs[axis])
        else:
            out = _pad_split_rows(out, (b, f), mode, kwargs[axis])
    return out


# ------------------------------------------------------------------- repetition
def _repeats(repeats):
    """``repeats`` as an int or a 1-D int64 numpy array (a DNDarray is fetched: small metadata)."""
    if _is_int(repeats):
        value = int(repeats)
        if value < 0:
            raise ValueError(f"`repeats` must be non-negative, got {value}")
        return value
    if isinstance(repeats, _dndarray.DNDarray):
        repeats = repeats.numpy()
    elif isinstance(repeats, torch.Tensor):
        repeats = _torch.from_torch(repeats)
    elif not isinstance(repeats, (np.ndarray, list, tuple)):
        raise TypeError(
            f"`repeats` must be an int or a 1-D array of ints, got {type(repeats).__name__}"
        )
    values = np.asarray(repeats)
    if values.dtype.kind not in "iu" and not (values.size == 0 and values.dtype.kind == "f"):
        raise TypeError(f"`repeats` must hold ints, got {values.dtype}")
    if values.ndim > 1:
        raise ValueError(f"`repeats` must be an int or 1-D, got {values.ndim} dimensions")
    values = values.astype(np.int64).reshape(-1)
    if (values < 0).any():
        raise ValueError(f"`repeats` must be non-negative, got {values.tolist()}")
    return values


def repeat(a: _dndarray.DNDarray, repeats, axis: int | None = None) -> _dndarray.DNDarray:
    """Repeat elements, as :func:`numpy.repeat`.

    ``repeats`` is an int or a 1-D array (one entry per element along
    ``axis``, or a single entry). Along the split axis every rank repeats its
    own rows (with its slice of ``repeats``), so no data moves and the
    counts scale. Other axes repeat locally. ``axis=None`` flattens first:
    the result is split 0 if ``a`` is split, else None.

    >>> import dndask as ht
    >>> r = ht.arange(3, split=0).repeat(2, axis=0)
    >>> r.numpy().tolist(), r.lshape_map.tolist()
    ([0, 0, 1, 1, 2, 2], [[2], [2], [2], [0]])
    """
    _check_dndarray(a)
    reps = _repeats(repeats)
    if axis is None:
        return repeat(flatten(a), reps, 0)
    axis = _layout.normalize_axis(axis, a.ndim, "axis")
    n = a.shape[axis]
    if not isinstance(reps, int):
        if reps.size == 1:
            reps = int(reps[0])
        elif reps.size != n:
            raise ValueError(
                f"`repeats` must have 1 or {n} entries for axis {axis}, got {reps.size}"
            )
    length = n * reps if isinstance(reps, int) else int(reps.sum())
    shape = tuple(length if i == axis else s for i, s in enumerate(a.shape))
    counts = _counts(a)
    if a.split != axis:
        return _local(
            [a], np.repeat, shape, a.split, counts, prefix="repeat", args_of=lambda r: (reps, axis)
        )
    new_counts = _layout.repeated_counts(counts, reps)
    displs = _layout.displacements(counts)

    def args(r: int) -> tuple:
        own = reps if isinstance(reps, int) else reps[displs[r] : displs[r] + counts[r]]
        return (own, axis)

    return _local([a], np.repeat, shape, axis, new_counts, prefix="repeat", args_of=args)


def tile(a: _dndarray.DNDarray, reps) -> _dndarray.DNDarray:
    """Repeat the whole array ``reps`` times per axis, as :func:`numpy.tile`.

    With more entries in ``reps`` than ``a.ndim``, ``a`` gains leading axes
    and its split shifts by as many. Along the split axis the result is
    balanced and each rank receives its copies' rows as slices of the source
    chunks; other axes tile locally.

    >>> import dndask as ht
    >>> t = ht.tile(ht.arange(3, split=0), (2, 2))
    >>> t.shape, t.split, t.lshape_map.tolist()
    ((2, 6), 1, [[2, 2], [2, 2], [2, 1], [2, 1]])
    """
    _check_dndarray(a)
    if isinstance(reps, np.ndarray):
        reps = reps.tolist()
    reps = _int_tuple(reps, "reps")
    if any(r < 0 for r in reps):
        raise ValueError(f"`reps` must hold non-negative ints, got {reps}")
    ndim = max(len(reps), a.ndim)
    reps = (1,) * (ndim - len(reps)) + reps
    b = a if a.ndim == ndim else expand_dims(a, tuple(range(ndim - a.ndim)))
    shape = tuple(s * r for s, r in zip(b.shape, reps, strict=True))
    if b.split is None:
        return _local([b], np.tile, shape, None, (), prefix="tile", args_of=lambda r: (reps,))
    split = b.split
    dst, plan = _layout.plan_tile(_counts(b), reps[split], b.comm.size)
    rows = tuple(shape[split] if i == split else s for i, s in enumerate(b.shape))
    out = _assemble([b], plan, rows, split, dst, "tile")
    rest = tuple(1 if i == split else r for i, r in enumerate(reps))
    if all(r == 1 for r in rest):
        return out
    return _local([out], np.tile, shape, split, dst, prefix="tile", args_of=lambda r: (rest,))
