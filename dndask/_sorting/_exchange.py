"""The sample sort's graph: local runs, the two small rounds, and the all-to-all.

1. Every rank sorts its (flattened) chunk into a *run*, kept on its worker.
2. Round one: each rank sends a few regular samples; the driver chooses the
   splitters (:func:`._plan.choose_splitters`).
3. Round two: each rank sends where the splitters cut its run (``P + 1`` ints);
   now the result's counts are known, so the rest is an ordinary lazy graph.
4. The exchange: one slice task per (source, destination) pair, pinned to the
   source rank so that only the slice travels (``P²`` pieces, built like a
   resplit's), and one merge task per destination rank, pinned there.

Only the samples and the cuts pass through the driver.
"""

from __future__ import annotations

import operator

import dask.array as da
import distributed
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from .. import _dndarray, _xp
from .._compat import SliceTask, TaskRef, new_array
from .._graph import block_index, meta_of
from . import _plan, _tasks

__all__ = [
    "chunk_offsets",
    "exchange",
    "exchange_graph",
    "field",
    "flat_sort",
    "local_runs",
    "run_dtype",
    "run_futures",
    "submit",
]


def chunk_offsets(a: _dndarray.DNDarray) -> list[tuple[int, ...]]:
    """Every rank's chunk's global start on every axis."""
    if a.split is None:
        return [(0,) * a.ndim] * a.comm.size
    displs = a.counts_displs()[1]
    return [tuple(d if ax == a.split else 0 for ax in range(a.ndim)) for d in displs]


def run_dtype(dtype, with_keys: bool) -> np.dtype:
    """The dtype of a run: the values', or records of value and key."""
    if not with_keys:
        return np.dtype(dtype)
    return _tasks.records(np.empty(0, dtype), np.empty(0, np.int64)).dtype


def local_runs(a: _dndarray.DNDarray, fn, dtype, *args, counts=None) -> _dndarray.DNDarray:
    """A 1-D split-0 DNDarray, chunk ``r`` = ``fn(chunk_r, offsets_r, a.shape, *args)`` (lazy).

    ``fn`` returns the rank's flattened values in some order (a *run*), of
    ``counts[r]`` values (default: all of the chunk's).
    """
    x = a.to_dask()
    if counts is None:
        counts = [int(np.prod(row)) for row in a.lshape_map.tolist()]
    name = f"run-{tokenize(x.name, fn, args)}"
    dsk = {
        (name, r): (fn, (x.name, *block_index(a.split, a.ndim, r)), off, a.shape, *args)
        for r, off in enumerate(chunk_offsets(a))
    }
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[x])
    # plain runs stay in the chunks' namespace (device runs); records are numpy's
    meta = meta_of(dtype, 1) if np.dtype(dtype).names else meta_of(dtype, 1, like=x)
    y = new_array(graph, name, (tuple(counts),), meta)
    return _dndarray.from_dask(y, 0, a.comm, parents=(a,))


def run_futures(runs: _dndarray.DNDarray) -> list[distributed.Future]:
    """The futures of a persisted 1-D DNDarray's chunks, in rank order."""
    by_key = {f.key: f for f in distributed.futures_of(runs.to_dask())}
    return [by_key[key] for key in runs._chunk_keys()]


def submit(comm, fn, futures, per_rank_args) -> list:
    """``fn(chunk_r, *per_rank_args[r])`` on every rank's worker; the results, gathered."""
    client = comm.client
    calls = [
        client.submit(fn, f, *args, workers=[w], allow_other_workers=False, pure=False)
        for f, w, args in zip(futures, comm.workers, per_rank_args, strict=True)
    ]
    return client.gather(calls)


def exchange_graph(x: da.Array, plans, counts, *, descending: bool, sort: bool, prefix: str):
    """The all-to-all as a Dask array: destination ``d`` joins the pieces ``plans[d]`` of ``x``.

    ``x`` is 1-D with one chunk per rank (the runs); ``plans[d]`` lists
    :class:`._plan.Piece`. Each piece is a slice task to run on its source
    rank, joined (and, if ``sort``, merged in order) by a task of rank ``d``.
    Returns the array and the rank of every slice task.
    """
    name = f"{prefix}-{tokenize(x.name, plans, descending, sort)}"
    device = _xp.device_of(x._meta).device_type
    piece_name = f"{name}-piece"
    dsk: dict = {}
    hints: dict = {}
    for d, pieces in enumerate(plans):
        keys = []
        for j, p in enumerate(pieces):
            key = (piece_name, d, j)
            src = TaskRef((x.name, p.src))
            dsk[key] = SliceTask(key, operator.getitem, src, slice(p.start, p.stop))
            hints[key] = p.src
            keys.append(key)
        dsk[(name, d)] = (_tasks.merge, keys, descending, sort, x.dtype, device)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[x])
    return new_array(graph, name, (tuple(counts),), meta_of(x.dtype, 1, like=x)), hints


def exchange(runs: _dndarray.DNDarray, plans, counts, *, descending: bool, sort: bool, prefix: str):
    """:func:`exchange_graph` of the runs as a split-0 DNDarray, slices pinned to their sources."""
    y, hints = exchange_graph(
        runs.to_dask(), plans, counts, descending=descending, sort=sort, prefix=prefix
    )
    out = _dndarray.from_dask(y, 0, runs.comm, parents=(runs,))
    out._task_ranks.update(hints)
    return out


def flat_sort(a: _dndarray.DNDarray, *, with_keys: bool, descending: bool) -> _dndarray.DNDarray:
    """Every element of the split array ``a`` (flattened) sorted over all ranks: a sample sort.

    A 1-D split-0 result whose counts follow the data (each rank keeps what
    falls between its splitters). With ``with_keys`` its chunks are records
    carrying each value's global flat index (see :mod:`._tasks`).
    """
    dtype = run_dtype(a.dtype, with_keys)
    runs = local_runs(a, _tasks.local_run, dtype, with_keys, descending).persist(wait=True)
    comm = runs.comm
    counts, displs = runs.counts_displs()
    if comm.size == 1 or runs.size == 0:
        # nothing to exchange: each run (all of them empty, or the only one) is its result
        cuts = np.zeros((comm.size, comm.size + 1), dtype=np.int64)
        cuts[:, 1:] = np.asarray(counts)[:, None]
        plans, result_counts = _plan.plan_exchange(cuts, descending)
        return exchange(
            runs, plans, result_counts, descending=descending, sort=False, prefix="sort"
        )
    futures = run_futures(runs)
    replies = submit(comm, _tasks.samples_of, futures, [(d, comm.size) for d in displs])
    values = np.concatenate([v for v, _, _ in replies])
    keys = np.concatenate([k for _, k, _ in replies])
    weights = np.concatenate([np.full(v.size, w) for v, _, w in replies])
    split_values, split_keys = _plan.choose_splitters(values, keys, weights, comm.size)
    cuts = submit(comm, _tasks.cuts_of, futures, [(d, split_values, split_keys) for d in displs])
    plans, result_counts = _plan.plan_exchange(np.stack(cuts), descending)
    return exchange(runs, plans, result_counts, descending=descending, sort=True, prefix="sort")


def field(runs: _dndarray.DNDarray, name: str, dtype, negate: bool = False) -> _dndarray.DNDarray:
    """One field of a record DNDarray, chunk by chunk where the chunks are."""
    x = runs.to_dask()
    y = x.map_blocks(_tasks.field, name, negate, dtype=dtype, meta=meta_of(dtype, 1))
    return _dndarray.from_dask(y, 0, runs.comm, parents=(runs,))
