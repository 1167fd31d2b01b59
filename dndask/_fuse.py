"""One task per rank for a compute: a call's chains fused under names only that call uses.

dndask submits its graphs unfused (:func:`dndask._compute.optimize`): Dask's fusion gives a
key a different task depending on which keys are requested with it, and the scheduler must
never see one key with two tasks. Yet every task is a scheduler round trip: on the loopback
cluster of docs/performance.md, ``(ht.arange(20, split=0) + 1).numpy()`` ran three stages
per rank (the chunk, the sum, the copy to the driver's result), some 10 ms each.

A compute to the driver needs none of its intermediate keys afterwards, so here the chains
of each rank run inside one task whose key is new to the call:

- The requested keys, and every task whose readers all get new keys, get new keys too
  (``dndask-result-<token>``; other keys their name with ``-<token>`` appended): a key
  the scheduler may know keeps exactly its task, so no key ever means two tasks. Kept are
  the requested keys that other tasks read, the tasks that must stay their own (``own``:
  a relayout's posts and barrier, per-rank work whose results must not be rerun, Dask's
  p2p tasks), and everything they read.
- A task with a new key is run inside its one reader when both are placed on the same
  worker. Nothing moves that did not move before, and no task runs twice.
- A joined chain is at most :data:`MAX_DEPTH` tasks deep (the nested tasks run by
  recursion on the worker); a longer one is cut into tasks of that depth.

This module only rewrites graphs (no scheduler); :mod:`dndask._compute` submits them.

>>> import operator
>>> from ._compat import Task, TaskRef
>>> graph = {"x": Task("x", operator.add, 1, 2), "y": Task("y", operator.neg, TaskRef("x"))}
>>> fused = fuse(graph, ["y"], {"x": "w0", "y": "w0"}.get, lambda key: False, "t")
>>> list(fused.graph), fused.outputs, fused.placement
([('dndask-result-t', 0)], [('dndask-result-t', 0)], {('dndask-result-t', 0): 'w0'})
>>> fused.graph[("dndask-result-t", 0)]()  # x runs inside
-3
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from ._compat import Task, TaskRef, as_node, dependencies, substituted

__all__ = ["MAX_DEPTH", "RESULT_PREFIX", "Fused", "fuse"]

MAX_DEPTH = 32  # tasks joined into one, at most, along any chain
RESULT_PREFIX = "dndask-result-"  # the requested keys' new names: dndask-result-<token>, i


class Fused(NamedTuple):
    """A call's graph after :func:`fuse`: its tasks, the new key of each requested key (in
    their order), and the worker of every new key that has one."""

    graph: dict
    outputs: list
    placement: dict


def fuse(
    graph: Mapping,
    outputs: Sequence,
    worker_of: Callable[[object], str | None],
    own: Callable[[object], bool],
    token: str,
    wrap: Callable | None = None,
) -> Fused:
    """``graph`` for one call that wants ``outputs`` (a flat list of distinct keys), each
    rank's chains joined (see the module's docstring).

    ``worker_of(key)`` is where a key is placed (``None``: Dask chooses); ``own(key)``: the
    key's task must stay a task of its own, under its key; ``token`` makes the new keys
    unique to the call; ``wrap``, if given, is applied to every output on its worker.
    """
    known = set(graph)
    nodes = {key: as_node(key, node, known) for key, node in graph.items()}
    wanted = set(outputs)
    readers: dict = {}
    for key, node in nodes.items():
        for dep in dependencies(node):
            if dep in nodes:
                readers.setdefault(dep, []).append(key)

    # A key may get a new name when its task may change and every task that reads it gets
    # a new name too: a key that keeps its name keeps its task exactly (its inputs too).
    movable = set()
    for key in reversed(_inputs_first(nodes)):
        node = nodes[key]
        free = isinstance(node, Task) and not own(key) and not (key in wanted and readers.get(key))
        if free and all(r in movable for r in readers.get(key, ())):
            movable.add(key)
    joined = set()  # tasks that run inside their one reader
    for key in movable - wanted:
        reader = readers.get(key, ())
        worker = worker_of(key)
        if len(reader) == 1 and worker is not None and worker == worker_of(reader[0]):
            joined.add(key)
    _cut_deep_chains(nodes, joined)

    results = [(f"{RESULT_PREFIX}{token}", i) for i in range(len(outputs))]
    new_key = {key: new for key, new in zip(outputs, results, strict=True) if key in movable}
    for key in movable - joined - wanted:
        new_key[key] = _call_key(key, token)

    def built(key):
        node = nodes[key]
        subs = {}
        for dep in dependencies(node):
            if dep in joined:
                subs[dep] = built(dep)
            elif dep in new_key:
                subs[dep] = new_key[dep]
        return substituted(node, subs, key=new_key.get(key)) if subs or key in new_key else node

    out, placement = {}, {}
    for key in nodes:
        if key in joined or (key in wanted and key in movable):
            continue
        out[new_key.get(key, key)] = built(key)
        if key in new_key and worker_of(key) is not None:
            placement[new_key[key]] = worker_of(key)
    for key, new in zip(outputs, results, strict=True):
        if key in movable:
            inner = built(key)
            out[new] = Task(new, wrap, inner) if wrap is not None else inner
        else:
            out[new] = Task(new, wrap or _identity, TaskRef(key))
        if worker_of(key) is not None:
            placement[new] = worker_of(key)
    return Fused(out, results, placement)


def _call_key(key, token: str):
    """``key`` made unique to the call: its name with ``-<token>`` appended (the rest of a
    tuple key kept), so the dashboard and the task stream still show what the task does.

    >>> _call_key(("sum-partial-ab", 2), "t1"), _call_key("merge-cd", "t1")
    (('sum-partial-ab-t1', 2), 'merge-cd-t1')
    """
    if isinstance(key, tuple):
        return (f"{key[0]}-{token}", *key[1:])
    return f"{key}-{token}"


def _identity(value):
    return value


def _inputs_first(nodes: Mapping) -> list:
    """The keys of ``nodes`` in an order where every key comes after the keys it reads."""
    order, seen = [], set()
    for root in nodes:
        stack = [(root, False)]
        while stack:
            key, done = stack.pop()
            if done:
                order.append(key)
            elif key not in seen:
                seen.add(key)
                stack.append((key, True))
                stack.extend((dep, False) for dep in dependencies(nodes[key]) if dep in nodes)
    return order


def _cut_deep_chains(nodes: Mapping, joined: set) -> None:
    """Take out of ``joined`` every task that would sit :data:`MAX_DEPTH` levels deep in
    the task it runs in, so it heads a task of its own (each joined task has one reader:
    the joined tasks under a head form a tree, walked once)."""
    stack = [(key, 0) for key in nodes if key not in joined]
    while stack:
        key, depth = stack.pop()
        for dep in dependencies(nodes[key]):
            if dep not in joined:
                continue
            if depth + 1 >= MAX_DEPTH:
                joined.discard(dep)
                stack.append((dep, 0))
            else:
                stack.append((dep, depth + 1))
