"""Install the dask and distributed ``make test-dask-next`` tests, and say plainly which.

Dask and distributed are released together with the same version number, and each
distributed release pins its dask (``dask==X``). When dask publishes a release before its
distributed (dask 2026.11.0 beside distributed 2026.8.0, December 2026), a plain
``pip install --upgrade dask distributed`` does not fail: it resolves distributed back to a
release from years ago whose dask range is open (2021.4.1), which cannot import with the
new dask. So this script asks the package index for both version lists and:

- installs the newest *pair* (the newest version both publish) into the venv given;
- if dask has a newer release, installs it over the pair (pip warns that distributed pins
  its dask), and checks that ``import dask.array, distributed`` works and a two-chunk sum
  runs on a one-worker loopback cluster; if it does, that combination is what gets tested,
  and if not, the error is printed and the pair is put back;
- prints one line per decision, prefixed ``dask-next:``.

Usage: ``python .ci/dask_next.py VENV_PYTHON`` (run by ``make test-dask-next``).
"""

from __future__ import annotations

import re
import subprocess
import sys


class PlainError(Exception):
    """A failure said in one line (``dask-next: ...``), without a traceback."""


def versions(python: str, package: str) -> list[str]:
    """The versions the index serves for ``package``, newest first (``pip index versions``)."""
    run = subprocess.run(
        [python, "-m", "pip", "index", "versions", package], capture_output=True, text=True
    )
    match = re.search(r"Available versions: (.*)", run.stdout)
    if run.returncode != 0 or match is None:
        said = run.stderr.strip().splitlines() or run.stdout.strip().splitlines() or ["nothing"]
        raise PlainError(
            f"the package index serves no versions of {package} "
            f"(`pip index versions {package}`: {said[-1]}); set DASK_NEXT to name the releases"
        )
    return [v.strip() for v in match.group(1).split(",")]


IMPORT = "import dask.array, distributed"
PROBE = """
import dask.array as da, distributed
with distributed.LocalCluster(n_workers=1, processes=True, host="127.0.0.1",
                              dashboard_address=None) as cluster, distributed.Client(cluster):
    assert float(da.ones(10, chunks=5).sum().compute()) == 10.0
"""


def pip_install(python: str, *requirements: str) -> None:
    """``pip install --quiet --upgrade`` into ``python``'s environment."""
    run = subprocess.run([python, "-m", "pip", "install", "--quiet", "--upgrade", *requirements],
                         capture_output=True, text=True)  # fmt: skip
    if run.returncode != 0:
        said = run.stderr.strip().splitlines() or [f"exit status {run.returncode}"]
        raise PlainError(f"`pip install {' '.join(requirements)}` failed: {said[-1]}")


def probe_error(python: str) -> str | None:
    """Whether dask and distributed import together and run a sum (None), or what failed."""
    for what, code in (("do not import together", IMPORT), ("import but do not compute", PROBE)):
        try:
            probe = subprocess.run([python, "-c", code], capture_output=True, text=True,
                                   timeout=300)  # fmt: skip
        except subprocess.TimeoutExpired:
            return f"{what}: no answer in 300 s"
        if probe.returncode != 0:
            lines = [line for line in probe.stderr.strip().splitlines() if line.strip()]
            return f"{what}: {lines[-1] if lines else f'exit status {probe.returncode}'}"
    return None


def main(python: str) -> int:
    dask_versions = versions(python, "dask")
    distributed_versions = versions(python, "distributed")
    newest_dask, newest_distributed = dask_versions[0], distributed_versions[0]
    pair = next((v for v in dask_versions if v in set(distributed_versions)), None)
    if pair is None:
        raise PlainError("dask and distributed share no version on the package index")
    pip_install(python, f"dask[array]=={pair}", f"distributed=={pair}")
    if newest_dask == pair:
        print(f"dask-next: testing the newest releases, dask and distributed {pair}")
        return 0
    print(
        f"dask-next: the newest dask is {newest_dask}, the newest distributed "
        f"{newest_distributed}; no distributed {newest_dask} is served yet, and distributed "
        f"{pair} pins dask=={pair} (a plain upgrade of both resolves distributed to a "
        "years-old release that cannot import)"
    )
    pip_install(python, f"dask[array]=={newest_dask}")
    error = probe_error(python)
    if error is None:
        print(
            f"dask-next: dask {newest_dask} with distributed {pair} imports and computes; "
            f"testing that combination (outside distributed's own pin)"
        )
        return 0
    print(f"dask-next: dask {newest_dask} and distributed {pair} {error}")
    pip_install(python, f"dask[array]=={pair}")
    print(
        f"dask-next: dndask cannot be tested on dask {newest_dask} until a matching distributed "
        f"is served; testing the newest pair, {pair}, instead (docs/dask-versions.md)"
    )
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python .ci/dask_next.py VENV_PYTHON")
    try:
        sys.exit(main(sys.argv[1]))
    except PlainError as exc:
        sys.exit(f"dask-next: {exc}")
