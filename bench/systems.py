"""The dndask and plain dask.array sides of every case, timed on one loopback cluster.

Both sides share the cluster dndask starts (``P`` single-threaded worker
processes on 127.0.0.1). Where a case starts from data, both sides start
from the *same* values in the same chunks: dndask's persisted array, and a
copy of each of its chunks under keys of Dask's own (:func:`bench._dask_side.own_copy`,
so Dask's optimizations apply as to a Dask user's array; a graph on ``to_dask()``
holds the DNDarray's layers, which dndask submits unfused). The Dask side is
written as a Dask user would write it:
``x.rechunk(...)``, ``rng.standard_normal(...)``, ``x @ y``,
``da.linalg.tsqr(x)``, ``da.from_delayed`` on per-worker futures, then
``persist()`` and ``distributed.wait``.

One repeat (:func:`measure_once`) builds fresh inputs (untimed), starts
every worker's :class:`bench._rss.PeakMeter`, times the operation until its
result is in the workers' memory, then reads the peak memory above baseline
(the largest worker's) and the bytes the workers fetched from each other
(the entries their ``transfer_incoming_log`` gained), and finally drops
everything and waits until the workers hold what they held before.
"""

from __future__ import annotations

import gc
import statistics
import time
from dataclasses import dataclass, field

import dask
import dask.array as da
import distributed
import numpy as np

import dndask as ht
from dndask import _output_cache, _transport

from . import _rss, algorithms, workloads
from ._dask_side import own_copy, persist_together, persisted

# ---------------------------------------------------------------------------------------------
# Measurements inside the workers (run with ``client.run``)


def mark_transfers(dask_worker) -> None:
    """Mark every transfer this worker has logged so far as already counted."""
    for entry in dask_worker.transfer_incoming_log:
        entry["bench_counted"] = True
    for entry in _transport.RECEIVED:
        entry["bench_counted"] = True


def new_transfer_bytes(dask_worker) -> int:
    """Bytes of the transfers logged since :func:`mark_transfers` (fetched from other workers).

    Dask's transfers, less the metadata of the shared-memory transport's control tasks,
    plus the bytes that transport's collects read from ``/dev/shm``. The logs' entries
    are marked rather than the logs replaced, so other instrumentation of the log (the
    test suite's) keeps working.
    """
    log = [e for e in dask_worker.transfer_incoming_log if not e.get("bench_counted")]
    control = sum(n for e in log for k, n in e["keys"].items() if _transport.is_control(k))
    by_file = sum(e["total"] for e in _transport.RECEIVED if not e.get("bench_counted"))
    return sum(e["total"] for e in log) - control + by_file


def meter_start(dask_worker) -> str:
    """Start this worker's peak-memory meter; the method it uses."""
    dask_worker._bench_reused = _output_cache.process_cache().reused
    dask_worker._bench_meter = _rss.PeakMeter().start()
    return dask_worker._bench_meter.method


def meter_stop(dask_worker) -> int:
    """Bytes above the baseline at the peak since :func:`meter_start`.

    Plus the outputs dndask's collects made on buffers of the output cache that were
    free at the start: already resident, they do not raise the resident set, yet the
    operation holds them (an upper bound: as if they were all alive at the peak).
    """
    reused = _output_cache.process_cache().reused - dask_worker._bench_reused
    return dask_worker._bench_meter.stop() + reused


def stored_keys(dask_worker) -> int:
    """How many results this worker holds."""
    return len(dask_worker.data)


def local_piece(rank: int, seed: int, counts: list[int], cols: int) -> np.ndarray:
    """The per-rank data of the is_split case, made on the worker that keeps it."""
    rng = np.random.default_rng(seed + rank)
    return rng.standard_normal((counts[rank], cols), dtype=np.float32)


# ---------------------------------------------------------------------------------------------
# Samples


@dataclass
class Sample:
    """One timed repeat: seconds, peak bytes above baseline (largest worker), bytes moved."""

    seconds: float
    peak: int
    moved: int
    value: float | None = None


@dataclass
class Result:
    """Every repeat of one workload on one system."""

    system: str
    workload: workloads.Workload
    samples: list[Sample] = field(default_factory=list)
    moved_label: str = "measured"
    extra: dict = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        """Median wall time."""
        return statistics.median(s.seconds for s in self.samples)

    @property
    def peak(self) -> float:
        """Median over repeats of the largest worker's peak above baseline, in bytes."""
        return statistics.median(s.peak for s in self.samples)

    @property
    def best(self) -> float:
        """Fastest repeat: the one least disturbed by the rest of the machine."""
        return min(s.seconds for s in self.samples)

    @property
    def moved(self) -> float:
        """Median bytes moved between workers."""
        return statistics.median(s.moved for s in self.samples)


# ---------------------------------------------------------------------------------------------
# The two sides


class DndaskSide:
    """dndask: the Heat API on the loopback cluster."""

    name = "dndask"

    def __init__(self, comm: ht.Comm):
        self.comm = comm
        self.algorithms = algorithms.DndaskAlgorithms(comm)

    def offers(self, w: workloads.Workload) -> bool:
        """dndask runs every case."""
        return True

    def source(self, w: workloads.Workload, seed: int) -> ht.DNDarray:
        """A balanced split-0 float32 matrix of normal random numbers, made on the ranks.

        Each worker draws its rows with numpy (much faster than dndask's
        counter-based ``ht.random`` at a GiB) and ``is_split`` joins them in place.
        """
        pieces = ht.per_rank(local_piece, seed, w.counts, w.cols, comm=self.comm)
        return ht.array(pieces, is_split=0)

    def prepare(self, w: workloads.Workload, seed: int) -> dict:
        """The inputs of one repeat (not timed)."""
        key = w.case.key
        if w.case.group == "algorithms":
            return self.algorithms.prepare(w, seed)
        if key == "randn":
            ht.random.seed(seed)
            return {}
        if key == "is_split":
            args = (seed, w.counts, w.cols)
            return {"pieces": ht.per_rank(local_piece, *args, comm=self.comm)}
        state = {"a": self.source(w, seed)}
        if key == "redistribute":
            target = state["a"].lshape_map
            target[:, 0] = target.new_tensor(w.target_counts)
            state["target"] = target
        if key == "matmul":
            shape = (w.cols, workloads.MATMUL_N)
            b = ht.random.rand(*shape, dtype=ht.float32, split=None, comm=self.comm)
            state["b"] = b.persist_(wait=True)
        return state

    def run(self, w: workloads.Workload, state: dict):
        """The timed operation; its result, in the workers' memory."""
        key = w.case.key
        if w.case.group == "algorithms":
            return self.algorithms.run(w, state)
        if key == "randn":
            return ht.random.randn(*w.shape, dtype=ht.float32, split=0, comm=self.comm).persist_(
                wait=True
            )
        if key == "redistribute":
            return state["a"].redistribute_(target_map=state["target"]).persist_(wait=True)
        if key == "resplit01":
            return state["a"].resplit_(1).persist_(wait=True)
        if key == "resplit_none":
            return state["a"].resplit_(None).persist_(wait=True)
        if key == "elementwise":
            return float(workloads.chain(state["a"]))
        if key == "matmul":
            return ht.matmul(state["a"], state["b"]).persist_(wait=True)
        if key == "tsqr":
            return persist_together(*ht.linalg.qr(state["a"]))
        if key == "is_split":
            return ht.array(state["pieces"], is_split=0).persist_(wait=True)
        raise KeyError(key)


class DaskSide:
    """Plain dask.array on the same cluster and the same input chunks."""

    name = "dask"

    def __init__(self, comm: ht.Comm):
        self.comm = comm
        self.inputs = DndaskSide(comm)
        self.algorithms = algorithms.DaskAlgorithms(comm)

    def offers(self, w: workloads.Workload) -> bool:
        """Whether Dask has the case's computation (not eigh, polar, Lasso's descent)."""
        return w.case.group != "algorithms" or self.algorithms.offers(w.case.key)

    def prepare(self, w: workloads.Workload, seed: int) -> dict:
        """dndask's inputs, as dask arrays of Dask's own (the same values and chunks)."""
        key = w.case.key
        if w.case.group == "algorithms":
            return self.algorithms.prepare(w, seed)
        if key == "randn":
            return {"rng": da.random.default_rng(seed)}
        if key == "is_split":
            client = self.comm.client
            futures = [
                client.submit(local_piece, r, seed, w.counts, w.cols, workers=[addr], pure=False)
                for r, addr in enumerate(self.comm.workers)
            ]
            distributed.wait(futures)
            return {"futures": futures}
        state = self.inputs.prepare(w, seed)
        return {k: own_copy(v) if isinstance(v, ht.DNDarray) else v for k, v in state.items()}

    def run(self, w: workloads.Workload, state: dict):
        """The timed operation, written the Dask way."""
        key = w.case.key
        if w.case.group == "algorithms":
            return self.algorithms.run(w, state)
        if key == "randn":
            chunks = (tuple(w.counts), w.cols)
            return persisted(state["rng"].standard_normal(w.shape, dtype=np.float32, chunks=chunks))
        if key == "redistribute":
            return persisted(state["a"].rechunk((tuple(w.target_counts), w.cols)))
        if key == "resplit01":
            return persisted(state["a"].rechunk((w.rows, tuple(w.col_counts))))
        if key == "resplit_none":
            return persisted(state["a"].rechunk(w.shape))
        if key == "elementwise":
            (value,) = dask.compute(workloads.chain(state["a"]))
            return float(value)
        if key == "matmul":
            return persisted(state["a"] @ state["b"])
        if key == "tsqr":
            return persisted(*da.linalg.tsqr(state["a"]))
        if key == "is_split":
            return persisted(self._join(state["futures"]))
        raise KeyError(key)

    def _join(self, futures) -> da.Array:
        """Per-worker pieces as one array: ask each for its shape, then ``da.from_delayed``."""
        client = self.comm.client
        shapes = client.gather([client.submit(np.shape, f) for f in futures])
        parts = [
            da.from_delayed(f, shape=s, dtype=np.float32)
            for f, s in zip(futures, shapes, strict=True)
        ]
        return da.concatenate(parts, axis=0)


SIDES = {"dndask": DndaskSide, "dask": DaskSide}


# ---------------------------------------------------------------------------------------------
# Timing


def settle(client: distributed.Client, keys: int, timeout: float = 30.0) -> None:
    """Wait until the workers hold ``keys`` results again (released ones are gone)."""
    gc.collect()  # the driver's last references to the results
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sum(client.run(stored_keys).values()) <= keys:
            return
        time.sleep(0.02)


def measure_once(client: distributed.Client, side, w: workloads.Workload, seed: int) -> Sample:
    """One repeat of ``w`` on ``side`` (see the module docstring)."""
    keys = sum(client.run(stored_keys).values())
    state = side.prepare(w, seed)
    client.run(mark_transfers)
    client.run(meter_start)
    t0 = time.perf_counter()
    out = side.run(w, state)
    seconds = time.perf_counter() - t0
    peak = max(client.run(meter_stop).values())
    moved = sum(client.run(new_transfer_bytes).values())
    value = out if isinstance(out, float) else None
    del out, state
    settle(client, keys)
    return Sample(seconds, peak, moved, value)


def measure(
    client: distributed.Client, sides: list, w: workloads.Workload, repeats: int
) -> list[Result]:
    """``repeats`` repeats of ``w`` on every side, alternating their order.

    One untimed warm-up (:meth:`workloads.Workload.warmup`: a small version, at most 1 MiB,
    of a core case) comes first for each side.
    Alternating means drift on a shared machine hits every side alike. A side without the
    case's computation (:meth:`DaskSide.offers`) gets no result.
    """
    sides = [side for side in sides if side.offers(w)]
    results = [Result(side.name, w) for side in sides]
    for side in sides:
        measure_once(client, side, w.warmup(min(1, w.mib)), seed=10_000)
    for i in range(repeats):
        order = list(enumerate(sides))
        for j, side in order if i % 2 == 0 else order[::-1]:
            results[j].samples.append(measure_once(client, side, w, seed=len(sides) * i + j))
    return results


def graph_overhead(comm: ht.Comm, w: workloads.Workload, repeats: int = 20) -> dict:
    """Milliseconds to build the elementwise chain's graph (nothing runs) on each side."""
    a = DndaskSide(comm).source(w.resized(1), seed=1)
    x = a.to_dask()
    out = {}
    for name, arg in (("dndask", a), ("dask", x)):
        t0 = time.perf_counter()
        for _ in range(repeats):
            workloads.chain(arg)
        out[name] = (time.perf_counter() - t0) / repeats * 1e3
    return out


def start_cluster(ranks: int) -> tuple[distributed.Client, ht.Comm]:
    """dndask's loopback cluster of ``ranks`` single-threaded workers (127.0.0.1)."""
    client = ht.init(ranks)
    return client, ht.get_comm()
