"""``python -m bench.sorting``: dndask's sample sort, numpy's ``np.sort`` and Heat's ``ht.sort``.

A 1-D float32 array of normal random numbers (``--sizes`` MiB), split 0 on
``--ranks`` workers, each rank's values drawn where they live:

- **dndask**: ``ht.sort(a).persist_(wait=True)`` on the loopback cluster (one
  single-threaded worker per rank), measured like every case of ``python -m
  bench`` (:func:`bench.systems.measure_once`): wall time, the largest
  worker's peak memory above its baseline (its input chunk is in memory
  then), the bytes the workers fetched from each other;
- **numpy**: ``np.sort`` of the whole array in this one process;
- **Heat**: ``ht.sort(a)`` under MPI from Heat's own venv (``bench/_heat_cases.py --case sort``).

``--method`` picks the sample sort's exchange (``shm``, ``mpi``, ``tasks``, ``two-level``;
default: dndask's choice, shared memory on one host). Also the graph of the all-to-all at
4..4096 ranks for both exchanges, built and not run (:func:`graph_rows`).
Prints one JSON record per line.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time

import dask.array as da
import numpy as np
from dask.base import tokenize

import dndask as ht
from dndask import _transport
from dndask._sorting import _exchange, _plan

from . import _rss, heat_venv, systems, workloads

GRAPH_RANKS = (4, 64, 256, 1024, 4096)


def local_vector(rank: int, seed: int, counts: list[int]) -> np.ndarray:
    """Rank ``rank``'s normal random float32 values, drawn on its worker."""
    return np.random.default_rng(seed + rank).standard_normal(counts[rank], dtype=np.float32)


class SortSide:
    """dndask's ``sort`` of a balanced split-0 vector."""

    name = "dndask"

    def __init__(self, comm: ht.Comm, method: str | None = None):
        self.comm = comm
        self.method = method

    def prepare(self, w: workloads.Workload, seed: int) -> dict:
        pieces = ht.per_rank(local_vector, seed, w.counts, comm=self.comm)
        return {"a": ht.array(pieces, is_split=0).persist_(wait=True)}

    def run(self, w: workloads.Workload, state: dict):
        return ht.sort(state["a"], method=self.method).persist_(wait=True)


def numpy_sort(w: workloads.Workload, repeats: int) -> dict:
    """``np.sort`` of the whole array in this process: median seconds, peak above baseline."""
    times, peaks = [], []
    for i in range(repeats):
        values = np.random.default_rng(i).standard_normal(w.rows, dtype=np.float32)
        meter = _rss.PeakMeter().start()
        t0 = time.perf_counter()
        out = np.sort(values)
        times.append(time.perf_counter() - t0)
        peaks.append(meter.stop())
        del out, values
        gc.collect()
    return {"seconds": statistics.median(times), "peak": statistics.median(peaks)}


def exchange_of(comm: ht.Comm, method: str | None) -> str:
    """The exchange ``ht.sort`` takes on ``comm`` for ``method``: read off a small sort's graph."""
    a = ht.array(np.arange(4 * comm.size, dtype=np.float32)[::-1].copy(), split=0, comm=comm)
    keys = [str(k) for k in dict(ht.sort(a, method=method).to_dask().__dask_graph__())]
    posts = [k for k in keys if _transport.POST_PREFIX in k]
    if posts:
        return "mpi" if any(_transport.MPI_MARK in k for k in posts) else "shm"
    return _exchange.choose_method(method, comm.size)


def dndask_sort(client, comm, w: workloads.Workload, repeats: int, method=None) -> dict:
    side = SortSide(comm, method)
    systems.measure_once(client, side, w.resized(1), seed=10_000)  # warm-up
    samples = [systems.measure_once(client, side, w, seed=i) for i in range(repeats)]
    chunk = max(w.counts) * workloads.ITEMSIZE
    peak = statistics.median(s.peak for s in samples)
    moved = statistics.median(s.moved for s in samples)
    samples_bytes = w.ranks * _plan.OVERSAMPLE * (w.ranks - 1) * (workloads.ITEMSIZE + 16)
    return {
        "method": exchange_of(comm, method),
        "seconds": statistics.median(s.seconds for s in samples),
        "best": min(s.seconds for s in samples),
        "peak": peak,
        "peak_over_chunk": peak / chunk,
        "peak_with_input_over_chunk": (peak + chunk) / chunk,
        "moved": moved,
        "moved_over_array": moved / w.nbytes,
        "target_moved": 1.1 * w.nbytes + samples_bytes,
    }


def heat_sort(w: workloads.Workload, repeats: int) -> dict:
    venv = heat_venv.ensure_heat()
    record = heat_venv.run_case(venv, w, repeats)
    chunk = max(w.counts) * workloads.ITEMSIZE
    peak = statistics.median(record["peaks"])
    return {
        "seconds": statistics.median(record["times"]),
        "peak": peak,
        "peak_over_chunk": peak / chunk,
        "heat": record["heat"],
    }


def graph_rows(
    ranks=GRAPH_RANKS,
    rows: int = 1 << 22,
    max_build: int = 1024,
    methods=("tasks", "two-level"),
    max_build_two_level: int = 1024,
) -> list[dict]:
    """Tasks of the sort's exchange at ``P`` ranks and the seconds to build them (nothing runs).

    The cuts are those of evenly spread values (every piece non-empty). ``build_s``
    covers the planning of the pieces (:func:`dndask._sorting._plan.plan_exchange`)
    and the graph; above ``max_build`` ranks (``max_build_two_level`` for the
    two-level exchange) only the count is given
    (:func:`dndask._sorting._plan.exchange_pieces`).
    """
    out = []
    for p in ranks:
        for method in methods:
            build = p <= (max_build_two_level if method == "two-level" else max_build)
            row = {
                "ranks": p,
                "method": method,
                "tasks": _plan.exchange_pieces(p, method),
                "built": build,
            }
            if build:
                gc.collect()
                counts = workloads.balanced_counts(rows, p)
                x = da.zeros((rows,), chunks=(tuple(counts),), dtype=np.float32)
                cuts = np.array([np.linspace(0, c, p + 1).astype(np.int64) for c in counts])
                t0 = time.perf_counter()
                if method == "two-level":  # as flat_sort plans it: from the cuts
                    plans, result = _plan.plan_two_level_cuts(cuts)
                    token = tokenize(cuts)
                else:
                    (plans, result), token = _plan.plan_exchange(cuts), None
                y, _ = _exchange.exchange_graph(
                    x,
                    plans,
                    result,
                    descending=False,
                    sort=True,
                    prefix="s",
                    method=method,
                    token=token,
                )
                row["build_s"] = time.perf_counter() - t0
                layer = y.__dask_graph__().layers[y.name]
                row["exchange_tasks"] = len(layer)
                row["edges"] = sum(len(task.dependencies) for task in layer.values())
            out.append(row)
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.sorting", description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="128", help="MiB, comma-separated (default 128)")
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--systems", default="numpy,dndask,heat")
    p.add_argument(
        "--method", default=None, help="shm, mpi, tasks or two-level (default: dndask's choice)"
    )
    p.add_argument("--graph-max-build", type=int, default=1024)
    p.add_argument("--graph-max-build-two-level", type=int, default=1024)
    p.add_argument("--graph-ranks", default=",".join(map(str, GRAPH_RANKS)))
    args = p.parse_args(argv)
    chosen = args.systems.split(",")
    client, comm = systems.start_cluster(args.ranks) if "dndask" in chosen else (None, None)
    for mib in [float(s) for s in args.sizes.split(",")]:
        w = workloads.Workload.of("sort", mib, args.ranks)
        for name in chosen:
            if name == "numpy":
                rec = numpy_sort(w, args.repeats)
            elif name == "dndask":
                rec = dndask_sort(client, comm, w, args.repeats, args.method)
            else:
                rec = heat_sort(w, args.repeats)
            print(json.dumps({"system": name, "mib": mib, "ranks": args.ranks, **rec}), flush=True)
    graph_ranks = [int(r) for r in args.graph_ranks.split(",") if r]
    rows = graph_rows(
        graph_ranks,
        max_build=args.graph_max_build,
        max_build_two_level=args.graph_max_build_two_level,
    )
    for row in rows:
        print(json.dumps({"graph": True, **row}), flush=True)
    if client is not None:
        ht.shutdown()


if __name__ == "__main__":
    main()
