"""The job of ``python -m bench.multinode``: runs under mpirun across the simulated nodes.

On MPI rank 1 (the client): the trivial step, a relayout (``resplit_`` 0 -> 1) and a fused
elementwise chain, dndask and plain dask.array alternating on the same cluster and the same
chunks. Prints one ``RESULT <json>``: per case the tasks the scheduler ran for one call of each side
and its best and median seconds.
"""

import json
import statistics
import sys
import time

import dask.array as da
import distributed
import distributed.diagnostics.plugin
import numpy as np

import dndask as ht
from bench import workloads


class TaskCounter(distributed.diagnostics.plugin.SchedulerPlugin):
    """Counts the tasks the scheduler runs (processing -> memory) since the last reset."""

    name = "bench-task-counter"

    def __init__(self):
        self.count = 0

    def transition(self, key, start, finish, *args, **kwargs):
        if start == "processing" and finish == "memory":
            self.count += 1


def _reset(dask_scheduler):
    dask_scheduler.plugins[TaskCounter.name].count = 0


def _count(dask_scheduler):
    return dask_scheduler.plugins[TaskCounter.name].count


def tasks_run(client, op) -> int:
    """Tasks the scheduler ran for one call of ``op``."""
    client.run_on_scheduler(_reset)
    op()
    return client.run_on_scheduler(_count)


def timed(op, repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        op()
        out.append(time.perf_counter() - t0)
    return out


def persist_wait(x):
    y = x.persist()
    distributed.wait(distributed.futures_of(y))
    return y


if __name__ == "__main__":
    mib, repeats = float(sys.argv[1]), int(sys.argv[2])
    client = ht.init()
    comm = ht.get_comm()
    size, cols = comm.size, 1024
    rows = max(size, int(mib * (1 << 20) / (4 * cols)))
    counts = workloads.balanced_counts(rows, size)
    a = ht.random.rand(rows, cols, dtype=ht.float32, split=0).persist(wait=True)
    x = persist_wait(da.random.random((rows, cols), chunks=(tuple(counts), cols)).astype("f4"))
    col_counts = tuple(workloads.balanced_counts(cols, size))
    client.register_plugin(TaskCounter())
    cases = {
        "step": (lambda: float((a + 1).sum()), lambda: float((x + 1).sum())),
        "resplit01": (lambda: a.resplit(1).persist(wait=True),
                      lambda: persist_wait(x.rechunk((rows, col_counts)))),
        "chain": (lambda: float(workloads.chain(a)), lambda: float(workloads.chain(x))),
    }  # fmt: skip
    result = {"ranks": size, "rows": rows, "cols": cols, "cases": {}}
    for name, (mine, theirs) in cases.items():
        counts_run = [tasks_run(client, mine), tasks_run(client, theirs)]  # also the warm-up
        t_mine, t_theirs = [], []
        for _ in range(repeats):  # alternate, so load changes hit both sides alike
            t_mine += timed(mine, 1)
            t_theirs += timed(theirs, 1)
        result["cases"][name] = {
            "tasks": counts_run,
            "dndask_s": [min(t_mine), statistics.median(t_mine)],
            "dask_s": [min(t_theirs), statistics.median(t_theirs)],
        }
    np.testing.assert_allclose(a.resplit(1).numpy(), a.numpy())
    print("RESULT", json.dumps(result), flush=True)
