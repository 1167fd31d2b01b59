"""A compute's graph fused to one task per rank (dndask._fuse): pure graph rewriting.

The oracle is Dask's own synchronous scheduler run on the graph as it was built: the fused
graph must give the same outputs, run every function as often, keep every key it keeps
with exactly its task, and join only tasks placed on one worker.
"""

from __future__ import annotations

import collections
import random

import pytest
from dask.local import get_sync

from dndask import _fuse
from dndask._compat import Task, TaskRef

CALLS: collections.Counter = collections.Counter()


def traced(name):
    """A function that counts its calls under ``name`` and adds its arguments (plus one)."""

    def run(*args):
        CALLS[name] += 1
        return 1 + sum(args)

    run.__name__ = name
    return run


def random_graph(seed: int, n: int = 40, ranks: int = 3):
    """A random DAG of ``n`` tasks over ``ranks`` workers, some unplaced; its sinks are
    the outputs plus a few requested keys that other tasks read."""
    rng = random.Random(seed)
    graph, where = {}, {}
    for i in range(n):
        key = ("t", i) if rng.random() < 0.7 else f"s{i}"
        inputs = rng.sample(list(graph), k=min(len(graph), rng.choice([0, 1, 1, 1, 2, 3])))
        graph[key] = Task(key, traced(str(key)), *(TaskRef(k) for k in inputs))
        where[key] = None if rng.random() < 0.15 else f"w{rng.randrange(ranks)}"
    read = {dep for node in graph.values() for dep in node.dependencies}
    sinks = [k for k in graph if k not in read]
    extra = rng.sample(sorted(read, key=str), k=min(3, len(read)))
    return graph, sinks + extra, where


def linear(*keys) -> dict:
    """A chain of traced tasks: each of ``keys`` reads the one before it."""
    graph = {}
    for i, key in enumerate(keys):
        graph[key] = Task(key, traced(str(key)), *([TaskRef(keys[i - 1])] if i else []))
    return graph


def run(graph, outputs):
    CALLS.clear()
    values = get_sync(graph, list(outputs))
    return list(values), dict(CALLS)


@pytest.mark.parametrize("seed", range(30))
def test_a_fused_graph_gives_the_same_outputs_and_runs_each_task_once(seed):
    graph, outputs, where = random_graph(seed)
    own_keys = set(random.Random(seed).sample(sorted(graph, key=str), k=4))
    want, calls = run(graph, outputs)
    fused = _fuse.fuse(graph, outputs, where.get, own_keys.__contains__, "tok")
    got, fused_calls = run(fused.graph, fused.outputs)
    assert got == want
    assert fused_calls == calls  # every function ran, and as often
    assert len(fused.outputs) == len(outputs)
    for key, node in fused.graph.items():
        if key in graph:  # a key that stays keeps exactly its task, and its inputs stay too
            assert node is graph[key], key
            assert all(dep in graph for dep in node.dependencies)
        else:  # a new key is unique to the call
            assert "tok" in str(key)
    for key in own_keys:
        assert fused.graph.get(key) is graph[key]
    for key, worker in fused.placement.items():
        assert worker is not None and "tok" in str(key)


def test_a_chain_on_one_worker_is_one_task_and_keeps_its_place():
    graph = {("a", 0): Task(("a", 0), traced("a"))}
    for i in range(1, 6):
        graph[("a", i)] = Task(("a", i), traced(f"a{i}"), TaskRef(("a", i - 1)))
    where = dict.fromkeys(graph, "w1")
    fused = _fuse.fuse(graph, [("a", 5)], where.get, lambda key: False, "tok", wrap=str)
    assert list(fused.graph) == [("dndask-result-tok", 0)] == fused.outputs
    assert fused.placement == {("dndask-result-tok", 0): "w1"}
    assert run(fused.graph, fused.outputs)[0] == ["6"]  # wrap ran inside, on the result


def test_tasks_on_other_workers_or_unplaced_are_not_joined():
    graph = linear("x", "y", "z")
    for where, joined in [
        ({"x": "w0", "y": "w1", "z": "w1"}, {"x"}),  # x runs on w0 and is read on w1
        ({"x": None, "y": None, "z": None}, {"x", "y"}),  # unplaced: Dask places them
        ({"x": "w0", "y": "w0", "z": "w0"}, set()),  # all on w0: one task
    ]:
        fused = _fuse.fuse(graph, ["z"], where.get, lambda key: False, "t")
        names = {str(k).split("-t")[0] for k in fused.graph if k not in fused.outputs}
        assert names == joined, where


def test_a_requested_key_that_others_read_keeps_its_task():
    graph = linear("x", "y", "z")
    where = dict.fromkeys(graph, "w0")
    fused = _fuse.fuse(graph, ["y", "z"], where.get, lambda key: False, "t")
    assert fused.graph["y"] is graph["y"] and fused.graph["x"] is graph["x"]
    assert run(fused.graph, fused.outputs)[0] == run(graph, ["y", "z"])[0] == [2, 3]


def test_the_inputs_of_an_own_task_keep_their_keys():
    graph = linear("x", "post", "out")
    where = dict.fromkeys(graph, "w0")
    fused = _fuse.fuse(graph, ["out"], where.get, {"post"}.__contains__, "t")
    assert fused.graph["post"] is graph["post"] and fused.graph["x"] is graph["x"]
    assert len(fused.graph) == 3  # out runs inside its result; post and x stay


def test_long_chains_are_cut_at_the_depth_limit():
    n = 3 * _fuse.MAX_DEPTH + 5
    graph = {("a", 0): Task(("a", 0), traced("a0"))}
    for i in range(1, n):
        graph[("a", i)] = Task(("a", i), traced(f"a{i}"), TaskRef(("a", i - 1)))
    where = dict.fromkeys(graph, "w0")
    fused = _fuse.fuse(graph, [("a", n - 1)], where.get, lambda key: False, "t")
    assert len(fused.graph) == -(-n // _fuse.MAX_DEPTH)  # ceil(n / depth) tasks
    values, calls = run(fused.graph, fused.outputs)
    assert values == [n] and len(calls) == n
