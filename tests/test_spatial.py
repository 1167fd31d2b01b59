"""dndask.spatial (cdist, rbf, manhattan) against scipy, on 1-5 ranks, every split, empty ranks."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import skewed, values_of
from dask.core import get_dependencies
from scipy.spatial.distance import cdist as scipy_cdist

import dndask as ht
from dndask.spatial import cdist, manhattan, rbf

RNG = np.random.default_rng(27)
A = RNG.normal(size=(7, 3))
B = RNG.normal(size=(5, 3))


def _oracles(a, b, sigma=1.3):
    return {
        "cdist": scipy_cdist(a, b),
        "manhattan": scipy_cdist(a, b, "cityblock"),
        "rbf": np.exp(-scipy_cdist(a, b, "sqeuclidean") / (2 * sigma**2)),
    }


def _computed(X, Y, expand, sigma=1.3):
    return {
        "cdist": cdist(X, Y, quadratic_expansion=expand),
        "manhattan": manhattan(X, Y, expand=expand),
        "rbf": rbf(X, Y, sigma=sigma, quadratic_expansion=expand),
    }


@pytest.mark.parametrize("n", [2, pytest.param(1, marks=pytest.mark.slow), 5])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_split_pair_matches_scipy(comm_of, n, dtype):
    comm = comm_of(n)
    a, b = A.astype(dtype), B.astype(dtype)
    want = _oracles(a, b)
    got, expected = [], []
    for sx in (None, 0, 1):
        for sy in (None, 0, 1):
            X, Y = ht.array(a, split=sx, comm=comm), ht.array(b, split=sy, comm=comm)
            for expand in (False, True):
                for name, d in _computed(X, Y, expand).items():
                    assert d.shape == (7, 5)
                    assert d.split == (0 if sx in (0, 1) else 1 if sy in (0, 1) else None)
                    assert d.to_dask().dtype == dtype
                    got.append(d)
                    expected.append((want[name], expand, dtype))
    for value, (oracle, expand, kind) in zip(values_of(got), expected, strict=True):
        tol = 1e-3 if (expand or kind == np.float32) else 1e-12
        np.testing.assert_allclose(value, oracle, rtol=tol, atol=tol)


@pytest.mark.parametrize("split", [None, 0])
def test_distances_of_x_with_itself(comm_of, split):
    comm = comm_of(3)
    X = ht.array(A, split=split, comm=comm)
    d = cdist(X)
    assert d.split == split and d.shape == (7, 7)
    np.testing.assert_allclose(d.numpy(), scipy_cdist(A, A), atol=1e-12)
    np.testing.assert_array_equal(np.diag(d.numpy()), 0)  # the direct kernel is exact here


def test_empty_and_skewed_ranks(comm_of):
    comm = comm_of(5)
    a = A[:3]
    X = ht.array(a, split=0, comm=comm)  # ranks 3 and 4 empty
    Y = skewed(ht.array(B, split=0, comm=comm))  # rank 0 empty
    d = cdist(X, Y)
    assert d.lshape_map[:, 0].tolist() == X.lshape_map[:, 0].tolist()
    np.testing.assert_allclose(d.numpy(), scipy_cdist(a, B), atol=1e-6)
    np.testing.assert_allclose(manhattan(Y, X).numpy(), scipy_cdist(B, a, "cityblock"), atol=1e-6)


def test_integer_inputs_compute_in_a_float_type(comm_of):
    comm = comm_of(2)
    X = ht.array(np.arange(12, dtype=np.int32).reshape(4, 3), split=0, comm=comm)
    d = cdist(X)
    assert d.to_dask().dtype == np.float64  # numpy's rule: int32 with float32 is float64
    np.testing.assert_allclose(d.numpy(), scipy_cdist(X.numpy(), X.numpy()))
    assert cdist(X, dtype=np.float32).to_dask().dtype == np.float32


def test_each_block_moves_once_per_rank_pair(comm_of):
    """Output chunk i is one task reading X's block i and every block of Y (no gather)."""
    comm = comm_of(4)
    X = ht.array(A, split=0, comm=comm).persist()
    Y = ht.array(B, split=0, comm=comm).persist()
    d = cdist(X, Y)
    graph = dict(d.to_dask().__dask_graph__())
    x_keys = {k for k in X.to_dask().__dask_keys__() for k in (k if isinstance(k, list) else [k])}
    y_keys = {k for k in Y.to_dask().__dask_keys__() for k in (k if isinstance(k, list) else [k])}
    out_keys = [k[0] for k in d.to_dask().__dask_keys__()]
    assert len(out_keys) == 4
    for i, key in enumerate(out_keys):
        deps = set(get_dependencies(graph, key))
        assert deps == {(X.to_dask().name, i, 0)} | y_keys
        assert deps & x_keys == {(X.to_dask().name, i, 0)}


def test_bad_inputs_leave_arrays_unchanged(comm_of):
    comm = comm_of(2)
    X = ht.array(A, split=0, comm=comm)
    Y3 = ht.array(np.ones((2, 2, 2)), comm=comm)
    with pytest.raises(TypeError, match="`X` must be a DNDarray, got ndarray"):
        cdist(A)
    with pytest.raises(ValueError, match=r"`Y` must be 2-D \(samples, features\), got shape"):
        cdist(X, Y3)
    with pytest.raises(ValueError, match="same number of features, got 3 and 2"):
        cdist(X, ht.ones((4, 2), comm=comm))
    with pytest.raises(ValueError, match="`sigma` must be positive, got 0"):
        rbf(X, sigma=0)
    with pytest.raises(TypeError, match="`quadratic_expansion` must be a bool"):
        cdist(X, quadratic_expansion="yes")
    with pytest.raises(TypeError, match="`dtype` must be a floating dtype, got int32"):
        cdist(X, dtype=np.int32)
    with pytest.raises(TypeError, match="`X` must have a real numeric dtype"):
        cdist(ht.array(np.ones((2, 2), dtype=np.complex64), comm=comm))
    np.testing.assert_array_equal(X.numpy(), A.astype(X.to_dask().dtype))
    assert X.split == 0
