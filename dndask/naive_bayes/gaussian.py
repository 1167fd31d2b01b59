"""Gaussian naive Bayes (scikit-learn's GaussianNB) with one pass over the data per fit.

Each rank summarizes its rows per class (weighted count, mean, squared deviations)
and overall (for ``epsilon_``) in one task; the driver merges the summaries with
Chan's rule, also into earlier ``partial_fit`` results. Prediction is a lazy map
over the chunks of the samples.

>>> import dndask as ht
>>> from dndask.naive_bayes import GaussianNB
>>> x = ht.array([[0.0], [0.2], [5.0], [5.2]], split=0)
>>> y = ht.array([0, 0, 1, 1], split=0)
>>> GaussianNB().fit(x, y).predict(ht.array([[0.1], [4.0]])).numpy().tolist()
[0, 1]
"""

from __future__ import annotations

import numbers

import numpy as np

import dndask as ht
from dndask.base import (
    BaseEstimator,
    ClassificationMixin,
    check_fitted,
    check_samples,
    map_rows,
    per_chunk,
)

__all__ = ["GaussianNB"]


def _class_summary(block, f: int, classes) -> tuple:
    """Per label: weighted count, mean, M2 of the rows; unweighted count, mean, M2 of all rows."""
    b = np.asarray(block, dtype=np.float64)
    x, y, w = b[:, :f], b[:, f], b[:, f + 1]
    labels = np.unique(y) if classes is None else np.asarray(classes, dtype=np.float64)
    per = {}
    for label in labels:
        sel = y == label
        ws = w[sel]
        total = ws.sum()
        if not sel.any() or total <= 0:
            continue
        mean = (x[sel] * ws[:, None]).sum(axis=0) / total
        m2 = (((x[sel] - mean) ** 2) * ws[:, None]).sum(axis=0)
        per[float(label)] = (total, mean, m2)
    n = x.shape[0]
    mean = x.mean(axis=0) if n else np.zeros(f)
    return per, (n, mean, ((x - mean) ** 2).sum(axis=0)), np.unique(y)


def _merge(a, b):
    na, ma, sa = a
    nb, mb, sb = b
    n = na + nb
    if n == 0:
        return a
    delta = mb - ma
    return n, ma + delta * (nb / n), sa + sb + delta**2 * (na * nb / n)


def _joint_log_likelihood(block, theta, var, log_prior):
    x = np.asarray(block, dtype=np.float64)
    out = np.empty((x.shape[0], theta.shape[0]))
    for c in range(theta.shape[0]):
        out[:, c] = (
            log_prior[c]
            - 0.5 * np.sum(np.log(2 * np.pi * var[c]))
            - 0.5 * np.sum((x - theta[c]) ** 2 / var[c], axis=1)
        )
    return out


def _log_proba(block, theta, var, log_prior, dtype):
    jll = _joint_log_likelihood(block, theta, var, log_prior)
    top = jll.max(axis=1, keepdims=True) if jll.shape[0] else 0
    norm = top + np.log(np.exp(jll - top).sum(axis=1, keepdims=True)) if jll.shape[0] else 0
    return (jll - norm).astype(dtype)


def _proba(block, theta, var, log_prior, dtype):
    return np.exp(_log_proba(block, theta, var, log_prior, np.float64)).astype(dtype)


def _predict(block, theta, var, log_prior, classes):
    if block.shape[0] == 0:
        return np.zeros(0, dtype=classes.dtype)
    return classes[_joint_log_likelihood(block, theta, var, log_prior).argmax(axis=1)]


class GaussianNB(ClassificationMixin, BaseEstimator):
    """Gaussian naive Bayes, as scikit-learn's.

    Parameters
    ----------
    priors : array-like of shape (n_classes,), optional
        The classes' prior probabilities (default: their shares of the training samples).
    var_smoothing : float
        ``epsilon_ = var_smoothing * max(feature variance)`` is added to every variance.

    Attributes (after ``fit``): ``classes_``, ``class_count_``, ``class_prior_``, ``theta_``
    (means), ``var_`` (variances; Heat's ``sigma_``), ``epsilon_``.
    """

    def __init__(self, priors=None, var_smoothing: float = 1e-9):
        self.priors = priors
        self.var_smoothing = var_smoothing

    # ------------------------------------------------------------------ fitting
    def fit(self, x: ht.DNDarray, y: ht.DNDarray, sample_weight=None) -> GaussianNB:
        """Learn the classes' means and variances (one pass); earlier fits are forgotten."""
        return self._partial_fit(x, y, None, sample_weight, refit=True)

    def partial_fit(self, x, y, classes=None, sample_weight=None) -> GaussianNB:
        """Add ``x``, ``y`` to the fitted statistics (the first call needs ``classes``
        unless ``fit`` ran before)."""
        return self._partial_fit(x, y, classes, sample_weight, refit=False)

    def _check_inputs(self, x, y, sample_weight):
        if not isinstance(y, ht.DNDarray):
            raise TypeError(f"`y` must be a DNDarray, got {type(y).__name__}")
        if y.ndim != 1:
            raise ValueError(f"`y` must be 1-D, got {y.ndim}-D")
        x = check_samples(x)
        if y.shape[0] != x.shape[0]:
            raise ValueError(f"`y` must have {x.shape[0]} samples (as `x`), got {y.shape[0]}")
        if sample_weight is not None:
            if not isinstance(sample_weight, ht.DNDarray):
                raise TypeError(
                    f"`sample_weight` must be a DNDarray, got {type(sample_weight).__name__}"
                )
            if sample_weight.ndim != 1 or sample_weight.shape[0] != x.shape[0]:
                raise ValueError(
                    f"`sample_weight` must have shape ({x.shape[0]},), got {sample_weight.shape}"
                )
        vs = self.var_smoothing
        if isinstance(vs, bool) or not isinstance(vs, numbers.Real) or vs < 0:
            raise ValueError(f"`var_smoothing` must be a non-negative number, got {vs!r}")
        return x

    def _partial_fit(self, x, y, classes, sample_weight, refit: bool) -> GaussianNB:
        x = self._check_inputs(x, y, sample_weight)
        f = x.shape[1]
        if refit:
            known = None
        elif getattr(self, "classes_", None) is not None:
            known = self.classes_.numpy()
            if x.shape[1] != self.theta_.shape[1]:
                raise ValueError(
                    f"`x` must have {self.theta_.shape[1]} features (as fitted), got {x.shape[1]}"
                )
            if classes is not None and not np.array_equal(np.asarray(_values(classes)), known):
                raise ValueError(f"`classes` must be the fitted classes {known.tolist()}")
        elif classes is None:
            raise ValueError("`classes` must be given on the first call to `partial_fit`")
        else:
            known = np.unique(np.asarray(_values(classes)))
        w = ht.ones(x.shape[0], comm=x.comm) if sample_weight is None else sample_weight
        cols = [
            x.astype(np.float64),
            y.astype(np.float64).reshape(-1, 1),
            w.astype(np.float64).reshape(-1, 1),
        ]
        joined = ht.concatenate(
            [c if c.split in (None, 0) else c.resplit(None) for c in cols], axis=1
        )
        parts = per_chunk(
            joined, _class_summary, f, None if known is None else known.astype(np.float64)
        )
        found = np.unique(np.concatenate([p[2] for p in parts])) if parts else np.zeros(0)
        labels = found if known is None else known.astype(np.float64)
        if known is not None and not np.isin(found, labels).all():
            raise ValueError(f"`y` has labels outside the fitted classes {known.tolist()}")
        k = len(labels)
        count = np.zeros(k)
        mean = np.zeros((k, f))
        m2 = np.zeros((k, f))
        for c, label in enumerate(labels):
            stats = (0.0, np.zeros(f), np.zeros(f))
            for per, _, _ in parts:
                if float(label) in per:
                    stats = _merge(stats, per[float(label)])
            count[c], mean[c], m2[c] = stats
        overall = (0, np.zeros(f), np.zeros(f))
        for _, summary, _ in parts:
            overall = _merge(overall, summary)
        epsilon = float(self.var_smoothing) * float((overall[2] / max(overall[0], 1)).max())
        if not refit and getattr(self, "classes_", None) is not None:
            old_count = self.class_count_.numpy().astype(np.float64)
            old_mean = self.theta_.numpy().astype(np.float64)
            # scikit-learn's rule: the new batch's epsilon replaces the old one
            old_m2 = (self.var_.numpy().astype(np.float64) - epsilon) * old_count[:, None]
            for c in range(k):
                count[c], mean[c], m2[c] = _merge(
                    (old_count[c], old_mean[c], old_m2[c]), (count[c], mean[c], m2[c])
                )
        var = m2 / np.maximum(count, 1e-300)[:, None] + epsilon
        prior = self._prior(count)
        dtype = x.to_dask().dtype
        dtype = dtype if np.issubdtype(dtype, np.floating) else np.dtype(np.float64)
        label_dtype = y.to_dask().dtype
        self.classes_ = ht.array(labels.astype(label_dtype), comm=x.comm)
        self.class_count_ = ht.array(count.astype(dtype), comm=x.comm)
        self.class_prior_ = ht.array(prior.astype(dtype), comm=x.comm)
        self.theta_ = ht.array(mean.astype(dtype), comm=x.comm)
        self.var_ = ht.array(var.astype(dtype), comm=x.comm)
        self.epsilon_ = epsilon
        return self

    def _prior(self, count: np.ndarray) -> np.ndarray:
        if self.priors is None:
            return count / count.sum()
        priors = np.asarray(_values(self.priors), dtype=np.float64)
        if priors.shape != count.shape:
            raise ValueError(f"`priors` must number {len(count)} (the classes), got {priors.size}")
        if not np.isclose(priors.sum(), 1.0):
            raise ValueError(f"`priors` must sum to 1, got {priors.sum()}")
        if (priors < 0).any():
            raise ValueError("`priors` must be non-negative")
        return priors

    @property
    def sigma_(self):
        """Heat's name for ``var_``."""
        return self.var_

    # ------------------------------------------------------------------ prediction
    def _model(self, x):
        check_fitted(self, "theta_")
        x = check_samples(x, n_features=self.theta_.shape[1])
        theta = self.theta_.numpy().astype(np.float64)
        var = self.var_.numpy().astype(np.float64)
        with np.errstate(divide="ignore"):
            log_prior = np.log(self.class_prior_.numpy().astype(np.float64))
        return x, theta, var, log_prior

    def predict(self, x: ht.DNDarray) -> ht.DNDarray:
        """The most probable class of every sample."""
        x, theta, var, log_prior = self._model(x)
        classes = self.classes_.numpy()
        return map_rows(x, _predict, theta, var, log_prior, classes, dtype=classes.dtype)

    def predict_log_proba(self, x: ht.DNDarray) -> ht.DNDarray:
        """The log-probability of every class for every sample, ``(n_samples, n_classes)``."""
        x, theta, var, log_prior = self._model(x)
        dtype = self.theta_.to_dask().dtype
        return map_rows(
            x, _log_proba, theta, var, log_prior, dtype, dtype=dtype, n_columns=len(theta)
        )

    def predict_proba(self, x: ht.DNDarray) -> ht.DNDarray:
        """The probability of every class for every sample, ``(n_samples, n_classes)``."""
        x, theta, var, log_prior = self._model(x)
        dtype = self.theta_.to_dask().dtype
        return map_rows(x, _proba, theta, var, log_prior, dtype, dtype=dtype, n_columns=len(theta))


def _values(a):
    return a.numpy() if isinstance(a, ht.DNDarray) else a
