"""Graph builders shared by the manipulations: per-rank local results and planned moves.

:func:`local` makes every chunk of the result from one source chunk (its own
rank's by default, so no data moves). :func:`assemble` joins, for every rank,
the pieces a plan of :mod:`dndask._manipulation._plan` names, slicing each
piece on the rank that holds its source chunk so only the slice travels.
:func:`with_counts` redistributes an operand to given counts.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence

import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from .. import _distribution, _dndarray, _layout
from .._compat import Alias, SliceTask, Task, TaskRef, new_array
from .._graph import block_index, meta_of
from ._plan import OperandPiece

# ----------------------------------------------------------------- chunk functions
# Module-level so that tasks pickle and tokenize by name.


def join(*parts: np.ndarray, axis: int) -> np.ndarray:
    return np.concatenate(parts, axis=axis)


def _empty(lshape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    return np.empty(lshape, dtype=dtype)


# ------------------------------------------------------------------------- helpers
def counts_of(a: _dndarray.DNDarray) -> tuple[int, ...]:
    """Rows per rank along the split (``()`` for ``split=None``)."""
    return a.counts_displs()[0] if a.split is not None else ()


def local_shapes(shape: tuple[int, ...], split: int | None, counts: Sequence[int]) -> list[tuple]:
    """Every rank's local shape of ``shape`` split with ``counts`` (one entry if not split)."""
    if split is None:
        return [tuple(shape)]
    return [tuple(c if a == split else s for a, s in enumerate(shape)) for c in counts]


def block_key(name: str, split: int | None, ndim: int, rank: int) -> tuple:
    return (name, *block_index(split, ndim, rank))


def chunk_key(a: _dndarray.DNDarray, rank: int) -> tuple:
    return block_key(a.to_dask().name, a.split, a.ndim, rank)


def join_task(out_key: tuple, keys: Sequence[tuple], axis: int, lshape: tuple, dtype):
    """The task of ``out_key``: ``keys`` joined along ``axis`` (an empty chunk if none)."""
    if not keys:
        return Task(out_key, _empty, tuple(lshape), dtype)
    if len(keys) == 1:
        return Alias(out_key, keys[0])
    return Task(out_key, join, *(TaskRef(k) for k in keys), axis=axis)


def wrap(
    dsk: dict, name: str, chunks: tuple, dtype, sources, split, comm, hints=None
) -> _dndarray.DNDarray:
    """The DNDarray of the tasks ``dsk`` (layer ``name``) built on ``sources``."""
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[s.to_dask() for s in sources])
    x = new_array(graph, name, chunks, meta_of(dtype, len(chunks)))
    out = _dndarray.from_dask(x, split, comm, parents=tuple(sources))
    out._hints.update(hints or {})
    return out


# ---------------------------------------------------------------- local results
def local(
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
        key = block_key(name, split, len(shape), r)
        refs = [TaskRef(chunk_key(s, srcs[r])) for s in sources]
        dsk[key] = Task(key, fn, *refs, *args[r], **kwargs)
    return wrap(dsk, name, chunks, dtype, sources, split, comm)


# ------------------------------------------------------------------ planned moves
def pieces_graph(
    sources: Sequence[_dndarray.DNDarray],
    plan: Sequence[Sequence[OperandPiece]],
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
            src_key = chunk_key(sources[p.operand], p.src)
            if p.whole:
                keys.append(src_key)
                continue
            key = (f"{name}-piece", p.operand, p.src, p.start, p.stop)
            if key not in dsk:
                index = (slice(None),) * axis + (slice(p.start, p.stop),)
                dsk[key] = SliceTask(key, operator.getitem, TaskRef(src_key), index)
                hints[key] = p.src
            keys.append(key)
        dsk[out_key] = join_task(out_key, keys, axis, lshape, dtype)
    return dsk, hints


def assemble(
    sources: Sequence[_dndarray.DNDarray],
    plan: Sequence[Sequence],
    shape: tuple[int, ...],
    split: int,
    counts: Sequence[int],
    prefix: str,
) -> _dndarray.DNDarray:
    """The DNDarray (split ``split``, ``counts``) whose chunk ``r`` joins the pieces ``plan[r]``.

    ``plan[r]`` holds :class:`~dndask._manipulation._plan.OperandPiece` (or,
    for a single source, :class:`~dndask._layout.Piece`) entries slicing
    along ``split``.
    """
    plan = [[p if isinstance(p, OperandPiece) else OperandPiece(0, *p) for p in ps] for ps in plan]
    comm, dtype, ndim = sources[0].comm, sources[0].dtype, len(shape)
    chunks = _layout.chunks_for(shape, split, counts)
    names = [s.to_dask().name for s in sources]
    name = f"{prefix}-{tokenize(names, plan, chunks, split)}"
    out_keys = [block_key(name, split, ndim, r) for r in range(comm.size)]
    dsk, hints = pieces_graph(
        sources, plan, out_keys, split, local_shapes(shape, split, counts), dtype, name
    )
    return wrap(dsk, name, chunks, dtype, sources, split, comm, hints)


def with_counts(d: _dndarray.DNDarray, axis: int, counts: Sequence[int]) -> _dndarray.DNDarray:
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
        src = counts_of(d)
        if src == counts:
            return d
    x, hints = _distribution.redistribute(d.to_dask(), axis, src, counts)
    out = _dndarray.from_dask(x, axis, d.comm, parents=(d,))
    out._hints.update(hints)
    return out
