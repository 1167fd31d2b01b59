"""dndask.graph.Laplacian against scipy's csgraph Laplacian, and the synthetic data sets."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse.csgraph import laplacian as scipy_laplacian
from scipy.spatial.distance import cdist as scipy_cdist

import dndask as ht
from dndask.graph import Laplacian
from dndask.spatial import rbf
from dndask.utils.data import matrixgallery, spherical

RNG = np.random.default_rng(3)
DATA = RNG.normal(size=(9, 2))


def _adjacency(mode, key="upper", value=1.0, weighted=True):
    s = np.exp(-scipy_cdist(DATA, DATA, "sqeuclidean") / 2)
    np.fill_diagonal(s, 0)
    if mode == "eNeighbour":
        keep = s < value if key == "upper" else s > value
        s = np.where(keep, s, 0) if weighted else keep.astype(float)
        np.fill_diagonal(s, 0)
    return s


@pytest.mark.parametrize("n", [1, 4, 5])
@pytest.mark.parametrize(
    ("definition", "mode", "key", "value", "weighted"),
    [
        ("norm_sym", "fully_connected", "upper", 1.0, True),
        ("simple", "fully_connected", "upper", 1.0, True),
        ("simple", "eNeighbour", "lower", 0.3, True),
        ("norm_sym", "eNeighbour", "upper", 0.5, False),
    ],
)
def test_laplacian_matches_scipy(comm_of, n, definition, mode, key, value, weighted):
    X = ht.array(DATA, split=0, comm=comm_of(n))
    L = Laplacian(lambda a: rbf(a, sigma=1.0), weighted, definition, mode, key, value).construct(X)
    assert L.split == 0 and L.shape == (9, 9)
    want = scipy_laplacian(_adjacency(mode, key, value, weighted), normed=definition == "norm_sym")
    np.testing.assert_allclose(L.numpy(), want, atol=1e-6)


def test_laplacian_bad_arguments():
    with pytest.raises(NotImplementedError, match="`definition` must be 'simple' or 'norm_sym'"):
        Laplacian(lambda a: a, definition="norm_rw")
    with pytest.raises(
        NotImplementedError, match="`mode` must be 'eNeighbour' or 'fully_connected'"
    ):
        Laplacian(lambda a: a, mode="kNN")
    with pytest.raises(ValueError, match="`threshold_key` must be 'upper' or 'lower', got 'both'"):
        Laplacian(lambda a: a, threshold_key="both")
    with pytest.raises(TypeError, match="`similarity` must be callable"):
        Laplacian(3)


def test_spherical_data_is_the_same_for_any_rank_count(comm_of):
    a = spherical.create_spherical_dataset(
        6, radius=1.0, offset=4.0, random_state=5, comm=comm_of(1)
    )
    b = spherical.create_spherical_dataset(
        6, radius=1.0, offset=4.0, random_state=5, comm=comm_of(4)
    )
    assert a.shape == (24, 3) and b.split == 0
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    for i, center in enumerate([4.0, 8.0, -4.0, -8.0]):
        ball = a.numpy()[6 * i : 6 * i + 6]
        assert (np.linalg.norm(ball - center, axis=1) <= 1.0 + 1e-6).all()


def test_gaussian_clusters(comm_of):
    means = np.array([[0.0, 0.0], [50.0, 50.0]])
    x = spherical.create_clusters(
        40, 2, 2, means, np.array([1.0, 2.0]), [0.25, 0.75], random_state=1, comm=comm_of(3)
    )
    values = x.numpy()
    assert x.shape == (40, 2) and x.to_dask().dtype == np.float32
    assert (
        np.abs(values[:10].mean(axis=0)).max() < 1.5
        and np.abs(values[10:].mean(axis=0) - 50).max() < 2.5
    )
    with pytest.raises(ValueError, match=r"`cluster_mean` must have shape \(2, 2\)"):
        spherical.create_clusters(40, 2, 2, np.zeros(3), np.ones(2))
    with pytest.raises(ValueError, match="`cluster_weight` must be non-negative and sum to 1"):
        spherical.create_clusters(40, 2, 2, means, np.ones(2), [0.5, 0.6])


def test_matrix_gallery(comm_of):
    comm = comm_of(3)
    p = matrixgallery.parter(6, split=0, comm=comm, dtype=np.float64)
    i, j = np.indices((6, 6))
    np.testing.assert_allclose(p.numpy(), 1 / (j - i + 0.5))
    h = matrixgallery.hermitian(5, dtype=np.float64, split=1, comm=comm).numpy()
    np.testing.assert_allclose(h, h.T)
    q = matrixgallery.random_orthogonal(7, 4, split=0, comm=comm, dtype=np.float64).numpy()
    np.testing.assert_allclose(q.T @ q, np.eye(4), atol=1e-10)
    s = ht.array([5.0, 2.0, 0.5], comm=comm)
    A, _ = matrixgallery.random_known_singularvalues(8, 6, s, split=1, comm=comm, dtype=np.float64)
    np.testing.assert_allclose(np.linalg.svd(A.numpy(), compute_uv=False)[:3], [5.0, 2.0, 0.5])
    A, _ = matrixgallery.random_known_rank(8, 6, 2, comm=comm, dtype=np.float64)
    assert np.linalg.matrix_rank(A.numpy(), tol=1e-8) == 2
    with pytest.raises(RuntimeError, match="no 4 x 7 matrix has orthonormal columns"):
        matrixgallery.random_orthogonal(4, 7)
    with pytest.raises(ValueError, match="`split` must be None, 0 or 1, got 2"):
        matrixgallery.parter(4, split=2)
