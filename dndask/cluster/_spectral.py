"""Spectral clustering: k-means on the leading eigenvectors of the samples' graph Laplacian.

The Laplacian (:class:`dndask.graph.Laplacian`) stays split along its rows; the
eigen-solvers touch it only through products with a few vectors, one pass each
(each rank multiplies its rows), and solve the small projected problem in the driver:
Lanczos with full reorthogonalization, or a randomized range finder.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

import dndask as ht
from dndask.base import (
    BaseEstimator,
    ClusteringMixin,
    check_fitted,
    check_samples,
    per_chunk,
    random_generator,
)
from dndask.graph import Laplacian
from dndask.spatial import cdist, rbf

from ._kcluster import KMeans

__all__ = ["Spectral"]


def _times(block, vectors) -> np.ndarray:
    return np.asarray(block, dtype=vectors.dtype) @ vectors


def _product(L: ht.DNDarray, vectors: np.ndarray) -> np.ndarray:
    """``L @ vectors`` in the driver (``L`` split along its rows): one pass."""
    return np.concatenate(per_chunk(L, _times, vectors))


def _lanczos(L: ht.DNDarray, steps: int, seed) -> tuple[np.ndarray, np.ndarray]:
    """Eigenpairs of ``L`` from ``steps`` Lanczos steps (full reorthogonalization), ascending.

    The start vector is random (``seed``): Heat's constant one is an eigenvector of a
    regular graph's Laplacian, where Lanczos stops after one step.
    """
    n = L.shape[0]
    steps = max(1, min(steps, n))
    V = np.zeros((n, steps))
    alpha, beta = np.zeros(steps), np.zeros(steps)
    v = np.random.default_rng(seed).standard_normal(n)
    v /= np.linalg.norm(v)
    used = steps
    for j in range(steps):
        V[:, j] = v
        w = _product(L, v[:, None])[:, 0]
        alpha[j] = w @ v
        w = w - V[:, : j + 1] @ (V[:, : j + 1].T @ w)
        w = w - V[:, : j + 1] @ (V[:, : j + 1].T @ w)
        if j + 1 < steps:
            beta[j] = np.linalg.norm(w)
            if beta[j] < 1e-10:
                used = j + 1
                break
            v = w / beta[j]
    T = np.diag(alpha[:used]) + np.diag(beta[: used - 1], 1) + np.diag(beta[: used - 1], -1)
    values, vectors = np.linalg.eigh(T)
    return values, V[:, :used] @ vectors


def _randomized(L: ht.DNDarray, rank: int, oversamples: int, power: int, seed) -> tuple:
    """The ``rank`` smallest eigenpairs of the normalized Laplacian ``L``, ascending.

    A randomized range finder (``rank + oversamples`` columns, ``power`` iterations)
    sees the dominant eigenvectors, so it runs on ``2 I - L`` (its eigenvalues
    ``2 - lambda`` are in ``[0, 2]``, the largest ones ``L``'s smallest).
    """
    n = L.shape[0]
    width = min(n, rank + oversamples)

    def shifted(q):
        return 2 * q - _product(L, q)

    omega = np.random.default_rng(seed).standard_normal((n, width))
    Q, _ = np.linalg.qr(shifted(omega))
    for _ in range(power):
        Q, _ = np.linalg.qr(shifted(Q))
    B = Q.T @ shifted(Q)
    mu, vectors = np.linalg.eigh((B + B.T) / 2)
    order = np.argsort(-mu)[: min(rank, width)]
    return 2 - mu[order], Q @ vectors[:, order]


class Spectral(ClusteringMixin, BaseEstimator):
    """Spectral clustering (Heat's parameters).

    Parameters
    ----------
    n_clusters : int or None
        None: one more than the position of the largest gap between eigenvalues.
    gamma : float
        The rbf kernel's ``exp(-gamma |x - y|^2)``.
    metric : {'rbf', 'euclidean'}
    laplacian : {'fully_connected', 'eNeighbour'}
    threshold : float
    boundary : {'upper', 'lower'}
    eigen_solver : {'randomized', 'lanczos'}
    reigh_rank, reigh_n_oversamples, reigh_power_iter : int
        The randomized solver's rank, extra columns and power iterations.
    lanczos_n_iter : int
        The Lanczos solver's steps.
    assign_labels : {'kmeans'}
    random_state : int or None
        Seeds the randomized solver and k-means (dndask's random stream).

    Examples
    --------
    >>> import dndask as ht, numpy as np
    >>> from dndask.cluster import Spectral
    >>> x = ht.array(np.r_[np.zeros((5, 2)), np.full((5, 2), 5.0)], split=0)
    >>> spectral = Spectral(n_clusters=2, eigen_solver="lanczos", random_state=0)
    >>> labels = spectral.fit_predict(x).numpy()
    >>> len(set(labels[:5])), len(set(labels[5:])), bool(labels[0] != labels[5])
    (1, 1, True)
    """

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
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.gamma = gamma
        self.metric = metric
        self.laplacian = laplacian
        self.threshold = threshold
        self.boundary = boundary
        self.eigen_solver = eigen_solver
        self.reigh_rank = reigh_rank
        self.reigh_n_oversamples = reigh_n_oversamples
        self.reigh_power_iter = reigh_power_iter
        self.lanczos_n_iter = lanczos_n_iter
        self.assign_labels = assign_labels
        self.random_state = random_state
        self.labels_ = None
        self.cluster_centers_ = None
        self.eigenvalues_ = None

    def check_params(self) -> None:
        """NotImplementedError for an unknown solver, metric or label assignment; ValueError
        for a randomized rank below ``n_clusters`` (Heat's checks, at construction there)."""
        if self.eigen_solver not in ("lanczos", "randomized"):
            raise NotImplementedError(
                f"`eigen_solver` must be 'lanczos' or 'randomized', got {self.eigen_solver!r}"
            )
        if self.metric not in ("rbf", "euclidean"):
            raise NotImplementedError(f"`metric` must be 'rbf' or 'euclidean', got {self.metric!r}")
        if self.assign_labels != "kmeans":
            raise NotImplementedError(
                f"`assign_labels` must be 'kmeans', got {self.assign_labels!r}"
            )
        k = self.n_clusters
        if k is not None and (isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1):
            raise ValueError(f"`n_clusters` must be a positive int or None, got {k!r}")
        if self.eigen_solver == "randomized" and self.reigh_rank < (k or 1):
            raise ValueError(
                f"`reigh_rank` must be at least `n_clusters` ({k}), got {self.reigh_rank}"
            )
        if not self.gamma > 0:
            raise ValueError(f"`gamma` must be positive, got {self.gamma}")

    def _graph(self) -> Laplacian:
        if self.metric == "rbf":
            sigma = math.sqrt(1 / (2 * self.gamma))

            def similarity(a):
                return rbf(a, sigma=sigma, quadratic_expansion=True)
        else:

            def similarity(a):
                return cdist(a, quadratic_expansion=True)

        return Laplacian(
            similarity,
            definition="norm_sym",
            mode=self.laplacian,
            threshold_key=self.boundary,
            threshold_value=self.threshold,
        )

    def _embedding(self, x: ht.DNDarray) -> tuple[np.ndarray, np.ndarray]:
        L = self._graph().construct(x).persist()
        seed = int(random_generator(self.random_state).integers(2**63 - 1))
        if self.eigen_solver == "lanczos":
            return _lanczos(L, self.lanczos_n_iter, seed)
        return _randomized(
            L, self.reigh_rank, self.reigh_n_oversamples, self.reigh_power_iter, seed
        )

    def fit(self, x: ht.DNDarray, y=None) -> Spectral:
        """Cluster the rows of ``x`` (see the class)."""
        self.check_params()
        x = check_samples(x, min_samples=2)
        k = self.n_clusters
        if k is not None and k > x.shape[0]:
            raise ValueError(
                f"`n_clusters` must be at most the number of samples, {x.shape[0]}, got {k}"
            )
        values, vectors = self._embedding(x)
        if k is None:
            k = int(np.argmax(np.diff(values))) + 1 if len(values) > 1 else 1
        k = min(k, vectors.shape[1], x.shape[0])
        dtype = x.to_dask().dtype
        dtype = dtype if np.issubdtype(dtype, np.floating) else np.dtype(np.float64)
        components = ht.array(vectors[:, :k].astype(dtype), split=0, comm=x.comm)
        km = KMeans(n_clusters=k, init="probability_based", random_state=self.random_state)
        km.fit(components)
        self.labels_ = km.labels_
        self.cluster_centers_ = km.cluster_centers_
        self.eigenvalues_ = values
        self._n_features = x.shape[1]
        return self

    def predict(self, x: ht.DNDarray) -> ht.DNDarray:
        """The labels of the fitted samples: a spectral embedding has no out-of-sample map,
        so ``x`` must be the data ``fit`` saw (its shape is checked)."""
        check_fitted(self, "labels_")
        x = check_samples(x, n_features=self._n_features)
        if x.shape[0] != self.labels_.shape[0]:
            raise ValueError(
                f"`x` must be the fitted data, {self.labels_.shape[0]} samples, got {x.shape[0]}"
            )
        return self.labels_
