"""dndask.regression.Lasso against scikit-learn's Lasso and a direct numpy sweep."""

from __future__ import annotations

import numpy as np
import pytest

import dndask as ht
from dndask.base import is_regressor
from dndask.regression import Lasso

RNG = np.random.default_rng(8)
F = RNG.normal(size=(40, 4))
F = (F - F.mean(axis=0)) / np.sqrt(((F - F.mean(axis=0)) ** 2).mean(axis=0))
Y = F @ [1.5, 0.0, -2.0, 0.05] + 0.1 * RNG.normal(size=40)
Y -= Y.mean()
X = np.c_[np.ones(40), F]  # Heat's convention: the first column is the intercept's


def _numpy_sweeps(x, y, lam, sweeps):
    """Heat's update, written out with the full residual each time."""
    theta = np.zeros(x.shape[1])
    for _ in range(sweeps):
        for j in range(x.shape[1]):
            rho = np.mean(x[:, j] * (y - x @ theta + theta[j] * x[:, j]))
            theta[j] = rho if j == 0 else np.sign(rho) * max(abs(rho) - lam, 0)
    return theta


@pytest.mark.parametrize(("n", "split"), [(1, None), (3, 0), (5, 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lasso_matches_scikit_learn_and_the_sweep(comm_of, n, split, dtype):
    from sklearn.linear_model import Lasso as SkLasso

    comm = comm_of(n)
    x, y = (
        ht.array(X.astype(dtype), split=split, comm=comm),
        ht.array(Y.astype(dtype), split=split, comm=comm),
    )
    est = Lasso(lam=0.1, max_iter=500, tol=1e-10).fit(x, y)
    sk = SkLasso(alpha=0.1, fit_intercept=False, tol=1e-12, max_iter=10000).fit(F, Y)
    tol = 1e-4 if dtype == np.float32 else 1e-8
    theta = est.theta.numpy()
    assert theta.shape == (5, 1) and est.theta.to_dask().dtype == dtype
    np.testing.assert_allclose(theta[1:, 0], sk.coef_, atol=tol)
    assert abs(theta[0, 0]) < tol
    few = Lasso(lam=0.3, max_iter=3, tol=None).fit(x, y)
    np.testing.assert_allclose(few.theta.numpy()[:, 0], _numpy_sweeps(X, Y, 0.3, 3), atol=tol)
    assert few.n_iter == 3
    assert few.coef_.shape == (4, 1) and few.intercept_.shape == (1,)
    pred = few.predict(x)
    assert pred.shape == (40, 1) and pred.split == split
    np.testing.assert_allclose(pred.numpy()[:, 0], X @ _numpy_sweeps(X, Y, 0.3, 3), atol=10 * tol)


def test_empty_ranks_and_a_column_target(comm_of):
    x = ht.array(X[:3], split=0, comm=comm_of(5))
    y = ht.array(Y[:3].reshape(3, 1), split=0, comm=comm_of(5))
    est = Lasso(lam=0.05, max_iter=4, tol=None).fit(x, y)
    np.testing.assert_allclose(
        est.theta.numpy()[:, 0], _numpy_sweeps(X[:3], Y[:3], 0.05, 4), atol=1e-10
    )


def test_protocol_and_bad_inputs(comm_of):
    comm = comm_of(2)
    x, y = ht.array(X, split=0, comm=comm), ht.array(Y, split=0, comm=comm)
    est = Lasso()
    assert is_regressor(est) and est.get_params() == {"lam": 0.1, "max_iter": 100, "tol": 1e-6}
    assert est.theta is None and est.coef_ is None and est.intercept_ is None
    with pytest.raises(ValueError, match="this Lasso is not fitted yet"):
        est.predict(x)
    with pytest.raises(ValueError, match=r"`y` must have shape \(n_samples,\) or \(n_samples, 1\)"):
        est.fit(x, ht.zeros((40, 2), comm=comm))
    with pytest.raises(ValueError, match=r"`y` must have 40 samples \(as `x`\), got 3"):
        est.fit(x, ht.zeros(3, comm=comm))
    with pytest.raises(ValueError, match="`lam` must be a non-negative number, got -1"):
        Lasso(lam=-1).fit(x, y)
    bad = X.copy()
    bad[3, 2] = np.inf
    with pytest.raises(ValueError, match="`x` must be finite"):
        est.fit(ht.array(bad, split=0, comm=comm), y)
    assert est.theta is None
    np.testing.assert_array_equal(x.numpy(), X.astype(x.to_dask().dtype))
