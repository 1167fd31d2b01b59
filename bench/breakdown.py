"""``python -m bench.breakdown``: where the time of one step goes.

For ``resplit_`` 0 → 1 and ``redistribute_`` (balanced → skewed) of a float32
matrix on the loopback cluster (the same workloads as ``python -m bench``), and
for the per-operation cases ``randn``, ``matmul`` (split 0 @ None) and
``is_split`` (``array(pieces, is_split=0)``), one step is timed from the driver
and taken apart with the cluster's own records:

- **driver**: building the graph (the lazy call) and submitting it (until
  ``persist_()`` returns);
- **first task**: from the submission to the first task starting on a worker
  (the scheduler receiving, ordering and dispatching the graph);
- **compute** and **transfer**: from the scheduler's task stream
  (``distributed.get_task_stream``), the seconds each worker spent running
  tasks and fetching their inputs from other workers, with the bytes fetched
  and the bandwidth of those fetches;
- **idle**: per worker, the part of the step's wall time in which it neither
  computed nor fetched (waiting for the scheduler or for a peer's data);
- **tail**: from the last task's end to the driver seeing the step done.

The same step is run through plain Dask (``rechunk`` of the same chunks,
``standard_normal``, ``@``, ``from_delayed`` + ``concatenate``, on the same
cluster) for comparison; for ``randn`` also as ``dask, same generator``:
``da.map_blocks`` of dndask's own chunk generator on the same chunks, so the
tasks' work is the same and only the graph and its submission differ.
``--profile FILE`` also writes a cProfile of the driver over every dndask
step (``python -m pstats FILE``). Each number is the median of ``--repeats``
runs after one warm-up. Worker clocks are the driver's (one machine), and the
task stream's compute times are the workers' own (Dask shifts only transfer
times by its heartbeat-estimated clock offset, which jumps by tens of ms on a
loaded machine), so compute intervals and the driver's times line up.

Examples::

    PYTHONPATH=. .venv/bin/python -m bench.breakdown                  # 128 MiB, 4 workers
    PYTHONPATH=. .venv/bin/python -m bench.breakdown --mib 32 --repeats 3 --json out.json
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import json
import os
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import dask
import dask.array as da
import distributed
import numpy as np

import dndask as ht
from dndask import _random

from . import systems, workloads

CASES = ("resplit01", "redistribute", "randn", "matmul", "is_split")


@dataclass
class Breakdown:
    """One step, taken apart (seconds unless named otherwise)."""

    system: str
    case: str
    wall: float  # lazy call to done, as the driver sees it
    build: float  # the lazy call: graph building
    submit: float  # persist_() until it returns
    first_task: float  # submission to the first task's start on a worker
    compute: float  # task run time, summed over workers
    compute_max: float  # the busiest worker's task run time
    transfer: float  # fetch time of task inputs, summed over workers
    transfer_max: float  # the busiest worker's fetch time
    transfer_mib: float  # MiB fetched between workers
    idle_mean: float  # per worker: wall minus the union of compute and transfer, mean over workers
    tail: float  # last task end to the driver seeing the step done
    tasks: int

    @property
    def bandwidth(self) -> float:
        """GiB/s of the fetches, while fetching (summed fetch time)."""
        return self.transfer_mib / 1024 / self.transfer if self.transfer else 0.0


def _union(intervals: Sequence[tuple[float, float]]) -> float:
    """Seconds covered by the union of ``(start, stop)`` intervals."""
    total, end = 0.0, float("-inf")
    for start, stop in sorted(intervals):
        if stop <= end:
            continue
        total += stop - max(start, end)
        end = stop
    return total


def take_apart(system, case, stream, t0, t_built, t_submitted, t_done, workers) -> Breakdown:
    """A :class:`Breakdown` from the task stream of one step and the driver's times (pure)."""
    busy: dict[str, list[tuple[float, float]]] = {w: [] for w in workers}
    compute: dict[str, float] = dict.fromkeys(workers, 0.0)
    transfer: dict[str, float] = dict.fromkeys(workers, 0.0)
    starts, stops = [], []
    for record in stream:
        worker = record["worker"]
        busy.setdefault(worker, [])
        for ss in record["startstops"]:
            start, stop = ss["start"], ss["stop"]
            busy[worker].append((start, stop))
            if ss["action"] == "compute":
                compute[worker] = compute.get(worker, 0.0) + stop - start
                starts.append(start)
                stops.append(stop)
            elif ss["action"] == "transfer":
                transfer[worker] = transfer.get(worker, 0.0) + stop - start
    wall = t_done - t0
    window = t_done - t_submitted
    idle = [max(0.0, window - _union(busy[w])) for w in busy] or [window]
    return Breakdown(
        system=system,
        case=case,
        wall=wall,
        build=t_built - t0,
        submit=t_submitted - t_built,
        first_task=(min(starts) - t_submitted) if starts else 0.0,
        compute=sum(compute.values()),
        compute_max=max(compute.values(), default=0.0),
        transfer=sum(transfer.values()),
        transfer_max=max(transfer.values(), default=0.0),
        transfer_mib=0.0,  # from the transfer logs (see step_dndask), not the stream
        idle_mean=statistics.mean(idle),
        tail=(t_done - max(stops)) if stops else 0.0,
        tasks=len(stream),
    )


def _wait_inputs(state: dict) -> None:
    """Wait until every input of a step is in the workers' memory."""
    for value in state.values():
        if isinstance(value, ht.DNDarray):
            distributed.wait(distributed.futures_of(value.to_dask()))
        elif isinstance(value, list) or dask.is_dask_collection(value):
            distributed.wait(distributed.futures_of(value))


def build_dndask(w: workloads.Workload, state: dict, comm: ht.Comm) -> ht.DNDarray:
    """The lazy result of ``w``'s case on dndask (nothing is submitted)."""
    key = w.case.key
    if key == "resplit01":
        return state["a"].resplit(1)
    if key == "redistribute":
        return state["a"].redistribute(target_map=state["target"])
    if key == "randn":
        return ht.random.randn(*w.shape, dtype=ht.float32, split=0, comm=comm)
    if key == "matmul":
        return ht.matmul(state["a"], state["b"])
    if key == "is_split":
        return ht.array(state["pieces"], is_split=0)
    raise KeyError(key)


def build_dask(w: workloads.Workload, state: dict, side: systems.DaskSide):
    """The lazy result of ``w``'s case written the Dask way."""
    key = w.case.key
    if key == "resplit01":
        return state["a"].rechunk((w.rows, tuple(w.col_counts)))
    if key == "redistribute":
        return state["a"].rechunk((tuple(w.target_counts), w.cols))
    if key == "randn":
        chunks = (tuple(w.counts), w.cols)
        return state["rng"].standard_normal(w.shape, dtype="float32", chunks=chunks)
    if key == "matmul":
        return state["a"] @ state["b"]
    if key == "is_split":
        return side._join(state["futures"])
    raise KeyError(key)


def _randn_block(key, block_info=None):
    """One chunk of ``ht.random.randn`` (float32), drawn by dndask's own generator."""
    info = block_info[None]
    offsets = tuple(start for start, _ in info["array-location"])
    args = (info["shape"], key, "normal", np.dtype(np.float32), (0.0, 1.0))
    return _random._chunk(offsets, info["chunk-shape"], *args)


def build_dask_same(w: workloads.Workload, seed: int):
    """``randn`` as ``da.map_blocks`` of dndask's generator, on dndask's chunks (lazy)."""
    key = _random._stream_key(seed, 0)
    chunks = (tuple(w.counts), (w.cols,))
    name = f"randn-same-{seed}-{time.time_ns()}"
    return da.map_blocks(_randn_block, key, chunks=chunks, dtype=np.float32, name=name)


def step_dndask(client, side, w: workloads.Workload, seed: int, profile=None) -> Breakdown:
    """One dndask step of ``w``'s case, taken apart (``profile``: a cProfile of the driver)."""
    state = side.prepare(w, seed)
    _wait_inputs(state)
    client.run(systems.mark_transfers)
    with distributed.get_task_stream(client) as ts:
        if profile is not None:
            profile.enable()
        t0 = time.time()
        out = build_dndask(w, state, side.comm)
        t_built = time.time()
        out.persist_()
        t_submitted = time.time()
        distributed.wait(distributed.futures_of(out.to_dask()))
        t_done = time.time()
        if profile is not None:
            profile.disable()
    result = take_apart(
        "dndask", w.case.key, ts.data, t0, t_built, t_submitted, t_done, side.comm.workers
    )
    result.transfer_mib = sum(client.run(systems.new_transfer_bytes).values()) / workloads.MIB
    del out, state
    return result


def step_dask(
    client, side, w: workloads.Workload, seed: int, profile=None, same: bool = False
) -> Breakdown:
    """The same step written the Dask way, on the same chunks, taken apart.

    ``same``: ``randn`` with dndask's generator (:func:`build_dask_same`).
    """
    state = side.prepare(w, seed)
    _wait_inputs(state)
    client.run(systems.mark_transfers)
    with distributed.get_task_stream(client) as ts:
        t0 = time.time()
        out = build_dask_same(w, seed) if same else build_dask(w, state, side)
        t_built = time.time()
        out = client.persist(out)
        t_submitted = time.time()
        distributed.wait(distributed.futures_of(out))
        t_done = time.time()
    system = "dask, same generator" if same else "dask"
    result = take_apart(
        system, w.case.key, ts.data, t0, t_built, t_submitted, t_done, side.comm.workers
    )
    result.transfer_mib = sum(client.run(systems.new_transfer_bytes).values()) / workloads.MIB
    del out, state
    return result


def median_of(runs: list[Breakdown]) -> Breakdown:
    """The field-wise median of several runs of one case."""
    first = runs[0]
    fields = {
        k: (statistics.median(getattr(r, k) for r in runs) if isinstance(v, float) else v)
        for k, v in asdict(first).items()
    }
    fields["tasks"] = first.tasks
    return Breakdown(**fields)


def table(rows: list[Breakdown], ranks: int) -> str:
    """A markdown table of the medians."""
    head = (
        "| case | system | wall s | build | submit | to first task | compute (sum / max "
        "worker) | transfer (sum / max worker) | MiB fetched | GiB/s fetching | idle per "
        "worker | tail | tasks |\n"
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
        "| ---: |"
    )
    lines = [head]
    for r in rows:
        lines.append(
            f"| {workloads.CASES[r.case].label} | {r.system} | {r.wall:.3f} | {r.build:.3f} | "
            f"{r.submit:.3f} | {r.first_task:.3f} | {r.compute:.3f} / {r.compute_max:.3f} | "
            f"{r.transfer:.3f} / {r.transfer_max:.3f} | {r.transfer_mib:.1f} | "
            f"{r.bandwidth:.2f} | {r.idle_mean:.3f} | {r.tail:.3f} | {r.tasks} |"
        )
    return "\n".join(lines) + f"\n\n{ranks} workers; medians of the repeats.\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mib", type=float, default=128.0, help="size of the matrix (default 128)")
    p.add_argument("--ranks", type=int, default=4, help="workers (default 4)")
    p.add_argument("--repeats", type=int, default=5, help="timed repeats (default 5)")
    p.add_argument("--cases", default=",".join(CASES), help=f"default {','.join(CASES)}")
    p.add_argument("--json", type=Path, default=None, help="also write every run here")
    p.add_argument(
        "--profile", type=Path, default=None, help="a cProfile of the driver's dndask steps"
    )
    args = p.parse_args(argv)
    cases = [c for c in args.cases.split(",") if c]
    for c in cases:
        if c not in CASES:
            p.error(f"--cases: {c!r} is not one of {', '.join(CASES)}")
    os.environ.setdefault("DNDASK_PROGRESS", "off")
    client = ht.init(args.ranks)
    comm = ht.get_comm()
    dnd, dsk = systems.DndaskSide(comm), systems.DaskSide(comm)
    load = os.getloadavg()[0]
    profile = cProfile.Profile() if args.profile else None
    runs: dict[tuple[str, str], list[Breakdown]] = {}
    try:
        for case in cases:
            w = workloads.Workload.of(case, args.mib, args.ranks)
            steps = [("dndask", step_dndask, dnd), ("dask", step_dask, dsk)]
            if case == "randn":
                steps.append(("dask, same generator", functools.partial(step_dask, same=True), dsk))
            for i in range(args.repeats + 1):  # the first is the warm-up
                for system, step, side in steps:
                    b = step(client, side, w, seed=i, profile=profile if i else None)
                    if i:
                        runs.setdefault((case, system), []).append(b)
    finally:
        ht.shutdown()
    rows = [median_of(r) for r in runs.values()]
    if profile is not None:
        profile.dump_stats(args.profile)
    print(f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    print(table(rows, args.ranks))
    if args.json:
        args.json.write_text(
            json.dumps({f"{c}/{s}": [asdict(b) for b in r] for (c, s), r in runs.items()})
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
