"""Run under ``mpirun -np 6``: a rank lost during an MPI relayout.

Rank 1 receives every row; it is busy with a long task while the posts and the barrier
run, then rank 3's worker leaves the cluster (closed: its process ends, its pieces with
it), then rank 1's collect asks rank 3 for its piece. The relayout must fail with an
error naming rank 3, not hang. Prints the error. (A rank killed by a signal ends the
whole job under MPICH's mpirun: the launcher kills every rank.)
"""

import time

import numpy as np
import torch

import dndask as ht
from dndask import _transport

if __name__ == "__main__":
    client = ht.init(mpi=True)  # returns on MPI rank 1 only
    comm = ht.get_comm()
    g = np.arange(16 * 5, dtype=np.float64).reshape(16, 5)
    a = ht.array(g, split=0, comm=comm).persist_(wait=True)
    target = a.lshape_map
    target[:, 0] = torch.tensor([0, 16, 0, 0])
    b = a.redistribute(target_map=target)  # mpi: posts on ranks 0, 2, 3; collect on rank 1
    barrier = next(
        k for k in dict(b.to_dask().dask) if str(k).startswith(_transport.BARRIER_PREFIX)
    )
    busy = client.submit(time.sleep, 4, workers=[comm.workers[1]], pure=False)
    time.sleep(0.5)
    row = client.compute(b[2])  # rank 1's chunk only: its collect waits behind the sleep

    def state(dask_scheduler, key=barrier):
        ts = dask_scheduler.tasks.get(key)
        return None if ts is None else ts.state

    deadline = time.monotonic() + 60
    while client.run_on_scheduler(state) != "memory":
        assert time.monotonic() < deadline, "the barrier never ran"
        time.sleep(0.05)

    def leave(dask_worker):
        dask_worker.loop.add_callback(dask_worker.close, reason="lost in a test")

    client.run(leave, workers=[comm.workers[3]])
    print("rank 3 (MPI rank 5) left after the barrier", flush=True)
    start = time.monotonic()
    try:
        row.result(timeout=90)
    except RuntimeError as exc:
        print(f"lost-rank error after {time.monotonic() - start:.1f} s: {exc}", flush=True)
    else:
        raise SystemExit("the relayout finished without rank 3's piece")
    busy.cancel()
