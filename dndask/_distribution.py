"""Execution of layout plans: :func:`relayout`, every change of distribution as a Dask graph.

The plans come from :func:`dndask._layout.plan_relayout`; this module only turns them into
graphs. Each output chunk is assembled from slices of input chunks, so data
moves worker to worker when the graph runs, never through the driver. A
piece that is a whole input chunk is referenced directly (no copy task), and
an output made of one such piece is an alias of it.
"""

from __future__ import annotations

import math
import operator
import os
from collections.abc import Sequence
from typing import NamedTuple

import dask.array as da
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from . import _layout, _xp
from ._compat import SliceTask, TaskRef, new_array
from ._graph import block_index, chunk_meta, empty, meta_of

# Above this many pieces, resplit_ hands the work to Dask's p2p rechunk.
_P2P_ENV = "DNDASK_P2P_THRESHOLD"
_P2P_DEFAULT = 64 * 64


def _concat(parts: list[np.ndarray], axis: int) -> np.ndarray:
    return np.concatenate(parts, axis=axis)


def build(
    x: da.Array, plan: _layout.RelayoutPlan, prefix: str = "relayout", pinned: bool = True
) -> tuple[da.Array, dict]:
    """The graph of ``plan``: chunk ``r`` joins the pieces ``plan.pieces[r]``.

    A whole-chunk piece is referenced directly (an output made of one is an
    alias of it); any other piece is one slicing task. Returns the array and
    the rank each slicing task runs on (its source's, so only the slice
    travels); ``pinned=False`` leaves them unplaced (``x``'s chunks are not ranks).
    """
    if plan.is_identity:
        return x, {}
    src, dst, ndim = plan.src, plan.dst, x.ndim
    out_chunks = dst.chunks(plan.shape)
    name = f"{prefix}-{tokenize(x.name, plan.pieces, out_chunks, dst.split)}"
    piece_name = f"{name}-piece"
    dsk: dict = {}
    task_ranks: dict = {}
    for r, moves in enumerate(plan.pieces):
        out_key = (name, *block_index(dst.split, ndim, r))
        keys = []
        for j, move in enumerate(moves):
            src_key = (x.name, *block_index(src.split, ndim, move.src))
            if move.index is None:
                keys.append(src_key)
                continue
            key = (piece_name, r, j)
            dsk[key] = SliceTask(key, operator.getitem, TaskRef(src_key), move.index)
            if pinned:
                task_ranks[key] = move.src
            keys.append(key)
        if not keys:
            lshape = [c[r] if a == dst.split else c[0] for a, c in enumerate(out_chunks)]
            dsk[out_key] = (empty, lshape, x.dtype, meta_of(x.dtype, ndim, like=x))
        elif len(keys) == 1:
            dsk[out_key] = keys[0]
        else:
            dsk[out_key] = (_concat, keys, plan.axis)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[x])
    return new_array(graph, name, out_chunks, x), task_ranks


class _Chunks(NamedTuple):
    """The stand-in comm of a grid whose chunks are Dask's, not ranks (only its size counts)."""

    size: int


def restore_empty_ranks(x: da.Array, split: int, counts: Sequence[int]) -> da.Array:
    """``x`` (whose chunks Dask may have stripped of empty ones) chunked as ``counts`` again.

    Dask drops zero-size chunks when it rechunks or concatenates; this puts
    the empty ranks back with a graph-only redistribution. ``x``'s chunks are
    Dask's, not ranks, so the slices get no ranks.
    """
    shape = tuple(int(s) for s in x.shape)
    have = tuple(int(c) for c in x.chunks[split])
    if have == tuple(counts):
        return x
    # the pieces index x's chunks along ``split``; plan them as a redistribution
    row = math.prod(s for a, s in enumerate(shape) if a != split)
    pieces = tuple(
        tuple(
            _layout.Move(
                p.src,
                None if p.whole else _layout.along(x.ndim, split, p.start, p.stop),
                (p.stop - p.start) * row,
            )
            for p in moves
        )
        for moves in _layout.plan_redistribution(have, counts)
    )
    src = _layout.Distribution(split, have, _Chunks(len(have)))
    dst = _layout.Distribution(split, tuple(counts), _Chunks(len(counts)))
    return build(x, _layout.RelayoutPlan(shape, src, dst, pieces, split), pinned=False)[0]


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


def relayout_graph(
    x: da.Array, src: _layout.Distribution, dst: _layout.Distribution, method: str | None = None
) -> tuple[da.Array, dict]:
    """The graph laying ``x`` (laid out as ``src``) out as ``dst``, and its tasks' ranks.

    ``method`` only matters for a change between two split axes: ``"tasks"``
    (one slice task per pair of ranks; every chunk stays where dndask places
    it), ``"p2p"`` (Dask's peer-to-peer rechunk; a graph linear in ranks but
    placement left to Dask) or ``None`` to pick ``"p2p"`` above
    :func:`p2p_threshold` pieces.
    """
    check_method(method)
    shape = tuple(int(s) for s in x.shape)
    _layout.check_relayout(shape, src, dst)
    if src.chunks(shape) == dst.chunks(shape):  # the same grid: every chunk stays put
        return x, {}
    between_axes = None not in (src.split, dst.split) and src.split != dst.split
    size = src.size
    device = _xp.device_of(chunk_meta(x))
    if device.device_type != "cpu":  # P2P stages its shards as numpy: device chunks use tasks
        if between_axes and method == "p2p":
            raise ValueError(
                f"`method` 'p2p' needs host chunks (Dask's P2P rechunk stages them as numpy), "
                f"got chunks on {device}; use method='tasks' or None"
            )
        method = "tasks"
    if between_axes and (method == "p2p" or (method is None and size * size > p2p_threshold())):
        # Dask drops the empty chunks of empty ranks (all of them without elements).
        y = x.rechunk(dst.chunks(shape), method="p2p")
        return restore_empty_ranks(y, dst.split, dst.counts), {}
    # planned only here: the P² pieces are what the p2p path above avoids building
    return build(x, _layout.plan_relayout(shape, src, dst))


def relayout_(array, dst: _layout.Distribution, method: str | None = None):
    """Lay the DNDarray ``array`` out as ``dst`` in place (a new graph); returns ``array``.

    The one way dndask changes a distribution: redistribution, resplit,
    operand alignment, products and manipulations all come here. Lazy: data
    moves (worker to worker, straight into ``dst``) when the array is computed.
    """
    src = array.distribution
    if dst == src:
        return array
    x, task_ranks = relayout_graph(array.to_dask(), src, dst, method)
    return array._set(x, dst.split, task_ranks)


def relayout(array, dst: _layout.Distribution, method: str | None = None):
    """``array`` laid out as ``dst``: a new DNDarray (``array`` itself if it already is).

    Out-of-place :func:`relayout_`. ``dst`` must be on ``array``'s comm and
    fit its shape.

    >>> import dndask as ht
    >>> from dndask._layout import Distribution
    >>> a = ht.arange(12, split=0, comm=ht.get_comm().subcomm([0, 1, 2]))
    >>> b = relayout(a, Distribution(0, (0, 2, 10), a.comm))
    >>> b.lshape_map[:, 0].tolist(), b.numpy().tolist() == list(range(12))
    ([0, 2, 10], True)
    """
    if dst == array.distribution:
        return array
    return relayout_(array.copy(), dst, method)
