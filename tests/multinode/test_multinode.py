"""Several nodes, simulated: dndask under mpirun across network namespaces, and a lost node.

Each test makes its own nodes (``make_nodes``, tests/multinode/netns.py): node ``i`` is host
``node<i>`` at 198.18.0.<i + 1> on a private bridge, with its own hostname, IPC and /dev/shm.
The jobs run ``mpirun`` (MPICH's Hydra) on node 0 with a launcher that enters a node in place of
``ssh``, so every MPI rank runs on the node Hydra placed it on.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time

import numpy as np
import pytest

from multinode import netns
from multinode.launch import BIN, MPIRUN, ROOT, node_env

TIMEOUT = 240
CHECK = str(ROOT / "tests" / "multinode" / "check_nodes.py")

pytestmark = [
    pytest.mark.mpi,
    pytest.mark.slow,
    pytest.mark.skipif(MPIRUN is None, reason="mpirun not installed (pip install mpich)"),
]


def layout(n_nodes: int) -> list[int]:
    """MPI ranks per node: node 0 holds the scheduler, the client and one worker; the others
    two workers each (2 nodes: workers 2 | 3 4; 3 nodes: 2 | 3 4 | 5 6)."""
    return [3] + [2] * (n_nodes - 1)


def node_of_rank(per_node: list[int]) -> list[int]:
    return [i for i, k in enumerate(per_node) for _ in range(k)]


def start_job(nodes, per_node, args, **env):
    command = nodes.mpirun(MPIRUN, per_node, [sys.executable, *args])
    return nodes[0].popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        env=node_env(DNDASK_INTERFACE=netns.NODE_IFACE, **env),
    )  # fmt: skip


def wait_for(job, marker: str) -> list[str]:
    """Lines of the job's stdout up to the one starting with ``marker``."""
    lines = []
    for line in job.stdout:
        lines.append(line)
        if line.startswith(marker):
            return lines
    job.wait(timeout=TIMEOUT)
    raise AssertionError(f"no {marker!r} line:\n{''.join(lines)}\n{job.stderr.read()}")


def finish(job, timeout=TIMEOUT) -> tuple[str, str]:
    try:
        return job.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        job.kill()
        out, err = job.communicate()
        raise AssertionError(f"the job hung past {timeout} s:\n{out}\n{err}") from None


@pytest.mark.parametrize(
    ("n_nodes", "tls"), [(2, False), (3, False), (2, True)], ids=["2nodes", "3nodes", "2nodes-tls"]
)
def test_mpirun_across_nodes(make_nodes, n_nodes, tls):
    nodes = make_nodes(n_nodes)
    per_node = layout(n_nodes)
    hold = nodes.dir / "release"
    job = start_job(nodes, per_node, [CHECK, "--hold", str(hold), *(["--tls"] if tls else [])])
    try:
        lines = wait_for(job, "READY")
        result = json.loads(next(line for line in lines if line.startswith("RESULT "))[7:])
        # while the cluster is up: every socket listens inside its node, dndask's servers on
        # the node's address (MPICH's and the scheduler's HTTP server may take the node's own
        # loopback; Hydra's control port, held by mpirun on node 0, is its wildcard)
        where = node_of_rank(per_node)
        listening = [node.listening() for node in nodes]
        for node, sockets in zip(nodes, listening, strict=True):
            for address, users in sockets:
                host = address.rsplit(":", 1)[0]
                assert host in (node.address, "127.0.0.1") or (
                    host == "0.0.0.0" and '("mpirun",' in users and node.index == 0
                ), (node, address, users)
        every_pid = [p for node in nodes for p in node.pids()]
        host = netns.host_listening()
        assert not [a for a, users in host if any(f"pid={p}," in users for p in every_pid)]
    finally:
        hold.touch()
    out, err = finish(job)
    assert job.returncode == 0, "".join(lines) + out + err
    assert "Traceback" not in err, err

    scheduler = result["scheduler"].split("://")[1]
    assert scheduler.rsplit(":", 1)[0] == nodes[0].address
    assert scheduler in [address for address, _ in listening[0]]
    assert result["scheduler"].startswith("tls://" if tls else "tcp://")
    assert all(w["address"].startswith("tls://" if tls else "tcp://") for w in result["workers"])
    if tls:
        assert result["stranger"].startswith("refused"), result["stranger"]
    assert result["client_host"] == "node0"
    workers = result["workers"]
    assert [w["name"] for w in workers] == list(range(2, 2 + len(workers)))
    for w in workers:  # MPI rank m runs on the node Hydra put it on, at that node's address
        node = nodes[where[w["name"]]]
        assert w["host"] == node.hostname
        assert w["address"].split("://")[1].rsplit(":", 1)[0] == node.address
        assert w["address"].split("://")[1] in [a for a, _ in listening[node.index]]
    assert len({w["host"] for w in workers}) == n_nodes
    # same host or not: the ranks of one node group together, those of two nodes do not
    groups = [[r for r, w in enumerate(workers) if where[w["name"]] == i] for i in range(n_nodes)]
    assert result["host_groups"] == groups
    assert result["one_host"] == [True] * n_nodes + [False]
    per_rank = result["per_rank"]
    assert per_rank == [[r, w["host"]] for r, w in enumerate(workers)]

    # relayouts across nodes: chunk r on rank r's worker, bytes moved as the plan's minimum
    size = len(workers)
    addresses = [[w["address"]] for w in workers]
    rows, cols = result["resplit"]["shape"]
    row_counts = [len(p) for p in np.array_split(np.arange(rows), size)]
    col_counts = [len(p) for p in np.array_split(np.arange(cols), size)]
    kept = sum(r * c for r, c in zip(row_counts, col_counts, strict=True))
    assert result["resplit"]["holders"] == addresses
    assert result["resplit"]["moved"] == (rows * cols - kept) * 8
    before, after = result["redistribute"]["before"], result["redistribute"]["after"]
    assert before == row_counts
    stay = sum(
        max(
            0, min(sum(before[: r + 1]), sum(after[: r + 1])) - max(sum(before[:r]), sum(after[:r]))
        )
        for r in range(size)
    )
    assert result["redistribute"]["holders"] == addresses
    assert result["redistribute"]["moved"] == (rows - stay) * cols * 8


def test_the_tour_across_nodes(make_nodes):
    nodes = make_nodes(2)
    job = start_job(nodes, [4, 2], [str(ROOT / "examples" / "internals.py")])
    out, err = finish(job)
    assert job.returncode == 0, out + err
    assert "a is distributed over 4 processes" in out
    assert "Rank 3 holds a slice of DNDarray 'a' with local shape (1, 4, 3)" in out
    assert "tensor([[7, 1, 3],\n        [7, 1, 3],\n        [7, 1, 3],\n        [7, 1, 3]])" in out
    assert "A, B and C hold the same values: True" in out
    assert "Traceback" not in err


def test_the_mpi_transport_across_nodes(make_nodes):
    # relayouts over MPI (the default under mpirun) whose collects ask ranks of the other node
    # for their pieces: with a request receive from MPI_ANY_SOURCE, MPICH's UCX netmod left
    # most requests from the other node unmatched and the first relayout across nodes hung
    nodes = make_nodes(2)
    job = start_job(nodes, [4, 2], [str(ROOT / "tests" / "mpi" / "check_mpi_transport.py")])
    out, err = finish(job)
    assert job.returncode == 0, out + err
    assert "values checked (auto): 76" in out and "values checked (sub-comm): 76" in out
    assert "transport: mpi; graph: ['mpi']" in out
    plan, mpi, dask = (
        int(n) for n in re.search(r"plan (\d+), mpi (\d+), dask data (\d+)", out).groups()
    )
    assert plan == mpi > 0 and dask == 0
    assert "interleaved, chained and busy relayouts finished" in out
    assert "no posted piece left on any worker" in out
    assert "Traceback" not in err


def test_gpu_binding_per_node(make_nodes):
    # every node offers the made-up GPUs 4, 6 and 7; the worker ranks of a node take that
    # node's GPUs in turn: node 0's workers 2, 3 get 4, 6 and node 1's workers 4, 5 get 4, 6
    # again (one host of 4 workers would hand out 4, 6, 7, 4)
    nodes = make_nodes(2)
    job = start_job(
        nodes, [4, 2], [str(ROOT / "tests" / "mpi" / "check_gpu_binding.py")],
        CUDA_VISIBLE_DEVICES="4,6,7",
    )  # fmt: skip
    out, err = finish(job)
    assert job.returncode == 0, out + err
    for rank, gpu in ((2, "4"), (3, "6"), (4, "4"), (5, "6")):
        line = f"worker rank {rank}: CUDA_VISIBLE_DEVICES={gpu} GPU=1 target=False spill=False"
        assert line in out, out
    assert "values checked on 4 ranks" in out


def test_a_lost_node_ends_the_mpi_job(make_nodes):
    nodes = make_nodes(2)
    go = nodes.dir / "go"
    job = start_job(nodes, [4, 2], [str(ROOT / "tests" / "multinode" / "check_lost_node.py"),
                                     str(go)])  # fmt: skip
    wait_for(job, "SUBMITTED")
    killed = nodes[1].kill_all()  # the proxy and both worker ranks of node 1
    assert len(killed) >= 3, killed
    go.touch()
    start = time.monotonic()
    _, err = finish(job, timeout=120)
    assert job.returncode != 0
    # Hydra notices its proxy on node 1 is gone, kills the job's other ranks and says so
    assert "process manager error waiting for completion" in err, err
    assert time.monotonic() - start < 60
    deadline = time.monotonic() + 30  # Hydra's kill takes a moment to land
    while nodes[0].pids() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert nodes[0].pids() == []  # no rank of the job is left waiting on node 0


def test_dask_mpi_batch_mode_across_nodes(make_nodes):
    nodes = make_nodes(2)
    job = start_job(nodes, [4, 2], [str(ROOT / "tests" / "mpi" / "check_dask_mpi.py"), "eth0"])
    out, err = finish(job)
    assert job.returncode == 0, out + err
    seen = json.loads(next(x for x in out.splitlines() if x.startswith("RESULT "))[7:])
    assert seen["names"] == [2, 3, 4, 5]  # rank order follows dask-mpi's worker names
    assert seen["hosts"] == ["node0", "node0", "node1", "node1"]
    assert [a.split("://")[1].rsplit(":", 1)[0] for a in seen["addresses"]] == [
        "198.18.0.1", "198.18.0.1", "198.18.0.2", "198.18.0.2"
    ]  # fmt: skip
    assert seen["holders"] == seen["addresses"]


def _start_worker(node, scheduler_file, name: int):
    return node.popen(
        [str(BIN / "dask"), "worker", "--scheduler-file", str(scheduler_file), "--interface",
         netns.NODE_IFACE, "--nthreads", "1", "--name", str(name), "--no-dashboard"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=node_env(),
    )  # fmt: skip


@pytest.mark.timeout(600)  # 75-115 s at load 30: four nannies, a kill, replacements start
@pytest.mark.parametrize("replaced", [False, True], ids=["lost", "replaced"])
def test_a_lost_node_without_mpi(make_nodes, replaced):
    # a cluster started by hand: scheduler and client on node 0, workers 0, 1 on node 1 and
    # 2, 3 on node 2 (each with its nanny, as `dask worker` starts them); node 2 dies while
    # a computation runs. Nobody replaces it: the error names ranks 2 and 3. Workers of the
    # same names start on node 1: the lost ranks' work is recomputed there.
    nodes = make_nodes(3)
    scheduler_file = nodes.dir / "scheduler.json"
    go = nodes.dir / "go"
    nodes[0].popen(
        [str(BIN / "dask"), "scheduler", "--scheduler-file", str(scheduler_file), "--interface",
         netns.NODE_IFACE, "--no-dashboard"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=node_env(),
    )  # fmt: skip
    deadline = time.monotonic() + TIMEOUT
    while not scheduler_file.exists() or not scheduler_file.read_text().strip():
        assert time.monotonic() < deadline, "the scheduler wrote no scheduler file"
        time.sleep(0.2)
    for rank in range(4):
        _start_worker(nodes[1 + rank // 2], scheduler_file, rank)
    client = nodes[0].popen(
        [sys.executable, str(ROOT / "tests" / "multinode" / "check_lost_workers.py"),
         str(scheduler_file), str(go), "4"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        env=node_env(DNDASK_LOST_WORKER_TIMEOUT="120" if replaced else "3"),
    )  # fmt: skip
    workers = wait_for(client, "WORKERS")[-1].split()[1:]
    assert [w.split("://")[1].split(":")[0] for w in workers] == [
        "198.18.0.2", "198.18.0.2", "198.18.0.3", "198.18.0.3"
    ]  # fmt: skip
    wait_for(client, "SUBMITTED")
    killed = nodes[2].kill_all()  # both workers, their nannies and helper processes
    assert len(killed) >= 4, killed
    if replaced:
        for rank in (2, 3):
            _start_worker(nodes[1], scheduler_file, rank)
    go.touch()
    out, err = finish(client)
    assert client.returncode == 0, out + err
    if replaced:
        assert "VALUES OK True" in out, out + err  # numpy's values, chunk r on rank r's worker
    else:
        lost = rf"ranks 2, 3 \(workers {re.escape(workers[2])}, {re.escape(workers[3])}\)"
        assert re.search(rf"ERROR the array's comm lost {lost}", out), out + err
        assert "no worker of that name replaced it within 3 s" in out, out


def test_an_interface_missing_on_the_nodes_is_named_on_every_rank(make_nodes):
    nodes = make_nodes(2)
    command = nodes.mpirun(MPIRUN, [3, 2], [sys.executable, "-c", "import dndask; dndask.init()"])
    result = nodes[0].run(command, timeout=TIMEOUT, cwd=ROOT, env=node_env(DNDASK_INTERFACE="ib0"))
    assert result.returncode != 0
    message = (
        "`interface` 'ib0' has no IPv4 address on nodes node0 (MPI ranks 0, 1, 2; it has eth0, "
        "lo); node1 (MPI ranks 3, 4; it has eth0, lo)"
    )
    assert result.stderr.count(message) == 5, result.stderr


def test_dask_mpi_cli_mode_across_nodes(make_nodes):
    # `mpirun dask-mpi --scheduler-file` over the nodes, and a separate dndask script on node 0
    nodes = make_nodes(2)
    scheduler_file = nodes.dir / "scheduler.json"
    command = nodes.mpirun(MPIRUN, [3, 2], [
        str(BIN / "dask-mpi"), "--scheduler-file", str(scheduler_file), "--interface",
        netns.NODE_IFACE, "--no-dashboard", "--worker-class", "distributed.Worker",
    ])  # fmt: skip
    job = nodes[0].popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         cwd=nodes.dir, env=node_env())  # fmt: skip
    deadline = time.monotonic() + TIMEOUT
    while not scheduler_file.exists() or not scheduler_file.read_text().strip():
        assert job.poll() is None, job.stderr.read()
        assert time.monotonic() < deadline, "dask-mpi wrote no scheduler file"
        time.sleep(0.5)
    code = f"""
if __name__ == "__main__":
    import json, socket
    import numpy as np
    import dndask as ht
    from dndask import _comm
    client = ht.init(scheduler_file={str(scheduler_file)!r})
    client.wait_for_workers(4)
    comm = ht.get_comm()
    info = _comm.live_workers(client)
    a = ht.arange(30, dtype=ht.float64, split=0)
    assert (a.resplit(None).numpy() == np.arange(30)).all()
    hosts = ht.per_rank(lambda rank: socket.gethostname()).gather()
    print(json.dumps([[info[w]["name"] for w in comm.workers], hosts]))
    client.shutdown()
"""
    result = nodes[0].run([sys.executable, "-c", code], timeout=TIMEOUT, cwd=ROOT, env=node_env())
    assert result.returncode == 0, result.stderr
    names, hosts = json.loads(result.stdout.strip().splitlines()[-1])
    assert names == ["dask_mpi-1", "dask_mpi-2", "dask_mpi-3", "dask_mpi-4"]
    assert hosts == ["node0", "node0", "node1", "node1"]
    finish(job)
