"""Where the time of three algorithm cases goes (issues 27/28): moments, fft, rsvd.

``python -m bench.diagnose_algorithms [moments|fft|rsvd ...]`` on 4 workers: wall time,
tasks, per-task durations by prefix from the task stream, bytes moved between workers.
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict

import dask
import distributed
import numpy as np

import dndask as ht
import dndask.fft

MIB = 2**20


def _split0(comm, rows, cols, seed=0):
    def make(r, counts):
        return np.random.default_rng(seed + r).standard_normal((counts[r], cols), dtype=np.float32)

    counts = [rows // comm.size + (r < rows % comm.size) for r in range(comm.size)]
    pieces = ht.per_rank(lambda r: make(r, counts), comm=comm)
    return ht.array(pieces, is_split=0).persist_(wait=True)


def _log_total(dask_worker):
    return sum(e["total"] for e in dask_worker.transfer_incoming_log)


def _received(client):
    return sum(client.run(_log_total).values())


def measure(client, name, fn, repeats=2):
    fn()  # warm-up
    for _ in range(repeats):
        before = _received(client)
        client.get_task_stream(start=time.time())
        t0 = time.time()
        with distributed.get_task_stream(client) as ts:
            fn()
        wall = time.time() - t0
        moved = (_received(client) - before) / MIB
        by_prefix = defaultdict(list)
        for rec in ts.data:
            for ss in rec["startstops"]:
                if ss["action"] == "compute":
                    key = rec["key"][0] if isinstance(rec["key"], tuple) else rec["key"]
                    by_prefix[key].append(ss["stop"] - ss["start"])
        print(f"== {name}: wall {wall:.3f} s, {len(ts.data)} tasks, {moved:.1f} MiB moved")
        for prefix, d in sorted(by_prefix.items(), key=lambda kv: -sum(kv[1])):
            print(f"   {sum(d):7.3f} s  n={len(d):3d}  max {max(d):.3f}  {prefix[:70]}")


if __name__ == "__main__":
    ht.init(4)
    comm = ht.get_comm()
    client = distributed.get_client()
    cases = sys.argv[1:] or ["moments", "fft", "rsvd"]
    if "moments" in cases:
        x = _split0(comm, 1048576, 64)

        def moments():
            parts = (
                ht.mean(x, axis=0),
                ht.var(x, axis=0),
                ht.skew(x, axis=0, unbiased=False),
                ht.kurtosis(x, axis=0, unbiased=False),
            )
            return dask.compute(*(p.to_dask() for p in parts))

        measure(client, "moments", moments)
    if "fft" in cases:
        y = _split0(comm, 65536, 256)
        measure(client, "fft", lambda: dndask.fft.fft(y, axis=0).persist_(wait=True))
    if "rsvd" in cases:
        z = _split0(comm, 16777, 1000)

        def rsvd():
            out = ht.linalg.rsvd(z, 10)
            return distributed.wait(dask.persist(*(a.to_dask() for a in out)))

        measure(client, "rsvd", rsvd, repeats=3)
