"""Heat in its own virtual environments (1.8 and the newest, 1.9), run under MPICH here only.

Each release of :data:`RELEASES` gets a venv of its own (git-ignored; Heat 1.9 needs
Python >= 3.12, Heat 1.8 runs on the bench's Python). On first use :func:`ensure_heat`
creates it, installs the release's requirements with pip and checks the result with a tiny
Heat program on two MPI ranks; a marker file then skips all of that on later runs.
:func:`run_case` launches ``bench/_heat_cases.py`` on ``P`` ranks and parses the JSON line
rank 0 prints.

The launcher is MPICH's single-node ``mpiexec.gforker`` from the same wheel
as ``mpirun``: it talks to the ranks through pipes, whereas Hydra's ``mpirun``
listens on a port of every interface. The ranks' UCX transport is limited to
loopback and shared memory, and they get the environment Dask's nanny gives
its workers (one BLAS/OpenMP thread, ``MALLOC_TRIM_THRESHOLD_``), so both
sides run with the same allocator and thread settings.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import dask.config

from . import workloads

BENCH_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Release:
    """One Heat release the bench runs: its requirements, venv and interpreter."""

    system: str  # the bench's name for it (a column of the report)
    requirements: tuple[str, ...]
    venv_env: str  # the environment variable that overrides the venv's place
    venv_dir: str  # under bench/
    min_python: tuple[int, int]
    python_env: str  # the environment variable that names the interpreter

    def default_venv(self) -> Path:
        return Path(os.environ.get(self.venv_env, BENCH_DIR / self.venv_dir))

    def python(self) -> str:
        """An interpreter new enough: ``$<python_env>``, this one, or one on PATH or pyenv."""
        named = os.environ.get(self.python_env)
        if named:
            return named
        if sys.version_info[:2] >= self.min_python:
            return sys.executable
        version = ".".join(map(str, self.min_python))
        # pyenv's own install first: its shim on PATH fails unless that version is selected
        found = next(
            iter(
                sorted(
                    glob.glob(
                        os.path.expanduser(f"~/.pyenv/versions/{version}*/bin/python{version}")
                    )
                )
            ),
            None,
        ) or shutil.which(f"python{version}")
        if found is None:
            raise RuntimeError(
                f"{self.requirements[0]} needs Python >= {version}: set ${self.python_env} "
                f"to such an interpreter"
            )
        return found


RELEASES = {
    "heat": Release(
        "heat",
        ("heat==1.8.0", "torch==2.10.0", "torchvision==0.25.0", "mpi4py", "mpich"),
        "BENCH_HEAT_VENV",
        ".heat-venv",
        (3, 10),
        "BENCH_HEAT_PYTHON",
    ),
    "heat19": Release(
        "heat19",
        ("heat==1.9.0", "torch==2.10.0", "torchvision==0.25.0", "mpi4py", "mpich"),
        "BENCH_HEAT19_VENV",
        ".heat19-venv",
        (3, 12),
        "BENCH_HEAT19_PYTHON",
    ),
}
REQUIREMENTS = RELEASES["heat"].requirements
SCRIPT = BENCH_DIR / "_heat_cases.py"
MARKER = ".bench-installed"
LOOPBACK_ENV = {"UCX_NET_DEVICES": "lo", "UCX_TLS": "self,sm,tcp", "FI_PROVIDER": "shm"}
CHECK = (
    "import heat as ht, torch\n"
    "x = ht.arange(10, split=0)\n"
    "s = x.sum().item()\n"
    "assert s == 45 and x.comm.size == 2, (s, x.comm.size)\n"
    "if x.comm.rank == 0:\n"
    "    print('heat-ok', ht.__version__, torch.__version__)\n"
)


def default_venv(system: str = "heat") -> Path:
    """The venv of ``system``'s release: ``$BENCH_HEAT_VENV`` or ``bench/.heat-venv`` for 1.8."""
    return RELEASES[system].default_venv()


def venv_bin(venv: Path, name: str) -> Path:
    return Path(venv) / "bin" / name


def launcher(venv: Path) -> Path:
    """MPICH's single-node launcher, or ``mpirun`` where the wheel lacks it."""
    gforker = venv_bin(venv, "mpiexec.gforker")
    return gforker if gforker.exists() else venv_bin(venv, "mpirun")


def mpi_env() -> dict[str, str]:
    """The ranks' environment: Dask's worker settings and loopback-only transports."""
    env = dict(os.environ)
    for key, value in dask.config.get("distributed.nanny.pre-spawn-environ", {}).items():
        env[key] = str(value)
    env.update(LOOPBACK_ENV)
    env.pop("PYTHONPATH", None)  # nothing from dndask's environment leaks into Heat's
    return env


def mpi_command(venv: Path, ranks: int, args: list[str]) -> list[str]:
    """``<launcher> -np ranks <venv python> args...``."""
    return [str(launcher(venv)), "-np", str(ranks), str(venv_bin(venv, "python")), *args]


def _run(cmd: list[str], timeout: float, env: dict | None = None) -> str:
    """Run ``cmd``; its stdout, or RuntimeError with the tail of its output."""
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr)[-3000:]
        raise RuntimeError(f"{' '.join(cmd[:4])} ... failed ({proc.returncode}):\n{tail}")
    return proc.stdout


def verify(venv: Path) -> str:
    """Run a tiny Heat program on two ranks; its ``heat-ok`` line."""
    out = _run(mpi_command(venv, 2, ["-c", CHECK]), timeout=300, env=mpi_env())
    lines = [line for line in out.splitlines() if line.startswith("heat-ok")]
    if not lines:
        raise RuntimeError(f"the Heat check printed no result:\n{out[-2000:]}")
    return lines[0]


def ensure_heat(venv: Path | None = None, log=print, system: str = "heat") -> Path:
    """The virtual environment of ``system``'s Heat release, created and checked on first use."""
    release = RELEASES[system]
    venv = Path(venv or release.default_venv())
    if (venv / MARKER).exists():
        return venv
    if not venv_bin(venv, "python").exists():
        log(f"creating {venv} for {release.requirements[0]}")
        _run([release.python(), "-m", "venv", str(venv)], timeout=300)
    log(f"installing {' '.join(release.requirements)} (torch is a large download)")
    pip = [str(venv_bin(venv, "python")), "-m", "pip", "install", "--quiet"]
    _run([*pip, *release.requirements], timeout=3600)
    line = verify(venv)
    log(f"Heat works under MPI: {line}")
    (venv / MARKER).write_text(line + "\n")
    return venv


def parse_record(stdout: str) -> dict:
    """The JSON record rank 0 prints after ``BENCH-JSON``."""
    for line in stdout.splitlines():
        if line.startswith("BENCH-JSON "):
            return json.loads(line[len("BENCH-JSON ") :])
    raise RuntimeError(f"the Heat run printed no result:\n{stdout[-2000:]}")


def run_case(venv: Path, w: workloads.Workload, repeats: int, timeout: float = 1800) -> dict:
    """Run one workload under MPI on ``w.ranks`` ranks; the parsed record."""
    args = [str(SCRIPT), "--case", w.case.key, "--mib", str(w.mib), "--repeats", str(repeats)]
    return parse_record(_run(mpi_command(venv, w.ranks, args), timeout, env=mpi_env()))
