"""Pure launch logic: which MPI launcher started us, and which GPU each worker gets.

Nothing here starts a process or touches MPI; the functions read an
environment mapping and plain lists, so every rule is testable anywhere.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import NamedTuple

# MPI rank roles under ``ht.init(mpi=True)`` (as with dask-mpi)
SCHEDULER_RANK = 0
CLIENT_RANK = 1
FIRST_WORKER_RANK = 2

# A GPU worker's own Dask config: device chunks must never be spilled to disk, so the
# memory target and spill thresholds are off (embedded cluster and MPI job alike).
GPU_WORKER_CONFIG = {
    "distributed.worker.memory.target": False,
    "distributed.worker.memory.spill": False,
}
MIN_WORLD_SIZE = 3


class MpiLaunch(NamedTuple):
    """What the client rank of ``ht.init(mpi=True)`` knows of its launch (for the MPI transport).

    ``scheduler`` is the scheduler's address, ``worker_ranks`` the MPI ranks of the
    workers (their Dask names), ``multiple`` whether every worker rank got
    ``MPI_THREAD_MULTIPLE`` (``thread_level`` names the lowest level they got).
    """

    scheduler: str
    worker_ranks: tuple[int, ...]
    multiple: bool
    thread_level: str


def mpi_transport_blocker(
    launch: MpiLaunch | None, scheduler: str, names: Sequence[object]
) -> str | None:
    """Why the MPI transport cannot carry a relayout between workers named ``names``, or None.

    It can when this process is the client rank of dndask's ``mpirun`` launch, the
    comm's scheduler is the launch's, every worker of the comm is one of the launch's
    worker ranks (its name) and every worker rank runs with ``MPI_THREAD_MULTIPLE``.

    >>> launch = MpiLaunch("tcp://a:1", (2, 3, 4), True, "MPI_THREAD_MULTIPLE")
    >>> mpi_transport_blocker(launch, "tcp://a:1", [3, 2]) is None
    True
    >>> mpi_transport_blocker(launch, "tcp://a:1", [2, "w-5"])
    "workers that are ranks of dndask's mpirun launch, got worker 'w-5'"
    """
    if launch is None:
        return "a cluster started by dndask's mpirun launcher (ht.init(mpi=True) under mpirun)"
    if scheduler != launch.scheduler:
        return f"the scheduler of dndask's mpirun launch ({launch.scheduler}), got {scheduler}"
    for name in names:
        if not isinstance(name, int) or name not in launch.worker_ranks:
            return f"workers that are ranks of dndask's mpirun launch, got worker {name!r}"
    if not launch.multiple:
        return f"MPI_THREAD_MULTIPLE on every worker rank, got {launch.thread_level}"
    return None


class Launch(NamedTuple):
    """What the environment says about this process's parallel launch."""

    launcher: str  # "openmpi", "mpich", "slurm" or "pmix"
    size: int
    rank: int
    local_rank: int | None


# (launcher, size variable, rank variable, node-local rank variable), most specific first
_LAUNCHERS = (
    ("openmpi", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"),
    ("mpich", "PMI_SIZE", "PMI_RANK", "MPI_LOCALRANKID"),
    ("pmix", "PMIX_SIZE", "PMIX_RANK", "PMIX_LOCAL_RANK"),
    ("slurm", "SLURM_NTASKS", "SLURM_PROCID", "SLURM_LOCALID"),
)


def _int(environ: Mapping[str, str], name: str) -> int | None:
    raw = environ.get(name)
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"`{name}` must be an int, got {raw!r}") from None


def detect_launch(environ: Mapping[str, str] | None = None) -> Launch | None:
    """The MPI (or Slurm) launch this process belongs to, or None when started alone.

    Slurm sets its variables for every job step, so they count only when
    ``srun`` started more than one task.

    >>> detect_launch({"OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_RANK": "1",
    ...                "OMPI_COMM_WORLD_LOCAL_RANK": "1"})
    Launch(launcher='openmpi', size=4, rank=1, local_rank=1)
    >>> detect_launch({}) is None
    True
    """
    environ = os.environ if environ is None else environ
    for launcher, size_var, rank_var, local_var in _LAUNCHERS:
        size, rank = _int(environ, size_var), _int(environ, rank_var)
        if size is None or rank is None:
            continue
        if launcher == "slurm" and size < 2:
            continue
        if not 0 <= rank < size:
            raise ValueError(f"`{rank_var}` must be in [0, {size - 1}], got {rank}")
        return Launch(launcher, size, rank, _int(environ, local_var))
    return None


def worker_order_key(name: object, address: str) -> tuple:
    """Sort key for workers: by the number their name ends with, then by name.

    dask-mpi names workers by MPI rank (``2``) or ``prefix-rank`` (``dask_mpi-2``),
    so ``dask_mpi-10`` sorts after ``dask_mpi-9``.

    >>> sorted(["w-10", "w-9", "w-2"], key=lambda n: worker_order_key(n, ""))
    ['w-2', 'w-9', 'w-10']
    """
    text = str(name)
    match = re.fullmatch(r"(.*?)(\d+)", text)
    if match:
        return (0, match.group(1), int(match.group(2)), address)
    return (1, text, 0, address)


def visible_gpus(environ: Mapping[str, str], device_count: int) -> list[str]:
    """The GPU ids this node offers: ``CUDA_VISIBLE_DEVICES`` if set, else 0..count-1.

    >>> visible_gpus({"CUDA_VISIBLE_DEVICES": "2,3"}, 8)
    ['2', '3']
    >>> visible_gpus({}, 2)
    ['0', '1']
    """
    raw = environ.get("CUDA_VISIBLE_DEVICES")
    if raw is not None:
        return [d.strip() for d in raw.split(",") if d.strip() and d.strip() != "-1"]
    return [str(i) for i in range(device_count)]


def assign_gpus(node_ranks: Sequence[int], gpus: Sequence[str]) -> dict[int, str]:
    """One GPU per worker on a node: the node's worker ranks take its GPUs in turn.

    ``node_ranks`` are the MPI ranks running on one node; the scheduler and
    client ranks get no GPU. Workers beyond the GPU count share round-robin.

    >>> assign_gpus([0, 1, 2, 3], ["0", "1"])
    {2: '0', 3: '1'}
    >>> assign_gpus([4, 5, 6], ["0", "1"])
    {4: '0', 5: '1', 6: '0'}
    """
    workers = sorted(r for r in node_ranks if r >= FIRST_WORKER_RANK)
    if workers and not gpus:
        raise ValueError(
            f"`gpu=True` needs a GPU for every worker, but the node of MPI ranks "
            f"{list(workers)} has none"
        )
    return {rank: gpus[i % len(gpus)] for i, rank in enumerate(workers)}


def share_gpus(n_workers: int, gpus: Sequence[str]) -> list[str]:
    """The GPU of each worker of the embedded cluster: the GPUs taken in turn.

    One GPU per worker while there are enough; more workers share them
    round-robin (two workers on one GPU, say, to overlap transfers).

    >>> share_gpus(2, ["0", "1"])
    ['0', '1']
    >>> share_gpus(3, ["0"])
    ['0', '0', '0']
    """
    if not gpus:
        raise ValueError("`gpu=True` needs a CUDA GPU, but none is visible on this machine")
    return [gpus[i % len(gpus)] for i in range(n_workers)]


def missing_interface(
    interface: str, reports: Sequence[tuple[str, int, Sequence[str] | None]]
) -> str | None:
    """The error when ``interface`` is not usable on some node of an MPI job, else None.

    ``reports`` holds one ``(host, MPI rank, interfaces)`` per rank: the names of
    the interfaces that have an IPv4 address on that rank's node, or None where
    ``interface`` is among them. The message names each node that lacks it, with
    its ranks and what it has instead, so every rank can raise the same error.

    >>> missing_interface("ib0", [("n0", 0, None), ("n1", 2, ["eth0", "lo"]),
    ...                           ("n1", 3, ["eth0", "lo"])])
    "`interface` 'ib0' has no IPv4 address on node n1 (MPI ranks 2, 3; it has eth0, lo)"
    >>> missing_interface("eth0", [("n0", 0, None)]) is None
    True
    """
    nodes: dict[str, tuple[list[int], Sequence[str]]] = {}
    for host, rank, available in reports:
        if available is not None:
            nodes.setdefault(host, ([], available))[0].append(rank)
    if not nodes:
        return None
    parts = []
    for host, (ranks, available) in nodes.items():
        label = "rank" if len(ranks) == 1 else "ranks"
        has = ", ".join(available) or "none"
        parts.append(f"{host} (MPI {label} {', '.join(map(str, sorted(ranks)))}; it has {has})")
    node = "node" if len(parts) == 1 else "nodes"
    return f"`interface` {interface!r} has no IPv4 address on {node} {'; '.join(parts)}"


def check_world_size(size: int) -> None:
    """Refuse an MPI world too small for a scheduler, a client and a worker."""
    if size < MIN_WORLD_SIZE:
        raise ValueError(
            f"`mpi=True` needs at least {MIN_WORLD_SIZE} MPI ranks (scheduler, client, one "
            f"worker), got {size}; launch with e.g. `mpirun -np 4 python script.py`"
        )
