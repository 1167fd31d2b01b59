"""``python -m bench.latency`` (or ``python -m bench --latency``): the cost of one small step.

Interactive and iterative work (a notebook, k-means, CG) runs many small
steps, so the fixed cost of one operation matters more than bandwidth.
Each case runs on a tiny array, on dndask and on plain Dask on the same
loopback cluster, alternating sides, after warm-up repeats:

- ``step``: the trivial step ``float((a + 1).sum())``, to a value;
- ``compute``: ``a.compute()`` of a small array;
- ``print``: ``str(a)``, what ``print(a)`` writes (dndask: Heat's repr, computed;
  Dask: ``str(x.compute())``, since a dask array's own repr computes nothing);
- ``persist``: ``(a + 1).persist()`` until it returns (the wait is not timed);
- ``persist_wait``: the same, then ``distributed.wait`` on its futures;
- ``is_split``: ``ht.array(pieces, is_split=0)`` of per-rank pieces already on
  their workers (Dask: ask each future for its shape, then ``da.from_delayed``
  and ``da.concatenate``, as :class:`bench.systems.DaskSide` does);
- ``factory``: ``(ht.arange(n, split=0) + k).numpy()``, a lazy chain from a
  factory to the driver (Dask: ``(da.arange(n, chunks=...) + k).compute()``);
- ``relayout``: ``(a.resplit(1) + k).numpy()``, a relayout and an operation to
  the driver (Dask: ``(x.rechunk(...) + k).compute()``, split along axis 1).

Each repeat adds a new constant (``a + k``), so its keys are new, as an
iteration's are, and never results the scheduler still holds from the
previous repeat. The plain Dask side uses its own arrays (``da.random``, persisted), not a
DNDarray's graph, so Dask's own optimisation and placement apply to it.
Prints a markdown table (median and best of ``--repeats``, the ratios) and,
with ``--json``, every repeat.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import dask.array as da
import distributed
import numpy as np

import dndask as ht

from . import systems

CASES = {
    "step": "trivial step `(a + 1).sum()` to a value",
    "compute": "`a.compute()`",
    "print": "`print(a)` (`str`)",
    "persist": "`(a + 1).persist()` returns",
    "persist_wait": "`(a + 1).persist()` and wait",
    "is_split": "`ht.array(pieces, is_split=0)`",
    "factory": "`(ht.arange(n, split=0) + k).numpy()`",
    "relayout": "`(a.resplit(1) + k).numpy()`",
}
SHAPE = (32, 16)  # float32, 2 KiB, printed whole: every case is overhead, not work
REPEATS = 20
WARMUP = 3
TARGET = 1.1  # dndask/dask, best of N (issue 19)


# ---------------------------------------------------------------------------------------------
# Timings (pure)


@dataclass
class Timing:
    """Every repeat of one case on one system, in seconds."""

    system: str
    case: str
    seconds: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def best(self) -> float:
        return min(self.seconds)


def ms(seconds: float | None) -> str:
    """Milliseconds with one decimal (two below 1 ms), or a dash.

    >>> ms(0.0123), ms(0.00042), ms(None)
    ('12.3', '0.42', '—')
    """
    if seconds is None:
        return "—"
    value = seconds * 1e3
    return f"{value:.2f}" if value < 1 else f"{value:.1f}"


def ratio(a: Timing | None, b: Timing | None, best: bool) -> float | None:
    """``a / b`` of the best (or the median) repeats; ``None`` if either is missing."""
    if a is None or b is None:
        return None
    num, den = (a.best, b.best) if best else (a.median, b.median)
    return num / den if den > 0 else None


def fmt_ratio(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def table(timings: Mapping[tuple[str, str], Timing], cases: Sequence[str]) -> str:
    """The markdown table: per case, dndask and dask median · best (ms), and their ratios."""
    lines = [
        "| case | dndask ms: median · best | dask ms: median · best "
        "| dndask/dask: median · best | target best ≤ 1.1 |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for case in cases:
        dnd, dsk = timings.get((case, "dndask")), timings.get((case, "dask"))
        cells = [CASES[case]]
        for t in (dnd, dsk):
            cells.append("—" if t is None else f"{ms(t.median)} · {ms(t.best)}")
        best = ratio(dnd, dsk, best=True)
        cells.append(f"{fmt_ratio(ratio(dnd, dsk, best=False))} · {fmt_ratio(best)}")
        cells.append("—" if best is None else "met" if best <= TARGET else "**missed**")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def record(timings: Mapping[tuple[str, str], Timing], ranks: int) -> dict:
    """Every repeat, for ``--json``."""
    runs = [
        {"case": t.case, "system": t.system, "seconds": t.seconds}
        for _, t in sorted(timings.items())
    ]
    return {"ranks": ranks, "shape": list(SHAPE), "runs": runs}


# ---------------------------------------------------------------------------------------------
# The two sides: ``prepare`` (untimed) and one callable per case (timed)


def local_piece(rank: int, rows: int, cols: int) -> np.ndarray:
    """Rank ``rank``'s small piece for the ``is_split`` case, made on its worker."""
    return np.full((rows, cols), rank, dtype=np.float32)


def _wait_for(collection) -> None:
    distributed.wait(distributed.futures_of(collection))


class DndaskLatency:
    """dndask's side: a persisted split-0 DNDarray and per-rank pieces."""

    name = "dndask"

    def __init__(self, comm: ht.Comm):
        self.comm = comm
        self.a = ht.random.rand(*SHAPE, dtype=ht.float32, split=0, comm=comm)
        self.a.persist_()
        _wait_for(self.a)
        rows = SHAPE[0] // comm.size
        self.pieces = ht.per_rank(local_piece, rows, SHAPE[1], comm=comm)

    def ops(self) -> dict[str, Callable[[], object]]:
        a, k = self.a, itertools.count(1)

        def persist_wait():
            b = (a + next(k)).persist()
            _wait_for(b)
            return b

        return {
            "step": lambda: float((a + next(k)).sum()),
            "compute": a.compute,
            "print": lambda: str(a),
            "persist": lambda: (a + next(k)).persist(),
            "persist_wait": persist_wait,
            "is_split": lambda: ht.array(self.pieces, is_split=0),
            "factory": lambda: (ht.arange(SHAPE[0], split=0, comm=self.comm) + next(k)).numpy(),
            "relayout": lambda: (a.resplit(1) + next(k)).numpy(),
        }


class DaskLatency:
    """Plain Dask's side: its own persisted array of the same chunks, futures on every worker."""

    name = "dask"

    def __init__(self, comm: ht.Comm):
        client = comm.client
        rows = SHAPE[0] // comm.size
        chunks = ((rows,) * comm.size, SHAPE[1])
        rng = da.random.default_rng(0)
        self.x = rng.random(SHAPE, dtype=np.float32, chunks=chunks).persist()
        _wait_for(self.x)
        self.client = client
        cols = SHAPE[1] // comm.size
        self.by_columns = (
            (SHAPE[0],),
            (cols,) * (comm.size - 1) + (SHAPE[1] - cols * (comm.size - 1),),
        )
        self.futures = [
            client.submit(local_piece, r, rows, SHAPE[1], workers=[w], pure=False)
            for r, w in enumerate(comm.workers)
        ]
        distributed.wait(self.futures)

    def _join(self) -> da.Array:
        client = self.client
        shapes = client.gather([client.submit(np.shape, f) for f in self.futures])
        parts = [
            da.from_delayed(f, shape=s, dtype=np.float32)
            for f, s in zip(self.futures, shapes, strict=True)
        ]
        return da.concatenate(parts, axis=0)

    def ops(self) -> dict[str, Callable[[], object]]:
        x, k = self.x, itertools.count(1)

        def persist_wait():
            y = (x + next(k)).persist()
            _wait_for(y)
            return y

        return {
            "step": lambda: float((x + next(k)).sum().compute()),
            "compute": x.compute,
            "print": lambda: str(x.compute()),
            "persist": lambda: (x + next(k)).persist(),
            "persist_wait": persist_wait,
            "is_split": self._join,
            "factory": lambda: (da.arange(SHAPE[0], chunks=x.chunks[0]) + next(k)).compute(),
            "relayout": lambda: (x.rechunk(self.by_columns) + next(k)).compute(),
        }


# ---------------------------------------------------------------------------------------------
# Timing


def time_once(op: Callable[[], object]) -> float:
    """Seconds ``op`` takes; its result (futures, say) is waited for and dropped untimed."""
    t0 = time.perf_counter()
    out = op()
    seconds = time.perf_counter() - t0
    if not isinstance(out, (float, str, np.ndarray)):
        _wait_for(out)  # a persist that returned at once finishes before the next repeat
    del out
    return seconds


def measure(
    sides: Sequence, cases: Sequence[str], repeats: int, warmup: int = WARMUP
) -> dict[tuple[str, str], Timing]:
    """``repeats`` timed repeats of every case on every side, alternating the sides' order."""
    timings: dict[tuple[str, str], Timing] = {}
    ops = {side.name: side.ops() for side in sides}
    for case in cases:
        for side in sides:
            for _ in range(warmup):
                time_once(ops[side.name][case])
            timings[(case, side.name)] = Timing(side.name, case)
        for i in range(repeats):
            order = sides if i % 2 == 0 else sides[::-1]
            for side in order:
                timings[(case, side.name)].seconds.append(time_once(ops[side.name][case]))
        gc.collect()
    return timings


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.latency", description=__doc__.splitlines()[0])
    p.add_argument("--ranks", type=int, default=4, help="workers (default 4)")
    p.add_argument("--repeats", type=int, default=REPEATS, help=f"default {REPEATS}")
    p.add_argument("--cases", default=",".join(CASES), help="comma-separated (default all)")
    p.add_argument("--json", type=Path, default=None, help="write every repeat here")
    args = p.parse_args(argv)
    args.cases = [c for c in args.cases.split(",") if c]
    unknown = [c for c in args.cases if c not in CASES]
    if unknown:
        p.error(f"--cases: unknown {unknown}; choose from {', '.join(CASES)}")
    if args.ranks < 1 or args.repeats < 1:
        p.error("--ranks and --repeats must be positive")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    _, comm = systems.start_cluster(args.ranks)
    try:
        sides = [DndaskLatency(comm), DaskLatency(comm)]
        timings = measure(sides, args.cases, args.repeats)
    finally:
        ht.shutdown()
    print(f"{args.ranks} workers, {SHAPE} float32, {args.repeats} repeats (ms)")
    print(table(timings, args.cases), flush=True)
    if args.json:
        args.json.write_text(json.dumps(record(timings, args.ranks), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
