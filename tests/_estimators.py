"""The algorithm layer's packages and estimators, one table for the tests that go over them.

``test_algorithms_bad_inputs`` checks that the table holds every estimator the algorithm
packages export, so a new estimator joins every test that takes the table;
``test_imports`` checks that those packages use dndask's public API only.
"""

from __future__ import annotations

from dndask import classification, cluster, naive_bayes, preprocessing, regression

__all__ = [
    "ALGORITHM_PACKAGES",
    "CENTER_CLUSTERERS",
    "CLUSTERERS",
    "ESTIMATORS",
    "SCALERS",
    "SUPERVISED",
]

# Heat's machine-learning packages, the layer above the core
ALGORITHM_PACKAGES = (
    "dndask.base",
    "dndask.classification",
    "dndask.cluster",
    "dndask.graph",
    "dndask.naive_bayes",
    "dndask.preprocessing",
    "dndask.regression",
    "dndask.spatial",
    "dndask.utils",
)
# the clusterers that fit centers (``cluster_centers_``), then all of them
CENTER_CLUSTERERS = (
    cluster.KMeans,
    cluster.KMedians,
    cluster.KMedoids,
    cluster.BatchParallelKMeans,
    cluster.BatchParallelKMedians,
)
CLUSTERERS = (*CENTER_CLUSTERERS, cluster.Spectral)
# the transformers of dndask.preprocessing (each with a scikit-learn class of its name)
SCALERS = (
    preprocessing.StandardScaler,
    preprocessing.MinMaxScaler,
    preprocessing.MaxAbsScaler,
    preprocessing.RobustScaler,
    preprocessing.Normalizer,
)
# fit(x, y): a regressor and two classifiers
SUPERVISED = (regression.Lasso, naive_bayes.GaussianNB, classification.KNeighborsClassifier)
ESTIMATORS = (*CLUSTERERS, *SCALERS, *SUPERVISED)
