"""Driver-side preparation of a key for a DNDarray: the index metadata computed, the key
normalised, and a mask laid out like the array's chunks with its per-rank ``True`` counts.

This is the only part of indexing that may compute before the graph is built:
DNDarrays used as integer indices (or as a 1-D mask next to other advanced
indices), and the ``True`` counts of a DNDarray mask when the result's layout
depends on them. A multi-dimensional DNDarray mask itself is never computed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from .. import _compute, _xp
from .._compat import Task, TaskRef, new_array
from .._distribution import relayout
from .._graph import meta_of
from .._layout import Distribution
from ._keys import (
    DND_MASK_WITH_ARRAYS,
    Item,
    Key,
    covers,
    is_dnd,
    key_mode,
    leaf,
    leaves,
    normalize_key,
)


def _host_indices(entries: tuple) -> tuple:
    """Compute the DNDarrays of a key that are index metadata (not lazy masks)."""
    mode = key_mode(entries)
    out = []
    for e in entries:
        if is_dnd(e) and e.dtype.kind in "iu":
            e = leaf(e.numpy())
        elif is_dnd(e) and mode == "advanced":
            if e.ndim != 1:
                raise NotImplementedError(DND_MASK_WITH_ARRAYS)
            e = e.numpy()
        out.append(e)
    return tuple(out)


def normalized(a, key) -> Key:
    """``key`` normalised for ``a``, its index DNDarrays computed."""
    return normalize_key(_host_indices(leaves(key)), a.shape)


class Mask(NamedTuple):
    """A mask laid out for an array: what each rank's task gets, and its counts table."""

    arg: Callable  # rank -> mask argument of that rank's task
    table: Callable  # () -> per-rank True counts (or the total)
    array: Any  # the aligned mask DNDarray (a graph dependency), or None


def _aligned_dnd_mask(mask, a, it: Item):
    """The DNDarray ``mask`` laid out like ``a``'s chunks (whole if it misses the split axis)."""
    if mask.comm != a.comm:
        raise ValueError(
            f"`key` mask must share the array's comm, got {mask.comm!r} and {a.comm!r}"
        )
    if not covers(it, a.split):
        return relayout(mask, Distribution(None, (), mask.comm)), None
    axis = a.split - it.axis
    return relayout(mask, Distribution(axis, a.distribution.counts, mask.comm)), axis


def _count_block(chunk: np.ndarray, axis: int) -> np.ndarray:
    """The ``True`` counts of a mask chunk, copied to host explicitly (they go to the driver)."""
    counts = chunk.sum(axis=tuple(range(axis, chunk.ndim)), dtype=np.int64)
    return np.asarray(_xp.to_host(counts))[None]


def _true_table(mask, axis: int | None) -> np.ndarray:
    """Per rank, the number of ``True`` for each index of the axes before ``axis`` (computed)."""
    axis = 0 if axis is None else axis
    keys = mask._chunk_keys()
    prefix = mask.shape[:axis]
    name = f"count-true-{tokenize(mask.to_dask().name, axis)}"
    dsk, table = {}, mask._placement()
    for r, src in enumerate(keys):
        key = (name, r, *(0,) * len(prefix))
        dsk[key] = Task(key, _count_block, TaskRef(src), axis)
        table[key] = mask.comm.workers[r]
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[mask.to_dask()])
    chunks = ((1,) * len(keys), *((n,) for n in prefix))
    counts = new_array(graph, name, chunks, meta_of(np.dtype(np.int64), len(chunks)))
    return _compute.compute(counts, mask.comm.client, table, mask.comm)


def laid_out_mask(a, it: Item) -> Mask:
    """The mask of ``it`` prepared for ``a``'s layout, numpy or DNDarray."""
    mask = it.value
    covered = covers(it, a.split)
    if is_dnd(mask):
        aligned, axis = _aligned_dnd_mask(mask, a, it)
        keys = aligned._chunk_keys()

        def arg(rank: int):
            return TaskRef(keys[rank if covered else 0])

        return Mask(arg, lambda: _true_table(aligned, axis), aligned)
    if not covered:
        return Mask(lambda rank: mask, lambda: np.array([np.count_nonzero(mask)]), None)
    axis = a.split - it.axis
    pieces = np.split(mask, np.cumsum(a.distribution.counts)[:-1], axis=axis)
    table = np.stack([p.sum(axis=tuple(range(axis, mask.ndim))) for p in pieces])
    return Mask(lambda rank: pieces[rank], lambda: table, None)
