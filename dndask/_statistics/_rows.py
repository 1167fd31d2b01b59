"""Graph pieces: one small row per rank, tree-summed or fetched as metadata.

Histograms and counts are made as one row per non-empty rank (each task
pinned to its rank) and summed by Dask. :func:`small` fetches metadata to the
driver: the global extrema (two values per rank) and the zero-weight check of
:func:`dndask.average` (one bool).
"""

from __future__ import annotations

import dask.array as da
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from .. import _compute, _dndarray, _xp
from .._compat import new_array
from .._graph import block_index, meta_of


def _row(fn, *chunks):
    """``fn``'s row of one rank, in the namespace of its first chunk (device chunks stay)."""
    return _xp.namespace_of(chunks[0]).asarray(fn(*chunks))[None, ...]


def _busy_ranks(x: da.Array, split) -> list[int]:
    """Ranks whose chunk holds values (rank 0 if none does: it then reports zeros)."""
    if x.size == 0 or split is None:
        return [0]
    return [r for r, c in enumerate(x.chunks[split]) if c]


def per_rank_rows(
    prefix: str, fn, arrays: list, split, width: int, dtype, params=(), host: bool = False
) -> tuple:
    """A Dask array whose row ``i`` is ``fn`` of the ``i``-th non-empty rank's chunks.

    ``arrays`` are aligned Dask arrays (one chunk per rank along ``split``);
    ``params`` are what ``fn`` captured (for the task names). Rows are
    ``width`` long, in the chunks' namespace (device rows for device chunks), or
    copied to host explicitly on their rank's worker if ``host`` (metadata the driver
    reads). Returns the array and the ranks of its tasks (each runs on its rank).
    """
    ranks = _busy_ranks(arrays[0], split)
    token = tokenize(prefix, [x.name for x in arrays], split, width, np.dtype(dtype).str, params)
    name = f"{prefix}-{token}"
    dsk, task_ranks = {}, {}
    for i, r in enumerate(ranks):
        keys = [(x.name, *block_index(split, x.ndim, r)) for x in arrays]
        dsk[(name, i, 0)] = (_host_row if host else _row, fn, *keys)
        task_ranks[(name, i, 0)] = r
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=arrays)
    chunks = ((1,) * len(ranks), (width,))
    meta = meta_of(dtype, 2) if host else meta_of(dtype, 2, like=arrays[0])
    return new_array(graph, name, chunks, meta), task_ranks


def _host_row(fn, *chunks) -> np.ndarray:
    return np.asarray(_xp.to_host(_row(fn, *chunks)))


def summed(rows: da.Array, task_ranks: dict, dtype, comm, parents) -> _dndarray.DNDarray:
    """The tree sum of per-rank rows as a ``split=None`` DNDarray."""
    total = rows.sum(axis=0, dtype=dtype) if rows.shape[0] > 1 else rows[0]
    out = _dndarray.from_dask(total, None, comm, parents=parents)
    out._task_ranks.update(task_ranks)
    return out


def small(x: da.Array, owner: _dndarray.DNDarray, task_ranks: dict) -> np.ndarray:
    """Compute a small Dask array (metadata) made from ``owner`` in the driver.

    ``owner``'s tasks and the ones in ``task_ranks`` run on their ranks.
    """
    table = owner._placement()
    table.update({k: owner.comm.workers[r] for k, r in task_ranks.items()})
    return _compute.compute(x, owner.comm.client, table, owner.comm)


def _extrema_of(chunk):
    xp = _xp.namespace_of(chunk)
    return xp.stack([chunk.min(), chunk.max()]).astype(chunk.dtype)


def extrema(a: _dndarray.DNDarray):
    """Global ``(min, max)`` as numpy scalars of ``a.dtype`` (NaN propagates); None if empty.

    Two values per non-empty rank travel to the driver.
    """
    if a.size == 0:
        return None
    rows, task_ranks = per_rank_rows(
        "extrema", _extrema_of, [a.to_dask()], a.split, 2, a.dtype, host=True
    )
    table = small(rows, a, task_ranks)
    return np.min(table[:, 0]), np.max(table[:, 1])
