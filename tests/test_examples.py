"""The examples run end to end and print what the seed notebook shows."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def run_example(name: str, workers: int) -> str:
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "DNDASK_WORKERS": str(workers), "DNDASK_PROGRESS": "off"},
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


def test_internals_tour_on_four_ranks():
    out = run_example("internals.py", 4)
    assert "a is distributed over 4 processes" in out
    assert "global shape (7, 4, 3)" in out
    for rank, lshape in enumerate(["(2, 4, 3)", "(2, 4, 3)", "(2, 4, 3)", "(1, 4, 3)"]):
        assert f"Rank {rank} holds a slice of DNDarray 'a' with local shape {lshape}" in out
    maps = [
        "tensor([[2, 4, 3],\n        [2, 4, 3],\n        [2, 4, 3],\n        [1, 4, 3]])",
        "tensor([[1, 4, 3],\n        [2, 4, 3],\n        [2, 4, 3],\n        [2, 4, 3]])",
        "tensor([[7, 1, 3],\n        [7, 1, 3],\n        [7, 1, 3],\n        [7, 1, 3]])",
    ]
    positions = [out.index(m) for m in maps]
    assert positions == sorted(positions)
    assert "split=None)" in out
    assert "split again: split=0, lshape_map=[[2, 4, 3], [2, 4, 3], [2, 4, 3], [1, 4, 3]]" in out
    assert "into shape (12, 4)" in out
    assert "B (Resplit A to axis=1): Split=1, lshape=(10, 1)" in out
    assert "C (Redistribute A): Split=0, lshape=(1, 4)" in out
    assert out.count("C (Redistribute A): Split=0, lshape=(3, 4)") == 3
    assert "A, B and C hold the same values: True" in out


def test_internals_tour_on_three_ranks():
    out = run_example("internals.py", 3)
    assert "a is distributed over 3 processes" in out
    assert "into shape (9, 4)" in out
    assert "A, B and C hold the same values: True" in out
