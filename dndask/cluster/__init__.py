"""Clustering of the rows of DNDarrays: k-means, k-medians, k-medoids, batch-parallel and spectral.

Estimators follow scikit-learn's conventions (``fit``, ``predict``, ``fit_predict``,
``get_params``/``set_params``, fitted attributes ending in ``_``). Each iteration of a
fit is a pass over the persisted data (one task per rank, small results to the driver):
see :mod:`dndask.base`.

>>> import dndask as ht
>>> from dndask.cluster import KMeans
>>> ht.random.seed(1)
>>> x = ht.concatenate([ht.random.randn(20, 2, split=0), ht.random.randn(20, 2, split=0) + 10])
>>> km = KMeans(n_clusters=2, init="probability_based", random_state=0).fit(x)
>>> sorted(round(float(c)) for c in km.cluster_centers_.numpy()[:, 0])
[0, 10]
"""

from ._batchparallel import BatchParallelKMeans, BatchParallelKMedians
from ._kcluster import KClustering, KMeans, KMedians, KMedoids
from ._spectral import Spectral

__all__ = [
    "BatchParallelKMeans",
    "BatchParallelKMedians",
    "KClustering",
    "KMeans",
    "KMedians",
    "KMedoids",
    "Spectral",
]
