"""The Dask cluster behind dndask: an embedded loopback cluster, or one the user names.

``init`` is explicit; without it, the first array operation calls it with its
defaults. An already-current ``distributed.Client`` is reused as is.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import multiprocessing
import os
import sys
import threading
from collections.abc import Mapping, Sequence

import distributed

from . import _launch, _mpi, _recovery, _transport
from ._compat import NannyKeepingCluster

__all__ = ["current_client", "init", "on_shutdown", "shutdown"]

_DEFAULT_WORKERS = 4
_lock = threading.RLock()
_client: distributed.Client | None = None
_cluster: distributed.LocalCluster | None = None
_owns_client = False
_in_mpi_job = False  # the client leads an MPI job: closing it ends the whole job's cluster
_shutdown_hooks: list = []  # called under the lock when the cluster goes (layers above register)


def on_shutdown(hook) -> None:
    """Call ``hook()`` whenever :func:`shutdown` forgets the cluster.

    The layers above register here (``_comm`` forgets its default comm), so this module
    never imports them.
    """
    _shutdown_hooks.append(hook)


def _default_workers() -> int:
    raw = os.environ.get("DNDASK_WORKERS", str(_DEFAULT_WORKERS))
    try:
        n = int(raw)
    except ValueError:
        raise ValueError(f"`DNDASK_WORKERS` must be a positive int, got {raw!r}") from None
    if n < 1:
        raise ValueError(f"`DNDASK_WORKERS` must be a positive int, got {n}")
    return n


def _alive(client: distributed.Client | None) -> bool:
    return client is not None and client.status == "running"


def init(
    n_workers: int | None = None,
    *,
    address: str | None = None,
    scheduler_file: str | None = None,
    mpi: bool | None = None,
    gpu: bool = False,
    tls: bool = False,
    interface: str | None = None,
    security: distributed.Security | None = None,
    **cluster_kwargs,
) -> distributed.Client:
    """Connect dndask to a Dask cluster and return its client.

    With no arguments an embedded ``LocalCluster`` starts: ``n_workers``
    worker processes (default ``$DNDASK_WORKERS`` or 4), one thread each,
    listening on 127.0.0.1 only, with the dashboard on a free loopback port
    and distributed's INFO logs silenced. ``address`` or ``scheduler_file``
    connect to a running scheduler instead. Under ``mpirun`` (detected from
    Open MPI, MPICH/Hydra, PMIx or Slurm variables) the MPI job itself becomes
    the cluster, as with dask-mpi: MPI rank 0 is the scheduler, rank 1 runs
    the script, ranks 2.. are the workers, and dndask rank ``r`` is MPI rank
    ``r + 2``. Calling ``init`` again replaces the previous connection.
    The scheduler gets dndask's lost-worker plugin at once (see
    ``docs/concepts.md``, "Reliability"), so a worker lost before the first
    compute is covered too; a scheduler that cannot import dndask gets none,
    with a ``RuntimeWarning``.

    Parameters
    ----------
    n_workers : int, optional
        Number of workers (ranks) of the embedded cluster.
    address : str, optional
        Address of a running scheduler, e.g. ``"tcp://127.0.0.1:8786"``.
    scheduler_file : str, optional
        A scheduler file written by ``dask-mpi`` or ``dask scheduler``.
    mpi : bool, optional
        Start the cluster inside this MPI job; ``None`` detects ``mpirun``.
    gpu : bool
        GPU workers: each worker sees one GPU through ``CUDA_VISIBLE_DEVICES``
        (under MPI from its node-local rank; on the embedded cluster the
        machine's GPUs in turn, so ``n_workers`` above the GPU count share them),
        runs one thread and never spills device chunks to disk.
    tls : bool
        Temporary TLS credentials, so only this job's processes can join
        (embedded and MPI clusters).
    interface : str, optional
        Network interface for an MPI cluster (``$DNDASK_INTERFACE``, e.g. ``ib0``):
        the scheduler and every worker listen on its address on their own node; by
        default on the address this node's hostname resolves to, never the wildcard
        address. A node where it has no IPv4 address is a ``ValueError`` on every rank.
    security : distributed.Security, optional
        Credentials for ``address``/``scheduler_file`` connections.
    **cluster_kwargs
        Passed to ``distributed.LocalCluster``; for MPI, ``nthreads``,
        ``memory_limit``, ``local_directory`` and ``dashboard``.

    Returns
    -------
    distributed.Client

    Examples
    --------
    >>> import dndask as ht
    >>> client = ht.init(2)
    >>> ht.get_comm().size
    2
    >>> ht.shutdown()
    """
    global _client, _cluster, _owns_client, _in_mpi_job
    for name, value in (("mpi", mpi), ("gpu", gpu), ("tls", tls)):
        if value is not None and not isinstance(value, bool):
            raise TypeError(f"`{name}` must be a bool, got {type(value).__name__}")
    remote = address is not None or scheduler_file is not None
    if address is not None and scheduler_file is not None:
        raise ValueError("`address` and `scheduler_file` are mutually exclusive")
    if remote and (n_workers or cluster_kwargs or mpi or gpu or tls or interface):
        raise ValueError(
            "`n_workers`, `mpi`, `gpu`, `tls`, `interface` and cluster options only apply to a "
            "cluster dndask starts, not to `address`/`scheduler_file`"
        )
    if n_workers is not None:
        if isinstance(n_workers, bool) or not isinstance(n_workers, int):
            raise TypeError(f"`n_workers` must be an int, got {type(n_workers).__name__}")
        if n_workers < 1:
            raise ValueError(f"`n_workers` must be a positive int, got {n_workers}")
    if mpi is None:
        launch = None if remote else _launch.detect_launch()
        mpi = launch is not None and launch.size > 1
    if mpi and n_workers is not None:
        raise ValueError("`n_workers` does not apply under MPI: the job's size sets the ranks")
    if not mpi and interface is not None:
        raise ValueError(
            "`interface` applies to a cluster started under MPI (one host per node); the "
            "embedded cluster listens on 127.0.0.1"
        )
    gpus = _local_gpus() if gpu and not mpi else None  # a refused call changes nothing
    _recovery.lost_worker_timeout()  # likewise: a bad $DNDASK_LOST_WORKER_TIMEOUT starts nothing
    with _lock:
        shutdown()
        cluster = None
        if remote:
            client = distributed.Client(
                address=address, scheduler_file=scheduler_file, security=security
            )
        elif mpi:
            options = {"interface": interface or os.environ.get("DNDASK_INTERFACE") or None}
            client = _mpi.start(gpu=gpu, tls=tls, **options, **cluster_kwargs)
        else:
            client, cluster = _start_local(n_workers, gpus, tls, cluster_kwargs)
        _client, _cluster, _owns_client = client, cluster, True
        _in_mpi_job = bool(mpi)
        _recovery.ensure_keeper(client)  # covers a worker lost before the first compute
        return client


# How long GPU workers, added after the cluster started, may take to join
_START_TIMEOUT = 120


class LoopbackCluster(NannyKeepingCluster):
    """``LocalCluster`` whose nannies are never closed while they restart a worker.

    When a worker is removed, ``SpecCluster`` arms a timer
    (``distributed.deploy.lost-worker-timeout``, 15 s) that closes the
    worker's nanny unless a worker of the same name is back by then. A timer
    armed by an earlier death of that name can fire while the nanny restarts
    the worker after a later death, or just after the replacement registered
    but before the cluster heard of it; the nanny is then closed and its rank
    has no worker for good. This cluster's nannies run in the driver's
    process and restart their own worker, so nothing needs the hard close;
    how long a rank waits for its replacement is dndask's own
    ``$DNDASK_LOST_WORKER_TIMEOUT``. (The override of SpecCluster's private
    method is :class:`dndask._compat.NannyKeepingCluster`.)

    ``worker_env`` gives worker ``i`` (named ``i``) the environment variables
    ``worker_env[i]`` on top of the cluster's (``CUDA_VISIBLE_DEVICES`` of a
    GPU worker); such workers are added by :meth:`scale`, which asks
    :meth:`new_worker_spec` for each.
    """

    def __init__(self, *args, worker_env: Sequence[Mapping[str, str]] = (), **kwargs):
        self._worker_env = [dict(env) for env in worker_env]
        super().__init__(*args, **kwargs)

    def new_worker_spec(self) -> dict:
        spec = super().new_worker_spec()
        for name, worker in spec.items():
            if isinstance(name, int) and name < len(self._worker_env):
                options = dict(worker.get("options", {}))
                options["env"] = {**options.get("env", {}), **self._worker_env[name]}
                spec[name] = {**worker, "options": options}
        return spec


def _start_local(n_workers, gpus: Sequence[str] | None, tls: bool, cluster_kwargs: dict):
    """The embedded loopback cluster; with ``gpus``, GPU workers sharing them in turn.

    A GPU worker sees one GPU (``CUDA_VISIBLE_DEVICES``, from
    :func:`dndask._launch.share_gpus`), runs one thread, and never spills
    to disk: device chunks stay on the device (memory target and spill off).
    """
    n_workers = n_workers or _default_workers()
    options = {
        "n_workers": n_workers,
        "threads_per_worker": 1,
        "processes": True,
        "host": "127.0.0.1",
        "dashboard_address": "127.0.0.1:0",
        "silence_logs": logging.WARNING,
    }
    if gpus is not None:
        envs = [{"CUDA_VISIBLE_DEVICES": g} for g in _launch.share_gpus(n_workers, gpus)]
        options.update(
            n_workers=0,  # added below, each with its GPU
            worker_env=envs,
            # the workers' own config: device memory must not be spilled to disk
            config=dict(_launch.GPU_WORKER_CONFIG),
        )
    if tls:
        options.update(security=distributed.Security.temporary(), protocol="tls")
    options.update(cluster_kwargs)
    _refuse_in_spawned_child()
    try:
        cluster = LoopbackCluster(**options)
        if gpus is not None:
            cluster.scale(n_workers)
            cluster.wait_for_workers(n_workers, timeout=_START_TIMEOUT)
    except (RuntimeError, TimeoutError) as exc:
        raise RuntimeError(
            f"the embedded cluster failed to start ({exc}). If this runs from a script, "
            "put the script's code under `if __name__ == '__main__':` so that worker "
            "processes can import it"
        ) from exc
    return distributed.Client(cluster, security=options.get("security")), cluster


def _local_gpus() -> list[str]:
    """The GPUs the embedded cluster's workers may use; ValueError, from the driver, if none.

    Read from ``/dev/nvidia*`` and ``CUDA_VISIBLE_DEVICES``, without starting
    CUDA in the driver (as under MPI).
    """
    gpus = _launch.visible_gpus(os.environ, _mpi.count_gpus())
    if not gpus or _mpi.count_gpus() == 0:
        raise ValueError("`gpu=True` needs a CUDA GPU, but none is visible on this machine")
    return gpus


def _refuse_in_task() -> None:
    """Fail clearly when code running as a rank's task (on a worker) calls dndask."""
    try:
        distributed.get_worker()
    except ValueError:  # not inside a task: the driver
        return
    raise RuntimeError(
        "dndask calls cannot run inside a rank's task: a function given to ht.per_rank or "
        "map_local runs on a worker, where no dndask cluster can be reached. Work on the "
        "local tensor or numpy array there, and call dndask from the driver"
    )


def _refuse_in_spawned_child() -> None:
    """Fail clearly when a worker process re-runs an unguarded script that starts a cluster."""
    main = sys.modules.get("__main__")
    if multiprocessing.parent_process() is not None and getattr(main, "__name__", "") == (
        "__mp_main__"
    ):
        raise RuntimeError(
            "dndask cannot start a cluster while a worker process imports the main script; "
            "put the script's code under `if __name__ == '__main__':`"
        )


def current_client() -> distributed.Client:
    """The client dndask computes with, starting the embedded cluster if needed.

    >>> import dndask as ht
    >>> ht.current_client().status
    'running'
    """
    global _client, _owns_client
    with _lock:
        if _alive(_client):
            return _client
        _refuse_in_task()
        try:
            existing = distributed.default_client()
        except ValueError:
            existing = None
        if _alive(existing):
            _recovery.ensure_keeper(existing)  # covers a worker lost before the first compute
            _client, _owns_client = existing, False
            return existing
        return init()


def shutdown() -> None:
    """Close the client and the cluster that dndask started.

    Under MPI this shuts the job's scheduler and workers down, so every MPI
    process can exit. A client the user created and dndask merely reused is
    left open. The shared-memory segments the cluster's relayouts left in
    ``/dev/shm`` (see :mod:`dndask._transport`) are removed with it.

    >>> import dndask as ht
    >>> ht.shutdown()
    """
    global _client, _cluster, _owns_client, _in_mpi_job
    with _lock:
        client, cluster, owned, in_mpi = _client, _cluster, _owns_client, _in_mpi_job
        _client, _cluster, _owns_client, _in_mpi_job = None, None, False, False
        for hook in _shutdown_hooks:
            hook()
        tag = _transport.cluster_tag(client) if owned and client is not None else None
        if tag is not None and _alive(client):
            # the shared-memory segments this cluster's relayouts left (a killed post, a
            # cancelled compute): on every worker's host while they live
            with contextlib.suppress(Exception):
                client.run(_transport.remove_segments, tag)
            with contextlib.suppress(Exception):
                client.run(_quiet_worker_exit)
        if owned and client is not None and in_mpi:
            _mpi.shutdown(client)
        elif owned and client is not None:
            client.close()
        if cluster is not None:
            with _quiet_nanny_shutdown():
                cluster.close()
        if tag is not None:
            _transport.remove_segments(tag)  # and here, after the workers are gone


def _quiet_worker_exit() -> None:
    """In a worker of a cluster dndask is closing: hide its logs of the scheduler going away.

    The scheduler may close while a worker's heartbeat is on its way; the worker then logs
    "Failed to communicate with scheduler during heartbeat" with a traceback, at error
    level, though losing the scheduler is what closing asked for.
    """
    logging.getLogger("distributed.worker").setLevel(logging.CRITICAL)


@contextlib.contextmanager
def _quiet_nanny_shutdown():
    """Hide the nanny's "still alive after 4.0 seconds, killing" warning while we close.

    On a loaded machine a worker may exit slower than the nanny's grace time; the
    nanny then kills it, which is what closing asked for, so the warning is noise.
    """
    nanny_log = logging.getLogger("distributed.nanny")
    level = nanny_log.level
    nanny_log.setLevel(max(level, logging.ERROR))
    try:
        yield
    finally:
        nanny_log.setLevel(level)


atexit.register(shutdown)
