"""The Dask cluster behind dndask: an embedded loopback cluster, or one the user names.

``init`` is explicit; without it, the first array operation calls it with its
defaults. An already-current ``distributed.Client`` is reused as is.
"""

from __future__ import annotations

import atexit
import logging
import multiprocessing
import os
import sys
import threading

import distributed

__all__ = ["current_client", "init", "shutdown"]

_DEFAULT_WORKERS = 4
_lock = threading.RLock()
_client: distributed.Client | None = None
_cluster: distributed.LocalCluster | None = None
_owns_client = False


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
    **cluster_kwargs,
) -> distributed.Client:
    """Connect dndask to a Dask cluster and return its client.

    With no arguments an embedded ``LocalCluster`` starts: ``n_workers``
    worker processes (default ``$DNDASK_WORKERS`` or 4), one thread each,
    listening on 127.0.0.1 only, with the dashboard on a free loopback port
    and distributed's INFO logs silenced. ``address`` or ``scheduler_file``
    connect to a running scheduler instead. Calling ``init`` again replaces
    the previous connection (closing a cluster dndask started).

    Parameters
    ----------
    n_workers : int, optional
        Number of workers (ranks) of the embedded cluster.
    address : str, optional
        Address of a running scheduler, e.g. ``"tcp://127.0.0.1:8786"``.
    scheduler_file : str, optional
        A scheduler file written by ``dask-mpi`` or ``dask scheduler``.
    **cluster_kwargs
        Passed to ``distributed.LocalCluster``.

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
    global _client, _cluster, _owns_client
    if address is not None and scheduler_file is not None:
        raise ValueError("`address` and `scheduler_file` are mutually exclusive")
    if (address is not None or scheduler_file is not None) and (n_workers or cluster_kwargs):
        raise ValueError("`n_workers` and cluster options only apply to the embedded cluster")
    if n_workers is not None:
        if isinstance(n_workers, bool) or not isinstance(n_workers, int):
            raise TypeError(f"`n_workers` must be an int, got {type(n_workers).__name__}")
        if n_workers < 1:
            raise ValueError(f"`n_workers` must be a positive int, got {n_workers}")
    with _lock:
        shutdown()
        if address is not None or scheduler_file is not None:
            client = distributed.Client(address=address, scheduler_file=scheduler_file)
            cluster = None
        else:
            options = {
                "n_workers": n_workers or _default_workers(),
                "threads_per_worker": 1,
                "processes": True,
                "host": "127.0.0.1",
                "dashboard_address": "127.0.0.1:0",
                "silence_logs": logging.WARNING,
            }
            options.update(cluster_kwargs)
            _refuse_in_spawned_child()
            try:
                cluster = distributed.LocalCluster(**options)
            except RuntimeError as exc:
                raise RuntimeError(
                    f"the embedded cluster failed to start ({exc}). If this runs from a script, "
                    "put the script's code under `if __name__ == '__main__':` so that worker "
                    "processes can import it"
                ) from exc
            client = distributed.Client(cluster)
        _client, _cluster, _owns_client = client, cluster, True
        return client


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
        try:
            existing = distributed.default_client()
        except ValueError:
            existing = None
        if _alive(existing):
            _client, _owns_client = existing, False
            return existing
        return init()


def shutdown() -> None:
    """Close the client and the embedded cluster that dndask started.

    A client the user created and dndask merely reused is left open.

    >>> import dndask as ht
    >>> ht.shutdown()
    """
    global _client, _cluster, _owns_client
    from . import _comm

    with _lock:
        client, cluster, owned = _client, _cluster, _owns_client
        _client, _cluster, _owns_client = None, None, False
        _comm.reset_default()
        if owned and client is not None:
            client.close()
        if cluster is not None:
            cluster.close()


atexit.register(shutdown)
