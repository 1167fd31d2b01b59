"""bench/gpu_check.py on the CPU: the same steps, with the strict stand-in as the "gpu" backend.

The check itself is meant for a machine with a CUDA GPU (docs/gpu.md); here every step runs
against stand-in chunks, so a step the GPU run would fail on for a dndask reason fails here too.
"""

from __future__ import annotations

import sys
from collections import deque
from pathlib import Path

import _standin  # registers the stand-in in the driver before the cluster starts

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import gpu_check  # noqa: E402


def _full_logs(dask_worker) -> None:
    """Swap in a full transfer log (as after a long session), keeping the real one aside."""
    dask_worker.dndask_real_log = dask_worker.transfer_incoming_log
    dask_worker.transfer_incoming_log = deque([{"total": 0} for _ in range(50)], maxlen=50)


def _restore_logs(dask_worker) -> None:
    real = dask_worker.__dict__.pop("dndask_real_log", None)
    if real is not None:  # the check's own transfers are not carried over (nobody reads them)
        dask_worker.transfer_incoming_log = real


def test_the_gpu_check_passes_every_step_on_the_standin(client, comm_of):
    _standin.install(client)
    client.run(_full_logs)  # the marks must work on full, bounded logs
    try:
        results = gpu_check.run_checks(comm_of(3), gib=0.001, repeats=1)
    finally:
        client.run(_restore_logs)
    failed = {name: r["error"] for name, r in results.items() if not r["ok"]}
    assert failed == {}
    assert results["tour/placement"]["placed"] is True
    assert results["tour/placement"]["chunks"] == ["_standin"] * 3
    assert results["tour/redistribute_"]["minimal"] is True
    assert results["tour/resplit_(1)"]["minimal"] is True
    assert {"median_s", "best_s"} <= results["time/gpu/resplit_ 0->1"].keys()


def test_a_failing_step_is_recorded_and_the_check_goes_on():
    results: dict = {}
    assert gpu_check.step(results, "boom", lambda: 1 / 0) is None
    assert gpu_check.step(results, "fine", lambda: {"x": 1}) == {"x": 1}
    assert results["boom"]["ok"] is False
    assert results["boom"]["error"] == "ZeroDivisionError: division by zero"
    assert results["fine"]["ok"] is True and results["fine"]["x"] == 1
