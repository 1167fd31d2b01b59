"""resplit_ 0 -> 1 under ``mpirun``: the MPI transport against shm and Dask's comms.

Run with 4 worker ranks (6 MPI processes: scheduler, client, 4 workers)::

    DNDASK_INTERFACE=lo mpirun -np 6 .venv/bin/python -m bench.mpi_transport --mib 128

Each repeat resplits a persisted split-0 array of ``--mib`` MiB (float64, square) to
split 1 and persists the result; the methods take turns, best of ``--repeats``. Also
times MPI point-to-point alone (``Isend``/``Irecv`` of the same pieces between the worker
ranks, outside Dask) as the floor the transport adds its tasks to.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import dndask as ht
from dndask import _distribution, _layout


def raw_exchange(rows: int, cols: int, repeats: int):
    """Best time for the pieces of a 0 -> 1 resplit sent by plain Isend/Irecv (per rank)."""
    from mpi4py import MPI

    from dndask import _mpi

    comm = _mpi.worker_comm()
    p, r = comm.Get_size(), comm.Get_rank()
    rcount = _layout.balanced_counts(rows, p)
    ccount = _layout.balanced_counts(cols, p)
    cstart = np.cumsum([0, *ccount])
    chunk = np.random.default_rng(r).random((rcount[r], cols))
    best = float("inf")
    for _ in range(repeats):
        comm.Barrier()
        t = time.perf_counter()
        out = np.empty((rows, ccount[r]))
        pieces = [np.ascontiguousarray(chunk[:, cstart[d] : cstart[d + 1]]) for d in range(p)]
        rstart = np.cumsum([0, *rcount])
        recv = [np.empty((rcount[s], ccount[r])) for s in range(p)]
        reqs = [comm.Irecv(recv[s], source=s, tag=7) for s in range(p) if s != r]
        reqs += [comm.Isend(pieces[d], dest=d, tag=7) for d in range(p) if d != r]
        MPI.Request.Waitall(reqs)
        for s in range(p):
            out[rstart[s] : rstart[s + 1]] = pieces[r] if s == r else recv[s]
        comm.Barrier()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=float, default=128)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    client = ht.init(mpi=True)
    comm = ht.get_comm()
    n = int((args.mib * 2**20 / 8) ** 0.5)
    a = ht.random.rand(n, n, dtype=ht.float64, split=0).persist_(wait=True)
    methods = ("mpi", "shm", "tasks")
    times: dict[str, list[float]] = {m: [] for m in methods}
    for _ in range(args.repeats):
        for method in methods:
            t = time.perf_counter()
            b = a.resplit(1, method=method).persist_(wait=True)
            times[method].append(time.perf_counter() - t)
            del b
    check = a.resplit(1, method="mpi")
    np.testing.assert_array_equal(check.numpy()[:5], a.numpy()[:5])
    dst = _layout.Distribution.balanced(a.shape, 1, comm)
    moved = _distribution.relayout_plan(a.to_dask(), a.distribution, dst, "mpi")[0].moved
    raw = client.run(raw_exchange, n, n, args.repeats)
    load = os.getloadavg()
    print(f"resplit_ 0 -> 1 of {n}x{n} float64 ({args.mib:g} MiB) on {comm.size} worker ranks")
    print(f"moved: {moved / 2**20:.1f} MiB; load average (1, 5, 15 min) {load}")
    for method in methods:
        ts = times[method]
        print(f"  {method:6s} best {min(ts) * 1e3:7.1f} ms   median {np.median(ts) * 1e3:7.1f} ms")
    print(f"  raw Isend/Irecv between the worker ranks (no Dask): {max(raw.values()) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
