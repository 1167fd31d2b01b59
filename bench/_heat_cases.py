"""The Heat side of the benchmark: one case under MPI, JSON on rank 0's stdout.

Run by :mod:`bench.heat_venv` with Heat's own virtual environment::

    <heat-venv>/bin/mpiexec -np P <heat-venv>/bin/python bench/_heat_cases.py \\
        --case resplit01 --mib 128 --repeats 5

Every repeat builds its inputs, waits at a barrier, starts each rank's RSS
memory meter and ``MPI.Wtime()``, runs the operation, waits at a barrier again and
takes the time; the repeat's time is the maximum over ranks (the slowest rank
finishes the collective operation), and its memory the largest peak above the
baseline of any rank. One untimed warm-up (a 1 MiB array of a core case; see
``Workload.warmup``) comes first.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

# The script's own folder would come first on the path; the repository root replaces it,
# so that ``bench`` is importable and no bench module shadows an installed one.
sys.path[0] = str(Path(__file__).resolve().parents[1])

import heat as ht  # noqa: E402
import mpi4py  # noqa: E402
import torch  # noqa: E402
from mpi4py import MPI  # noqa: E402

from bench import _data, _rss, workloads  # noqa: E402  (standard library and numpy only)

COMM = MPI.COMM_WORLD


def local_piece(w: workloads.Workload, seed: int) -> torch.Tensor:
    """This rank's balanced share of a normal random float32 matrix."""
    torch.manual_seed(seed + COMM.rank)
    return torch.randn(w.counts[COMM.rank], w.cols, dtype=torch.float32)


def source(w: workloads.Workload, seed: int):
    """A balanced split-0 float32 matrix, each rank's rows drawn in place (as on dndask's side)."""
    return ht.array(local_piece(w, seed), is_split=0)


def shared(w: workloads.Workload, seed: int, name: str = "x"):
    """This rank's rows of an algorithm case's input, the numbers dndask and Dask get."""
    local = torch.from_numpy(_data.piece(COMM.rank, seed, w.counts, w.cols, name))
    return ht.array(local, is_split=0)


def prepare_algorithm(w: workloads.Workload, seed: int) -> dict:
    """The inputs of an algorithm case (issues 27 and 28), as on dndask's side."""
    key = w.case.key
    if key == "cdist":
        return {"x": shared(w, seed), "y": shared(w, seed, "y")}
    if key == "lasso":
        return {"x": shared(w, seed), "y": shared(w, seed, "target")}
    if key == "eigh":
        a = shared(w, seed)
        return {"a": a + a.T.resplit(0)}
    if key == "ipca":
        return {"batches": [shared(w, seed + 100 * i) for i in range(workloads.IPCA_BATCHES)]}
    state = {"x": shared(w, seed)}
    if key == "kmeans":
        state["init"] = ht.array(torch.from_numpy(_data.kmeans_init(seed, w.cols)))
    return state


def run_algorithm(w: workloads.Workload, state: dict):
    """An algorithm case with Heat's own functions and estimators."""
    key = w.case.key
    if key == "cdist":
        return ht.spatial.cdist(state["x"], state["y"], quadratic_expansion=True)
    if key == "kmeans":
        km = ht.cluster.KMeans(
            n_clusters=workloads.KMEANS_CLUSTERS,
            init=state["init"],
            max_iter=workloads.KMEANS_ITERATIONS,
            tol=None,
        ).fit(state["x"])
        assert km.n_iter_ == workloads.KMEANS_ITERATIONS
        return km.labels_
    if key == "lasso":
        est = ht.regression.Lasso(
            lam=workloads.LASSO_LAM, max_iter=workloads.LASSO_ITERATIONS, tol=None
        )
        est.fit(state["x"], state["y"])
        return est.theta
    if key == "moments":
        x = state["x"]
        return [  # the biased skew and kurtosis: Dask has no unbiased ones
            ht.mean(x, axis=0),
            ht.var(x, axis=0),
            ht.skew(x, axis=0, unbiased=False),
            ht.kurtosis(x, axis=0, unbiased=False),
        ]
    if key == "eigh":
        return ht.linalg.eigh(state["a"])
    if key == "polar":
        return ht.linalg.polar(state["x"])
    if key == "rsvd":
        return ht.linalg.rsvd(state["x"], workloads.RSVD_RANK)
    if key == "ipca":
        ipca = ht.decomposition.IncrementalPCA(n_components=workloads.IPCA_COMPONENTS)
        for batch in state["batches"]:
            ipca.partial_fit(batch)
        return ipca.components_
    if key == "fft":
        return ht.fft.fft(state["x"], axis=0)
    raise KeyError(key)


def prepare(w: workloads.Workload, seed: int) -> dict:
    """The inputs of one repeat (not timed)."""
    key = w.case.key
    if w.case.group == "algorithms":
        return prepare_algorithm(w, seed)
    if key == "randn":
        ht.random.seed(seed)
        return {}
    if key == "sort":  # a vector, each rank's values drawn in place
        torch.manual_seed(seed + COMM.rank)
        local = torch.randn(w.counts[COMM.rank], dtype=torch.float32)
        return {"a": ht.array(local, is_split=0)}
    if key == "is_split":
        return {"local": local_piece(w, seed)}
    state = {"a": source(w, seed)}
    if key == "redistribute":
        state["lshape_map"] = state["a"].lshape_map
        target = state["lshape_map"].clone()
        target[:, 0] = torch.tensor(w.target_counts)
        state["target"] = target
    if key == "matmul":
        state["b"] = ht.random.rand(w.cols, workloads.MATMUL_N, dtype=ht.float32, split=None)
    return state


def run(w: workloads.Workload, state: dict):
    """The timed operation; returns its result."""
    key = w.case.key
    if w.case.group == "algorithms":
        return run_algorithm(w, state)
    if key == "randn":
        return ht.random.randn(*w.shape, dtype=ht.float32, split=0)
    if key == "redistribute":
        a = state["a"]
        a.redistribute_(lshape_map=state["lshape_map"], target_map=state["target"])
        return a
    if key == "resplit01":
        return state["a"].resplit_(1)
    if key == "resplit_none":
        return state["a"].resplit_(None)
    if key == "elementwise":
        return workloads.chain(state["a"], absolute=ht.abs).item()
    if key == "matmul":
        return ht.matmul(state["a"], state["b"])
    if key == "tsqr":
        return ht.linalg.qr(state["a"])
    if key == "is_split":
        return ht.array(state["local"], is_split=0)
    if key == "sort":
        return ht.sort(state["a"], axis=0)
    raise KeyError(key)


def repeat_once(w: workloads.Workload, seed: int) -> tuple[float, int]:
    """Seconds (max over ranks) and peak bytes above baseline (max over ranks) of one run."""
    state = prepare(w, seed)
    COMM.Barrier()
    meter = _rss.PeakMeter().start()
    t0 = MPI.Wtime()
    out = run(w, state)
    COMM.Barrier()
    seconds = MPI.Wtime() - t0
    peak = meter.stop()
    del out, state
    return COMM.allreduce(seconds, op=MPI.MAX), COMM.allreduce(peak, op=MPI.MAX)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cases = [*workloads.CASES, *workloads.ALGORITHM_CASES, *workloads.OWN_SCRIPT_CASES]
    parser.add_argument("--case", required=True, choices=cases)
    parser.add_argument("--mib", type=float, required=True)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # one thread per rank, like the single-threaded Dask workers
    w = workloads.Workload.of(args.case, args.mib, COMM.size)
    repeat_once(w.warmup(1), seed=10_000)  # warm-up
    times, peaks = [], []
    for i in range(args.repeats):
        seconds, peak = repeat_once(w, seed=i)
        times.append(seconds)
        peaks.append(peak)
    if COMM.rank == 0:
        record = {
            "case": w.case.key,
            "mib": w.mib,
            "ranks": COMM.size,
            "times": times,
            "peaks": peaks,
            "heat": ht.__version__,
            "torch": torch.__version__,
            "mpi4py": mpi4py.__version__,
            "mpi": MPI.Get_library_version().splitlines()[0].strip(),
        }
        print("BENCH-JSON " + json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
