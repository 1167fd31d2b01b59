"""Graph builders shared by the manipulations: per-rank local results and planned moves.

:func:`local` makes every chunk of the result from one source chunk (its own
rank's by default, so no data moves). :func:`assemble` joins, for every rank,
the pieces a plan of :mod:`dndask._manipulation._plan` names, slicing each
piece on the rank that holds its source chunk so only the slice travels.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence

import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from .. import _dndarray, _layout
from .._compat import Alias, SliceTask, Task, TaskRef, new_array
from .._graph import block_index, chunk_key, empty, meta_of
from ._plan import OperandPiece

# ----------------------------------------------------------------- chunk functions
# Module-level so that tasks pickle and tokenize by name.


def join(*parts: np.ndarray, axis: int) -> np.ndarray:
    return np.concatenate(parts, axis=axis)


# ------------------------------------------------------------------------- helpers
def local_shapes(shape: tuple[int, ...], split: int | None, counts: Sequence[int]) -> list[tuple]:
    """Every rank's local shape of ``shape`` split with ``counts`` (one entry if not split)."""
    if split is None:
        return [tuple(shape)]
    return [tuple(c if a == split else s for a, s in enumerate(shape)) for c in counts]


def block_key(name: str, split: int | None, ndim: int, rank: int) -> tuple:
    return (name, *block_index(split, ndim, rank))


def join_task(out_key: tuple, keys: Sequence[tuple], axis: int, lshape: tuple, dtype, like=None):
    """The task of ``out_key``: ``keys`` joined along ``axis`` (an empty chunk if none).

    ``like`` (a meta) is the chunk type of that empty chunk; numpy's by default.
    """
    if not keys:
        return Task(out_key, empty, tuple(lshape), dtype, like)
    if len(keys) == 1:
        return Alias(out_key, keys[0])
    return Task(out_key, join, *(TaskRef(k) for k in keys), axis=axis)


def wrap(
    dsk: dict, name: str, chunks: tuple, dtype, sources, split, comm, task_ranks=None
) -> _dndarray.DNDarray:
    """The DNDarray of the tasks ``dsk`` (layer ``name``) built on ``sources``."""
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[s.to_dask() for s in sources])
    x = new_array(graph, name, chunks, meta_of(dtype, len(chunks), like=_first(sources)))
    out = _dndarray.from_dask(x, split, comm, parents=tuple(sources))
    out._task_ranks.update(task_ranks or {})
    return out


def _first(sources):
    """The first source (its chunk type is the result's), ``None`` without sources."""
    return sources[0] if len(sources) else None


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
        refs = [TaskRef(chunk_key(s.to_dask(), s.split, srcs[r])) for s in sources]
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
    piece is one slicing task, pinned (through the returned task_ranks) to the
    rank that holds its source chunk, so only the slice travels.
    """
    dsk: dict = {}
    task_ranks: dict = {}
    like = meta_of(dtype, len(lshapes[0]), like=sources[0]) if lshapes else None
    for out_key, pieces, lshape in zip(out_keys, plan, lshapes, strict=True):
        keys = []
        for p in pieces:
            source = sources[p.operand]
            src_key = chunk_key(source.to_dask(), source.split, p.src)
            if p.whole:
                keys.append(src_key)
                continue
            key = (f"{name}-piece", p.operand, p.src, p.start, p.stop)
            if key not in dsk:
                index = (slice(None),) * axis + (slice(p.start, p.stop),)
                dsk[key] = SliceTask(key, operator.getitem, TaskRef(src_key), index)
                task_ranks[key] = p.src
            keys.append(key)
        dsk[out_key] = join_task(out_key, keys, axis, lshape, dtype, like)
    return dsk, task_ranks


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
    dsk, task_ranks = pieces_graph(
        sources, plan, out_keys, split, local_shapes(shape, split, counts), dtype, name
    )
    return wrap(dsk, name, chunks, dtype, sources, split, comm, task_ranks)
