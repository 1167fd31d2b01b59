"""The dndask and plain Dask sides of the algorithm cases (``python -m bench --group algorithms``).

Issue 27 (cdist, k-means, Lasso, statistical moments) and issue 28 (eigh, polar, rsvd,
IncrementalPCA, fft along the split axis). Every system starts from the same numbers:
rank ``r``'s rows of an input are drawn by numpy's ``default_rng(seed + offset + r)``
(:func:`bench._data.piece`), on the worker that keeps them here and on MPI rank ``r`` in Heat, so
dndask, Dask and Heat fit the same data and, with the fixed initial centers of k-means
(:func:`bench._data.kmeans_init`) and fixed iteration counts, do the same work.

The Dask side is written as a Dask user would: ``dask.array`` expressions and dask-ml's
estimators where they offer the same computation (``None`` where they do not: eigh,
polar and Lasso by coordinate descent have no Dask counterpart). dask-ml is optional:
without it the k-means and IncrementalPCA cells of the Dask column stay empty. It installs
cleanly beside the pinned dask (dask-ml 2025.1.0 changes no installed package); to keep the
project's venv as it is, install it into a folder of its own and put that on the path::

    .venv/bin/python -m pip install --target bench/.dask-ml-site --no-deps dask-ml==2025.1.0 \
        dask-glm==0.4.0 multipledispatch sparse numba llvmlite pyarrow
    PYTHONPATH=.:bench/.dask-ml-site .venv/bin/python -m bench --group algorithms
"""

from __future__ import annotations

import dask
import dask.array as da
import dask.array.stats

import dndask as ht
import dndask.cluster
import dndask.decomposition
import dndask.fft
import dndask.regression
import dndask.spatial

from . import workloads
from ._dask_side import own_copy, persist_together, persisted
from ._data import kmeans_init, piece

try:  # optional: the Dask column of k-means and IncrementalPCA
    import dask_ml.cluster
    import dask_ml.decomposition
except ImportError:  # pragma: no cover (depends on the environment)
    dask_ml = None


class DndaskAlgorithms:
    """dndask: the core's public packages on DNDarrays."""

    def __init__(self, comm: ht.Comm):
        self.comm = comm

    def _split0(self, w: workloads.Workload, seed: int, name: str = "x"):
        pieces = ht.per_rank(piece, seed, w.counts, w.cols, name, comm=self.comm)
        return ht.array(pieces, is_split=0).persist_(wait=True)

    def prepare(self, w: workloads.Workload, seed: int) -> dict:
        key = w.case.key
        if key == "cdist":
            return {"x": self._split0(w, seed), "y": self._split0(w, seed, "y")}
        if key == "lasso":
            return {"x": self._split0(w, seed), "y": self._split0(w, seed, "target")}
        if key == "eigh":
            a = self._split0(w, seed)
            return {"a": (a + a.T).resplit_(0).persist_(wait=True)}
        if key == "ipca":
            batches = [self._split0(w, seed + 100 * i) for i in range(workloads.IPCA_BATCHES)]
            return {"batches": batches}
        state = {"x": self._split0(w, seed)}
        if key == "kmeans":
            state["init"] = kmeans_init(seed, w.cols)
        return state

    def run(self, w: workloads.Workload, state: dict):
        key = w.case.key
        if key == "cdist":
            d = dndask.spatial.cdist(state["x"], state["y"], quadratic_expansion=True)
            return d.persist_(wait=True)
        if key == "kmeans":
            km = dndask.cluster.KMeans(
                n_clusters=workloads.KMEANS_CLUSTERS,
                init=state["init"],
                max_iter=workloads.KMEANS_ITERATIONS,
                tol=None,
            ).fit(state["x"])
            assert km.n_iter_ == workloads.KMEANS_ITERATIONS
            return persist_together(km.labels_)
        if key == "lasso":
            est = dndask.regression.Lasso(
                lam=workloads.LASSO_LAM, max_iter=workloads.LASSO_ITERATIONS, tol=None
            ).fit(state["x"], state["y"])
            return persist_together(est.theta)
        if key == "moments":
            x = state["x"]
            parts = (
                ht.mean(x, axis=0),
                ht.var(x, axis=0),
                ht.skew(x, axis=0, unbiased=False),
                ht.kurtosis(x, axis=0, unbiased=False),
            )
            return dask.compute(*(p.to_dask() for p in parts))
        if key == "eigh":
            return persist_together(*ht.linalg.eigh(state["a"]))
        if key == "polar":
            return persist_together(*ht.linalg.polar(state["x"]))
        if key == "rsvd":
            return persist_together(*ht.linalg.rsvd(state["x"], workloads.RSVD_RANK))
        if key == "ipca":
            ipca = dndask.decomposition.IncrementalPCA(n_components=workloads.IPCA_COMPONENTS)
            for batch in state["batches"]:
                ipca.partial_fit(batch)
            return persist_together(ipca.components_, ipca.singular_values_, ipca.mean_)
        if key == "fft":
            return dndask.fft.fft(state["x"], axis=0).persist_(wait=True)
        raise KeyError(key)


class DaskAlgorithms:
    """Plain ``dask.array`` (and dask-ml) on dndask's very chunks; ``None``: no counterpart."""

    def __init__(self, comm: ht.Comm):
        self.inputs = DndaskAlgorithms(comm)

    @staticmethod
    def offers(key: str) -> bool:
        """Whether Dask (with dask-ml where installed) offers the case's computation."""
        if key in ("kmeans", "ipca"):
            return dask_ml is not None
        return key in ("cdist", "moments", "rsvd", "fft")

    def prepare(self, w: workloads.Workload, seed: int) -> dict:
        state = self.inputs.prepare(w, seed)
        if "batches" in state:
            state["batches"] = [own_copy(b) for b in state["batches"]]
        return {k: own_copy(v) if isinstance(v, ht.DNDarray) else v for k, v in state.items()}

    def run(self, w: workloads.Workload, state: dict):
        key = w.case.key
        if key == "cdist":  # the expanded form, as dask-ml's euclidean_distances
            x, y = state["x"], state["y"]
            d2 = (x * x).sum(axis=1)[:, None] + (y * y).sum(axis=1)[None, :] - 2 * (x @ y.T)
            return persisted(da.sqrt(da.maximum(d2, 0)))
        if key == "kmeans":
            km = dask_ml.cluster.KMeans(
                n_clusters=workloads.KMEANS_CLUSTERS,
                init=state["init"],
                max_iter=workloads.KMEANS_ITERATIONS,
                tol=0.0,
            ).fit(state["x"])
            return persisted(km.labels_)
        if key == "moments":
            x = state["x"]
            return dask.compute(
                x.mean(axis=0),
                x.var(axis=0),
                dask.array.stats.skew(x, axis=0),
                dask.array.stats.kurtosis(x, axis=0),
            )
        if key == "rsvd":
            return persisted(*da.linalg.svd_compressed(state["x"], workloads.RSVD_RANK, seed=0))
        if key == "ipca":
            ipca = dask_ml.decomposition.IncrementalPCA(n_components=workloads.IPCA_COMPONENTS)
            for batch in state["batches"]:
                ipca.partial_fit(batch)
            return ipca.components_
        if key == "fft":  # one chunk along the axis, then back to rows (dndask's layout)
            x = state["x"]
            by_cols = x.rechunk((w.rows, tuple(w.col_counts)))
            out = da.fft.fft(by_cols, axis=0).rechunk((tuple(w.counts), w.cols))
            return persisted(out)
        raise KeyError(f"Dask offers no counterpart of {key!r}")
