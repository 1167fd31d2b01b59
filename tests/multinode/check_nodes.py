"""Run under mpirun across simulated nodes: where each rank lives, and relayouts across nodes.

Prints one ``RESULT <json>`` line (the workers by rank with their host, the scheduler's
address, the bytes a resplit and a redistribution moved, where their chunks landed), then
``READY`` and waits for the file named by ``--hold`` (the test looks at the listening
sockets meanwhile) before the script ends and the cluster shuts down.
Options: ``--tls``, ``--hold PATH``.
"""

import asyncio
import json
import os
import pathlib
import socket
import sys
import time

import distributed
import numpy as np
import torch
from distributed.comm import connect

import dndask as ht
from dndask import _comm, _hosts, _transport


def where(dask_worker):
    return {"host": socket.gethostname(), "pid": os.getpid()}


def clear_transfer_log(dask_worker):
    dask_worker.transfer_incoming_log.clear()
    _transport.RECEIVED.clear()


def received(dask_worker):
    """Bytes this worker fetched: Dask's transfers (less the metadata of a relayout's control
    tasks) and what the collects of the MPI transport (the default under mpirun) received."""
    log = dask_worker.transfer_incoming_log
    control = sum(n for e in log for k, n in e["keys"].items() if _transport.is_control(k))
    by_mpi = sum(entry["total"] for entry in _transport.RECEIVED)
    return sum(entry["total"] for entry in log) - control + by_mpi


def holders(client, a):
    distributed.wait(distributed.futures_of(a.to_dask()))
    who = client.who_has(a.to_dask())
    return [list(who[key]) for key in a._chunk_keys()]


def moved_by(client, step):
    """Run ``step`` (which persists and waits); the bytes the workers fetched meanwhile."""
    client.run(clear_transfer_log)
    out = step()
    return out, sum(client.run(received).values())


if __name__ == "__main__":
    tls = "--tls" in sys.argv
    hold = pathlib.Path(sys.argv[sys.argv.index("--hold") + 1]) if "--hold" in sys.argv else None
    client = ht.init(tls=tls)  # under mpirun: returns on MPI rank 1 only
    comm = ht.get_comm()
    info = _comm.live_workers(client)
    places = client.run(where)
    result = {
        "client_host": socket.gethostname(),
        "client_pid": os.getpid(),
        "scheduler": client.scheduler.address,
        "workers": [{"address": w, "name": info[w]["name"], **places[w]} for w in comm.workers],
    }

    # which ranks share a host, from what the workers report (not from their addresses)
    result["host_groups"] = _hosts.host_groups(client, comm.workers)
    result["one_host"] = [
        _hosts.one_host(client, [comm.workers[r] for r in group]) for group in result["host_groups"]
    ] + [_hosts.one_host(client, comm.workers)]

    ht.random.seed(7)
    shape = (13, 3000)
    a = ht.random.rand(*shape, dtype=ht.float64, split=0).persist(wait=True)
    g = a.numpy()
    b, moved = moved_by(client, lambda: a.resplit(1).persist(wait=True))
    np.testing.assert_array_equal(b.numpy(), g)
    result["resplit"] = {"shape": shape, "moved": moved, "holders": holders(client, b)}

    counts = [0] * comm.size
    counts[-1], counts[0] = 6, 7  # rows move between the first and the last node
    target = a.lshape_map
    target[:, 0] = torch.tensor(counts)
    c, moved = moved_by(client, lambda: a.redistribute(target_map=target).persist(wait=True))
    np.testing.assert_array_equal(c.numpy(), g)
    result["redistribute"] = {
        "before": a.lshape_map[:, 0].tolist(),
        "after": counts,
        "moved": moved,
        "holders": holders(client, c),
    }
    result["per_rank"] = ht.per_rank(lambda rank: (rank, socket.gethostname())).gather()
    if tls:

        async def knock():
            # a stranger on the client's node, without the job's credentials
            stranger = await connect(client.scheduler.address, timeout=5)
            await stranger.close()

        try:
            asyncio.run(knock())
        except (TypeError, OSError) as exc:
            result["stranger"] = f"refused: {type(exc).__name__}"
        else:
            result["stranger"] = "let in"
    print("RESULT", json.dumps(result), flush=True)

    if hold is not None:
        print("READY", flush=True)
        deadline = time.monotonic() + 120
        while not hold.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
    print("done", flush=True)
