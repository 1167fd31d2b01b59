"""Shared fixtures: one loopback cluster for the whole session, and comms of 1..5 ranks.

Tests that need several rank counts take the ``comm_of`` fixture and build
sub-comms of the session cluster, so no test starts its own cluster.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from pathlib import Path

import dask
import dask.array as da
import distributed
import numpy as np
import pytest
import torch

os.environ.setdefault("DNDASK_PROGRESS", "off")

# The test clusters poll less than distributed's defaults. Idle, a 5-worker loopback cluster
# used 0.22 cores with them (each worker 3.1 %: the profiler's 10 ms samples, the memory
# monitor's 100 ms checks, the system monitor and the 20 ms event-loop tick) and 0.03 with
# these; two pytest processes, each with its cluster, spent a fifth of two cores idling.
# Environment variables, so that the clusters tests start in subprocesses (mpirun, scripts,
# notebooks) poll less too; the embedded cluster's workers get the driver's config anyway.
QUIET_POLLING = {
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.admin.tick.interval": "500ms",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.worker.profile.enabled": False,
}
dask.config.set(QUIET_POLLING)
for _key, _value in QUIET_POLLING.items():
    _name = "DASK_" + _key.upper().replace(".", "__").replace("-", "_")
    os.environ.setdefault(_name, str(_value))

import dndask as ht  # noqa: E402 (after the settings above)
from dndask import _comm, _compat, _compute, _runtime, _shm_pool, _transport, _xp  # noqa: E402

N_WORKERS = 5
RANK_COUNTS = (1, 2, 3, 4, 5)
# dask's expression arrays (query planning on) build no p2p rechunk, so dndask uses none there
NEEDS_P2P = pytest.mark.skipif(not _compat.p2p_rechunk(), reason="dask builds no p2p rechunk here")


def splits_of(ndim: int) -> list[int | None]:
    """Every split of an ``ndim``-dimensional array: None, then 0..ndim-1."""
    return [None, *range(ndim)]


def layouts(shapes, rank_counts=RANK_COUNTS):
    """(shape, split, ranks) triples over every split of every shape."""
    return [
        pytest.param(shape, split, n, id=f"{shape}-split{split}-P{n}")
        for shape in shapes
        for split in splits_of(len(shape))
        for n in rank_counts
    ]


def naive_pieces(shape, src, dst) -> list[list[tuple[int, tuple[tuple[int, int], ...]]]]:
    """Oracle of a relayout's pieces by plain interval intersection, one list per target chunk.

    A piece is ``(source rank, box)``: ``box`` holds, for every axis, the rows ``(lo, hi)``
    of the source chunk that the target chunk takes; sources in rank order. Two chunks share
    a piece where their row intervals overlap along both splits (other axes may be empty);
    a ``split=None`` distribution is one chunk, rank 0's. ``src`` and ``dst`` need only
    ``split`` and ``counts``.
    """

    def boxes(d) -> list[list[tuple[int, int]]]:
        if d.split is None:
            return [[(0, n) for n in shape]]
        out, at = [], 0
        for c in d.counts:
            out.append([(at, at + c) if ax == d.split else (0, n) for ax, n in enumerate(shape)])
            at += c
        return out

    splits = {src.split, dst.split} - {None}
    plan = []
    for target in boxes(dst):
        pieces = []
        for s, source in enumerate(boxes(src)):
            inter = [(max(a, b), min(c, d)) for (a, c), (b, d) in zip(source, target, strict=True)]
            if any(inter[ax][1] <= inter[ax][0] for ax in splits):
                continue
            box = tuple((lo - a, hi - a) for (lo, hi), (a, _) in zip(inter, source, strict=True))
            pieces.append((s, box))
        plan.append(pieces)
    return plan


def assert_layout(a: ht.DNDarray, expected: np.ndarray, split, comm) -> None:
    """Values, split, comm and the chunk invariant of ``a`` against numpy."""
    _assert_layout_metadata(a, expected, split, comm)
    _assert_same_values(a.numpy(), expected)


def _assert_layout_metadata(a: ht.DNDarray, expected: np.ndarray, split, comm) -> None:
    assert isinstance(a, ht.DNDarray)
    assert a.shape == expected.shape
    assert a.split == split
    assert a.comm == comm
    chunks = a.to_dask().chunks
    for axis, c in enumerate(chunks):
        assert len(c) == (comm.size if axis == split else 1)
    lmap = a.lshape_map
    assert tuple(lmap.shape) == (comm.size, a.ndim)
    if split is not None:
        assert lmap[:, split].tolist() == list(chunks[split])


def _assert_same_values(values: np.ndarray, expected: np.ndarray) -> None:
    values = np.asarray(values)  # a 0-d result may come back as a numpy scalar
    np.testing.assert_array_equal(values, expected)
    assert values.dtype == expected.dtype


class LayoutBatch:
    """:func:`assert_layout` in two steps: the metadata at :meth:`add`, the values of every
    added array in one round trip (:func:`values_of`) when the ``with`` block ends::

        with LayoutBatch() as batch:
            for op in ops:
                batch.add(op(a), op(g), split, comm)
    """

    def __init__(self) -> None:
        self.pending: list[tuple[ht.DNDarray, np.ndarray]] = []

    def add(self, a: ht.DNDarray, expected: np.ndarray, split, comm) -> None:
        """:func:`assert_layout`: the metadata now, the values at :meth:`check`."""
        _assert_layout_metadata(a, expected, split, comm)
        self.expect(a, expected)

    def expect(self, a: ht.DNDarray, expected: np.ndarray) -> None:
        """Only the values (and dtype) of ``a``, at :meth:`check`."""
        self.pending.append((a, expected))

    def check(self) -> None:
        """Compare the values of everything added so far (one round trip), then forget them."""
        pending, self.pending = self.pending, []
        values = values_of(a for a, _ in pending)
        for (_, expected), got in zip(pending, values, strict=True):
            _assert_same_values(got, expected)

    def __enter__(self) -> LayoutBatch:
        return self

    def __exit__(self, kind, error, traceback) -> None:
        if kind is None:  # an assertion that already failed is the one to report
            self.check()


def received_bytes(client, since: float) -> int:
    """Bytes the workers fetched from each other after ``since`` (their own transfer logs).

    The receiving side logs a transfer before the task that needed it runs, so
    the count is complete once ``persist`` has returned. Bytes a shared-memory
    relayout moves count too (its collects log them as they read them); the
    metadata of its control tasks (:func:`dndask._transport.is_control`) does not. Each transfer's start
    is read in the worker's own clock (see :func:`stamp_transfers`), which on
    this one-machine cluster is the driver's.
    """

    def received(dask_worker, since=since):
        delay = dask_worker.scheduler_delay  # only for entries logged before stamping
        log = dask_worker.transfer_incoming_log
        fresh = [e for e in log if e.get("local_start", e["start"] - delay) >= since]
        # a shared-memory relayout's control tasks carry metadata, its data goes by file
        control = sum(n for e in fresh for k, n in e["keys"].items() if _transport.is_control(k))
        by_file = sum(e["total"] for e in _transport.RECEIVED if e["start"] >= since)
        return sum(e["total"] for e in fresh) - control + by_file

    return sum(client.run(received).values())


def stamp_transfers(client) -> None:
    """Make every worker note each incoming transfer's start in its own clock.

    The log shifts its times by ``scheduler_delay``, an estimate of the
    scheduler's clock offset that every heartbeat revises (by tens of
    milliseconds on a busy machine). Undoing the shift later with the
    estimate of that moment can move a transfer that started a few
    milliseconds after ``since`` to before it, or the reverse, so the start
    is recorded with the estimate the log used.
    """

    def stamp(dask_worker):
        from collections import deque

        class StampedLog(deque):
            def append(self, entry):
                entry["local_start"] = entry["start"] - dask_worker.scheduler_delay
                super().append(entry)

        log = dask_worker.transfer_incoming_log
        if type(log).__name__ != "StampedLog":
            dask_worker.transfer_incoming_log = StampedLog(log, maxlen=log.maxlen)

    client.run(stamp)


def holders(client, a: ht.DNDarray) -> list[tuple[str, ...]]:
    """The workers holding each chunk of the persisted ``a``, once its chunks are computed.

    ``persist()`` returns before the chunks exist (placement is fixed at submission), so
    the holders are read after waiting for them.
    """
    futures = a._chunk_futures()  # an is_split join's hold the per-rank results' own keys
    distributed.wait(futures)
    who = client.who_has(futures)
    return [tuple(who[f.key]) for f in futures]


class _RunSpecWatch(logging.Handler):
    """Collects the scheduler's "different `run_spec`" warnings: one key must mean one task."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "Detected different `run_spec`" in message:
            self.seen.append(message)


_run_spec_watch = _RunSpecWatch()
logging.getLogger("distributed.scheduler").addHandler(_run_spec_watch)


@pytest.fixture(autouse=True)
def _one_key_one_task():
    """Fail the test during which the scheduler saw one key with two different tasks."""
    _run_spec_watch.seen.clear()
    yield
    seen, _run_spec_watch.seen[:] = list(_run_spec_watch.seen), []
    if seen:
        pytest.fail("the scheduler saw one key with two different tasks:\n" + "\n".join(seen))


# Files whose tests start processes of their own (clusters, mpirun jobs, notebook kernels,
# benchmark scripts) or kill workers: under pytest-xdist they share one group, so at most one
# of them runs at a time and their timeouts see the load a serial run gives them.
OWN_PROCESSES = frozenset(
    {
        "test_algorithms_reliability.py",
        "test_bench.py",
        "test_cluster.py",
        "test_examples.py",
        "test_gpu_check.py",
        "test_launch.py",
        "test_mpi.py",
        "test_notebook.py",
        "test_reliability.py",
        "test_weight.py",
    }
)


def pytest_collection_modifyitems(config, items):
    """Group the tests for pytest-xdist's ``--dist loadgroup`` (``make pytest`` runs two processes).

    Every test of a file runs in one process and in the file's order, as in a
    serial run (module fixtures are built once, tests that rely on the state an
    earlier one left keep it); the files in :data:`OWN_PROCESSES` and the
    ``mpi`` tests form one group. Each xdist process has its own session cluster.
    """
    for item in items:
        name = item.path.name
        own = name in OWN_PROCESSES or item.get_closest_marker("mpi") is not None
        item.add_marker(pytest.mark.xdist_group("own-processes" if own else name))


# ------------------------------------------------ shared-memory segments left behind
# Checked in fixture teardowns, which fail the run as an error at the teardown of the last
# test, also under pytest-xdist (whose controller ignores a worker's session exit status).
SEGMENT_GRACE = 20.0  # seconds the janitor may take to sweep after the last test's compute
_first_seen: dict[str, str] = {}  # segment -> the test during which it appeared


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """Note which test each of this process's segments appeared in (to name a leak: the
    test that was running, which need not be the one whose relayout wrote it)."""
    yield
    tag = _transport.process_tag()
    for path in _transport.segments(tag) + _shm_pool.pool_files(tag):
        _first_seen.setdefault(path, item.nodeid)


def _segments_left(tag: str, what: str, listing=_transport.segments, kind="shared-memory") -> None:
    """Fail if files of ``tag`` (``listing``'s: the relayouts' segments, or the pools') are
    still there ``SEGMENT_GRACE`` s from now."""
    deadline = time.monotonic() + SEGMENT_GRACE
    while listing(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = listing(tag)
    if left:
        tests = sorted({_first_seen.get(p, "?") for p in left})
        raise AssertionError(
            f"{len(left)} {kind} segment(s) {what}, first seen in {tests}: {left[:3]}"
        )


@pytest.fixture(scope="session", autouse=True)
def no_segment_outlives_the_clusters():
    """None of this process's segments may outlive its clusters (torn down last).

    Segment names start with the tag of the driver process that built the relayout
    (:func:`dndask._transport.cluster_tag`), so other test processes' are not counted.
    """
    yield
    _segments_left(_transport.process_tag(), "left in /dev/shm after the clusters closed")
    _shm_pool.close()  # this process's own pool (the in-process transport tests')
    _segments_left(
        _transport.process_tag(),
        "left after the clusters closed",
        listing=_shm_pool.pool_files,
        kind="pool",
    )


@pytest.fixture
def shm_pool_cap(client):
    """``set(nbytes)``: the cap of the posts' segment pools, on the driver and every worker of
    the shared cluster, for one test (restored after it; ``0``: no pool)."""
    before: dict = {}

    def set_cap(nbytes: int) -> None:
        before.setdefault(None, _shm_pool.set_cap(nbytes))
        for worker, previous in client.run(_shm_pool.set_cap, nbytes).items():
            before.setdefault(worker, previous)

    yield set_cap
    for worker, previous in before.items():
        if worker is None:
            _shm_pool.set_cap(previous)
        else:
            client.run(_shm_pool.set_cap, previous, workers=[worker])


@pytest.fixture(scope="session")
def client():
    c = ht.init(N_WORKERS)
    stamp_transfers(c)
    yield c
    # every relayout of the session's cluster is done: the janitor should have removed its
    # segments (the shutdown removes whatever is left; a long session would hold them).
    # Held segments fail the run, named with the test they appeared in ($DNDASK_TEST_SHM_STRICT=0
    # turns this check off; the check after the clusters close stays).
    tag = _transport.cluster_tag(c)
    try:
        if os.environ.get("DNDASK_TEST_SHM_STRICT") != "0":
            _segments_left(tag, "held until the shutdown of the shared cluster")
    finally:
        ht.shutdown()


@pytest.fixture(scope="module")
def standin(client):
    """The strict device stand-in (tests/_standin.py), registered on the workers too.

    Imported here rather than at the top of this file: importing it records this
    process as the driver, and pytest-xdist's controller loads conftest.py too.
    """
    import _standin

    _standin.install(client)
    return _standin


def cuda_missing() -> str | None:
    """Why real CuPy chunks cannot run here, or ``None`` when they can."""
    cupy = _xp.cupy
    if cupy is None:
        return "CuPy is not installed"
    try:
        return None if cupy.cuda.runtime.getDeviceCount() > 0 else "no CUDA device"
    except Exception as exc:  # no driver
        return f"CUDA is not usable: {exc}"


@contextlib.contextmanager
def gpu_backend_of(kind: str, standin, client):
    """The ``"gpu"`` device backed by the strict stand-in (``kind="standin"``) or by real CuPy
    (``"cupy"``: skips without CUDA), in the driver and on the workers; yields its chunk type.
    """
    if kind == "standin":
        yield standin.StrictArray
        return
    missing = cuda_missing()
    if missing:
        pytest.skip(missing)
    client.run(standin.deactivate)
    standin.deactivate()
    try:
        yield _xp.cupy.ndarray
    finally:
        client.run(standin.activate)
        standin.activate()


# Every device test runs on the stand-in here and on real CuPy where CUDA is (`-m gpu`).
GPU_BACKENDS = ["standin", pytest.param("cupy", marks=pytest.mark.gpu)]


@pytest.fixture(params=GPU_BACKENDS)
def gpu_backend(request, standin, client):
    """The ``"gpu"`` device of one test: the stand-in, then real CuPy; yields the chunk type."""
    with gpu_backend_of(request.param, standin, client) as chunk_type:
        yield chunk_type


@pytest.fixture(params=["cpu", *GPU_BACKENDS])
def device(request, standin, client):
    """``"cpu"``, or ``"gpu"`` backed by the stand-in, then by real CuPy (as ``gpu_backend``)."""
    if request.param == "cpu":
        yield "cpu"
        return
    with gpu_backend_of(request.param, standin, client):
        yield "gpu"


def on_device(chunk_or_meta, device: str) -> bool:
    """Whether ``chunk_or_meta`` is exactly the chunk type of ``device``'s active backend."""
    return type(chunk_or_meta) is _xp.backend(device).array_type


@pytest.fixture(scope="session")
def comm(client) -> ht.Comm:
    return ht.get_comm()


@pytest.fixture(scope="session")
def comm_of(comm):
    """``comm_of(n)``: a comm over the first ``n`` workers of the session cluster."""
    cache: dict[int, ht.Comm] = {}

    def make(n: int) -> ht.Comm:
        if n not in cache:
            cache[n] = comm.subcomm(range(n))
        return cache[n]

    return make


def skewed(a: ht.DNDarray) -> ht.DNDarray:
    """A copy of ``a`` with an uneven distribution: rank 0 empty, the rest on ranks 1 and P-1."""
    if a.split is None or a.comm.size == 1:
        return a.copy()
    n, size = a.shape[a.split], a.comm.size
    counts = [0] * size
    counts[1] += n // 2
    counts[-1] += n - n // 2
    target = a.lshape_map
    target[:, a.split] = torch.tensor(counts)
    return a.redistribute(target_map=target)


def values_of(arrays) -> list[np.ndarray]:
    """The values of many DNDarrays in one round trip (for tests that check hundreds)."""
    arrays = list(arrays)
    if not arrays:
        return []
    # as a.compute() submits one array: each rank's chains fused, under names of this call
    return _compute.compute_many(
        [a.to_dask() for a in arrays], [a._placement() for a in arrays], arrays[0].comm.client
    )


# ------------------------------------------------- lost workers (tests that kill them)
N_SPARE = 3  # workers of the dedicated cluster
RESTART_TIMEOUT = 90.0  # seconds a nanny may take to bring a killed worker back


def worker_names(client: distributed.Client) -> dict[str, object]:
    """Address -> name of every worker the scheduler knows now."""
    info = _comm.live_workers(client)
    return {address: w["name"] for address, w in info.items()}


def wait_until(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


class Spare:
    """The dedicated cluster: its client, a comm over its workers, and their pids."""

    def __init__(self, cluster: distributed.LocalCluster, client: distributed.Client):
        self.cluster = cluster
        self.client = client

    def comm(self) -> ht.Comm:
        return ht.Comm.from_client(self.client)

    def pid(self, address: str) -> int:
        return self.client.run(os.getpid, workers=[address])[address]

    def kill(self, address: str, pid: int | None = None) -> None:
        """SIGKILL one worker process (by its own pid); its nanny starts a new one."""
        os.kill(pid or self.pid(address), signal.SIGKILL)

    def healed(self, lost: str) -> None:
        """Wait until the scheduler has dropped ``lost`` and all workers are back."""

        def back():
            names = worker_names(self.client)
            return lost not in names and len(names) >= N_SPARE

        wait_until(back, RESTART_TIMEOUT, f"the worker replacing {lost}")

    def serving(self, comm: ht.Comm) -> list[str]:
        """The address that serves each rank of ``comm`` now (the worker of the same name)."""
        by_name = {name: address for address, name in worker_names(self.client).items()}
        return [by_name[self.names[w]] for w in comm.workers]

    def remember_names(self) -> None:
        self.names = worker_names(self.client)


@pytest.fixture(scope="module")
def spare(client):
    """A 3-worker cluster the tests may kill workers of (the session cluster stays intact).

    ``client`` (the session cluster) is started first so that dndask's default
    client is never this one.
    """
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DNDASK_LOST_WORKER_TIMEOUT", str(RESTART_TIMEOUT))
        cluster = _runtime.LoopbackCluster(  # what ht.init starts (see its docstring)
            n_workers=N_SPARE,
            threads_per_worker=1,
            host="127.0.0.1",
            dashboard_address=None,
            processes=True,
            silence_logs=logging.WARNING,  # shown by pytest only when a test fails
        )
        own = distributed.Client(cluster, set_as_default=False)
        s = Spare(cluster, own)
        with own.as_current():
            ht.arange(3, split=0, comm=s.comm()).numpy()  # installs dndask's scheduler plugin
    tag = _transport.cluster_tag(own)
    try:
        yield s
    finally:
        own.close()
        cluster.close()
        # as ht.shutdown() does for its clusters: what killed workers left (their pools)
        _transport.remove_segments(tag)


@pytest.fixture
def lost(spare):
    """Run a test against the dedicated cluster, its client current in this thread.

    (``ht.per_rank`` waits through the current client.)
    """
    with spare.client.as_current():
        spare.remember_names()
        yield spare


def slow_blocks(x: da.Array, marks: Path, delay: float) -> da.Array:
    """``x`` with each block held back ``delay`` s; a block leaves ``marks/<pid>`` when it starts.

    The file tells the test which worker process is busy, so it can kill that
    process while the task runs; it lists the blocks that process held back.
    """

    def hold(block, block_info=None):
        with (marks / str(os.getpid())).open("a") as mark:
            mark.write(f"{block_info[0]['chunk-location'] if block_info else '?'}\n")
        time.sleep(delay)
        return block

    return x.map_blocks(hold, dtype=x.dtype, meta=x._meta)


def slow_on_rank(x: da.Array, rank: int, delay: float) -> da.Array:
    """``x`` (split along axis 0) with rank ``rank``'s block held back ``delay`` s."""

    def hold(block, block_info=None):
        if block_info[0]["chunk-location"][0] == rank:
            time.sleep(delay)
        return block

    return x.map_blocks(hold, dtype=x.dtype)


class Killer(threading.Thread):
    """Kills ``address``'s worker process (``pid``) as soon as a slow block marks it busy."""

    def __init__(self, spare: Spare, address: str, marks: Path):
        super().__init__(daemon=True)
        self.spare, self.address, self.marks = spare, address, marks
        self.pid = spare.pid(address)

    def run(self) -> None:
        wait_until((self.marks / str(self.pid)).exists, 60, f"a slow block on {self.address}")
        self.spare.kill(self.address, self.pid)

    def assert_killed(self, timeout: float = 5.0) -> None:
        """Wait ``timeout`` s for the kill; fail naming the processes whose blocks did mark."""
        self.join(timeout)
        assert not self.is_alive(), (
            f"no slow block marked process {self.pid}; the blocks each process held back: "
            f"{ {path.name: path.read_text().splitlines() for path in self.marks.iterdir()} }"
        )


def kill_when_busy(spare: Spare, address: str, marks: Path) -> Killer:
    """A started :class:`Killer` of ``address``'s worker process."""
    killer = Killer(spare, address, marks)
    killer.start()
    return killer
