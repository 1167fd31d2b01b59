"""``python -m bench.gpu_check``: the GPU check, one command on a machine with a CUDA GPU.

It starts ``ht.init(2, gpu=True)`` (two workers sharing the GPU), then

1. **environment**: the GPU each worker sees (``CUDA_VISIBLE_DEVICES``, CuPy's device count);
2. **tour**: the seed tour's steps (randn, redistribute_, resplit_ to 1 and None, the
   elementwise step, a reduction, an ``is_split`` join of per-rank device pieces) on a
   ``device="gpu"`` array and on the same array on the CPU, with the values compared;
3. **placement and bytes**: after each persist chunk ``r`` is on worker ``r`` and holds a
   device array; a ``redistribute_`` and a ``resplit_`` move exactly the plan's minimum
   bytes (the workers' transfer logs);
4. **timings**: ``(x * x + 1).sum(1)`` and ``resplit_`` 0 -> 1 of a float32 array
   (``--gib``, default 1) on the CPU and on the GPU, median and best of ``--repeats``;

and writes every result to ``gpu_check.json`` in ``--out`` (printing a summary). Each step
records its error (or that it hung, after ``STEP_TIMEOUT``) instead of stopping the check;
``gpu_check.partial.json`` holds the results so far after every step, and the exit
status is 1 if any step failed.

``--mpi`` runs the steps under ``mpirun`` instead (``ht.init(mpi=True, gpu=True)``: MPI
rank 0 the scheduler, rank 1 this script, ranks 2.. workers on their node-local GPUs).
``--standin`` runs the same steps on the CPU, with the strict stand-in for CuPy chunks
(``tests/_standin.py``) as the "gpu" backend and no ``gpu=True`` cluster: that is how
the tests exercise this file without a GPU. docs/gpu.md has the one command line that
installs the missing wheels (``make gpu-wheels``) and runs this on the GPU machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import distributed
import numpy as np
import torch

import dndask as ht
from dndask import _layout, _xp

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ helpers
STEP_TIMEOUT = 120.0  # seconds; a step still running then is recorded as hung


def step(results: dict, name: str, fn: Callable[[], object]) -> object:
    """Run one step; record ``{"ok": True, ...}``, its error, or that it hung, under ``name``.

    The step runs in a thread so that one that hangs (a deadlocked transfer, say) is
    reported after ``STEP_TIMEOUT`` seconds and the check goes on with the next one;
    the results so far are written to ``RESULTS_FILE`` after every step.
    """
    outcome: dict = {}

    def target():
        try:
            outcome["value"] = fn()
        except Exception as exc:
            outcome["error"] = f"{type(exc).__name__}: {exc}"
            outcome["trace"] = traceback.format_exc(limit=6)

    start = time.perf_counter()
    worker = threading.Thread(target=target, name=f"gpu-check {name}", daemon=True)
    worker.start()
    worker.join(STEP_TIMEOUT)
    seconds = round(time.perf_counter() - start, 4)
    if worker.is_alive():
        results[name] = {"ok": False, "error": f"hung: no result after {STEP_TIMEOUT:.0f} s"}
    elif "error" in outcome:
        results[name] = {"ok": False, "error": outcome["error"], "trace": outcome["trace"]}
    else:
        value = outcome.get("value")
        results[name] = {"ok": True, "s": seconds, **(value if isinstance(value, dict) else {})}
    if RESULTS_FILE[0] is not None:
        RESULTS_FILE[0].write_text(json.dumps(results, indent=1, default=str))
    return outcome.get("value")


RESULTS_FILE: list[Path | None] = [None]  # where :func:`step` saves the results so far


def log_marks(client: distributed.Client) -> dict[str, int | None]:
    """Each worker's newest incoming-transfer log entry (its id), to count from later.

    The log is a bounded deque (``distributed.admin.low-level-log-length``), so once it
    is full its length stays the same: the newest entry marks where to start.
    """

    def mark(dask_worker):
        log = dask_worker.transfer_incoming_log
        return id(log[-1]) if log else None

    return client.run(mark)


def received_since(client: distributed.Client, marks: dict[str, int | None]) -> int:
    """Bytes the workers fetched from each other after :func:`log_marks` gave ``marks``."""

    def received(dask_worker, marks=marks):
        log = list(dask_worker.transfer_incoming_log)
        ids = [id(e) for e in log]
        mark = marks.get(dask_worker.address)
        start = ids.index(mark) + 1 if mark in ids else 0
        return sum(e["total"] for e in log[start:])

    return sum(client.run(received).values())


def chunk_modules(a: ht.DNDarray) -> list[str]:
    """The top-level module of each persisted chunk's type, in rank order (on the workers)."""
    client = a.comm.client
    by_key = {f.key: f for f in distributed.futures_of(a.to_dask())}
    futures = [by_key[k] for k in a._chunk_keys()]
    calls = [client.submit(lambda x: type(x).__module__.split(".")[0], f) for f in futures]
    return client.gather(calls)


def placed(a: ht.DNDarray) -> bool:
    """Whether every chunk ``r`` of the persisted ``a`` is held by ``a.comm.workers[r]``."""
    who = a.comm.client.who_has(a.to_dask())
    return all(tuple(who[k]) == (w,) for k, w in zip(a._chunk_keys(), a.comm.workers, strict=True))


def same(gpu_values: np.ndarray, cpu_values: np.ndarray, exact: bool = True) -> dict:
    """Compare a device result (copied to host) with the CPU one; raise if they differ."""
    if exact:
        np.testing.assert_array_equal(gpu_values, cpu_values)
    else:
        np.testing.assert_allclose(gpu_values, cpu_values, rtol=1e-5, atol=1e-6)
    return {"shape": list(cpu_values.shape)}


def relayout_bytes(a: ht.DNDarray, split, counts) -> int:
    """The plan's minimum bytes for laying ``a`` out as ``split``/``counts``."""
    src = _layout.Distribution.of_chunks(a.to_dask().chunks, a.split, a.comm)
    dst = _layout.Distribution(split, tuple(counts), a.comm)
    return _layout.plan_relayout(a.shape, src, dst).moved * a.dtype.itemsize


def timed(fn: Callable[[], object], repeats: int) -> dict:
    """Median and best seconds of ``repeats`` calls (after one warm-up)."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return {"median_s": round(statistics.median(times), 4), "best_s": round(min(times), 4)}


# ------------------------------------------------------------------ the checks
def environment(client: distributed.Client) -> dict:
    """What each worker sees: its CUDA_VISIBLE_DEVICES and the GPU backend's device count."""

    def seen():
        try:
            missing = _xp.backend("gpu").available()
        except RuntimeError as exc:
            missing = str(exc)
        return {"CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES"), "gpu": missing}

    found = client.run(seen)
    broken = {w: s["gpu"] for w, s in found.items() if s["gpu"] is not None}
    if broken:
        raise RuntimeError(f"workers cannot use the GPU backend: {broken}")
    return {"workers": found}


def tour(results: dict, comm) -> None:
    """The seed tour's steps on the GPU and on the CPU, values compared after each."""
    ht.random.seed(42)
    cpu = ht.random.randn(7, 4, 3, split=0, comm=comm).persist(wait=True)
    gpu = step(results, "tour/to_gpu", lambda: cpu.gpu().persist(wait=True))
    if gpu is None:
        return
    step(
        results,
        "tour/placement",
        lambda: {"placed": _check(placed(gpu)), "chunks": chunk_modules(gpu)},
    )
    step(results, "tour/device", lambda: {"device": str(_check_device(gpu))})
    step(results, "tour/values", lambda: same(gpu.numpy(), cpu.numpy()))

    size = comm.size
    counts = [1] + [(6 + i) // (size - 1) for i in range(size - 1)] if size > 1 else [7]

    def redistribute():
        target = cpu.lshape_map
        target[:, 0] = torch.tensor(sorted(counts))
        marks = log_marks(comm.client)
        minimum = relayout_bytes(gpu, 0, sorted(counts))
        g = gpu.redistribute(target_map=target).persist(wait=True)
        moved = received_since(comm.client, marks)
        c = cpu.redistribute(target_map=target)
        same(g.numpy(), c.numpy())
        _check(placed(g))
        return {"bytes_moved": moved, "plan_minimum": minimum, "minimal": moved == minimum}

    step(results, "tour/redistribute_", redistribute)

    def resplit(axis):
        def run():
            marks = log_marks(comm.client)
            g = gpu.resplit(axis).persist(wait=True)
            moved = received_since(comm.client, marks)
            counts1 = list(g.lshape_map[:, axis].tolist()) if axis is not None else [7]
            minimum = relayout_bytes(gpu, axis, counts1) if axis is not None else None
            same(g.numpy(), cpu.resplit(axis).numpy())
            if axis is not None:
                _check(placed(g))
            minimal = None if minimum is None else moved == minimum
            return {"bytes_moved": moved, "plan_minimum": minimum, "minimal": minimal}

        return run

    step(results, "tour/resplit_(1)", resplit(1))
    step(results, "tour/resplit_(None)", resplit(None))
    step(
        results,
        "tour/elementwise",
        lambda: same((gpu * gpu + 1).numpy(), (cpu * cpu + 1).numpy(), exact=False),
    )
    step(
        results,
        "tour/sum(1)",
        lambda: same((gpu * gpu + 1).sum(1).numpy(), (cpu * cpu + 1).sum(1).numpy(), False),
    )

    def is_split():
        pieces = ht.per_rank(lambda rank: np.full((3, 4), rank, dtype=np.float32), comm=comm)
        joined = ht.array(pieces, is_split=0, comm=comm).gpu()
        expected = np.repeat(np.arange(size, dtype=np.float32), 3)[:, None] * np.ones(4)
        return same(joined.numpy(), expected.astype(np.float32))

    step(results, "tour/is_split", is_split)


def timings(results: dict, comm, gib: float, repeats: int) -> None:
    """``(x * x + 1).sum(1)`` and ``resplit_`` 0 -> 1 on the CPU and on the GPU."""
    n = int(np.sqrt(gib * 2**30 / 4))
    for device in ("cpu", "gpu"):

        def make(device=device):
            x = ht.random.rand(n, n, split=0, dtype=ht.float32, comm=comm)
            return x.persist(wait=True) if device == "cpu" else x.gpu().persist(wait=True)

        x = step(results, f"time/{device}/make {n}x{n} float32", make)
        if x is None:
            continue
        step(
            results,
            f"time/{device}/(x*x+1).sum(1)",
            lambda x=x: timed(lambda: (x * x + 1).sum(1).numpy(), repeats),
        )
        step(
            results,
            f"time/{device}/resplit_ 0->1",
            lambda x=x: timed(lambda: x.resplit(1).persist(wait=True), repeats),
        )
        del x


def _check(condition: bool) -> bool:
    if not condition:
        raise AssertionError("check failed")
    return True


def _check_device(a: ht.DNDarray):
    if a.device.device_type != "gpu":
        raise AssertionError(f"expected a gpu array, got device {a.device}")
    return a.device


def use_standin(client: distributed.Client | None = None) -> None:
    """Register the test stand-in as the "gpu" backend here, and on ``client``'s workers.

    Call it once before the cluster starts (the stand-in tells the driver from its
    workers by the pid it leaves in the environment they inherit), then with the client.
    """
    tests = str(ROOT / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    import _standin  # registers itself as the "gpu" backend here

    if client is not None:
        _standin.install(client)  # and on the workers


def run_checks(comm, *, gib: float, repeats: int) -> dict:
    """Every step on ``comm``'s workers; the results by step name."""
    results: dict = {}
    step(results, "environment", lambda: environment(comm.client))
    tour(results, comm)
    if gib > 0:
        timings(results, comm, gib, repeats)
    return results


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.gpu_check", description=__doc__)
    p.add_argument("--out", default=".", help="folder for gpu_check.json (default .)")
    p.add_argument("--gib", type=float, default=1.0, help="size of the timed array (0: none)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--workers", type=int, default=2, help="workers sharing the GPU(s)")
    p.add_argument("--standin", action="store_true", help="CPU stand-in, no GPU needed")
    p.add_argument(
        "--mpi",
        action="store_true",
        help="under mpirun: ht.init(mpi=True, gpu=True), each worker rank on its node-local GPU",
    )
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    RESULTS_FILE[0] = out / "gpu_check.partial.json"
    header = {"argv": sys.argv, "python": sys.version.split()[0], "started": time.time()}
    if args.standin:
        use_standin()
        client = ht.init(args.workers)
        use_standin(client)
    elif args.mpi:
        client = ht.init(mpi=True, gpu=True)  # only the client rank (MPI rank 1) goes on
    else:
        client = ht.init(args.workers, gpu=True)
    try:
        results = run_checks(ht.get_comm(), gib=args.gib, repeats=args.repeats)
    finally:
        ht.shutdown()
    report = {**header, "results": results}
    (out / "gpu_check.json").write_text(json.dumps(report, indent=1, default=str))
    failed = [name for name, r in results.items() if not r["ok"]]
    for name, r in results.items():
        status = "ok  " if r["ok"] else "FAIL"
        detail = r.get("error") or {k: v for k, v in r.items() if k not in ("ok", "trace")}
        print(f"{status} {name}: {detail}")
    print(f"gpu_check: {len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
