"""Which worker processes share a host: identities the workers report, never their addresses.

Two workers can share memory when they run on one kernel and see one ``/dev/shm``. An
address does not say so (a worker behind NAT, two containers on one node, a loopback
address on every node), so each worker reports :func:`host_identity` (its hostname, the
kernel's boot id and the device number of its ``/dev/shm`` mount), and
:func:`host_groups` groups ranks by it. The answers are cached per worker address: a
worker that restarts gets a new address.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Sequence

import distributed

from ._compat import scheduler_workers

SHM_DIR = "/dev/shm"
_BOOT_ID = "/proc/sys/kernel/random/boot_id"


def host_identity() -> str:
    """This process's host: ``hostname/boot id/st_dev of /dev/shm`` (``-`` for what is missing).

    Processes with equal identities run on one booted kernel and see the same
    ``/dev/shm``, so a file one writes there the others can map.

    >>> host_identity() == host_identity()
    True
    """
    try:
        with open(_BOOT_ID) as f:
            boot = f.read().strip()
    except OSError:
        boot = "-"
    try:
        shm = str(os.stat(SHM_DIR).st_dev)
    except OSError:
        shm = "-"
    return f"{socket.gethostname()}/{boot}/{shm}"


_lock = threading.Lock()
_known: dict[str, str] = {}  # worker address -> its host identity


def identities(client: distributed.Client, workers: Sequence[str]) -> dict[str, str]:
    """Worker address -> its :func:`host_identity`, as it reports it (asked once per address)."""
    with _lock:
        missing = [w for w in workers if w not in _known]
    if missing:
        answers = client.run(host_identity, workers=list(missing))
        with _lock:
            _known.update(answers)
    with _lock:
        return {w: _known[w] for w in workers}


def host_groups(client: distributed.Client, workers: Sequence[str]) -> list[list[int]]:
    """The ranks (positions in ``workers``) grouped by host, in order of first appearance."""
    ids = identities(client, workers)
    groups: dict[str, list[int]] = {}
    for rank, w in enumerate(workers):
        groups.setdefault(ids[w], []).append(rank)
    return list(groups.values())


def one_host(client: distributed.Client, workers: Sequence[str]) -> bool:
    """Whether all ``workers`` share one host (and so one ``/dev/shm``)."""
    return len(host_groups(client, workers)) <= 1


def shared_host(client: distributed.Client, workers: Sequence[str]) -> bool:
    """Whether all ``workers`` are live and share one host (False if any is unknown).

    Workers asked before answer from the cache; only unknown ones cost a query of the
    scheduler (are they live?) and one of them (their identity).
    """
    with _lock:
        missing = [w for w in workers if w not in _known]
    if missing and not set(missing) <= set(scheduler_workers(client)):
        return False
    return one_host(client, workers)
