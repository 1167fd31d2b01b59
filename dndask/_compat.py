"""The one seam to Dask's internals: every private dask or distributed name dndask uses.

No other dndask module imports an underscore name from dask or distributed
(``tests/test_compat.py`` checks the imports, and pins the behaviour of each
name used here, so that a Dask release that changes one fails there first).
Public APIs are used wherever one exists; each private use below says why it
is needed. The range of releases tested is pinned in ``pyproject.toml``;
docs/dask-versions.md says how to raise it.

- Task graphs: ``Task``, ``TaskRef``, ``Alias``, ``List`` (dask's task spec),
  and :class:`SliceTask` (a slice that Dask's linear fusion leaves alone, for
  users who compute a DNDarray's dask array through Dask's own optimization;
  dndask itself submits its graphs unfused, see :mod:`dndask._compute`).
- Optimization: :func:`install_array_optimizer` sets dask's ``array_optimize``
  option, which ``dask.array.Array.__dask_optimize__`` consults (a
  ``globalmethod``; the key is not documented as public).
- Arrays: :func:`new_array` builds a ``dask.array.Array`` from a graph, with
  or without ``array.query-planning``, under the graph's own name; :func:`keyed`
  names an expression array as its lowered keys are, and :func:`postpersist`
  rebuilds a persisted one under its chunk keys; :func:`concatenate3` and
  :func:`flatten` assemble computed chunks.
- Graph rewriting: :func:`retarget` points a layer's references to some keys at
  other keys, and :func:`substituted` runs a task inside the one that reads it (dask's
  ``convert_legacy_task`` in :func:`as_node`, ``GraphNode.dependencies`` and
  ``GraphNode.substitute``), for :mod:`dndask._fuse`.
- Submission: :func:`named_graph` names a graph for ``Client.get``, so Dask
  does not tokenize every task of a graph that is unique to its call.
- The cluster: :class:`NannyKeepingCluster` (``LocalCluster`` without
  ``SpecCluster``'s close timer for lost workers) and :func:`scheduler_workers`
  (one fresh query of the scheduler's workers).
- Scheduler state, for the lost-worker plugin (``dndask._recovery``):
  task restrictions, the no-worker set, erring a task, and the
  ``"remove-worker"`` event.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Container, Iterable, Iterator, Mapping

import dask
import dask.array as da
import distributed
import numpy as np

# dask has no public task-spec API, but its graphs are made of these nodes:
# linear fusion (``block_fusion``), aliases left by fusion, and references to
# other keys are only expressible through them.
from dask._task_spec import Alias, DataNode, GraphNode, List, Task, TaskRef, convert_legacy_task

# Assembles nested lists of computed blocks into one array, dispatching on the
# chunk type as Dask's own ``finalize`` does; dask exports no public
# equivalent for in-memory blocks (``da.block`` takes dask arrays).
from dask.array.core import concatenate3
from dask.array.utils import meta_from_array
from dask.highlevelgraph import HighLevelGraph, MaterializedLayer
from distributed.deploy.cluster import Cluster
from distributed.protocol import pickle

try:
    # ``Client.get`` wraps a plain graph in this expression, whose name is a
    # token of every task in it unless one is given (``_determ_token``).
    from dask._expr import LLGExpr as _LLGExpr
except ImportError:  # a dask that submits graphs as they are
    _LLGExpr = None

try:
    # Dask's p2p rechunk layer: culled to some of its output chunks, it builds a lone kept
    # chunk of a partial with ``concatenate3`` instead of the shuffle, so one key gets two
    # different tasks in two graphs; :func:`whole_layer_keys` keeps such layers whole.
    from distributed.shuffle._rechunk import P2PRechunkLayer as _P2PRechunkLayer
except ImportError:  # a distributed without it
    _P2PRechunkLayer = None

try:
    # With ``array.query-planning`` on, ``da.Array`` is an expression and takes
    # no graph; dask's only way in is its private ``FromGraph`` expression.
    from dask.array._array_expr._collection import new_collection as _new_collection
    from dask.array._array_expr._io import FromGraph as _FromGraph
except ImportError:  # a dask without array expressions
    _FromGraph = None

__all__ = [
    "Alias",
    "List",
    "NannyKeepingCluster",
    "SliceTask",
    "Task",
    "TaskRef",
    "annotate_workers",
    "as_node",
    "concatenate3",
    "dependencies",
    "elemwise",
    "err_task",
    "flatten",
    "install_array_optimizer",
    "is_loose",
    "keyed",
    "named_graph",
    "named_tasks",
    "new_array",
    "p2p_rechunk",
    "pick_blocks",
    "postpersist",
    "query_planning",
    "removed_worker",
    "retarget",
    "scheduler_workers",
    "set_worker_restrictions",
    "substituted",
    "top_layers",
    "transitions",
    "unrunnable",
    "whole_layer_keys",
    "worker_restrictions",
]


# ---------------------------------------------------------------- task graphs
class SliceTask(Task):
    """A slicing task that Dask must not fuse into its consumer.

    The slice runs on the rank that holds the source chunk (it is pinned
    there), so only the slice travels. Linear fusion would merge it into the
    consumer on the target rank, which would then fetch the whole chunk.
    Dask's ``fuse_linear_task_spec`` asks every node's ``block_fusion``
    (pinned in tests/test_compat.py).

    Examples
    --------
    >>> import operator
    >>> SliceTask("piece", operator.getitem, TaskRef("chunk"), slice(0, 2)).block_fusion
    True
    """

    @property
    def block_fusion(self) -> bool:
        return True


def flatten(nested) -> Iterator:
    """The keys (or values) of a nested list, in order (Dask's ``__dask_keys__`` shape).

    Examples
    --------
    >>> list(flatten([[("x", 0, 0), ("x", 0, 1)], [("x", 1, 0), ("x", 1, 1)]]))
    [('x', 0, 0), ('x', 0, 1), ('x', 1, 0), ('x', 1, 1)]
    """
    if isinstance(nested, list):
        for item in nested:
            yield from flatten(item)
    else:
        yield nested


def as_node(key, node, known: Container):
    """``node`` (the task of ``key``) as Dask reads it: a legacy tuple task becomes a
    ``Task`` whose tuple arguments that are keys of ``known`` are references, anything else
    that is no node a ``DataNode``; nodes and futures (``TaskRef``) stay as they are.

    >>> import operator
    >>> sorted(as_node("b", (operator.neg, ("x", 0)), {("x", 0)}).dependencies)
    [('x', 0)]
    >>> as_node("c", 3, set())
    DataNode(3)
    """
    if isinstance(node, (GraphNode, TaskRef)):
        return node
    node = convert_legacy_task(key, node, known)
    return node if isinstance(node, GraphNode) else DataNode(key, node)


def dependencies(node) -> frozenset:
    """The keys ``node`` (a value of a graph read by :func:`as_node`) needs: none for a
    future or data.

    >>> import operator
    >>> sorted(dependencies(Task("b", operator.neg, TaskRef("a")))), dependencies(DataNode("c", 1))
    (['a'], frozenset())
    """
    return node.dependencies if isinstance(node, GraphNode) else frozenset()


def substituted(node: GraphNode, subs: Mapping, key=None) -> GraphNode:
    """``node`` with each reference to a key of ``subs`` replaced by ``subs[key]``: another
    key, or a node that then runs inside ``node`` (its own key is not a task any more);
    under ``key`` if given. ``node`` itself is not changed.

    >>> import operator
    >>> inner = Task("a", operator.add, 1, 2)
    >>> outer = substituted(Task("b", operator.neg, TaskRef("a")), {"a": inner}, key="c")
    >>> outer.key, sorted(outer.dependencies), outer()
    ('c', [], -3)
    """
    return node.substitute(subs, key=key)


def retarget(tasks: Mapping, subs: Mapping, known: Container) -> dict | None:
    """``tasks`` (one layer, materialized) with each reference to a key of ``subs`` made
    to ``subs[key]``; ``None`` if no task refers to one.

    ``known`` is every key of the graph: a legacy (tuple) task's tuple argument is a
    reference only if it is a key, so the tasks are read as Dask reads them
    (``convert_legacy_task``) before ``GraphNode.substitute``. Futures stay as they are.

    Examples
    --------
    >>> import operator
    >>> new = retarget({"b": (operator.neg, ("x", 0))}, {("x", 0): "y"}, {"b", ("x", 0)})
    >>> sorted(new["b"].dependencies)
    ['y']
    >>> retarget({"b": (operator.neg, 1)}, {("x", 0): "y"}, {"b", ("x", 0)}) is None
    True
    """
    out, changed = {}, False
    for key, node in tasks.items():
        node = as_node(key, node, known)
        if isinstance(node, GraphNode) and not node.dependencies.isdisjoint(subs):
            node, changed = node.substitute(subs), True
        out[key] = node
    return out if changed else None


# ---------------------------------------------------------------- optimization
# ``dask.array.Array.__dask_optimize__`` is ``globalmethod(optimize, key=...)``: a
# function set under this config key replaces dask's array optimization.
_ARRAY_OPTIMIZE = "array_optimize"


def install_array_optimizer(optimize) -> bool:
    """Make ``optimize`` dask's array optimization for the process, unless one is set.

    Returns whether it was installed: a user's own ``array_optimize`` setting wins.
    """
    if dask.config.get(_ARRAY_OPTIMIZE, None) not in (None, optimize):
        return False
    dask.config.set({_ARRAY_OPTIMIZE: optimize})
    return True


# ---------------------------------------------------------------- submission
def whole_layer_keys(graph: HighLevelGraph, layers: Iterable[str]) -> set:
    """Every output key of the layers of ``graph`` that must not be culled in part.

    ``layers`` are the layer names of ``graph`` culled (``HighLevelGraph.cull``
    appends a token to each culled layer's name): a layer counts if it is there.

    Dask's p2p rechunk layer builds a kept output chunk with the shuffle or with
    ``concatenate3`` depending on how many chunks of its partial are kept, so a
    graph culled to some of its outputs gives their keys other tasks than the whole
    layer does; asking for all of them keeps every key's task the same.

    Examples
    --------
    >>> g = HighLevelGraph.from_collections("x", {("x", 0): 1}, ())
    >>> whole_layer_keys(g, ["x"])
    set()
    """
    if _P2PRechunkLayer is None:
        return set()
    kept = list(layers)
    keys: set = set()
    for name, layer in graph.layers.items():
        if not isinstance(layer, _P2PRechunkLayer):
            continue
        if any(n == name or n.startswith(f"{name}-") for n in kept):
            full = _P2PRechunkLayer(
                name=layer.name,
                token=layer.token,
                chunks=layer.chunks,
                chunks_input=layer.chunks_input,
                name_input=layer.name_input,
                disk=layer.disk,
            )
            keys |= full.get_output_keys()
    return keys


def named_tasks(graph) -> set:
    """The keys of ``graph`` that Dask's extensions find by name: every task of a p2p
    rechunk layer (its scheduler plugin looks up ``shuffle-barrier-<id>``, its transfer
    and unpack tasks name the shuffle). Such a task must keep its key and its task.

    Examples
    --------
    >>> named_tasks(HighLevelGraph.from_collections("x", {("x", 0): 1}, ()))
    set()
    """
    if _P2PRechunkLayer is None or not isinstance(graph, HighLevelGraph):
        return set()
    keys: set = set()
    for layer in graph.layers.values():
        if isinstance(layer, _P2PRechunkLayer):
            keys.update(layer)
    return keys


def named_graph(dsk: dict, name: str):
    """``dsk`` as ``Client.get`` submits it, under ``name`` instead of a token of its tasks.

    ``Client.get`` turns a dict into an expression whose name hashes every
    task (milliseconds for a small graph, per call). A graph dndask builds
    for one call has keys unique to that call, so a fresh ``name`` (a uuid)
    is as good a name and costs nothing. Without the expression (an older
    dask) the graph goes as it is.

    Examples
    --------
    >>> graph = named_graph({"x": 1}, "dndask-graph-1")
    >>> isinstance(graph, dict) or graph._name.endswith("dndask-graph-1")
    True
    """
    if _LLGExpr is None:
        return dsk
    return _LLGExpr(dsk, _determ_token=name)


# ---------------------------------------------------------------- arrays
def annotate_workers(graph: HighLevelGraph, workers, keys: set) -> HighLevelGraph:
    """``graph`` with each layer that holds one of ``keys`` annotated ``workers=workers``.

    Dask reads layer annotations off the graph an optimization returns and
    sends them to the scheduler as per-key restrictions; ``workers`` is a
    callable of the key (``[]`` for keys it does not place). The restrictions
    are strict (``allow_other_workers=False``), as those of dndask's own
    submissions: a task waits for its rank's worker even while that worker is
    busy (loose ones let the scheduler run a busy rank's relayout collect on
    another worker), and a lost worker's tasks go to its replacement
    (:class:`dndask._recovery.RankKeeper`, installed by ``ht.init``).
    """
    layers = {}
    for name, layer in graph.layers.items():
        if keys.isdisjoint(layer.keys()):
            layers[name] = layer
        else:
            annotations = {**(layer.annotations or {}), "workers": workers}
            annotations["allow_other_workers"] = False
            layers[name] = MaterializedLayer(dict(layer), annotations=annotations)
    return HighLevelGraph(layers, graph.dependencies)


def query_planning() -> bool:
    """Whether ``dask.array.Array`` is an expression (``array.query-planning`` on)."""
    enabled = getattr(da, "array_expr_enabled", None)  # public, but not yet in dask 2025.1
    return bool(enabled()) if enabled is not None else False


def p2p_rechunk() -> bool:
    """Whether ``rechunk(method="p2p")`` builds a graph for dask arrays here.

    Dask's expression arrays (``array.query-planning`` on) raise
    ``NotImplementedError`` for it when their graph is built, through dask 2026.11 at
    least; relayouts then move through dndask's own graphs instead.

    >>> p2p_rechunk() is not query_planning()
    True
    """
    return not query_planning()


def pick_blocks(array: da.Array, index: tuple) -> da.Array:
    """``array.blocks[index]``: the blocks ``index`` picks, as a dask array.

    ``index`` holds one block number or one slice of block numbers (step 1) per leading
    axis; every axis keeps its dimension, as with dask's ``blocks`` indexer. Dask's
    expression arrays (``array.query-planning`` on) have no such indexer through dask
    2026.11; there the blocks are sliced out by their element ranges: the same elements,
    in the same chunks except that such a slice drops empty ones.

    >>> x = da.arange(10, chunks=((3, 2, 5),))
    >>> y = pick_blocks(x, (slice(1, 3),))
    >>> y.chunks, y.compute().tolist()
    (((2, 5),), [3, 4, 5, 6, 7, 8, 9])
    """
    slices = []
    for axis, pick in enumerate(index):
        bounds = list(itertools.accumulate(array.chunks[axis], initial=0))
        count = len(array.chunks[axis])
        if isinstance(pick, slice):
            start, stop, step = pick.indices(count)
            if step != 1:
                raise ValueError(f"`index` must step by 1 along axis {axis}, got {step}")
            slices.append(slice(bounds[start], bounds[max(stop, start)]))
        else:
            number = operator.index(pick)
            number += count if number < 0 else 0
            if not 0 <= number < count:
                raise ValueError(
                    f"`index` must be in [-{count}, {count}) along axis {axis}, got {pick}"
                )
            slices.append(slice(bounds[number], bounds[number + 1]))
    if not query_planning():
        return array.blocks[index]
    return array[tuple(slices)]


def new_array(graph: Mapping, name: str, chunks: tuple, meta) -> da.Array:
    """The Dask array whose blocks are the keys ``(name, *block index)`` of ``graph``.

    The one place dndask builds a ``dask.array.Array`` from a graph of its own.

    Parameters
    ----------
    graph : mapping
        The whole graph (a ``HighLevelGraph`` with the inputs' layers, or a dict).
    name : str
        The array's name; its blocks are ``(name, i, j, ...)``.
    chunks : tuple of tuple of int
        Block sizes along every axis.
    meta : array-like
        Any array with the chunks' type and dtype (a dask array stands for
        its blocks); reduced to an empty one of ``len(chunks)`` dimensions.

    Returns
    -------
    dask.array.Array

    Examples
    --------
    >>> import numpy as np
    >>> x = new_array({("x", 0): (np.arange, 3)}, "x", ((3,),), np.empty(0, dtype=np.int64))
    >>> x.chunks, x.dtype, x.name
    (((3,),), dtype('int64'), 'x')
    """
    meta = meta_from_array(meta, ndim=len(chunks))
    if not query_planning():
        return da.Array(graph, name, chunks, meta=meta)
    keys = [(name, *idx) for idx in itertools.product(*(range(len(c)) for c in chunks))]
    return _new_collection(_NamedGraph(dict(graph), meta, chunks, keys, name))


def elemwise(op, *args) -> da.Array:
    """``op(*args)`` of dask arrays and scalars, as dask's graph arrays build it.

    ``op`` is a ufunc or an operator that dask applies block by block. Graph arrays put a
    scalar into every block's task, and type it as numpy does (a Python scalar is weak:
    float32 + 1 is float32). Expression arrays (``array.query-planning`` on, dask 2026.11)
    make each scalar a 0-d array with a key of its own: every block fetches it from the
    worker that holds it, and float32 + 1 becomes float64. There the same blocks are built
    with ``da.blockwise``, the scalars inline and the result type numpy's.

    Examples
    --------
    >>> x = da.ones(4, dtype=np.float32, chunks=2)
    >>> y = elemwise(operator.add, x, 1)
    >>> y.dtype, y.compute().tolist()
    (dtype('float32'), [2.0, 2.0, 2.0, 2.0])
    """
    if not query_planning():
        return op(*args)
    scalars = [not isinstance(a, da.Array) for a in args]
    plain = all(np.isscalar(a) for a, s in zip(args, scalars, strict=True) if s)
    if not any(scalars) or not plain:
        return op(*args)
    ndim = max(a.ndim for a in args if isinstance(a, da.Array))
    values = [
        a if s else np.ones((1,) * a.ndim, a.dtype) for a, s in zip(args, scalars, strict=True)
    ]
    with np.errstate(all="ignore"):
        probe = op(*values)  # as graph arrays infer it: one element of each array
    dtype = np.result_type(probe)
    pairs: list = []
    for a, s in zip(args, scalars, strict=True):
        pairs += [a, None] if s else [a, tuple(range(a.ndim))[::-1]]
    first = next(a for a in args if isinstance(a, da.Array))
    meta = meta_from_array(first, ndim=ndim, dtype=dtype)
    return da.blockwise(op, tuple(range(ndim))[::-1], *pairs, dtype=dtype, meta=meta)


def keyed(array: da.Array) -> da.Array:
    """``array``, named as the keys of its blocks are.

    A graph array's name is its blocks' key name. An expression array's
    (``array.query-planning`` on) is its expression's, and lowering it to a graph may name
    the keys otherwise (a concatenate of rechunks lowers to ``rechunk-merge-...`` keys);
    such an array comes back as the lowered graph under the keys' name, which dndask's
    graphs and placement then read.

    Examples
    --------
    >>> x = keyed(da.concatenate([da.ones(2, chunks=1).rechunk(2), da.ones(1)]))
    >>> {key[0] for key in flatten(x.__dask_keys__())} == {x.name}
    True
    """
    if not query_planning() or isinstance(array.expr, _NamedGraph):
        return array
    return new_array(array.__dask_graph__(), _key_name(array), array.chunks, array)


def _key_name(array: da.Array) -> str:
    """The name the keys of ``array``'s blocks carry (its own where it has no block)."""
    first = next(iter(flatten(array.__dask_keys__())), None)
    return first[0] if first is not None else array.name


def postpersist(array: da.Array) -> tuple:
    """``array.__dask_postpersist__()``: the rebuild of ``array`` from its persisted chunks.

    An expression array's own rebuild renames the chunks (a token appended to the name,
    each block an alias of the persisted key); this one keeps them, as dask's graph
    arrays do, so a persisted chunk's key is its chunk key (what placement reads).

    Examples
    --------
    >>> x = da.ones(4, chunks=2).persist(scheduler="sync")
    >>> rebuild, args = postpersist(x)
    >>> y = rebuild(dict(x.__dask_graph__()), *args)
    >>> y.name == x.name, y.chunks
    (True, ((2, 2),))
    """
    if not query_planning() or not isinstance(array, da.Array):
        return array.__dask_postpersist__()
    return new_array, (_key_name(array), array.chunks, meta_from_array(array))


if _FromGraph is not None:

    class _NamedGraph(_FromGraph):
        """dask's ``FromGraph`` expression under the graph's own name.

        dask's appends a token of the whole graph to the name (it tokenizes every task)
        and aliases each block to the graph's key; dndask's names are already unique, and
        its placement and per-rank joins read the chunk keys themselves. A persisted array
        keeps its name over a graph of futures, so every construction makes a new
        expression (dask's singleton cache would return the one of the same name).
        """

        def __init__(self, *args, **kwargs):  # not ``object.__init__``: no cached instance
            super().__init__()

        @property
        def _name(self) -> str:
            return self.operand("name_prefix")

        def _layer(self) -> dict:
            return dict(self.operand("layer"))


def top_layers(array: da.Array) -> tuple[str, ...]:
    """The names of ``array``'s top graph layers: those of any graph built on it.

    ``__dask_layers__()`` of dask's collection protocol; an expression array
    (``array.query-planning`` on) has none, and its name stands for it.

    Examples
    --------
    >>> x = da.ones(4, chunks=2)
    >>> top_layers(x) == (x.name,)
    True
    """
    layers = getattr(array, "__dask_layers__", None)
    return tuple(layers()) if layers is not None else (array.name,)


# ---------------------------------------------------------------- the cluster
class NannyKeepingCluster(distributed.LocalCluster):
    """``LocalCluster`` that never closes a nanny because its worker was lost.

    When a worker is removed, ``SpecCluster._update_worker_status`` arms a
    timer (``distributed.deploy.lost-worker-timeout``) that closes the
    worker's nanny unless a worker of the same name is back by then. This
    class keeps the bookkeeping of the base ``Cluster`` and drops the timer
    (why dndask needs that: ``dndask._runtime.LoopbackCluster``). The method
    is private to distributed and has no public hook.
    """

    def _update_worker_status(self, op, msg):
        if op == "remove":  # the bookkeeping only, without SpecCluster's close timer
            return Cluster._update_worker_status(self, op, msg)
        return super()._update_worker_status(op, msg)


def scheduler_workers(client: distributed.Client) -> dict[str, dict]:
    """Address -> information (``"name"``, ...) of every worker the scheduler knows now.

    One fresh query of the scheduler's ``identity`` handler.
    ``client.scheduler_info()`` is not used: it returns a cache that the
    client's periodic refresh (which asks for no workers) can overwrite
    between the query and the read, so it sometimes lists none.
    """
    return client.sync(client.scheduler.identity, n_workers=-1)["workers"]


# ---------------------------------------------------------------- scheduler state
# The lost-worker plugin runs inside the scheduler and reads and changes its
# task states. distributed documents these attributes (the scheduling-state
# page) but not as a stable API, so every access goes through here.
def worker_restrictions(ts) -> set[str]:
    """The worker addresses the task ``ts`` may run on (empty: anywhere)."""
    return ts.worker_restrictions or set()


def set_worker_restrictions(ts, addresses: Iterable[str]) -> None:
    """Restrict the task ``ts`` to ``addresses``."""
    ts.worker_restrictions = set(addresses)


def is_loose(ts) -> bool:
    """Whether ``ts`` may run elsewhere when its workers are gone (``allow_other_workers``)."""
    return bool(ts.loose_restrictions)


def unrunnable(scheduler) -> list:
    """The task states in the scheduler's ``no-worker`` state."""
    return list(scheduler.unrunnable)


def err_task(scheduler, key, exc: BaseException, stimulus_id: str) -> dict:
    """Err the task ``key`` with ``exc``; returns the recommendations that follow.

    Carry them out with :func:`transitions`.
    """
    return scheduler.transition(key, "erred", stimulus_id, exception=pickle.dumps(exc), cause=key)


def transitions(scheduler, recommendations: dict, stimulus_id: str) -> None:
    """Carry out the scheduler's ``recommendations``."""
    scheduler.transitions(recommendations, stimulus_id)


def removed_worker(topic: str, msg) -> tuple[str, tuple] | None:
    """The worker and its lost scattered keys, if ``msg`` is the ``"remove-worker"`` event.

    The scheduler logs the event on topic ``"all"`` when a worker leaves;
    any other event gives ``None``.

    Examples
    --------
    >>> removed_worker("all", {"action": "remove-worker", "worker": "tcp://w:1",
    ...                        "lost-scattered-tasks": ["k"]})
    ('tcp://w:1', ('k',))
    >>> removed_worker("all", {"action": "add-worker", "worker": "tcp://w:1"}) is None
    True
    """
    if topic != "all" or not isinstance(msg, dict) or msg.get("action") != "remove-worker":
        return None
    return msg.get("worker"), tuple(msg.get("lost-scattered-tasks", ()))
