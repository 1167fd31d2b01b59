"""Starting the Dask cluster inside an MPI job (``ht.init(mpi=True)`` under ``mpirun``).

Every MPI process runs the user's script. As with dask-mpi, MPI rank 0
becomes the scheduler, rank 1 goes on running the script as the client, and
ranks 2..N-1 become the workers, named by their MPI rank, so dndask rank ``r``
is MPI rank ``r + 2``. The script ending on rank 1 shuts the whole cluster
down, and every process exits with status 0.

This module does the MPI side; the pure rules (launcher detection, world size,
GPU assignment) live in :mod:`dndask._launch`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import sys

import dask
import distributed
import psutil

from . import _launch

_LOGGERS = ("distributed", "tornado")

# Set at launch: on the client rank, what the MPI transport needs to know of the launch; on
# a worker rank, the communicator of the worker ranks (split from COMM_WORLD, in MPI rank
# order: worker MPI rank ``w`` is its rank ``w - FIRST_WORKER_RANK``).
LAUNCH: _launch.MpiLaunch | None = None
_WORKERS = None

_THREAD_LEVELS = ("MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED")


def worker_comm():
    """This worker rank's communicator of the worker ranks, or None (not a launched worker)."""
    return _WORKERS


def _thread_level_name(level: int) -> str:
    from mpi4py import MPI

    names = {getattr(MPI, n[4:]): n for n in _THREAD_LEVELS}
    names[MPI.THREAD_MULTIPLE] = "MPI_THREAD_MULTIPLE"
    return names.get(level, str(level))


def _split_workers(world):
    """The worker ranks' communicator (collective over COMM_WORLD; None off the workers),
    and every rank's thread level."""
    from mpi4py import MPI

    levels = world.allgather(MPI.Query_thread())
    rank = world.Get_rank()
    worker = rank >= _launch.FIRST_WORKER_RANK
    comm = world.Split(1 if worker else MPI.UNDEFINED, rank)
    return (comm if worker else None), levels


def _mpi_world():
    try:
        from mpi4py import MPI
    except ImportError:
        raise ImportError(
            "`mpi=True` needs mpi4py and an MPI library: `pip install mpi4py mpich`, then "
            "launch with `mpirun -np 4 python script.py`"
        ) from None
    return MPI.COMM_WORLD


def _host(interface: str | None) -> str | None:
    """The host to listen on: the named interface's address, else this node's address.

    Never the wildcard 0.0.0.0: a server listens only where it must.
    """
    if interface is not None:
        return None  # distributed resolves ``interface`` itself
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


def count_gpus() -> int:
    """GPUs this process could use, without initialising CUDA here."""
    devices = [d for d in os.listdir("/dev") if d.startswith("nvidia") and d[6:].isdigit()]
    return len(devices)


def _gpu_of_this_rank(world) -> str | None:
    """The GPU for this rank (workers only), agreed on by every rank of the node."""
    from mpi4py import MPI

    node = world.Split_type(MPI.COMM_TYPE_SHARED)
    node_ranks = node.allgather(world.Get_rank())
    gpus = _launch.visible_gpus(os.environ, count_gpus())
    try:
        table, error = _launch.assign_gpus(node_ranks, gpus), None
    except ValueError as exc:
        table, error = {}, str(exc)
    node.Free()
    errors = [e for e in world.allgather(error) if e]
    if errors:  # every rank raises, so none waits for the others
        raise ValueError(errors[0])
    return table.get(world.Get_rank())


def _ipv4_interfaces() -> list[str]:
    """This node's interfaces that have an IPv4 address (those a server can listen on)."""
    return sorted(
        name
        for name, addresses in psutil.net_if_addrs().items()
        if any(a.family == socket.AF_INET for a in addresses)
    )


def _check_interface(world, interface: str | None) -> None:
    """Every rank checks ``interface`` on its node; a node without it is an error on every rank.

    Checked before any server starts, so no rank waits for a scheduler or a worker
    that cannot bind (a node without ``ib0``, a typo in ``$DNDASK_INTERFACE``).
    """
    if interface is None:
        return
    available = _ipv4_interfaces()
    report = (socket.gethostname(), world.Get_rank(), None if interface in available else available)
    error = _launch.missing_interface(interface, world.allgather(report))
    if error:
        raise ValueError(error)


def _security(world, tls: bool) -> distributed.Security | None:
    """Temporary TLS credentials made on rank 0 and shared over MPI (never written to disk)."""
    if not tls:
        return None
    security, error = None, None
    if world.Get_rank() == _launch.SCHEDULER_RANK:
        try:
            security = distributed.Security.temporary()
        except ImportError as exc:
            error = f"`tls=True` needs the `cryptography` package ({exc})"
    security, error = world.bcast((security, error), root=_launch.SCHEDULER_RANK)
    if error:  # every rank raises, so none waits for rank 0
        raise ImportError(error)
    return security


def _quiet_shutdown() -> None:
    """Closing connections during shutdown logs harmless errors; keep them out of sight."""
    for name in _LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL)


def start(
    *,
    gpu: bool = False,
    tls: bool = False,
    interface: str | None = None,
    nthreads: int = 1,
    memory_limit: str | int | float = "auto",
    local_directory: str | None = None,
    dashboard: bool = False,
) -> distributed.Client:
    """Turn this MPI job into a Dask cluster; returns the client on MPI rank 1 only.

    The scheduler and worker ranks serve until the client shuts the cluster
    down, then exit the process with status 0.
    """
    world = _mpi_world()
    _launch.check_world_size(world.Get_size())
    rank = world.Get_rank()
    _check_interface(world, interface)
    device = _gpu_of_this_rank(world) if gpu else None
    security = _security(world, tls)
    workers_comm, levels = _split_workers(world)
    protocol = "tls" if tls else "tcp"
    host = _host(interface)
    logging.getLogger("distributed").setLevel(logging.WARNING)

    if rank == _launch.SCHEDULER_RANK:

        async def serve():
            async with distributed.Scheduler(
                host=host,
                interface=interface,
                protocol=protocol,
                security=security,
                dashboard=dashboard,
                dashboard_address=f"{host or '127.0.0.1'}:0",
            ) as scheduler:
                world.bcast(scheduler.address, root=rank)
                world.Barrier()
                await scheduler.finished()

        asyncio.run(serve())
        _exit()

    address = world.bcast(None, root=_launch.SCHEDULER_RANK)
    world.Barrier()

    if rank == _launch.CLIENT_RANK:
        global LAUNCH
        from mpi4py import MPI

        worker_levels = levels[_launch.FIRST_WORKER_RANK :]
        LAUNCH = _launch.MpiLaunch(
            address,
            tuple(range(_launch.FIRST_WORKER_RANK, world.Get_size())),
            min(worker_levels) >= MPI.THREAD_MULTIPLE,
            _thread_level_name(min(worker_levels)),
        )
        client = distributed.Client(address, security=security)
        client.wait_for_workers(world.Get_size() - _launch.FIRST_WORKER_RANK)
        return client  # dndask's exit hook (ht.shutdown) ends the job through shutdown()

    global _WORKERS
    _WORKERS = workers_comm  # this process is a worker rank
    if device is not None:  # its own settings
        os.environ["CUDA_VISIBLE_DEVICES"] = device
        dask.config.set(_launch.GPU_WORKER_CONFIG)

    async def work():
        async with distributed.Worker(
            address,
            name=rank,
            host=host,
            interface=interface,
            protocol=protocol,
            security=security,
            nthreads=nthreads,
            memory_limit=memory_limit,
            local_directory=local_directory,
            resources={"GPU": 1} if device is not None else None,
        ) as worker:
            await worker.finished()

    asyncio.run(work())
    _exit()


def shutdown(client: distributed.Client) -> None:
    """Close scheduler and workers when the script ends on the client rank.

    Every process is told first to keep quiet: workers leaving with data
    still in memory is expected at this point, not worth a warning.
    """
    _quiet_shutdown()
    with contextlib.suppress(Exception):  # the cluster may already be gone
        client.run_on_scheduler(_quiet_shutdown)
        client.run(_quiet_shutdown)
    with contextlib.suppress(Exception):
        client.shutdown()
    with contextlib.suppress(Exception):
        client.close()


def _exit() -> None:
    """End a server rank cleanly: flush output, finalise MPI, status 0."""
    _quiet_shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(0)
