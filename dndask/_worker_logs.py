"""A user's error inside a rank's task is raised once, in the driver: the worker stays quiet.

When a task raises, distributed's worker logs a full "Compute Failed" record (key, task,
exception, traceback) on the logger ``distributed.worker``, and the client raises the same
error again. The per-rank (SPMD) tasks run the user's own code: the functions given to
``ht.per_rank(fn)`` and ``a.map_local(fn)``, and the conversion of the pieces of an
``is_split`` join. dndask re-raises their errors in the driver naming the function, the
rank and the exception, so the worker's record is a duplicate that reads like a crash.

:class:`QuietUserErrors`, a worker plugin, adds a filter to every worker's
``distributed.worker`` logger that drops exactly those records: "Compute Failed" of a
task whose key starts with one of :data:`SPMD_TASK_PREFIXES`. Every other record
(errors of dndask's graph tasks, warnings, a user's plain ``client.submit``) is kept.
:func:`quiet_user_errors` registers the plugin once per client, before the first such
task; the scheduler hands it to workers that join later too.
"""

from __future__ import annotations

import contextlib
import logging
import threading

import distributed
from distributed.diagnostics.plugin import WorkerPlugin

__all__ = ["SPMD_TASK_PREFIXES", "QuietUserErrors", "UserErrorFilter", "quiet_user_errors"]

# Key prefixes of per-rank (SPMD) work, whose errors dndask re-raises naming the rank
# (``_per_rank._submit_each`` builds the keys; ``_recovery`` never reruns these elsewhere).
SPMD_TASK_PREFIXES = ("per-rank-", "as-chunk-", "map-local-", "describe-")

WORKER_LOGGER = "distributed.worker"

_lock = threading.Lock()
_registered: set[str] = set()  # ids of the clients whose workers have the plugin


class UserErrorFilter(logging.Filter):
    """Drops the worker's "Compute Failed" record of a task that ran a user's function.

    >>> f = UserErrorFilter()
    >>> def record(key):
    ...     args = (key, "executing", "<Task>", "ValueError()", "")
    ...     return logging.LogRecord(WORKER_LOGGER, logging.ERROR, "", 0, "Compute Failed\\n"
    ...                              "Key: %s\\n", args, None)
    >>> f.filter(record("map-local-abc-0")), f.filter(record("sum-aggregate-1f2e"))
    (False, True)
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if not isinstance(record.msg, str) or not record.msg.startswith("Compute Failed"):
            return True
        key = record.args[0] if isinstance(record.args, tuple) and record.args else None
        return not (isinstance(key, str) and key.startswith(SPMD_TASK_PREFIXES))


class QuietUserErrors(WorkerPlugin):
    """Worker plugin: installs :class:`UserErrorFilter` on the worker's logger (once)."""

    name = "dndask-quiet-user-errors"
    idempotent = True

    def setup(self, worker: distributed.Worker) -> None:
        logger = logging.getLogger(WORKER_LOGGER)
        if not any(isinstance(f, UserErrorFilter) for f in logger.filters):
            logger.addFilter(UserErrorFilter())

    def teardown(self, worker: distributed.Worker) -> None:
        logger = logging.getLogger(WORKER_LOGGER)
        for f in [f for f in logger.filters if isinstance(f, UserErrorFilter)]:
            logger.removeFilter(f)


def quiet_user_errors(client: distributed.Client) -> None:
    """Give ``client``'s workers :class:`QuietUserErrors` (once per client).

    A cluster whose workers cannot take the plugin (they cannot import dndask, say) keeps
    the duplicate records; nothing else changes, so that failure is not reported.
    """
    with _lock:
        if client.id in _registered:
            return
        _registered.add(client.id)
        with contextlib.suppress(Exception):  # only log records are at stake
            client.register_plugin(QuietUserErrors())
