"""Execution of layout plans: redistribution and resplit as Dask task graphs.

The plans come from :mod:`dndask._layout`; this module only turns them into
graphs. Each output chunk is assembled from slices of input chunks, so data
moves worker to worker when the graph runs, never through the driver. A
piece that is a whole input chunk is referenced directly (no copy task), and
an output made of one such piece is an alias of it.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Sequence

import dask.array as da
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from . import _layout
from ._compat import SliceTask, TaskRef, new_array
from ._graph import block_index

# Above this many pieces, resplit_ hands the work to Dask's p2p rechunk.
_P2P_ENV = "DNDASK_P2P_THRESHOLD"
_P2P_DEFAULT = 64 * 64


def _empty(lshape: list[int], dtype: np.dtype) -> np.ndarray:
    return np.empty(tuple(lshape), dtype=dtype)


def _concat(parts: list[np.ndarray], axis: int) -> np.ndarray:
    return np.concatenate(parts, axis=axis)


def _assemble(
    x: da.Array,
    prefix: str,
    out_chunks: tuple,
    out_split: int | None,
    plans: Sequence[tuple[Sequence[tuple[tuple[int, ...], tuple[slice, ...] | None, int]], int]],
) -> tuple[da.Array, dict]:
    """Build the array whose chunk ``r`` concatenates the pieces ``plans[r]``.

    ``plans[r]`` is ``(pieces, axis)``; each piece is ``(source block index,
    slices or None for the whole block, source rank)``, joined along ``axis``.
    Returns the array and the rank each slicing task must run on (its
    source's), so that only the slices travel.
    """
    ndim = x.ndim
    name = f"{prefix}-{tokenize(x.name, out_chunks, out_split)}"
    piece_name = f"{name}-piece"
    dsk: dict = {}
    hints: dict = {}
    for r, (pieces, axis) in enumerate(plans):
        out_key = (name, *block_index(out_split, ndim, r))
        keys = []
        for j, (src_idx, slices, src_rank) in enumerate(pieces):
            src_key = (x.name, *src_idx)
            if slices is None:
                keys.append(src_key)
            else:
                key = (piece_name, r, j)
                dsk[key] = SliceTask(key, operator.getitem, TaskRef(src_key), slices)
                hints[key] = src_rank
                keys.append(key)
        if not keys:
            lshape = [c[r] if a == out_split else c[0] for a, c in enumerate(out_chunks)]
            dsk[out_key] = (_empty, lshape, x.dtype)
        elif len(keys) == 1:
            dsk[out_key] = keys[0]
        else:
            dsk[out_key] = (_concat, keys, axis)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[x])
    return new_array(graph, name, out_chunks, x), hints


def redistribute(
    x: da.Array, split: int, src: Sequence[int], dst: Sequence[int]
) -> tuple[da.Array, dict]:
    """Move rows along ``split`` from ``src`` counts to ``dst`` counts.

    Returns the new array and the placement hints of its slicing tasks.
    """
    src, dst = tuple(src), tuple(dst)
    if src == dst:
        return x, {}
    ndim = x.ndim
    plans = []
    for pieces in _layout.plan_redistribution(src, dst):
        entries = []
        for p in pieces:
            slices = None
            if not p.whole:
                slices = tuple(
                    slice(p.start, p.stop) if a == split else slice(None) for a in range(ndim)
                )
            entries.append((block_index(split, ndim, p.src), slices, p.src))
        plans.append((entries, split))
    out_chunks = _layout.chunks_for(x.shape, split, dst)
    return _assemble(x, "redistribute", out_chunks, split, plans)


def restore_empty_ranks(x: da.Array, split: int, counts: Sequence[int]) -> da.Array:
    """``x`` (whose chunks Dask may have stripped of empty ones) chunked as ``counts`` again.

    Dask drops zero-size chunks when it rechunks or concatenates; this puts
    the empty ranks back with a graph-only redistribution. ``x``'s chunks are
    Dask's, not ranks, so the slices get no placement hints.
    """
    return redistribute(x, split, tuple(int(c) for c in x.chunks[split]), counts)[0]


def check_method(method: object) -> None:
    """Reject an unknown resplit ``method``."""
    if method not in (None, "tasks", "p2p"):
        raise ValueError(f"`method` must be None, 'tasks' or 'p2p', got {method!r}")


def p2p_threshold() -> int:
    """Largest number of pieces a resplit builds as its own task graph."""
    raw = os.environ.get(_P2P_ENV, str(_P2P_DEFAULT))
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"`{_P2P_ENV}` must be a non-negative int, got {raw!r}")
    return value


def resplit(
    x: da.Array,
    src_split: int | None,
    dst_split: int | None,
    src_counts: Sequence[int],
    size: int,
    method: str | None = None,
) -> tuple[da.Array, dict]:
    """Change the split axis; the new axis is balanced by Heat's rule.

    ``method`` is ``"tasks"`` (one slice task per pair of ranks; keeps every
    chunk where dndask places it), ``"p2p"`` (Dask's peer-to-peer rechunk;
    a graph linear in ranks but placement left to Dask) or ``None`` to pick
    ``"p2p"`` above :func:`p2p_threshold` pieces. Gathering to ``None`` and
    slicing a ``split=None`` array always use tasks (one piece per rank). Returns the new array and
    the placement hints of its slicing tasks.
    """
    check_method(method)
    ndim, shape = x.ndim, x.shape
    if dst_split is None:
        out_chunks = _layout.chunks_for(shape, None, None)
        if src_split is None:
            return x, {}
        entries = [
            (block_index(src_split, ndim, s), None, s) for s, c in enumerate(src_counts) if c
        ]
        return _assemble(x, "resplit", out_chunks, None, [(entries, src_split)])
    dst_counts = _layout.balanced_counts(shape[dst_split], size)
    out_chunks = _layout.chunks_for(shape, dst_split, dst_counts)
    if src_split is None:
        sources = [((0,) * ndim, 0)]
        concat_axis = 0
    else:
        sources = [(block_index(src_split, ndim, s), s) for s, c in enumerate(src_counts) if c]
        concat_axis = src_split
        if method == "p2p" or (method is None and size * size > p2p_threshold()):
            # Dask drops the empty chunks of empty ranks (all of them without elements).
            y = x.rechunk(out_chunks, method="p2p")
            return restore_empty_ranks(y, dst_split, dst_counts), {}
    plans = []
    for start, count in zip(_layout.displacements(dst_counts), dst_counts, strict=True):
        entries = []
        if count:
            for src_idx, src_rank in sources:
                slices = tuple(
                    slice(start, start + count) if a == dst_split else slice(None)
                    for a in range(ndim)
                )
                entries.append((src_idx, slices, src_rank))
        plans.append((entries, concat_axis))
    return _assemble(x, "resplit", out_chunks, dst_split, plans)
