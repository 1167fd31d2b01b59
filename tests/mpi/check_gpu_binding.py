"""Run under mpirun with ``CUDA_VISIBLE_DEVICES`` set: ``init(gpu=True)`` binds each worker rank.

No CUDA is started: the check reads what each worker process was given (its
``CUDA_VISIBLE_DEVICES``, its ``GPU`` resource, its memory settings), then
computes a small CPU array to show the cluster works.
"""

import os

import numpy as np

import dndask as ht
from dndask import _comm


def settings(dask_worker):
    memory = dask_worker.memory_manager
    return (
        os.environ.get("CUDA_VISIBLE_DEVICES"),
        dask_worker.state.total_resources.get("GPU"),
        memory.memory_target_fraction,
        memory.memory_spill_fraction,
        dask_worker.state.nthreads,
    )


if __name__ == "__main__":
    client = ht.init(gpu=True)  # mpirun is detected; this line returns on MPI rank 1 only
    comm = ht.get_comm()
    info = _comm.live_workers(client)
    seen = client.run(settings)
    for worker in comm.workers:
        gpu, resource, target, spill, threads = seen[worker]
        print(
            f"worker rank {info[worker]['name']}: CUDA_VISIBLE_DEVICES={gpu} GPU={resource} "
            f"target={target} spill={spill} threads={threads}"
        )
    print("client CUDA_VISIBLE_DEVICES:", os.environ.get("CUDA_VISIBLE_DEVICES"))
    a = ht.arange(10, split=0)
    np.testing.assert_array_equal((a * 2).numpy(), np.arange(10) * 2)
    print("values checked on", comm.size, "ranks")
