"""``Comm``: the ranks of a DNDarray, each one a Dask worker.

A ``Comm`` is an ordered tuple of worker addresses: rank ``r`` is
``comm.workers[r]``. It plays the role of Heat's MPI communicator. In the
driver ``comm.rank`` is 0 (the driver acts as the root, so Heat code guarded
by ``if comm.rank == 0`` runs once); inside a per-rank function it is the
rank the function runs as.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator, Sequence

import distributed

from . import _launch, _layout, _repr, _runtime
from ._compat import scheduler_workers

__all__ = ["Comm", "get_comm", "use_comm"]

_rank: contextvars.ContextVar[int] = contextvars.ContextVar("dndask_rank", default=0)


@contextlib.contextmanager
def acting_as(rank: int) -> Iterator[None]:
    """Make ``Comm.rank`` report ``rank`` inside the block (used on workers)."""
    token = _rank.set(rank)
    try:
        yield
    finally:
        _rank.reset(token)


def live_workers(client: distributed.Client) -> dict[str, dict]:
    """Address -> information of every worker ``client``'s scheduler knows now.

    One fresh query. ``client.scheduler_info()`` is not used: it returns a
    cache that the client's periodic refresh (which asks for no workers) can
    overwrite between the query and the read, so it sometimes lists none.
    """
    return scheduler_workers(client)


def _worker_order(info: dict) -> list[str]:
    """Worker addresses ordered by worker name (by the number a name ends with)."""
    return sorted(info, key=lambda address: _launch.worker_order_key(
        info[address].get("name", address), address
    ))  # fmt: skip


class Comm:
    """The ranks a DNDarray is distributed over: one Dask worker per rank.

    Parameters
    ----------
    workers : sequence of str
        Worker addresses; position ``r`` is rank ``r``.
    client : distributed.Client, optional
        The client to compute with; the current dndask client by default.

    Examples
    --------
    >>> import dndask as ht
    >>> comm = ht.get_comm()
    >>> comm.rank
    0
    >>> comm.chunk((7, 4, 3), 0, rank=3)[1]
    (1, 4, 3)
    """

    def __init__(self, workers: Sequence[str], client: distributed.Client | None = None):
        if isinstance(workers, str) or not all(isinstance(w, str) for w in workers):
            raise TypeError("`workers` must be a sequence of worker address strings")
        workers = tuple(workers)
        if not workers:
            raise ValueError("`workers` must name at least one worker, got none")
        if len(set(workers)) != len(workers):
            raise ValueError(f"`workers` must not repeat a worker, got {workers}")
        if client is not None and not isinstance(client, distributed.Client):
            raise TypeError(f"`client` must be a distributed.Client, got {type(client).__name__}")
        self._workers = workers
        self._client = client

    @classmethod
    def from_client(cls, client: distributed.Client) -> Comm:
        """All workers of ``client``'s cluster, ordered by worker name."""
        info = live_workers(client)
        if not info:
            raise ValueError("the cluster has no workers")
        return cls(_worker_order(info), client)

    @property
    def size(self) -> int:
        """Number of ranks."""
        return len(self._workers)

    @property
    def rank(self) -> int:
        """0 in the driver; the executing rank inside per-rank functions."""
        return _rank.get()

    @property
    def workers(self) -> tuple[str, ...]:
        """Worker address of each rank."""
        return self._workers

    @property
    def client(self) -> distributed.Client:
        """The client this comm computes with."""
        if self._client is None or self._client.status != "running":
            self._client = _runtime.current_client()
        return self._client

    def is_distributed(self) -> bool:
        """Whether there is more than one rank."""
        return self.size > 1

    def chunk(self, shape: Sequence[int], split: int | None, rank: int | None = None):
        """``(offset, lshape, slices)`` of ``rank``'s balanced share of ``shape``.

        ``rank`` defaults to :attr:`rank`. Heat's rule: the lowest
        ``n % size`` ranks hold one extra row.
        """
        shape = tuple(shape)
        split = _layout.normalize_axis(split, len(shape), "split")
        return _layout.chunk(shape, split, self.size, self.rank if rank is None else rank)

    def counts_displs_shape(self, shape: Sequence[int], axis: int):
        """Balanced ``(counts, displs, buffer_shape)`` along ``axis`` (Heat's rule)."""
        shape = tuple(shape)
        axis = _layout.normalize_axis(axis, len(shape))
        if axis is None:
            raise ValueError("`axis` must be an int, got None")
        return _layout.counts_displs_shape(shape, axis, self.size, self.rank)

    def subcomm(self, ranks: Sequence[int]) -> Comm:
        """A comm over some of these ranks, renumbered in the order given.

        >>> import dndask as ht
        >>> ht.get_comm().subcomm([0, 1]).size
        2
        """
        ranks = list(ranks)
        for r in ranks:
            if isinstance(r, bool) or not isinstance(r, int):
                raise TypeError(f"`ranks` must hold ints, got {type(r).__name__}")
            if not 0 <= r < self.size:
                raise ValueError(f"`ranks` must be in [0, {self.size - 1}], got {r}")
        return Comm([self._workers[r] for r in ranks], self._client)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Comm) and other._workers == self._workers

    def __hash__(self) -> int:
        return hash(self._workers)

    def __repr__(self) -> str:
        return f"Comm(size={self.size}, workers={list(self._workers)})"

    @property
    def dashboard_link(self) -> str | None:
        """The cluster dashboard's address; ``None`` without a live client or a dashboard."""
        client = self._client
        if client is None or client.status != "running":
            return None
        try:
            return client.dashboard_link or None
        except KeyError:  # a scheduler without the dashboard service
            return None

    def _repr_html_(self) -> str:
        return _repr.comm_html(self._workers, self.dashboard_link)

    def __reduce__(self):
        return (Comm, (self._workers,))


_default: Comm | None = None
_default_lock = threading.RLock()


def get_comm() -> Comm:
    """The default comm: every worker of the current cluster.

    >>> import dndask as ht
    >>> ht.get_comm().size >= 1
    True
    """
    global _default
    with _default_lock:
        if _default is None or (
            _default._client is not None and _default._client.status != "running"
        ):
            _default = Comm.from_client(_runtime.current_client())
        return _default


def use_comm(comm: Comm | None) -> None:
    """Make ``comm`` the default for new arrays (``None`` restores all workers)."""
    global _default
    if comm is not None and not isinstance(comm, Comm):
        raise TypeError(f"`comm` must be a dndask.Comm, got {type(comm).__name__}")
    with _default_lock:
        _default = comm


def reset_default() -> None:
    """Forget the default comm (the cluster changed)."""
    use_comm(None)


_runtime.on_shutdown(reset_default)


def sanitize_comm(comm: object) -> Comm:
    """``comm`` itself, or the default comm for ``None``; TypeError for anything else."""
    if comm is None:
        return get_comm()
    if not isinstance(comm, Comm):
        raise TypeError(f"`comm` must be a dndask.Comm, got {type(comm).__name__}")
    return comm
