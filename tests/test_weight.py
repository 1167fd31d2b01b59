"""dndask's weight on a cluster: workers load torch only for tasks that need it, and a
user's error inside a task is raised once in the driver, not logged again by the worker.

Each test runs a script in a fresh interpreter with its own two-worker cluster: the
session cluster's workers have run torch tasks long before these tests, and their logs
do not reach this process.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap

from dndask._worker_logs import SPMD_TASK_PREFIXES, QuietUserErrors, UserErrorFilter


def _run(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DNDASK_PROGRESS": "off", "DNDASK_WORKERS": "2"}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def test_workers_import_torch_only_for_a_task_that_needs_it():
    result = _run(
        """
        import sys

        def torch_loaded():
            return "torch" in sys.modules

        if __name__ == "__main__":
            import dndask as ht

            a = ht.arange(10**6, split=0) + 1
            print(int(a.sum()))
            client = a.comm.client
            print("driver", torch_loaded())
            print("workers", sorted(client.run(torch_loaded).values()))
            lmap = a.lshape_map  # torch-returning: loads torch in the driver only
            print(type(lmap).__name__, lmap.tolist(), "driver", torch_loaded())
            print("workers", sorted(client.run(torch_loaded).values()))
            b = a.map_local(lambda t, rank: t * 2)  # a torch task: its workers load torch
            print(int(b.sum()), "workers", sorted(client.run(torch_loaded).values()))
            ht.shutdown()
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        str(10**6 * (10**6 + 1) // 2),
        "driver False",
        "workers [False, False]",
        "LshapeMap [[500000], [500000]] driver True",
        "workers [False, False]",
        f"{10**6 * (10**6 + 1)} workers [True, True]",
    ]


def test_a_users_error_in_a_task_is_raised_once_and_not_logged_by_the_worker():
    result = _run(
        """
        import dndask as ht

        def boom(rank):
            raise ValueError(f"negative on {rank}")

        def plain_failure():
            raise KeyError("not dndask's")

        if __name__ == "__main__":
            a = ht.arange(8, split=0)
            try:
                a.map_local(lambda t, rank: 1 / 0)
            except ZeroDivisionError as exc:
                print(exc)
            try:
                ht.per_rank(boom)
            except ValueError as exc:
                print(exc)
            try:  # a piece that cannot become a chunk: converted on its worker
                ht.array(ht.per_rank(lambda rank: object()), is_split=0)
            except TypeError as exc:
                print(exc)
            # a task of the user's own, outside dndask: its worker still logs it
            future = a.comm.client.submit(plain_failure, key="plain-failure")
            print(type(future.exception()).__name__)
            ht.shutdown()
        """
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout.splitlines()
    assert out[0] == "map_local function failed on rank 0: ZeroDivisionError: division by zero"
    assert out[1] == "per_rank function 'boom' failed on rank 0: ValueError: negative on 0"
    assert "rank 0" in out[2], out
    assert out[3] == "KeyError"
    # one "Compute Failed" record: the plain task's; none for dndask's per-rank tasks
    assert result.stderr.count("Compute Failed") == 1, result.stderr
    assert "Key:       plain-failure" in result.stderr
    for prefix in SPMD_TASK_PREFIXES:
        assert f"Key:       {prefix}" not in result.stderr, result.stderr


def _compute_failed(key: str) -> logging.LogRecord:
    args = (key, "executing", "<Task>", "ValueError()", "")
    return logging.LogRecord(
        "distributed.worker", logging.ERROR, "", 0, "Compute Failed\nKey: %s\n", args, None
    )


def test_the_filter_drops_only_compute_failed_of_per_rank_tasks():
    f = UserErrorFilter()
    for prefix in SPMD_TASK_PREFIXES:
        assert not f.filter(_compute_failed(f"{prefix}abc-0"))
    assert f.filter(_compute_failed("sum-aggregate-1f2e"))
    assert f.filter(_compute_failed(("map-local-abc", 0)))  # not a string key: kept
    other = logging.LogRecord(
        "distributed.worker", logging.WARNING, "", 0, "map-local-abc-0 is slow", None, None
    )
    assert f.filter(other)


def test_the_plugin_installs_one_filter_and_removes_it():
    logger = logging.getLogger("distributed.worker")
    plugin = QuietUserErrors()
    before = list(logger.filters)
    try:
        plugin.setup(None)
        plugin.setup(None)  # idempotent: a restarted plugin adds no second filter
        added = [f for f in logger.filters if isinstance(f, UserErrorFilter)]
        assert len(added) == 1
    finally:
        plugin.teardown(None)
    assert logger.filters == before
