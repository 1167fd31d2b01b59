"""k-nearest-neighbours classification, planned like :func:`dndask.spatial.cdist`.

Each chunk of the samples to classify is one task on its rank that reads every block
of the training samples and labels (each block moves at most once to each rank),
finds the ``n_neighbors`` closest training rows and takes their majority vote (the
smallest class among equals, as scikit-learn). Nothing travels to the driver.

>>> import dndask as ht
>>> from dndask.classification import KNeighborsClassifier
>>> x = ht.array([[0.0], [1.0], [10.0], [11.0]], split=0)
>>> y = ht.array([0, 0, 1, 1], split=0)
>>> knn = KNeighborsClassifier(n_neighbors=3).fit(x, y)
>>> knn.predict(ht.array([[2.0], [9.0]], split=0)).numpy().tolist()
[0, 1]
"""

from __future__ import annotations

import numbers

import dask.array as da
import numpy as np

import dndask as ht
from dndask.base import BaseEstimator, ClassificationMixin, check_fitted, check_samples

__all__ = ["KNeighborsClassifier"]

_SLAB_ELEMENTS = 1 << 22


def _vote(x, train, votes, k: int) -> np.ndarray:
    """The class index with most votes among each row's ``k`` nearest training rows."""
    x = np.asarray(x, dtype=np.float64)
    train = np.asarray(train, dtype=np.float64)
    out = np.empty(x.shape[0], dtype=np.int64)
    step = max(1, _SLAB_ELEMENTS // max(1, train.shape[0] * max(1, x.shape[1])))
    for start in range(0, x.shape[0], step):
        diff = x[start : start + step, None, :] - train[None]
        d = np.einsum("ijk,ijk->ij", diff, diff)
        nearest = np.argsort(d, axis=1, kind="stable")[:, :k]
        out[start : start + step] = votes[nearest].sum(axis=1).argmax(axis=1)
    return out


def _predict_chunk(x, train, votes, k: int, classes) -> np.ndarray:
    return classes[_vote(x, train, votes, k)]


class KNeighborsClassifier(ClassificationMixin, BaseEstimator):
    """Majority vote of the ``n_neighbors`` nearest training samples (Euclidean).

    ``y`` is a label per sample or Heat's one-hot matrix ``(n_samples, n_classes)``
    (then ``predict`` gives class indices).
    """

    def __init__(self, n_neighbors: int = 5):
        self.n_neighbors = n_neighbors

    @staticmethod
    def one_hot_encoding(x: ht.DNDarray) -> ht.DNDarray:
        """``(n, max(x) + 1)``: row ``i`` is 1 in column ``x[i]`` (non-negative integer labels).

        >>> import dndask as ht
        >>> KNeighborsClassifier.one_hot_encoding(ht.array([0, 2])).numpy().tolist()
        [[1, 0, 0], [0, 0, 1]]
        """
        if not isinstance(x, ht.DNDarray) or x.ndim != 1:
            raise ValueError("`x` must be a 1-D DNDarray of labels")
        labels = x.numpy().astype(np.int64)
        if labels.size and labels.min() < 0:
            raise ValueError("`x` must hold non-negative integer labels")
        out = np.zeros((labels.size, int(labels.max(initial=-1)) + 1), dtype=np.int64)
        out[np.arange(labels.size), labels] = 1
        return ht.array(out, split=x.split, comm=x.comm)

    def fit(self, x: ht.DNDarray, y: ht.DNDarray) -> KNeighborsClassifier:
        """Keep the training samples ``x`` and their labels ``y`` (persisted)."""
        k = self.n_neighbors
        if isinstance(k, bool) or not isinstance(k, numbers.Integral):
            raise TypeError(f"`n_neighbors` must be an int, got {type(k).__name__}")
        if k < 1:
            raise ValueError(f"`n_neighbors` must be at least 1, got {k}")
        if not isinstance(y, ht.DNDarray):
            raise TypeError(f"`y` must be a DNDarray, got {type(y).__name__}")
        x = check_samples(x)
        if y.ndim not in (1, 2) or y.shape[0] != x.shape[0]:
            raise ValueError(
                f"`y` must have shape ({x.shape[0]},) or ({x.shape[0]}, n_classes), got {y.shape}"
            )
        if k > x.shape[0]:
            raise ValueError(
                f"`n_neighbors` must be at most the number of samples, {x.shape[0]}, got {k}"
            )
        labels = y.numpy()
        if y.ndim == 2:
            votes = labels.astype(np.float64)
            self.classes_ = np.arange(labels.shape[1])
        else:
            self.classes_, inverse = np.unique(labels, return_inverse=True)
            votes = np.eye(len(self.classes_))[inverse]
        self._votes = votes
        self.x_ = x.persist()
        self.y_ = y
        return self

    def predict(self, x: ht.DNDarray) -> ht.DNDarray:
        """The predicted class of every row of ``x`` (``x``'s split)."""
        check_fitted(self, "x_")
        x = check_samples(x, n_features=self.x_.shape[1])
        train = self.x_.to_dask()
        votes = da.from_array(self._votes, chunks=(train.chunks[0], (self._votes.shape[1],)))
        out = da.blockwise(
            _predict_chunk,
            "i",
            x.to_dask(),
            "if",
            train,
            "jf",
            votes,
            "jc",
            self.n_neighbors,
            None,
            self.classes_,
            None,
            concatenate=True,
            dtype=self.classes_.dtype,
        )
        return ht.from_dask(out, split=0 if x.split is not None else None, comm=x.comm)
