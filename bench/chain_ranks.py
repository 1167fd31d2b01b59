"""The 10-op elementwise chain + sum at several rank counts, dndask against dask.array.

On small arrays the scheduler, not compute, is measured: ``P`` workers (one thread each)
of an embedded cluster, a ``(64 P) x 256`` float32 matrix split in ``P`` row blocks,
persisted first. For each ``P``: the best of ``repeats`` seconds of ``float(chain(x))``
on each side and the tasks each side submits (the persisted input's chunks excluded).
The dask side is a plain dask array of the same chunks, persisted by dask, so Dask's
own optimization (fusion included) applies to it.

Run: ``python -m bench.chain_ranks --ranks 4,16``.
"""

from __future__ import annotations

import argparse
import time

import dask
import dask.array as da
import distributed
import numpy as np

import dndask as ht
from dndask import _compute

from . import workloads


def best_of(fn, repeats: int) -> float:
    """The best seconds of ``repeats`` calls of ``fn`` (after one warm-up call)."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def point(ranks: int, repeats: int, cols: int = 256) -> dict:
    """Seconds and tasks of the chain at ``ranks`` workers, both sides."""
    client = ht.init(ranks)
    try:
        rows = 64 * ranks
        x = ht.random.randn(rows, cols, dtype=ht.float32, split=0).persist_(wait=True)
        rng = da.random.default_rng(0)
        xd = rng.standard_normal((rows, cols), dtype=np.float32, chunks=(rows // ranks, cols))
        xd = client.persist(xd)
        distributed.wait(xd)
        graph, _ = _compute._graph_of(workloads.chain(x).to_dask())
        held = set(x._chunk_keys())
        dnd_tasks = sum(1 for key in dict(graph) if key not in held)
        (opt,) = dask.optimize(workloads.chain(xd))
        inputs = set(dict(xd.__dask_graph__()))
        dask_tasks = sum(1 for key in dict(opt.__dask_graph__()) if key not in inputs)
        dnd = best_of(lambda: float(workloads.chain(x)), repeats)
        dsk = best_of(lambda: float(dask.compute(workloads.chain(xd))[0]), repeats)
        return {
            "ranks": ranks,
            "dndask_s": dnd,
            "dask_s": dsk,
            "ratio": dnd / dsk,
            "dndask_tasks": dnd_tasks,
            "dask_tasks": dask_tasks,
        }
    finally:
        ht.shutdown()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", default="4,16")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    print("| P | dndask ms | dask ms | dndask/dask | dndask tasks | dask tasks |")
    print("|---:|---:|---:|---:|---:|---:|")
    for ranks in (int(r) for r in args.ranks.split(",")):
        p = point(ranks, args.repeats)
        print(
            f"| {p['ranks']} | {p['dndask_s'] * 1e3:.0f} | {p['dask_s'] * 1e3:.0f} "
            f"| {p['ratio']:.2f} | {p['dndask_tasks']} | {p['dask_tasks']} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
