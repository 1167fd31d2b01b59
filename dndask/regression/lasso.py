"""Lasso regression by coordinate descent, Heat's algorithm in one pass over the data.

Heat's Lasso treats the first column of ``x`` as the intercept's (not penalised) and
updates each coefficient ``j`` in turn to the soft-thresholded
``rho_j = mean(x_j (y - x theta + theta_j x_j))`` (columns scaled to mean square 1).
Every ``rho_j`` is a combination of the Gram matrix ``x^T x / m`` and ``x^T y / m``,
so one pass over the rows (each rank its own block's products, summed in the
driver) gives all the fit needs; the sweeps then run on ``n x n`` numbers.

>>> import dndask as ht, numpy as np
>>> from dndask.regression import Lasso
>>> x = ht.array([[1.0, -1.0], [1.0, 1.0], [1.0, -1.0], [1.0, 1.0]], split=0)
>>> y = ht.array([1.0, 3.0, 1.0, 3.0], split=0)
>>> est = Lasso(lam=0.5).fit(x, y)
>>> est.intercept_.numpy().tolist(), est.coef_.numpy().tolist()
([2.0], [[0.5]])
"""

from __future__ import annotations

import numbers

import numpy as np

import dndask as ht
from dndask.base import BaseEstimator, RegressionMixin, check_fitted, check_samples, per_chunk

__all__ = ["Lasso"]


def _gram(block) -> np.ndarray:
    b = np.asarray(block, dtype=np.float64)
    return b.T @ b


class Lasso(RegressionMixin, BaseEstimator):
    """Lasso: least squares with an l1 penalty ``lam`` on all coefficients but the first.

    Parameters
    ----------
    lam : float
        The penalty (Heat's name for scikit-learn's ``alpha``).
    max_iter : int
        The most sweeps over the coefficients.
    tol : float or None
        Stop when the root-mean-square change of the coefficients in a sweep is below it.

    Attributes
    ----------
    theta : DNDarray
        All coefficients, ``(n_features, 1)``; ``intercept_`` is ``theta[0]`` (shape ``(1,)``)
        and ``coef_`` the rest (``(n_features - 1, 1)``).
    n_iter : int
        The sweeps made.
    """

    def __init__(self, lam: float = 0.1, max_iter: int = 100, tol: float | None = 1e-6):
        self.lam = lam
        self.max_iter = max_iter
        self.tol = tol
        self.theta = None
        self.n_iter = None

    @property
    def coef_(self):
        """The penalised coefficients, ``theta[1:]``."""
        return None if self.theta is None else self.theta[1:]

    @property
    def intercept_(self):
        """The first coefficient, ``theta[0]`` (shape ``(1,)``)."""
        return None if self.theta is None else self.theta[0:1, 0]

    def _check_params(self) -> None:
        if isinstance(self.lam, bool) or not isinstance(self.lam, numbers.Real) or self.lam < 0:
            raise ValueError(f"`lam` must be a non-negative number, got {self.lam!r}")
        if isinstance(self.max_iter, bool) or not isinstance(self.max_iter, numbers.Integral):
            raise TypeError(f"`max_iter` must be an int, got {type(self.max_iter).__name__}")
        if self.max_iter < 1:
            raise ValueError(f"`max_iter` must be at least 1, got {self.max_iter}")
        if self.tol is not None and not (isinstance(self.tol, numbers.Real) and self.tol >= 0):
            raise ValueError(f"`tol` must be a non-negative number or None, got {self.tol!r}")

    def fit(self, x: ht.DNDarray, y: ht.DNDarray) -> Lasso:
        """Fit ``theta`` to the samples ``x`` ``(m, n)``, targets ``y`` ``(m,)`` or ``(m, 1)``."""
        self._check_params()
        if not isinstance(y, ht.DNDarray):
            raise TypeError(f"`y` must be a DNDarray, got {type(y).__name__}")
        if y.ndim > 2 or (y.ndim == 2 and y.shape[1] != 1):
            raise ValueError(f"`y` must have shape (n_samples,) or (n_samples, 1), got {y.shape}")
        x = check_samples(x)
        if y.shape[0] != x.shape[0]:
            raise ValueError(f"`y` must have {x.shape[0]} samples (as `x`), got {y.shape[0]}")
        y = y.reshape(y.shape[0], 1) if y.ndim == 1 else y
        if y.split == 1:
            y = y.resplit(None)
        xy = ht.concatenate([x.astype(np.float64), y.astype(np.float64)], axis=1)
        total = sum(per_chunk(xy, _gram))
        if not np.isfinite(total).all():
            raise ValueError("`x` and `y` must be finite, got NaN or infinite values")
        m, n = x.shape
        G = total[:n, :n] / m
        b = total[:n, n] / m
        theta = np.zeros(n)
        lam = float(self.lam)
        sweeps = 0
        for _ in range(self.max_iter):
            sweeps += 1
            old = theta.copy()
            for j in range(n):
                rho = b[j] - G[j] @ theta + theta[j] * G[j, j]
                if j == 0:
                    theta[j] = rho
                else:
                    theta[j] = np.sign(rho) * max(abs(rho) - lam, 0.0)
            if self.tol is not None and np.sqrt(np.mean((theta - old) ** 2)) < self.tol:
                break
        dtype = x.to_dask().dtype
        dtype = dtype if np.issubdtype(dtype, np.floating) else np.dtype(np.float64)
        self.theta = ht.array(theta.reshape(n, 1).astype(dtype), comm=x.comm)
        self.n_iter = sweeps
        return self

    def predict(self, x: ht.DNDarray) -> ht.DNDarray:
        """``x @ theta``: ``(n_samples, 1)``."""
        check_fitted(self, "theta")
        x = check_samples(x, n_features=self.theta.shape[0])
        return ht.matmul(x.astype(self.theta.to_dask().dtype), self.theta)
