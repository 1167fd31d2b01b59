"""``python -m bench``: dndask, plain dask.array and Heat side by side, one table.

Examples::

    .venv/bin/python -m bench                  # every case, 128 MiB (+1024 for resplit_), P=4
    .venv/bin/python -m bench --quick          # a smoke run: tiny sizes, 2 repeats
    .venv/bin/python -m bench --out            # also write docs/performance.md and the plot
    .venv/bin/python -m bench --systems dndask,dask --cases resplit01 --sizes 64
    .venv/bin/python -m bench --latency        # only the per-operation cost (bench.latency)
    .venv/bin/python -m bench --group algorithms --repeats 3   # issues 27/28: cdist, k-means, ...

The first size is used for every case; resplit_ 0 -> 1 runs at every size
(and, with ``--out``, also at the plot's sizes). The algorithms group runs each case
at its own size unless ``--sizes`` is given, and ``--out`` then replaces only its
section of docs/performance.md. Heat is installed into
``bench/.heat-venv`` on first use (about 3 GB, mostly torch), and Heat 1.9.0, the newest
release (Python >= 3.12), into ``bench/.heat19-venv`` (``--systems`` picks: heat, heat19).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from . import floor, heat_venv, latency, report, scaling, stage_floor, workloads

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "docs" / "performance.md"
PNG_NAME = "performance-resplit.png"
QUICK_SIZES = (4.0, 16.0)
QUICK_SCALE = (4, 64, 256)
QUICK_ALGORITHM_SIZES = (1.0,)


def csv(kind):
    """An argparse type: a comma-separated list of ``kind``."""

    def parse(text: str) -> list:
        return [kind(item) for item in text.split(",") if item.strip()]

    return parse


def parse_args(argv=None) -> argparse.Namespace:
    """The command line; ``--quick`` fills in small sizes and few repeats."""
    p = argparse.ArgumentParser(
        prog="python -m bench",
        description="dndask, plain dask.array and Heat side by side: one command, one table.",
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--sizes",
        type=csv(float),
        default=None,
        help="MiB: the first for every case, all for resplit_ 0 -> 1 (default 128,1024)",
    )
    p.add_argument("--ranks", type=int, default=4, help="workers = MPI ranks (default 4)")
    p.add_argument("--repeats", type=int, default=None, help="timed repeats (default 7)")
    p.add_argument(
        "--systems",
        type=csv(str),
        default=list(report.SYSTEMS),
        help=f"comma-separated (default {','.join(report.SYSTEMS)})",
    )
    p.add_argument(
        "--group",
        choices=list(workloads.GROUPS),
        default="core",
        help="the group of cases: core (issue 6, default) or algorithms (issues 27 and 28: "
        + ",".join(workloads.ALGORITHM_CASES)
        + ")",
    )
    p.add_argument(
        "--cases",
        type=csv(str),
        default=None,
        help=f"comma-separated, of the group (default all; core: {','.join(workloads.CASES)})",
    )
    p.add_argument("--quick", action="store_true", help="tiny sizes, 2 repeats: a smoke run")
    p.add_argument(
        "--latency",
        action="store_true",
        help=f"only the per-operation latency cases of bench.latency ({latency.REPEATS} repeats)",
    )
    p.add_argument(
        "--out",
        nargs="?",
        const=DEFAULT_OUT,
        type=Path,
        default=None,
        help=f"write the markdown (default {DEFAULT_OUT.relative_to(ROOT)}) and {PNG_NAME}",
    )
    p.add_argument(
        "--plot-sizes",
        type=csv(float),
        default=[32.0, 128.0, 512.0, 1024.0],
        help="MiB of resplit_ 0 -> 1 added for the plot with --out (default 32,128,512,1024)",
    )
    p.add_argument("--scale-ranks", type=csv(int), default=None, help="default 4,...,4096")
    p.add_argument("--no-scale", action="store_true", help="skip the graph-size simulation")
    p.add_argument("--heat-venv", type=Path, default=None, help="default bench/.heat-venv")
    p.add_argument(
        "--heat19-venv", type=Path, default=None, help="Heat 1.9's (default bench/.heat19-venv)"
    )
    args = p.parse_args(argv)
    return _fill_defaults(p, args)


def _fill_defaults(parser: argparse.ArgumentParser, args: argparse.Namespace):
    quick = args.quick
    group = workloads.GROUPS[args.group]
    args.cases = args.cases or list(group)
    args.sizes_given = args.sizes is not None
    if args.group == "algorithms" and quick and not args.sizes_given:
        args.sizes, args.sizes_given = list(QUICK_ALGORITHM_SIZES), True
    args.sizes = args.sizes or list(QUICK_SIZES if quick else (128.0, 1024.0))
    args.repeats = args.repeats or (2 if quick else latency.REPEATS if args.latency else 7)
    args.scale_ranks = args.scale_ranks or list(QUICK_SCALE if quick else scaling.RANKS)
    if quick:
        args.plot_sizes = list(args.sizes)
    for name, values, known in (
        ("--systems", args.systems, report.SYSTEMS),
        ("--cases", args.cases, group),
    ):
        unknown = [v for v in values if v not in known]
        if unknown:
            parser.error(f"{name}: unknown {unknown}; choose from {', '.join(known)}")
    if args.ranks < 1 or args.repeats < 1 or min(args.sizes) <= 0:
        parser.error("--ranks, --repeats and --sizes must be positive")
    return args


def plan(args: argparse.Namespace) -> list[workloads.Workload]:
    """Every workload of the run: each case at the first size, resplit_ 0 -> 1 at all.

    The algorithms group: each case at its own size (:attr:`workloads.Case.default_mib`)
    unless ``--sizes`` was given.
    """
    base = args.sizes[0]
    if args.group == "algorithms":
        cases = [workloads.ALGORITHM_CASES[key] for key in args.cases]
        return [
            workloads.Workload(c, base if args.sizes_given else c.default_mib, args.ranks)
            for c in cases
        ]
    resplit_sizes = set(args.sizes) | (set(args.plot_sizes) if args.out else set())
    out = []
    for key in args.cases:
        sizes = sorted(resplit_sizes) if key == "resplit01" else [base]
        out.extend(workloads.Workload.of(key, mib, args.ranks) for mib in sizes)
    return out


def log(message: str) -> None:
    """Progress on stderr (stdout gets only the tables)."""
    print(message, file=sys.stderr, flush=True)


def elapsed(t0: float) -> str:
    return f"{time.perf_counter() - t0:.0f} s"


def measure_dask_sides(client, comm, names: list[str], plan_: list, repeats: int) -> dict:
    """Results of the sides ``names`` (dndask and/or dask) on a running cluster."""
    from . import systems

    sides = [systems.SIDES[name](comm) for name in names]
    results: dict = {}
    for i, w in enumerate(plan_, 1):
        t0 = time.perf_counter()
        measured = systems.measure(client, sides, w, repeats)
        results[(w.case.key, w.mib)] = {r.system: r for r in measured}
        done = ", ".join(f"{r.system} {r.seconds:.3f} s" for r in measured)
        load = os.getloadavg()[0]
        log(
            f"[{i}/{len(plan_)}] {w.case.key} {w.mib:g} MiB: {done} "
            f"({elapsed(t0)}, load {load:.1f})"
        )
    return results


def run_dask_sides(args, plan_: list) -> tuple[dict, dict, dict]:
    """dndask and/or dask on a fresh loopback cluster.

    Returns the results, the graph-build overhead and the scheduler's floor
    (:mod:`bench.stage_floor`, measured on the same cluster after the cases).
    """
    from . import systems

    names = [s for s in ("dndask", "dask") if s in args.systems]
    if not names:
        return {}, {}, {}
    client, comm = systems.start_cluster(args.ranks)
    try:
        results = measure_dask_sides(client, comm, names, plan_, args.repeats)
        overhead = {}
        if len(names) == 2 and "elementwise" in args.cases:
            w = workloads.Workload.of("elementwise", 1, args.ranks)
            overhead = systems.graph_overhead(comm, w)
        stages = stage_floor.measure(client, repeats=max(args.repeats, 5))
    finally:
        import dndask

        dndask.shutdown()
    return results, overhead, stages


def run_heat(
    venv: Path | None, plan_: list, repeats: int, system: str = "heat"
) -> tuple[dict, dict]:
    """One Heat release's results under MPI and its versions (nothing without ``venv``)."""
    from .systems import Result, Sample

    results: dict = {}
    versions: dict = {}
    if venv is None:
        return results, versions
    for i, w in enumerate(plan_, 1):
        t0 = time.perf_counter()
        try:
            record = heat_venv.run_case(venv, w, repeats)
        except Exception as exc:  # one failing case must not lose the others
            log(f"[{system} {i}/{len(plan_)}] {w.case.key} {w.mib:g} MiB FAILED: {exc}")
            continue
        samples = [
            Sample(t, p, w.heat_bytes())
            for t, p in zip(record["times"], record["peaks"], strict=True)
        ]
        res = Result(system, w, samples, moved_label="by construction")
        results[(w.case.key, w.mib)] = {system: res}
        versions = {k: record[k] for k in ("heat", "torch", "mpi4py", "mpi") if k in record}
        where = f"[{system} {i}/{len(plan_)}] {w.case.key} {w.mib:g} MiB"
        load = os.getloadavg()[0]
        log(f"{where}: {res.seconds:.3f} s ({elapsed(t0)}, load {load:.1f})")
    return results, versions


def merge(*parts: dict) -> dict:
    """Per-workload dicts of results from several runs, merged by system."""
    out: dict = {}
    for part in parts:
        for key, by_system in part.items():
            out.setdefault(key, {}).update(by_system)
    return out


def write_outputs(rep: report.Report, out: Path) -> None:
    """``out`` (markdown), the plot next to it, and every sample as JSON (``out`` + ``.json``).

    The algorithms group replaces only its own section of ``out`` (its samples go to
    ``out``'s name + ``-algorithms.json``); the core group replaces its own sections and
    keeps every other one (hand-written notes, the algorithms section) where it was.
    """
    old = out.read_text() if out.exists() else ""
    if rep.group == "algorithms":
        out.write_text(report.splice_algorithms(old, report.algorithms_section(rep)))
        raw = out.with_name(out.stem + "-algorithms.json")
        raw.write_text(json.dumps(report.samples_record(rep), indent=1) + "\n")
        log(f"wrote the algorithms section of {out} and {raw.name}")
        return
    png = out.parent / PNG_NAME
    drawn = report.plot_resplit(rep.results, png, rep.bandwidth)
    out.write_text(report.merge_regenerated(report.document(rep, PNG_NAME if drawn else None), old))
    raw = out.with_suffix(".json")
    raw.write_text(json.dumps(report.samples_record(rep), indent=1) + "\n")
    log(f"wrote {out}, {raw.name}" + (f" and {png.name}" if drawn else ""))


def main(argv=None) -> int:
    os.environ.setdefault("DNDASK_PROGRESS", "off")
    args = parse_args(argv)
    if args.latency:
        return latency.main(["--ranks", str(args.ranks), "--repeats", str(args.repeats)])
    plan_ = plan(args)
    given = {"heat": args.heat_venv, "heat19": args.heat19_venv}
    venvs = {  # installed and checked before anything else runs
        system: heat_venv.ensure_heat(given[system], log=log, system=system)
        for system in heat_venv.RELEASES
        if system in args.systems
    }
    load = os.getloadavg()
    bandwidth = floor.measure(64 if args.quick else 256)
    dask_results, overhead, stages = run_dask_sides(args, plan_)
    heat_results, heat_versions = {}, {}
    for system, venv in venvs.items():
        results, versions = run_heat(venv, plan_, args.repeats, system)
        heat_results = merge(heat_results, results)
        heat_versions[system] = versions
    no_scale = args.no_scale or args.group != "core"
    points = [] if no_scale else scaling.graph_scaling(args.scale_ranks)
    rep = report.Report(
        args=" ".join(sys.argv[1:] if argv is None else argv),
        ranks=args.ranks,
        repeats=args.repeats,
        base_mib=args.sizes[0],
        results=merge(dask_results, heat_results),
        bandwidth=bandwidth,
        points=points,
        overhead=overhead,
        stages=stages,
        heat_versions=heat_versions,
        quick=args.quick,
        group=args.group,
        load=(*load, *os.getloadavg()),
    )
    print(report.console(rep), flush=True)
    if args.out:
        write_outputs(rep, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
