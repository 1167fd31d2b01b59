"""Scale across simulated nodes: ``python -m bench.multinode --nodes 4 --workers-per-node 16``.

Needs root (network namespaces; tests/multinode/netns.py makes and removes the nodes).
Starts one MPI job over the nodes (scheduler and client on node 0 beside its workers) and runs
bench/multinode_job.py; prints a markdown table of task counts and seconds, dndask against
dask.array on the same cluster. Every node shares this machine's CPUs: the times measure
scheduling and transfer overhead at that rank count, not a cluster's speed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from tests.multinode import netns
from tests.multinode.launch import MPIRUN, ROOT, node_env


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=4)
    parser.add_argument("--workers-per-node", type=int, default=16)
    parser.add_argument("--mib", type=float, default=64.0, help="size of the float32 matrix")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--timeout", type=int, default=3600)
    args = parser.parse_args(argv)
    per_node = [args.workers_per_node + 2] + [args.workers_per_node] * (args.nodes - 1)
    t0 = time.monotonic()
    with netns.Nodes(args.nodes) as nodes:
        command = nodes.mpirun(MPIRUN, per_node, [sys.executable, "-m", "bench.multinode_job",
                                                  str(args.mib), str(args.repeats)])  # fmt: skip
        env = node_env(DNDASK_INTERFACE=netns.NODE_IFACE, OMP_NUM_THREADS="1")
        done = nodes[0].run(command, timeout=args.timeout, cwd=ROOT, env=env)
    if done.returncode != 0:
        print(done.stdout, done.stderr[-5000:], file=sys.stderr)
        return 1
    result = json.loads(next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))[7:])
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    print(f"{result['ranks']} workers on {args.nodes} nodes, float32 {result['rows']} x "
          f"{result['cols']}, {args.repeats} repeats, {time.monotonic() - t0:.0f} s in all, "
          f"load {' '.join(load)} ({os.cpu_count()} CPUs)\n")  # fmt: skip
    print("| case | tasks run dndask · dask | dndask s best · median | dask s best · median |")
    print("| --- | ---: | ---: | ---: |")
    for name, case in result["cases"].items():
        mine, theirs = case["dndask_s"], case["dask_s"]
        print(f"| {name} | {case['tasks'][0]} · {case['tasks'][1]} | {mine[0]:.3f} · "
              f"{mine[1]:.3f} | {theirs[0]:.3f} · {theirs[1]:.3f} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
