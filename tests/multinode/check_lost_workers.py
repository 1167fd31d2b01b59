"""The client of a cluster without MPI (scheduler on node 0, workers on other nodes).

Arguments: the scheduler file, the file the test creates once it killed a node, and the
number of workers. Persists a computation, prints ``SUBMITTED``, waits for the file, then
reads the result back: ``VALUES OK`` if it equals numpy's, ``ERROR <message>`` if dndask
raised (the test decides which it expects).
"""

import pathlib
import sys
import time

import numpy as np

import dndask as ht

if __name__ == "__main__":
    scheduler_file, go, n = sys.argv[1], pathlib.Path(sys.argv[2]), int(sys.argv[3])
    client = ht.init(scheduler_file=scheduler_file)
    client.wait_for_workers(n, timeout=120)
    comm = ht.get_comm()
    ht.random.seed(5)
    a = ht.random.rand(300 * n, 400, dtype=ht.float64, split=0)
    g = a.numpy()  # the oracle: numpy on the same values
    expected = g
    b = a
    for _ in range(30):
        b = ht.sin(b) * 2.0 + 1.0
        expected = np.sin(expected) * 2.0 + 1.0
    b = b.persist()
    print("WORKERS", " ".join(comm.workers), flush=True)
    print("SUBMITTED", flush=True)
    while not go.exists():
        time.sleep(0.1)
    try:
        values = b.numpy()
    except RuntimeError as exc:
        print("ERROR", str(exc).replace("\n", " "), flush=True)
    else:
        np.testing.assert_allclose(values, expected, rtol=1e-12)
        who = client.who_has(b.persist(wait=True).to_dask())
        now = ht.Comm.from_client(client).workers
        print("VALUES OK", [who[k][0] for k in b._chunk_keys()] == list(now), flush=True)
