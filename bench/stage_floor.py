"""The scheduler's floor: graphs of no-op tasks in the shapes of dndask's operations.

``python -m bench.stage_floor`` (and every ``python -m bench`` run, on the dndask cluster).

Each graph has one task per worker (pinned to it) per stage, and its tasks do nothing, so its
time is what Dask's scheduler and workers take to run a graph of that shape: the least that
any Dask graph of it costs on this machine, whatever its tasks compute. The shapes:

- ``one stage``: ``P`` independent tasks, an elementwise chain's or ``randn``'s shape;
- ``two stages, local``: ``P`` tasks, each followed by one on the same worker (a scheduler
  round trip, no transfer);
- ``two stages, all to all``: the second-stage task of each worker depends on every
  first-stage task (each fetches ``P - 1`` small results from its peers);
- ``post, barrier, collect``: a relayout over shared memory or MPI: ``P`` posts, one barrier
  that depends on them all, ``P`` collects that depend on the barrier (``2P + 1`` tasks).

Each repeat builds new keys (no result is reused) and submits them as dndask submits its own
graphs; only the submission and the wait are timed, not building the graph. The shapes
alternate within a repeat, so a disturbance of the machine falls on all of them.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence

import dask
import distributed

import dndask
from dndask._compat import Task, TaskRef, named_graph

from . import systems

SHAPES = ("one stage", "two stages, local", "two stages, all to all", "post, barrier, collect")
RELAYOUT = SHAPES[3]  # the shape of a relayout over shared memory or MPI


def noop(*args) -> int:
    """A task that does nothing with its inputs."""
    return 0


def tasks(shape: str, ranks: int) -> int:
    """The number of tasks of ``shape`` on ``ranks`` workers.

    >>> [tasks(s, 4) for s in SHAPES]
    [4, 8, 8, 9]
    """
    return {SHAPES[0]: ranks, RELAYOUT: 2 * ranks + 1}.get(shape, 2 * ranks)


def graph(shape: str, ranks: int, token: int) -> tuple[dict, list, dict]:
    """No-op tasks of ``shape`` over ``ranks`` workers: the graph, its outputs, each key's rank.

    >>> dsk, outputs, rank = graph("post, barrier, collect", 2, 0)
    >>> len(dsk), outputs, sorted(set(rank.values()))
    (5, [('floor-second-0', 0), ('floor-second-0', 1)], [0, 1])
    """
    if shape not in SHAPES:
        raise ValueError(f"`shape` must be one of {', '.join(map(repr, SHAPES))}, got {shape!r}")
    dsk: dict = {}
    rank: dict = {}

    def stage(name: str, deps) -> list:
        keys = []
        for r in range(ranks):
            key = (f"{name}-{token}", r)
            dsk[key] = Task(key, noop, token, r, *(TaskRef(d) for d in deps(r)))
            rank[key] = r
            keys.append(key)
        return keys

    first = stage("floor-first", lambda r: ())
    if shape == SHAPES[0]:
        return dsk, first, rank
    if shape == SHAPES[1]:
        return dsk, stage("floor-second", lambda r: (first[r],)), rank
    if shape == SHAPES[2]:
        return dsk, stage("floor-second", lambda r: first), rank
    barrier = f"floor-barrier-{token}"
    dsk[barrier] = Task(barrier, noop, token, *(TaskRef(k) for k in first))
    rank[barrier] = 0
    return dsk, stage("floor-second", lambda r: (barrier,)), rank


def measure(
    client: distributed.Client, repeats: int = 15, warmup: int = 2, shapes: Sequence[str] = SHAPES
) -> dict[str, list[float]]:
    """Seconds of each repeat of each shape (warm-up repeats dropped), on ``client``'s workers.

    Each graph goes to the scheduler as dndask submits its own: one ``Client.get`` of a
    dict of tasks under a fresh name, every key pinned to its worker by an annotation.
    """
    workers = sorted(client.scheduler_info()["workers"])
    times: dict[str, list[float]] = {shape: [] for shape in shapes}
    token = time.time_ns()
    for i in range(warmup + repeats):
        for shape in shapes if i % 2 else shapes[::-1]:
            token += 1
            dsk, outputs, rank = graph(shape, len(workers), token)

            def pinned(key, rank=rank):
                return [workers[rank[key]]]

            t0 = time.perf_counter()
            with dask.annotate(workers=pinned, allow_other_workers=False):
                futures = client.get(named_graph(dsk, f"floor-{token}"), outputs, sync=False)
            distributed.wait(futures)
            seconds = time.perf_counter() - t0
            del futures
            if i >= warmup:
                times[shape].append(seconds)
    return times


def table(times: dict[str, list[float]], ranks: int) -> str:
    """A markdown table: shape, tasks, median and best milliseconds.

    >>> print(table({"one stage": [0.01, 0.012, 0.011]}, 4))
    | graph of no-op tasks | tasks | median ms | best ms |
    | --- | ---: | ---: | ---: |
    | one stage | 4 | 11.0 | 10.0 |
    """
    lines = [
        "| graph of no-op tasks | tasks | median ms | best ms |",
        "| --- | ---: | ---: | ---: |",
    ]
    for shape, seconds in times.items():
        median, best = statistics.median(seconds) * 1e3, min(seconds) * 1e3
        lines.append(f"| {shape} | {tasks(shape, ranks)} | {median:.1f} | {best:.1f} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Start a loopback cluster of ``--ranks`` workers and print the floor's table."""
    parser = argparse.ArgumentParser(prog="python -m bench.stage_floor", description=__doc__)
    parser.add_argument("--ranks", type=int, default=4, help="workers (one thread each)")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args(argv)
    client, _ = systems.start_cluster(args.ranks)
    try:
        print(table(measure(client, args.repeats), args.ranks))
    finally:
        dndask.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
