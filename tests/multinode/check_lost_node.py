"""Run under mpirun across nodes: persist a computation, announce it, and go on using it.

The test kills every process of one node after ``SUBMITTED``; the job must then end with a
clear message (from mpirun or from dndask), never hang.
"""

import pathlib
import sys
import time

import dndask as ht

if __name__ == "__main__":
    hold = pathlib.Path(sys.argv[1])
    ht.init()  # under mpirun: returns on MPI rank 1 only
    comm = ht.get_comm()
    a = ht.random.rand(400 * comm.size, 500, split=0)
    for _ in range(20):
        a = ht.sin(a) + 1.0
    a = a.persist()
    print("SUBMITTED", flush=True)
    while not hold.exists():
        time.sleep(0.1)
    print("sum", float(a.sum()), flush=True)
    b = a.resplit(1).persist(wait=True)
    print("sum after resplit", float(b.sum()), flush=True)
