"""Execution of layout plans: :func:`relayout`, every change of distribution as a Dask graph.

The plans come from :func:`dndask._layout.plan_relayout`; this module only turns them into
graphs. Each output chunk is assembled from slices of input chunks, so data
moves worker to worker when the graph runs, never through the driver. A
piece that is a whole input chunk is referenced directly (no copy task), and
an output made of one such piece is an alias of it.
"""

from __future__ import annotations

import logging
import operator
import os
import threading
import time
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import dask.array as da
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from . import _hosts, _launch, _layout, _mpi, _mpi_transport, _output_cache, _transport, _xp
from ._compat import (
    Alias,
    List,
    SliceTask,
    Task,
    TaskRef,
    keyed,
    new_array,
    p2p_rechunk,
    scheduler_workers,
)
from ._env import nonnegative_int
from ._graph import block_index, chunk_meta, empty, meta_of

# Above this many pieces, resplit_ hands the work to Dask's p2p rechunk.
_P2P_ENV = "DNDASK_P2P_THRESHOLD"
_P2P_DEFAULT = 64 * 64
# The transport of a relayout whose ``method`` is None; bytes /dev/shm must keep free.
_METHOD_ENV = "DNDASK_RELAYOUT"
_RESERVE_ENV = "DNDASK_SHM_RESERVE"
_RESERVE_DEFAULT = 64 * 2**20
METHODS = ("mpi", "shm", "tasks", "p2p")

log = logging.getLogger("dndask")


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
    x = keyed(x)  # the pieces read x's keys by its name
    src, dst, ndim = plan.src, plan.dst, x.ndim
    out_chunks = dst.chunks(plan.shape)
    name = f"{prefix}-{tokenize(x.name, *plan_key(plan))}"
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
            lshape = _lshape(dst, out_chunks, r)
            dsk[out_key] = (empty, lshape, x.dtype, meta_of(x.dtype, ndim, like=x))
        elif len(keys) == 1:
            dsk[out_key] = keys[0]
        else:
            dsk[out_key] = (_concat, keys, plan.axis)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[x])
    return new_array(graph, name, out_chunks, x), task_ranks


def _lshape(dist: _layout.Distribution, chunks, rank: int) -> list[int]:
    return [c[rank] if a == dist.split else c[0] for a, c in enumerate(chunks)]


def plan_key(plan: _layout.RelayoutPlan) -> tuple:
    """What ``plan`` is a function of (its shape, splits and counts): what its graph's name hashes.

    Hashing these ``O(P)`` values, not the ``P²`` pieces, names a relayout's graph.
    """
    src, dst = plan.src, plan.dst
    return plan.shape, src.split, src.counts, dst.split, dst.counts


class _Columns(Sequence):
    """A list of tuples kept as numpy columns: the compact argument of a graph task.

    Dask walks a task's list and tuple arguments item by item (looking for references to
    other tasks) and pickles every item; it leaves this alone. It iterates, indexes and
    compares as the list it stands for. Subclasses name their constructor's arguments in
    ``_fields`` and give ``__len__``, ``__iter__`` and ``_entry`` (item ``i`` of ``[0, len)``).
    """

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def _entry(self, i: int) -> tuple:
        raise NotImplementedError

    def __getitem__(self, i):
        if isinstance(i, slice):
            return list(self)[i]
        n, i = len(self), operator.index(i)
        if not -n <= i < n:
            raise IndexError(f"index {i} out of range for {n} entries")
        return self._entry(i % n)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"

    def __reduce__(self):
        return type(self), tuple(getattr(self, f) for f in self._fields)

    def __dask_tokenize__(self) -> str:
        return tokenize(type(self).__name__, *self.__reduce__()[1])


class Outgoing(_Columns):
    """A post's list of ``(dst, index)`` pieces (``index`` None: the whole chunk), as columns.

    Iterates as the list :func:`dndask._transport.post` and :func:`dndask._mpi_transport.post`
    read: piece ``i`` is rows ``start[i]:stop[i]`` along ``sliced`` of the posting rank's
    chunk, for rank ``dst[i]``. In a graph it is four numpy arrays, not ``P`` tuples of slices.
    With a ``pad`` column (the shm transport's) the entries are ``(dst, index, pad)``.

    >>> whole = np.array([False, True])
    >>> out = Outgoing(np.array([1, 2]), np.array([0, 2]), np.array([2, 3]), whole, 2, 1)
    >>> list(out), out[-1]
    ([(1, (slice(None, None, None), slice(0, 2, None))), (2, None)], (2, None))
    """

    __slots__ = ("dst", "ndim", "pad", "sliced", "start", "stop", "whole")
    _fields = ("dst", "start", "stop", "whole", "ndim", "sliced", "pad")

    def __init__(self, dst, start, stop, whole, ndim: int, sliced: int, pad=None) -> None:
        self.dst, self.start, self.stop, self.whole = dst, start, stop, whole
        self.ndim, self.sliced, self.pad = ndim, sliced, pad

    def __len__(self) -> int:
        return len(self.dst)

    def __iter__(self):
        entries = self._entries()
        if self.pad is None:
            return entries
        return ((*e, pad) for e, pad in zip(entries, self.pad.tolist(), strict=True))

    def _entries(self):
        ndim, sliced = self.ndim, self.sliced
        for r, lo, hi, whole in zip(
            self.dst.tolist(),
            self.start.tolist(),
            self.stop.tolist(),
            self.whole.tolist(),
            strict=True,
        ):
            yield r, None if whole else _layout.along(ndim, sliced, lo, hi)

    def _entry(self, i: int) -> tuple:
        lo, hi = int(self.start[i]), int(self.stop[i])
        index = None if self.whole[i] else _layout.along(self.ndim, self.sliced, lo, hi)
        if self.pad is None:
            return int(self.dst[i]), index
        return int(self.dst[i]), index, int(self.pad[i])


class CollectSpec(_Columns):
    """A collect's ``spec`` for rank ``dst``, as columns: its pieces in order along ``axis``.

    Iterates as the list :func:`dndask._transport.collect` and
    :func:`dndask._mpi_transport.collect` read: ``("kept", i, index, rows)`` for a piece
    of ``dst``'s own source chunk (the ``i``-th of the collect's kept chunks; ``index``
    slices it along ``sliced``, None: whole), else ``(transport, src, dst, shape)``, with
    ``pad`` appended where there is a ``pad`` column (the shm transport's).
    ``lshapes`` is the ``(source ranks, ndim)`` table of the source chunks' shapes: a
    piece's shape is its source's with rows ``start:stop`` along ``sliced``.

    >>> spec = CollectSpec("shm", 1, np.array([0, 1]), np.array([2, 2]), np.array([3, 3]),
    ...                    np.array([0, 0], bool), np.array([[2, 4], [2, 4]]), 0, 1)
    >>> spec[0], spec[1]
    (('shm', 0, 1, (2, 1)), ('kept', 0, (slice(None, None, None), slice(2, 3, None)), 2))
    """

    __slots__ = (
        "axis",
        "dst",
        "lshapes",
        "pad",
        "sliced",
        "src",
        "start",
        "stop",
        "transport",
        "whole",
    )
    _fields = (
        "transport",
        "dst",
        "src",
        "start",
        "stop",
        "whole",
        "lshapes",
        "axis",
        "sliced",
        "pad",
    )

    def __init__(
        self, transport, dst, src, start, stop, whole, lshapes, axis, sliced, pad=None
    ) -> None:
        self.transport, self.dst = transport, dst
        self.src, self.start, self.stop, self.whole = src, start, stop, whole
        self.lshapes, self.axis, self.sliced, self.pad = lshapes, axis, sliced, pad

    def __len__(self) -> int:
        return len(self.src)

    def __iter__(self):
        lshapes = self.lshapes.tolist()
        pads = [None] * len(self) if self.pad is None else self.pad.tolist()
        kept = 0
        for s, lo, hi, whole, pad in zip(
            self.src.tolist(),
            self.start.tolist(),
            self.stop.tolist(),
            self.whole.tolist(),
            pads,
            strict=True,
        ):
            yield self._piece(s, lo, hi, whole, lshapes[s], kept, pad)
            kept += s == self.dst

    def _entry(self, i: int) -> tuple:
        s = int(self.src[i])
        kept = int(np.count_nonzero(self.src[:i] == self.dst))
        lo, hi, whole = int(self.start[i]), int(self.stop[i]), bool(self.whole[i])
        pad = None if self.pad is None else int(self.pad[i])
        return self._piece(s, lo, hi, whole, self.lshapes[s].tolist(), kept, pad)

    def _piece(
        self, s: int, lo: int, hi: int, whole: bool, lshape: list, kept: int, pad: int | None
    ) -> tuple:
        ndim, sliced = len(lshape), self.sliced
        shape = list(lshape)
        if ndim:
            shape[sliced] = hi - lo
        if s == self.dst:
            index = None if whole else _layout.along(ndim, sliced, lo, hi)
            return "kept", kept, index, shape[self.axis]
        if pad is None:
            return self.transport, s, self.dst, tuple(shape)
        return self.transport, s, self.dst, tuple(shape), pad


def page_offsets(plan: _layout.RelayoutPlan, itemsize: int, copy_below: int = 0) -> np.ndarray:
    """Per piece of ``plan.table``: where it starts in its target's output, in bytes modulo a page.

    :data:`dndask._transport.COPIED` (-1) for the pieces of an output that are not
    consecutive byte ranges (an axis before the plan's has length > 1), or that holds at
    most ``copy_below`` bytes (:func:`dndask._transport.copy_limit`): such a collect
    copies, it does not map (:func:`dndask._transport.mapped_output`), so their posts
    write them into the pool where they fit.

    >>> from dndask._comm import Comm
    >>> two = Comm(["tcp://a:1", "tcp://b:1"])
    >>> src, dst = _layout.Distribution(0, (2, 3), two), _layout.Distribution(1, (512, 512), two)
    >>> page_offsets(_layout.plan_pieces((5, 1024), src, dst), 4).tolist()  # 2 KiB rows
    [0, 0, 0, 0]
    >>> page_offsets(_layout.plan_pieces((5, 1024), src, dst), 2).tolist()  # 1 KiB rows
    [0, 2048, 0, 2048]
    >>> rows = _layout.Distribution(0, (2, 2), two)  # pieces side by side: copied
    >>> page_offsets(_layout.plan_pieces((4, 1024), dst, rows), 4).tolist()
    [-1, -1, -1, -1]
    >>> page_offsets(_layout.plan_pieces((5, 1024), src, dst), 4, copy_below=10240).tolist()
    [-1, -1, -1, -1]
    """
    t, axis = plan.table, plan.axis
    if not len(t.src):
        return np.zeros(0, dtype=np.int64)
    dst = plan.dst.lshape_map(plan.shape)[: len(t.bounds) - 1]
    src = plan.src.lshape_map(plan.shape)
    # each piece's extent along the axis its output stacks the pieces on
    rows = t.stop - t.start if axis == plan.sliced else src[t.src, axis]
    before = np.cumsum(rows) - rows  # rows of every earlier piece, then of earlier targets
    first = np.minimum(t.bounds[:-1], len(before) - 1)  # a target without pieces repeats 0 times
    before -= np.repeat(before[first], np.diff(t.bounds))
    row_bytes = np.prod(dst[:, axis + 1 :], axis=1, dtype=np.int64) * itemsize
    mapped = np.all(dst[:, :axis] == 1, axis=1) & (np.prod(dst, axis=1) * itemsize > copy_below)
    pads = before * row_bytes[t.dst] % _transport.PAGE
    return np.where(mapped[t.dst], pads, _transport.COPIED)


class SteadyRuns:
    """Which shared-memory relayouts copy their outputs: those of a steady run (driver side).

    A collect that copies its output (its pieces pooled by the posts, the output on a
    buffer of its worker's output cache, :mod:`dndask._output_cache`) reuses memory
    where the relayout ran before, and pays for new memory on both sides where it did
    not: measured on the cluster of docs/performance.md, ``resplit_`` 0 -> 1 at 128 MiB
    on a fresh cluster took 197 ms the first time it copied against 139 ms mapped, and
    97 against 127 the next time (medians of 5). So a relayout copies its outputs of at most
    :func:`dndask._transport.copy_limit` bytes only when a relayout with the same outputs
    (sizes and ranks) was planned within the last :data:`dndask._output_cache.IDLE`
    seconds, as long as the workers keep their free memory; otherwise its outputs are
    mapped where they can be, as a one-off relayout's should.
    """

    def __init__(self, window: float = _output_cache.IDLE, size: int = 256) -> None:
        self.window, self.size = window, size
        self._seen: dict[tuple, float] = {}  # outputs -> when last planned
        self._lock = threading.Lock()

    def copy_below(self, plan: _layout.RelayoutPlan, itemsize: int, tag: str) -> int:
        """The ``copy_below`` of :func:`page_offsets` for ``plan`` now (0: map where it can)."""
        limit = _transport.copy_limit()
        if not limit:
            return 0
        sizes = np.prod(plan.dst.lshape_map(plan.shape), axis=1) * itemsize
        outputs = (tag, plan.dst.comm, tuple(sizes.tolist()))  # a comm is hashable, by its ranks
        now = time.monotonic()
        with self._lock:
            last = self._seen.pop(outputs, None)
            self._seen[outputs] = now  # the most recent last
            while len(self._seen) > self.size:
                del self._seen[next(iter(self._seen))]
        return limit if last is not None and now - last < self.window else 0


STEADY = SteadyRuns()  # the driver's record (graphs are built in the driver)


def build_shm(
    x: da.Array, plan: _layout.RelayoutPlan, tag: str, prefix: str = "relayout", key: tuple = ()
):
    """The shared-memory graph of ``plan``: a post per sending rank, a barrier, a collect per rank.

    At most ``2P + 1`` tasks (:mod:`dndask._transport`). A piece that stays on its rank
    reaches the collect by reference to its source chunk; an output that is one whole
    kept chunk is an alias of it, as in :func:`build`. Returns the array and the ranks
    of the posts and the barrier (the collects are the output chunks: placed as such).
    ``key``: what else names the graph, for plans not derived from their layouts
    (:func:`dndask._layout.plan_moves`).
    """
    return build_exchange(x, plan, tag, "shm", prefix, key)


def build_mpi(
    x: da.Array, plan: _layout.RelayoutPlan, tag: str, prefix: str = "relayout", key: tuple = ()
):
    """The MPI graph of ``plan`` (:mod:`dndask._mpi_transport`): :func:`build_shm`'s shape.

    ``tag`` starts with :data:`dndask._transport.MPI_MARK`.
    """
    return build_exchange(x, plan, tag, "mpi", prefix, key)


def aliased_targets(plan: _layout.RelayoutPlan) -> np.ndarray:
    """Per target of ``plan``: whether its output is one whole source chunk of its own rank.

    :func:`build_exchange` makes such an output an alias of that chunk (no task, no copy),
    so whoever changes the output in place must copy it first.

    >>> from dndask._comm import Comm
    >>> two = Comm(["tcp://a:1", "tcp://b:1"])
    >>> src = _layout.Distribution(0, (2, 3), two)
    >>> moved = _layout.plan_pieces((5,), src, _layout.Distribution(0, (1, 4), two))
    >>> kept = _layout.plan_pieces((5,), src, src)
    >>> aliased_targets(moved).tolist(), aliased_targets(kept).tolist()
    ([False, False], [True, True])
    """
    t = plan.table
    targets = len(t.bounds) - 1
    if not len(t.src):
        return np.zeros(targets, dtype=bool)
    first = np.minimum(t.bounds[:-1], len(t.src) - 1)  # a target without pieces: masked below
    return (np.diff(t.bounds) == 1) & (t.src[first] == np.arange(targets)) & t.whole[first]


def _block_keys(name: str, split: int | None, ndim: int, ranks: int) -> list[tuple]:
    """The key of every rank's chunk of array ``name`` (:func:`block_index`'s), in rank order."""
    return [(name, *block_index(split, ndim, r)) for r in range(ranks)]


def _outgoing(
    plan: _layout.RelayoutPlan, sends: np.ndarray, pads: np.ndarray | None = None
) -> dict[int, Outgoing]:
    """Each sending rank's post list: its pieces of the mask ``sends``, in target order.

    ``pads``: the :func:`page_offsets` of the table's pieces (the shm transport's), else None.
    """
    t = plan.table
    rows = np.flatnonzero(sends)
    src_of = t.src[rows]
    # group by source, keeping target order: numpy's stable sort of 16-bit ints is a radix sort
    keys = src_of.astype(np.uint16) if plan.src.size <= 1 << 16 else src_of
    rows = rows[np.argsort(keys, kind="stable")]
    cols = t.dst[rows], t.start[rows], t.stop[rows], t.whole[rows]
    pad = None if pads is None else pads[rows]
    bounds = np.zeros(plan.src.size + 1, dtype=np.int64)
    np.cumsum(np.bincount(src_of, minlength=plan.src.size), out=bounds[1:])
    ndim, sliced = len(plan.shape), plan.sliced
    return {
        s: Outgoing(*(c[lo:hi] for c in cols), ndim, sliced, None if pad is None else pad[lo:hi])
        for s, (lo, hi) in enumerate(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))
        if hi > lo
    }


def build_exchange(
    x: da.Array,
    plan: _layout.RelayoutPlan,
    tag: str,
    transport: str,
    prefix: str = "relayout",
    key: tuple = (),
):
    """The post / barrier / collect graph of ``plan`` over ``transport``: ``"shm"`` or ``"mpi"``.

    ``key`` is hashed into the names with :func:`plan_key` (for plans whose pieces their
    layouts do not determine).
    """
    if plan.is_identity and not key:
        return x, {}
    src, dst, ndim = plan.src, plan.dst, x.ndim
    out_chunks = dst.chunks(plan.shape)
    copy_below = STEADY.copy_below(plan, x.dtype.itemsize, tag) if transport == "shm" else 0
    # the pads are in the posts' and collects' arguments: graphs that differ in them differ
    # in their names, or a collect of one could read the files a post of the other wrote
    token = tokenize(x.name, *plan_key(plan), transport, copy_below, *key)
    name = f"{prefix}-{token}"
    post_name = f"{_transport.POST_PREFIX}{tag}-{token}"
    barrier_key = f"{_transport.BARRIER_PREFIX}{tag}-{token}"
    if transport == "mpi":
        base = f"{tag}-{token}"
        post_fn, collect_fn = _mpi_transport.post, _mpi_transport.collect
    else:
        base = _transport.segment_base(tag, token)
        post_fn, collect_fn = _transport.post, _transport.collect

    src_keys = _block_keys(x.name, src.split, ndim, src.size)
    t = plan.table
    kept_rows = t.src == t.dst
    sends = ~kept_rows & (t.elements > 0)  # the pieces that go through a post
    pads = page_offsets(plan, x.dtype.itemsize, copy_below) if transport == "shm" else None
    dsk: dict = {}
    task_ranks: dict = {}
    # the posts: one per source rank that sends, its pieces in target order
    outgoing = _outgoing(plan, sends, pads)
    for s, out in outgoing.items():
        key = (post_name, s)  # never fused: it runs on the source's rank
        dsk[key] = SliceTask(key, post_fn, TaskRef(src_keys[s]), base, s, out)
        task_ranks[key] = s
    senders = list(outgoing)
    if senders:
        posts = [TaskRef((post_name, s)) for s in senders]
        dsk[barrier_key] = SliceTask(barrier_key, _transport.barrier, *posts)
        task_ranks[barrier_key] = 0
    # the collects: one per target rank, its pieces as columns
    targets = len(t.bounds) - 1
    kept_counts = np.bincount(t.dst[kept_rows], minlength=targets).tolist()
    receives = (np.bincount(t.dst[sends], minlength=targets) > 0).tolist()
    lshapes = src.lshape_map(plan.shape)
    bounds = t.bounds.tolist()
    aliased = aliased_targets(plan).tolist()
    for r, out_key in enumerate(_block_keys(name, dst.split, ndim, targets)):
        lo, hi = bounds[r], bounds[r + 1]
        if lo == hi:
            lshape = _lshape(dst, out_chunks, r)
            dsk[out_key] = Task(out_key, empty, lshape, x.dtype, meta_of(x.dtype, ndim, like=x))
            continue
        if aliased[r]:
            dsk[out_key] = Alias(out_key, src_keys[r])  # the whole chunk stays
            continue
        cut = slice(lo, hi)
        spec = CollectSpec(
            transport,
            r,
            t.src[cut],
            t.start[cut],
            t.stop[cut],
            t.whole[cut],
            lshapes,
            plan.axis,
            plan.sliced,
            None if pads is None else pads[cut],
        )
        kept = [TaskRef(src_keys[r])] * kept_counts[r]
        generations = TaskRef(barrier_key) if receives[r] else None
        dsk[out_key] = Task(
            out_key,
            collect_fn,
            generations,
            List(*kept),
            spec,
            _lshape(dst, out_chunks, r),
            x.dtype,
            plan.axis,
            base,
        )
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
    # the pieces index x's chunks along ``split``: a redistribution between two chunk grids
    src = _layout.Distribution(split, have, _Chunks(len(have)))
    dst = _layout.Distribution(split, tuple(counts), _Chunks(len(counts)))
    return build(x, _layout.plan_pieces(shape, src, dst), pinned=False)[0]


def check_method(method: object) -> None:
    """Reject an unknown relayout ``method``."""
    if method is not None and method not in METHODS:
        raise ValueError(f"`method` must be None, 'mpi', 'shm', 'tasks' or 'p2p', got {method!r}")


def default_method() -> str | None:
    """``$DNDASK_RELAYOUT`` (a method, or unset/empty for dndask's choice)."""
    raw = os.environ.get(_METHOD_ENV, "")
    if raw and raw not in METHODS:
        raise ValueError(f"`{_METHOD_ENV}` must be 'mpi', 'shm', 'tasks' or 'p2p', got {raw!r}")
    return raw or None


def shm_reserve() -> int:
    """Bytes of ``/dev/shm`` a relayout leaves free (``$DNDASK_SHM_RESERVE``, 64 MiB)."""
    return nonnegative_int(_RESERVE_ENV, _RESERVE_DEFAULT)


def p2p_threshold() -> int:
    """Largest number of pieces a resplit builds as its own task graph."""
    return nonnegative_int(_P2P_ENV, _P2P_DEFAULT)


class RelayoutReport(NamedTuple):
    """What a relayout does: its transport and the bytes each pair of ranks moves.

    ``transport`` is ``"mpi"``, ``"shm"``, ``"tasks"``, ``"p2p"`` or ``"none"`` (the same
    chunk grid: nothing moves); ``pairs`` maps ``(source rank, destination rank)`` to bytes, for the
    pairs that move any (``None`` for ``"p2p"``: Dask plans that move itself): a
    :class:`PairBytes` (a dict for ``"none"``).
    """

    transport: str
    pairs: Mapping | None

    @property
    def moved(self) -> int | None:
        """Bytes that change rank in all."""
        if self.pairs is None:
            return None
        if isinstance(self.pairs, PairBytes):
            return self.pairs.total
        return sum(self.pairs.values())


class PairBytes(Mapping):
    """``(src, dst) -> bytes`` as three columns, one row per pair; a dict once a pair is read.

    The ``P²`` pairs of a change of split stay three numpy arrays until someone reads the
    mapping (a report, a debug log); :attr:`total` sums them without the dict.

    >>> pairs = PairBytes(np.array([0, 1]), np.array([1, 0]), np.array([8, 16]))
    >>> pairs[(1, 0)], pairs.total, pairs == {(0, 1): 8, (1, 0): 16}
    (16, 24, True)
    """

    __slots__ = ("_bytes", "_dict", "_dst", "_src")

    def __init__(self, src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray) -> None:
        self._src, self._dst, self._bytes = src, dst, nbytes
        self._dict: dict | None = None

    @property
    def total(self) -> int:
        """Bytes of every pair together."""
        return int(self._bytes.sum())

    def _pairs(self) -> dict:
        if self._dict is None:
            keys = zip(self._src.tolist(), self._dst.tolist(), strict=True)
            self._dict = dict(zip(keys, self._bytes.tolist(), strict=True))
        return self._dict

    def __getitem__(self, pair):
        return self._pairs()[pair]

    def __iter__(self):
        return iter(self._pairs())

    def __len__(self) -> int:
        return len(self._src)

    def __repr__(self) -> str:
        return repr(self._pairs())


def pair_bytes(plan: _layout.RelayoutPlan, itemsize: int) -> PairBytes:
    """``(src, dst) -> bytes`` of the pieces of ``plan`` that change rank (one piece per pair)."""
    t = plan.table
    moves = (t.src != t.dst) & (t.elements > 0)
    return PairBytes(t.src[moves], t.dst[moves], t.elements[moves] * itemsize)


def _chunk_blocker(x: da.Array) -> str | None:
    """Why ``x``'s chunks cannot go by shm or MPI (they move raw numpy bytes), or None."""
    meta = chunk_meta(x)
    if type(meta) is not np.ndarray:
        return f"numpy chunks, got {type(meta).__name__} chunks"
    if x.dtype.hasobject:
        return f"a dtype without Python objects, got {x.dtype}"
    return None


_names: dict[str, object] = {}  # worker address -> its name (fixed for the address's life)


def worker_names(client, workers: Sequence[str]) -> list:
    """The Dask names of ``workers`` (asked of the scheduler once per address)."""
    if any(w not in _names for w in workers):
        for address, info in scheduler_workers(client).items():
            _names[address] = info.get("name")
    return [_names.get(w) for w in workers]


def _mpi_blocker(x: da.Array, comm) -> str | None:
    """Why the MPI transport cannot carry ``x`` between ``comm``'s ranks, or None."""
    blocker = _chunk_blocker(x)
    if blocker is not None or _mpi.LAUNCH is None:
        return blocker or _launch.mpi_transport_blocker(None, "", [])
    workers = getattr(comm, "workers", None)
    if not workers:
        return "a comm of workers"
    try:
        address = comm.client.scheduler.address
        names = worker_names(comm.client, workers)
    except Exception as exc:  # no cluster to ask
        return f"workers that report their names ({exc})"
    return _launch.mpi_transport_blocker(_mpi.LAUNCH, address, names)


def _shm_blocker(x: da.Array, comm) -> str | None:
    """Why the shared-memory transport cannot carry ``x`` between ``comm``'s ranks, or None."""
    blocker = _chunk_blocker(x)
    if blocker is not None:
        return blocker
    workers = getattr(comm, "workers", None)
    if not workers:
        return "a comm of workers"
    try:
        same = _hosts.shared_host(comm.client, workers)
    except Exception as exc:  # no cluster to ask
        return f"workers that report their host ({exc})"
    return None if same else "every rank on one host"


def _transport_of(
    x: da.Array, src: _layout.Distribution, dst: _layout.Distribution, method: str | None
) -> str:
    """The transport of the relayout (``"mpi"``, ``"shm"``, ``"tasks"`` or ``"p2p"``), checks done.

    ``method`` given is a demand (ValueError where it cannot be met); ``None`` takes
    ``$DNDASK_RELAYOUT`` as a preference, else mpi where :func:`_mpi_blocker` allows
    (dndask's mpirun launch, ``MPI_THREAD_MULTIPLE`` on every worker rank), else shm
    where :func:`_shm_blocker` allows.
    """
    chosen = method if method is not None else default_method()
    demanded = method is not None
    between_axes = None not in (src.split, dst.split) and src.split != dst.split
    device = _xp.device_of(chunk_meta(x))
    if device.device_type != "cpu":  # P2P and shm stage numpy: device chunks use tasks
        if demanded and method in ("p2p", "shm", "mpi") and (between_axes or method != "p2p"):
            raise ValueError(
                f"`method` {method!r} needs host chunks (it stages them as numpy), "
                f"got chunks on {device}; use method='tasks' or None"
            )
        return "tasks"
    if chosen in (None, "mpi"):
        blocker = _mpi_blocker(x, src.comm)
        if blocker is None:
            return "mpi"
        if demanded:
            raise ValueError(f"`method` 'mpi' needs {blocker}; use method='tasks' or None")
        if _mpi.LAUNCH is not None and "MPI_THREAD" in blocker:
            _log_thread_fallback(blocker)
        chosen = None
    if chosen in (None, "shm"):
        blocker = _shm_blocker(x, src.comm)
        if blocker is None:
            return "shm"
        if demanded:
            raise ValueError(f"`method` 'shm' needs {blocker}; use method='tasks' or None")
        chosen = None
    return _by_dask(src, dst, chosen)


_thread_warned: list[str] = []


def _log_thread_fallback(blocker: str) -> None:
    """One log line (per process) when MPI's thread level rules the MPI transport out."""
    if not _thread_warned:
        _thread_warned.append(blocker)
        log.warning("dndask: the MPI transport needs %s; relayouts use shm or tasks", blocker)


def _by_dask(src: _layout.Distribution, dst: _layout.Distribution, chosen: str | None) -> str:
    """The transport through Dask's comms: ``"p2p"`` (asked, or above the threshold, where
    dask builds it: :func:`dndask._compat.p2p_rechunk`), else tasks."""
    between_axes = None not in (src.split, dst.split) and src.split != dst.split
    if not between_axes:
        return "tasks"
    if chosen == "p2p" and not p2p_rechunk():
        raise ValueError(
            "`method` 'p2p' needs dask's p2p rechunk, which dask's expression arrays "
            "(array.query-planning on) do not implement; use method='tasks' or None"
        )
    above = chosen is None and src.size * src.size > p2p_threshold()
    if chosen == "p2p" or (above and p2p_rechunk()):
        return "p2p"
    return "tasks"


def _room_for(needed: int, fallback: str) -> bool:
    """Whether ``/dev/shm`` takes ``needed`` more bytes and keeps its reserve (logged if not)."""
    free, reserve = _transport.free_bytes(), shm_reserve()
    if free - reserve >= needed:
        return True
    log.warning(
        "dndask: /dev/shm has %d bytes free with a reserve of %d (%s), the relayout "
        "needs %d: using %r",
        free,
        reserve,
        _RESERVE_ENV,
        needed,
        fallback,
    )
    return False


def relayout_plan(
    x: da.Array, src: _layout.Distribution, dst: _layout.Distribution, method: str | None = None
) -> tuple[RelayoutReport, _layout.RelayoutPlan | None]:
    """The report of laying ``x`` (laid out as ``src``) out as ``dst``, and its plan.

    The plan is ``None`` where nothing moves or Dask's p2p rechunk plans the move.
    Checks ``method`` and the distributions as :func:`relayout_graph` does.
    """
    check_method(method)
    shape = tuple(int(s) for s in x.shape)
    _layout.check_relayout(shape, src, dst)
    if src.chunks(shape) == dst.chunks(shape):  # the same grid: every chunk stays put
        return RelayoutReport("none", {}), None
    transport = _transport_of(x, src, dst, method)
    if transport == "shm":  # the bytes moved must fit in /dev/shm, else Dask's comms
        plan = _layout.plan_relayout(shape, src, dst)
        pairs = pair_bytes(plan, x.dtype.itemsize)
        fallback = _by_dask(src, dst, None)
        if _room_for(pairs.total, fallback):
            return RelayoutReport("shm", pairs), plan
        transport = fallback
    if transport == "p2p":
        return RelayoutReport("p2p", None), None
    # planned only here: the P² pieces are what the p2p path above avoids building
    plan = _layout.plan_relayout(shape, src, dst)
    return RelayoutReport(transport, pair_bytes(plan, x.dtype.itemsize)), plan


def relayout_graph(
    x: da.Array, src: _layout.Distribution, dst: _layout.Distribution, method: str | None = None
) -> tuple[da.Array, dict]:
    """The graph laying ``x`` (laid out as ``src``) out as ``dst``, and its tasks' ranks.

    ``method`` picks the transport: ``"mpi"`` (the shape of shm's graph, the pieces sent
    with MPI point-to-point between worker ranks; clusters of dndask's mpirun launcher),
    ``"shm"`` (a post per source rank writes its pieces
    into ``/dev/shm``, a barrier, a collect per destination rank maps them: ``2P + 1``
    tasks; all ranks on one host, numpy chunks), ``"tasks"`` (one slice task per pair
    of ranks, moved by Dask), ``"p2p"`` (Dask's peer-to-peer rechunk, only between two
    split axes; placement left to Dask) or ``None``: ``$DNDASK_RELAYOUT`` if set, else
    mpi where it can (the comm's workers are ranks of dndask's mpirun launch, with its
    scheduler, every worker rank with ``MPI_THREAD_MULTIPLE``), else shm where it can,
    else ``"p2p"`` above :func:`p2p_threshold` pieces (where dask builds it: not for its
    expression arrays, :func:`dndask._compat.p2p_rechunk`) and ``"tasks"`` below. Shm falls back
    to that choice (logged on ``"dndask"``) when ``/dev/shm`` lacks room for the bytes moved plus
    ``$DNDASK_SHM_RESERVE``. The choice and the bytes per pair of ranks are logged at
    debug level (:func:`relayout_plan` returns them).
    """
    report, plan = relayout_plan(x, src, dst, method)
    if log.isEnabledFor(logging.DEBUG):
        log.debug("relayout %s: %s, bytes by (src, dst) %s", x.name, *report)
    if report.transport == "none":
        return x, {}
    if report.transport == "p2p":
        # Dask drops the empty chunks of empty ranks (all of them without elements).
        y = x.rechunk(dst.chunks(x.shape), method="p2p")
        return restore_empty_ranks(y, dst.split, dst.counts), {}
    if report.transport in ("mpi", "shm"):
        return _carried(x, plan, report.transport)
    return build(x, plan)


def _carried(x: da.Array, plan: _layout.RelayoutPlan, transport: str, prefix="relayout", key=()):
    """:func:`build_mpi` or :func:`build_shm` of ``plan``, its cluster's plugin installed."""
    client = plan.src.comm.client
    if transport == "mpi":
        _mpi_transport.ensure_mpi(client)
        tag = f"{_transport.MPI_MARK}{_transport.cluster_tag(client)}"
        return build_mpi(x, plan, tag, prefix, key)
    _transport.ensure_janitor(client)
    return build_shm(x, plan, _transport.cluster_tag(client), prefix, key)


def exchange_graph(
    x: da.Array,
    plan: _layout.RelayoutPlan,
    method: str | None = None,
    prefix: str = "exchange",
    key: tuple = (),
) -> tuple[da.Array, dict] | None:
    """``plan``'s pieces carried as a relayout's are, over MPI or shared memory; else None.

    For exchanges whose pieces are given (:func:`dndask._layout.plan_moves`: a sample
    sort's all-to-all). ``method``: None picks as :func:`relayout_graph` does (with
    ``$DNDASK_RELAYOUT`` as a preference); ``"mpi"`` or ``"shm"`` demand that transport
    (ValueError where it cannot carry ``x``). Returns the array (chunk ``r`` joins
    ``plan``'s pieces of target ``r`` in order) and the ranks of its posts and barrier;
    None where only Dask's comms can carry the pieces (the caller builds its own graph),
    including when ``/dev/shm`` lacks room (logged).
    """
    if method not in (None, "mpi", "shm"):
        raise ValueError(f"`method` must be None, 'mpi' or 'shm', got {method!r}")
    transport = _transport_of(x, plan.src, plan.dst, method)
    if transport == "shm" and not _room_for(pair_bytes(plan, x.dtype.itemsize).total, "tasks"):
        return None
    if transport not in ("mpi", "shm"):
        return None
    return _carried(x, plan, transport, prefix, key)


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
