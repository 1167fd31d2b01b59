"""The face's clusterers: the core's, with Heat's parameters, checks and result shapes."""

from __future__ import annotations

import numbers

import numpy as np

from dndask import _dndarray, _manipulation
from dndask import cluster as _core
from dndask.heat import _adapt, types

__all__ = [
    "BatchParallelKMeans",
    "BatchParallelKMedians",
    "KMeans",
    "KMedians",
    "KMedoids",
    "Spectral",
]


def _column(labels, dtype=None):
    """Heat's labels: a face column ``(n, 1)``, optionally cast."""
    out = _manipulation.expand_dims(labels, 1)
    if dtype is not None:
        out = out.astype(dtype)
    return _adapt.face(out)


def _float_data(x):
    """Heat clusters integer data in float32 (torch's promotion with the centers)."""
    if isinstance(x, _dndarray.DNDarray) and not np.issubdtype(x.to_dask().dtype, np.floating):
        return x.astype(types.float32)
    return x


class _HeatKCluster:
    """Heat's checks around the core's k-clusterers (mixed in before the core class)."""

    _inits = ("random", "probability_based", "batchparallel")

    def fit(self, x, oversampling: float = 2, iter_multiplier: float = 1):
        if not isinstance(x, _dndarray.DNDarray):
            raise TypeError(f"`x` must be a DNDarray, got {type(x).__name__}")
        if oversampling < 2:
            raise ValueError(f"`oversampling` must be at least 2, got {oversampling}")
        if iter_multiplier < 1:
            raise ValueError(f"`iter_multiplier` must be at least 1, got {iter_multiplier}")
        init = self.init
        if isinstance(init, str):
            if init not in self._inits:
                raise ValueError(f"`init` must be one of {self._inits} or a DNDarray, got {init!r}")
        elif isinstance(init, _dndarray.DNDarray):
            if init.ndim != 2 or tuple(init.shape) != (self.n_clusters, x.shape[-1]):
                raise ValueError(
                    f"`init` must have shape (n_clusters, n_features) = "
                    f"{(self.n_clusters, x.shape[-1])}, got {tuple(init.shape)}"
                )
        else:
            raise ValueError(f"`init` must be a str or a DNDarray, got {type(init).__name__}")
        if x.split is not None and x.split != 0:
            raise NotImplementedError(
                f"`x` split along {x.split} is not supported (as in Heat): split 0 or None"
            )
        super().fit(_float_data(x))
        self.cluster_centers_ = _adapt.face(self.cluster_centers_)
        self.labels_ = _column(self.labels_)
        self.functional_value_ = self.inertia_
        return self

    def predict(self, x):
        if not isinstance(x, _dndarray.DNDarray):
            raise TypeError(f"`x` must be a DNDarray, got {type(x).__name__}")
        return _column(super().predict(_float_data(x)))


class KMeans(_HeatKCluster, _core.KMeans):
    """Heat's ``KMeans`` (see :class:`dndask.cluster.KMeans`); ``init='kmeans++'`` is
    Heat's 'probability_based'."""

    def __init__(self, n_clusters=8, init="random", max_iter=300, tol=1e-4, random_state=None):
        if isinstance(init, str) and init == "kmeans++":
            init = "probability_based"
        super().__init__(n_clusters, init, max_iter, tol, random_state)


class KMedians(_HeatKCluster, _core.KMedians):
    """Heat's ``KMedians`` (see :class:`dndask.cluster.KMedians`); 'kmedians++' is
    'probability_based'."""

    def __init__(self, n_clusters=8, init="random", max_iter=300, tol=1e-4, random_state=None):
        if isinstance(init, str) and init == "kmedians++":
            init = "probability_based"
        super().__init__(n_clusters, init, max_iter, tol, random_state)


class KMedoids(_HeatKCluster, _core.KMedoids):
    """Heat's ``KMedoids`` (see :class:`dndask.cluster.KMedoids`); 'kmedoids++' is
    'probability_based'; no 'batchparallel' (a ValueError, as in Heat)."""

    _inits = ("random", "probability_based")

    def __init__(self, n_clusters=8, init="random", max_iter=300, random_state=None):
        if isinstance(init, str) and init == "kmedoids++":
            init = "probability_based"
        super().__init__(n_clusters, init, max_iter, random_state)


class _HeatBatchParallel:
    """Heat's checks at construction, split 0 only, int32 column labels."""

    def __init__(
        self,
        n_clusters=8,
        init=None,
        max_iter=300,
        tol=1e-4,
        random_state=None,
        n_procs_to_merge=None,
    ):
        init = self._plus_plus if init is None else init
        if isinstance(init, str) and init == "random":
            raise NotImplementedError(
                "`init='random'` is not implemented for batch-parallel clustering (as in Heat)"
            )
        super().__init__(n_clusters, init, max_iter, tol, random_state, n_procs_to_merge)
        if isinstance(tol, numbers.Integral) and not isinstance(tol, bool):
            raise TypeError(f"`tol` must be a float, got {type(tol).__name__}")
        if isinstance(tol, numbers.Real) and tol == 0:
            raise ValueError("`tol` must be positive, got 0")
        self.check_params()

    def _check_x(self, x, what: str):
        if not isinstance(x, _dndarray.DNDarray):
            raise TypeError(f"`x` must be a DNDarray, got {type(x).__name__}")
        if x.ndim != 2:
            raise ValueError(f"`x` must be 2-D, got {x.ndim}-D")
        if x.split != 0:
            raise ValueError(
                f"`x` must be split along axis 0 for {what} (as in Heat), got {x.split}"
            )

    def fit(self, x, y=None):
        self._check_x(x, "fit")
        super().fit(_float_data(x))
        self.cluster_centers_ = _adapt.face(self.cluster_centers_)
        self.labels_ = _column(self.labels_, types.int32)
        return self

    def predict(self, x):
        if self.cluster_centers_ is None:
            raise RuntimeError("`fit` must be called before `predict`")
        self._check_x(x, "predict")
        if x.shape[1] != self.cluster_centers_.shape[1]:
            raise ValueError(
                f"`x` must have {self.cluster_centers_.shape[1]} features (as in fit), "
                f"got {x.shape[1]}"
            )
        return _column(super().predict(_float_data(x)), types.int32)


class BatchParallelKMeans(_HeatBatchParallel, _core.BatchParallelKMeans):
    """Heat's ``BatchParallelKMeans`` (see :class:`dndask.cluster.BatchParallelKMeans`)."""


class BatchParallelKMedians(_HeatBatchParallel, _core.BatchParallelKMedians):
    """Heat's ``BatchParallelKMedians`` (see :class:`dndask.cluster.BatchParallelKMedians`)."""


class Spectral(_core.Spectral):
    """Heat's ``Spectral``: checks at construction, extra keywords (Heat's ``params``,
    ``normalize``) accepted and ignored, a split along the features a NotImplementedError."""

    def __init__(
        self,
        n_clusters=None,
        gamma=1.0,
        metric="rbf",
        laplacian="fully_connected",
        threshold=1.0,
        boundary="upper",
        eigen_solver="randomized",
        reigh_rank=100,
        reigh_n_oversamples=10,
        reigh_power_iter=0,
        lanczos_n_iter=300,
        assign_labels="kmeans",
        **params,
    ):
        super().__init__(
            n_clusters,
            gamma,
            metric,
            laplacian,
            threshold,
            boundary,
            eigen_solver,
            reigh_rank,
            reigh_n_oversamples,
            reigh_power_iter,
            lanczos_n_iter,
            assign_labels,
        )
        del self.random_state  # not one of Heat's parameters: ht.random.seed drives it
        self.check_params()

    random_state = None

    def fit(self, x, y=None):
        if not isinstance(x, _dndarray.DNDarray):
            raise ValueError(f"`x` must be a DNDarray, got {type(x).__name__}")
        if x.split is not None and x.split != 0:
            raise NotImplementedError(
                f"`x` split along {x.split} is not supported (as in Heat): split 0 or None"
            )
        super().fit(_float_data(x))
        self.labels_ = _column(self.labels_)
        self.cluster_centers_ = _adapt.face(self.cluster_centers_)
        return self
