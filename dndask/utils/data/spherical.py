"""Clustered point clouds: four balls along the space diagonal, or Gaussian clusters.

Both draw from dndask's random stream, so a seed gives the same data for any number
of ranks.

>>> from dndask.utils.data.spherical import create_spherical_dataset
>>> x = create_spherical_dataset(5, radius=1.0, offset=4.0, random_state=1)
>>> x.shape, x.split
((20, 3), 0)
"""

from __future__ import annotations

import numbers

import numpy as np

import dndask as ht

__all__ = ["create_clusters", "create_spherical_dataset"]


def _count(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"`{name}` must be at least 1, got {value}")
    return int(value)


def create_spherical_dataset(
    num_samples_cluster: int,
    radius: float = 1.0,
    offset: float = 4.0,
    dtype=np.float32,
    random_state: int | None = 1,
    comm: ht.Comm | None = None,
) -> ht.DNDarray:
    """Four balls of ``num_samples_cluster`` points each, split along the samples.

    The balls have radius ``radius`` (the radius of a point is uniform in it) and
    centers ``offset * (1, 1, 1)``, ``2 offset (1, 1, 1)``, ``-offset (1, 1, 1)`` and
    ``-2 offset (1, 1, 1)``; ``random_state`` seeds ``ht.random`` first (None: not).
    Integer dtypes truncate the coordinates.
    """
    n = _count(num_samples_cluster, "num_samples_cluster")
    if random_state is not None:
        ht.random.seed(random_state)
    r = ht.random.rand(n, 1, split=0, comm=comm, dtype=np.float64) * radius
    theta = ht.random.rand(n, 1, split=0, comm=comm, dtype=np.float64) * np.pi
    phi = ht.random.rand(n, 1, split=0, comm=comm, dtype=np.float64) * (2 * np.pi)
    ball = ht.concatenate(
        [r * ht.sin(theta) * ht.cos(phi), r * ht.sin(theta) * ht.sin(phi), r * ht.cos(theta)],
        axis=1,
    )
    parts = [ball + shift for shift in (offset, 2 * offset, -offset, -2 * offset)]
    return ht.concatenate(parts, axis=0).astype(dtype)


def _cluster_rows(block, bounds, means, factors, dtype, block_info=None):
    start = block_info[0]["array-location"][0][0] if block_info else 0
    rows = np.arange(start, start + block.shape[0])
    label = np.searchsorted(bounds, rows, side="right") - 1
    z = np.asarray(block, dtype=np.float64)
    out = means[label] + np.einsum("nij,nj->ni", factors[label], z)
    return out.astype(dtype)


def create_clusters(
    n_samples: int,
    n_features: int,
    n_clusters: int,
    cluster_mean,
    cluster_std,
    cluster_weight=None,
    dtype=np.float32,
    random_state: int | None = None,
    comm: ht.Comm | None = None,
) -> ht.DNDarray:
    """``n_samples`` points from ``n_clusters`` Gaussians, split along the samples.

    ``cluster_mean`` is ``(n_clusters, n_features)``; ``cluster_std`` is the clusters'
    covariance matrices ``(n_clusters, n_features, n_features)`` or one standard
    deviation per cluster ``(n_clusters,)``; ``cluster_weight`` (summing to 1, default
    equal) the clusters' shares of the samples, which come cluster by cluster.

    >>> import numpy as np
    >>> from dndask.utils.data.spherical import create_clusters
    >>> x = create_clusters(6, 2, 2, np.array([[0.0, 0.0], [10.0, 10.0]]), np.array([0.0, 0.0]))
    >>> x.numpy().tolist()
    [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [10.0, 10.0], [10.0, 10.0], [10.0, 10.0]]
    """
    n = _count(n_samples, "n_samples")
    f = _count(n_features, "n_features")
    k = _count(n_clusters, "n_clusters")
    means = np.asarray(cluster_mean, dtype=np.float64)
    if means.shape != (k, f):
        raise ValueError(f"`cluster_mean` must have shape {(k, f)}, got {means.shape}")
    std = np.asarray(cluster_std, dtype=np.float64)
    if std.shape == (k,):
        factors = np.eye(f)[None] * std[:, None, None]
    elif std.shape == (k, f, f):
        # a factor F with F F^T the covariance (covariances may be singular)
        values, vectors = np.linalg.eigh((std + np.swapaxes(std, 1, 2)) / 2)
        factors = vectors * np.sqrt(np.clip(values, 0, None))[:, None, :]
    else:
        raise ValueError(f"`cluster_std` must have shape {(k,)} or {(k, f, f)}, got {std.shape}")
    if cluster_weight is None:
        weights = np.full(k, 1 / k)
    else:
        weights = np.asarray(cluster_weight, dtype=np.float64)
        if weights.shape != (k,):
            raise ValueError(f"`cluster_weight` must have shape {(k,)}, got {weights.shape}")
        if not np.isclose(weights.sum(), 1.0) or (weights < 0).any():
            raise ValueError(
                f"`cluster_weight` must be non-negative and sum to 1, got sum {weights.sum()}"
            )
    sizes = np.floor(weights * n).astype(np.int64)
    sizes[0] += n - sizes.sum()
    bounds = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    if random_state is not None:
        ht.random.seed(random_state)
    z = ht.random.randn(n, f, split=0, comm=comm, dtype=np.float64)
    dtype = np.dtype(dtype)
    return z.map_blocks(_cluster_rows, bounds, means, factors, dtype, dtype=dtype)
