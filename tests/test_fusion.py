"""Elementwise chains fuse into one task per rank when the graph is built (issue 26).

An elementwise operation whose operands are unpersisted elementwise results builds one
blockwise layer that runs the whole chain on the leaves' blocks; a reduction over the split
axis then runs that layer inside its per-rank partials. Placement is one rule per array
(``dndask._placement``), so a long chain keeps a bounded placement per array. Values are
checked against numpy on every split, 1-5 ranks and empty ranks; where tasks ran is read
from the workers' task stream.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import time

import dask
import distributed
import numpy as np
import pytest
from conftest import holders, layouts, values_of

import dndask as ht
from dndask import _compute, _ops


def chain(x):
    """Ten elementwise operations with scalars (the benchmark's chain, without the sum)."""
    y = x * 1.5
    y = y + 2.0
    y = y - x
    y = y / 3.0
    y = y * y
    y = abs(y - 0.25)
    y = y + x
    y = y * 0.5
    y = y - 1.0
    return y * y


def tasks_submitted(s, *inputs) -> list:
    """The keys of the graph dndask submits for ``s``, less the persisted ``inputs``' chunks."""
    graph, _ = _compute._graph_of(s.to_dask())
    held = {key for a in inputs for key in a._chunk_keys()}
    return [key for key in dict(graph) if key not in held]


# tracemalloc counts every thread's allocations: in this process the client's and the
# embedded scheduler's event loop allocate in bursts after a compute (up to half of this
# test's block was seen), so the task's peak is measured in a child with one thread.
_TRACED_CALL = """
import pickle, sys, tracemalloc
fn, args = pickle.load(sys.stdin.buffer)
tracemalloc.start()
got = fn(*args)
peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
pickle.dump((got, peak), sys.stdout.buffer)
"""


def traced_peak(fn, *args) -> tuple:
    """``fn(*args)`` and the peak of the memory it allocated, run in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", _TRACED_CALL],
        input=pickle.dumps((fn, args)),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    return pickle.loads(done.stdout)


def data(shape, dtype, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(dtype)


def nonempty(a) -> int:
    return 1 if a.split is None else sum(1 for c in a.lshape_map[:, a.split].tolist() if c)


@pytest.mark.parametrize(("shape", "split", "n"), layouts([(3, 4), (9, 5)]))
def test_the_chain_and_its_sum_are_one_task_per_rank(comm_of, shape, split, n):
    dtype = np.float32 if n % 2 else np.float64
    g = data(shape, dtype)
    x = ht.array(g, split=split, comm=comm_of(n)).persist_(wait=True)
    y = chain(x)
    s = y.sum()
    ranks = 1 if split is None else n  # an empty rank's chunk is a task too (it is empty)
    assert len(tasks_submitted(y, x)) == ranks
    # one partial per non-empty rank and the aggregate; split None: the chunk, its sum
    assert len(tasks_submitted(s, x)) == (2 if split is None else nonempty(x) + 1)
    assert y.dtype == dtype and y.split == split
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    got_y, got_s = dask.compute(y, s)
    np.testing.assert_allclose(got_y, chain(g), rtol=rtol)
    np.testing.assert_allclose(got_s, chain(g).sum(dtype=dtype), rtol=rtol)
    np.testing.assert_allclose(float(s), chain(g).sum(dtype=dtype), rtol=rtol)


@pytest.mark.parametrize("split", [0, 1])
def test_fused_tasks_run_on_their_ranks(client, comm_of, split):
    comm = comm_of(4)
    x = ht.array(data((8, 6), np.float64), split=split, comm=comm).persist_(wait=True)
    y = chain(x) + ht.sqrt(abs(x))
    s = y.sum()
    with distributed.get_task_stream(client) as stream:
        got = y.numpy()
    # a compute runs each rank's chain and its copy to the driver as one task, under a
    # name of that call only: (dndask-result-<token>, r) for chunk r
    ran = [(t["key"], t["worker"]) for t in stream.data]
    assert all(key[0].startswith("dndask-result-") for key, _ in ran), ran
    assert dict((key[1], worker) for key, worker in ran) == dict(enumerate(comm.workers))
    assert len(ran) == 4
    np.testing.assert_allclose(got, chain(x.numpy()) + np.sqrt(abs(x.numpy())))
    partials = [key for key in tasks_submitted(s, x) if "-partial-" in key[0]]
    assert len(partials) == 4
    with distributed.get_task_stream(client) as stream:
        float(s)
    # each partial runs with the chain inside it, under its name with the call's token
    # appended; the aggregate (placed on rank 0) reads them and runs rank 0's inside it
    ran = {t["key"]: t["worker"] for t in stream.data}
    renamed = {key: worker for key, worker in ran.items() if "-partial-" in key[0]}
    assert {key[0].rpartition("-")[0] for key in renamed} == {partials[0][0]}
    assert {key[1]: worker for key, worker in renamed.items()} == {
        r: comm.workers[r] for r in (1, 2, 3)
    }
    result = [key for key in ran if key[0].startswith("dndask-result-")]
    assert [ran[key] for key in result] == [comm.workers[0]] and len(ran) == 4


@pytest.mark.parametrize("n", [1, 3])
def test_a_compute_after_a_factory_or_a_relayout_runs_one_task_per_rank(client, comm_of, n):
    comm = comm_of(n)
    with distributed.get_task_stream(client) as stream:
        got = (ht.arange(4 * n + 1, split=0, comm=comm) * 3 + 1).numpy()
    np.testing.assert_array_equal(got, np.arange(4 * n + 1) * 3 + 1)
    ran = sorted((t["key"][1], t["worker"]) for t in stream.data)
    assert ran == list(enumerate(comm.workers))  # the chunk, the chain, the copy: one task
    g = data((5, 2 * n + 1), np.float32)
    x = ht.array(g, split=0, comm=comm).persist_(wait=True)
    with distributed.get_task_stream(client) as stream:
        got = (x.resplit(1) + 1).numpy()
    np.testing.assert_array_equal(got, g + 1)
    names = sorted(
        str(t["key"][0] if isinstance(t["key"], tuple) else t["key"]) for t in stream.data
    )
    # a post per rank, the barrier, and each rank's collect with the chain and the copy
    # (on one rank the relayout moves nothing: one task)
    assert len(names) == (2 * n + 1 if n > 1 else 1), names
    assert sum(name.startswith("dndask-result-") for name in names) == n


def test_several_arrays_computed_at_once_share_their_tasks(client, comm_of):
    comm = comm_of(3)
    g = data((7, 4), np.float64)
    x = ht.array(g, split=0, comm=comm).persist_(wait=True)
    y = chain(x)
    arrays = [y, y.sum(), x, y + x, y, ht.arange(5, split=0, comm=comm)]
    with distributed.get_task_stream(client) as stream:
        got = values_of(arrays)  # _compute.compute_many: one submission
    want = [chain(g), chain(g).sum(), g, chain(g) + g, chain(g), np.arange(5)]
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    # one task per rank of each array asked (y once, though asked twice); none for the
    # persisted x, whose chunks are fetched from where they are
    # (and the sum's partials of ranks 1 and 2; rank 0's runs inside the aggregate)
    ran = [str(t["key"][0]) for t in stream.data]
    assert sum(name.startswith("dndask-result-") for name in ran) == 3 + 1 + 3 + 3, ran
    assert sorted(name.split("-")[1] for name in ran if "-partial-" in name) == ["sum"] * 2


@pytest.mark.parametrize("n", [1, 3, 5])
def test_broadcasts_scalars_and_operands_of_another_layout(comm_of, n):
    comm = comm_of(n)
    g = data((5, 4), np.float32)
    x = ht.array(g, split=0, comm=comm).persist_(wait=True)
    row = ht.array(g[:1] + 1, split=None, comm=comm).persist_(wait=True)
    vec = ht.array(g[0] * 2, split=None, comm=comm).persist_(wait=True)
    t = ht.array(g.T.copy(), split=1, comm=comm).persist_(wait=True)
    y = ((x - row) * vec + np.float32(0.5)) / (abs(row) + 1)
    y = ht.maximum(y, -1.0) + np.sin(x) - x * (t.T * 1)  # t.T: another graph, not fused into
    want = ((g - (g[:1] + 1)) * (g[0] * 2) + np.float32(0.5)) / (abs(g[:1] + 1) + 1)
    want = np.maximum(want, -1.0) + np.sin(g) - g * g
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-6)
    # the chain is one layer over x, row, vec and t's transpose
    assert len([k for k in tasks_submitted(y, x, row, vec, t) if k[0] == y.to_dask().name]) == n
    np.testing.assert_allclose(float(ht.sum(y)), want.sum(), rtol=1e-4)


@pytest.mark.parametrize(("shape", "split", "n"), layouts([(5, 3)]))
def test_scalars_before_arrays_keep_their_places_in_the_chain(comm_of, shape, split, n):
    # a scalar operand ahead of an array one (``2.0 * r``) composed into an operation whose
    # other operand is another leaf: the leaves of each composed step are its arrays only
    g = data(shape, np.float64)
    h = data(shape, np.float64, seed=1)
    comm = comm_of(n)
    r = ht.array(g, split=split, comm=comm).persist_(wait=True)
    w = ht.array(h, split=split, comm=comm).persist_(wait=True)
    zero = ht.zeros_like(r)
    y = zero + 2.0 * r  # cg's first update: x + alpha * p
    z = w - (1.0 - 3.0 / (abs(r) + 1.0))
    u = (0.5 * w) * (2.0 - r) + z
    np.testing.assert_allclose(y.numpy(), 2.0 * g)
    np.testing.assert_allclose(z.numpy(), h - (1.0 - 3.0 / (abs(g) + 1.0)))
    np.testing.assert_allclose(u.numpy(), (0.5 * h) * (2.0 - g) + h - (1.0 - 3.0 / (abs(g) + 1.0)))


@pytest.mark.parametrize("n", [2, 4])
def test_a_persisted_intermediate_is_read_in_place(client, comm_of, n):
    g = data((8, 3), np.float64)
    x = ht.array(g, split=0, comm=comm_of(n)).persist_(wait=True)
    b = (x + 1) * 2
    b.persist_(wait=True)
    where = holders(client, b)
    c = ht.exp(b) - b
    assert len(tasks_submitted(c, b)) == n  # c reads b's chunks: b is not recomputed
    np.testing.assert_allclose(c.numpy(), np.exp((g + 1) * 2) - (g + 1) * 2)
    assert holders(client, b) == where  # and they did not move
    # an intermediate computed alone, with the chain, and the chain alone: one key, one task
    d = x * 3
    e = d - 1
    got = dask.compute(d, e)
    np.testing.assert_allclose(got[1], g * 3 - 1)
    np.testing.assert_allclose(e.numpy(), g * 3 - 1)
    np.testing.assert_allclose(d.numpy(), g * 3)


def test_a_long_chain_keeps_a_bounded_placement_and_builds_in_linear_time(comm_of):
    comm = comm_of(3)
    g = np.arange(12.0).reshape(4, 3)
    x = ht.array(g, split=0, comm=comm).persist_(wait=True)
    y = x
    own = []
    for i in range(200):
        y = y + 1 if i % 2 else y * 1.0
        own.append(y._task_ranks.size())
    assert max(own) == 1  # each array holds one rule of its own: its chunks' rank
    assert len(y._task_ranks.flat()) <= 200 + 2  # one per array built, not one per key
    layers = -(-200 // _ops._MAX_FUSED)
    assert len(tasks_submitted(y, x)) == layers * comm.size
    np.testing.assert_allclose(y.numpy(), g + 100)

    def seconds_per_op(start, count):
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            z = start
            for i in range(count):
                z = z + 1 if i % 2 else z * 1.0
            best = min(best, time.perf_counter() - t0)
        return best / count, z

    early, deep = seconds_per_op(x, 50)
    for _ in range(7):  # 350 operations deep
        deep = seconds_per_op(deep, 50)[1]
    late, _ = seconds_per_op(deep, 50)
    assert late < 3 * early, (late, early)  # a quadratic build would grow with the depth


def test_a_fused_task_runs_its_operations_in_order():
    f = _ops.Fused(_ops._Expr(np.subtract, (_ops._Expr(np.exp, (_ops._Leaf(0),)), 2.0)), "sub")
    np.testing.assert_allclose(f(np.arange(3.0)), np.exp(np.arange(3.0)) - 2.0)
    g = _ops.Fused(_ops._Expr(np.subtract, (2.0, _ops._Leaf(1))), "sub")
    np.testing.assert_allclose(g(np.ones(2), np.arange(2.0)), [2.0, 1.0])


CALLS: list[str] = []


def counted_add(a, b):
    """``a + b``, noted in :data:`CALLS` (module level: a pickled task refers to it)."""
    CALLS.append("add")
    return a + b


def test_a_shared_node_of_a_fused_task_runs_once():
    calls = CALLS
    calls.clear()
    y = _ops._Expr(counted_add, (_ops._Leaf(0), 1.0))
    f = _ops.Fused(_ops._Expr(np.multiply, (y, y)), "mul")
    np.testing.assert_array_equal(f(np.arange(3.0)), [1.0, 4.0, 9.0])
    assert calls == ["add"]
    g = pickle.loads(pickle.dumps(f))  # what a worker receives
    np.testing.assert_array_equal(g(np.arange(3.0)), [1.0, 4.0, 9.0])
    assert calls == ["add", "add"]


def test_the_benchmark_chain_runs_each_operation_once_with_one_temporary_block(comm_of):
    # issue 26 at 128 MiB: ``y * y`` composed ``y``'s expression in twice, so the task ran
    # 29 operations for the chain's 11 and held 4 blocks at once (dask.array: 11 tasks,
    # 2 blocks). The task now runs the program of the chain's DAG, each operation once,
    # and writes each step into the temporary block it no longer needs.
    g = data((512, 256), np.float32)
    x = ht.array(g, split=0, comm=comm_of(1)).persist_(wait=True)
    y = chain(x)
    task = y._producer.fn
    block = g.copy()
    got, peak = traced_peak(task, block)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, chain(g), rtol=1e-6)
    np.testing.assert_array_equal(block, g)  # the leaf block is read, never written
    assert peak < 1.5 * g.nbytes, peak / g.nbytes  # one temporary block (numpy's chain: 2)
    # x * 1.5, + 2, - x, / 3, y * y, - 0.25, abs, + x, * 0.5, - 1, y * y
    assert len(task.steps) == 11
    s = y.sum()
    assert s.dtype == np.float32
    np.testing.assert_allclose(float(s), chain(g).sum(dtype=np.float32), rtol=1e-5)
    np.testing.assert_array_equal(x.numpy(), g)  # the persisted chunk is unchanged


@pytest.mark.parametrize(("shape", "split", "n"), layouts([(6, 4)]))
def test_an_intermediate_used_twice_is_computed_once(comm_of, shape, split, n):
    g = data(shape, np.float64)
    x = ht.array(g, split=split, comm=comm_of(n)).persist_(wait=True)
    y = x / 4.0
    for _ in range(12):  # 24 distinct operations: one task a rank (the tree had 2**12 leaves)
        y = y * y - 0.25
    assert len(tasks_submitted(y, x)) == (1 if split is None else n)
    want = g / 4.0
    for _ in range(12):
        want = want * want - 0.25
    np.testing.assert_array_equal(y.numpy(), want)
    a = x * 2.0
    b = a + 1.0
    c = a * 3.0
    d = b - c  # a reaches d through b and through c: one step
    np.testing.assert_array_equal(d.numpy(), (g * 2.0 + 1.0) - (g * 2.0) * 3.0)
    assert len(d._producer.fn.steps) == 4
    np.testing.assert_array_equal(x.numpy(), g)


@pytest.mark.parametrize("n", [1, 3])
def test_operations_that_differ_only_in_a_scalar_stay_apart(comm_of, n):
    # one node per operation: 0.0 and -0.0, 2 and 2.0, True and 1 are different operations
    g = np.array([-0.0, 0.0, 1.0, -2.0, 3.0])
    x = ht.array(g, split=0, comm=comm_of(n)).persist_(wait=True)
    y = 1.0 / (x + 0.0) - 1.0 / (x + -0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = 1.0 / (g + 0.0) - 1.0 / (g + -0.0)
    np.testing.assert_array_equal(y.numpy(), want)  # [inf, nan, 0, 0, 0]: -0.0 kept apart
    i = ht.array(np.arange(-4, 6, dtype=np.int32), split=0, comm=comm_of(n)).persist_(wait=True)
    k = (i + 2) * (i + 2.0) + (i + True) * (i + 1)
    h = np.arange(-4, 6, dtype=np.int32)
    want = (h + 2) * (h + 2.0) + (h + True) * (h + 1)
    assert k.dtype == want.dtype
    np.testing.assert_array_equal(k.numpy(), want)


@pytest.mark.parametrize("n", [2, 4])
def test_steps_that_change_dtype_or_shape_get_fresh_blocks(comm_of, n):
    # a step writes into a temporary only with the same dtype and shape as its result
    h = np.arange(24, dtype=np.int32).reshape(8, 3) - 7
    f = data((8, 3), np.float32)
    comm = comm_of(n)
    i = ht.array(h, split=0, comm=comm).persist_(wait=True)
    x = ht.array(f, split=0, comm=comm).persist_(wait=True)
    w = ht.array(f.astype(np.float64) * 3, split=0, comm=comm).persist_(wait=True)
    row = ht.array(f[:1], split=None, comm=comm).persist_(wait=True)
    y = ((i + 1) * 2 // 3) / 2 + 1  # int32 -> float64
    z = (x * 2) + w  # a float32 temporary, a float64 result
    u = (row + 1) * x - 1  # a (1, 3) temporary, an (8, 3) result
    np.testing.assert_array_equal(y.numpy(), ((h + 1) * 2 // 3) / 2 + 1)
    np.testing.assert_array_equal(z.numpy(), (f * 2) + f.astype(np.float64) * 3)
    np.testing.assert_array_equal(u.numpy(), (f[:1] + 1) * f - 1)
    assert (y.dtype, z.dtype, u.dtype) == (np.float64, np.float64, np.float32)
    for a, want in ((i, h), (x, f), (row, f[:1])):
        np.testing.assert_array_equal(a.numpy(), want)
