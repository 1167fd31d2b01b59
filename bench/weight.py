"""The weight of dndask: ``import dndask`` time and per-worker memory, beside plain Dask.

Two measurements, each beside plain Dask on the same kind of cluster:

- **import time**: ``import dndask`` (and, for reference, ``import dask.array,
  distributed`` and ``import torch``) in a fresh interpreter, best of ``--repeats``; each
  run also reports whether the import loaded torch;
- **worker memory**: a fresh embedded cluster (``ht.init``: 4 worker processes, one
  thread each, 127.0.0.1) runs ``(ht.arange(10**6, split=0) + 1).sum()``; every worker
  then reports its resident set size and whether torch is in its ``sys.modules``. Plain
  Dask runs ``(da.arange(10**6, chunks=250_000) + 1).sum()`` on a fresh
  ``distributed.LocalCluster`` with the same options.

Examples::

    PYTHONPATH=. .venv/bin/python -m bench.weight                 # print the table
    PYTHONPATH=. .venv/bin/python -m bench.weight --out           # also write docs/performance.md
    PYTHONPATH=. .venv/bin/python -m bench.weight --repeats 3 --workers 2
    PYTHONPATH=. .venv/bin/python -m bench.weight --json now.json --before old.json --out

``--before`` shows a run saved with ``--json`` (for example on an older commit: copy this
file into that checkout and run it there) above this one; ``--from-json`` renders a saved
run without measuring.

``--out`` replaces the "## Weight" section of ``docs/performance.md`` (or inserts it before
"## Reading the numbers"); the rest of the page is left as it is.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "performance.md"
MIB = 1 << 20
N = 10**6

IMPORTS = {
    "dndask": "import dndask",
    "dask": "import dask.array, distributed",
    "torch": "import torch",
}

_TIMER = """\
import json, sys, time
t0 = time.perf_counter()
{statement}
t1 = time.perf_counter()
print(json.dumps({{"s": t1 - t0, "torch": "torch" in sys.modules}}))
"""


def _env() -> dict:
    """The environment of a fresh interpreter that finds dndask and bench from the repository."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "DNDASK_PROGRESS": "off"}


def import_time(statement: str, repeats: int) -> dict:
    """Best and median seconds of ``statement`` in a fresh interpreter, and whether torch loaded."""
    runs = []
    for _ in range(repeats):
        out = subprocess.run(
            [sys.executable, "-c", _TIMER.format(statement=statement)],
            capture_output=True,
            text=True,
            check=True,
            env=_env(),
            cwd=ROOT,  # `-c` puts the working directory first on sys.path
        )
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    times = sorted(r["s"] for r in runs)
    return {"best": times[0], "median": times[len(times) // 2], "torch": runs[-1]["torch"]}


def _worker_state() -> dict:
    """Run on a worker: its resident set size and whether torch is loaded."""
    with open("/proc/self/statm", "rb") as f:
        rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    return {"rss": rss, "torch": "torch" in sys.modules}


def _summary(states: dict) -> dict:
    rss = sorted(s["rss"] for s in states.values())
    return {
        "mib": [round(r / MIB, 1) for r in rss],
        "mean_mib": sum(rss) / len(rss) / MIB,
        "torch_workers": sum(s["torch"] for s in states.values()),
        "workers": len(rss),
    }


def dndask_workers(n_workers: int) -> dict:
    """Per-worker RSS after a plain dndask computation on a fresh embedded cluster."""
    import dndask as ht

    client = ht.init(n_workers)
    try:
        idle = _summary(client.run(_worker_state))
        total = int((ht.arange(N, split=0) + 1).sum().item())
        assert total == N * (N + 1) // 2, total
        after = _summary(client.run(_worker_state))
    finally:
        ht.shutdown()
    return {"idle": idle, "after": after}


def dask_workers(n_workers: int) -> dict:
    """Per-worker RSS after the same computation in plain dask.array on a LocalCluster."""
    import logging

    import dask.array as da
    import distributed

    with (
        distributed.LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
            silence_logs=logging.WARNING,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        idle = _summary(client.run(_worker_state))
        total = int((da.arange(N, chunks=-(-N // n_workers)) + 1).sum().compute())
        assert total == N * (N + 1) // 2, total
        after = _summary(client.run(_worker_state))
    return {"idle": idle, "after": after}


def in_fresh_process(system: str, n_workers: int) -> dict:
    """``dndask_workers`` or ``dask_workers`` in a fresh interpreter.

    Each system gets its own driver process: importing dndask sets dask's
    ``array_optimize`` option to a dndask function, and a nanny hands the driver's dask
    config to the workers it spawns, so a plain Dask cluster started after ``import
    dndask`` would have workers that import dndask too.
    """
    code = f"import json, bench.weight as w; print(json.dumps(w.{system}_workers({n_workers})))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=_env(), cwd=ROOT
    )
    if out.returncode:
        raise RuntimeError(f"the {system} cluster run failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(repeats: int, n_workers: int) -> dict:
    """Every number of the Weight section, and the machine's load average around them."""
    load = os.getloadavg()[0]
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "repeats": repeats,
        "workers": n_workers,
        "imports": {name: import_time(stmt, repeats) for name, stmt in IMPORTS.items()},
        "dndask": in_fresh_process("dndask", n_workers),
        "dask": in_fresh_process("dask", n_workers),
    }
    result["load"] = [round(load, 1), round(os.getloadavg()[0], 1)]
    return result


def _torch_cell(n: int, of: int) -> str:
    return "no" if n == 0 else f"yes ({n} of {of})"


def _load(result: dict) -> str:
    return " to ".join(str(x) for x in result.get("load", []))


def _in_short(before: dict, before_label: str, now: dict) -> str:
    """The before and after of the two last runs in one sentence, plain Dask beside each."""

    def secs(r, name):
        return f"{r['imports'][name]['best']:.2f}"

    def mib(r, system, when):
        return f"{r[system][when]['mean_mib']:.0f}"

    return (
        f"**In short** ({before_label} at load {_load(before)}, now at load {_load(now)}): "
        f"`import dndask` takes {secs(before, 'dndask')} s before and {secs(now, 'dndask')} s "
        f"now (best of {now['repeats']}; plain Dask's imports {secs(before, 'dask')} s and "
        f"{secs(now, 'dask')} s in the same runs). Per dndask worker, "
        f"{mib(before, 'dndask', 'idle')} MiB idle and {mib(before, 'dndask', 'after')} MiB "
        f"after the sum before, {mib(now, 'dndask', 'idle')} MiB and "
        f"{mib(now, 'dndask', 'after')} MiB now; a plain Dask worker on a LocalCluster with "
        f"the same options holds {mib(now, 'dask', 'idle')} MiB and "
        f"{mib(now, 'dask', 'after')} MiB."
    )


def section(
    result: dict,
    before: dict | None = None,
    before_label: str = "before",
    earlier: Sequence[tuple[str, dict]] = (),
) -> str:
    """The "## Weight" section of docs/performance.md.

    ``before``: an earlier run shown above (the torch note compares it with
    ``result``); ``earlier``: ``(label, run)`` pairs of older runs shown above that.
    """
    runs = [*earlier, *([(before_label, before)] if before else []), ("now", result)]
    n = result["workers"]
    lines = [
        "## Weight",
        "",
        f"Measured by `python -m bench.weight` on this machine ({os.cpu_count()} cores shared "
        "with other jobs, so import times are inflated and vary between runs; the load "
        "average at the start and end of each run is given). Import time: `import ...` in a "
        f"fresh interpreter, best (median) of {result['repeats']} interpreters. Worker "
        f"memory: mean resident set size of the {n} worker processes of a fresh loopback "
        "cluster, idle and after `(ht.arange(10**6, split=0) + 1).sum()` for dndask, "
        f"`(da.arange(10**6, chunks={-(-N // n)}) + 1).sum()` for plain Dask on a "
        "`LocalCluster` with the same options (one thread per worker, 127.0.0.1), each "
        "cluster from its own driver process. Not regenerated by `make bench`; "
        "`python -m bench.weight --out` rewrites this section.",
        "",
        *([_in_short(before, before_label, result), ""] if before else []),
        "| run | load | `import dndask` s | torch loaded | `import dask.array, distributed` s "
        "| `import torch` s | dndask worker MiB: idle · after the sum | torch on dndask "
        "workers | plain Dask worker MiB: idle · after the sum |",
        "| --- | --- | ---: | --- | ---: | ---: | ---: | --- | ---: |",
    ]
    for label, r in runs:
        t = {name: f"{v['best']:.2f} ({v['median']:.2f})" for name, v in r["imports"].items()}
        w = {
            k: f"{r[k]['idle']['mean_mib']:.0f} · {r[k]['after']['mean_mib']:.0f}"
            for k in ("dndask", "dask")
        }
        after = r["dndask"]["after"]
        cells = [
            f"{label}, {r['date']}",
            _load(r),
            t["dndask"],
            "yes" if r["imports"]["dndask"]["torch"] else "no",
            t["dask"],
            t["torch"],
            w["dndask"],
            _torch_cell(after["torch_workers"], after["workers"]),
            w["dask"],
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for label, r in runs:
        extra_s = r["imports"]["dndask"]["best"] - r["imports"]["dask"]["best"]
        extra_mib = r["dndask"]["after"]["mean_mib"] - r["dask"]["after"]["mean_mib"]
        lines.append(
            f"- {label}: `import dndask` takes {extra_s:+.2f} s against plain Dask's imports "
            f"(best of each); a dndask worker holds {extra_mib:+.0f} MiB against a plain Dask "
            "worker after the same sum."
        )
    # torch's share: the last run whose workers held torch against the run after it
    loaded = [i for i, (_, r) in enumerate(runs[:-1]) if r["dndask"]["after"]["torch_workers"]]
    if loaded:
        with_torch, without = (runs[i][1]["dndask"]["after"] for i in (loaded[-1], loaded[-1] + 1))
        torch_mib = with_torch["mean_mib"] - without["mean_mib"]
        lines.append(
            f"- A worker now loads torch (about {torch_mib:.0f} MiB, the difference between "
            "the runs) with its first task that needs it: `map_local`, TSQR `qr`, `histc`, "
            "the square-matrix functions of `ht.linalg`, a `per_rank` function that uses torch."
        )
    for label, r in runs:
        idle_mib = r["dndask"]["idle"]["mean_mib"] - r["dask"]["idle"]["mean_mib"]
        lines.append(
            f"- {label}: an idle dndask worker holds {round(idle_mib):+d} MiB against an idle "
            "plain Dask worker."
        )
    lines += [
        "",
        "Until 5817b81 importing dndask set Dask's `array_optimize` option to a dndask "
        "function, and a nanny hands the driver's Dask config to the workers it starts, so "
        "every worker imported dndask (numpy, dask.array, distributed; not torch) at startup "
        "to read it. Since then dndask installs the option with the first DNDarray, after "
        "`ht.init` has started the workers, so an idle worker holds what a plain Dask worker "
        "holds. Plain Dask workers import dask.array with their first task.",
    ]
    return "\n".join(lines) + "\n"


def write(doc: Path, text: str) -> None:
    """Replace the "## Weight" section of ``doc``, or insert it before "## Reading the numbers"."""
    page = doc.read_text()
    start = page.find("\n## Weight\n")
    if start >= 0:
        end = page.find("\n## ", start + 1)
        end = len(page) if end < 0 else end
        page = page[: start + 1] + text + page[end:]
    else:
        anchor = page.find("\n## Reading the numbers")
        anchor = len(page) if anchor < 0 else anchor
        page = page[: anchor + 1] + text + "\n" + page[anchor + 1 :]
    doc.write_text(page)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(
        prog="python -m bench.weight", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--repeats", type=int, default=5, help="fresh interpreters per import (5)")
    parser.add_argument("--workers", type=int, default=4, help="worker processes (4)")
    parser.add_argument("--json", type=Path, help="write the measured numbers here")
    parser.add_argument(
        "--before",
        type=Path,
        action="append",
        default=[],
        help="a --json file of an earlier run to show beside (repeat for more, oldest first)",
    )
    parser.add_argument(
        "--before-label",
        action="append",
        default=[],
        help="the row label of each --before run, in the same order ('before' if missing)",
    )
    parser.add_argument(
        "--from-json", type=Path, help="measure nothing: show this --json file's run as now"
    )
    parser.add_argument("--out", action="store_true", help="rewrite the Weight section of the docs")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    if args.from_json:
        result = json.loads(args.from_json.read_text())
    else:
        result = measure(args.repeats, args.workers)
    labels = args.before_label + ["before"] * (len(args.before) - len(args.before_label))
    pairs = zip(labels, args.before, strict=False)
    runs = [(label, json.loads(path.read_text())) for label, path in pairs]
    if runs:
        *earlier, (before_label, before) = runs
        text = section(result, before, before_label, earlier)
    else:
        text = section(result)
    print(text)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    if args.out:
        write(DOC, text)
    return result


if __name__ == "__main__":
    main()
