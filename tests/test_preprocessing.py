"""dndask.preprocessing against scikit-learn on 1-5 ranks, splits None/0/1, empty ranks, float32/64."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn.preprocessing as skp
from _estimators import SCALERS
from conftest import skewed, values_of

import dndask as ht
from dndask.preprocessing import (
    MaxAbsScaler,
    MinMaxScaler,
    Normalizer,
    RobustScaler,
    StandardScaler,
)

RNG = np.random.default_rng(4)
DATA = RNG.normal(size=(13, 5)) * [1.0, 2.0, 3.0, 0.5, 0.0] + [0.0, 1.0, -2.0, 5.0, 3.0]
PAIRS = [(ours, getattr(skp, ours.__name__)) for ours in SCALERS]  # scikit-learn's of the name


SLOW = pytest.mark.slow


@pytest.mark.parametrize("n", [3, pytest.param(1, marks=SLOW), pytest.param(5, marks=SLOW)])
@pytest.mark.parametrize("split", [None, 0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scalers_match_scikit_learn(comm_of, n, split, dtype):
    x = DATA.astype(dtype)
    X = ht.array(x, split=split, comm=comm_of(n))
    results, expected = [], []
    for ours, theirs in PAIRS:
        fitted = ours().fit(X)
        Y = fitted.transform(X)
        assert Y.split == split and Y.to_dask().dtype == dtype
        results.append(Y)
        expected.append(theirs().fit(x.astype(np.float64)).transform(x.astype(np.float64)))
        if ours is not Normalizer:
            results.append(fitted.inverse_transform(Y))
            expected.append(x)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for got, want in zip(values_of(results), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    np.testing.assert_array_equal(X.numpy(), x)  # copy=True leaves the input alone


def test_fitted_attributes_match_scikit_learn(comm_of):
    X = skewed(ht.array(DATA, split=0, comm=comm_of(4)))  # rank 0 empty
    s = StandardScaler().fit(X)
    ref = skp.StandardScaler().fit(DATA)
    np.testing.assert_allclose(s.mean_.numpy(), ref.mean_, rtol=1e-12)
    np.testing.assert_allclose(s.var_.numpy(), ref.var_, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(s.scale_.numpy(), 1 / ref.scale_, rtol=1e-12)
    m = MinMaxScaler(feature_range=(-2.0, 3.0)).fit(X)
    mref = skp.MinMaxScaler(feature_range=(-2.0, 3.0)).fit(DATA)
    for name in ("data_min_", "data_max_", "data_range_"):
        np.testing.assert_allclose(getattr(m, name).numpy(), getattr(mref, name), atol=1e-12)
    # a constant feature: Heat's scale_ 1 (scikit-learn's the range's width); both map it to -2
    np.testing.assert_allclose(m.min_.numpy()[:-1], mref.min_[:-1], atol=1e-12)
    assert m.min_.numpy()[-1] == -2.0 - DATA[0, -1]
    r = RobustScaler(quantile_range=(10.0, 90.0)).fit(X)
    rref = skp.RobustScaler(quantile_range=(10.0, 90.0)).fit(DATA)
    np.testing.assert_allclose(r.center_.numpy(), rref.center_, rtol=1e-12)
    np.testing.assert_allclose(r.iqr_.numpy()[:-1], rref.scale_[:-1], rtol=1e-12)
    a = MaxAbsScaler().fit(X)
    np.testing.assert_allclose(a.max_abs_.numpy(), skp.MaxAbsScaler().fit(DATA).max_abs_)


def test_empty_ranks(comm_of):
    x = DATA[:3]
    X = ht.array(x, split=0, comm=comm_of(5))  # ranks 3 and 4 empty
    got = StandardScaler().fit_transform(X).numpy()
    np.testing.assert_allclose(got, skp.StandardScaler().fit_transform(x), atol=1e-12)
    got = Normalizer(norm="max").fit_transform(X).numpy()
    np.testing.assert_allclose(got, skp.Normalizer(norm="max").fit_transform(x), atol=1e-12)


@pytest.mark.parametrize("split", [0, 1])
def test_copy_false_writes_into_the_input(comm_of, split):
    X = ht.array(DATA, split=split, comm=comm_of(3))
    out = MinMaxScaler(copy=False).fit(X).transform(X)
    assert out is X
    np.testing.assert_allclose(X.numpy(), skp.MinMaxScaler().fit_transform(DATA), atol=1e-12)
    back = MinMaxScaler(copy=False).fit(ht.array(DATA, comm=comm_of(3)))
    back.inverse_transform(X)
    np.testing.assert_allclose(X.numpy(), DATA, atol=1e-12)


def test_bad_inputs(comm_of):
    comm = comm_of(2)
    X = ht.array(DATA, split=0, comm=comm)
    with pytest.raises(TypeError, match="`X` must be a DNDarray, got list"):
        StandardScaler().fit([[1.0]])
    with pytest.raises(ValueError, match=r"`X` must be 2-D \(samples, features\), got 3-D"):
        StandardScaler().fit(ht.zeros((2, 2, 2), comm=comm))
    with pytest.raises(TypeError, match="`X` must have a floating dtype"):
        MaxAbsScaler().fit(ht.zeros((3, 3), dtype=np.int32, comm=comm))
    fitted = StandardScaler().fit(X)
    with pytest.raises(ValueError, match=r"`X` must have 5 features \(as the data fitted\), got 2"):
        fitted.transform(ht.zeros((3, 2), comm=comm))
    with pytest.raises(ValueError, match="this RobustScaler is not fitted yet"):
        RobustScaler().transform(X)
    with pytest.raises(ValueError, match="`feature_range` must have its upper bound above"):
        MinMaxScaler(feature_range=(1.0, 1.0))
    with pytest.raises(ValueError, match="`quantile_range` must satisfy 0 <= low < high <= 100"):
        RobustScaler(quantile_range=(75.0, 25.0))
    with pytest.raises(ValueError, match="`with_centering` and `with_scaling` must not both"):
        RobustScaler(with_centering=False, with_scaling=False)
    with pytest.raises(NotImplementedError, match="`norm` must be 'l2', 'l1' or 'max', got 'l3'"):
        Normalizer(norm="l3")
    np.testing.assert_array_equal(X.numpy(), DATA)
    assert StandardScaler().get_params() == {"copy": True, "with_mean": True, "with_std": True}
