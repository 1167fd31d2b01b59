"""Principal component analysis on DNDarrays, with scikit-learn's estimator conventions.

:class:`PCA` fits with the TSQR-based SVD (``"full"``), the randomized SVD
(``"randomized"``) or the hierarchical SVD (``"hierarchical"``, Heat's default);
:class:`IncrementalPCA` updates its fit batch by batch (``partial_fit``), each update one
TSQR-based SVD of the previous components stacked on the centred batch
(Ross et al. 2008, as scikit-learn). Fitted attributes end in ``_`` and are DNDarrays
(``n_components_`` and ``n_samples_seen_`` are ints).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import _dndarray, _manipulation
from .._linalg import hsvd_rank, hsvd_rtol, matmul, rsvd, svd
from .._linalg._tsqr import _swap_last

__all__ = ["IncrementalPCA", "PCA"]

_SOLVERS = ("full", "randomized", "hierarchical")


def _check_data(x, n_features: int | None = None) -> _dndarray.DNDarray:
    if not isinstance(x, _dndarray.DNDarray):
        raise TypeError(f"`X` must be a DNDarray, got {type(x).__name__}")
    if x.ndim != 2:
        raise ValueError(f"`X` must be 2-D (samples x features), got {x.ndim} dimensions")
    if n_features is not None and x.shape[1] != n_features:
        raise ValueError(f"`X` must have {n_features} features, got {x.shape[1]}")
    if x.dtype.kind not in "f":
        x = x.astype(np.float32)
    return x


def _check_y(y) -> None:
    if y is not None:
        raise ValueError(
            f"`y` is not used by a PCA and must be None (scikit-learn's convention), got {y!r}"
        )


def _check_reduced(x, n_components: int) -> None:
    if not isinstance(x, _dndarray.DNDarray):
        raise TypeError(f"`X` must be a DNDarray, got {type(x).__name__}")
    if x.ndim != 2 or x.shape[1] != n_components:
        raise ValueError(
            f"`X` must be 2-D with {n_components} columns (the components), got shape {x.shape}"
        )


def _check_components(value) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, float)):
        raise TypeError(
            f"`n_components` must be None, an int or a float, got {type(value).__name__}"
        )
    if isinstance(value, numbers.Integral) and value < 1:
        raise ValueError(f"`n_components` must be at least 1, got {value}")
    if isinstance(value, float) and not 0.0 < value < 1.0:
        raise ValueError(f"`n_components` as a float must be in (0, 1), got {value}")


class PCA:
    """Principal component analysis: the top right singular vectors of the centred data.

    Parameters
    ----------
    n_components : int, float or None
        Components to keep: an int, a float in (0, 1) (the share of variance to
        explain), or None (``min(n_samples, n_features)``).
    svd_solver : {"full", "randomized", "hierarchical"}
        The SVD (:func:`dndask.linalg.svd`, :func:`~dndask.linalg.rsvd` or
        :func:`~dndask.linalg.hsvd_rank`/``hsvd_rtol``).
    iterated_power, n_oversamples : int
        For ``"randomized"``.

    Examples
    --------
    >>> import numpy as np, dndask as ht
    >>> x = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.1], [4.0, 8.0]])
    >>> pca = ht.decomposition.PCA(n_components=1, svd_solver="full").fit(ht.array(x, split=0))
    >>> pca.components_.shape, round(float(pca.explained_variance_ratio_.sum()), 3)
    ((1, 2), 1.0)
    """

    def __init__(
        self,
        n_components=None,
        *,
        svd_solver: str = "hierarchical",
        iterated_power: int = 0,
        n_oversamples: int = 10,
    ):
        _check_components(n_components)
        if svd_solver not in _SOLVERS:
            raise ValueError(f"`svd_solver` must be one of {_SOLVERS}, got {svd_solver!r}")
        for value, name in ((iterated_power, "iterated_power"), (n_oversamples, "n_oversamples")):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"`{name}` must be an int, got {type(value).__name__}")
            if value < 0:
                raise ValueError(f"`{name}` must be non-negative, got {value}")
        self.n_components = n_components
        self.svd_solver = svd_solver
        self.iterated_power = iterated_power
        self.n_oversamples = n_oversamples

    def fit(self, X, y=None):  # noqa: N803 (scikit-learn's names)
        """Fit the components to ``X`` (samples x features); returns ``self``."""
        _check_y(y)
        x = _check_data(X)
        n, f = x.shape
        if n < 2:
            raise ValueError(f"`X` must have at least 2 samples, got {n}")
        self.mean_ = x.mean(axis=0)
        centred = x - self.mean_
        total = float(((centred * centred).sum()).numpy()) / (n - 1)
        k = self.n_components if self.n_components is not None else min(n, f)
        if isinstance(k, numbers.Integral) and k > min(n, f):
            raise ValueError(
                f"`n_components` must be at most min(n_samples, n_features) = {min(n, f)}, got {k}"
            )
        err = 0.0  # the hierarchical SVD's error estimate
        if self.svd_solver == "randomized":
            if not isinstance(k, numbers.Integral):
                raise ValueError("`svd_solver='randomized'` needs an int `n_components`")
            _, s, vh = rsvd(centred, int(k), self.n_oversamples, self.iterated_power)
        elif self.svd_solver == "hierarchical":
            rows = centred if centred.split == 0 else centred.resplit(0)
            if isinstance(k, float):
                _, s, vh, err = hsvd_rtol(rows, math.sqrt(1 - k), compute_sv=True, safetyshift=0)
            else:
                _, s, vh, err = hsvd_rank(rows, int(k), compute_sv=True, safetyshift=0)
        else:
            _, s, vh = svd(centred)
        s = s if s.split is None else s.resplit(None)
        if isinstance(k, float):
            ratios = np.asarray(s.numpy(), dtype=np.float64) ** 2 / (n - 1) / total
            k = min(int(np.searchsorted(np.cumsum(ratios), k) + 1), s.shape[0])
        k = min(int(k), s.shape[0])
        self.n_components_ = k
        self.components_ = vh[:k] if vh.split is None else vh.resplit(None)[:k]
        self.singular_values_ = s[:k]
        self.explained_variance_ = self.singular_values_**2 / (n - 1)
        self.explained_variance_ratio_ = self.explained_variance_ / total
        if self.svd_solver == "hierarchical":  # Heat's: from the hSVD's error estimate
            self.total_explained_variance_ratio_ = 1 - err**2
        else:
            self.total_explained_variance_ratio_ = float(
                self.explained_variance_ratio_.sum().numpy()
            )
        self.n_samples_ = n
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "components_"):
            raise RuntimeError("this PCA is not fitted yet: call `fit` first")

    def transform(self, X):  # noqa: N803
        """``X`` projected on the components (samples x ``n_components_``)."""
        self._check_fitted()
        x = _check_data(X, self.components_.shape[1])
        return matmul(x - self.mean_, _swap_last(self.components_))

    def fit_transform(self, X, y=None):  # noqa: N803
        """:meth:`fit`, then :meth:`transform` of ``X``."""
        return self.fit(X).transform(X)

    def inverse_transform(self, X):  # noqa: N803
        """Back to feature space: ``X @ components_ + mean_``."""
        self._check_fitted()
        _check_reduced(X, self.n_components_)
        return matmul(X, self.components_) + self.mean_


class IncrementalPCA:
    """PCA fitted batch by batch (``partial_fit``), as scikit-learn's ``IncrementalPCA``.

    ``n_components_`` is at most ``n_components``, the number of features and the
    number of samples seen so far (Heat's rule: a larger ``n_components`` is no error,
    and ``None`` keeps every component the data seen can have). Before the first
    batch the fitted attributes are None and ``n_samples_seen_`` is 0.

    Examples
    --------
    >>> import numpy as np, dndask as ht
    >>> rng = np.random.default_rng(0)
    >>> x = rng.standard_normal((40, 3)) * [3.0, 1.0, 0.1]
    >>> ipca = ht.decomposition.IncrementalPCA(n_components=2)
    >>> for start in (0, 20):
    ...     _ = ipca.partial_fit(ht.array(x[start : start + 20], split=0))
    >>> ipca.n_samples_seen_, ipca.components_.shape
    (40, (2, 3))
    """

    def __init__(self, n_components: int | None = None):
        if n_components is not None and (
            isinstance(n_components, bool) or not isinstance(n_components, numbers.Integral)
        ):
            raise TypeError(
                f"`n_components` must be None or an int, got {type(n_components).__name__}"
            )
        if n_components is not None and n_components < 1:
            raise ValueError(f"`n_components` must be at least 1, got {n_components}")
        self.n_components = n_components
        self._reset()

    def _reset(self) -> None:
        """No fit yet: the fitted attributes are None (scikit-learn's and Heat's)."""
        self.components_ = self.singular_values_ = self.mean_ = None
        self.n_components_ = self.batch_size_ = None
        self.n_samples_seen_ = 0

    def partial_fit(self, X, y=None):  # noqa: N803
        """Update the fit with the batch ``X``; returns ``self``."""
        _check_y(y)
        first = self.n_samples_seen_ == 0
        x = _check_data(X, None if first else self.components_.shape[1])
        n, f = x.shape
        # Heat's rule: at most the rank the data seen can have (more is no error)
        k = min(f, self.n_samples_seen_ + n)
        if self.n_components is not None:
            k = min(k, self.n_components)
        batch_mean = x.mean(axis=0)
        centred = x - batch_mean
        if first:
            mean, stacked = batch_mean, centred
        else:
            seen = self.n_samples_seen_
            total = seen + n
            mean = (self.mean_ * seen + batch_mean * n) / total
            correction = (self.mean_ - batch_mean) * math.sqrt(seen * n / total)
            previous = self.components_ * _manipulation.expand_dims(self.singular_values_, 1)
            rows = centred if centred.split is None else centred.resplit(None)
            stacked = _manipulation.concatenate(
                [previous, rows, _manipulation.expand_dims(correction, 0)], axis=0
            )
            stacked = stacked.resplit(0)
        _, s, vh = svd(stacked)
        s = s if s.split is None else s.resplit(None)
        vh = vh if vh.split is None else vh.resplit(None)
        k = min(k, s.shape[0])
        self.components_ = vh[:k]
        self.singular_values_ = s[:k]
        self.mean_ = mean
        self.n_components_ = k
        self.n_samples_seen_ += n
        return self

    def inverse_transform(self, X):  # noqa: N803
        """Back to feature space: ``X @ components_ + mean_``."""
        if self.n_samples_seen_ == 0:
            raise RuntimeError("this IncrementalPCA is not fitted yet: call `partial_fit` first")
        _check_reduced(X, self.n_components_)
        return matmul(X, self.components_) + self.mean_

    def fit(self, X, y=None):  # noqa: N803
        """A fresh fit on ``X`` in one batch."""
        _check_y(y)
        self._reset()
        return self.partial_fit(X)

    def transform(self, X):  # noqa: N803
        """``X`` projected on the components."""
        if self.n_samples_seen_ == 0:
            raise RuntimeError("this IncrementalPCA is not fitted yet: call `partial_fit` first")
        x = _check_data(X, self.components_.shape[1])
        return matmul(x - self.mean_, _swap_last(self.components_))
