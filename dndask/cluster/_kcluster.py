"""k-means, k-medians and k-medoids on DNDarrays: one pass over the data per step.

Every step of a fit is a pass (:func:`dndask.base.per_chunk`): each rank reduces its
own rows against the current centers in one task (sums and counts, median pivots,
closest members), the driver combines the small results into the next centers, and
the next pass takes them as an argument. The data is persisted once, so the task
graph of a fit does not grow with its iterations.

Initial centers come from dndask's random stream (:func:`dndask.base.random_generator`):
the same ``random_state`` (or ``ht.random.seed``) gives the same centers, and so the
same clustering, for any number of ranks and any split.
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
from ._batchparallel import BatchParallelKMeans, BatchParallelKMedians, centers_of, keep_centers

__all__ = ["KClustering", "KMeans", "KMedians", "KMedoids"]

# the names of k-means++ for each metric (Heat's, scikit-learn's)
PLUS_PLUS = frozenset(
    {
        "probability_based",
        "kmeans++",
        "k-means++",
        "kmedians++",
        "k-medians++",
        "kmedoids++",
        "k-medoids++",
    }
)


def _positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"`{name}` must be at least 1, got {value}")
    return int(value)


class KClustering(ClusteringMixin, BaseEstimator):
    """What k-means, k-medians and k-medoids share: initialization, the loop, prediction.

    Subclasses set ``_p`` (the distance's power: 2 squared Euclidean, 1 city-block) and
    ``_step`` (the next centers from the current ones, with the cost of the current).
    """

    _p = 2

    def __init__(self, n_clusters=8, init="random", max_iter=300, tol=1e-4, random_state=None):
        self.n_clusters = n_clusters
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.cluster_centers_ = None
        self.labels_ = None
        self.inertia_ = None
        self.n_iter_ = None

    # ------------------------------------------------------------------ checks
    def _check_params(self, x: ht.DNDarray) -> None:
        k = _positive_int(self.n_clusters, "n_clusters")
        _positive_int(self.max_iter, "max_iter")
        tol = getattr(self, "tol", None)
        if tol is not None:
            if isinstance(tol, bool) or not isinstance(tol, numbers.Real):
                raise TypeError(f"`tol` must be a real number or None, got {type(tol).__name__}")
            if tol < 0:
                raise ValueError(f"`tol` must be at least 0, got {tol}")
        if k > x.shape[0]:
            raise ValueError(
                f"`n_clusters` must be at most the number of samples, {x.shape[0]}, got {k}"
            )
        init = self.init
        if isinstance(init, str):
            if init not in PLUS_PLUS | {"random", "batchparallel"}:
                raise ValueError(
                    "`init` must be 'random', 'probability_based' (k-means++), 'batchparallel' "
                    f"or the initial centers, got {init!r}"
                )
        elif isinstance(init, (ht.DNDarray, np.ndarray)):
            if tuple(init.shape) != (k, x.shape[1]):
                raise ValueError(
                    f"`init` must have shape (n_clusters, n_features) = {(k, x.shape[1])}, "
                    f"got {tuple(init.shape)}"
                )
        else:
            raise TypeError(
                f"`init` must be a str, a DNDarray or a numpy array, got {type(init).__name__}"
            )

    # ------------------------------------------------------------------ init
    def _initial_centers(self, x: ht.DNDarray, dtype: np.dtype) -> np.ndarray:
        init, k = self.init, self.n_clusters
        if isinstance(init, ht.DNDarray):
            centers = np.asarray(init.numpy(), dtype=dtype)
        elif isinstance(init, np.ndarray):
            centers = np.asarray(init, dtype=dtype)
        elif init == "batchparallel":
            centers = self._batchparallel_centers(x, dtype)
        else:
            rng = random_generator(self.random_state)
            if init == "random":
                idx = rng.choice(x.shape[0], size=k, replace=False)
                centers = _rows(x, idx, dtype)
            else:
                centers = _plus_plus(x, k, self._p, rng, dtype)
        if not np.isfinite(centers).all():
            raise ValueError("`init` must be finite, got NaN or infinite values")
        return centers

    def _batchparallel_centers(self, x, dtype) -> np.ndarray:
        if self._p == 2:
            cls = BatchParallelKMeans
        elif type(self).__name__ == "KMedians":
            cls = BatchParallelKMedians
        else:
            raise ValueError("`init='batchparallel'` is for KMeans and KMedians only")
        fitted = cls(n_clusters=self.n_clusters, random_state=self.random_state).fit(x)
        return np.asarray(fitted.cluster_centers_.numpy(), dtype=dtype)

    # ------------------------------------------------------------------ fit
    def fit(self, x: ht.DNDarray, y=None) -> KClustering:
        """Cluster the rows of ``x`` (samples, features); ``y`` is ignored.

        Sets ``cluster_centers_`` (split None), ``labels_`` (``x``'s split), ``inertia_``
        (the summed distance to the closest center, to the power of the metric) and
        ``n_iter_``. A failed fit leaves the estimator and ``x`` as they were.
        """
        x = check_samples(x)
        self._check_params(x)
        dtype = samples_dtype(x)
        x = x.persist()
        centers = self._initial_centers(x, dtype)
        n_iter = 0
        for _ in range(self.max_iter):
            n_iter += 1
            new = self._step(x, centers)
            done = self._converged(centers, new)
            centers = new
            if done:
                break
        self._finish(x, centers, dtype, n_iter)
        return self

    def _converged(self, old: np.ndarray, new: np.ndarray) -> bool:
        """Heat's rule: the summed squared shift of the centers is at most ``tol``."""
        return self.tol is not None and float(((old - new) ** 2).sum()) <= self.tol

    def _finish(self, x, centers, dtype, n_iter) -> None:
        kept = centers.astype(dtype, copy=False)
        self.cluster_centers_ = ht.array(kept, comm=x.comm)
        keep_centers(self, kept)
        self.labels_ = map_rows(x, _chunks.nearest, centers, self._p, dtype=np.int64).persist()
        self.inertia_ = float(sum(per_chunk(x, _chunks.cost, centers, self._p)))
        self.n_iter_ = n_iter

    # ------------------------------------------------------------------ predict
    def predict(self, x: ht.DNDarray) -> ht.DNDarray:
        """The index of the closest center of every row of ``x`` (int64, ``x``'s split)."""
        check_fitted(self, "cluster_centers_")
        centers = centers_of(self)
        x = check_samples(x, n_features=centers.shape[1])
        return map_rows(x, _chunks.nearest, centers, self._p, dtype=np.int64)

    def _step(self, x: ht.DNDarray, centers: np.ndarray) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover (every subclass has one)


def _rows(x: ht.DNDarray, idx: np.ndarray, dtype) -> np.ndarray:
    """The rows ``idx`` of ``x`` (in that order), fetched from their chunks in one pass."""
    counts = [int(c) for c in x.lshape_map[:, 0].tolist()] if x.split == 0 else [x.shape[0]]
    starts = np.concatenate([[0], np.cumsum(counts)])
    local = [
        [int(i - starts[r]) for i in idx if starts[r] <= i < starts[r + 1]]
        for r in range(len(counts))
    ]
    parts = per_chunk(x, _chunks.row_at, local, indexed=True)
    found = {}
    for r, rows in enumerate(parts):
        for pos, row in zip(local[r], [] if rows is None else rows, strict=True):
            found[int(starts[r] + pos)] = row
    return np.asarray([found[int(i)] for i in idx], dtype=dtype)


def _plus_plus(x: ht.DNDarray, k: int, p: int, rng: np.random.Generator, dtype) -> np.ndarray:
    """k-means++: each next center a row drawn with weight its distance^p to the chosen ones.

    Two passes per center: the weights' sum on each rank, then the drawn row from the
    rank where the draw falls. The draws do not depend on the layout.
    """
    centers = _rows(x, rng.integers(x.shape[0], size=1), dtype)
    for _ in range(1, k):
        sums = np.asarray(per_chunk(x, _chunks.weights_sum, centers, p), dtype=np.float64)
        total = sums.sum()
        if total <= 0:  # every row is a center already: repeat one
            nxt = centers[:1]
        else:
            target = rng.random() * total
            before = np.concatenate([[0.0], np.cumsum(sums)])
            rank = int(min(np.searchsorted(before[1:], target, side="right"), len(sums) - 1))
            while sums[rank] == 0 and rank > 0:
                rank -= 1
            targets = [None] * len(sums)
            targets[rank] = target - before[rank]
            picked = per_chunk(x, _chunks.weighted_pick, centers, p, targets, indexed=True)
            nxt = picked[rank][None, :]
        centers = np.concatenate([centers, nxt.astype(dtype)])
    return centers


class KMeans(KClustering):
    """k-means (Lloyd): each center moves to the mean of the rows closest to it.

    Parameters
    ----------
    n_clusters : int
        The number of clusters.
    init : {'random', 'probability_based', 'batchparallel'} or array (n_clusters, n_features)
        'random': ``n_clusters`` distinct rows drawn at random; 'probability_based'
        (also 'kmeans++', 'k-means++'): k-means++; 'batchparallel': the centers of
        :class:`BatchParallelKMeans`; an array: the centers themselves.
    max_iter : int
        The most iterations.
    tol : float or None
        Stop when the summed squared shift of the centers is at most ``tol`` (Heat's rule).
    random_state : int or None
        Seeds dndask's random stream (``ht.random.seed``) before the centers are drawn.

    An empty cluster keeps its center. Each iteration is one pass: per rank, the
    per-cluster sums and counts of its rows.

    Examples
    --------
    >>> import dndask as ht, numpy as np
    >>> from dndask.cluster import KMeans
    >>> x = ht.array([[0.0, 0.0], [0.0, 1.0], [9.0, 9.0], [9.0, 10.0]], split=0)
    >>> km = KMeans(n_clusters=2, init=np.array([[0.0, 0.0], [9.0, 9.0]])).fit(x)
    >>> km.cluster_centers_.numpy().tolist(), km.labels_.numpy().tolist(), km.inertia_
    ([[0.0, 0.5], [9.0, 9.5]], [0, 0, 1, 1], 1.0)
    """

    _p = 2

    def _step(self, x, centers):
        parts = per_chunk(x, _chunks.lloyd, centers)
        sums = sum(p[0] for p in parts)
        counts = sum(p[1] for p in parts)
        new = centers.copy()
        full = counts > 0
        new[full] = (sums[full] / counts[full, None]).astype(centers.dtype)
        return new


def _medians(x: ht.DNDarray, centers: np.ndarray, p: int) -> tuple[np.ndarray, np.ndarray]:
    """Each cluster's exact per-feature median (numpy's: the mean of the middle two) and size.

    Two passes (see :mod:`._chunks`); a cluster without members gets NaN.
    """
    k, f = centers.shape
    first = per_chunk(x, _chunks.median_pivots, centers, p)
    sizes = np.array([sum(part[c][0] for part in first) for c in range(k)], dtype=np.int64)
    low = np.full((k, f), -np.inf, dtype=centers.dtype)
    high = np.full((k, f), np.inf, dtype=centers.dtype)
    for c in range(k):
        n = sizes[c]
        if n == 0:
            continue
        lo_rank, hi_rank = (n - 1) // 2, n // 2  # the middle order statistics (0-based)
        for j in range(f):
            candidates = sorted(
                {float(v[i, j]) for part in first for (_, v, _) in [part[c]] for i in range(len(v))}
            )
            for value in candidates:
                # bounds on how many members are <= value, from each rank's pivots
                at_most = at_least = 0
                for part in first:
                    m, v, pos = part[c]
                    if m == 0:
                        continue
                    col = v[:, j]
                    below = pos[col <= value]
                    above = pos[col > value]
                    at_least += int(below.max()) + 1 if len(below) else 0
                    at_most += int(above.min()) if len(above) else m
                if at_most <= lo_rank:
                    low[c, j] = value
                if at_least >= hi_rank + 1 and high[c, j] == np.inf:
                    high[c, j] = value
    second = per_chunk(x, _chunks.median_window, centers, p, low, high)
    medians = np.full((k, f), np.nan, dtype=centers.dtype)
    for c in range(k):
        n = sizes[c]
        if n == 0:
            continue
        lo_rank, hi_rank = (n - 1) // 2, n // 2
        below = sum(part[c][0] for part in second)
        for j in range(f):
            window = np.sort(np.concatenate([part[c][1][j] for part in second]))
            a = window[lo_rank - below[j]]
            b = window[hi_rank - below[j]]
            medians[c, j] = (np.float64(a) + np.float64(b)) / 2
    return medians, sizes


class KMedians(KClustering):
    """k-medians: city-block distances; each center moves to its rows' per-feature median.

    Parameters as :class:`KMeans` ('probability_based' is k-medians++, weights the
    city-block distance). The medians are exact (numpy's, the mean of the middle two
    values for an even count): two passes per iteration, the second moving only the
    values near each median.

    >>> import dndask as ht, numpy as np
    >>> from dndask.cluster import KMedians
    >>> x = ht.array([[0.0], [1.0], [5.0], [9.0], [10.0], [30.0]], split=0)
    >>> fitted = KMedians(n_clusters=2, init=np.array([[0.0], [9.0]])).fit(x)
    >>> fitted.cluster_centers_.numpy().tolist()
    [[1.0], [10.0]]
    """

    _p = 1

    def _step(self, x, centers):
        medians, sizes = _medians(x, centers, self._p)
        return np.where(sizes[:, None] > 0, medians, centers).astype(centers.dtype)


class KMedoids(KClustering):
    """k-medoids: city-block distances; each center moves to the member closest to its
    members' median (Heat's rule), so the centers are always rows of the data.

    Stops when the centers no longer change (no ``tol``).

    >>> import dndask as ht, numpy as np
    >>> from dndask.cluster import KMedoids
    >>> x = ht.array([[0.0], [1.0], [3.0], [9.0], [10.0], [30.0]], split=0)
    >>> fitted = KMedoids(n_clusters=2, init=np.array([[0.0], [9.0]])).fit(x)
    >>> fitted.cluster_centers_.numpy().tolist()
    [[1.0], [10.0]]
    """

    _p = 1

    def __init__(self, n_clusters=8, init="random", max_iter=300, random_state=None):
        super().__init__(n_clusters, init, max_iter, None, random_state)
        del self.tol  # not a parameter: k-medoids stops when its centers stop changing

    def _converged(self, old, new) -> bool:
        return bool(np.array_equal(old, new))

    def _step(self, x, centers):
        medians, sizes = _medians(x, centers, self._p)
        targets = np.where(sizes[:, None] > 0, medians, centers).astype(centers.dtype)
        parts = per_chunk(x, _chunks.closest_member, centers, targets)
        dist = np.stack([p[0] for p in parts])  # (ranks, k)
        best = dist.argmin(axis=0)  # the first rank among equals: the lowest row index
        new = centers.copy()
        for c in range(centers.shape[0]):
            if sizes[c]:
                new[c] = parts[best[c]][1][c]
        return new
