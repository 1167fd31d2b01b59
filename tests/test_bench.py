"""The benchmark suite (``python -m bench``): its pure parts, and one tiny case end to end.

Nothing here needs Heat's virtual environment or the network: the Heat side
is exercised only through its pure helpers (command line, record parsing).
The end-to-end test runs the dndask and dask sides of one ``--quick`` case on
the session cluster.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import dndask as ht
from dndask import _layout

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `bench` lives next to `tests`; workers inherit the path
    sys.path.insert(0, str(ROOT))

from bench import __main__ as cli  # noqa: E402
from bench import (  # noqa: E402
    breakdown,
    floor,
    heat_venv,
    latency,
    report,
    scaling,
    shm_stages,
    stage_floor,
    weight,
    workloads,
)
from bench.systems import Result, Sample  # noqa: E402

MIB = 1 << 20


# --- workloads: shapes and the bytes that must move ------------------------------------------


def test_balanced_and_skewed_counts_follow_heats_rule():
    assert workloads.balanced_counts(10, 4) == [3, 3, 2, 2]
    assert workloads.skewed_counts(100, 4) == [10, 10, 10, 70]
    assert sum(workloads.skewed_counts(1001, 7)) == 1001


def test_moved_rows_counts_rows_that_change_owner():
    assert workloads.moved_rows([3, 3, 2, 2], [3, 3, 2, 2]) == 0
    assert workloads.moved_rows([5, 5], [10, 0]) == 5
    assert workloads.moved_rows([25, 25, 25, 25], [10, 10, 10, 70]) == 65
    rng = np.random.default_rng(0)
    for _ in range(20):  # the same count as dndask's own planner
        src = rng.multinomial(50, [0.25] * 4).tolist()
        dst = rng.multinomial(50, [0.25] * 4).tolist()
        assert workloads.moved_rows(src, dst) == _layout.moved_rows(src, dst)


def test_heat_redistribute_passes_surplus_rank_to_rank():
    assert workloads.heat_redistribute_rows([25] * 4, [10, 10, 10, 70]) == 90  # Heat sends 90
    assert workloads.heat_redistribute_rows([10, 10, 10, 70], [25] * 4) == 65
    assert workloads.heat_redistribute_rows([3, 3, 2, 2], [3, 3, 2, 2]) == 0


def test_minimum_and_heat_bytes():
    w = workloads.Workload.of("resplit01", 128, 4)  # 8192 x 4096
    assert w.shape == (8192, 4096)
    assert w.minimum_bytes() == w.nbytes * 3 // 4 == w.heat_bytes()
    none = workloads.Workload.of("resplit_none", 128, 4)
    assert none.minimum_bytes() == none.nbytes * 3 // 4
    assert none.heat_bytes() == 3 * none.nbytes  # Heat's allgather
    red = workloads.Workload.of("redistribute", 128, 4)
    rows = workloads.moved_rows(red.counts, red.target_counts)
    assert red.minimum_bytes() == rows * 1024 * 4 < red.heat_bytes()
    assert workloads.Workload.of("randn", 128, 4).minimum_bytes() == 0
    assert workloads.Workload.of("matmul", 128, 4).heat_bytes() == 0
    with pytest.raises(KeyError, match="known"):
        workloads.Workload.of("nope", 1, 4)


def test_tiny_workloads_keep_a_row_per_rank():
    w = workloads.Workload.of("resplit01", 0.001, 4)
    assert w.rows == 4 and w.counts == [1, 1, 1, 1]


# --- floor arithmetic ------------------------------------------------------------------------


def test_floor_arithmetic():
    assert floor.floor_seconds(2 * MIB, MIB) == 2.0
    assert math.isnan(floor.floor_seconds(0, MIB))
    assert floor.distance(6.0, 2.0) == 3.0
    assert math.isnan(floor.distance(1.0, math.nan))
    assert floor.memcpy_bandwidth(mib=4, repeats=1) > 0
    assert floor.loopback_bandwidth(mib=4) > 0


# --- report formatting -----------------------------------------------------------------------


def fake_results() -> dict:
    w = workloads.Workload.of("redistribute", 128, 4)
    r = workloads.Workload.of("resplit01", 128, 4)

    def res(system, w, seconds, moved):
        return Result(system, w, [Sample(seconds, 10 * MIB, moved)] * 3)

    return {
        ("redistribute", 128): {
            "dndask": res("dndask", w, 0.1, w.minimum_bytes()),
            "dask": res("dask", w, 0.2, w.minimum_bytes()),
            "heat": res("heat", w, 0.05, w.heat_bytes()),
            "heat19": res("heat19", w, 0.04, w.heat_bytes()),
        },
        ("resplit01", 128): {"dndask": res("dndask", r, 0.1, r.minimum_bytes())},
    }


def fake_report(**fields) -> report.Report:
    """A :class:`report.Report` of 4 ranks, 3 repeats at 128 MiB on :func:`fake_results`,
    with no Heat, scaling or overhead; ``fields`` replace any of these."""
    base = dict(
        args="",
        ranks=4,
        repeats=3,
        base_mib=128,
        results=fake_results(),
        bandwidth=floor.Bandwidth(1 << 30, 1 << 28),
        points=[],
        overhead={},
        heat_versions={},
    )
    return report.Report(**{**base, **fields})


def test_main_table_and_ratios():
    rows = report.rows_of(fake_results())
    assert [row.workload.case.key for row in rows] == ["redistribute", "resplit01"]
    table = report.main_table(rows)
    lines = table.splitlines()
    assert lines[0].startswith(
        "| case | MiB | dndask s | dask s | Heat s | Heat 1.9 s | dndask/Heat: median · best | "
        "dndask/Heat 1.9: median · best | dndask/dask"
    )
    assert len(lines) == 4
    assert "| 0.100 | 0.200 | 0.050 | 0.040 | 2.00 · 2.00 | 2.50 · 2.50 | 0.50 · 0.50 |" in lines[2]
    assert "10.0 · 10.0 · 10.0 · 10.0" in lines[2]
    assert "| 0.100 | — | — | — | — · — | — · — | — · — |" in lines[3]  # systems that did not run


def test_ratios_of_medians_and_of_best_repeats():
    w = workloads.Workload.of("elementwise", 1, 4)
    dnd = Result("dndask", w, [Sample(t, 0, 0) for t in (1.0, 2.0, 9.0)])
    dask = Result("dask", w, [Sample(t, 0, 0) for t in (4.0, 0.5, 3.0)])
    row = report.Row.of(w, {"dndask": dnd, "dask": dask})
    assert row.ratio("dndask", "dask") == 2.0 / 3.0
    assert row.ratio("dndask", "dask", best=True) == 2.0
    assert row.ratios("dndask", "dask") == "0.67 · 2.00"
    assert row.ratios("dndask", "heat") == "— · —"


def test_number_formats():
    assert report.fmt_seconds(1.23456) == "1.235"
    assert report.fmt_seconds(0.0012) == "1.20 ms"
    assert report.fmt_seconds(math.nan) == report.DASH
    assert report.fmt_ratio(0.987) == "0.99"
    assert report.fmt_ratio(361.5) == "362"
    assert report.fmt_mib(3 * MIB) == "3.0"
    assert report.fmt_size(128.0) == "128"


def test_targets_and_floor_table():
    rows = report.rows_of(fake_results())
    bw = floor.Bandwidth(memcpy=1 << 30, loopback=1 << 28)
    goals = {t.goal: t for t in report.targets(rows, bw, 128)}
    redistribute = goals[
        "dndask/Heat ≤ 0.6, redistribute_ balanced → skewed, 128 MiB (median · best)"
    ]
    assert (redistribute.value, redistribute.met) == ("2.00 · 2.00", False)
    assert (
        goals["dndask/Heat ≤ 0.6, resplit_ 0 → 1, 128 MiB (median · best)"].met is None
    )  # no Heat
    every = goals["dndask/Heat ≤ 1.0 (median) in every case"]  # only redistribute_ ran with Heat
    assert every.met is False
    assert every.value == "worst 2.00 (redistribute_ balanced → skewed, 128 MiB); 1 of 1 above 1"
    assert goals["dndask/Heat 1.9 ≤ 1.0 (median) in every case"].value.startswith("worst 2.50 (")
    assert goals["redistribute_ moves the theoretical minimum"].met is True
    assert not any("peak" in g for g in goals)  # no 1 GiB resplit_ in this run
    floor_rows = report.floor_table(rows, bw).splitlines()
    assert len(floor_rows) == 4  # header, rule, two movement cases
    assert "not run" in report.targets_table(list(goals.values()))


def test_peak_memory_target_of_resplit_at_one_gib():
    w = workloads.Workload.of("resplit01", 1024, 4)  # a chunk: 256 MiB
    bw = floor.Bandwidth(memcpy=1 << 30, loopback=1 << 28)

    def goal(dndask_peak: float) -> report.Target:
        results = {
            ("resplit01", 1024): {
                "dndask": Result("dndask", w, [Sample(1.0, dndask_peak * MIB, 0)]),
                "heat": Result("heat", w, [Sample(1.0, 250 * MIB, 0)]),
            }
        }
        goals = report.targets(report.rows_of(results), bw, 1024)
        return next(t for t in goals if "peak" in t.goal)

    assert goal(500).met is True and goal(500).value == "500.0 against 250.0 + 256.0 MiB"
    assert goal(507).met is False


def test_document_renders_without_heat_or_scaling(tmp_path):
    rep = fake_report(args="--quick", quick=True, date="2026-01-01")
    text = report.document(rep, None)
    assert text.startswith("# Performance\n")
    assert (
        "quick smoke run" in text
        and "Heat 1.8** (its own venv, `bench/.heat-venv`): not run" in text
        and "`bench/.heat19-venv`): not run" in text
    )
    assert report.plot_resplit(rep.results, tmp_path / "p.png", rep.bandwidth)
    record = report.samples_record(rep)
    assert [(r["case"], r["system"]) for r in record["runs"]][:2] == [
        ("redistribute", "dask"),
        ("redistribute", "dndask"),
    ]
    assert record["runs"][0]["seconds"] == [0.2, 0.2, 0.2] and record["ranks"] == 4
    assert (tmp_path / "p.png").stat().st_size > 0


# --- graph scaling (nothing runs) -------------------------------------------------------------


def test_graph_scaling_at_small_rank_counts():
    points = scaling.graph_scaling(
        ranks=(4, 8, 16), rows=1 << 12, tasks_max=8, repeats=1, shm_max=8
    )
    assert [p.ranks for p in points] == [4, 8, 16]
    assert scaling.is_linear(points, slack=1.5)
    assert all(p.redistribute <= 3 * p.ranks for p in points)
    assert points[0].resplit == points[0].resplit_tasks  # few ranks: one slice per pair
    assert points[2].resplit_tasks is None  # above tasks_max
    assert all(p.p2p > 0 for p in points)
    assert [p.resplit_shm for p in points] == [
        2 * 4 + 1,
        2 * 8 + 1,
        None,
    ]  # posts, barrier, collects
    text = report.scaling_table(points) + report.scaling_verdict(points)
    assert "| 16 |" in text and "linear" in text and "at most 2P + 1 tasks up to 8 ranks" in text


def test_python_m_bench_scaling_prints_the_points(capsys):
    assert (
        scaling.main(["--ranks", "4,8", "--repeats", "1", "--tasks-max", "4", "--shm-max", "4"])
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| ranks | redistribute |") and "| resplit_shm_s |" in lines[0]
    assert lines[2].startswith("| 4 | 9 |") and lines[3].startswith("| 8 |")
    assert lines[3].endswith("| — | — |")  # 8 ranks: above shm_max, not built
    assert "load average" in lines[4]


# --- the command line and the Heat helpers (no Heat needed) ----------------------------------


def test_quick_arguments_and_plan():
    args = cli.parse_args(["--quick", "--systems", "dndask,dask", "--cases", "resplit01,randn"])
    assert args.repeats == 2 and args.sizes == list(cli.QUICK_SIZES)
    keys = [(w.case.key, w.mib) for w in cli.plan(args)]
    assert keys == [("resplit01", 4.0), ("resplit01", 16.0), ("randn", 4.0)]
    with pytest.raises(SystemExit):
        cli.parse_args(["--systems", "numpy"])


def test_heat_helpers_are_pure(tmp_path):
    cmd = heat_venv.mpi_command(tmp_path, 4, ["x.py"])
    assert cmd[1:3] == ["-np", "4"] and cmd[3].endswith("/bin/python")
    env = heat_venv.mpi_env()
    assert env["OMP_NUM_THREADS"] == "1" and env["UCX_NET_DEVICES"] == "lo"
    record = heat_venv.parse_record('noise\nBENCH-JSON {"times": [1.0], "peaks": [0]}\n')
    assert record == {"times": [1.0], "peaks": [0]}
    with pytest.raises(RuntimeError, match="no result"):
        heat_venv.parse_record("nothing")


# --- the latency section (pure parts) ---------------------------------------------------------


def test_latency_table_gives_median_best_ratios_and_target():
    fast = latency.Timing("dask", "step", [0.010, 0.020, 0.030])
    slow = latency.Timing("dndask", "step", [0.012, 0.030, 0.060])
    assert (slow.median, slow.best) == (0.030, 0.012)
    assert latency.ratio(slow, fast, best=False) == 1.5
    assert latency.ratio(slow, fast, best=True) == pytest.approx(1.2)
    assert latency.ratio(slow, None, best=True) is None
    timings = {("step", "dndask"): slow, ("step", "dask"): fast}
    timings[("compute", "dndask")] = latency.Timing("dndask", "compute", [0.0005])
    timings[("compute", "dask")] = latency.Timing("dask", "compute", [0.001])
    lines = latency.table(timings, ["step", "compute", "print"]).splitlines()
    assert len(lines) == 5 and lines[0].startswith("| case | dndask ms")
    assert "| 30.0 · 12.0 | 20.0 · 10.0 | 1.50 · 1.20 | **missed** |" in lines[2]
    assert "| 0.50 · 0.50 | 1.0 · 1.0 | 0.50 · 0.50 | met |" in lines[3]
    assert lines[4].endswith("| — | — | — · — | — |")  # not run
    runs = latency.record(timings, 4)["runs"]
    assert {(r["case"], r["system"]) for r in runs} == set(timings)


def test_latency_arguments():
    args = latency.parse_args(["--cases", "step,is_split", "--repeats", "3"])
    assert args.cases == ["step", "is_split"] and args.repeats == 3 and args.ranks == 4
    with pytest.raises(SystemExit):
        latency.parse_args(["--cases", "nope"])
    assert cli.parse_args(["--latency"]).repeats == latency.REPEATS
    assert cli.parse_args(["--latency", "--repeats", "5"]).repeats == 5


# --- one case end to end on the session cluster ----------------------------------------------


def test_quick_case_runs_dndask_and_dask(client, comm_of):
    argv = ["--quick", "--systems", "dndask,dask", "--cases", "redistribute", "--sizes", "0.5"]
    argv += ["--repeats", "1"]
    args = cli.parse_args(argv)
    plan = cli.plan(args)
    results = cli.measure_dask_sides(client, comm_of(4), ["dndask", "dask"], plan, args.repeats)
    (w,) = plan
    by_system = results[("redistribute", 0.5)]
    assert set(by_system) == {"dndask", "dask"}
    dnd = by_system["dndask"]
    assert len(dnd.samples) == args.repeats
    assert all(s.moved == w.minimum_bytes() for s in dnd.samples)  # exactly the minimum
    assert all(s.seconds > 0 and s.peak >= 0 for s in dnd.samples)
    rep = fake_report(
        args=" ".join(argv), repeats=args.repeats, base_mib=0.5, results=results, quick=True
    )
    assert "redistribute_ balanced → skewed | 0.5 |" in report.console(rep)


# --- weight: import time and worker memory (pure parts) ---------------------------------------


def _weight_run(dndask_s: float, torch_workers: int, dndask_mib: float) -> dict:
    def workers(mib, torch):
        state = {"mib": [mib] * 4, "mean_mib": mib, "torch_workers": torch, "workers": 4}
        return {"idle": state, "after": state}

    imports = {
        "dndask": {"best": dndask_s, "median": dndask_s + 0.5, "torch": torch_workers > 0},
        "dask": {"best": 1.0, "median": 1.25, "torch": False},
        "torch": {"best": 2.0, "median": 2.5, "torch": True},
    }
    return {
        "date": "2026-12-05 06:00 UTC",
        "repeats": 5,
        "workers": 4,
        "load": [3.0, 4.0],
        "imports": imports,
        "dndask": workers(dndask_mib, torch_workers),
        "dask": workers(110.0, 0),
    }


def test_weight_section_shows_both_runs_and_the_differences():
    text = weight.section(_weight_run(1.25, 0, 115.0), _weight_run(4.5, 4, 293.0), "before (abc)")
    rows = [line for line in text.splitlines() if line.startswith("| before") or "| now" in line]
    assert rows[0].startswith(
        "| before (abc), 2026-12-05 06:00 UTC | 3.0 to 4.0 | 4.50 (5.00) | yes"
    )
    assert "| 293 · 293 | yes (4 of 4) | 110 · 110 |" in rows[0]
    assert rows[1].startswith("| now, 2026-12-05 06:00 UTC | 3.0 to 4.0 | 1.25 (1.75) | no")
    assert "| 115 · 115 | no | 110 · 110 |" in rows[1]
    assert "- before (abc): `import dndask` takes +3.50 s" in text
    assert "- now: `import dndask` takes +0.25 s" in text and "holds +5 MiB" in text
    assert "about 178 MiB" in text
    assert (
        "**In short** (before (abc) at load 3.0 to 4.0, now at load 3.0 to 4.0): "
        "`import dndask` takes 4.50 s before and 1.25 s now (best of 5; plain Dask's "
        "imports 1.00 s and 1.00 s in the same runs). Per dndask worker, 293 MiB idle and "
        "293 MiB after the sum before, 115 MiB and 115 MiB now; a plain Dask worker"
    ) in text
    assert "In short" not in weight.section(_weight_run(1.25, 0, 115.0))


def test_weight_section_shows_earlier_runs_oldest_first():
    oldest, middle, now = (
        _weight_run(4.5, 4, 293.0),
        _weight_run(1.3, 0, 115.0),
        _weight_run(1.25, 0, 113.0),
    )
    middle["dndask"]["idle"] = dict(middle["dndask"]["idle"], mean_mib=160.0)
    text = weight.section(now, middle, "hook at import (b)", [("before (a)", oldest)])
    rows = [line for line in text.splitlines() if line.startswith("| ") and "UTC" in line]
    assert [r.split(",")[0] for r in rows] == ["| before (a)", "| hook at import (b)", "| now"]
    assert "about 178 MiB" in text  # the run with torch on its workers against the next one
    assert "- hook at import (b): an idle dndask worker holds +50 MiB" in text
    assert "- now: an idle dndask worker holds +3 MiB" in text


def test_weight_section_replaces_its_own_part_of_the_page(tmp_path):
    doc = tmp_path / "performance.md"
    doc.write_text("# Performance\n\n## Sorting\n\nx\n\n## Reading the numbers\n\ny\n")
    weight.write(doc, "## Weight\n\nfirst\n")
    assert doc.read_text() == (
        "# Performance\n\n## Sorting\n\nx\n\n## Weight\n\nfirst\n\n## Reading the numbers\n\ny\n"
    )
    weight.write(doc, "## Weight\n\nsecond\n")
    assert "first" not in doc.read_text()
    assert doc.read_text().count("## Weight") == 1
    assert doc.read_text().index("second") < doc.read_text().index("## Reading the numbers")


def test_latency_cases_run_on_both_sides(comm_of):
    comm = comm_of(4)
    sides = [latency.DndaskLatency(comm), latency.DaskLatency(comm)]
    timings = latency.measure(sides, list(latency.CASES), repeats=1, warmup=0)
    assert set(timings) == {(c, s) for c in latency.CASES for s in ("dndask", "dask")}
    assert all(len(t.seconds) == 1 and t.best > 0 for t in timings.values())
    ops = {side.name: side.ops() for side in sides}
    assert ops["dndask"]["is_split"]().shape == ops["dask"]["is_split"]().shape == latency.SHAPE
    total = ops["dndask"]["compute"]().sum()
    assert ops["dndask"]["step"]() == pytest.approx(total + 512)  # a + 1, summed


def test_breakdown_takes_a_step_apart_from_its_task_stream():
    def record(worker, *startstops):
        spans = [{"action": a, "start": s, "stop": e} for a, s, e in startstops]
        return {"worker": worker, "startstops": spans}

    stream = [
        record("w0", ("compute", 10.1, 10.3)),
        record("w1", ("transfer", 10.2, 10.6), ("compute", 10.6, 10.7)),
        record("w1", ("compute", 10.65, 10.8)),  # overlaps the previous one on w1
    ]
    b = breakdown.take_apart("dndask", "resplit01", stream, 10.0, 10.02, 10.05, 11.0, ["w0", "w1"])
    assert b.wall == pytest.approx(1.0) and b.build == pytest.approx(0.02)
    assert b.submit == pytest.approx(0.03) and b.first_task == pytest.approx(0.05)
    assert b.compute == pytest.approx(0.2 + 0.1 + 0.15) and b.compute_max == pytest.approx(0.25)
    assert b.transfer == pytest.approx(0.4) and b.transfer_max == pytest.approx(0.4)
    # w0 busy 0.2 s, w1 busy 10.2-10.8 = 0.6 s, of the 0.95 s after submission
    assert b.idle_mean == pytest.approx(((0.95 - 0.2) + (0.95 - 0.6)) / 2)
    assert b.tail == pytest.approx(0.2) and b.tasks == 3
    b.transfer_mib = 1024.0
    assert b.bandwidth == pytest.approx(1024 / 1024 / 0.4)
    row = breakdown.table([breakdown.median_of([b, b])], 2)
    assert "| resplit_ 0 → 1 | dndask | 1.000 |" in row


def test_breakdown_same_generator_draws_what_randn_draws(client):
    """The Dask side of ``randn`` with dndask's generator (``map_blocks``) gives dndask's values."""
    w = workloads.Workload.of("randn", 0.25, 3)
    x = breakdown.build_dask_same(w, seed=5)
    assert x.chunks == (tuple(w.counts), (w.cols,))
    ht.random.seed(5)
    expected = ht.random.randn(*w.shape, dtype=ht.float32, split=0).numpy()
    got = x.compute()
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, expected)


def test_shm_stages_takes_a_relayout_apart_from_its_task_stream():
    def record(key, start, stop):
        return {"key": key, "startstops": [{"action": "compute", "start": start, "stop": stop}]}

    stream = [
        record(("relayout-post-1x2-ab", 0), 10.01, 10.05),
        record(("relayout-post-1x2-ab", 1), 10.02, 10.09),
        record("relayout-barrier-1x2-ab", 10.10, 10.101),
        record(("relayout-ab", 0, 0), 10.11, 10.20),
        record(("relayout-ab", 0, 1), 10.12, 10.15),
    ]
    t = shm_stages.timeline(stream, 10.0, 10.25)
    expected = {
        "wall": 250.0,
        "to first post": 10.0,
        "slowest post": 70.0,
        "last post end → barrier": 10.0,
        "barrier → first collect": 9.0,
        "slowest collect": 90.0,
        "tail": 50.0,
    }
    assert t == pytest.approx(expected)


# --- the algorithms group (issues 27 and 28) ---------------------------------------------------


def test_algorithm_shapes_and_bytes():
    cdist = workloads.Workload.of("cdist", 256, 4)
    assert cdist.shape == (8192, 18) and cdist.data_bytes == 2 * cdist.nbytes + 256 * MIB
    assert cdist.minimum_bytes() == 3 * cdist.nbytes == cdist.heat_bytes()
    eigh = workloads.Workload.of("eigh", workloads.N1000_MIB, 4)
    assert eigh.shape == (1000, 1000) and eigh.nbytes == 4_000_000
    fft = workloads.Workload.of("fft", 64, 4)  # 65536 x 256: 3/4 of the input, 3/4 of the output
    assert fft.minimum_bytes() == 3 * (fft.nbytes * 3 // 4) == fft.heat_bytes()
    assert workloads.Workload.of("ipca", 0.001, 4).rows == workloads.IPCA_COMPONENTS
    assert math.isnan(workloads.Workload.of("kmeans", 16, 4).heat_bytes())
    assert workloads.Workload.of("kmeans", 16, 4).minimum_bytes() == 0
    warm = workloads.Workload.of("eigh", 8, 4).warmup(1)
    assert (warm.case.key, warm.mib) == ("moments", workloads.WARMUP_MIB)
    assert workloads.Workload.of("resplit01", 8, 4).warmup(1).mib == 1  # the core's as before


def test_algorithm_group_arguments_and_plan():
    args = cli.parse_args(["--group", "algorithms", "--cases", "eigh,cdist"])
    assert [(w.case.key, w.mib) for w in cli.plan(args)] == [
        ("eigh", workloads.N1000_MIB),
        ("cdist", 256),
    ]
    args = cli.parse_args(["--group", "algorithms", "--quick"])
    assert [w.case.key for w in cli.plan(args)] == list(workloads.ALGORITHM_CASES)
    assert {w.mib for w in cli.plan(args)} == set(cli.QUICK_ALGORITHM_SIZES)
    assert cli.parse_args([]).cases == list(workloads.CASES)  # the core group by default
    with pytest.raises(SystemExit):
        cli.parse_args(["--group", "algorithms", "--cases", "resplit01"])


def test_algorithms_section_is_spliced_and_kept():
    section = f"{report.ALGORITHMS_BEGIN}\ntable\n{report.ALGORITHMS_END}"
    text = report.splice_algorithms("# Performance\n\nold\n", section)
    assert text.endswith(f"{report.ALGORITHMS_HEADING}\n\n{section}\n")
    prose = text + "\nprose about the numbers\n"
    again = report.splice_algorithms(prose, section.replace("table", "new table"))
    assert "new table" in again and "\ntable\n" not in again and again.endswith("numbers\n")
    core = report.merge_regenerated("# Performance\n\nregenerated\n", again)
    assert core.startswith("# Performance\n\nregenerated\n") and core.endswith("numbers\n")
    assert report.merge_regenerated("# P\n", "# P\n") == "# P\n"


def test_a_regenerated_document_keeps_the_hand_written_sections_in_place():
    old = (
        "# Performance\n\nold intro\n\n## Table\n\nold table\n\n## By hand\n\nnotes\n\n"
        "## Reading\n\nold reading\n\n## Later by hand\n\nmore notes\n"
    )
    new = (
        "# Performance\n\nnew intro\n\n## Table\n\nnew table\n\n## Fresh\n\nf\n\n## Reading\n\nr\n"
    )
    merged = report.merge_regenerated(new, old)
    headings = [line for line in merged.splitlines() if line.startswith("## ")]
    assert headings == ["## Table", "## Fresh", "## By hand", "## Reading", "## Later by hand"]
    assert "new intro" in merged and "old intro" not in merged
    assert "new table" in merged and "old table" not in merged and "old reading" not in merged
    assert "\nnotes\n" in merged and merged.endswith("more notes\n")
    assert report.merge_regenerated(new, "") == new


def test_algorithm_targets():
    w = workloads.Workload.of("lasso", 1, 4)
    f = workloads.Workload.of("fft", 1, 4)

    def res(system, w, seconds):
        return Result(system, w, [Sample(seconds, 0, 0)])

    rows = report.rows_of(
        {
            ("lasso", 1): {"dndask": res("dndask", w, 1.4), "heat": res("heat", w, 1.0)},
            ("fft", 1): {"dndask": res("dndask", f, 1.0)},
        }
    )
    goals = report.algorithm_targets(rows, floor.Bandwidth(memcpy=1 << 30, loopback=1 << 28))
    assert [g.met for g in goals] == [True, False]  # 1.4 <= 1.5; fft far above 3x its floor
    assert "| Lasso, 3 sweeps | 262144 x 16 |" not in report.algorithms_table(rows)
    assert "| Lasso, 3 sweeps | 16384 x 16 | 1.1 | 1.400 | — | 1.000 |" in report.algorithms_table(
        rows
    )


def test_algorithm_cases_run_on_dndask(client, comm_of):
    """Every algorithm case once on dndask at a tiny size (a smoke run, not a timing)."""
    argv = ["--group", "algorithms", "--systems", "dndask", "--sizes", "0.01", "--repeats", "1"]
    args = cli.parse_args(argv)
    plan = cli.plan(args)
    results = cli.measure_dask_sides(client, comm_of(4), ["dndask"], plan, args.repeats)
    assert sorted(key for key, _ in results) == sorted(workloads.ALGORITHM_CASES)
    for (key, _), by_system in results.items():
        (sample,) = by_system["dndask"].samples
        assert sample.seconds > 0 and sample.peak >= 0, key
    fft = results[("fft", 0.01)]["dndask"]
    assert 0 < fft.moved <= 2 * fft.workload.minimum_bytes()  # each element at most twice


# --- the scheduler's floor ---------------------------------------------------------------------


def test_stage_floor_graphs_have_their_shapes_and_run(client):
    for shape in stage_floor.SHAPES:
        dsk, outputs, rank = stage_floor.graph(shape, 3, 7)
        assert len(outputs) == 3 and [rank[k] for k in outputs] == [0, 1, 2]
        assert len(dsk) == stage_floor.tasks(shape, 3) and set(rank) == set(dsk)
    with pytest.raises(ValueError, match=r"`shape` must be one of 'one stage'.*got 'ring'"):
        stage_floor.graph("ring", 3, 0)
    times = stage_floor.measure(client, repeats=1, warmup=0, shapes=stage_floor.SHAPES[::3])
    assert list(times) == ["one stage", "post, barrier, collect"]
    assert all(len(t) == 1 and 0 < t[0] < 60 for t in times.values())
    table = stage_floor.table(times, len(client.scheduler_info()["workers"]))
    assert table.splitlines()[2].startswith("| one stage | ")


def test_stages_section_compares_heat_with_the_relayout_floor():
    results = fake_results()
    r = workloads.Workload.of("resplit01", 128, 4)
    results[("resplit01", 128)]["heat"] = Result("heat", r, [Sample(0.02, MIB, r.heat_bytes())] * 3)
    stages = {"one stage": [0.010, 0.012], "post, barrier, collect": [0.030, 0.025]}
    rep = fake_report(results=results, stages=stages)
    text = report.document(rep, None)
    assert "## The scheduler's floor" in text
    assert "| post, barrier, collect | 9 | 27.5 | 25.0 |" in text
    assert "Heat's `resplit_` 0 → 1 took 20.0 ms (median) and dndask's 100.0 ms" in text
    assert "best no-op time is 25.0 ms: Heat finishes below the floor" in text
