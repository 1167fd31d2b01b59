"""mpirun launches: dask-mpi style jobs, the scheduler-file mode, TLS; each under a timeout."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
BIN = pathlib.Path(sys.executable).parent
MPIRUN = shutil.which("mpirun", path=str(BIN)) or shutil.which("mpirun")
TIMEOUT = 180

pytestmark = [
    pytest.mark.mpi,
    pytest.mark.skipif(MPIRUN is None, reason="mpirun not installed (pip install mpich)"),
]


def env(**extra) -> dict:
    return {**os.environ, "DNDASK_INTERFACE": "lo", "DNDASK_PROGRESS": "off", **extra}


def mpirun(n: int, *args: str, **extra_env: str) -> subprocess.CompletedProcess:
    """Run ``args`` on ``n`` MPI processes; a hang fails the test instead of CI."""
    return subprocess.run(
        [MPIRUN, "-np", str(n), *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=env(**extra_env),
        cwd=ROOT,
    )


def test_seed_tour_on_six_processes():
    result = mpirun(6, sys.executable, "examples/internals.py")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "a is distributed over 4 processes" in out  # 6 MPI ranks = scheduler, client, 4 workers
    assert "Rank 3 holds a slice of DNDarray 'a' with local shape (1, 4, 3)" in out
    assert "tensor([[7, 1, 3],\n        [7, 1, 3],\n        [7, 1, 3],\n        [7, 1, 3]])" in out
    assert "into shape (12, 4)" in out
    assert "A, B and C hold the same values: True" in out
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("flags", [(), ("--tls",)], ids=["tcp", "tls"])
def test_values_placement_and_resplit_on_four_processes(flags):
    result = mpirun(4, sys.executable, "tests/mpi/check_cluster.py", *flags)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "worker names by rank: [2, 3]" in result.stdout
    assert "checks passed on 2 ranks; placement by MPI rank: True" in result.stdout
    if flags:
        assert "stranger without credentials refused" in result.stdout
    assert "Traceback" not in result.stderr


def test_too_few_ranks_is_a_clear_error():
    result = mpirun(2, sys.executable, "-c", "import dndask as ht; ht.init(mpi=True)")
    assert result.returncode != 0
    assert (
        "`mpi=True` needs at least 3 MPI ranks (scheduler, client, one worker), got 2"
        in result.stderr
    )


def test_gpu_true_binds_each_worker_rank_to_a_gpu_of_its_node():
    # CUDA_VISIBLE_DEVICES stands for the node's two GPUs; the check starts no CUDA
    result = mpirun(5, sys.executable, "tests/mpi/check_gpu_binding.py", CUDA_VISIBLE_DEVICES="4,6")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    # worker ranks 2, 3, 4 take the node's GPUs in turn; one thread; no spilling
    for rank, gpu in ((2, "4"), (3, "6"), (4, "4")):
        line = f"worker rank {rank}: CUDA_VISIBLE_DEVICES={gpu} GPU=1 target=False spill=False"
        assert f"{line} threads=1" in out, out
    assert "client CUDA_VISIBLE_DEVICES: 4,6" in out  # the client rank is left as it was
    assert "values checked on 3 ranks" in out
    assert "Traceback" not in result.stderr


def test_gpu_true_without_a_gpu_is_a_clear_error_on_every_rank():
    code = "import dndask as ht; ht.init(mpi=True, gpu=True)"
    result = mpirun(4, sys.executable, "-c", code, CUDA_VISIBLE_DEVICES="")
    assert result.returncode != 0
    message = "`gpu=True` needs a GPU for every worker, but the node of MPI ranks [2, 3] has none"
    assert result.stderr.count(message) == 4, result.stderr  # no rank waits for the others


def test_mpi_without_mpirun_is_a_clear_error():
    result = subprocess.run(
        [sys.executable, "-c", "import dndask as ht; ht.init(mpi=True)"],
        capture_output=True, text=True, timeout=TIMEOUT, env=env(),
    )  # fmt: skip
    assert result.returncode != 0
    assert "got 1; launch with e.g. `mpirun -np 4 python script.py`" in result.stderr


def test_mpi_without_mpi4py_is_a_clear_error():
    code = "import sys; sys.modules['mpi4py'] = None; import dndask as ht; ht.init(mpi=True)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT, env=env()
    )
    assert result.returncode != 0
    assert "`mpi=True` needs mpi4py and an MPI library: `pip install mpi4py mpich`" in result.stderr


def test_scheduler_file_mode(tmp_path):
    scheduler_file = tmp_path / "scheduler.json"
    job = subprocess.Popen(
        [MPIRUN, "-np", "4", str(BIN / "dask-mpi"), "--scheduler-file", str(scheduler_file),
         "--interface", "lo", "--no-dashboard", "--worker-class", "distributed.Worker"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(), cwd=tmp_path,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + TIMEOUT
        while not scheduler_file.exists() or not scheduler_file.read_text().strip():
            assert job.poll() is None, job.communicate()
            assert time.monotonic() < deadline, "dask-mpi wrote no scheduler file"
            time.sleep(0.5)
        assert json.loads(scheduler_file.read_text())["address"].startswith("tcp://127.0.0.1")
        code = f"""
if __name__ == "__main__":
    import numpy as np
    import dndask as ht
    from dndask import _comm
    client = ht.init(scheduler_file={str(scheduler_file)!r})
    client.wait_for_workers(3)
    comm = ht.get_comm()
    info = _comm.live_workers(client)
    print([info[w]["name"] for w in comm.workers])
    a = ht.arange(10, split=0).resplit(None)
    assert (a.numpy() == np.arange(10)).all()
    client.shutdown()
"""
        result = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT,
            env=env(),
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "['dask_mpi-1', 'dask_mpi-2', 'dask_mpi-3']"
        job.wait(timeout=TIMEOUT)
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()


def test_dask_mpi_batch_mode_then_dndask():
    # dask-mpi's documented batch mode: initialize(); Client(); then dndask reuses that client
    result = mpirun(6, sys.executable, "tests/mpi/check_dask_mpi.py", "lo")
    assert result.returncode == 0, result.stdout + result.stderr
    line = next(x for x in result.stdout.splitlines() if x.startswith("RESULT "))
    seen = json.loads(line[len("RESULT ") :])
    assert seen["names"] == [2, 3, 4, 5]  # dndask rank r is dask-mpi's worker r + 2
    assert seen["holders"] == seen["addresses"]  # chunk r on rank r's worker
    assert all(a.startswith("tcp://127.0.0.1:") for a in seen["addresses"])


def test_a_missing_interface_is_a_clear_error_on_every_rank():
    code = "import dndask as ht; ht.init(mpi=True)"
    result = mpirun(3, sys.executable, "-c", code, DNDASK_INTERFACE="nosuch0")
    assert result.returncode != 0
    message = "`interface` 'nosuch0' has no IPv4 address on node "
    assert result.stderr.count(message) == 3, result.stderr  # no rank waits for the others
    assert "(MPI ranks 0, 1, 2; it has " in result.stderr
