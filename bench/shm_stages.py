"""``python -m bench.shm_stages``: where the time of one shared-memory ``resplit_`` goes.

Two views of ``resplit_`` 0 → 1 of a float32 matrix (4096 columns, ``--mib`` MiB, the
workload of ``python -m bench``) over the shm transport (:mod:`dndask._transport`):

- **stages, one process** (what one worker does, rank 1 of ``--ranks``): its post, split
  into creating the files, mapping them (``MAP_POPULATE``: faulting in fresh, zeroed tmpfs
  pages) and the strided copy into them, as the mapping path does it; beside it the same
  pieces written with ``pwritev`` from the chunk's rows (:func:`dndask._transport.vectored`).
  Then its collect: allocating the output chunk, opening and mapping each incoming segment,
  copying it into place (the output's own page faults included); beside it ``preadv``
  straight into the output rows, and what the collect does now: the segments' whole pages
  mapped into the output (:func:`dndask._transport.mapped_output`), no copy. Minimum over
  ``--repeats``, milliseconds.
- **the step on the cluster**, from the scheduler's task stream: the wall time, the slowest
  post, the gap from the last post's end to the barrier's start, from the barrier's end to
  the first collect's start, the slowest collect, and the driver's tail; once with each
  collect path of :data:`PATHS` (mapped pages, or copies into a fresh output: switched on
  the workers), interleaved, medians over ``--repeats``.

Example::

    PYTHONPATH=. .venv/bin/python -m bench.shm_stages --mib 32,128,1024 --repeats 5
"""

from __future__ import annotations

import argparse
import mmap
import os
import statistics
import time

import distributed
import numpy as np

import dndask as ht
from dndask import _transport

from . import systems, workloads

MS = 1e3
_PREADV = _transport._libc_call("preadv")  # the collect's alternative, measured here only


def _min_time(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def stages(mib: float, ranks: int, repeats: int) -> dict[str, float]:
    """Milliseconds of each stage of rank 1's post and collect, in this process."""
    w = workloads.Workload.of("resplit01", mib, ranks)
    rows, cols = w.counts[1], w.cols
    chunk = np.random.default_rng(0).random((rows, cols), dtype=np.float32)
    edges = np.cumsum([0, *w.col_counts])
    pieces = [chunk[:, edges[d] : edges[d + 1]] for d in range(ranks) if d != 1]
    base = os.path.join(_transport.SHM_DIR, f"{_transport.SEGMENT_PREFIX}stages-{os.getpid()}")
    paths = [f"{base}-{d}" for d in range(len(pieces))]
    out: dict[str, float] = {}

    def unlink() -> None:
        for p in paths:
            if os.path.exists(p):
                os.unlink(p)

    def timed(name: str, fn) -> None:
        best = float("inf")
        for _ in range(repeats):
            unlink()
            best = min(best, fn())
        out[name] = best * MS

    def create() -> float:
        t0 = time.perf_counter()
        for p, piece in zip(paths, pieces, strict=True):
            fd = os.open(p, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
            os.ftruncate(fd, piece.nbytes)
            os.close(fd)
        return time.perf_counter() - t0

    def create_map_copy() -> tuple[float, float, float]:
        t = [0.0, 0.0, 0.0]
        for p, piece in zip(paths, pieces, strict=True):
            t0 = time.perf_counter()
            fd = os.open(p, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
            os.ftruncate(fd, piece.nbytes)
            t1 = time.perf_counter()
            m = mmap.mmap(fd, piece.nbytes, flags=_transport._SHARED_POPULATED)
            t2 = time.perf_counter()
            view = np.frombuffer(m, piece.dtype, piece.size).reshape(piece.shape)
            view[...] = piece
            del view
            m.close()
            os.close(fd)
            t3 = time.perf_counter()
            t = [t[0] + t1 - t0, t[1] + t2 - t1, t[2] + t3 - t2]
        return tuple(t)

    def pwritev() -> float:
        t0 = time.perf_counter()
        for p, piece in zip(paths, pieces, strict=True):
            fd = os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            _transport.vectored(_transport._PWRITEV, fd, _transport.runs(piece))
            os.close(fd)
        return time.perf_counter() - t0

    timed("post: create + ftruncate", create)
    parts = []
    for _ in range(repeats):
        unlink()
        parts.append(create_map_copy())
    for name, i in (("create", 0), ("mmap + page faults", 1), ("strided copy", 2)):
        out[f"post (mapping): {name}"] = min(p[i] for p in parts) * MS
    out["post (mapping): total"] = min(sum(p) for p in parts) * MS
    if _transport._PWRITEV is not None:
        timed("post (pwritev): total", pwritev)
    unlink()
    row_bytes = w.col_counts[1] * 4
    pads = [i * rows * row_bytes % _transport.PAGE for i in range(len(pieces))]
    for p, piece, pad in zip(paths, pieces, pads, strict=True):  # the segments the collect reads
        fd = os.open(p, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        _transport.vectored(_transport._PWRITEV, fd, _transport.runs(piece), pad)
        os.close(fd)
    lshape = (w.rows, w.col_counts[1])
    spec = [("shm", i, 1, q.shape, d) for i, (q, d) in enumerate(zip(pieces, pads, strict=True))]
    spec.append(("kept", 0, None, w.rows - len(pieces) * rows))  # rows the collect does not map

    def alloc() -> None:
        np.empty(lshape, np.float32)

    def collect_mapping() -> tuple[float, float, float]:
        t0 = time.perf_counter()
        target = np.empty(lshape, np.float32)
        t1 = time.perf_counter()
        t_map = t_copy = 0.0
        for i, (p, piece) in enumerate(zip(paths, pieces, strict=True)):
            a = time.perf_counter()
            f = open(p, "rb")  # noqa: SIM115 - timed by stage
            m = mmap.mmap(f.fileno(), 0, flags=_transport._SHARED_POPULATED, prot=mmap.PROT_READ)
            b = time.perf_counter()
            seg = np.frombuffer(m, np.float32, piece.size, pads[i]).reshape(piece.shape)
            target[i * rows : (i + 1) * rows] = seg  # contiguous rows, as in the output
            del seg
            m.close()
            f.close()
            t_map += b - a
            t_copy += time.perf_counter() - b
        return t1 - t0, t_map, t_copy

    def collect_preadv() -> float:
        t0 = time.perf_counter()
        target = np.empty(lshape, np.float32)
        for i, p in enumerate(paths):
            fd = os.open(p, os.O_RDONLY)
            where = target[i * rows : (i + 1) * rows]
            _transport.vectored(_PREADV, fd, _transport.runs(where), pads[i])
            os.close(fd)
        return time.perf_counter() - t0

    def collect_mapped() -> float:  # what the collect does now: the segments' pages mapped
        t0 = time.perf_counter()
        target = _transport.mapped_output(lshape, np.dtype(np.float32), 0, spec)
        for i, p in enumerate(paths):
            _transport._map_piece(p, target, i * rows * row_bytes, rows * row_bytes, pads[i])
        return time.perf_counter() - t0

    out["collect: np.empty (no touch)"] = _min_time(alloc, repeats) * MS
    parts = [collect_mapping() for _ in range(repeats)]
    for name, i in (("output alloc", 0), ("open + mmap", 1), ("copy + output faults", 2)):
        out[f"collect (mapping): {name}"] = min(p[i] for p in parts) * MS
    out["collect (mapping): total"] = min(sum(p) for p in parts) * MS
    if _PREADV is not None:
        out["collect (preadv): total"] = _min_time(collect_preadv, repeats) * MS
    if _transport._LIBC_MMAP is not None:
        out["collect (mapped pages, now): total"] = _min_time(collect_mapped, repeats) * MS
    unlink()
    return out


# the cluster's A/B: the collect maps the segments' pages into its output (now), or
# copies each segment into a fresh output (before 2026-12-07); the posts write with pwritev
PATHS = ("mapped", "copied")


def _set_path(path: str) -> None:
    """On a worker: the collect of ``path`` (one of :data:`PATHS`)."""
    _transport._LIBC_MMAP = _transport._mmap_call() if path == "mapped" else None


def timeline(stream: list, t_submitted: float, t_done: float) -> dict[str, float]:
    """Milliseconds of the step's stages from its task stream (pure)."""
    spans: dict[str, list[tuple[float, float]]] = {"post": [], "barrier": [], "collect": []}
    for record in stream:
        key = record["key"]
        name = key[0] if isinstance(key, tuple) else key
        kind = (
            "post"
            if name.startswith(_transport.POST_PREFIX)
            else "barrier"
            if name.startswith(_transport.BARRIER_PREFIX)
            else "collect"
        )
        for ss in record["startstops"]:
            if ss["action"] == "compute":
                spans[kind].append((ss["start"], ss["stop"]))
    posts, (barrier,), collects = spans["post"], spans["barrier"], spans["collect"]
    return {
        "wall": (t_done - t_submitted) * MS,
        "to first post": (min(s for s, _ in posts) - t_submitted) * MS,
        "slowest post": max(e - s for s, e in posts) * MS,
        "last post end → barrier": (barrier[0] - max(e for _, e in posts)) * MS,
        "barrier → first collect": (min(s for s, _ in collects) - barrier[1]) * MS,
        "slowest collect": max(e - s for s, e in collects) * MS,
        "tail": (t_done - max(e for _, e in collects)) * MS,
    }


def cluster(client, comm, mib: float, ranks: int, repeats: int) -> dict[str, dict[str, float]]:
    """Medians of :func:`timeline` with each collect path of :data:`PATHS`, interleaved."""
    w = workloads.Workload.of("resplit01", mib, ranks)
    side = systems.DndaskSide(comm)
    runs: dict[str, list[dict]] = {path: [] for path in PATHS}
    for i in range(repeats + 1):  # the first is the warm-up
        for path in runs:
            client.run(_set_path, path)
            state = side.prepare(w, seed=i)
            distributed.wait(distributed.futures_of(state["a"].to_dask()))
            with distributed.get_task_stream(client) as ts:
                out = state["a"].resplit(1, method="shm")
                out.persist_()
                t_submitted = time.time()
                distributed.wait(distributed.futures_of(out.to_dask()))
                t_done = time.time()
            if i:
                runs[path].append(timeline(ts.data, t_submitted, t_done))
            del out, state
    client.run(_set_path, PATHS[0])
    return {
        path: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for path, rs in runs.items()
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mib", default="32,128,1024", help="sizes in MiB (default 32,128,1024)")
    p.add_argument("--ranks", type=int, default=4, help="workers (default 4)")
    p.add_argument("--repeats", type=int, default=5, help="repeats (default 5)")
    p.add_argument("--no-cluster", action="store_true", help="only the one-process stages")
    args = p.parse_args(argv)
    sizes = [float(s) for s in args.mib.split(",") if s]
    print(f"load average {os.getloadavg()[0]:.2f}")
    for mib in sizes:
        print(f"\n## {mib:g} MiB: one process, rank 1's post and collect (ms, min of repeats)")
        for name, ms in stages(mib, args.ranks, args.repeats).items():
            print(f"  {name:36s} {ms:9.2f}")
    if not args.no_cluster:
        os.environ.setdefault("DNDASK_PROGRESS", "off")
        client = ht.init(args.ranks)
        try:
            for mib in sizes:
                res = cluster(client, ht.get_comm(), mib, args.ranks, args.repeats)
                print(f"\n## {mib:g} MiB on {args.ranks} workers (ms, medians; collect path)")
                names = list(res[PATHS[0]])
                print("  " + " | ".join(["path", *names]))
                for path, r in res.items():
                    print("  " + " | ".join([path, *(f"{r[n]:.1f}" for n in names)]))
        finally:
            ht.shutdown()
    print(f"\nload average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
