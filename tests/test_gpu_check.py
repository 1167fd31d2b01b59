"""bench/gpu_check.py on the CPU: the same steps, with the strict stand-in as the "gpu" backend.

The check itself is meant for a machine with a CUDA GPU (docs/gpu.md); here every step runs
against stand-in chunks, so a step the GPU run would fail on for a dndask reason fails here too.
"""

from __future__ import annotations

import sys
from pathlib import Path

import _standin  # registers the stand-in in the driver before the cluster starts

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import gpu_check  # noqa: E402


def test_the_gpu_check_passes_every_step_on_the_standin(client, comm_of):
    _standin.install(client)
    results = gpu_check.run_checks(comm_of(3), gib=0.001, repeats=1)
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
