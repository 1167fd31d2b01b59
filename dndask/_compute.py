"""Running graphs: compute to the driver, or persist with every chunk on its rank's worker.

Placement tables and ``wait`` live here; the progress bar that ``wait`` shows
is :mod:`dndask._progress`'s, and what happens when a worker is lost (the
scheduler plugin, kept replicas, errors naming lost ranks) lives in
:mod:`dndask._recovery`.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import os
import threading
import uuid
from collections.abc import Iterator, Mapping, Sequence

import dask
import dask.array as da
import distributed
import numpy as np
from dask.array.optimization import optimize as dask_array_optimize
from dask.array.utils import meta_from_array
from dask.highlevelgraph import HighLevelGraph, MaterializedLayer
from dask.optimization import cull

from . import _progress
from ._compat import (
    annotate_workers,
    concatenate3,
    flatten,
    install_array_optimizer,
    named_graph,
    named_tasks,
    postpersist,
    retarget,
    top_layers,
    whole_layer_keys,
)
from ._fuse import fuse
from ._placement import WorkerTable
from ._recovery import ensure_keeper, keep_replicas, lost_data_explained, rank_bound
from ._transport import is_control
from ._xp import cpu, device_of, to_host


class Placement:
    """Scheduler-side annotation: the worker each key in the table must run on.

    The table places the chunk keys and the dndask-made tasks upstream of them
    (a :class:`~dndask._placement.WorkerTable` read off ``DNDarray._task_ranks``, or a
    dict); other keys, such as Dask's own intermediate tasks, are left free, so Dask
    places them next to their inputs.
    """

    def __init__(self, table: Mapping | WorkerTable):
        self.table = table if isinstance(table, WorkerTable) else dict(table)

    def __call__(self, key) -> list[str]:
        address = self.table.get(key)
        return [address] if address is not None else []


_PROCESS = uuid.uuid4().hex[:16]  # one draw per process; os.urandom is slow on a busy machine
_calls = itertools.count()


def fresh_token() -> str:
    """A name no other call (of this or any process) has used: for one call's graph and keys.

    >>> fresh_token() != fresh_token()
    True
    """
    return f"{_PROCESS}p{os.getpid()}n{next(_calls)}"


def optimize(dsk: Mapping, keys, **kwargs) -> Mapping:
    """The graph dndask submits for ``keys``: ``dsk`` culled to them, and nothing fused.

    Dask's fusion (linear and blockwise) gives a key a different task
    depending on which other keys are requested with it: ``b = a + 1`` is
    ``add(a)`` when ``a`` is wanted too, and ``add(neg(x))`` when it is not.
    The scheduler still remembers keys of the previous call, and one key with
    two tasks makes it warn "different `run_spec`" and keep the old task
    (dask/dask#9888), which can deadlock. dndask's graphs have one chunk per
    rank, so fusion saves few tasks; without it every key always means one
    task. ``DNDarray.__dask_optimize__`` is this with the array's placement
    (:func:`optimize_placed`), so ``dask.compute(a)`` submits the same graph as
    ``a.compute()``, its tasks on their ranks.

    A layer that builds some of its keys differently when culled to part of
    them (Dask's p2p rechunk makes a lone kept chunk with ``concatenate3``,
    several with the shuffle) is kept whole (``_compat.whole_layer_keys``),
    which would otherwise again give one key two tasks.

    Examples
    --------
    >>> from dask.highlevelgraph import HighLevelGraph
    >>> graph = HighLevelGraph.from_collections("x", {("x", 0): 1, ("x", 1): 2}, ())
    >>> dict(optimize(graph, [("x", 1)]))
    {('x', 1): 2}
    """
    wanted = set(flatten(keys if isinstance(keys, list) else [keys]))
    if not isinstance(dsk, HighLevelGraph):
        return _direct_flat(cull(dict(dsk), list(wanted))[0], wanted)
    culled = dsk.cull(wanted)
    whole = whole_layer_keys(dsk, culled.layers)
    return direct(dsk.cull(wanted | whole) if not whole <= wanted else culled, wanted)


def _rank_results(graph: HighLevelGraph) -> dict[str, dict]:
    """The layers of ``graph`` whose chunk keys stand for per-rank results held under the
    results' own keys (an ``is_split`` join of ``ht.per_rank``): layer -> {chunk key: future}.

    Such a layer has no inputs and maps every key to a future of another key, made by
    per-rank work (the keys of ``_per_rank._submit_each``). Only the first key of each
    layer without inputs is looked at, so a graph without such a layer costs a glance.
    """
    out = {}
    for name, layer in graph.layers.items():
        if graph.dependencies.get(name) or not isinstance(layer, MaterializedLayer):
            continue
        key, node = next(iter(layer.items()), (None, None))
        if _stands_for(key, node):
            out[name] = {k: f for k, f in layer.items() if _stands_for(k, f)}
    return out


def _stands_for(key, node) -> bool:
    """Whether ``key`` is a name for ``node``, a future of per-rank work under another key."""
    return isinstance(node, distributed.Future) and node.key != key and rank_bound(node.key)


def direct(graph: HighLevelGraph, wanted: set) -> HighLevelGraph:
    """``graph`` with every reference to a chunk key of an ``is_split`` join made to the
    per-rank result it stands for, so no task renames the result first.

    An ``is_split`` join of ``ht.per_rank`` results is no task: its array's graph maps
    chunk key ``r`` to the future of rank ``r``'s result, whose key is another
    (:func:`_rank_results`). Dask would run an alias task per chunk key to rename
    it, on every computation. Here the tasks that read a chunk key read the
    result's key instead, and the chunk key leaves the graph unless it is
    ``wanted`` (then Dask's alias makes it, as for any requested key). The rewrite
    is the same in every graph, so a key always means one task.
    """
    held = _rank_results(graph)
    if not held:
        return graph
    subs = {k: f.key for chunks in held.values() for k, f in chunks.items()}
    known = set(subs.values()).union(*(layer.keys() for layer in graph.layers.values()))
    layers = {}
    for name, layer in graph.layers.items():
        if name in held:
            chunks = held[name]
            kept = {k: v for k, v in layer.items() if k in wanted or k not in chunks}
            kept.update({f.key: f for f in chunks.values()})
            layers[name] = MaterializedLayer(kept, annotations=layer.annotations)
            continue
        tasks = retarget(dict(layer), subs, known)
        layers[name] = layer if tasks is None else MaterializedLayer(tasks, layer.annotations)
    return HighLevelGraph(layers, graph.dependencies)


def _direct_flat(graph: dict, wanted: set) -> dict:
    """:func:`direct` for a graph without layers (a dask expression's, lowered): every
    reference to a key that stands for a per-rank result made to the result's key.

    Examples
    --------
    >>> _direct_flat({"x": 1}, {"x"})
    {'x': 1}
    """
    subs = {k: f.key for k, f in graph.items() if _stands_for(k, f)}
    if not subs:
        return graph
    rest = {k: v for k, v in graph.items() if k not in subs}
    out = retarget(rest, subs, set(graph) | set(subs.values())) or rest
    for key in subs:
        out[graph[key].key] = graph[key]
        if key in wanted:
            out[key] = graph[key]
    return out


# The top layer of every dask array a DNDarray has held. A graph that contains one
# of them may share keys with graphs dndask submitted (unfused), so Dask must not
# fuse it either, whoever computes it (``dask.compute``, xarray, ...).
_claimed_layers: set[str] = set()


def claim(array: da.Array) -> None:
    """Mark ``array``'s graph as dndask's: any graph built on it is submitted unfused.

    A DNDarray claims its dask array when it is made or re-assigned; see
    :func:`array_optimize`. Only the top layer's name is kept (a few dozen
    bytes an array), since every graph built on the array contains it. The
    first claim installs :func:`array_optimize` as Dask's ``array_optimize``:
    not at import, since nannies hand their config to the workers they start,
    which would then import dndask (and a plain Dask cluster started after
    ``import dndask`` would carry it).
    """
    if not _claimed_layers:
        install_array_optimizer(array_optimize)
    _claimed_layers.update(top_layers(array))


# The placement tables (key -> worker) of the dask arrays dndask handed to other code
# (xarray), by the array's top layer; bounded to the most recent ones.
_HANDED_SIZE = 1024
_handed: collections.OrderedDict[str, WorkerTable] = collections.OrderedDict()
_handed_lock = threading.Lock()


def hand_over(array: da.Array, table: Mapping) -> None:
    """Pin ``table``'s tasks wherever a graph built on ``array`` is computed by others.

    xarray's own ``.persist()`` and ``.compute()`` (and ``dask.persist``) of
    graphs that hold ``array`` then run the dndask-made tasks in ``table`` on
    their ranks' workers, as ``DNDarray.persist`` does (see
    :func:`array_optimize`); tasks added on top follow their inputs.
    """
    table = WorkerTable.of(table)
    with _handed_lock:
        for layer in top_layers(array):
            _handed[layer] = table
            _handed.move_to_end(layer)
        while len(_handed) > _HANDED_SIZE:
            _handed.popitem(last=False)


def _pin_handed(
    source: HighLevelGraph, graph: HighLevelGraph, own: Mapping | None = None
) -> HighLevelGraph:
    """``graph`` (culled from ``source``) with handed-over tasks restricted to their workers.

    The handed-over arrays are found by ``source``'s layer names (culling renames
    layers); ``own`` is one more table (the collection's own placement).
    """
    with _handed_lock:
        tables = [_handed[name] for name in source.layers if name in _handed]
    if own:
        tables.append(own)
    if not tables:
        return graph
    table = {}
    for key in graph:
        for t in reversed(tables):  # the later tables win
            worker = t.get(key)
            if worker is not None:
                table[key] = worker
                break
    if not table:
        return graph
    return annotate_workers(graph, Placement(table), set(table))


def optimize_placed(dsk: Mapping, keys, *, placement: Mapping, **kwargs) -> Mapping:
    """:func:`optimize`, with the tasks in ``placement`` pinned to their workers.

    A DNDarray's ``__dask_optimize__``: ``dask.persist(a)`` and xarray's
    ``persist`` of a DataArray that holds ``a`` then put chunk ``r`` on rank
    ``r``'s worker, as ``a.persist()`` does (and tasks of arrays handed over
    with :func:`hand_over` on theirs).
    """
    graph = optimize(dsk, keys)
    if not isinstance(dsk, HighLevelGraph) or not isinstance(graph, HighLevelGraph):
        return graph
    return _pin_handed(dsk, graph, placement)


def array_optimize(dsk: Mapping, keys, **kwargs) -> Mapping:
    """Dask's array optimization, except for graphs that hold a DNDarray's layers.

    Installed as dask's ``array_optimize`` (``_compat.install_array_optimizer``)
    when the first DNDarray is made, unless the user has set one. A graph built on a
    DNDarray, e.g. by xarray on ``a.to_xarray()``, goes through
    :func:`optimize` (culled, unfused), as ``a.compute()`` does, so the
    scheduler never sees one of its keys with two different tasks; every other
    dask array keeps Dask's fusion. The tasks of arrays handed over with
    :func:`hand_over` are pinned to their ranks' workers on the way.

    Examples
    --------
    >>> from dask.highlevelgraph import HighLevelGraph
    >>> graph = HighLevelGraph.from_collections("never-claimed", {("never-claimed", 0): 1}, ())
    >>> dict(array_optimize(graph, [("never-claimed", 0)]))
    {('never-claimed', 0): DataNode(1)}
    """
    if isinstance(dsk, HighLevelGraph) and not _claimed_layers.isdisjoint(dsk.layers):
        return _pin_handed(dsk, optimize(dsk, keys))
    return dask_array_optimize(dsk, keys, **kwargs)


def _graph_of(collection) -> tuple[Mapping, list]:
    """``collection``'s graph as dndask submits it (see :func:`optimize`), and its keys."""
    keys = collection.__dask_keys__()
    return optimize(collection.__dask_graph__(), keys), keys


@contextlib.contextmanager
def _placed(table: Mapping) -> Iterator[None]:
    """Pin the keys in ``table`` to their workers for graphs submitted inside."""
    with dask.annotate(workers=Placement(table), allow_other_workers=False):
        yield


def wait(futures: Sequence[distributed.Future]) -> None:
    """Wait for ``futures``; show a progress bar if they take a while interactively.

    Waits through the futures' own client, which need not be the default one.
    Which bar shows where is :mod:`dndask._progress`'s choice.
    """
    client = futures[0].client if futures else None
    with client.as_current() if client is not None else contextlib.nullcontext():
        _progress.wait(futures)


def _own_task(key) -> bool:
    """Whether ``key``'s task must run as a task of its own under its key (see
    :mod:`dndask._fuse`): a relayout's posts and barrier (the transport's janitors follow
    them by key), and per-rank work, whose results are not rerun when lost. (Dask's p2p
    tasks too: :func:`dndask._compat.named_tasks`.)"""
    return is_control(key) or rank_bound(key)


def _fresh_outputs(
    graphs: Sequence[Mapping], keys, table: Mapping, token: str
) -> tuple[dict, list, WorkerTable]:
    """The graphs as this call submits them: each rank's chains fused into one task whose
    key is unique to the call (:func:`dndask._fuse.fuse`), the outputs under new names.

    Computing the same keys twice in a row under their own names would hand the client a
    stale "finished" state for keys the scheduler is still releasing from the previous
    call ("Couldn't gather keys"); new names cannot be stale, and fused they cost one
    scheduler round trip per rank instead of one per operation. The outputs run where
    their chunks are (pinned like them), so nothing extra moves; they copy device chunks to
    host there (``_xp.to_host``, nothing for numpy), so the driver never holds device data.
    ``token`` makes the names unique (:func:`fresh_token`). Returns the graph, the new
    name of each of ``keys`` (nested as ``keys``; a key asked twice has one) and the
    placement of the graph's keys.
    """
    table = WorkerTable.of(table)
    unique = list(dict.fromkeys(flatten(keys)))
    named = set().union(*(named_tasks(g) for g in graphs))
    own = (lambda key: key in named or _own_task(key)) if named else _own_task
    dsk = {}
    for graph in graphs:
        dsk.update(graph)
    fused = fuse(dsk, unique, table.get, own, token, wrap=to_host)
    table.update(fused.placement)
    new = dict(zip(unique, fused.outputs, strict=True))

    def renamed(structure):
        if isinstance(structure, list):
            return [renamed(s) for s in structure]
        return new[structure]

    return fused.graph, renamed(keys), table


def held(graph: Mapping, keys) -> list | None:
    """The futures that already hold ``keys`` (nested as ``keys``), else ``None``.

    A persisted array's graph maps each chunk key to the future holding it
    (finished, or still running). A layer with inputs holds tasks, so its
    keys are not looked up (which would build its tasks).
    """
    if isinstance(graph, HighLevelGraph):
        name = next(iter(flatten(keys)), (None,))[0]
        if graph.dependencies.get(name) or name not in graph.layers:
            return None
        graph = graph.layers[name]
    out = []
    for key in keys:
        if isinstance(key, list):
            inner = held(graph, key)
            if inner is None:
                return None
            out.append(inner)
            continue
        node = graph.get(key)
        if not isinstance(node, distributed.Future) or node.status in ("cancelled", "lost"):
            return None
        out.append(node)
    return out


def _submit(graph: Mapping, keys, client: distributed.Client, table: Mapping, token: str):
    """Submit ``graph`` for ``keys`` with the keys in ``table`` pinned; the futures of ``keys``.

    The graph goes as an expression named ``token``, so Dask does not tokenize its tasks.
    """
    with _placed(table):
        return client.get(named_graph(dict(graph), token), keys, sync=False)


def fetch(client: distributed.Client, futures) -> list:
    """The results of ``futures`` (nested lists kept), waited for and gathered in one call.

    ``client.gather`` waits for them itself, so without a progress bar to
    show this is one call into the client's event loop and one request to
    the scheduler; with a bar (see :mod:`dndask._progress`) the wait comes first.
    """
    flat = list(flatten(futures))
    client = flat[0].client if flat else client  # the futures' own client gathers them
    if _progress.shows_bar():
        wait(flat)
    return client.gather(futures)


def compute(array: da.Array, client: distributed.Client, table: Mapping, comm=None) -> np.ndarray:
    """Compute ``array``'s chunks on their workers and assemble them in the driver.

    The chunks travel straight to the driver: no worker first gathers the
    whole array (which a Dask ``finalize`` task would do). The chunks of a
    persisted array are fetched from the futures that hold them, with no task
    (device chunks still get :func:`_fresh_outputs`' copy to host on their workers).
    ``comm``, if given, lets an error about lost workers name the ranks.
    """
    return compute_many([array], [table], client, comm)[0]


def compute_many(
    arrays: Sequence[da.Array], tables: Sequence[Mapping], client: distributed.Client, comm=None
) -> list[np.ndarray]:
    """:func:`compute` of several arrays (``tables[i]`` places ``arrays[i]``'s tasks) in
    one submission and one gather: the tasks they share run once, and each rank's chains
    of all of them are fused as one graph's.
    """
    ensure_keeper(client)
    futures: list = [None] * len(arrays)
    graphs, keys, table = [], [], WorkerTable()
    for i, array in enumerate(arrays):
        on_host = device_of(meta_from_array(array)) == cpu
        futures[i] = held(array.__dask_graph__(), array.__dask_keys__()) if on_host else None
        if futures[i] is None:
            graph, wanted = _graph_of(array)
            graphs.append(graph)
            keys.append((i, wanted))
            table.update(tables[i])
    if keys:
        token = fresh_token()
        dsk, renamed, table = _fresh_outputs(graphs, [k for _, k in keys], table, token)
        submitted = _submit(dsk, renamed, client, table, f"dndask-compute-{token}")
        for (i, _), f in zip(keys, submitted, strict=True):
            futures[i] = f
    everything = HighLevelGraph.merge(*(array.__dask_graph__() for array in arrays))
    with lost_data_explained(client, everything, comm):
        parts = fetch(client, futures)
    out = []
    for array, part in zip(arrays, parts, strict=True):
        if array.ndim == 0:
            out.append(np.asarray(part if not isinstance(part, list) else part[0]))
        else:
            out.append(concatenate3(part))
    return out


def run(graph: Mapping, keys: Sequence, client: distributed.Client, table: Mapping, comm=None):
    """Run the tasks ``keys`` of ``graph`` for their effects (writes), pinned by ``table``.

    Waits for every task, even after one failed (so none runs after the
    caller's cleanup), then raises the first error; an interrupt cancels
    what has not started. Errors caused by lost workers name the ranks of
    ``comm``, as :func:`compute` does.
    """
    ensure_keeper(client)
    if isinstance(graph, HighLevelGraph):
        graph = direct(graph, set(flatten(list(keys))))
    with _placed(table):
        futures = client.get(graph, list(keys), sync=False)
    with lost_data_explained(client, graph, comm):
        try:
            wait(list(futures))
        except BaseException:  # interrupted: stop what has not started yet
            with contextlib.suppress(Exception):
                client.cancel(futures)
            raise
        for future in futures:
            if future.status in ("error", "cancelled"):
                future.result()  # raises the task's error


def call_on(comm, rank: int, fn, *args):
    """``fn(*args)`` run on rank ``rank``'s worker of ``comm``; its result, or its error.

    A worker lost (or never part of this cluster) gives the error naming the rank.
    """
    client = comm.client
    ensure_keeper(client)
    future = client.submit(
        fn,
        *args,
        key=f"call-{getattr(fn, '__name__', 'fn').strip('_')}-{uuid.uuid4().hex}",
        workers=[comm.workers[rank]],
        allow_other_workers=False,
        pure=False,
    )
    with lost_data_explained(client, {}, comm):
        return future.result()


def persist(
    collection,
    client: distributed.Client,
    table: Mapping,
    comm=None,
    replicate: int = 1,
    wait_: bool = False,
):
    """Persist ``collection`` with each key in ``table`` held by its worker.

    Returns as soon as the graph is submitted, as Dask's ``persist`` does:
    placement is fixed at submission, and a task's error is raised where the
    result is next used. ``wait_=True`` waits until every chunk is in memory
    and raises a failed task's error here.

    With ``replicate=k`` every chunk is also copied to ``k - 1`` other workers,
    and the scheduler keeps ``k`` copies (see :class:`dndask._recovery.RankKeeper`), so data
    that cannot be recomputed survives the loss of ``k - 1`` workers; the
    copies need the chunks, so this always waits.
    """
    ensure_keeper(client)
    keys = collection.__dask_keys__()
    # persisted already: nothing to run. Futures may hold other keys only where they are
    # an is_split join's per-rank results (``direct`` reads those keys in every graph);
    # driver data scattered under other keys is persisted as its chunk keys, so that
    # ``replicate`` copies what later graphs read and a lost copy is recomputed from them
    futures = held(collection.__dask_graph__(), keys)
    if futures is not None and not all(
        f.key == k or _stands_for(k, f)
        for f, k in zip(flatten(futures), flatten(keys), strict=True)
    ):
        futures = None
    if futures is None:
        graph, keys = _graph_of(collection)
        futures = _submit(graph, keys, client, table, f"dndask-persist-{fresh_token()}")
    futures = list(flatten(futures))
    rebuild, args = postpersist(collection)
    persisted = rebuild(dict(zip(flatten(keys), futures, strict=True)), *args)
    if not wait_ and replicate == 1:
        return persisted
    with lost_data_explained(client, collection.__dask_graph__(), comm):
        wait(futures)
        for future in futures:
            if future.status in ("error", "cancelled"):
                future.result()  # raises the task's error
    if replicate > 1:
        keys = [f.key for f in futures]
        keep_replicas(client, keys, replicate)
        client.replicate(futures, n=replicate)
    return persisted
