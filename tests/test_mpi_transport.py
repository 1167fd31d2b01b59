"""The MPI transport of relayouts: its planning pieces here, its runs under ``mpirun -np 6``.

The mpirun tests run one script each (tests/mpi/check_mpi_transport.py: values, the
transport used, bytes, interleaved/chained/busy relayouts, culling; and
tests/mpi/check_mpi_lost_rank.py) under a subprocess timeout, so a hang fails the test.
"""

from __future__ import annotations

import logging
import os
import pathlib
import re
import shutil
import subprocess
import sys

import dask.array as da
import numpy as np
import pytest

import dndask as ht
from dndask import _distribution, _launch, _layout, _mpi, _mpi_transport, _transport

ROOT = pathlib.Path(__file__).resolve().parents[1]
MPIRUN = shutil.which("mpirun", path=str(pathlib.Path(sys.executable).parent)) or shutil.which(
    "mpirun"
)
TIMEOUT = 240
MULTIPLE = "MPI_THREAD_MULTIPLE"


# ------------------------------------------------------------------------ tags
def test_tags_are_unique_among_outstanding_receives():
    pool = _mpi_transport.TagPool(1, 4)
    taken = [pool.take() for _ in range(4)]
    assert sorted(taken) == [1, 2, 3, 4]
    with pytest.raises(RuntimeError, match=r"no free MPI tag in \[1, 4\]"):
        pool.take()
    pool.give(3)  # its message arrived: the tag may serve again
    assert pool.take() == 3


def test_a_cancelled_receives_tag_is_never_handed_out_again():
    pool = _mpi_transport.TagPool(7, 9)
    a, b, c = pool.take(), pool.take(), pool.take()
    pool.retire(b)  # its message may still come
    pool.give(a)
    pool.give(c)
    again = {pool.take() for _ in range(2)}
    assert again == {a, c}
    with pytest.raises(RuntimeError, match="no free MPI tag"):
        pool.take()


def test_a_tag_pool_needs_a_range():
    with pytest.raises(ValueError, match=r"`low` must be in \[0, high\], got 5 \(high 4\)"):
        _mpi_transport.TagPool(5, 4)


# ---------------------------------------------------------------------- the choice
def launch(**change) -> _launch.MpiLaunch:
    fields = {
        "scheduler": "tcp://10.0.0.1:8786",
        "worker_ranks": (2, 3, 4, 5),
        "multiple": True,
        "thread_level": MULTIPLE,
    }
    return _launch.MpiLaunch(**{**fields, **change})


@pytest.mark.parametrize(
    ("the_launch", "scheduler", "names", "why"),
    [
        (launch(), "tcp://10.0.0.1:8786", [2, 3, 4, 5], None),
        (launch(), "tcp://10.0.0.1:8786", [5, 3], None),  # a sub-comm, any order
        (None, "tcp://10.0.0.1:8786", [2], "a cluster started by dndask's mpirun launcher"),
        (launch(), "tcp://10.0.0.9:1", [2], "the scheduler of dndask's mpirun launch"),
        (launch(), "tcp://10.0.0.1:8786", [2, 6], "ranks of dndask's mpirun launch, got worker 6"),
        (launch(), "tcp://10.0.0.1:8786", ["w-2"], "got worker 'w-2'"),
        (
            launch(multiple=False, thread_level="MPI_THREAD_SERIALIZED"),
            "tcp://10.0.0.1:8786",
            [2, 3],
            "MPI_THREAD_MULTIPLE on every worker rank, got MPI_THREAD_SERIALIZED",
        ),
    ],
)
def test_the_mpi_blocker(the_launch, scheduler, names, why):
    got = _launch.mpi_transport_blocker(the_launch, scheduler, names)
    if why is None:
        assert got is None
    else:
        assert why in got


@pytest.fixture
def as_launched(client, comm_of, monkeypatch):
    """Pretend this embedded cluster came from dndask's mpirun launch (planning only)."""

    def make(**change):
        comm = comm_of(3)
        names = _distribution.worker_names(client, comm.workers)
        fields = {"scheduler": client.scheduler.address, "worker_ranks": tuple(names)}
        monkeypatch.setattr(_mpi, "LAUNCH", launch(**{**fields, **change}))
        monkeypatch.setattr(_distribution, "_thread_warned", [])
        monkeypatch.delenv("DNDASK_RELAYOUT", raising=False)
        return comm

    return make


def plan_of(a: ht.DNDarray, axis, method=None):
    dst = _layout.Distribution.balanced(a.shape, axis, a.comm)
    return _distribution.relayout_plan(a.to_dask(), a.distribution, dst, method)


def test_mpi_is_chosen_first_under_the_launch(as_launched, monkeypatch):
    comm = as_launched()
    a = ht.zeros((6, 5), split=0, comm=comm)
    report, plan = plan_of(a, 1)
    assert report.transport == "mpi" and plan is not None
    assert plan_of(a, 1, "mpi")[0].transport == "mpi"
    monkeypatch.setenv("DNDASK_RELAYOUT", "shm")  # a preference still wins
    assert plan_of(a, 1)[0].transport == "shm"
    assert report.pairs == plan_of(a, 1, "shm")[0].pairs  # the same bytes per pair
    assert plan_of(a, 1, "tasks")[0].transport == "tasks"


def test_without_the_launch_mpi_is_refused_by_name(client, comm_of, monkeypatch):
    monkeypatch.setattr(_mpi, "LAUNCH", None)
    monkeypatch.delenv("DNDASK_RELAYOUT", raising=False)
    a = ht.zeros((6, 5), split=0, comm=comm_of(3))
    name = a.to_dask().name
    assert plan_of(a, 1)[0].transport == "shm"  # one host
    match = (
        r"`method` 'mpi' needs a cluster started by dndask's mpirun launcher "
        r"\(ht.init\(mpi=True\) under mpirun\); use method='tasks' or None"
    )
    with pytest.raises(ValueError, match=match):
        a.resplit_(1, method="mpi")
    assert a.split == 0 and a.to_dask().name == name
    monkeypatch.setenv("DNDASK_RELAYOUT", "mpi")  # a preference: falls back
    assert plan_of(a, 1)[0].transport == "shm"


def test_a_low_thread_level_falls_back_with_one_log_line(as_launched, caplog):
    comm = as_launched(multiple=False, thread_level="MPI_THREAD_SERIALIZED")
    a = ht.zeros((6, 5), split=0, comm=comm)
    with caplog.at_level(logging.WARNING, logger="dndask"):
        assert plan_of(a, 1)[0].transport == "shm"
        assert plan_of(a, 0 if a.split else 1)[0].transport == "shm"
    lines = [r.getMessage() for r in caplog.records if "MPI transport needs" in r.getMessage()]
    assert lines == [
        "dndask: the MPI transport needs MPI_THREAD_MULTIPLE on every worker rank, got "
        "MPI_THREAD_SERIALIZED; relayouts use shm or tasks"
    ]
    with pytest.raises(ValueError, match="`method` 'mpi' needs MPI_THREAD_MULTIPLE"):
        plan_of(a, 1, "mpi")


def test_object_dtypes_use_tasks_under_the_launch(as_launched):
    comm = as_launched()
    x = da.from_array(np.array([[1, "a"], [None, 2.5]], dtype=object), chunks=(1, 2))
    src = _layout.Distribution(0, (1, 1, 0), comm)
    dst = _layout.Distribution.balanced(x.shape, 1, comm)
    assert _distribution.relayout_plan(x, src, dst)[0].transport == "tasks"
    with pytest.raises(ValueError, match="`method` 'mpi' needs a dtype without Python objects"):
        _distribution.relayout_plan(x, src, dst, "mpi")


def test_the_mpi_graph_has_at_most_2p_plus_1_tasks_and_its_own_janitor(as_launched):
    comm = as_launched()
    a = ht.array(np.arange(35.0).reshape(7, 5), split=0, comm=comm).persist_(wait=True)
    x, src = a.to_dask(), a.distribution
    report, plan = plan_of(a, 1)
    tag = f"{_transport.MPI_MARK}{_transport.cluster_tag(comm.client)}"
    y, ranks = _distribution.build_mpi(x, plan, tag)
    added = {k: v for k, v in dict(y.dask).items() if k not in dict(x.dask)}
    assert len(added) <= 2 * comm.size + 1
    posts = sorted(k[1] for k in added if _transport.is_control(k) and isinstance(k, tuple))
    assert posts == [0, 1, 2] and {ranks[k] for k in ranks if isinstance(k, tuple)} == {0, 1, 2}
    assert _mpi_transport.MpiJanitor().owns(tag) and not _transport.ShmJanitor().owns(tag)
    shm_tag = _transport.cluster_tag(comm.client)
    assert _transport.ShmJanitor().owns(shm_tag) and not _mpi_transport.MpiJanitor().owns(shm_tag)
    assert report.transport == "mpi" and src.split == 0


def test_release_drops_the_generations_before_the_sweep(monkeypatch):
    outbox = {"mpiT-tok": {10: {1: np.zeros(2)}, 30: {2: np.ones(3)}}}
    monkeypatch.setattr(_mpi_transport, "OUTBOX", outbox)
    assert _mpi_transport.release_many([("mpiT", "tok", 20)]) == 1
    assert list(outbox["mpiT-tok"]) == [30]  # a rerun after the sweep keeps its pieces
    assert _mpi_transport.release("mpiT", "tok") == 1
    assert outbox == {}


# ------------------------------------------------------------------- under mpirun
def mpirun(script: str) -> tuple[str, str]:
    """``script``'s stdout and stderr under ``mpirun -np 6``; it must exit 0 within TIMEOUT."""
    env = {
        **os.environ,
        "DNDASK_INTERFACE": "lo",
        "DNDASK_PROGRESS": "off",
        "PYTHONPATH": str(ROOT),
    }
    result = subprocess.run(
        [MPIRUN, "-np", "6", sys.executable, script],
        capture_output=True, text=True, timeout=TIMEOUT, env=env, cwd=ROOT,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout, result.stderr


needs_mpirun = pytest.mark.skipif(MPIRUN is None, reason="mpirun not installed (pip install mpich)")


@pytest.mark.mpi
@needs_mpirun
def test_relayouts_over_mpi_under_mpirun():
    out, err = mpirun("tests/mpi/check_mpi_transport.py")
    assert "values checked (auto): 76" in out and "values checked (sub-comm): 76" in out
    assert "transport: mpi; graph: ['mpi']" in out
    found = re.search(r"bytes: plan (\d+), mpi (\d+), dask data (\d+)", out)
    plan, mpi, dask = (int(n) for n in found.groups())
    assert plan == mpi > 0 and dask == 0  # Dask's sockets carried none of it
    assert "sort exchanges: [['mpi'], ['mpi'], []]" in out
    assert "interleaved, chained and busy relayouts finished" in out
    assert "no posted piece left on any worker" in out
    assert "Traceback" not in err


@pytest.mark.mpi
@needs_mpirun
def test_a_rank_lost_during_an_mpi_relayout_is_a_clear_error():
    out, _ = mpirun("tests/mpi/check_mpi_lost_rank.py")
    assert "rank 3 (MPI rank 5) left after the barrier" in out
    assert (
        "rank 3 of an MPI relayout (its pieces on MPI rank 5) is lost: its worker left the "
        "cluster during the relayout. MPI cannot bring a dead rank back" in out
    )
