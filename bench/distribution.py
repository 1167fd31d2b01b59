"""Benchmark of dndask's distribution operations (not a test: prints a markdown table).

Run with ``.venv/bin/python bench/distribution.py [MiB]`` (default 128 MiB, 4 workers).
It measures, on the embedded loopback cluster:

- wall time (median of 3) of persisting redistribute_ (balanced -> skewed),
  resplit_(0 -> 1) and resplit_(None) of a persisted float32 array;
- bytes the workers fetched from each other, against the theoretical minimum;
- graph size and construction time of redistribute_/resplit_ at many ranks,
  planned without a cluster of that size (nothing executes).
"""

from __future__ import annotations

import statistics
import sys
import time

import dask.array as da
import numpy as np
import torch

import dndask as ht
from dndask import _distribution, _layout


def received(client, since: float) -> int:
    def fetched(dask_worker, since=since):
        delay = dask_worker.scheduler_delay
        return sum(
            e["total"] for e in dask_worker.transfer_incoming_log if e["start"] - delay >= since
        )

    return sum(client.run(fetched).values())


def timed(client, source, change, repeats: int = 3):
    """Median wall time and bytes moved of ``change(source()).persist()``.

    Each repeat starts from a fresh persisted source, so no key or replica of
    an earlier repeat can be reused.
    """
    times, moved = [], []
    for _ in range(repeats):
        a = source()
        lazy = change(a)
        since = time.time()
        t0 = time.perf_counter()
        out = lazy.persist()
        times.append(time.perf_counter() - t0)
        moved.append(received(client, since))
        del out, a, lazy
    return statistics.median(times), statistics.median(moved)


def graph_scaling(rows: int = 1 << 20) -> list[tuple]:
    out = []
    for ranks in (4, 64, 256, 1024, 4096):
        counts = _layout.balanced_counts(rows, ranks)
        x = da.zeros((rows, 64), chunks=(counts, 64), dtype=np.float32)
        skewed = (rows - (ranks - 1) * (counts[-1] - 1),) + (counts[-1] - 1,) * (ranks - 1)
        t0 = time.perf_counter()
        y, _ = _distribution.redistribute(x, 0, counts, skewed)
        t_red = time.perf_counter() - t0
        n_red = len(y.dask.layers[y.name])
        t0 = time.perf_counter()
        z, _ = _distribution.resplit(x, 0, 1, counts, ranks, method="tasks")
        t_tasks = time.perf_counter() - t0
        n_tasks = len(z.dask.layers[z.name])
        t0 = time.perf_counter()
        p = x.rechunk(
            _layout.chunks_for(x.shape, 1, _layout.balanced_counts(64, ranks)), method="p2p"
        )
        n_p2p = len(p.__dask_graph__())
        t_p2p = time.perf_counter() - t0
        out.append((ranks, n_red, t_red, n_tasks, t_tasks, n_p2p, t_p2p))
    return out


def main() -> None:
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 128
    client = ht.init(4)
    comm = ht.get_comm()
    rows = mib * (1 << 20) // (4 * 1024)

    def source():
        return ht.random.rand(rows, 1024, split=0, comm=comm).persist()

    counts = _layout.balanced_counts(rows, comm.size)
    skew = [rows // 10, rows // 10, rows // 10]
    skew.append(rows - sum(skew))
    target = torch.tensor([[c, 1024] for c in skew])
    nbytes = rows * 1024 * 4
    cases = [
        ("redistribute_ balanced -> skewed", lambda a: a.redistribute(target_map=target),
         _layout.moved_rows(counts, skew) * 1024 * 4),
        ("resplit_ 0 -> 1", lambda a: a.resplit(1), nbytes * 3 // 4),
        ("resplit_ 0 -> None", lambda a: a.resplit(None), nbytes * 3 // 4),
    ]  # fmt: skip
    print(f"# dndask distribution benchmark: {mib} MiB float32, 4 workers, 1 thread each\n")
    print("| case | median s | MiB moved | minimum MiB | moved / minimum |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, make, minimum in cases:
        seconds, moved = timed(client, source, make)
        ratio = moved / minimum if minimum else float("nan")
        print(
            f"| {name} | {seconds:.3f} | {moved / 2**20:.1f} | {minimum / 2**20:.1f} "
            f"| {ratio:.2f} |"
        )
    print("\n## graph size at scale (built, not run)\n")
    print(
        "| ranks | redistribute tasks | s | resplit tasks (tasks) | s | resplit tasks (p2p) | s |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for ranks, n_red, t_red, n_tasks, t_tasks, n_p2p, t_p2p in graph_scaling():
        print(
            f"| {ranks} | {n_red} | {t_red:.3f} | {n_tasks} | {t_tasks:.3f} "
            f"| {n_p2p} | {t_p2p:.3f} |"
        )
    ht.shutdown()


if __name__ == "__main__":
    main()
