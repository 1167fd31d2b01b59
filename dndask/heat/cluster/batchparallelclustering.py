"""Heat's ``heat.cluster.batchparallelclustering``: the estimators and Heat's single-process
helpers ``_kmex`` and ``_initialize_plus_plus`` on torch tensors (over the core's numpy
k-clustering of one batch, :func:`dndask.cluster._chunks.local_kcluster`)."""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from dndask import _torch
from dndask.cluster import _chunks
from dndask.heat.cluster._estimators import BatchParallelKMeans, BatchParallelKMedians

__all__ = ["BatchParallelKMeans", "BatchParallelKMedians"]


def _as_numpy(t) -> np.ndarray:
    return t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)


def _initialize_plus_plus(X, n_clusters, p, random_state=None, weights=1, max_samples=2**24 - 1):
    """Heat's single-process k-means++ (k-medians++ for ``p=1``): ``n_clusters`` rows of ``X``."""
    torch = _torch.torch()
    points = _as_numpy(X)
    w = np.broadcast_to(np.asarray(_as_numpy(weights), dtype=np.float64), points.shape[:1])
    rng = np.random.default_rng(random_state)
    chosen = [int(rng.integers(points.shape[0]))]
    best = _chunks.distances(points, points[chosen], p)[:, 0]
    for _ in range(1, n_clusters):
        prob = best * w
        total = prob.sum()
        i = (
            int(rng.choice(len(prob), p=prob / total))
            if total > 0
            else int(rng.integers(len(prob)))
        )
        chosen.append(i)
        best = np.minimum(best, _chunks.distances(points, points[[i]], p)[:, 0])
    return torch.as_tensor(points[chosen])


def _kmex(X, p, n_clusters, init, max_iter, tol, random_state=None, weights=1.0):
    """Heat's single-process k-means (``p=2``) / k-medians (``p=1``): ``(centers, iterations)``."""
    torch = _torch.torch()
    points = _as_numpy(X)
    if hasattr(init, "shape") and not isinstance(init, str):
        if tuple(init.shape) != (n_clusters, points.shape[1]):
            raise ValueError("`init` must have shape (n_clusters, n_features) if a tensor")
        centers = _as_numpy(init).astype(points.dtype)
    elif init == "++":
        centers = _as_numpy(_initialize_plus_plus(X, n_clusters, p, random_state, weights))
    elif init == "random":
        rng = np.random.default_rng(random_state)
        centers = points[rng.integers(points.shape[0], size=n_clusters)]
    else:
        raise ValueError(f"`init` must be a tensor of centers, '++' or 'random', got {init!r}")
    w = np.broadcast_to(np.asarray(_as_numpy(weights), dtype=np.float64), points.shape[:1])
    iterations = 0
    for _ in range(max_iter):
        iterations += 1
        labels = _chunks.nearest(points, centers, p)
        new = centers.copy()
        for c in range(n_clusters):
            members = labels == c
            if members.any():
                if p == 1:
                    new[c] = _chunks.weighted_median(points[members], w[members])
                else:
                    new[c] = np.average(points[members], axis=0, weights=w[members])
        done = np.allclose(new, centers, atol=tol)
        centers = new
        if done:
            break
    return torch.as_tensor(centers), iterations


class _BatchParallelKCluster(BatchParallelKMeans):
    """Heat's base class, constructed as Heat's: ``(p, n_clusters, init, max_iter, tol,
    random_state, n_procs_to_merge)``; a ``p`` other than 1 or 2 warns and acts as 2."""

    def __init__(self, p, n_clusters, init, max_iter, tol, random_state, n_procs_to_merge):
        if p not in (1, 2):
            warnings.warn(
                f"`p` should be 1 (k-medians) or 2 (k-means), got {p}; proceeding as for 2",
                UserWarning,
                stacklevel=2,
            )
        if (
            isinstance(tol, numbers.Real)
            and not isinstance(tol, bool)
            and not isinstance(tol, float)
        ):
            raise TypeError(f"`tol` must be a float, got {type(tol).__name__}")
        self._p = 1 if p == 1 else 2
        super().__init__(n_clusters, self._plus_plus, max_iter, tol, random_state, n_procs_to_merge)
        self.init = init
