"""dndask.naive_bayes.GaussianNB against scikit-learn on iris, 1-5 ranks, empty ranks, partial fits."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.naive_bayes import GaussianNB as SkGaussianNB

import dndask as ht
from dndask.base import is_classifier
from dndask.naive_bayes import GaussianNB

X, Y = load_iris(return_X_y=True)


@pytest.mark.parametrize(("n", "split"), [(1, None), (3, 0), (5, 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fit_and_predict_match_scikit_learn(comm_of, n, split, dtype):
    comm = comm_of(n)
    x = X.astype(dtype)
    gnb = GaussianNB().fit(ht.array(x, split=split, comm=comm), ht.array(Y, split=split, comm=comm))
    sk = SkGaussianNB().fit(x, Y)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_array_equal(gnb.classes_.numpy(), sk.classes_)
    np.testing.assert_allclose(gnb.theta_.numpy(), sk.theta_, rtol=tol)
    np.testing.assert_allclose(gnb.var_.numpy(), sk.var_, rtol=tol)
    np.testing.assert_allclose(gnb.class_prior_.numpy(), sk.class_prior_, rtol=tol)
    assert gnb.epsilon_ == pytest.approx(sk.epsilon_, rel=tol)
    test = ht.array(x[::4], split=split, comm=comm)
    np.testing.assert_array_equal(gnb.predict(test).numpy(), sk.predict(x[::4]))
    np.testing.assert_allclose(gnb.predict_proba(test).numpy(), sk.predict_proba(x[::4]), atol=1e-4)
    np.testing.assert_allclose(
        np.exp(gnb.predict_log_proba(test).numpy()), sk.predict_proba(x[::4]), atol=1e-4
    )


def test_partial_fit_weights_and_priors(comm_of):
    comm = comm_of(4)
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=150)
    gnb = GaussianNB(priors=[0.2, 0.3, 0.5])
    gnb.partial_fit(
        ht.array(X[:80], split=0, comm=comm),
        ht.array(Y[:80], split=0, comm=comm),
        classes=ht.array([0, 1, 2]),
        sample_weight=ht.array(w[:80], split=0, comm=comm),
    )
    gnb.partial_fit(
        ht.array(X[80:], split=0, comm=comm),
        ht.array(Y[80:], split=0, comm=comm),
        sample_weight=ht.array(w[80:], split=0, comm=comm),
    )
    sk = SkGaussianNB(priors=[0.2, 0.3, 0.5])
    sk.partial_fit(X[:80], Y[:80], classes=[0, 1, 2], sample_weight=w[:80])
    sk.partial_fit(X[80:], Y[80:], sample_weight=w[80:])
    np.testing.assert_allclose(gnb.theta_.numpy(), sk.theta_, rtol=1e-10)
    np.testing.assert_allclose(gnb.var_.numpy(), sk.var_, rtol=1e-10)
    np.testing.assert_allclose(gnb.class_count_.numpy(), sk.class_count_, rtol=1e-10)
    np.testing.assert_allclose(gnb.class_prior_.numpy(), [0.2, 0.3, 0.5])


def test_empty_ranks(comm_of):
    x, y = X[[0, 1, 50, 51]], Y[[0, 1, 50, 51]]
    gnb = GaussianNB().fit(
        ht.array(x, split=0, comm=comm_of(5)), ht.array(y, split=0, comm=comm_of(5))
    )
    np.testing.assert_allclose(gnb.theta_.numpy(), SkGaussianNB().fit(x, y).theta_)


def test_protocol_and_bad_inputs(comm_of):
    comm = comm_of(2)
    x, y = ht.array(X, split=0, comm=comm), ht.array(Y, split=0, comm=comm)
    gnb = GaussianNB()
    assert is_classifier(gnb) and gnb.get_params() == {"priors": None, "var_smoothing": 1e-9}
    with pytest.raises(AttributeError):
        gnb.classes_  # noqa: B018 (not fitted: no attribute, as scikit-learn)
    with pytest.raises(ValueError, match="this GaussianNB is not fitted yet"):
        gnb.predict(x)
    with pytest.raises(ValueError, match="`classes` must be given on the first call"):
        gnb.partial_fit(x, y)
    with pytest.raises(ValueError, match="`y` must be 1-D, got 2-D"):
        gnb.fit(x, ht.zeros((150, 1), comm=comm))
    with pytest.raises(ValueError, match=r"`sample_weight` must have shape \(150,\)"):
        gnb.fit(x, y, sample_weight=ht.ones(3, comm=comm))
    with pytest.raises(ValueError, match="`priors` must sum to 1"):
        GaussianNB(priors=[0.5, 0.5, 0.5]).fit(x, y)
    fitted = GaussianNB().fit(x, y)
    with pytest.raises(ValueError, match="`y` has labels outside the fitted classes"):
        fitted.partial_fit(x, y + 5)
    with pytest.raises(ValueError, match=r"`x` must have 4 features \(as in fit\), got 2"):
        fitted.predict(ht.zeros((3, 2), comm=comm))
    np.testing.assert_array_equal(fitted.classes_.numpy(), [0, 1, 2])
