"""Tables, ``docs/performance.md`` and the resplit plot, from the measured results.

Everything here is pure formatting except :func:`machine`, :func:`versions`
(which read the machine and the installed packages) and :func:`plot_resplit`
(which draws with matplotlib's Agg backend).
"""

from __future__ import annotations

import datetime
import math
import os
import platform
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from . import floor, scaling, stage_floor, workloads
from .systems import Result

MIB = 1 << 20
SYSTEMS = ("dndask", "dask", "heat", "heat19")
TITLES = {"dndask": "dndask", "dask": "dask", "heat": "Heat", "heat19": "Heat 1.9"}
DASH = "—"

Results = Mapping[tuple[str, float], Mapping[str, Result]]
HEAT_NOTE = (
    "† Heat: bytes its MPI exchange moves by construction (from the lshape maps), not measured."
)


# ---------------------------------------------------------------------------------------------
# Numbers


def fmt_seconds(x: float | None) -> str:
    """Seconds with three significant decimals, or a dash."""
    if x is None or math.isnan(x):
        return DASH
    return f"{x:.3f}" if x >= 0.01 else f"{x * 1e3:.2f} ms"


def fmt_ratio(x: float | None) -> str:
    """A ratio with two decimals, or a dash."""
    if x is None or math.isnan(x) or math.isinf(x):
        return DASH
    return f"{x:.2f}" if x < 10 else f"{x:.1f}" if x < 100 else f"{x:.0f}"


def fmt_mib(nbytes: float | None) -> str:
    """Bytes as MiB with one decimal, or a dash."""
    return DASH if nbytes is None or math.isnan(nbytes) else f"{nbytes / MIB:.1f}"


def fmt_size(mib: float) -> str:
    """A size in MiB without a needless ``.0``."""
    return f"{mib:g}"


def ratio(a: float | None, b: float | None) -> float:
    """``a / b``, NaN when either is missing or ``b`` is zero."""
    if a is None or b is None or not b:
        return math.nan
    return a / b


def joined(values: Iterable[str]) -> str:
    return " · ".join(values)


# ---------------------------------------------------------------------------------------------
# Rows


@dataclass(frozen=True)
class Row:
    """One workload across the systems (a ``None`` value: the system did not run)."""

    workload: workloads.Workload
    seconds: dict[str, float | None]
    peak: dict[str, float | None]
    moved: dict[str, float | None]

    best: dict[str, float | None] = field(default_factory=dict)

    @classmethod
    def of(cls, w: workloads.Workload, by_system: Mapping[str, Result]) -> Row:
        def pick(attr):
            return {s: getattr(by_system[s], attr) if s in by_system else None for s in SYSTEMS}

        return cls(w, pick("seconds"), pick("peak"), pick("moved"), pick("best"))

    def ratio(self, a: str, b: str, best: bool = False) -> float:
        """``a``'s median time over ``b``'s (``best``: their fastest repeats instead)."""
        times = self.best if best else self.seconds
        return ratio(times.get(a), times.get(b))

    def ratios(self, a: str, b: str) -> str:
        """``median ratio · best ratio``."""
        return f"{fmt_ratio(self.ratio(a, b))} · {fmt_ratio(self.ratio(a, b, best=True))}"


def rows_of(results: Results) -> list[Row]:
    """One row per workload, in case order, then size order."""
    order = [key for group in workloads.GROUPS.values() for key in group]
    keys = sorted(results, key=lambda k: (order.index(k[0]), k[1]))
    rows = []
    for key in keys:
        by_system = results[key]
        w = next(iter(by_system.values())).workload
        rows.append(Row.of(w, by_system))
    return rows


# ---------------------------------------------------------------------------------------------
# Tables


def markdown_table(header: list[str], body: list[list[str]], align: str) -> str:
    """A markdown table; ``align`` has one ``l`` or ``r`` per column."""
    rule = ["---" if a == "l" else "---:" for a in align]
    lines = [header, rule, *body]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


MAIN_HEADER = [
    "case",
    "MiB",
    "dndask s",
    "dask s",
    "Heat s",
    "Heat 1.9 s",
    "dndask/Heat: median · best",
    "dndask/Heat 1.9: median · best",
    "dndask/dask: median · best",
    "peak MiB per worker: dndask · dask · Heat · Heat 1.9",
    "MiB moved: dndask · dask · Heat · Heat 1.9†",
    "must move MiB",
]


def main_row(row: Row) -> list[str]:
    w = row.workload
    return [
        w.case.label,
        fmt_size(w.mib),
        *(fmt_seconds(row.seconds[s]) for s in SYSTEMS),
        row.ratios("dndask", "heat"),
        row.ratios("dndask", "heat19"),
        row.ratios("dndask", "dask"),
        joined(fmt_mib(row.peak[s]) for s in SYSTEMS),
        joined(fmt_mib(row.moved[s]) for s in SYSTEMS),
        fmt_mib(w.minimum_bytes()),
    ]


def main_table(rows: list[Row]) -> str:
    """The side-by-side table: medians, ratios, peak memory, bytes moved."""
    return markdown_table(MAIN_HEADER, [main_row(r) for r in rows], "l" + "r" * 11)


def floor_table(rows: list[Row], bw: floor.Bandwidth) -> str:
    """Each data-movement case's floor and every system's distance from it."""
    header = ["case", "MiB", "must move MiB", "copy floor s", "TCP floor s"]
    header += [f"{TITLES[s]} ÷ copy floor" for s in SYSTEMS] + ["dndask ÷ TCP floor"]
    body = []
    for row in rows:
        w = row.workload
        if not w.case.movement:
            continue
        copy_floor = floor.floor_seconds(w.minimum_bytes(), bw.memcpy)
        tcp_floor = floor.floor_seconds(w.minimum_bytes(), bw.loopback)
        body.append(
            [
                w.case.label,
                fmt_size(w.mib),
                fmt_mib(w.minimum_bytes()),
                fmt_seconds(copy_floor),
                fmt_seconds(tcp_floor),
                *(
                    fmt_ratio(floor.distance(row.seconds[s] or math.nan, copy_floor))
                    for s in SYSTEMS
                ),
                fmt_ratio(floor.distance(row.seconds["dndask"] or math.nan, tcp_floor)),
            ]
        )
    return markdown_table(header, body, "l" + "r" * (len(header) - 1))


def scaling_table(points: list[scaling.GraphPoint]) -> str:
    """Tasks and build seconds of redistribute_ and resplit_ against Dask's p2p rechunk."""
    header = [
        "ranks",
        "redistribute_ tasks",
        "per rank",
        "s",
        "resplit_ shm/MPI tasks",
        "s",
        "resplit_ off one host",
        "s",
        "resplit_ method='tasks'",
        "s",
        "dask p2p rechunk tasks",
        "s",
        "resplit_ / p2p",
    ]
    body = [
        [
            str(p.ranks),
            str(p.redistribute),
            f"{p.redistribute / p.ranks:.2f}",
            fmt_seconds(p.redistribute_s),
            DASH if p.resplit_shm is None else str(p.resplit_shm),
            fmt_seconds(p.resplit_shm_s),
            str(p.resplit),
            fmt_seconds(p.resplit_s),
            DASH if p.resplit_tasks is None else str(p.resplit_tasks),
            fmt_seconds(p.resplit_tasks_s),
            str(p.p2p),
            fmt_seconds(p.p2p_s),
            fmt_ratio(p.resplit / p.p2p),
        ]
        for p in points
    ]
    return markdown_table(header, body, "r" * len(header))


# ---------------------------------------------------------------------------------------------
# Targets


@dataclass(frozen=True)
class Target:
    """One goal (issues 6 and 26) and whether this run met it."""

    goal: str
    value: str
    met: bool | None  # None: not measured in this run


def _row(rows: list[Row], key: str, mib: float | None = None) -> Row | None:
    for r in rows:
        if r.workload.case.key == key and (mib is None or r.workload.mib == mib):
            return r
    return None


def _check(value: float, limit: float) -> bool | None:
    return None if math.isnan(value) else value <= limit


HEATS = {"heat": "Heat", "heat19": "Heat 1.9"}
TIGHT = 0.6  # dndask/Heat for the relayouts (issue 26)


def _every_case(rows: list[Row], heat: str) -> Target:
    """dndask/``heat`` ≤ 1.0 (median) in every case this run measured against it."""
    measured = [(r.ratio("dndask", heat), r) for r in rows]
    measured = [(x, r) for x, r in measured if not math.isnan(x)]
    goal = f"dndask/{HEATS[heat]} ≤ 1.0 (median) in every case"
    if not measured:
        return Target(goal, DASH, None)
    worst, row = max(measured, key=lambda m: m[0])
    missed = sum(1 for x, _ in measured if x > 1.0)
    where = f"{row.workload.case.label}, {fmt_size(row.workload.mib)} MiB"
    return Target(
        goal,
        f"worst {fmt_ratio(worst)} ({where}); {missed} of {len(measured)} above 1",
        missed == 0,
    )


def targets(rows: list[Row], bw: floor.Bandwidth, base_mib: float) -> list[Target]:
    """Issue 26's goals: dndask/Heat in every case and for the relayouts, the copy floor and
    peak memory of resplit_ at 1 GiB, the bytes of redistribute_; and issue 6's dndask/dask."""
    out = [_every_case(rows, heat) for heat in HEATS]
    for key in ("resplit01", "redistribute"):
        for mib in sorted({base_mib, 1024.0}):
            row = _row(rows, key, mib)
            if row is None and mib != base_mib:
                continue
            value = row.ratio("dndask", "heat") if row else math.nan
            best = row.ratio("dndask", "heat", best=True) if row else math.nan
            label = workloads.CASES[key].label
            out.append(
                Target(
                    f"dndask/Heat ≤ {TIGHT}, {label}, {fmt_size(mib)} MiB (median · best)",
                    f"{fmt_ratio(value)} · {fmt_ratio(best)}",
                    _check(value, TIGHT),
                )
            )
    row = _row(rows, "resplit01", 1024.0)
    if row is not None:
        dndask, heat = row.peak.get("dndask"), row.peak.get("heat")
        chunk = row.workload.nbytes / row.workload.ranks
        met = None if dndask is None or heat is None else dndask <= heat + chunk
        out.append(
            Target(
                "resplit_ 0 → 1, 1024 MiB: peak per rank ≤ Heat's + one chunk",
                f"{fmt_mib(dndask)} against {fmt_mib(heat)} + {fmt_mib(chunk)} MiB",
                met,
            )
        )
    for row in (r for r in rows if r.workload.case.key == "resplit01"):
        dist = floor.distance(
            row.seconds["dndask"] or math.nan,
            floor.floor_seconds(row.workload.minimum_bytes(), bw.memcpy),
        )
        out.append(
            Target(
                f"resplit_ 0 → 1 within 3x the copy floor, {fmt_size(row.workload.mib)} MiB",
                fmt_ratio(dist),
                _check(dist, 3.0),
            )
        )
    row = _row(rows, "redistribute", base_mib)
    if row and row.moved["dndask"] is not None:
        moved, minimum = row.moved["dndask"], row.workload.minimum_bytes()
        out.append(
            Target(
                "redistribute_ moves the theoretical minimum",
                f"{fmt_mib(moved)} of {fmt_mib(minimum)} MiB",
                abs(moved - minimum) <= 0.001 * minimum,
            )
        )
    medians = [r.ratio("dndask", "dask") for r in rows]
    medians = [x for x in medians if not math.isnan(x)]
    bests = [r.ratio("dndask", "dask", best=True) for r in rows]
    bests = [x for x in bests if not math.isnan(x)]
    worst = max(medians) if medians else math.nan
    worst_best = max(bests) if bests else math.nan
    out.append(
        Target(
            "dndask/dask ≤ 1.05 in every case, issue 6 (worst median · worst best-of-N)",
            f"{fmt_ratio(worst)} · {fmt_ratio(worst_best)}",
            _check(worst, 1.05),
        )
    )
    return out


def targets_table(items: list[Target]) -> str:
    mark = {True: "met", False: "**missed**", None: "not run"}
    return markdown_table(
        ["goal", "this run", ""], [[t.goal, t.value, mark[t.met]] for t in items], "lrl"
    )


# ---------------------------------------------------------------------------------------------
# Machine, versions, the document


def machine() -> dict[str, str]:
    """Cores, memory and CPU model of this machine (Linux ``/proc``)."""
    info = {"cores": str(os.cpu_count()), "ram": "?", "cpu": platform.processor() or "?"}
    try:
        with open("/proc/meminfo") as f:
            kib = int(next(line for line in f if line.startswith("MemTotal")).split()[1])
        info["ram"] = f"{kib / (1 << 20):.0f} GiB"
        with open("/proc/cpuinfo") as f:
            info["cpu"] = (
                next(line for line in f if line.startswith("model name")).split(":", 1)[1].strip()
            )
    except (OSError, StopIteration, ValueError):
        pass
    return info


def versions() -> dict[str, str]:
    """Versions of python and the packages on the dndask/dask side."""
    import dask
    import distributed
    import numpy
    import torch

    import dndask

    return {
        "python": platform.python_version(),
        "dndask": dndask.__version__,
        "dask": dask.__version__,
        "distributed": distributed.__version__,
        "numpy": numpy.__version__,
        "torch": torch.__version__,
    }


@dataclass
class Report:
    """Everything one run produced."""

    args: str
    ranks: int
    repeats: int
    base_mib: float
    results: Results
    bandwidth: floor.Bandwidth
    points: list[scaling.GraphPoint]
    overhead: dict[str, float]
    heat_versions: dict[str, dict[str, str]]  # per Heat release (system): its versions
    quick: bool = False
    date: str = ""
    group: str = "core"
    load: tuple[float, ...] = ()  # load averages (1, 5, 15 min) at the start, then at the end
    stages: dict[str, list[float]] = field(default_factory=dict)  # bench.stage_floor's seconds

    def __post_init__(self):
        self.date = self.date or datetime.date.today().isoformat()

    @property
    def rows(self) -> list[Row]:
        return rows_of(self.results)


def samples_record(report: Report) -> dict:
    """Every repeat of every system and workload, for JSON (the tables are medians of these)."""
    runs = []
    for (key, mib), by_system in sorted(report.results.items()):
        for system, res in sorted(by_system.items()):
            runs.append(
                {
                    "case": key,
                    "mib": mib,
                    "system": system,
                    "seconds": [s.seconds for s in res.samples],
                    "peak_bytes": [s.peak for s in res.samples],
                    "moved_bytes": [s.moved for s in res.samples],
                }
            )
    bw = report.bandwidth
    return {
        "date": report.date,
        "args": report.args,
        "ranks": report.ranks,
        "bandwidth": {"memcpy": bw.memcpy, "loopback": bw.loopback, "mib": bw.mib},
        "runs": runs,
    }


def console(report: Report) -> str:
    """What ``python -m bench`` prints: the tables without the prose."""
    if report.group == "algorithms":
        return algorithms_console(report)
    parts = [
        f"# {report.ranks} workers/ranks, median of {report.repeats}, "
        f"copy {report.bandwidth.memcpy / (1 << 30):.2f} GiB/s, "
        f"loopback TCP {report.bandwidth.loopback / (1 << 30):.2f} GiB/s",
        main_table(report.rows),
        HEAT_NOTE,
        floor_table(report.rows, report.bandwidth),
        targets_table(targets(report.rows, report.bandwidth, report.base_mib)),
    ]
    if report.overhead:
        parts.append(overhead_line(report.overhead))
    if report.stages:
        parts.append(stage_floor.table(report.stages, report.ranks))
    if report.points:
        parts.append(scaling_table(report.points))
        parts.append(scaling_verdict(report.points))
    return "\n\n".join(parts)


def overhead_line(overhead: Mapping[str, float]) -> str:
    return (
        f"Graph build of the elementwise chain (no execution): dndask {overhead['dndask']:.2f} ms, "
        f"dask {overhead['dask']:.2f} ms."
    )


def scaling_verdict(points: list[scaling.GraphPoint]) -> str:
    """Whether redistribute_ is linear and where resplit_ is larger than p2p."""
    per_rank = [p.redistribute / p.ranks for p in points]
    linear = "linear" if scaling.is_linear(points) else "**not linear**"
    worse = [f"{r} ({x:.1f}x)" for r, x in scaling.resplit_vs_p2p(points) if x > 1.0]
    resplit = (
        "resplit_ builds no more tasks than Dask's p2p rechunk at any rank count"
        if not worse
        else "resplit_ builds more tasks than Dask's p2p rechunk at " + ", ".join(worse) + " ranks"
    )
    shm = [p for p in points if p.resplit_shm is not None]
    bounded = all(p.resplit_shm <= 2 * p.ranks + 1 for p in shm)
    exchange = ""
    if shm:
        exchange = (
            " Over shared memory or MPI (the default on one host), resplit_ is "
            + ("at most" if bounded else "**more than**")
            + f" 2P + 1 tasks up to {shm[-1].ranks} ranks; building it took "
            f"{fmt_seconds(shm[-1].resplit_shm_s)} s there, against "
            f"{fmt_seconds(shm[-1].p2p_s)} s for Dask's p2p graph (its plan holds P² pieces)."
        )
    return (
        f"redistribute_ is {linear} in ranks ({min(per_rank):.2f}-{max(per_rank):.2f} tasks per "
        f"rank); off one host, {resplit}.{exchange}"
    )


def plot_resplit(results: Results, path: Path, bw: floor.Bandwidth) -> bool:
    """Time vs size of resplit_ 0 → 1 per system (log-log) with the copy floor; False if no data."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series: dict[str, list[tuple[float, float]]] = {s: [] for s in SYSTEMS}
    floors = []
    for (key, mib), by_system in sorted(results.items()):
        if key != "resplit01":
            continue
        for s, res in by_system.items():
            series[s].append((mib, res.seconds))
        w = next(iter(by_system.values())).workload
        floors.append((mib, floor.floor_seconds(w.minimum_bytes(), bw.memcpy)))
    if not any(series.values()):
        return False
    fig, ax = plt.subplots(figsize=(6, 4), dpi=120)
    for s, pts in series.items():
        if pts:
            ax.plot(*zip(*pts, strict=True), marker="o", label=TITLES[s])
    ax.plot(*zip(*floors, strict=True), linestyle="--", color="gray", label="copy floor")
    ax.set_xscale("log", base=2)
    sizes = sorted({mib for mib, _ in floors})
    ax.set_xticks(sizes, [fmt_size(m) for m in sizes])
    ax.minorticks_off()
    ax.set_yscale("log")
    ax.set_xlabel("array size (MiB, float32)")
    ax.set_ylabel("median seconds")
    ax.set_title("resplit_ 0 → 1")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def _environment_lines(report: Report) -> list[str]:
    m, v, h, bw = machine(), versions(), report.heat_versions, report.bandwidth

    def heat(system: str) -> str:
        got = h.get(system)
        return (
            ", ".join(f"{k} {' '.join(str(x).split())}" for k, x in got.items())
            if got
            else "not run"
        )

    return [
        f"- **Machine**: {m['cores']} cores ({m['cpu']}), {m['ram']} RAM; copy bandwidth "
        f"{bw.memcpy / (1 << 30):.2f} GiB/s (`np.copyto`, {bw.mib} MiB), loopback TCP "
        f"{bw.loopback / (1 << 30):.2f} GiB/s (one connection).",
        "- **dndask and dask**: " + ", ".join(f"{k} {x}" for k, x in v.items()) + ".",
        f"- **Heat 1.8** (its own venv, `bench/.heat-venv`): {heat('heat')}.",
        f"- **Heat 1.9**, the newest release (Python >= 3.12, `bench/.heat19-venv`): "
        f"{heat('heat19')}.",
        f"- **Setup**: {report.ranks} Dask workers (one thread each, 127.0.0.1) against "
        f"{report.ranks} MPI ranks (MPICH, one node); median of {report.repeats} repeats "
        "after one warm-up; float32 throughout.",
    ]


METHOD = """\
## How it is measured

- **Time**: dndask and dask are timed in the driver from building the operation until its
  result is in the workers' memory (`persist` and `wait`, or the reduction's value); their
  repeats alternate. Heat is timed with `MPI.Wtime()` between two barriers, maximum over
  ranks. Inputs are built before the clock starts; where a case starts from data, dask
  starts from dndask's very chunks (`to_dask()`), so placement is the same.
- **Peak memory per worker**: every Dask worker and every MPI rank resets the kernel's
  peak-RSS mark (`VmHWM`, via `/proc/self/clear_refs`) when the operation starts and reads
  it when it ends; the table gives the peak above the RSS at the start for the largest
  worker (median over repeats). It includes the output. Heat's ranks get the environment
  Dask's nanny gives its workers (`MALLOC_TRIM_THRESHOLD_`, one BLAS thread), so both run
  the same allocator settings.
- **Bytes moved**: for dndask and dask, the sum of what the workers fetched from each other
  (the entries their `transfer_incoming_log` gained). Heat's MPI traffic is not
  observable the same way, so its column (†) is what its exchange moves by construction,
  computed from the lshape maps: the same as the minimum, except `redistribute_`
  (Heat passes surplus rows from rank to rank, so some cross several ranks),
  `resplit_(None)` (an allgather: Heat replicates split=None arrays on every rank,
  (P-1)x the array), `matmul` (the split=None operand is already everywhere: 0) and
  TSQR (R is also broadcast to every rank). "Must move" is the minimum for the result
  dndask produces (chunk r on rank r); Dask places chunks freely and may move less.
- **Floor**: bytes that must move ÷ copy bandwidth; the TCP floor uses the loopback socket
  bandwidth instead (Dask workers talk over TCP; MPI ranks over shared memory).
- **Scale** (no execution): the graphs of `redistribute_` and `resplit_` built for many
  ranks from dndask's planners, against Dask's p2p rechunk to the same chunks; tasks
  counted are those the operation adds to the input's graph.
"""


def document(report: Report, png: str | None) -> str:
    """The whole of ``docs/performance.md``."""
    rows = report.rows
    parts = [
        "# Performance",
        f"Generated on {report.date} by `python -m bench {report.args}`"
        + (
            " — a **quick smoke run** (tiny sizes, few repeats): not representative"
            if report.quick
            else ""
        )
        + ". Regenerate with `make bench` (the full suite; roughly 15-30 minutes on a quiet "
        "machine) or `.venv/bin/python -m bench --help` for the options.",
        "\n".join(_environment_lines(report)),
        "## dndask, Dask and Heat side by side",
        main_table(rows),
        "Ratios below 1: dndask is faster. Each ratio is given for the median times and for the "
        "fastest repeats (best of N, the repeat least disturbed by the rest of the machine). "
        + HEAT_NOTE,
        "## Distance from the physical floor",
        floor_table(rows, report.bandwidth),
        "## Targets (issue 26)",
        targets_table(targets(rows, report.bandwidth, report.base_mib)),
    ]
    if report.stages:
        parts += ["## The scheduler's floor", stages_section(report)]
    if report.overhead:
        parts += ["## Operation layer overhead", _overhead_section(report)]
    if png:
        parts += ["## resplit_ 0 → 1 by size", f"![resplit_ 0 → 1: time vs size]({png})"]
    if report.points:
        parts += [
            "## Graph size at scale (built, not run)",
            scaling_table(report.points),
            scaling_verdict(report.points) + " Off one host, above "
            "64 ranks `resplit_` hands over to Dask's p2p rechunk (`DNDASK_P2P_THRESHOLD`), so "
            "the two coincide there; `method='tasks'` is shown up to 256 ranks.",
        ]
    parts += ["## Reading the numbers", reading(report)]
    parts.append(METHOD)
    return "\n\n".join(parts).rstrip() + "\n"


def reading(report: Report) -> str:
    """Why the ratios are what they are: the causes do not change from run to run."""
    bw = report.bandwidth
    tcp, copy = bw.loopback / (1 << 30), bw.memcpy / (1 << 30)
    return f"""\
- **Against Dask the graphs are the same kind of object on the same chunks**, so ratios near 1
  are the expectation where dndask builds the graph Dask would. On a two-core machine that
  runs four single-threaded workers, the scheduler and the driver, single repeats of one case
  vary a lot, so a median ratio between 0.8 and 1.25 can be noise; the best-of-N ratio is the
  steadier of the two, and `performance.json` has every repeat. dndask is clearly faster where
  it builds a different graph: the relayouts (`resplit_`, `redistribute_`: a post per rank
  writes each outgoing piece once into `/dev/shm` (into its worker's pool of reused
  segments where they fit, 64 MiB), a collect per rank maps or copies it once into its
  output, against Dask's rechunk, which sends several times the bytes that must move
  over loopback TCP at {tcp:.2f} GiB/s), the elementwise chain (one fused task per rank and the
  sum's partials) and TSQR (the per-rank QR runs through torch's LAPACK).
- **`redistribute_` against Dask**: Dask may put every output chunk wherever it likes, so it
  moves less than the minimum for dndask's contract that chunk `r` lives on rank `r`
  (MiB moved above). dndask moves exactly that minimum.
- **Against Heat, both exchange through shared memory**, but Heat's ranks do it in one MPI
  collective while dndask's relayout is three scheduled stages (post, barrier, collect), each
  waiting for Dask's scheduler and the small transfers between workers: "The scheduler's
  floor" below measures what that graph costs with tasks that do nothing. That fixed cost is
  why `resplit_` trails Heat most at small sizes, where it is most of the time. The copy
  floor ({copy:.2f} GiB/s, into memory already faulted in) is far below both systems: each
  piece lands in memory the process has not touched before (the output chunk, or a fresh
  tmpfs page for pieces too big for the pool, for dndask; a receive buffer for Heat), and
  on this virtual machine, which hands free memory back to its host, first touches are
  several times slower than a copy. `is_split` runs no task in dndask
  (the chunks are the per-rank results, already on their workers), while Heat exchanges the
  local shapes in a collective.
- **Where Heat does something else**: Heat's default `randn` draws each rank's chunk with
  `torch.randn`, so its values depend on the number of ranks; dndask's counter-based
  generator gives the same array for any layout and pays for it in hashing. Heat's
  `resplit_(None)` is an allgather (every rank gets a copy: (P-1)x the bytes) while dndask
  builds one chunk, so dndask wins there. Heat's `split=None` matmul operand is already on
  every rank, while dndask sends it from the worker holding it inside the timing.
- **Memory**: a relayout's output is the only copy dndask holds (a collect maps the segments'
  pages into it, or copies from the pool), so its peak per worker is Heat's; Dask's rechunk
  holds its intermediates as well. The pool of post segments (up to 64 MiB per worker,
  `DNDASK_SHM_POOL`) is standing memory, as MPI's shared-memory buffers are Heat's: it is
  in the baseline the peaks are measured from. So are the free buffers of the collects' output
  cache (up to 64 MiB per worker, `DNDASK_OUTPUT_CACHE`); an output made on one of them does
  not raise the resident set, so its bytes are added to the worker's peak."""


def stages_section(report: Report) -> str:
    """:mod:`bench.stage_floor`'s table and what it means for the smallest relayout."""
    text = (
        "Graphs of no-op tasks in the shapes of dndask's operations, one task per worker per "
        f"stage, run on the same {report.ranks} workers after the cases (`bench/stage_floor.py`; "
        f"median and best of {len(next(iter(report.stages.values())))}). Their time is what "
        "Dask's scheduler and workers take for the graph alone: no Dask graph of that shape "
        "runs faster here, whatever its tasks do.\n\n"
        + stage_floor.table(report.stages, report.ranks)
    )
    relayout = report.stages.get(stage_floor.RELAYOUT)
    rows = [r for r in report.rows if r.workload.case.key == "resplit01"]
    if relayout and rows:
        row = min(rows, key=lambda r: r.workload.mib)
        heat, dndask = row.seconds.get("heat"), row.seconds.get("dndask")
        floor_ms = min(relayout) * 1e3
        if heat is not None and dndask is not None:
            text += (
                f"\n\nA relayout over shared memory is the post, barrier, collect graph. At "
                f"{fmt_size(row.workload.mib)} MiB, Heat's `resplit_` 0 → 1 took "
                f"{heat * 1e3:.1f} ms (median) and dndask's {dndask * 1e3:.1f} ms, of which "
                f"the graph's best no-op time is {floor_ms:.1f} ms"
                + (
                    ": Heat finishes below the floor of the graph, so no Dask-scheduled "
                    "relayout of three stages can match it at this size."
                    if heat * 1e3 < floor_ms
                    else "."
                )
            )
    return text


def _overhead_section(report: Report) -> str:
    row = _row(report.rows, "elementwise")
    timing = ""
    if row is not None:
        timing = (
            f"On {fmt_size(row.workload.mib)} MiB (split 0) a chain of 10 elementwise operations "
            f"and a full sum takes {fmt_seconds(row.seconds['dndask'])} s in dndask and "
            f"{fmt_seconds(row.seconds['dask'])} s as the identical dask.array expression on the "
            f"same chunks: dndask/dask **{fmt_ratio(row.ratio('dndask', 'dask'))}** "
            "(target: at most 1.05). "
        )
    return timing + overhead_line(report.overhead)


# ---------------------------------------------------------------------------------------------
# The algorithms group (issues 27 and 28)

ALGORITHMS_HEADING = "## Algorithms: issues 27 and 28"
ALGORITHMS_BEGIN = "<!-- bench --group algorithms: generated from here -->"
ALGORITHMS_END = "<!-- bench --group algorithms: generated up to here -->"

# the core table's columns less "MiB" and "must move MiB", with the case's shape and size
ALGORITHMS_HEADER = ["case", "shape", "data MiB", *MAIN_HEADER[2:-1]]

# issue 27 and 28's goals: dndask/Heat at most this (fft: its distance from the copy floor)
ALGORITHM_GOALS = {
    "cdist": 1.0,
    "kmeans": 1.0,
    "moments": 1.0,
    "lasso": 1.5,
    "eigh": 1.0,
    "polar": 1.0,
    "rsvd": 1.0,
    "ipca": 1.0,
}
FFT_FLOOR_GOAL = 3.0


def shape_text(w: workloads.Workload) -> str:
    """The main matrix's shape (cdist: both operands; IncrementalPCA: per batch)."""
    text = f"{w.rows} x {w.cols}"
    if w.case.key == "cdist":
        return f"2 x ({text}) → {w.rows} x {w.rows}"
    if w.case.key == "ipca":
        return f"{workloads.IPCA_BATCHES} x ({text})"
    return text


def algorithms_row(row: Row) -> list[str]:
    w = row.workload
    return [
        w.case.label,
        shape_text(w),
        fmt_mib(w.data_bytes),
        *(fmt_seconds(row.seconds[s]) for s in SYSTEMS),
        row.ratios("dndask", "heat"),
        row.ratios("dndask", "heat19"),
        row.ratios("dndask", "dask"),
        joined(fmt_mib(row.peak[s]) for s in SYSTEMS),
        joined(fmt_mib(row.moved[s]) for s in SYSTEMS),
    ]


def algorithms_table(rows: list[Row]) -> str:
    """The side-by-side table of the algorithm cases."""
    return markdown_table(ALGORITHMS_HEADER, [algorithms_row(r) for r in rows], "ll" + "r" * 10)


def algorithm_targets(rows: list[Row], bw: floor.Bandwidth) -> list[Target]:
    """Issue 27/28's goals: dndask/Heat per case, fft's distance from the copy floor."""
    out = []
    for row in rows:
        w = row.workload
        key = w.case.key
        if key in ALGORITHM_GOALS:
            value = row.ratio("dndask", "heat")
            best = row.ratio("dndask", "heat", best=True)
            limit = ALGORITHM_GOALS[key]
            out.append(
                Target(
                    f"dndask/Heat ≤ {limit:g}, {w.case.label} (median · best)",
                    f"{fmt_ratio(value)} · {fmt_ratio(best)}",
                    _check(value, limit),
                )
            )
        elif key == "fft":
            dist = floor.distance(
                row.seconds["dndask"] or math.nan,
                floor.floor_seconds(w.minimum_bytes(), bw.memcpy),
            )
            out.append(
                Target(
                    f"{w.case.label} within {FFT_FLOOR_GOAL:g}x the copy floor of its "
                    f"{fmt_mib(w.minimum_bytes())} MiB",
                    fmt_ratio(dist),
                    _check(dist, FFT_FLOOR_GOAL),
                )
            )
    return out


def load_text(load: tuple[float, ...]) -> str:
    """``1/5/15-minute load averages at the start → at the end``."""
    if len(load) < 6:
        return "not recorded"
    start, end = load[:3], load[3:6]
    return " / ".join(f"{x:.1f}" for x in start) + " → " + " / ".join(f"{x:.1f}" for x in end)


def algorithms_console(report: Report) -> str:
    """The algorithms group's tables."""
    rows = report.rows
    return "\n\n".join(
        [
            f"# {report.ranks} workers/ranks, median of {report.repeats}, load average "
            f"(1/5/15 min) {load_text(report.load)}, copy "
            f"{report.bandwidth.memcpy / (1 << 30):.2f} GiB/s",
            algorithms_table(rows),
            ALGORITHMS_NOTE,
            floor_table(rows, report.bandwidth),
            targets_table(algorithm_targets(rows, report.bandwidth)),
        ]
    )


ALGORITHMS_NOTE = (
    "† Heat: bytes its exchange moves by construction where derived from the lshape maps "
    "(cdist: Y's blocks round the ring; fft: the two relayouts), a dash where not. "
    "Dask: a dash where it offers no counterpart (eigh, polar, Lasso's coordinate descent) "
    "or dask-ml is not installed."
)


def algorithms_section(report: Report) -> str:
    """The generated part of the algorithms section of ``docs/performance.md``."""
    return "\n\n".join(
        [
            ALGORITHMS_BEGIN,
            f"Generated on {report.date} by `python -m bench {report.args}`"
            + (" — a **quick smoke run**: not representative" if report.quick else "")
            + f". Load average (1/5/15 min) at the start → at the end: "
            f"{load_text(report.load)}.",
            "\n".join(_environment_lines(report)),
            algorithms_table(report.rows),
            ALGORITHMS_NOTE,
            floor_table(report.rows, report.bandwidth),
            targets_table(algorithm_targets(report.rows, report.bandwidth)),
            ALGORITHMS_END,
        ]
    )


def splice_algorithms(text: str, section: str) -> str:
    """``text`` with its generated algorithms part replaced by ``section`` (appended under
    :data:`ALGORITHMS_HEADING` where it has none); prose around it is kept."""
    if ALGORITHMS_BEGIN in text and ALGORITHMS_END in text:
        head, rest = text.split(ALGORITHMS_BEGIN, 1)
        tail = rest.split(ALGORITHMS_END, 1)[1]
        return head + section + tail
    return text.rstrip() + f"\n\n{ALGORITHMS_HEADING}\n\n{section}\n"


def _sections(text: str) -> tuple[str, list[tuple[str, str]]]:
    """``text``'s preamble and its ``## `` sections as (heading line, whole section) pairs."""
    parts = ("\n" + text).split("\n## ")
    preamble = parts[0][1:]
    return preamble, [(part.split("\n", 1)[0], "## " + part) for part in parts[1:]]


def merge_regenerated(document_text: str, old: str) -> str:
    """A regenerated core document with the old file's other sections kept in their places.

    Sections (``## `` headings) the new document has replace the old ones; the rest of the
    old file (hand-written sections, the algorithms section) stays where it was, and a new
    section the old file lacks goes after the generated section before it.
    """
    preamble, fresh = _sections(document_text)
    if not old.strip():
        return document_text
    generated = dict(fresh)
    order = [heading for heading, _ in fresh]
    kept = _sections(old)[1]
    in_old = {heading for heading, _ in kept}
    out = [preamble.rstrip("\n") + "\n"]
    # new sections before the first old one they share, then each shared one with the
    # new sections that follow it, the old file's other sections where they were
    lead = next((i for i, h in enumerate(order) if h in in_old), len(order))
    out += [generated[h] for h in order[:lead]]
    for heading, section in kept:
        if heading not in generated:
            out.append(section)
            continue
        out.append(generated[heading])
        for following in order[order.index(heading) + 1 :]:
            if following in in_old:
                break
            out.append(generated[following])
    return "\n".join(part.rstrip("\n") + "\n" for part in out)
