"""The seam to Dask's internals: the private behaviour dndask relies on, pinned.

``dndask/_compat.py`` is the only module that may touch a private dask or
distributed name; the first test enforces that on the source. Every other test
pins one behaviour of a private name ``_compat`` uses, so a Dask release that
changes it fails here, loudly, rather than silently moving whole chunks.
"""

from __future__ import annotations

import ast
import operator
import shutil
import subprocess
import time
from pathlib import Path

import dask
import dask.array as da
import distributed
import numpy as np
import pytest
import torch
from conftest import NEEDS_P2P, holders, received_bytes
from packaging.version import Version

import dndask as ht
from dndask import _compat, _compute, _layout

PACKAGE = Path(ht.__file__).parent
QUERY_PLANNING = _compat.query_planning()  # `make test-dask-next` runs this file with it on
# distributed 2026.11 submits a named expression under its name (2026.8 did not)
NAMED_EXPRESSIONS = Version(distributed.__version__) >= Version("2026.11")
# attributes of Dask objects that only _compat may touch
PRIVATE_ATTRIBUTES = {
    "_meta",
    "_update_worker_status",
    "identity",
    "loose_restrictions",
    "transition",
    "transitions",
    "unrunnable",
    "worker_restrictions",
}
INTERNAL_MODULES = {"dask.core"}  # dask's graph utilities: no public contract


def _private_uses(path: Path) -> list[str]:
    """Each private dask/distributed import or attribute in ``path``, as ``line: text``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []

    def private_module(module: str) -> bool:
        parts = module.split(".")
        if parts[0] not in ("dask", "distributed"):
            return False
        return any(p.startswith("_") for p in parts) or module in INTERNAL_MODULES

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [
                f"{node.lineno}: import {a.name}" for a in node.names if private_module(a.name)
            ]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [a.name for a in node.names]
            if private_module(node.module):
                found.append(f"{node.lineno}: from {node.module} import {', '.join(names)}")
            elif node.module.split(".")[0] in ("dask", "distributed"):
                bad = [n for n in names if n.startswith("_")]
                if node.module == "dask.array.core":  # only what dask.array exports
                    bad += [n for n in names if not hasattr(da, n) and n != "normalize_chunks"]
                if bad:
                    found.append(f"{node.lineno}: from {node.module} import {', '.join(bad)}")
        elif isinstance(node, ast.Attribute) and node.attr in PRIVATE_ATTRIBUTES:
            found.append(f"{node.lineno}: .{node.attr}")
    return found


def test_only_compat_touches_private_dask_names():
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "_compat.py":
            continue
        uses = _private_uses(path)
        if uses:
            offenders[str(path.relative_to(PACKAGE.parent))] = uses
    assert offenders == {}, f"private dask/distributed names outside dndask/_compat.py: {offenders}"
    # the checker does find them: _compat itself has each kind
    uses = " ".join(_private_uses(PACKAGE / "_compat.py"))
    for needle in ("dask._task_spec", ".worker_restrictions", "._update_worker_status"):
        assert needle in uses


@pytest.mark.skipif(shutil.which("grep") is None, reason="needs grep")
def test_the_shared_grep_finds_nothing_outside_compat():
    pattern = (
        r"from (dask|distributed)(\.[a-z_]+)*\._[a-z]|import (dask|distributed)(\.[a-z_]+)*\._[a-z]"
        r"|dask\._task_spec"
    )
    hits = subprocess.run(
        ["grep", "-rlE", pattern, str(PACKAGE), "--include=*.py"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    assert [h for h in hits if not h.endswith("_compat.py")] == []
    assert any(h.endswith("_compat.py") for h in hits)


# ---------------------------------------------------------------- fusion
def _chain(middle: type):
    """``src -> piece -> out``: a linear chain whose middle node is of type ``middle``."""
    src, piece, out = ("src", 0), ("piece", 0), ("out", 0)
    dsk = {
        src: _compat.Task(src, np.arange, 6),
        piece: middle(piece, operator.getitem, _compat.TaskRef(src), slice(0, 2)),
        out: _compat.Task(out, np.negative, _compat.TaskRef(piece)),
    }
    return _compat.new_array(dsk, "out", ((2,),), np.empty(0, dtype=np.int64)), dsk


def test_linear_fusion_leaves_a_slice_task_alone():
    x, before = _chain(_compat.SliceTask)
    (optimized,) = dask.optimize(x)
    graph = dict(optimized.__dask_graph__())
    # the slice is its own task (it runs where the source is), nothing fused
    assert isinstance(graph[("piece", 0)], _compat.SliceTask)
    if QUERY_PLANNING:  # the expression adds its renamed output keys
        assert set(before) < set(graph)
    else:
        assert set(graph) == set(before)
    np.testing.assert_array_equal(optimized.compute(scheduler="sync"), -np.arange(2))


def test_linear_fusion_fuses_a_plain_task_and_leaves_an_alias():
    """The control: without the hook the chain fuses; its last key aliases the new one.

    (Array expressions do no low-level fusion at all: nothing fuses there.)
    """
    x, before = _chain(_compat.Task)
    (optimized,) = dask.optimize(x)
    graph = dict(optimized.__dask_graph__())
    if QUERY_PLANNING:
        assert ("piece", 0) in graph and set(before) < set(graph)
        return
    assert ("piece", 0) not in graph
    alias = graph[("out", 0)]
    assert isinstance(alias, _compat.Alias)
    assert alias.target not in before and alias.target in graph
    np.testing.assert_array_equal(optimized.compute(scheduler="sync"), -np.arange(2))


def _pair(a, b):
    return (a, b)


def test_retarget_reads_legacy_and_new_tasks_as_dask_does(client):
    """References to a key, in a legacy tuple task or a task-spec node, point at another key;
    a tuple that is no key of the graph stays data; Dask runs the result."""
    held = client.scatter(5, hash=False)  # stands for a per-rank result under its own key
    known = {("x", 0), ("y", 0), ("z", 0), held.key}
    tasks = {
        ("y", 0): (_pair, ("x", 0), ("q", 0)),  # ("q", 0) is no key of the graph: data
        ("z", 0): _compat.Task(("z", 0), operator.mul, _compat.TaskRef(("x", 0)), 3),
    }
    new = _compat.retarget(tasks, {("x", 0): held.key}, known)
    assert new[("y", 0)].dependencies == new[("z", 0)].dependencies == {held.key}
    assert _compat.retarget({("z", 0): (operator.neg, 2)}, {("x", 0): held.key}, known) is None
    got = client.get({**new, held.key: held}, [("y", 0), ("z", 0)])
    assert got == [(5, ("q", 0)), 15]


def test_array_optimizer_replaces_dask_array_optimization():
    """dask arrays consult the ``array_optimize`` option: dndask's hook rests on it."""
    x, before = _chain(_compat.Task)
    seen = []

    def mine(dsk, keys, **kwargs):
        seen.append(list(keys))
        return dsk

    with dask.config.set(array_optimize=mine):  # the key install_array_optimizer sets
        (optimized,) = dask.optimize(x)
    if QUERY_PLANNING:
        # an expression array optimizes itself and consults no such option (dask 2026.11):
        # dndask's optimization then runs only in dndask's own submissions
        # (docs/dask-versions.md); a dask that consults it again fails here
        assert not seen
        return
    assert seen and dict(optimized.__dask_graph__()).keys() >= before.keys()
    (fused,) = dask.optimize(x)  # outside, dndask's installed hook: a plain graph still fuses
    if not QUERY_PLANNING:
        assert ("piece", 0) not in dict(fused.__dask_graph__())


def test_install_array_optimizer_keeps_a_users_own_setting(comm_of):
    def users(dsk, keys, **kwargs):
        return dsk

    ht.arange(3, split=0, comm=comm_of(1))  # the first DNDarray installs dndask's

    with dask.config.set(array_optimize=users):
        assert _compat.install_array_optimizer(lambda dsk, keys, **kw: dsk) is False
        assert dask.config.get("array_optimize") is users
    # dndask's own is installed, and installing it again is a no-op
    assert dask.config.get("array_optimize") is _compute.array_optimize
    assert _compat.install_array_optimizer(_compute.array_optimize) is True


@pytest.mark.xfail(
    QUERY_PLANNING and not NAMED_EXPRESSIONS,
    strict=True,
    reason="array expressions rename the blocks, so placement misses them (docs/dask-versions.md)",
)
def test_named_graph_runs_under_its_name_without_tokenizing(client):
    x, y = f"named-x-{time.time_ns()}", f"named-y-{time.time_ns()}"
    dsk = {x: _compat.Task(x, np.arange, 3), y: _compat.Task(y, np.sum, _compat.TaskRef(x))}
    graph = _compat.named_graph(dsk, "dndask-named-test")
    if not isinstance(graph, dict):  # an expression named as given: its tasks are not hashed
        assert graph._name.endswith("dndask-named-test")
    assert client.get(graph, y) == 3


def test_redistribute_moves_only_the_slice_not_the_chunk(client, comm_of):
    """End to end: one row changes owner, and exactly one row's bytes travel."""
    comm = comm_of(2)
    row = 2000  # float64: 16000 bytes a row; a whole chunk is 4 rows
    a = ht.random.rand(8, row, dtype=ht.float64, split=0, comm=comm).persist(wait=True)
    target = a.lshape_map
    target[:, 0] = torch.tensor([3, 5])
    since = time.time()
    b = a.redistribute(target_map=target).persist(wait=True)
    assert received_bytes(client, since) == _layout.moved_rows((4, 4), (3, 5)) * row * 8
    assert holders(client, b) == [(w,) for w in comm.workers]


# ---------------------------------------------------------------- arrays
@pytest.mark.parametrize(
    "index", [(0,), (2,), (-1,), (slice(1, 3),), (slice(None),), (1, 0), (slice(0, 1), 0)]
)
def test_pick_blocks_picks_the_elements_of_dasks_blocks_indexer(index):
    """Pins ``pick_blocks``: dask's ``blocks`` indexer where dask has one, else the same
    elements sliced out (expression arrays: query planning on)."""
    g = np.arange(40).reshape(10, 4)
    x = da.from_array(g, chunks=((3, 0, 7), (4,)))
    picked = _compat.pick_blocks(x, index)
    bounds = [0, 3, 3, 10]
    rows = index[0]
    first, last = rows.indices(3)[:2] if isinstance(rows, slice) else (rows % 3, rows % 3 + 1)
    np.testing.assert_array_equal(picked.compute(), g[bounds[first] : bounds[last]])
    if not QUERY_PLANNING:
        assert picked.chunks == x.blocks[index].chunks and picked.name == x.blocks[index].name
    with pytest.raises(ValueError, match=r"`index` must be in \[-3, 3\) along axis 0, got -4"):
        _compat.pick_blocks(x, (-4,))
    with pytest.raises(ValueError, match="`index` must step by 1 along axis 0, got 2"):
        _compat.pick_blocks(x, (slice(0, 3, 2),))


def test_new_array_has_the_given_blocks_chunks_and_meta():
    chunks = ((2, 0, 3), (4,))
    dsk = {("y", i, 0): (np.full, (n, 4), i, np.float32) for i, n in enumerate(chunks[0])}
    y = _compat.new_array(dsk, "y", chunks, np.empty((0,), dtype=np.float32))  # meta of other ndim
    assert y.chunks == chunks and y.shape == (5, 4) and y.dtype == np.float32
    assert type(da.utils.meta_from_array(y)) is np.ndarray and da.utils.meta_from_array(y).ndim == 2
    keys = list(_compat.flatten(y.__dask_keys__()))
    assert keys == [(y.name, i, 0) for i in range(3)]
    assert y.name == "y"  # also as an expression: the graph's own name, no alias per block
    expected = np.concatenate([np.full((n, 4), i, np.float32) for i, n in enumerate(chunks[0])])
    np.testing.assert_array_equal(y.compute(scheduler="sync"), expected)
    # a dask array stands for its blocks' type; the copy shares the graph
    z = _compat.new_array(y.dask, y.name, y.chunks, y)
    assert z.dtype == y.dtype and z.chunks == y.chunks
    assert z.name == y.name


def test_elemwise_puts_scalars_into_the_blocks_and_types_them_as_numpy():
    """Graph arrays put a scalar operand into every block's task, typed as numpy types a
    Python scalar (float32 + 1 is float32). dask's expression elemwise makes it a 0-d array
    with a key of its own, typed as an int64 array (float64): the seam ``elemwise`` covers."""
    x = da.ones((4, 3), dtype=np.float32, chunks=(2, 3))
    own = x + 1
    assert own.dtype == (np.float64 if QUERY_PLANNING else np.float32)
    names = {k[0] if isinstance(k, tuple) else k for k in dict(own.__dask_graph__())}
    assert len(names) == (3 if QUERY_PLANNING else 2)  # x, the sum (and the scalar's array)
    for op, args, expected in [
        (operator.add, (x, 1), np.full((4, 3), 2, np.float32)),
        (operator.mul, (2.5, x), np.full((4, 3), 2.5, np.float32)),
        (np.power, (x, 2), np.ones((4, 3), np.float32)),
        (operator.truediv, (x, x), np.ones((4, 3), np.float32)),
        (np.add, (x, np.float64(1)), np.full((4, 3), 2, np.float64)),  # a numpy scalar is typed
        (np.add, (x[:1], x), np.full((4, 3), 2, np.float32)),  # a broadcast row
    ]:
        y = _compat.elemwise(op, *args)
        assert y.dtype == expected.dtype and y.chunks == x.chunks
        graph = dict(y.__dask_graph__())
        assert {k[0] if isinstance(k, tuple) else k for k in graph} - {x.name} <= {y.name} | {
            a.name for a in args if isinstance(a, da.Array)
        }
        got = y.compute(scheduler="sync")
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


def test_keyed_names_an_array_as_its_blocks_keys():
    """dndask builds graphs on ``(x.name, *index)``: an expression array's name is its
    expression's, which lowering may not give its keys (a concatenate of rechunks lowers to
    ``rechunk-merge-...`` keys); ``keyed`` gives the array under its keys' name."""
    parts = [np.arange(8.0).reshape(4, 2), np.zeros((0, 2)), np.ones((2, 2))]
    x = da.concatenate([da.from_array(p, chunks=1).rechunk(p.shape) for p in parts])
    names = {key[0] for key in _compat.flatten(x.__dask_keys__())}
    if QUERY_PLANNING:
        assert names != {x.name}  # the seam: a dask that names them alike fails here
    else:
        assert names == {x.name}
    y = _compat.keyed(x)
    assert {key[0] for key in _compat.flatten(y.__dask_keys__())} == {y.name}
    assert y.chunks == x.chunks and y.dtype == x.dtype
    np.testing.assert_array_equal(y.compute(scheduler="sync"), np.concatenate(parts))
    assert _compat.keyed(y) is y
    assert (_compat.keyed(x) is x) == (not QUERY_PLANNING)


def test_postpersist_keeps_the_chunk_keys_of_a_persisted_array():
    """Dask's own rebuild of a persisted expression array renames it (a token appended, each
    block an alias); ``postpersist``'s keeps the name, in both modes, as placement needs."""
    y = _compat.new_array({("p", i): (np.full, 2, i) for i in range(3)}, "p", ((2,) * 3,), 0)
    held = {("p", i): np.full(2, i) for i in range(3)}  # what persist would hold
    rebuild, args = _compat.postpersist(y)
    z = rebuild(held, *args)
    assert z.name == "p" and list(_compat.flatten(z.__dask_keys__())) == list(held)
    np.testing.assert_array_equal(z.compute(scheduler="sync"), np.repeat(np.arange(3), 2))
    own, own_args = y.__dask_postpersist__()
    assert (own(held, *own_args).name == "p") is not QUERY_PLANNING


def test_top_layers_name_the_layers_a_graph_built_on_the_array_contains():
    x = da.ones((4, 6), chunks=(2, 3))
    y = (x + 1).sum(axis=0)
    assert _compat.top_layers(x) == (x.name,)
    if QUERY_PLANNING:  # an expression array has no __dask_layers__: its keys carry the name
        assert set(_compat.top_layers(x)) <= {key[0] for key in y.__dask_graph__()}
    else:  # dask's collection protocol
        assert _compat.top_layers(y) == tuple(y.__dask_layers__())
        assert set(_compat.top_layers(x)) <= set(y.__dask_graph__().layers)


def test_concatenate3_and_flatten_assemble_nested_blocks():
    blocks = [[np.full((2, c), 10 * r + c) for c in (1, 3)] for r in range(3)]
    np.testing.assert_array_equal(_compat.concatenate3(blocks), np.block(blocks))
    x = da.ones((4, 6), chunks=(2, 3))
    assert list(_compat.flatten(x.__dask_keys__())) == [
        (x.name, i, j) for i in range(2) for j in range(2)
    ]
    assert list(_compat.flatten(("x", 0))) == [("x", 0)]  # a key, not a container


# ---------------------------------------------------------------- cluster
def test_scheduler_workers_is_a_fresh_list_of_every_worker(client, comm):
    info = _compat.scheduler_workers(client)
    assert set(info) == set(comm.workers)
    assert all("name" in w and w["nthreads"] == 1 for w in info.values())


def _inc(x):
    return x + 1


def _task_state(dask_scheduler, key):
    ts = dask_scheduler.tasks.get(key)
    if ts is None:
        return None
    return (
        ts.state,
        ts in _compat.unrunnable(dask_scheduler),
        sorted(_compat.worker_restrictions(ts)),
        _compat.is_loose(ts),
    )


def _rewrite_and_err(dask_scheduler, key, address, message):
    ts = dask_scheduler.tasks[key]
    _compat.set_worker_restrictions(ts, [address])
    rewritten = sorted(_compat.worker_restrictions(ts))
    stimulus = f"test-compat-{key}"
    recommendations = _compat.err_task(dask_scheduler, key, RuntimeError(message), stimulus)
    _compat.transitions(dask_scheduler, recommendations, stimulus)
    return rewritten, dask_scheduler.tasks[key].state


def test_scheduler_state_calls_of_the_lost_worker_plugin():
    """Dask's own no-worker state: on an in-process scheduler without dndask's plugin.

    (The plugin fails a task pinned to an address its cluster never had at
    once, so the session cluster would never show the state.)
    """
    nobody = "tcp://127.0.0.1:9"  # no worker listens there
    with (
        distributed.LocalCluster(
            n_workers=1, processes=False, threads_per_worker=1, host="127.0.0.1", protocol="tcp",
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster, set_as_default=False) as client,
    ):  # fmt: skip
        future = client.submit(_inc, 1, workers=[nobody], allow_other_workers=False, pure=False)
        deadline = time.monotonic() + 30
        while (state := client.run_on_scheduler(_task_state, key=future.key)) is None or (
            state[0] != "no-worker"
        ):
            assert time.monotonic() < deadline, f"the task never reached no-worker: {state}"
            time.sleep(0.05)
        assert state == ("no-worker", True, [nobody], False)
        rewritten, after = client.run_on_scheduler(
            _rewrite_and_err, key=future.key, address="tcp://127.0.0.1:10", message="pinned nowhere"
        )
        assert rewritten == ["tcp://127.0.0.1:10"] and after == "erred"
        with pytest.raises(RuntimeError, match="pinned nowhere"):
            future.result(timeout=30)


def _wait_until(condition, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


@pytest.mark.parametrize("keeps", [False, True], ids=["LocalCluster", "NannyKeepingCluster"])
def test_a_lost_worker_event_and_spec_clusters_close_timer(keeps):
    """SpecCluster closes a lost worker's entry after ``lost-worker-timeout``; ours keeps it.

    The same loss logs the ``"remove-worker"`` event the plugin reads: the
    worker and the scattered keys lost with it. (An in-process cluster of
    its own: the test loses its only worker.)
    """
    cls = _compat.NannyKeepingCluster if keeps else distributed.LocalCluster
    with dask.config.set({"distributed.deploy.lost-worker-timeout": "50ms"}):
        cluster = cls(
            n_workers=1,
            processes=False,
            threads_per_worker=1,
            host="127.0.0.1",
            protocol="tcp",
            dashboard_address=None,
        )
        try:
            with distributed.Client(cluster, set_as_default=False) as client:
                [data] = client.scatter([123])
                name = next(iter(cluster.workers))
                address = cluster.workers[name].address
                cluster.sync(cluster.workers[name].close)
                _wait_until(lambda: not cluster.scheduler_info["workers"], "the cluster's remove")
                if keeps:
                    time.sleep(0.5)  # ten timeouts
                    assert name in cluster.workers
                else:
                    _wait_until(lambda: name not in cluster.workers, "SpecCluster's close timer")
                events = [_compat.removed_worker("all", msg) for _, msg in client.get_events("all")]
                assert (address, (data.key,)) in events
                assert _compat.removed_worker(address, {"action": "remove-worker"}) is None
        finally:
            cluster.close()


def test_p2p_rechunk_says_whether_dask_builds_the_p2p_rechunk():
    """Pins ``p2p_rechunk``: dask's expression arrays raise when the p2p graph is built."""
    x = da.ones((6, 8), chunks=((2, 2, 2), (8,)))
    try:
        x.rechunk(((6,), (3, 3, 2)), method="p2p").__dask_graph__()
    except NotImplementedError:
        built = False
    else:
        built = True
    assert _compat.p2p_rechunk() is built


@NEEDS_P2P
def test_p2p_rechunk_builds_a_lone_kept_chunk_another_way_so_it_stays_whole():
    """Pins why ``whole_layer_keys`` exists: culled to one chunk, the p2p layer concatenates."""
    x = da.ones((6, 8), chunks=((2, 2, 2), (8,)))
    y = x.rechunk(((6,), (3, 3, 2)), method="p2p")
    graph, first = y.__dask_graph__(), (y.name, 0, 0)
    whole = dict(graph)[first]
    culled = graph.cull({first})
    alone = dict(culled)[first]
    assert whole.dependencies != alone.dependencies  # the same key, two different tasks
    assert _compat.whole_layer_keys(graph, culled.layers) == set(_compat.flatten(y.__dask_keys__()))
    assert _compat.whole_layer_keys(x.__dask_graph__(), x.__dask_graph__().layers) == set()


def test_a_substituted_node_runs_inside_the_task_that_reads_it(client):
    """Pins ``as_node``, ``dependencies`` and ``substituted`` (``dndask._fuse``): a legacy
    task is read with its references, a node put in for a reference runs inside the reader
    (its key is no dependency any more), the reader can take a new key, and the workers run
    the nested task as Dask's own ``Task.__call__`` does."""
    known = {("x", 0), ("y", 0)}
    x = _compat.as_node(("x", 0), (operator.add, 1, 2), known)
    y = _compat.as_node(("y", 0), (operator.neg, ("x", 0)), known)
    assert _compat.dependencies(y) == {("x", 0)} and _compat.dependencies(x) == frozenset()
    fused = _compat.substituted(y, {("x", 0): x}, key="y-call")
    assert fused.key == "y-call" and _compat.dependencies(fused) == frozenset()
    assert y.key == ("y", 0) and _compat.dependencies(y) == {("x", 0)}  # y itself unchanged
    held = client.scatter(4, hash=False)
    assert _compat.dependencies(held) == frozenset()  # a future is data
    z = _compat.substituted(
        _compat.Task("z", operator.mul, _compat.TaskRef("q"), 2), {"q": held.key}
    )
    assert client.get({"y-call": fused, "z": z, held.key: held}, ["y-call", "z"]) == [-3, 8]


@NEEDS_P2P
def test_named_tasks_are_every_task_of_a_p2p_rechunk_layer():
    """Pins ``named_tasks``: the p2p layer's barrier, transfers and outputs (its plugin finds
    them by name) are all in it; other layers add none."""
    x = da.ones((6, 8), chunks=((2, 2, 2), (8,)))
    y = x.rechunk(((6,), (3, 3, 2)), method="p2p")
    named = _compat.named_tasks(y.__dask_graph__())
    names = {str(k[0] if isinstance(k, tuple) else k) for k in named}
    assert any(n.startswith("shuffle-barrier-") for n in names)
    assert set(_compat.flatten(y.__dask_keys__())) <= named
    assert not named & set(dict(x.__dask_graph__()))
    assert _compat.named_tasks(x.__dask_graph__()) == set()
