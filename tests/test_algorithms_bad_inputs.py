"""Bad inputs to every estimator: a clear error, and the arrays and the estimator unchanged.

For each estimator of the algorithm layer: samples of the wrong shape (1-D, 3-D, another
number of features than fitted), NaN, ``n_clusters`` above the number of samples
(clusterers) and ``predict``/``transform`` before ``fit``. The messages are checked as
scikit-learn's conventions ask (the argument named, what was expected, what came).
"""

from __future__ import annotations

import functools
import importlib

import _estimators
import numpy as np
import pytest

import dndask as ht
from dndask.base import BaseEstimator
from dndask.classification import KNeighborsClassifier
from dndask.cluster import KClustering, Spectral
from dndask.naive_bayes import GaussianNB
from dndask.preprocessing import Normalizer
from dndask.regression import Lasso

X = np.random.default_rng(3).normal(size=(12, 3))
LABELS = np.arange(12) % 3
NAN = X.copy()
NAN[7, 1] = np.nan


def _clusterer(cls):
    gamma = {"gamma": 0.5} if cls is Spectral else {}
    return functools.partial(cls, n_clusters=2, random_state=0, **gamma)


# name: (constructor, target (None: unsupervised), the attribute fit sets, the method that
# needs a fit)
ESTIMATORS = {
    **{
        cls.__name__: (_clusterer(cls), None, "cluster_centers_", "predict")
        for cls in _estimators.CENTER_CLUSTERERS
    },
    "Spectral": (_clusterer(Spectral), None, "labels_", "predict"),
    **{
        cls.__name__: (cls, None, None if cls is Normalizer else "scale_", "transform")
        for cls in _estimators.SCALERS
    },
    "Lasso": (Lasso, "float", "theta", "predict"),
    "GaussianNB": (GaussianNB, "int", "theta_", "predict"),
    "KNeighborsClassifier": (
        functools.partial(KNeighborsClassifier, n_neighbors=3),
        "int",
        "x_",
        "predict",
    ),
}
CLUSTERERS = [cls.__name__ for cls in _estimators.CLUSTERERS]
PREDICTORS = [n for n, (_, _, _, method) in ESTIMATORS.items() if method == "predict"]


def test_the_tables_hold_every_estimator():
    """tests/_estimators.py lists every estimator the algorithm packages export (the bases
    BaseEstimator and KClustering aside), and this file's table follows it."""
    exported = set()
    for name in _estimators.ALGORITHM_PACKAGES:
        module = importlib.import_module(name)
        exported |= {getattr(module, n) for n in module.__all__}
    estimators = {c for c in exported if isinstance(c, type) and issubclass(c, BaseEstimator)}
    assert estimators - {BaseEstimator, KClustering} == set(_estimators.ESTIMATORS)
    assert list(ESTIMATORS) == [cls.__name__ for cls in _estimators.ESTIMATORS]


@pytest.fixture(scope="module")
def data(client, comm_of):
    """The samples (good, NaN, 1-D, 3-D, 2 features), the targets; each with its numpy copy."""
    comm = comm_of(3)
    arrays = {
        "x": X,
        "nan": NAN,
        "flat": X[:, 0].copy(),
        "cube": X.reshape(12, 3, 1).copy(),
        "narrow": X[:, :2].copy(),
        "int": LABELS,
        "float": LABELS.astype(np.float64),
    }
    return {k: (ht.array(v, split=0, comm=comm), v) for k, v in arrays.items()}


def fit(name: str, data, x: str = "x", estimator=None):
    make, target, _, _ = ESTIMATORS[name]
    est = make() if estimator is None else estimator
    if target is None:
        return est.fit(data[x][0])
    return est.fit(data[x][0], data[target][0])


def unchanged(data) -> None:
    """No input array changed (NaN where it was)."""
    for a, expected in data.values():
        np.testing.assert_array_equal(a.numpy(), expected)


def fitted_state(est, name: str):
    attribute = ESTIMATORS[name][2]
    value = None if attribute is None else getattr(est, attribute, None)
    return None if value is None else np.asarray(value.numpy())


@pytest.mark.parametrize("name", ESTIMATORS)
def test_wrong_shapes(data, name):
    est = ESTIMATORS[name][0]()
    with pytest.raises(ValueError, match=r"`[xX]` must be 2-D \(samples, features\), got .*1"):
        fit(name, data, "flat", est)
    with pytest.raises(ValueError, match=r"`[xX]` must be 2-D \(samples, features\), got .*3"):
        fit(name, data, "cube", est)
    assert fitted_state(est, name) is None
    fit(name, data, "x", est)
    before = fitted_state(est, name)
    method = getattr(est, ESTIMATORS[name][3])
    if name != "Normalizer":  # it learns nothing, so any number of features is right
        with pytest.raises(ValueError, match=r"`[xX]` must have 3 features \(as .*fit.*\), got 2"):
            method(data["narrow"][0])
    with pytest.raises(ValueError, match=r"`[xX]` must be 2-D \(samples, features\)"):
        method(data["flat"][0])
    np.testing.assert_array_equal(fitted_state(est, name), before)
    unchanged(data)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_nan(data, name):
    est = ESTIMATORS[name][0]()
    with pytest.raises(ValueError, match=r"`[xX]` must be finite, got .*NaN or infinite values"):
        fit(name, data, "nan", est)
    assert fitted_state(est, name) is None
    if name in PREDICTORS:  # scikit-learn's predictors refuse NaN; scalers carry it through
        fit(name, data, "x", est)
        before = fitted_state(est, name)
        with pytest.raises(ValueError, match=r"`x` must be finite, got 1 NaN or infinite values"):
            est.predict(data["nan"][0])
        np.testing.assert_array_equal(fitted_state(est, name), before)
    unchanged(data)


@pytest.mark.parametrize("name", CLUSTERERS)
def test_more_clusters_than_samples(data, name):
    est = ESTIMATORS[name][0]().set_params(n_clusters=13)
    with pytest.raises(ValueError, match="`n_clusters` must be at most the number of samples, 12, got 13"):  # fmt: skip
        fit(name, data, "x", est)
    assert fitted_state(est, name) is None
    unchanged(data)


@pytest.mark.parametrize("name", [n for n in ESTIMATORS if n != "Normalizer"])
def test_unfitted(data, name):
    est = ESTIMATORS[name][0]()
    with pytest.raises(ValueError, match=f"this {name} is not fitted yet: call `fit`"):
        getattr(est, ESTIMATORS[name][3])(data["x"][0])
    unchanged(data)


def test_normalizer_needs_no_fit_as_in_scikit_learn(data):
    from sklearn.preprocessing import Normalizer as SkNormalizer

    got = Normalizer().transform(data["x"][0]).numpy()
    np.testing.assert_allclose(got, SkNormalizer().transform(X), rtol=1e-12)
    unchanged(data)


FACE = {
    "KMeans": lambda face: (face.cluster.KMeans(n_clusters=2), None),
    "Spectral": lambda face: (face.cluster.Spectral(n_clusters=2), None),
    "StandardScaler": lambda face: (face.preprocessing.StandardScaler(), None),
    "Lasso": lambda face: (face.regression.Lasso(), "float"),
    "GaussianNB": lambda face: (face.naive_bayes.GaussianNB(), "int"),
    "KNeighborsClassifier": lambda face: (face.classification.KNeighborsClassifier(3), "int"),
}


@pytest.mark.parametrize("name", FACE)
def test_the_heat_face_gives_the_same_errors(comm_of, name):
    """The face's estimators run the core's checks: NaN at fit, unfitted use, wrong features."""
    import dndask.heat as face

    comm = comm_of(2)
    arrays = {
        "x": face.array(X, split=0, comm=comm),
        "nan": face.array(NAN, split=0, comm=comm),
        "narrow": face.array(X[:, :2], split=0, comm=comm),
        "int": face.array(LABELS, split=0, comm=comm),
        "float": face.array(LABELS.astype(np.float64), split=0, comm=comm),
    }
    est, target = FACE[name](face)
    method = est.predict if hasattr(est, "predict") else est.transform

    def fit(x):
        return est.fit(arrays[x]) if target is None else est.fit(arrays[x], arrays[target])

    with pytest.raises(ValueError, match=f"this {name} is not fitted yet"):
        method(arrays["x"])
    with pytest.raises(ValueError, match=r"`[xX]` must be finite, got .*NaN or infinite values"):
        fit("nan")
    fit("x")
    with pytest.raises(ValueError, match=r"`[xX]` must have 3 features \(as .*fit.*\), got 2"):
        method(arrays["narrow"])
    np.testing.assert_array_equal(arrays["nan"].numpy(), NAN)
    np.testing.assert_array_equal(arrays["x"].numpy(), X)
