"""Where the time of the algorithm cases goes (issues 27/28): moments, fft, rsvd, eigh, polar.

``python -m bench.diagnose_algorithms [moments|fft|rsvd|eigh|polar ...]`` on 4 workers: wall
time, tasks, per-task durations by prefix from the task stream, bytes moved between workers,
and the driver's round trips: graphs submitted (``Client.get``) and blocking fetches
(``Client.gather``, each a wait for results in the driver). ``eigh`` and ``polar`` take
the matrix order as ``eigh:256`` (default 1000).
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict

import dask
import distributed
import numpy as np
from dask.utils import key_split

import dndask as ht
import dndask.fft

from ._dask_side import persist_together

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


class RoundTrips:
    """Counts the client's graph submissions and blocking fetches (wrapping its methods)."""

    def __init__(self, client):
        self.submits = self.gathers = 0
        get, gather = client.get, client.gather

        def counted_get(*args, **kwargs):
            self.submits += 1
            return get(*args, **kwargs)

        def counted_gather(*args, **kwargs):
            self.gathers += 1
            return gather(*args, **kwargs)

        client.get, client.gather = counted_get, counted_gather

    def take(self) -> tuple[int, int]:
        out = (self.submits, self.gathers)
        self.submits = self.gathers = 0
        return out


def measure(client, name, fn, repeats=2, trips=None):
    fn()  # warm-up
    for _ in range(repeats):
        if trips is not None:
            trips.take()
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
                    by_prefix[key_split(rec["key"])].append(ss["stop"] - ss["start"])
        print(f"== {name}: wall {wall:.3f} s, {len(ts.data)} tasks, {moved:.1f} MiB moved")
        if trips is not None:
            submits, gathers = trips.take()
            print(f"   {submits} graphs submitted, {gathers} blocking fetches")
        for prefix, d in sorted(by_prefix.items(), key=lambda kv: -sum(kv[1]))[:12]:
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
        measure(client, "fft", lambda: dndask.fft.fft(y, axis=0).persist_(wait=True), repeats=4)
    if "rsvd" in cases:
        z = _split0(comm, 16777, 1000)

        def rsvd():
            out = ht.linalg.rsvd(z, 10)
            return persist_together(*out)

        measure(client, "rsvd", rsvd, repeats=3)
    trips = RoundTrips(client)
    for case in cases:
        kind, _, size = case.partition(":")
        if kind not in ("eigh", "polar"):
            continue
        n = int(size or 1000)
        a = _split0(comm, n, n)
        if kind == "eigh":
            a = (a + a.T).resplit_(0).persist_(wait=True)
            fn = ht.linalg.eigh
        else:
            fn = ht.linalg.polar

        def run(fn=fn, a=a):
            out = fn(a)
            return persist_together(*out)

        measure(client, f"{kind} {n} x {n}", run, trips=trips)
