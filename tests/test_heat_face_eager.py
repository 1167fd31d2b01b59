"""The Heat face computes at the call (dndask.heat._eager); ht.lazy() and ht.blocking()."""

from __future__ import annotations

import time

import numpy as np
import pytest
from distributed import Future

import dndask as dd
import dndask.heat as ht


def started(a) -> bool:
    """Whether ``a``'s graph is its chunks as futures (submitted), not tasks to run."""
    graph = dict(a.to_dask().__dask_graph__())
    return len(graph) == a.to_dask().npartitions and all(
        isinstance(v, Future) for v in graph.values()
    )


def _fail(block):
    raise ZeroDivisionError("a task failed")


def worker_keys(client) -> int:
    return sum(client.run(lambda dask_worker: len(dask_worker.data)).values())


@pytest.mark.parametrize("n", [1, 3, 5])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_result_starts_at_the_call(comm_of, n, dtype):
    comm = comm_of(n)
    values = np.arange(12, dtype=dtype).reshape(4, 3)  # 5 ranks of 4 rows: an empty rank
    x = ht.array(values, split=0, comm=comm)
    assert started(x)
    results = {
        "op": (x + 1) * 2,
        "function": ht.exp(x),
        "method": x.sum(axis=0),
        "index": x[1:],
        "matmul": x @ x.T,
        "reshape": ht.reshape(x, (3, 4)),
    }
    for name, r in results.items():
        assert started(r), name
    np.testing.assert_allclose(results["op"].numpy(), (values + 1) * 2)
    np.testing.assert_allclose(results["matmul"].numpy(), values @ values.T, rtol=1e-5)
    y = ht.zeros((4, 3), split=1, dtype=ht.float32, comm=comm)
    y += 1  # in place: the new state starts too
    assert started(y) and y.numpy().tolist() == np.ones((4, 3)).tolist()
    y[0] = 5.0
    assert started(y)  # an assignment too
    y.resplit_(0)
    assert started(y) and y.split == 0
    y.add_(1)
    assert started(y) and y.numpy()[:, 0].tolist() == [6.0, 2.0, 2.0, 2.0]


def test_lazy_keeps_the_cores_laziness(comm_of):
    comm = comm_of(3)
    x = ht.arange(6, split=0, comm=comm)
    with ht.lazy():
        assert ht.evaluation_mode() == "lazy"
        y = (x + 1) * 2
        assert not started(y)
        z = ht.exp(y)
        moved = ht.arange(6, split=0, comm=comm).resplit_(None)
        assert not started(moved)  # a relayout stays lazy too
    assert ht.evaluation_mode() == "start"
    assert not started(z) and y.tolist() == [2, 4, 6, 8, 10, 12]
    assert started(z + 0)  # out of the context, results start again
    core = dd.arange(6, split=0, comm=comm) + 1
    assert not started(core)  # the core stays lazy
    assert not started(ht.asarray(core))  # sharing a core array does not start it


def test_a_tasks_error_surfaces_at_the_next_use_or_at_the_call_when_blocking(comm_of):
    comm = comm_of(2)
    x = ht.arange(4, split=0, comm=comm, dtype=ht.float32)
    bad = x.map_blocks(_fail, dtype=np.float32)  # returns at once: the error is in a task
    with pytest.raises(ZeroDivisionError, match="a task failed"):
        bad.numpy()
    with ht.blocking(), pytest.raises(ZeroDivisionError, match="a task failed"):
        x.map_blocks(_fail, dtype=np.float32)
    with pytest.raises(ZeroDivisionError, match="a task failed"):
        ht.wait(x, x.map_blocks(_fail, dtype=np.float32))
    with pytest.raises(TypeError, match="argument 1 of `wait` must be a DNDarray, got list"):
        ht.wait(x, [1])
    # argument errors are raised at the call in every mode, changing nothing
    with pytest.raises(ValueError, match="`out` of `add` must have shape"):
        ht.add(x, 1, out=ht.zeros(3, comm=comm))
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_blocking_waits_for_the_work(comm_of):
    comm = comm_of(2)
    x = ht.arange(4, split=0, comm=comm, dtype=ht.float64)

    def slow(block):
        time.sleep(0.3)
        return block + 1

    with ht.blocking():
        assert ht.evaluation_mode() == "wait"
        t0 = time.perf_counter()
        y = x.map_blocks(slow, dtype=np.float64)
        waited = time.perf_counter() - t0
    assert waited >= 0.3 and y.tolist() == [1.0, 2.0, 3.0, 4.0]
    futures = list(y.to_dask().__dask_graph__().values())
    assert all(f.status == "finished" for f in futures)


def test_a_loop_of_updates_keeps_worker_memory_and_the_graph_bounded(client, comm_of):
    comm = comm_of(3)
    x = ht.zeros((300, 40), split=0, dtype=ht.float64, comm=comm)
    x += 1
    ht.wait(x)
    before = worker_keys(client)
    for _ in range(100):
        x += 1
        x = x * 1.0
    ht.wait(x)
    assert len(x.to_dask().__dask_graph__()) == comm.size  # the graph is the chunks
    deadline = time.monotonic() + 30
    while worker_keys(client) > before and time.monotonic() < deadline:
        time.sleep(0.2)  # releases reach the workers asynchronously
    assert worker_keys(client) <= before
    np.testing.assert_array_equal(x.numpy(), np.full((300, 40), 101.0))
