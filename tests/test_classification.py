"""dndask.classification.KNeighborsClassifier against scikit-learn, every split pair, empty ranks."""

from __future__ import annotations

import numpy as np
import pytest
from dask.core import get_dependencies
from sklearn.datasets import load_iris
from sklearn.neighbors import KNeighborsClassifier as SkKNN

import dndask as ht
from dndask.classification import KNeighborsClassifier

X, Y = load_iris(return_X_y=True)
X = X + np.random.default_rng(0).normal(scale=1e-6, size=X.shape)  # no distance ties


@pytest.mark.parametrize("n", [2, 5])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_predict_matches_scikit_learn(comm_of, n, dtype):
    comm = comm_of(n)
    x = X.astype(dtype)
    want = SkKNN(5).fit(x, Y).predict(x[::3])
    for sx in (None, 0, 1):
        for sy in (None, 0):
            knn = KNeighborsClassifier(5).fit(
                ht.array(x, split=sx, comm=comm), ht.array(Y, split=sy, comm=comm)
            )
            got = knn.predict(ht.array(x[::3], split=sx, comm=comm))
            assert got.split == (None if sx is None else 0)
            np.testing.assert_array_equal(got.numpy(), want)


def test_one_hot_labels_and_empty_ranks(comm_of):
    comm = comm_of(5)
    x, y = X[[0, 1, 2, 60, 61, 120]], Y[[0, 1, 2, 60, 61, 120]]
    onehot = KNeighborsClassifier.one_hot_encoding(ht.array(y, split=0, comm=comm))
    np.testing.assert_array_equal(onehot.numpy(), np.eye(3, dtype=np.int64)[y])
    knn = KNeighborsClassifier(3).fit(ht.array(x, split=0, comm=comm), onehot)
    np.testing.assert_array_equal(
        knn.predict(ht.array(x, split=0, comm=comm)).numpy(), SkKNN(3).fit(x, y).predict(x)
    )


def test_each_training_block_moves_once_per_rank(comm_of):
    comm = comm_of(3)
    train = ht.array(X, split=0, comm=comm).persist()
    knn = KNeighborsClassifier(3).fit(train, ht.array(Y, split=0, comm=comm))
    test = ht.array(X[:9], split=0, comm=comm).persist()
    out = knn.predict(test).to_dask()
    graph = dict(out.__dask_graph__())
    train_keys = {(knn.x_.to_dask().name, j, 0) for j in range(3)}
    for i, (key,) in enumerate([(k,) for k in out.__dask_keys__()]):
        deps = set(get_dependencies(graph, key))
        assert train_keys <= deps and (test.to_dask().name, i, 0) in deps


def test_bad_inputs(comm_of):
    comm = comm_of(2)
    x, y = ht.array(X, split=0, comm=comm), ht.array(Y, split=0, comm=comm)
    with pytest.raises(ValueError, match="this KNeighborsClassifier is not fitted yet"):
        KNeighborsClassifier().predict(x)
    with pytest.raises(ValueError, match=r"`y` must have shape \(150,\) or \(150, n_classes\)"):
        KNeighborsClassifier().fit(x, ht.zeros((2, 2, 2), comm=comm))
    with pytest.raises(
        ValueError, match="`n_neighbors` must be at most the number of samples, 150"
    ):
        KNeighborsClassifier(200).fit(x, y)
    with pytest.raises(TypeError, match="`n_neighbors` must be an int, got float"):
        KNeighborsClassifier(2.5).fit(x, y)
    fitted = KNeighborsClassifier(3).fit(x, y)
    with pytest.raises(ValueError, match=r"`x` must have 4 features \(as in fit\), got 3"):
        fitted.predict(ht.zeros((2, 3), comm=comm))
    assert fitted.get_params() == {"n_neighbors": 3}
