"""Lost-worker recovery: what happens to a rank's tasks and data when its worker dies.

dndask pins tasks to worker addresses with ``allow_other_workers=False``. When a
worker dies, Dask recomputes the keys it held from the graph, but a task pinned to
the dead address could never run again and every compute would wait forever. The
scheduler plugin :class:`RankKeeper` turns that into recovery where the data can be
recomputed, and into a clear error where it cannot; it also keeps the copies that
``persist(replicate=k)`` makes. The driver side installs the plugin
(:func:`ensure_keeper`), asks it where a rank is served now (:func:`serving_live`) and
rewrites Dask's errors about lost data so that they name the lost ranks
(:func:`lost_data_explained`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
import uuid
import warnings
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence

import distributed
from distributed.active_memory_manager import ReduceReplicas, Suggestion
from distributed.diagnostics.plugin import SchedulerPlugin

from ._compat import (
    err_task,
    is_loose,
    removed_worker,
    set_worker_restrictions,
    transitions,
    unrunnable,
    worker_restrictions,
)
from ._worker_logs import SPMD_TASK_PREFIXES

__all__ = [
    "RankKeeper",
    "ensure_keeper",
    "keep_replicas",
    "lost_data_explained",
    "lost_rank_error",
    "lost_worker_timeout",
    "rank_bound",
    "serving_live",
]

_KEEPER = "dndask-rank-keeper"
_GRACE_ENV = "DNDASK_LOST_WORKER_TIMEOUT"
_GRACE_DEFAULT = 60.0
# Key prefixes of per-rank (SPMD) work (see ``_per_rank._submit_each``). Its
# function may depend on the worker it ran on, so it is never rerun elsewhere.
_RANK_BOUND = SPMD_TASK_PREFIXES
_LOST = " is lost: "  # marks dndask's lost-worker errors


def _name_of(key) -> str:
    return key if isinstance(key, str) else str(key[0])


def rank_bound(key) -> bool:
    """Whether ``key`` is per-rank (SPMD) work, whose result is never rerun elsewhere.

    >>> rank_bound(("per-rank-ab", 0)), rank_bound(("add-ab", 0))
    (True, False)
    """
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
        self.unknown: set[str] = set()  # addresses pinned to that no worker of this cluster had
        self.lost_data: dict = {}  # scattered key -> address it was lost with
        self.replicas: dict = {}  # key -> copies to keep
        self._fail_pending = False  # a _fail_expired call is scheduled
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
        removed = removed_worker(topic, msg)
        if removed is not None:
            worker, lost = removed
            self.lost_data.update(dict.fromkeys(lost, worker))

    def remove_worker(self, scheduler, worker: str, **kwargs) -> None:
        self.dead[worker] = self.names.pop(worker, None)
        self._fail_unrunnable(rank_bound, _rank_bound_message)
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
        self.unknown.discard(worker)
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
        states = [scheduler.tasks[k] for k in tasks if k in scheduler.tasks]
        self._rewrite(states)
        self._note_unknown(scheduler, states)
        if self.expired and any(
            worker_restrictions(ts) and worker_restrictions(ts) <= self.expired for ts in states
        ):
            # the new tasks reach no-worker once this update is done
            scheduler.loop.add_callback(self._fail_expired)

    def transition(self, key, start, finish, *args, **kwargs) -> None:
        # a task can reach no-worker long after its graph arrived (once its inputs are
        # done); pinned only to expired addresses, it would wait there forever
        if finish != "no-worker" or not self.expired or self._fail_pending:
            return
        ts = self.scheduler.tasks.get(key)
        pinned = worker_restrictions(ts) if ts is not None else None
        if pinned and pinned <= self.expired:
            self._fail_pending = True
            self.scheduler.loop.add_callback(self._fail_expired)  # not inside a transition

    def _note_unknown(self, scheduler, states) -> None:
        """Addresses that no worker of this cluster ever had are expired at once.

        A comm from an earlier cluster (``ht.init`` again), or one naming a
        wrong address, pins tasks to workers this scheduler never met: no
        replacement can take such a rank over, so waiting would be forever.
        """
        for ts in states:
            for address in worker_restrictions(ts) or ():
                if address in self.expired or address in scheduler.workers:
                    continue
                if address in self.names or address in self.dead or address in self.replaced:
                    continue
                self.unknown.add(address)
                self.expired.add(address)

    # -- helpers
    def _serving(self, address: str) -> str:
        seen = {address}
        while address in self.replaced and self.replaced[address] not in seen:
            address = self.replaced[address]
            seen.add(address)
        return address

    def _awaited(self, address: str) -> bool:
        """Whether ``address`` died and a replacement may still take its rank over."""
        return (
            address in self.dead
            and address not in self.replaced
            and address not in self.expired
            and self.waited.get(address, 0.0) > 0
        )

    def _rewrite(self, states) -> None:
        replaced = self.replaced
        if not replaced:
            return
        for ts in states:
            restrictions = worker_restrictions(ts)
            if restrictions and not restrictions.isdisjoint(replaced):
                set_worker_restrictions(ts, {replaced.get(a, a) for a in restrictions})

    def _expire(self, worker: str) -> None:
        if worker in self.replaced or worker in self.names:
            return
        self.expired.add(worker)
        self._fail_expired()

    def _fail_expired(self) -> None:
        self._fail_pending = False
        waited, unknown = self.waited, self.unknown

        def message(key, address, name):
            if address in unknown:
                return _unknown_message(key, address)
            return _expired_message(key, address, name, waited.get(address))

        self._fail_unrunnable(lambda key: True, message, only=self.expired)

    def _fail_unrunnable(self, which, message, only: set | None = None) -> None:
        """Err the no-worker tasks that ``which`` selects and only dead workers could run."""
        scheduler = self.scheduler
        recommendations: dict = {}
        stimulus_id = f"dndask-lost-worker-{uuid.uuid4().hex}"
        for ts in unrunnable(scheduler):
            restrictions = worker_restrictions(ts)
            if not restrictions or is_loose(ts) or not which(ts.key):
                continue
            if any(a in scheduler.workers for a in restrictions):
                continue
            if only is not None and not restrictions <= only:
                continue
            address = sorted(restrictions)[0]
            exc = RuntimeError(message(ts.key, address, self.dead.get(address)))
            recommendations.update(err_task(scheduler, ts.key, exc, stimulus_id))
        if recommendations:
            transitions(scheduler, recommendations, stimulus_id)


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


def _unknown_message(key, address: str) -> str:
    return (
        f"task `{_name_of(key)}`{_LOST}it is pinned to worker {address}, which this cluster "
        "never had (a comm from an earlier cluster, after ht.init or ht.shutdown, or a wrong "
        "address). Build a comm over the live workers (ht.get_comm() or "
        "ht.Comm.from_client(client)) and create the array again"
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


def keep_replicas(client: distributed.Client, keys: Sequence, n: int) -> None:
    """Ask the scheduler's :class:`RankKeeper` to keep ``n`` copies of each of ``keys``.

    Parameters
    ----------
    client : distributed.Client
        The client whose scheduler holds the keys.
    keys : sequence
        Keys of persisted chunks.
    n : int
        Copies to keep, on ``n`` different workers.
    """
    client.run_on_scheduler(_keep_replicas, keys=list(keys), n=n)


async def _serving_now(dask_scheduler, addresses) -> list[tuple[str, bool]]:
    keeper = dask_scheduler.plugins.get(_KEEPER)
    if keeper is None:
        return [(a, a in dask_scheduler.workers) for a in addresses]
    # a rank whose worker died is served again once its nanny's new worker
    # registers: wait for that (the keeper gives up on it after its grace)
    deadline = time.monotonic() + keeper.grace + 5.0
    while True:
        now = [keeper._serving(a) for a in addresses]
        if not any(keeper._awaited(a) for a in now) or time.monotonic() > deadline:
            return [(a, a in dask_scheduler.workers) for a in now]
        await asyncio.sleep(0.05)


def serving_live(client: distributed.Client, addresses: Sequence[str]) -> list[tuple[str, bool]]:
    """The address that serves each of ``addresses``' ranks now, and whether it is live.

    A worker its nanny restarted keeps its name but gets a new address; the
    scheduler's :class:`RankKeeper` records which address took a rank over.
    Task restrictions are rewritten on the scheduler, but calls that name
    workers directly (``client.scatter(..., workers=...)``) must ask first.
    Where a rank's worker died and its replacement has not registered yet,
    the answer waits for it, at most ``$DNDASK_LOST_WORKER_TIMEOUT`` seconds.
    One round trip to the scheduler, however many addresses; none where the
    plugin could not be installed (the addresses are returned as they are,
    taken to be live).

    Parameters
    ----------
    client : distributed.Client
        The client to ask through.
    addresses : sequence of str
        Worker addresses, e.g. ``comm.workers``.

    Returns
    -------
    list of (str, bool)
        One pair per input: the replacement's address where the worker was
        replaced, the input itself otherwise (also where the worker died and
        nobody replaced it in time); and whether the scheduler knows that
        address now.
    """
    addresses = list(addresses)
    ensure_keeper(client)
    if client.id not in _installed:
        return [(a, True) for a in addresses]
    return [tuple(p) for p in client.run_on_scheduler(_serving_now, addresses=addresses)]


def lost_rank_error(rank: int, address: str) -> RuntimeError:
    """The error for driver data bound for ``rank`` whose worker ``address`` is gone.

    Parameters
    ----------
    rank : int
        The rank the data was for.
    address : str
        The address that last served the rank.

    Returns
    -------
    RuntimeError
    """
    return RuntimeError(
        f"rank {rank} (worker {address}){_LOST}the scheduler no longer knows that worker, "
        f"and no worker of its name took its place (a nanny's restart is awaited for "
        f"${_GRACE_ENV} s). Build a comm over the live workers (ht.Comm.from_client(client)) "
        "and create the array again"
    )


def _lost_scattered(dask_scheduler, keys) -> dict:
    keeper = dask_scheduler.plugins.get(_KEEPER)
    if keeper is None:
        return {}
    return {k: keeper.lost_data[k] for k in keys if k in keeper.lost_data}


_registered: set[str] = set()  # clients ensure_keeper has tried
_installed: set[str] = set()  # clients whose scheduler runs the plugin
_registered_lock = threading.Lock()


def lost_worker_timeout() -> float:
    """Seconds a task pinned to a lost worker waits for a replacement.

    Read from ``$DNDASK_LOST_WORKER_TIMEOUT`` (default 60).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the variable is not a positive number.
    """
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
    how long a task pinned to a lost worker waits for a replacement. A
    scheduler that refuses the plugin (one that cannot import dndask, say)
    gets a ``RuntimeWarning`` once, and is not asked again.

    Parameters
    ----------
    client : distributed.Client
        The client whose scheduler gets the plugin.

    Raises
    ------
    ValueError
        If ``$DNDASK_LOST_WORKER_TIMEOUT`` is not a positive number.
    """
    with _registered_lock:
        if client.id in _registered:
            return
        grace = lost_worker_timeout()
        try:
            client.register_plugin(RankKeeper(grace))
            _installed.add(client.id)
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
    return [a for a in keeper.dead if a not in keeper.replaced] + sorted(keeper.unknown)


@contextlib.contextmanager
def lost_data_explained(client: distributed.Client, graph: Mapping, comm) -> Iterator[None]:
    """Re-raise errors caused by lost workers so that they name the lost ranks.

    Dask cancels the futures of scattered data that died with its worker;
    :class:`RankKeeper`'s errors name a worker, and the comm knows its rank.
    Any error while ``client`` is closing or closed (``ht.shutdown()`` from
    another thread, say) becomes a ``RuntimeError`` saying so.

    Parameters
    ----------
    client : distributed.Client
        The client the guarded code waits through.
    graph : mapping
        The graph being run (its futures are the scattered data it uses).
    comm : Comm or None
        The array's comm, to name ranks; ``None`` names workers only.
    """
    try:
        yield
    except (Exception, asyncio.CancelledError) as exc:
        if client.status != "running":
            raise RuntimeError(
                f"the cluster was shut down while this computation ran (client status "
                f"{client.status!r}: ht.shutdown() or a closed client); its results are gone. "
                "Start a cluster again (ht.init) and create the arrays again"
            ) from exc
        worded = _worded(client, graph, comm, exc)
        if worded is None:
            raise
        raise worded from exc


def _worded(client: distributed.Client, graph: Mapping, comm, exc: BaseException):
    """The error naming lost ranks that ``exc`` stands for, or None if it is no such error."""
    # a wait raises the plural error for all cancelled futures; a gather the singular one
    cancelled = (distributed.client.FuturesCancelledError, distributed.client.FutureCancelledError)
    if isinstance(exc, cancelled):
        lost = client.run_on_scheduler(_lost_scattered, keys=_future_keys(graph))
        if not lost:
            return None
        return RuntimeError(
            f"the chunk of {_ranks_label(sorted(set(lost.values())), comm)}{_LOST}it was sent "
            "from the driver and existed only in that worker's memory, so Dask cannot "
            "recompute it. Create the array again, or persist(replicate=2) such data beforehand"
        )
    if isinstance(exc, RuntimeError) and _LOST in str(exc) and comm is not None:
        dead = set(client.run_on_scheduler(_dead_workers))
        gone = [w for w in comm.workers if w in dead]
        if gone and "the array's comm lost" not in str(exc):
            return RuntimeError(f"the array's comm lost {_ranks_label(gone, comm)}: {exc}")
    return None


def _ranks_label(addresses: Sequence[str], comm) -> str:
    workers = tuple(getattr(comm, "workers", ()))
    ranks = [workers.index(a) for a in addresses if a in workers]
    where = ", ".join(addresses)
    plural = "s" if len(addresses) > 1 else ""
    if not ranks:
        return f"worker{plural} {where}"
    return f"rank{plural} {', '.join(map(str, ranks))} (worker{plural} {where})"
