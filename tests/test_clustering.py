"""dndask.cluster against scikit-learn and numpy oracles, on 1-5 ranks, splits None/0/1, empty ranks."""

from __future__ import annotations

import numpy as np
import pytest
from _estimators import CENTER_CLUSTERERS
from sklearn.cluster import KMeans as SKMeans
from sklearn.metrics import adjusted_rand_score

import dndask as ht
from dndask.base import is_clusterer, is_estimator
from dndask.cluster import (
    BatchParallelKMeans,
    BatchParallelKMedians,
    KMeans,
    KMedians,
    KMedoids,
    Spectral,
)

RNG = np.random.default_rng(2027)
CENTERS = np.array([[0.0, 0.0, 0.0], [6.0, 6.0, 0.0], [-6.0, 0.0, 6.0]])
DATA = np.concatenate([c + RNG.normal(size=(14, 3)) for c in CENTERS])[RNG.permutation(42)]
INIT = DATA[[0, 1, 2]]


def _numpy_kmedians(x, centers, medoids=False, max_iter=300, tol=1e-4):
    """The algorithm by the book, in numpy: city-block assignment, per-feature median."""
    centers = centers.copy()
    for _ in range(max_iter):
        labels = np.abs(x[:, None, :] - centers[None]).sum(axis=2).argmin(axis=1)
        new = centers.copy()
        for c in range(len(centers)):
            members = x[labels == c]
            if len(members):
                median = np.median(members, axis=0)
                if medoids:
                    median = members[np.abs(members - median).sum(axis=1).argmin()]
                new[c] = median
        done = np.array_equal(new, centers) if medoids else ((new - centers) ** 2).sum() <= tol
        centers = new
        if done:
            break
    return centers


SLOW = pytest.mark.slow


@pytest.mark.parametrize("n", [3, pytest.param(1, marks=SLOW), pytest.param(5, marks=SLOW)])
@pytest.mark.parametrize("split", [None, 0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kmeans_matches_scikit_learn(comm_of, n, split, dtype):
    x = DATA.astype(dtype)
    X = ht.array(x, split=split, comm=comm_of(n))
    km = KMeans(n_clusters=3, init=INIT.astype(dtype), tol=0.0).fit(X)
    sk = SKMeans(3, init=INIT.astype(dtype), n_init=1, tol=0, algorithm="lloyd").fit(x)
    assert km.cluster_centers_.split is None and km.cluster_centers_.to_dask().dtype == dtype
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(km.cluster_centers_.numpy(), sk.cluster_centers_, rtol=tol, atol=tol)
    labels = km.labels_
    assert labels.split == (None if split is None else 0) and labels.to_dask().dtype == np.int64
    np.testing.assert_array_equal(labels.numpy(), sk.labels_)
    assert km.inertia_ == pytest.approx(sk.inertia_, rel=tol)
    np.testing.assert_array_equal(km.predict(X).numpy(), sk.predict(x))
    np.testing.assert_array_equal(X.numpy(), x)  # the input is left as it was


@pytest.mark.parametrize(("cls", "medoids"), [(KMedians, False), (KMedoids, True)])
@pytest.mark.parametrize(
    ("n", "split"),
    [(3, 0), pytest.param(1, None, marks=SLOW), (4, 1), pytest.param(5, 0, marks=SLOW)],
)
def test_kmedians_and_kmedoids_match_numpy(comm_of, cls, medoids, n, split):
    X = ht.array(DATA, split=split, comm=comm_of(n))
    fitted = cls(n_clusters=3, init=INIT).fit(X)
    want = _numpy_kmedians(DATA, INIT, medoids=medoids)
    np.testing.assert_allclose(fitted.cluster_centers_.numpy(), want, rtol=1e-12)
    labels = np.abs(DATA[:, None] - want[None]).sum(axis=2).argmin(axis=1)
    np.testing.assert_array_equal(fitted.labels_.numpy(), labels)
    if medoids:  # the centers are rows of the data
        assert all((c == DATA).all(axis=1).any() for c in fitted.cluster_centers_.numpy())


def test_exact_medians_with_many_values_and_ties(comm_of):
    """The two-pass median: clusters bigger than the pivots, repeated values, even counts."""
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.integers(0, 7, size=(400, 2)), 100 + rng.normal(size=(301, 2))])
    X = ht.array(x, split=0, comm=comm_of(4))
    init = np.array([[3.0, 3.0], [100.0, 100.0]])
    got = KMedians(n_clusters=2, init=init, max_iter=1).fit(X).cluster_centers_.numpy()
    np.testing.assert_array_equal(got, [np.median(x[:400], axis=0), np.median(x[400:], axis=0)])


@pytest.mark.parametrize("init", ["random", "probability_based"])
@pytest.mark.parametrize("cls", [KMeans, KMedians])
def test_seeded_initialisation_does_not_depend_on_the_layout(comm_of, init, cls):
    results = []
    for n, split in [(1, None), (2, 0), (5, 0), (3, 1)]:
        X = ht.array(DATA, split=split, comm=comm_of(n))
        results.append(cls(n_clusters=3, init=init, random_state=7).fit(X).cluster_centers_.numpy())
    for other in results[1:]:
        np.testing.assert_allclose(other, results[0], rtol=1e-12)
    ht.random.seed(7)  # ht.random.seed drives random_state=None the same way
    X = ht.array(DATA, split=0, comm=comm_of(4))
    again = cls(n_clusters=3, init=init).fit(X).cluster_centers_.numpy()
    np.testing.assert_allclose(again, results[0], rtol=1e-12)


def test_kmeans_plus_plus_finds_separated_clusters(comm_of):
    X = ht.array(DATA, split=0, comm=comm_of(3))
    km = KMeans(n_clusters=3, init="kmeans++", random_state=1).fit(X)
    truth = np.abs(DATA[:, None] - CENTERS[None]).sum(axis=2).argmin(axis=1)
    assert adjusted_rand_score(truth, km.labels_.numpy()) == 1.0


def test_empty_ranks_and_float32(comm_of):
    x = np.array([[0.0, 0.0], [10.0, 10.0], [0.5, 0.0]], dtype=np.float32)
    X = ht.array(x, split=0, comm=comm_of(5))  # ranks 3 and 4 hold no rows
    for cls in CENTER_CLUSTERERS:
        fitted = cls(n_clusters=2, random_state=3).fit(X)
        labels = fitted.labels_.numpy()
        assert labels[0] == labels[2] != labels[1], cls.__name__
        assert fitted.cluster_centers_.to_dask().dtype == np.float32


@pytest.mark.parametrize("cls", [BatchParallelKMeans, BatchParallelKMedians])
@pytest.mark.parametrize("merge", [None, 2])
def test_batch_parallel_finds_the_clusters(comm_of, cls, merge):
    X = ht.array(DATA, split=0, comm=comm_of(4))
    fitted = cls(n_clusters=3, random_state=0, n_procs_to_merge=merge).fit(X)
    centers = fitted.cluster_centers_.numpy()
    order = np.abs(CENTERS[:, None] - centers[None]).sum(axis=2).argmin(axis=1)
    assert sorted(order.tolist()) == [0, 1, 2]
    np.testing.assert_allclose(centers[order], CENTERS, atol=1.5)  # batches: approximate
    assert isinstance(fitted.n_iter_, int) and isinstance(fitted.functional_value_, float)
    truth = np.abs(DATA[:, None] - CENTERS[None]).sum(axis=2).argmin(axis=1)
    assert adjusted_rand_score(truth, fitted.predict(X).numpy()) == 1.0


@pytest.mark.parametrize("solver", ["lanczos", "randomized"])
def test_spectral_separates_clusters(comm_of, solver):
    X = ht.array(DATA, split=0, comm=comm_of(3))
    sp = Spectral(
        n_clusters=3,
        gamma=0.1,
        eigen_solver=solver,
        reigh_rank=10,
        reigh_power_iter=3,  # the randomized solver's accuracy here needs a few
        random_state=0,
    )
    labels = sp.fit_predict(X)
    truth = np.abs(DATA[:, None] - CENTERS[None]).sum(axis=2).argmin(axis=1)
    assert labels.split == 0
    assert adjusted_rand_score(truth, labels.numpy()) == 1.0


def test_estimator_protocol():
    km = KMeans()
    assert is_estimator(km) and is_clusterer(km)
    assert km.get_params() == {
        "n_clusters": 8,
        "init": "random",
        "max_iter": 300,
        "tol": 1e-4,
        "random_state": None,
    }
    assert km.set_params(n_clusters=3) is km and km.n_clusters == 3
    with pytest.raises(ValueError, match="`foo` is not a parameter of KMeans"):
        km.set_params(foo=1)
    assert "tol" not in KMedoids().get_params()
    assert repr(KMedoids(n_clusters=2)).startswith("KMedoids(init='random', max_iter=300")


def test_bad_inputs(comm_of):
    comm = comm_of(2)
    X = ht.array(DATA, split=0, comm=comm)
    with pytest.raises(
        ValueError, match="`n_clusters` must be at most the number of samples, 42, got 50"
    ):
        KMeans(n_clusters=50).fit(X)
    with pytest.raises(TypeError, match="`x` must be a DNDarray, got ndarray"):
        KMeans(n_clusters=2).fit(DATA)
    with pytest.raises(
        ValueError, match=r"`x` must be 2-D \(samples, features\), got shape \(42,\)"
    ):
        KMeans(n_clusters=2).fit(ht.array(DATA[:, 0], split=0, comm=comm))
    nan = DATA.copy()
    nan[40, 1] = np.nan
    Xn = ht.array(nan, split=0, comm=comm)
    with pytest.raises(
        ValueError,
        match=r"`x` must be finite, got 1 NaN or infinite values \(the first on rank 1\)",
    ):
        KMedians(n_clusters=2).fit(Xn)
    with pytest.raises(ValueError, match="`init` must be 'random', 'probability_based'"):
        KMeans(n_clusters=2, init="nope").fit(X)
    with pytest.raises(
        ValueError,
        match=r"`init` must have shape \(n_clusters, n_features\) = \(2, 3\), got \(2, 2\)",
    ):
        KMeans(n_clusters=2, init=np.zeros((2, 2))).fit(X)
    with pytest.raises(TypeError, match="`n_clusters` must be an int, got float"):
        KMeans(n_clusters=2.5).fit(X)
    with pytest.raises(ValueError, match="`tol` must be at least 0, got -1"):
        KMeans(n_clusters=2, tol=-1).fit(X)
    with pytest.raises(ValueError, match="this KMeans is not fitted yet"):
        KMeans(n_clusters=2).predict(X)
    with pytest.raises(ValueError, match="this BatchParallelKMeans is not fitted yet"):
        BatchParallelKMeans(n_clusters=2).predict(X)
    fitted = KMeans(n_clusters=2, random_state=0).fit(X)
    with pytest.raises(ValueError, match=r"`x` must have 3 features \(as in fit\), got 2"):
        fitted.predict(ht.ones((4, 2), split=0, comm=comm))
    with pytest.raises(ValueError, match="`n_procs_to_merge` must be at least 2, got 1"):
        BatchParallelKMeans(n_procs_to_merge=1).fit(X)
    with pytest.raises(
        NotImplementedError, match="`eigen_solver` must be 'lanczos' or 'randomized'"
    ):
        Spectral(eigen_solver="svd").fit(X)
    # every failure left the data and the fitted estimator as they were
    np.testing.assert_array_equal(X.numpy(), DATA)
    np.testing.assert_array_equal(np.isnan(Xn.numpy()), np.isnan(nan))
    assert fitted.cluster_centers_.shape == (2, 3)


def test_a_fit_keeps_its_graph_small(comm_of):
    """Each iteration is a pass over persisted data: the fitted labels' graph does not
    grow with the number of iterations."""
    X = ht.array(DATA, split=0, comm=comm_of(3))
    short = KMeans(n_clusters=3, init=INIT, max_iter=1).fit(X)
    long = KMeans(n_clusters=3, init=INIT, max_iter=30, tol=0.0).fit(X)
    assert long.n_iter_ > 1
    assert len(long.labels_.to_dask().__dask_graph__()) == len(
        short.labels_.to_dask().__dask_graph__()
    )


@pytest.mark.parametrize("n", [1, 3, 5])
@pytest.mark.parametrize("cls", [KMeans, BatchParallelKMeans, BatchParallelKMedians])
def test_predict_uses_the_fitted_centers_and_follows_a_change(comm_of, n, cls):
    """predict labels like scikit-learn's nearest-center rule for the fitted centers (kept from
    fit, no fetch) and, after an assignment into ``cluster_centers_``, for the new ones."""
    from sklearn.metrics import pairwise_distances_argmin

    from dndask.cluster._batchparallel import centers_of

    metric = "manhattan" if cls is BatchParallelKMedians else "euclidean"
    x = ht.array(DATA, split=0, comm=comm_of(n))
    kwargs = {"init": INIT} if cls is KMeans else {}
    est = cls(n_clusters=3, random_state=3, **kwargs).fit(x)
    centers = est.cluster_centers_.numpy()
    assert centers_of(est) is est._fitted_centers[1]  # no round trip for predict
    want = pairwise_distances_argmin(DATA, centers, metric=metric)
    np.testing.assert_array_equal(est.predict(x).numpy(), want)
    est.cluster_centers_[0] = np.array([100.0, 100.0, 100.0])
    moved = est.cluster_centers_.numpy()
    assert centers_of(est) is not est._fitted_centers[1]
    want = pairwise_distances_argmin(DATA, moved, metric=metric)
    np.testing.assert_array_equal(est.predict(x).numpy(), want)
