"""Running graphs: compute to the driver, or persist with every chunk on its rank's worker."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import uuid
import warnings
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence

import dask
import dask.array as da
import distributed
import numpy as np
from dask._task_spec import Alias, Task, TaskRef
from dask.array.core import concatenate3
from dask.core import flatten
from distributed.active_memory_manager import ReduceReplicas, Suggestion
from distributed.diagnostics.plugin import SchedulerPlugin
from distributed.protocol import pickle

_PROGRESS_ENV = "DNDASK_PROGRESS"
_PROGRESS_DELAY = 2.0  # seconds before a bar appears


class Placement:
    """Scheduler-side annotation: the worker each key in the table must run on.

    The table holds the chunk keys and the dndask-made tasks upstream of them
    (see ``DNDarray._lineage``); other keys, such as Dask's own intermediate
    tasks, are left free, so Dask places them next to their inputs.
    """

    def __init__(self, table: Mapping):
        self.table = dict(table)

    def __call__(self, key) -> list[str]:
        address = self.table.get(key)
        return [address] if address is not None else []


@contextlib.contextmanager
def _placed(table: Mapping) -> Iterator[None]:
    """Pin the keys in ``table`` to their workers for graphs submitted inside."""
    with dask.annotate(workers=Placement(table), allow_other_workers=False):
        yield


def _optimized(collection, table: Mapping) -> tuple[object, dict]:
    """``collection`` optimized by Dask, and ``table`` extended to the tasks it fused.

    Dask's linear fusion merges a chain of tasks into one task under a new
    key and leaves the chain's last key as an alias of it. Unless the fused
    task is pinned where that key is, the scheduler may run it on another
    worker (a tie between the inputs of a redistribution's join, say) and
    its result then travels to the pinned alias.
    """
    before = set(collection.__dask_graph__().keys())
    (optimized,) = dask.optimize(collection)
    table = dict(table)
    for key, node in dict(optimized.__dask_graph__()).items():
        made = isinstance(node, Alias) and node.target not in before
        if made and key in table and node.target not in table:
            table[node.target] = table[key]
    return optimized, table


def _progress_mode() -> str:
    mode = os.environ.get(_PROGRESS_ENV, "auto").lower()
    if mode not in ("auto", "on", "off"):
        raise ValueError(f"`{_PROGRESS_ENV}` must be 'auto', 'on' or 'off', got {mode!r}")
    return mode


def _interactive() -> bool:
    if "ipykernel" in sys.modules:
        return True
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


def wait(futures: Sequence[distributed.Future]) -> None:
    """Wait for ``futures``; show a progress bar if they take a while interactively.

    Waits through the futures' own client, which need not be the default one.
    """
    client = futures[0].client if futures else None
    with client.as_current() if client is not None else contextlib.nullcontext():
        _wait(futures)


def _wait(futures: Sequence[distributed.Future]) -> None:
    mode = _progress_mode()
    if mode == "off" or (mode == "auto" and not _interactive()):
        distributed.wait(futures)
        return
    if mode == "auto":
        try:
            distributed.wait(futures, timeout=_PROGRESS_DELAY)
            return
        except distributed.TimeoutError:
            pass
    distributed.progress(futures)
    distributed.wait(futures)


def _identity(value):
    return value


def _fresh_outputs(graph: Mapping, keys, table: Mapping) -> tuple[dict, object, dict]:
    """The graph plus one alias task per output key, under names unique to this call.

    Computing the same keys twice in a row would otherwise hand the client a
    stale "finished" state for keys the scheduler is still releasing from the
    previous call ("Couldn't gather keys"). The aliases run where their chunk
    is (they are pinned like it), so nothing extra moves.
    """
    token = uuid.uuid4().hex
    dsk = dict(graph)
    table = dict(table)
    counter = iter(range(len(list(flatten(keys, container=list)))))

    def alias(structure):
        if isinstance(structure, list):
            return [alias(s) for s in structure]
        new = (f"dndask-result-{token}", next(counter))
        dsk[new] = Task(new, _identity, TaskRef(structure))
        if structure in table:
            table[new] = table[structure]
        return new

    return dsk, alias(keys), table


def compute(array: da.Array, client: distributed.Client, table: Mapping, comm=None) -> np.ndarray:
    """Compute ``array``'s chunks on their workers and assemble them in the driver.

    The chunks travel straight to the driver: no worker first gathers the
    whole array (which a Dask ``finalize`` task would do). ``comm``, if given,
    lets an error about lost workers name the ranks.
    """
    ensure_keeper(client)
    optimized, table = _optimized(array, table)
    dsk, keys, table = _fresh_outputs(optimized.__dask_graph__(), optimized.__dask_keys__(), table)
    with _placed(table):
        futures = client.get(dsk, keys, sync=False)
    flat = list(flatten(futures, container=list))
    with _lost_data_explained(client, array.__dask_graph__(), comm):
        wait(flat)
        parts = client.gather(futures)
    if array.ndim == 0:
        return np.asarray(parts if not isinstance(parts, list) else parts[0])
    return concatenate3(parts)


def persist(collection, client: distributed.Client, table: Mapping, comm=None, replicate: int = 1):
    """Persist ``collection`` with each key in ``table`` held by its worker.

    With ``replicate=k`` every chunk is also copied to ``k - 1`` other workers,
    and the scheduler keeps ``k`` copies (see :class:`RankKeeper`), so data
    that cannot be recomputed survives the loss of ``k - 1`` workers.
    """
    ensure_keeper(client)
    optimized, table = _optimized(collection, table)
    with _placed(table):
        persisted = client.persist(optimized, optimize_graph=False)
    futures = list(distributed.futures_of(persisted))
    with _lost_data_explained(client, collection.__dask_graph__(), comm):
        wait(futures)
        for future in futures:
            if future.status == "error":
                future.result()  # raises the task's error
    if replicate > 1:
        keys = [f.key for f in futures]
        client.run_on_scheduler(_keep_replicas, keys=keys, n=replicate)
        client.replicate(futures, n=replicate)
    return persisted


# --------------------------------------------------------------- lost workers
#
# dndask pins tasks to worker addresses with ``allow_other_workers=False``. When a
# worker dies, Dask recomputes the keys it held from the graph, but a task pinned to
# the dead address could never run again and every compute would wait forever. The
# scheduler plugin below turns that into recovery where the data can be recomputed,
# and into a clear error where it cannot.

_KEEPER = "dndask-rank-keeper"
_GRACE_ENV = "DNDASK_LOST_WORKER_TIMEOUT"
_GRACE_DEFAULT = 60.0
# Key prefixes of per-rank (SPMD) work (see ``_per_rank._submit_each``). Its
# function may depend on the worker it ran on, so it is never rerun elsewhere.
_RANK_BOUND = ("per-rank-", "as-chunk-", "map-local-", "describe-")
_LOST = " is lost: "  # marks dndask's lost-worker errors
_log = logging.getLogger(__name__)


def _name_of(key) -> str:
    return key if isinstance(key, str) else str(key[0])


def _rank_bound(key) -> bool:
    return _name_of(key).startswith(_RANK_BOUND)


class RankKeeper(SchedulerPlugin):
    """Scheduler plugin: what happens to a rank's tasks when its worker is lost.

    - A nanny restarts a dead worker under the same *name* at a new address.
      The plugin treats it as the same rank: every task restriction naming the
      old address (including those of graphs submitted later, built from a comm
      that still lists the old address) is rewritten to the new one, so Dask's
      recomputation from the graph goes ahead and chunk ``r`` lands on the
      worker that now serves rank ``r``.
    - Results of per-rank work (``ht.per_rank``, ``is_split`` joins, ``map_local``)
      that existed only on the dead worker fail at once with a ``RuntimeError``
      naming the rank, instead of being rerun (possibly with other values).
    - Tasks pinned to a worker that no replacement took over within ``grace``
      seconds fail with a ``RuntimeError`` naming the worker.
    - Scattered data (driver values sent to the ranks) is forgotten by Dask
      itself; the plugin records which worker lost it, for the client's error.
    - Keys persisted with ``replicate=k`` keep ``k`` copies: the Active Memory
      Manager's ``ReduceReplicas`` policy is replaced by one that leaves them,
      and copies lost with a worker are made again.
    """

    name = _KEEPER
    idempotent = True

    def __init__(self, grace: float = _GRACE_DEFAULT):
        self.grace = float(grace)
        self.names: dict[str, object] = {}  # live address -> worker name
        self.nannies: set[str] = set()  # live addresses a nanny restarts when they die
        self.dead: dict[str, object] = {}  # dead address -> its worker name
        self.replaced: dict[str, str] = {}  # dead address -> address serving its rank now
        self.expired: set[str] = set()  # dead addresses no replacement took over in time
        self.waited: dict[str, float] = {}  # dead address -> seconds given to a replacement
        self.lost_data: dict = {}  # scattered key -> address it was lost with
        self.replicas: dict = {}  # key -> copies to keep
        self.scheduler = None

    def start(self, scheduler) -> None:
        self.scheduler = scheduler
        for address in scheduler.workers:
            self._met(scheduler, address)
        amm = scheduler.extensions.get("amm")
        if amm is not None:
            for policy in list(amm.policies):
                if type(policy) is ReduceReplicas:
                    amm.policies.discard(policy)
            amm.add_policy(_KeepReplicas(self))

    # -- worker events
    def log_event(self, topic, msg) -> None:
        if topic == "all" and isinstance(msg, dict) and msg.get("action") == "remove-worker":
            lost = msg.get("lost-scattered-tasks", ())
            self.lost_data.update(dict.fromkeys(lost, msg.get("worker")))

    def remove_worker(self, scheduler, worker: str, **kwargs) -> None:
        self.dead[worker] = self.names.pop(worker, None)
        self._fail_unrunnable(_rank_bound, _rank_bound_message)
        # only a nanny brings a worker back; without one, waiting is pointless
        self.waited[worker] = self.grace if worker in self.nannies else 0.0
        self.nannies.discard(worker)
        scheduler.loop.call_later(self.waited[worker], self._expire, worker)

    def _met(self, scheduler, worker: str) -> None:
        ws = scheduler.workers[worker]
        self.names[worker] = ws.name
        if ws.nanny:
            self.nannies.add(worker)

    def add_worker(self, scheduler, worker: str) -> None:
        self._met(scheduler, worker)
        name = self.names[worker]
        for table in (self.dead, self.replaced):  # an address can come back (port reuse)
            table.pop(worker, None)
        self.expired.discard(worker)
        for old, old_name in self.dead.items():
            if old_name == name and old not in self.replaced:
                self.replaced[old] = worker
                self.expired.discard(old)
        # an address that took a rank over may itself have died and been replaced
        for old in self.replaced:
            self.replaced[old] = self._serving(old)
        # the scheduler then schedules the no-worker tasks this worker can run
        self._rewrite(scheduler.tasks.values())

    def update_graph(self, scheduler, *, tasks=(), **kwargs) -> None:
        if not self.replaced and not self.expired:
            return
        states = [scheduler.tasks[k] for k in tasks if k in scheduler.tasks]
        self._rewrite(states)
        if self.expired and any(
            ts.worker_restrictions and ts.worker_restrictions <= self.expired for ts in states
        ):
            # the new tasks reach no-worker once this update is done
            scheduler.loop.add_callback(self._fail_expired)

    # -- helpers
    def _serving(self, address: str) -> str:
        seen = {address}
        while address in self.replaced and self.replaced[address] not in seen:
            address = self.replaced[address]
            seen.add(address)
        return address

    def _rewrite(self, states) -> None:
        replaced = self.replaced
        if not replaced:
            return
        for ts in states:
            restrictions = ts.worker_restrictions
            if restrictions and not restrictions.isdisjoint(replaced):
                ts.worker_restrictions = {replaced.get(a, a) for a in restrictions}

    def _expire(self, worker: str) -> None:
        if worker in self.replaced or worker in self.names:
            return
        self.expired.add(worker)
        self._fail_expired()

    def _fail_expired(self) -> None:
        waited = self.waited
        self._fail_unrunnable(
            lambda key: True,
            lambda key, address, name: _expired_message(key, address, name, waited.get(address)),
            only=self.expired,
        )

    def _fail_unrunnable(self, which, message, only: set | None = None) -> None:
        """Err the no-worker tasks that ``which`` selects and only dead workers could run."""
        scheduler = self.scheduler
        recommendations: dict = {}
        stimulus_id = f"dndask-lost-worker-{uuid.uuid4().hex}"
        for ts in list(scheduler.unrunnable):
            restrictions = ts.worker_restrictions
            if not restrictions or ts.loose_restrictions or not which(ts.key):
                continue
            if any(a in scheduler.workers for a in restrictions):
                continue
            if only is not None and not restrictions <= only:
                continue
            address = sorted(restrictions)[0]
            exc = RuntimeError(message(ts.key, address, self.dead.get(address)))
            recommendations.update(
                scheduler.transition(
                    ts.key, "erred", stimulus_id, exception=pickle.dumps(exc), cause=ts.key
                )
            )
        if recommendations:
            scheduler.transitions(recommendations, stimulus_id)


def _rank_bound_message(key, address: str, name) -> str:
    label = _name_of(key)
    rank = label.rsplit("-", 1)[-1]
    who = f"rank {rank}'s per-rank result" if rank.isdigit() else "per-rank result"
    return (
        f"{who} `{label}`{_LOST}its worker {address} (name {name!r}) died, and dndask never "
        "reruns per-rank work elsewhere. Create it again, or persist(replicate=2) it beforehand"
    )


def _expired_message(key, address: str, name, waited: float | None) -> str:
    if waited:
        why = f"no worker of that name replaced it within {waited:g} s (${_GRACE_ENV})"
    else:
        why = "it had no nanny to restart it"
    return (
        f"task `{_name_of(key)}`{_LOST}it is pinned to worker {address} (name {name!r}), which "
        f"died, and {why}. Build a comm over the live workers "
        "(ht.Comm.from_client(client)) and create the array again"
    )


class _KeepReplicas(ReduceReplicas):
    """``ReduceReplicas`` that keeps (and restores) the copies ``persist(replicate=k)`` made."""

    def __init__(self, keeper: RankKeeper):
        super().__init__()
        self.keeper = keeper

    def run(self):
        wanted = self.keeper.replicas
        tasks = self.manager.scheduler.tasks
        for key in [k for k in wanted if k not in tasks]:
            del wanted[key]  # the array was dropped
        drops: Counter = Counter()
        for suggestion in super().run():
            ts = suggestion.ts
            keep = wanted.get(ts.key)
            if keep is not None:
                drops[ts.key] += 1
                if len(ts.who_has) - drops[ts.key] < keep:
                    continue
            yield suggestion
        for key, keep in wanted.items():
            ts = tasks[key]
            if ts.state == "memory" and ts.who_has and len(ts.who_has) < keep:
                for _ in range(keep - len(ts.who_has)):
                    yield Suggestion("replicate", ts)


def _keep_replicas(dask_scheduler, keys, n: int) -> None:
    keeper = dask_scheduler.plugins.get(_KEEPER)
    if keeper is not None:
        keeper.replicas.update(dict.fromkeys(keys, n))


def _lost_scattered(dask_scheduler, keys) -> dict:
    keeper = dask_scheduler.plugins.get(_KEEPER)
    if keeper is None:
        return {}
    return {k: keeper.lost_data[k] for k in keys if k in keeper.lost_data}


_registered: set[str] = set()
_registered_lock = threading.Lock()


def _grace() -> float:
    raw = os.environ.get(_GRACE_ENV, str(_GRACE_DEFAULT))
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ValueError(f"`{_GRACE_ENV}` must be a positive number of seconds, got {raw!r}")
    return value


def ensure_keeper(client: distributed.Client) -> None:
    """Install :class:`RankKeeper` on ``client``'s scheduler (once per client).

    ``$DNDASK_LOST_WORKER_TIMEOUT`` (seconds, default 60) at that moment sets
    how long a task pinned to a lost worker waits for a replacement.
    """
    with _registered_lock:
        if client.id in _registered:
            return
        grace = _grace()
        try:
            client.register_plugin(RankKeeper(grace))
        except Exception as exc:  # e.g. a remote scheduler that cannot import dndask
            warnings.warn(
                f"dndask could not install its lost-worker plugin on the scheduler ({exc}); "
                "a compute pinned to a lost worker will wait for it",
                RuntimeWarning,
                stacklevel=3,
            )
        _registered.add(client.id)


def _future_keys(graph: Mapping) -> list:
    return [v.key for v in graph.values() if isinstance(v, distributed.Future)]


def _dead_workers(dask_scheduler) -> list[str]:
    keeper = dask_scheduler.plugins.get(_KEEPER)
    if keeper is None:
        return []
    return [a for a in keeper.dead if a not in keeper.replaced]


@contextlib.contextmanager
def _lost_data_explained(client: distributed.Client, graph: Mapping, comm) -> Iterator[None]:
    """Re-raise errors caused by lost workers so that they name the lost ranks.

    Dask cancels the futures of scattered data that died with its worker;
    :class:`RankKeeper`'s errors name a worker, and the comm knows its rank.
    """
    try:
        yield
    except distributed.client.FuturesCancelledError as exc:
        lost = client.run_on_scheduler(_lost_scattered, keys=_future_keys(graph))
        if not lost:
            raise
        raise RuntimeError(
            f"the chunk of {_ranks_label(sorted(set(lost.values())), comm)}{_LOST}it was sent "
            "from the driver and existed only in that worker's memory, so Dask cannot "
            "recompute it. Create the array again, or persist(replicate=2) such data beforehand"
        ) from exc
    except RuntimeError as exc:
        if _LOST not in str(exc) or comm is None:
            raise
        dead = set(client.run_on_scheduler(_dead_workers))
        gone = [w for w in comm.workers if w in dead]
        if not gone:
            raise
        raise RuntimeError(f"the array's comm lost {_ranks_label(gone, comm)}: {exc}") from exc


def _ranks_label(addresses: Sequence[str], comm) -> str:
    workers = tuple(getattr(comm, "workers", ()))
    ranks = [workers.index(a) for a in addresses if a in workers]
    where = ", ".join(addresses)
    plural = "s" if len(addresses) > 1 else ""
    if not ranks:
        return f"worker{plural} {where}"
    return f"rank{plural} {', '.join(map(str, ranks))} (worker{plural} {where})"
