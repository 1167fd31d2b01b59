"""Batch-parallel k-means and k-medians: each rank clusters its own rows, then the centers merge.

One pass: every rank runs a weighted k-means (k-medians) of its rows in memory, in one
task, and returns its ``n_clusters`` centers with their weights (member counts). The
driver merges them in groups of ``n_procs_to_merge`` ranks (all at once if None): a
weighted clustering of a group's centers gives the group's centers, until one group is
left. The result depends on the layout (each rank's batch), as in Heat; the seeds of
the local clusterings come from dndask's random stream.
"""

from __future__ import annotations

import numbers

import numpy as np

import dndask as ht
from dndask.base import (
    BaseEstimator,
    ClusteringMixin,
    check_fitted,
    check_samples,
    map_rows,
    per_chunk,
    random_generator,
    samples_dtype,
)

from . import _chunks

__all__ = ["BatchParallelKMeans", "BatchParallelKMedians"]


def keep_centers(estimator, centers: np.ndarray) -> None:
    """Keep the fitted ``centers`` (numpy) with the graph name of ``cluster_centers_``."""
    estimator._fitted_centers = (estimator.cluster_centers_.to_dask().name, centers)


def centers_of(estimator) -> np.ndarray:
    """``cluster_centers_`` as numpy: the copy :func:`keep_centers` kept while the attribute
    still holds that array (its graph name unchanged; an assignment into it or another
    array changes the name), else fetched (a round trip)."""
    current = estimator.cluster_centers_
    kept = getattr(estimator, "_fitted_centers", None)
    if kept is not None and isinstance(current, ht.DNDarray) and current.to_dask().name == kept[0]:
        return kept[1]
    return current.numpy()


class _BatchParallel(ClusteringMixin, BaseEstimator):
    _p = 2
    _plus_plus = "k-means++"

    def __init__(
        self,
        n_clusters=8,
        init=None,
        max_iter=300,
        tol=1e-4,
        random_state=None,
        n_procs_to_merge=None,
    ):
        self.n_clusters = n_clusters
        self.init = self._plus_plus if init is None else init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.n_procs_to_merge = n_procs_to_merge
        self.cluster_centers_ = None
        self.n_iter_ = None
        self.functional_value_ = None
        self.labels_ = None

    def check_params(self) -> None:
        """TypeError or ValueError for a parameter that cannot work (before any data is read)."""
        for name in ("n_clusters", "max_iter"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"`{name}` must be an int, got {type(value).__name__}")
            if value < 1:
                raise ValueError(f"`{name}` must be at least 1, got {value}")
        if isinstance(self.tol, bool) or not isinstance(self.tol, numbers.Real):
            raise TypeError(f"`tol` must be a real number, got {type(self.tol).__name__}")
        if self.tol < 0:
            raise ValueError(f"`tol` must be at least 0, got {self.tol}")
        if not isinstance(self.init, str):
            raise TypeError(f"`init` must be a str, got {type(self.init).__name__}")
        if self.init != self._plus_plus:
            raise ValueError(f"`init` must be {self._plus_plus!r}, got {self.init!r}")
        merge = self.n_procs_to_merge
        if merge is not None:
            if isinstance(merge, bool) or not isinstance(merge, numbers.Integral):
                raise TypeError(
                    f"`n_procs_to_merge` must be an int or None, got {type(merge).__name__}"
                )
            if merge < 2:
                raise ValueError(f"`n_procs_to_merge` must be at least 2, got {merge}")
        rs = self.random_state
        if rs is not None and (isinstance(rs, bool) or not isinstance(rs, numbers.Integral)):
            raise TypeError(f"`random_state` must be an int or None, got {type(rs).__name__}")

    def fit(self, x: ht.DNDarray, y=None):
        """Cluster the rows of ``x``: local clusterings per rank, then merges (see the module)."""
        self.check_params()
        x = check_samples(x, finite=False)  # the local pass counts NaNs: one pass less
        if self.n_clusters > x.shape[0]:
            raise ValueError(
                f"`n_clusters` must be at most the number of samples, {x.shape[0]}, "
                f"got {self.n_clusters}"
            )
        dtype = samples_dtype(x)
        rng = random_generator(self.random_state)
        seeds = [int(s) for s in rng.integers(2**63 - 1, size=x.comm.size + 64)]
        k, p = self.n_clusters, self._p
        parts = per_chunk(x, _chunks.local_fit, k, p, seeds, self.max_iter, self.tol, indexed=True)
        bad = [p[2] for p in parts]
        if any(bad):
            rank = next(r for r, b in enumerate(bad) if b)
            raise ValueError(
                f"`x` must be finite, got {sum(bad)} NaN or infinite values "
                f"(the first on rank {rank})"
            )
        groups = [
            (np.asarray(c, dtype=dtype), np.asarray(w, dtype=np.float64))
            for c, w, _ in parts
            if len(c)
        ]
        merge = self.n_procs_to_merge or max(2, len(groups))
        seed_at = x.comm.size
        iterations = 0
        while len(groups) > 1 or iterations == 0:
            merged = []
            for start in range(0, len(groups), merge):
                chunk = groups[start : start + merge]
                points = np.concatenate([g[0] for g in chunk])
                weights = np.concatenate([g[1] for g in chunk])
                centers, counts, iterations, _ = _chunks.local_kcluster(
                    points, weights, k, p, seeds[seed_at % len(seeds)], self.max_iter, self.tol
                )
                seed_at += 1
                merged.append((centers.astype(dtype), counts))
            groups = merged
            iterations = max(iterations, 1)
        centers = groups[0][0]
        if centers.shape[0] < k:  # fewer distinct rows than clusters in a batch: pad by repeats
            centers = np.concatenate([centers, np.repeat(centers[:1], k - centers.shape[0], 0)])
        self.cluster_centers_ = ht.array(centers, comm=x.comm)
        keep_centers(self, centers)
        self.n_iter_ = int(iterations)
        self.functional_value_ = float(sum(per_chunk(x, _chunks.cost, centers, p)))
        self.labels_ = map_rows(x, _chunks.nearest, centers, p, dtype=np.int64).persist()
        return self

    def predict(self, x: ht.DNDarray) -> ht.DNDarray:
        """The index of the closest center of every row of ``x`` (int64, ``x``'s split)."""
        check_fitted(self, "cluster_centers_")
        centers = centers_of(self)
        x = check_samples(x, n_features=centers.shape[1])
        return map_rows(x, _chunks.nearest, centers, self._p, dtype=np.int64)


class BatchParallelKMeans(_BatchParallel):
    """Batch-parallel k-means (see the module): squared Euclidean distances, weighted means.

    >>> import dndask as ht, numpy as np
    >>> from dndask.cluster import BatchParallelKMeans
    >>> x = ht.array(np.r_[np.zeros((4, 2)), np.full((4, 2), 9.0)], split=0)
    >>> fitted = BatchParallelKMeans(n_clusters=2, random_state=0).fit(x)
    >>> sorted(fitted.cluster_centers_.numpy().tolist())
    [[0.0, 0.0], [9.0, 9.0]]
    """

    _p = 2
    _plus_plus = "k-means++"


class BatchParallelKMedians(_BatchParallel):
    """Batch-parallel k-medians (see the module): city-block distances, weighted medians.

    >>> import dndask as ht, numpy as np
    >>> from dndask.cluster import BatchParallelKMedians
    >>> x = ht.array(np.r_[np.zeros((4, 2)), np.full((4, 2), 9.0)], split=0)
    >>> fitted = BatchParallelKMedians(n_clusters=2, random_state=0).fit(x)
    >>> sorted(fitted.cluster_centers_.numpy().tolist())
    [[0.0, 0.0], [9.0, 9.0]]
    """

    _p = 1
    _plus_plus = "k-medians++"
