"""What the multi-node tests start their processes with: this checkout, mpirun, the env."""

from __future__ import annotations

import os
import pathlib
import shutil
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(sys.executable).parent
MPIRUN = shutil.which("mpirun", path=str(BIN)) or shutil.which("mpirun")


def node_env(**extra: str) -> dict:
    """The environment of a process on a node: this checkout's dndask, no progress bars."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, "DNDASK_PROGRESS": "off", **extra}
