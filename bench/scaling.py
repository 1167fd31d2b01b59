"""Graph size and build time of redistribute_ and resplit_ at many ranks (nothing runs).

A ``rows x 4096`` float32 dask array chunked in ``P`` balanced row blocks
stands for a DNDarray on ``P`` ranks; dndask's planners build the graphs
without a cluster of that size. For each ``P`` this records the tasks the
operation adds to the graph (the input's own tasks excluded) and the
seconds to build it and materialize every task:

- ``redistribute_`` from balanced to a skewed map (goal: linear in ``P``);
- ``resplit_`` 0 -> 1 as dndask builds it by default: one slice task per
  pair of ranks up to :func:`dndask._distribution.p2p_threshold` pieces,
  Dask's p2p rechunk above that;
- ``resplit_`` with ``method="tasks"`` (``P**2`` slices), built only up to
  ``tasks_max`` ranks, since 4096 ranks would mean 16.7 million tasks;
- ``resplit_`` over shared memory (or MPI: the same graph), the default on one host:
  a post per sending rank, a barrier, a collect per rank (at most ``2P + 1`` tasks);
  built from the same plan (the stand-in ranks are on no host), up to ``shm_max`` ranks:
  its plan holds all ``P**2`` pieces (numpy columns, one row per piece);
- Dask's own p2p rechunk to the same chunks, the yardstick for ``resplit_``.

``python -m bench.scaling --ranks 256,1024`` prints the points as a markdown table
(``python -m bench`` writes the full table into docs/performance.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import os
import time
from dataclasses import dataclass

import dask.array as da
import numpy as np

from dndask import _comm, _distribution, _layout
from dndask._layout import Distribution

from . import workloads

RANKS = (4, 64, 256, 1024, 4096)
COLS = 4096  # at least one column per rank at 4096 ranks; nothing is allocated


@dataclass(frozen=True)
class GraphPoint:
    """Tasks added and build seconds of each graph at ``ranks`` ranks (None: not built)."""

    ranks: int
    redistribute: int
    redistribute_s: float
    resplit: int
    resplit_s: float
    resplit_tasks: int | None
    resplit_tasks_s: float | None
    p2p: int
    p2p_s: float
    resplit_shm: int | None = None
    resplit_shm_s: float | None = None


def added_tasks(result: da.Array, source: da.Array) -> int:
    """Tasks in ``result``'s graph that ``source``'s graph does not have."""
    return len(dict(result.__dask_graph__())) - len(dict(source.__dask_graph__()))


def timed_graph(build, source: da.Array, repeats: int = 3) -> tuple[int, float]:
    """Tasks added by ``build()`` and the seconds to build and materialize them (best of all)."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        n = added_tasks(build(), source)
        best = min(best, time.perf_counter() - t0)
    return n, best


def graph_point(
    ranks: int, rows: int = 1 << 20, tasks_max: int = 256, repeats: int = 3, shm_max: int = 1024
) -> GraphPoint:
    """Every graph of the module docstring at ``ranks`` ranks."""
    gc.collect()  # the previous rank count's garbage, not collected inside a timing
    counts = _layout.balanced_counts(rows, ranks)
    x = da.zeros((rows, COLS), chunks=(counts, COLS), dtype=np.float32)
    skewed = workloads.skewed_counts(rows, ranks)
    dst = _layout.chunks_for(x.shape, 1, _layout.balanced_counts(COLS, ranks))
    # a comm is plain data until it computes: addresses that stand for P ranks
    comm = _comm.Comm([f"tcp://rank-{r}:1" for r in range(ranks)])
    src = Distribution(0, counts, comm)
    to_skewed, to_cols = src.with_counts(skewed), Distribution.balanced(x.shape, 1, comm)

    def relayout(dst: Distribution, method=None):
        return _distribution.relayout_graph(x, src, dst, method)[0]

    red = timed_graph(lambda: relayout(to_skewed), x, repeats)
    resplit = timed_graph(lambda: relayout(to_cols), x, repeats)
    tasks: tuple = (None, None)
    if ranks <= tasks_max:
        tasks = timed_graph(lambda: relayout(to_cols, "tasks"), x, repeats)
    p2p = timed_graph(lambda: x.rechunk(dst, method="p2p"), x, repeats)

    def shm_graph():
        plan = _layout.plan_relayout(x.shape, src, to_cols)
        return _distribution.build_shm(x, plan, "bench-scaling")[0]

    shm: tuple = (None, None)
    if ranks <= shm_max:
        shm = timed_graph(shm_graph, x, repeats)  # columns, not P² objects: cheap to repeat
    return GraphPoint(ranks, *red, *resplit, *tasks, *p2p, *shm)


def graph_scaling(
    ranks=RANKS, rows: int = 1 << 20, tasks_max: int = 256, repeats: int = 3, shm_max: int = 1024
) -> list[GraphPoint]:
    """:func:`graph_point` at every rank count in ``ranks`` (after an untimed warm-up)."""
    graph_point(4, rows, tasks_max, repeats=1)
    return [graph_point(p, rows, tasks_max, repeats, shm_max) for p in ranks]


def is_linear(points: list[GraphPoint], slack: float = 1.1) -> bool:
    """Whether redistribute_'s tasks per rank stay within ``slack`` of their smallest value."""
    per_rank = [p.redistribute / p.ranks for p in points]
    return max(per_rank) <= slack * min(per_rank)


def resplit_vs_p2p(points: list[GraphPoint]) -> list[tuple[int, float]]:
    """``(ranks, resplit_ tasks / p2p rechunk tasks)`` at every point."""
    return [(p.ranks, p.resplit / p.p2p) for p in points]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", default=",".join(map(str, RANKS)))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tasks-max", type=int, default=256, help="method='tasks' up to this")
    parser.add_argument("--shm-max", type=int, default=1024, help="shm/MPI graph up to this")
    args = parser.parse_args(argv)
    ranks = [int(r) for r in args.ranks.split(",")]
    load = os.getloadavg()[0]
    points = graph_scaling(
        ranks, tasks_max=args.tasks_max, repeats=args.repeats, shm_max=args.shm_max
    )
    names = [f.name for f in dataclasses.fields(GraphPoint)]
    print("| " + " | ".join(names) + " |")
    print("|" + "---:|" * len(names))
    for p in points:
        cells = (getattr(p, n) for n in names)
        print("| " + " | ".join("—" if c is None else f"{c:.4g}" for c in cells) + " |")
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"{stamp}, load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
