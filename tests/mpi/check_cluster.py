"""Run under mpirun: values, placement by MPI rank, a resplit, and a refused stranger."""

import asyncio
import sys

import numpy as np
from distributed.comm import connect

import dndask as ht
from dndask import _comm

if __name__ == "__main__":
    tls = "--tls" in sys.argv
    client = ht.init(tls=tls)  # mpirun is detected; this line returns on MPI rank 1 only
    comm = ht.get_comm()
    info = _comm.live_workers(client)
    names = [info[w]["name"] for w in comm.workers]
    print("worker names by rank:", names)
    assert names == list(range(2, 2 + comm.size)), names

    ht.random.seed(3)
    a = ht.random.randn(11, 6, split=0).persist()
    g = a.numpy()
    who = client.who_has(a.to_dask())
    holders = [who[k][0] for k in a._chunk_keys()]
    assert holders == list(comm.workers), holders
    b = a.resplit(1).persist()
    np.testing.assert_array_equal(b.numpy(), g)
    target = a.lshape_map
    target[:, 0] = 0
    target[-1, 0] = 11
    c = a.redistribute(target_map=target)
    np.testing.assert_array_equal(c.numpy(), g)
    ranks = ht.per_rank(lambda rank: (rank, comm.rank)).gather()
    assert ranks == [(r, r) for r in range(comm.size)], ranks
    print(
        "checks passed on",
        comm.size,
        "ranks; placement by MPI rank:",
        holders == list(comm.workers),
    )

    if tls:
        assert client.scheduler.address.startswith("tls://")

        async def knock():
            # a stranger without the job's credentials, on its own event loop
            comm = await connect(client.scheduler.address, timeout=5)
            await comm.close()

        try:
            asyncio.run(knock())
        except (TypeError, OSError) as exc:
            print(f"stranger without credentials refused: {type(exc).__name__}")
        else:
            raise SystemExit("a client without credentials was let in")
