"""The 10-op elementwise chain + sum and ``resplit_`` 0 -> 1 at several rank counts,
dndask against dask.array.

On small arrays the scheduler, not compute, is measured: ``P`` workers (one thread each)
of an embedded cluster.

- **chain**: a ``(64 P) x 256`` float32 matrix split in ``P`` row blocks, persisted first.
  For each ``P``: the best of ``repeats`` seconds of ``float(chain(x))`` on each side and
  the tasks each side submits (the persisted input's chunks excluded). The dask side is a
  plain dask array of the same chunks, persisted by dask, so Dask's own optimization
  (fusion included) applies to it.
- **resplit**: a ``(64 P) x (64 P)`` float32 matrix split in ``P`` row blocks, persisted
  afresh before every repeat (outside the timing); timed is ``resplit_(1)`` and the
  persist of its result, against ``rechunk`` to ``P`` column blocks and its persist
  (Dask's default rechunk method). Tasks are those of the relayout, the input excluded.

Run: ``python -m bench.chain_ranks --ranks 4,16,48``.
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
    return best_of_fresh(lambda: None, lambda _: fn(), repeats)


def _point(ranks: int, dnd: float, dsk: float, dnd_tasks: int, dask_tasks: int) -> dict:
    """One row: both sides' best seconds and submitted tasks at ``ranks`` workers."""
    return {
        "ranks": ranks,
        "dndask_s": dnd,
        "dask_s": dsk,
        "ratio": dnd / dsk,
        "dndask_tasks": dnd_tasks,
        "dask_tasks": dask_tasks,
    }


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
        return _point(ranks, dnd, dsk, dnd_tasks, dask_tasks)
    finally:
        ht.shutdown()


def best_of_fresh(prepare, step, repeats: int) -> float:
    """The best seconds of ``step(prepare())`` over ``repeats`` (after one warm-up),
    ``prepare`` untimed."""
    step(prepare())
    best = float("inf")
    for _ in range(repeats):
        state = prepare()
        t0 = time.perf_counter()
        step(state)
        best = min(best, time.perf_counter() - t0)
        del state
    return best


def resplit_point(ranks: int, repeats: int) -> dict:
    """Seconds and tasks of ``resplit_`` 0 -> 1 at ``ranks`` workers, both sides."""
    client = ht.init(ranks)
    try:
        n = 64 * ranks
        rng = da.random.default_rng(0)

        def dnd_input():
            return ht.random.randn(n, n, dtype=ht.float32, split=0).persist_(wait=True)

        def dnd_step(x):
            x.resplit_(1)
            x.persist_(wait=True)

        def dask_input():
            xd = client.persist(
                rng.standard_normal((n, n), dtype=np.float32, chunks=(n // ranks, n))
            )
            distributed.wait(xd)
            return xd

        def dask_step(xd):
            distributed.wait(client.persist(xd.rechunk((n, n // ranks))))

        x = dnd_input()
        held = set(x._chunk_keys())
        x.resplit_(1)
        graph, _ = _compute._graph_of(x.to_dask())
        dnd_tasks = sum(1 for key in dict(graph) if key not in held)
        xd = dask_input()
        inputs = set(dict(xd.__dask_graph__()))
        (opt,) = dask.optimize(xd.rechunk((n, n // ranks)))
        dask_tasks = sum(1 for key in dict(opt.__dask_graph__()) if key not in inputs)
        del x, xd
        dnd = best_of_fresh(dnd_input, dnd_step, repeats)
        dsk = best_of_fresh(dask_input, dask_step, repeats)
        return _point(ranks, dnd, dsk, dnd_tasks, dask_tasks)
    finally:
        ht.shutdown()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", default="4,16")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cases", default="chain,resplit", help="comma-separated: chain, resplit")
    args = parser.parse_args(argv)
    points = {"chain": point, "resplit": resplit_point}
    cases = args.cases.split(",")
    unknown = sorted(set(cases) - set(points))
    if unknown:
        parser.error(f"unknown case {unknown[0]!r}; choose from {', '.join(sorted(points))}")
    print("| case | P | dndask ms | dask ms | dndask/dask | dndask tasks | dask tasks |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for case in cases:
        for ranks in (int(r) for r in args.ranks.split(",")):
            p = points[case](ranks, args.repeats)
            print(
                f"| {case} | {p['ranks']} | {p['dndask_s'] * 1e3:.0f} | {p['dask_s'] * 1e3:.0f} "
                f"| {p['ratio']:.2f} | {p['dndask_tasks']} | {p['dask_tasks']} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
