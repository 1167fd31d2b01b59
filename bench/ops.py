"""Benchmark of dndask's operation layer against the same code in plain dask.array.

Not a test: prints a markdown table. Run with
``.venv/bin/python bench/ops.py [MiB] [workers] [repeats]`` (defaults 256, 4, 7).

Both sides start from the same persisted float32 array (one chunk per worker
along axis 0) and run a chain of 10 elementwise operations followed by a full
sum. dndask goes through DNDarray (operand alignment, split bookkeeping,
placement annotations, its own compute path); dask runs the identical
expression on the wrapped dask array with ``dask.compute``. The target of
issue 3 is a dndask/dask wall-time ratio of at most 1.05. Repeats alternate
between the systems so that drift on the machine hits both alike.
"""

from __future__ import annotations

import statistics
import sys
import time

import dask

import dndask as ht


def chain(x):
    """Ten elementwise operations and a reduction, written once for both systems."""
    y = x * 1.5
    y = y + 2.0
    y = y - x
    y = y / 3.0
    y = y * y
    y = abs(y - 0.25)
    y = y + x
    y = y * 0.5
    y = y - 1.0
    y = y * y
    return y.sum()


def run_dndask(a) -> tuple[float, float]:
    t0 = time.perf_counter()
    value = float(chain(a))
    return time.perf_counter() - t0, value


def run_dask(x) -> tuple[float, float]:
    t0 = time.perf_counter()
    (value,) = dask.compute(chain(x))
    return time.perf_counter() - t0, float(value)


def graph_overhead(a, repeats: int = 50) -> tuple[float, float]:
    """Seconds to build the chain's graph (no execution) in dndask and in dask."""
    x = a.to_dask()
    t0 = time.perf_counter()
    for _ in range(repeats):
        chain(a)
    t1 = time.perf_counter()
    for _ in range(repeats):
        chain(x)
    t2 = time.perf_counter()
    return (t1 - t0) / repeats, (t2 - t1) / repeats


def main(mib: int = 256, workers: int = 4, repeats: int = 7) -> None:
    ht.init(workers)
    cols = 4096
    rows = mib * 2**20 // (4 * cols)
    ht.random.seed(1)
    a = ht.random.randn(rows, cols, split=0, dtype=ht.float32).persist()
    x = a.to_dask()  # the very same persisted chunks
    run_dndask(a), run_dask(x)  # warm up both paths
    times = {"dndask": [], "dask": []}
    values = {}
    for i in range(repeats):
        order = (("dndask", run_dndask, a), ("dask", run_dask, x))
        for name, fn, arg in order if i % 2 == 0 else order[::-1]:
            seconds, values[name] = fn(arg)
            times[name].append(seconds)
    build_dnd, build_dask = graph_overhead(a)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"## Chain of 10 elementwise ops + sum, {mib} MiB float32, {workers} workers\n")
    print("| system | median s | min s | max s | graph build ms |")
    print("|---|---|---|---|---|")
    for name, build in (("dndask", build_dnd), ("dask", build_dask)):
        t = times[name]
        print(f"| {name} | {med[name]:.3f} | {min(t):.3f} | {max(t):.3f} | {build * 1e3:.2f} |")
    print(f"\nratio dndask/dask (median): {med['dndask'] / med['dask']:.3f} (target <= 1.05)")
    rel = abs(values["dndask"] - values["dask"]) / max(1.0, abs(values["dask"]))
    print(f"results agree: {rel < 1e-6} (relative difference {rel:.1e})")
    ht.shutdown()


if __name__ == "__main__":
    main(*(int(v) for v in sys.argv[1:4]))
