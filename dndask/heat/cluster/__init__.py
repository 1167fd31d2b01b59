"""Heat's ``ht.cluster``: :mod:`dndask.cluster`'s estimators with Heat's arguments and results.

Differences from the core (Heat's behaviour): ``labels_`` and ``predict`` give a column
``(n, 1)``; integer data is clustered in float32; a split along the features is a
NotImplementedError; ``fit`` takes Heat's ``oversampling`` and ``iter_multiplier``
(checked; the k-means++ used here draws one center per pass and needs neither).

>>> import dndask.heat as ht
>>> x = ht.array([[0.0, 0.0], [0.0, 1.0], [9.0, 9.0], [9.0, 10.0]], split=0)
>>> km = ht.cluster.KMeans(n_clusters=2, init=ht.array([[0.0, 0.0], [9.0, 9.0]])).fit(x)
>>> km.labels_.shape, km.cluster_centers_.numpy().tolist()
((4, 1), [[0.0, 0.5], [9.0, 9.5]])
"""

from __future__ import annotations

from dndask.heat.cluster import batchparallelclustering
from dndask.heat.cluster._estimators import (
    BatchParallelKMeans,
    BatchParallelKMedians,
    KMeans,
    KMedians,
    KMedoids,
    Spectral,
)

__all__ = [
    "BatchParallelKMeans",
    "BatchParallelKMedians",
    "KMeans",
    "KMedians",
    "KMedoids",
    "Spectral",
    "batchparallelclustering",
]
