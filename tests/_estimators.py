"""The algorithm layer's estimators, one table for the tests that go over all of them.

``test_algorithms_bad_inputs`` checks that the table holds every estimator the algorithm
packages export, so a new estimator joins every test that takes the table.
"""

from __future__ import annotations

from dndask.classification import KNeighborsClassifier
from dndask.cluster import (
    BatchParallelKMeans,
    BatchParallelKMedians,
    KMeans,
    KMedians,
    KMedoids,
    Spectral,
)
from dndask.naive_bayes import GaussianNB
from dndask.preprocessing import (
    MaxAbsScaler,
    MinMaxScaler,
    Normalizer,
    RobustScaler,
    StandardScaler,
)
from dndask.regression import Lasso

__all__ = ["CENTER_CLUSTERERS", "CLUSTERERS", "ESTIMATORS", "SCALERS", "SUPERVISED"]

# the clusterers that fit centers (``cluster_centers_``), then all of them
CENTER_CLUSTERERS = (KMeans, KMedians, KMedoids, BatchParallelKMeans, BatchParallelKMedians)
CLUSTERERS = (*CENTER_CLUSTERERS, Spectral)
# the transformers of dndask.preprocessing (each with a scikit-learn class of its name)
SCALERS = (StandardScaler, MinMaxScaler, MaxAbsScaler, RobustScaler, Normalizer)
# fit(x, y): a regressor and two classifiers
SUPERVISED = (Lasso, GaussianNB, KNeighborsClassifier)
ESTIMATORS = (*CLUSTERERS, *SCALERS, *SUPERVISED)
