"""The sample sort's graph: local runs, the two small rounds, and the all-to-all.

1. Every rank sorts its (flattened) chunk into a *run*, kept on its worker.
2. Round one: each rank sends a few regular samples; the driver chooses the
   splitters (:func:`._plan.choose_splitters`).
3. Round two: each rank sends where the splitters cut its run (``P + 1`` ints);
   now the result's counts are known, so the rest is an ordinary lazy graph.
4. The exchange: one slice task per (source, destination) pair, pinned to the
   source rank so that only the slice travels (``P²`` pieces, built like a
   resplit's); above ``$DNDASK_P2P_THRESHOLD`` pieces (64 ranks), the same
   pieces in two hops through ``sqrt(P)`` groups of ranks (``O(P^1.5)`` tasks).
   Each destination writes its inputs into its preallocated result in a few
   pinned steps (its own piece first, then a quarter of the rest at a time, so
   that only that much is in flight) and sorts it in place.
   Where relayouts go over MPI or shared memory (:func:`dndask._distribution.exchange_graph`),
   the exchange does too: a post per source rank, a barrier, a collect per destination,
   then each destination sorts its joined pieces in place (``3P + 1`` tasks).

Only the samples and the cuts pass through the driver.
"""

from __future__ import annotations

import operator

import dask.array as da
import distributed
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from .. import _distribution, _dndarray, _layout, _xp
from .._compat import List, SliceTask, Task, TaskRef, new_array
from .._graph import block_index, chunk_meta, meta_of
from . import _plan, _tasks

__all__ = [
    "METHODS",
    "carried_exchange",
    "check_method",
    "choose_method",
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


METHODS = (None, "tasks", "two-level", "shm", "mpi")


def check_method(method: object) -> None:
    """Reject an exchange ``method`` that is not a str or None (TypeError) or unknown."""
    if method is not None and not isinstance(method, str):
        raise TypeError(f"`method` must be a str or None, got {type(method).__name__}")
    if method not in METHODS:
        raise ValueError(
            f"`method` must be None, 'tasks', 'two-level', 'shm' or 'mpi', got {method!r}"
        )


def choose_method(method: str | None, ranks: int) -> str:
    """``method``, or for None: ``"two-level"`` above the p2p threshold of pieces, as resplit_.

    The choice among Dask's comms, once MPI and shared memory are ruled out
    (:func:`carried_exchange`).

    The all-to-all of ``P`` ranks is ``P²`` pieces, the count ``resplit_`` compares
    with ``$DNDASK_P2P_THRESHOLD`` (default 4096: 64 ranks) to hand over to Dask's
    p2p rechunk; above it the sort's exchange goes through groups of ranks.
    """
    check_method(method)
    if method not in (None, "shm", "mpi"):
        return method
    return "two-level" if ranks * ranks > _distribution.p2p_threshold() else "tasks"


def _one_hop(x_name: str, plans, piece_name: str, dsk: dict, hints: dict):
    """Slices of the runs, one per (source, destination): each destination's inputs."""
    inputs = []
    for d, pieces in enumerate(plans):
        mine, offset = [], 0
        for j, p in enumerate(pieces):
            key = (piece_name, d, j)
            run = TaskRef((x_name, p.src))
            dsk[key] = SliceTask(key, operator.getitem, run, slice(p.start, p.stop))
            hints[key] = p.src
            mine.append((key, p.src, ((0, p.stop - p.start, offset),)))
            offset += p.stop - p.start
        inputs.append(mine)
    return inputs


def _two_hops(x_name: str, plan: _plan.TwoLevel, name: str, dsk: dict, hints: dict):
    """The bundles, collects and forwards of a :class:`._plan.TwoLevel`; the inputs."""
    for i, (src, ranges) in enumerate(plan.bundles):
        key = (f"{name}-bundle", i)
        run = TaskRef((x_name, src))
        if len(ranges) == 1:
            dsk[key] = SliceTask(key, operator.getitem, run, slice(*ranges[0]))
        else:
            parts = tuple((0, lo, hi) for lo, hi in ranges)
            dsk[key] = Task(key, _tasks.join, List(run), parts)
        hints[key] = src
    for c, (rank, bundles) in enumerate(plan.collects):
        key = (f"{name}-collect", c)
        refs = List(*(TaskRef((f"{name}-bundle", i)) for i in bundles))
        dsk[key] = Task(key, _tasks.collect, refs)
        hints[key] = rank
    for f, (rank, c, parts) in enumerate(plan.forwards):
        key = (f"{name}-forward", f)
        dsk[key] = Task(key, _tasks.views, TaskRef((f"{name}-collect", c)), parts)
        hints[key] = rank
    return [
        [((f"{name}-forward", f), plan.forwards[f][0], segments) for f, segments in mine]
        for mine in plan.inputs
    ]


def _plan_array(plans) -> np.ndarray:
    """The pieces of every destination as one int64 array (quicker to tokenize than tuples)."""
    rows = [(d, *p) for d, pieces in enumerate(plans) for p in pieces]
    return np.array(rows, dtype=np.int64).reshape(-1, 4)


def exchange_graph(
    x: da.Array,
    plans,
    counts,
    *,
    descending: bool,
    sort: bool,
    prefix: str,
    method: str = "tasks",
    token: str | None = None,
):
    """The all-to-all as a Dask array: destination ``d`` joins the pieces ``plans[d]`` of ``x``.

    ``x`` is 1-D with one chunk per rank (the runs); ``plans[d]`` lists
    :class:`._plan.Piece`. ``method="tasks"``: each piece is a slice task run
    on its source rank (``P²`` of them); ``"two-level"``: the pieces travel in
    two hops through groups of ranks (:func:`._plan.plan_two_level`,
    ``O(P^1.5)`` tasks, the data move twice; ``plans`` may be that
    :class:`._plan.TwoLevel` already, with ``token`` naming it). Either way
    destination ``d`` writes its inputs into its preallocated result in a few
    steps (its own first, see :func:`._plan.fill_steps`), then (if ``sort``)
    sorts it in place. Returns the array and the rank of every task.
    """
    check_method(method)
    if token is None:
        token = tokenize(_plan_array(plans))
    name = f"{prefix}-{tokenize(x.name, token, descending, sort, method)}"
    device = _xp.device_of(chunk_meta(x)).device_type
    dsk: dict = {}
    hints: dict = {}
    if method == "two-level":
        if not isinstance(plans, _plan.TwoLevel):
            plans = _plan.plan_two_level(plans, len(plans))
        inputs = _two_hops(x.name, plans, name, dsk, hints)
    else:
        inputs = _one_hop(x.name, plans, f"{name}-piece", dsk, hints)
    ranks = len(inputs)
    for d, mine in enumerate(inputs):
        lengths = [sum(hi - lo for lo, hi, _ in segs) for _, _, segs in mine]
        steps = _plan.fill_steps([src for _, src, _ in mine], lengths, d, ranks)
        previous = None
        for s, step in enumerate(steps or [[]]):
            last = s == max(len(steps), 1) - 1
            key = (name, d) if last else (f"{name}-fill", d, s)
            dsk[key] = Task(
                key,
                _tasks.fill,
                None if previous is None else TaskRef(previous),
                int(counts[d]),
                x.dtype,
                List(*(TaskRef(mine[i][0]) for i in step)),
                tuple(mine[i][2] for i in step),
                (descending, sort) if last else None,
                device,
            )
            if not last:
                hints[key] = d
            previous = key
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[x])
    return new_array(graph, name, (tuple(counts),), meta_of(x.dtype, 1, like=x)), hints


def carried_exchange(
    runs: _dndarray.DNDarray,
    cuts: np.ndarray,
    *,
    descending: bool,
    prefix: str,
    method: str | None = None,
) -> _dndarray.DNDarray | None:
    """The sort's all-to-all over MPI or shared memory, each destination sorted; else None.

    The pieces the cuts give (:func:`._plan.exchange_moves`) are carried as a
    relayout's are (:func:`dndask._distribution.exchange_graph`: ``method`` None picks
    as relayouts do, ``"shm"``/``"mpi"`` demand it); each destination then sorts its
    joined pieces in place (and reverses them, descending). None where only Dask's
    comms can carry the runs (then :func:`exchange` builds the tasks' graph).
    """
    comm = runs.comm
    moves, counts = _plan.exchange_moves(cuts, descending)
    plan = _layout.plan_moves(runs.distribution, _layout.Distribution(0, counts, comm), moves)
    x = runs.to_dask()
    carried = _distribution.exchange_graph(
        x, plan, method, prefix=f"{prefix}-exchange", key=(tokenize(cuts), descending)
    )
    if carried is None:
        return None
    y, hints = carried
    name = f"{prefix}-{tokenize(y.name, descending)}"
    # a destination that keeps its whole run and gets nothing is the run itself (an alias)
    aliased = _distribution.aliased_targets(plan).tolist()
    dsk: dict = {}
    for d in range(comm.size):
        key = (name, d)
        dsk[key] = Task(key, _tasks.finish, TaskRef((y.name, d)), descending, aliased[d])
        hints[(y.name, d)] = d
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[y])
    z = new_array(graph, name, (tuple(counts),), meta_of(x.dtype, 1, like=x))
    out = _dndarray.from_dask(z, 0, comm, parents=(runs,))
    out._task_ranks.update(hints)
    return out


def exchange(
    runs: _dndarray.DNDarray,
    plans,
    counts,
    *,
    descending: bool,
    sort: bool,
    prefix: str,
    method: str | None = None,
    token: str | None = None,
):
    """:func:`exchange_graph` of the runs as a split-0 DNDarray, every task pinned to its rank.

    ``method`` None picks by :func:`choose_method`.
    """
    y, hints = exchange_graph(
        runs.to_dask(),
        plans,
        counts,
        descending=descending,
        sort=sort,
        prefix=prefix,
        method=choose_method(method, runs.comm.size),
        token=token,
    )
    out = _dndarray.from_dask(y, 0, runs.comm, parents=(runs,))
    out._task_ranks.update(hints)
    return out


def flat_sort(
    a: _dndarray.DNDarray, *, with_keys: bool, descending: bool, method: str | None = None
) -> _dndarray.DNDarray:
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
            runs,
            plans,
            result_counts,
            descending=descending,
            sort=False,
            prefix="sort",
            method=method,
        )
    futures = run_futures(runs)
    replies = submit(comm, _tasks.samples_of, futures, [(d, comm.size) for d in displs])
    values = np.concatenate([v for v, _, _ in replies])
    keys = np.concatenate([k for _, k, _ in replies])
    weights = np.concatenate([np.full(v.size, w) for v, _, w in replies])
    split_values, split_keys = _plan.choose_splitters(values, keys, weights, comm.size)
    cuts = np.stack(
        submit(comm, _tasks.cuts_of, futures, [(d, split_values, split_keys) for d in displs])
    )
    if method in (None, "shm", "mpi"):
        carried = carried_exchange(runs, cuts, descending=descending, prefix="sort", method=method)
        if carried is not None:
            return carried
    method = choose_method(method, comm.size)
    if method == "two-level":  # planned from the cuts with numpy, no P² pieces
        plans, result_counts = _plan.plan_two_level_cuts(cuts, descending)
        token = tokenize(cuts, descending)
    else:
        (plans, result_counts), token = _plan.plan_exchange(cuts, descending), None
    return exchange(
        runs,
        plans,
        result_counts,
        descending=descending,
        sort=True,
        prefix="sort",
        method=method,
        token=token,
    )


def field(runs: _dndarray.DNDarray, name: str, dtype, negate: bool = False) -> _dndarray.DNDarray:
    """One field of a record DNDarray, chunk by chunk where the chunks are."""
    x = runs.to_dask()
    y = x.map_blocks(_tasks.field, name, negate, dtype=dtype, meta=meta_of(dtype, 1))
    return _dndarray.from_dask(y, 0, runs.comm, parents=(runs,))
