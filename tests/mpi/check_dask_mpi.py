"""Run under mpirun: dask-mpi's batch mode as its documentation writes it, then dndask.

``initialize()`` makes MPI rank 0 the scheduler and ranks 2.. the workers (named by their MPI
rank); rank 1 goes on as the client. dndask then reuses the user's ``Client`` and orders its
ranks by those names. Argument: the network interface (``lo`` on one host, ``eth0`` on the
simulated nodes). Prints one ``RESULT <json>`` line.
"""

import json
import socket
import sys

import numpy as np
from dask_mpi import initialize
from distributed import Client

if __name__ == "__main__":
    # the dashboard on the node's loopback: dask-mpi's default (":8787") listens everywhere
    initialize(interface=sys.argv[1], dashboard=False, dashboard_address="127.0.0.1:0")
    client = Client()

    import dndask as ht
    from dndask import _comm

    comm = ht.get_comm()
    assert ht.current_client() is client  # reused, not replaced
    info = _comm.live_workers(client)
    a = ht.arange(23 * 4, dtype=ht.float64, split=0).reshape((23, 4)).persist(wait=True)
    expected = np.arange(23 * 4, dtype=np.float64).reshape(23, 4)
    b = a.resplit(1)
    np.testing.assert_array_equal(b.numpy(), expected)
    np.testing.assert_array_equal((a * 2 + 1).sum(axis=0).numpy(), (expected * 2 + 1).sum(0))
    who = client.who_has(b.persist(wait=True).to_dask())
    result = {
        "names": [info[w]["name"] for w in comm.workers],
        "addresses": list(comm.workers),
        "hosts": ht.per_rank(lambda rank: socket.gethostname()).gather(),
        "holders": [who[k][0] for k in b.persist(wait=True)._chunk_keys()],
    }
    print("RESULT", json.dumps(result), flush=True)
