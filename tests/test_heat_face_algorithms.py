"""The Heat face's algorithm modules: Heat's names, defaults, checks, shapes and dtypes."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import dndask.heat as ht

RNG = np.random.default_rng(11)
DATA = np.concatenate([RNG.normal(size=(10, 3)), RNG.normal(size=(10, 3)) + 8])


def test_the_modules_are_real_modules():
    for name in ("cluster", "spatial", "preprocessing", "regression", "naive_bayes"):
        module = importlib.import_module(f"dndask.heat.{name}")
        assert getattr(ht, name) is module
    from dndask.heat.cluster.batchparallelclustering import _kmex  # Heat's helper

    assert callable(_kmex)
    assert ht.spatial.distance.cdist is ht.spatial.cdist
    assert ht.regression.lasso.Lasso is ht.regression.Lasso
    assert ht.utils.data.spherical.create_spherical_dataset is not None


def test_kmeans_face(comm_of):
    x = ht.array(DATA.astype(np.int32), split=0, comm=comm_of(3))
    km = ht.cluster.KMeans(n_clusters=2, init="kmeans++", random_state=0).fit(x)
    assert km.get_params()["init"] == "probability_based"
    assert isinstance(km.cluster_centers_, ht.DNDarray)
    assert km.cluster_centers_.dtype is ht.float32  # Heat clusters integers in float32
    assert km.labels_.shape == (20, 1) and km.labels_.split == 0
    labels = km.labels_.numpy()[:, 0]
    assert len(set(labels[:10])) == 1 and len(set(labels[10:])) == 1 and labels[0] != labels[10]
    assert km.predict(x).shape == (20, 1)
    assert ht.is_estimator(km) and ht.is_clusterer(km)
    with pytest.raises(NotImplementedError, match="split along 1 is not supported"):
        km.fit(ht.array(DATA, split=1, comm=comm_of(3)))
    with pytest.raises(ValueError, match="`init` must be a str or a DNDarray, got ndarray"):
        ht.cluster.KMeans(n_clusters=2, init=np.zeros((2, 3))).fit(x)
    with pytest.raises(ValueError, match="`oversampling` must be at least 2, got -1"):
        km.fit(x, oversampling=-1)


def test_batch_parallel_face(comm_of):
    x = ht.array(DATA.astype(np.float32), split=0, comm=comm_of(2))
    bp = ht.cluster.BatchParallelKMeans(n_clusters=2, random_state=1).fit(x)
    labels = bp.predict(x)
    assert labels.dtype is ht.int32 and labels.shape == (20, 1) and labels.split == 0
    assert bp.cluster_centers_.dtype is ht.float32 and bp.cluster_centers_.split is None
    assert isinstance(bp.functional_value_, float) and isinstance(bp.n_iter_, int)
    with pytest.raises(NotImplementedError, match="`init='random'` is not implemented"):
        ht.cluster.BatchParallelKMedians(init="random")
    with pytest.raises(TypeError, match="`n_clusters` must be an int, got str"):
        ht.cluster.BatchParallelKMeans(n_clusters="abc")
    with pytest.raises(RuntimeError, match="`fit` must be called before `predict`"):
        ht.cluster.BatchParallelKMeans().predict(x)
    with pytest.raises(ValueError, match="must be split along axis 0 for fit"):
        ht.cluster.BatchParallelKMeans().fit(ht.array(DATA, split=1, comm=comm_of(2)))


def test_spatial_face(comm_of):
    comm = comm_of(2)
    x = ht.array(np.arange(12, dtype=np.int32).reshape(4, 3), split=0, comm=comm)
    d = ht.spatial.cdist(x)
    assert d.dtype is ht.float32 and d.split == 0  # Heat: int32 computes in float32
    assert ht.spatial.manhattan(x, x.astype(ht.float64)).dtype is ht.float64
    with pytest.raises(NotImplementedError, match="not supported \\(as in Heat\\)"):
        ht.spatial.cdist(ht.ones((4, 3), split=1, comm=comm))
    with pytest.raises(NotImplementedError, match="must be 2-D \\(as in Heat\\)"):
        ht.spatial.rbf(ht.ones((2, 2, 2), comm=comm))


def test_preprocessing_regression_and_bayes_faces(comm_of):
    comm = comm_of(3)
    x = ht.array(DATA, split=0, comm=comm)
    scaler = ht.preprocessing.StandardScaler().fit(x)
    assert isinstance(scaler.mean_, ht.DNDarray) and isinstance(scaler.transform(x), ht.DNDarray)
    with pytest.raises(TypeError, match="floating dtype"):
        ht.preprocessing.MinMaxScaler().fit(ht.zeros((3, 3), dtype=ht.int32, comm=comm))
    robust = ht.preprocessing.RobustScaler(sketched=True)
    assert robust.get_params()["sketched"] is True
    assert ht.preprocessing.Normalizer(norm="max").ord_ == np.inf
    lasso = ht.regression.Lasso(max_iter=5, tol=None)
    x1 = ht.concatenate([ht.ones((20, 1), split=0, comm=comm), x], axis=1)
    lasso.fit(x1, ht.array(DATA[:, 0], split=0, comm=comm))
    assert isinstance(lasso.theta, ht.DNDarray) and lasso.coef_.shape == (3, 1)
    assert lasso.predict(x1).shape == (20, 1)
    with pytest.raises(NotImplementedError, match="splits along the features are not supported"):
        lasso.fit(ht.zeros((3, 3), split=1, comm=comm), ht.zeros((3, 3), split=1, comm=comm))
    y = ht.array(np.r_[np.zeros(10), np.ones(10)].astype(np.int64), split=0, comm=comm)
    gnb = ht.naive_bayes.GaussianNB().fit(x, y)
    assert gnb.epsilon_.ndim == 0 and isinstance(gnb.classes_, ht.DNDarray)
    assert gnb.sigma_ is gnb.var_
    with pytest.raises(ValueError, match="`x` must be a DNDarray, got ndarray"):
        gnb.fit(DATA, y)
    knn = ht.classification.KNeighborsClassifier(3).fit(x, y)
    assert isinstance(knn.predict(x), ht.DNDarray)


def test_face_predict_keeps_the_fitted_centers(comm_of):
    """The face's clusterers predict from the centers kept at fit (no fetch), as scikit-learn's
    nearest-center rule gives for them."""
    from sklearn.metrics import pairwise_distances_argmin

    from dndask.cluster._batchparallel import centers_of

    rng = np.random.default_rng(5)
    data = np.concatenate([rng.normal(size=(10, 3)), rng.normal(size=(10, 3)) + 8.0])
    x = ht.array(data, split=0, comm=comm_of(3))
    for est in (
        ht.cluster.BatchParallelKMeans(n_clusters=2, random_state=1),
        ht.cluster.KMeans(n_clusters=2, init="probability_based", random_state=1),
    ):
        est.fit(x)
        assert centers_of(est) is est._fitted_centers[1]
        want = pairwise_distances_argmin(data, est.cluster_centers_.numpy())
        np.testing.assert_array_equal(est.predict(x).numpy()[:, 0], want)
