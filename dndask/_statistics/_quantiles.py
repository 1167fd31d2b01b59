"""Pure planning of percentiles: numpy's sorted positions and its interpolation.

:func:`plan_quantiles` says which sorted positions numpy's formula reads for
each ``q`` and with which weight, :func:`combine_quantiles` applies numpy's
arithmetic to the values found there, so that the result equals
:func:`numpy.percentile` bit for bit (dtype included). No scheduler, no Dask.
"""

from __future__ import annotations

import numpy as np

_METHODS = (
    "inverted_cdf",
    "averaged_inverted_cdf",
    "closest_observation",
    "interpolated_inverted_cdf",
    "hazen",
    "weibull",
    "linear",
    "median_unbiased",
    "normal_unbiased",
    "lower",
    "higher",
    "midpoint",
    "nearest",
)

# alpha and beta of numpy's continuous methods (Hyndman and Fan).
_ALPHA_BETA = {
    "interpolated_inverted_cdf": (0, 1),
    "hazen": (0.5, 0.5),
    "weibull": (0, 0),
    "median_unbiased": (1 / 3.0, 1 / 3.0),
    "normal_unbiased": (3 / 8.0, 3 / 8.0),
}


def check_q(q, scale: int = 100):
    """``q`` for numpy (Python scalars kept, numpy's weak promotion), and ``q / scale``.

    ``q`` is a Python or numpy number or array-like (a DNDarray or tensor is
    converted to numpy by the caller); ``scale`` is 100 for percentiles, 1 for
    quantiles.

    >>> check_q(50)
    (50, array(0.5), True)
    >>> check_q([0.25], scale=1)[1]
    array([0.25])
    """
    weak = type(q) in (int, float)
    values = q if weak else np.asarray(q)
    if np.asarray(q).dtype.kind not in "iuf":
        raise TypeError(f"`q` must be real numbers, got {np.asarray(q).dtype}")
    if np.ndim(q) > 1:
        raise ValueError(f"`q` must be a scalar or 1-D, got shape {np.shape(q)}")
    fraction = np.true_divide(values, scale, out=...)
    if not np.all((fraction >= 0) & (fraction <= 1)):
        raise ValueError(f"`q` must be in [0, {scale}], got {q}")
    return values, fraction, weak


def check_method(method, interpolation) -> str:
    if interpolation is not None:
        if method != "linear":
            raise TypeError("give only one of `method` and `interpolation` (Heat's name)")
        method = interpolation
    if method not in _METHODS:
        raise ValueError(f"`method` must be one of {', '.join(_METHODS)}, got {method!r}")
    return method


def _gamma_mask(shape, default, conditioned, where) -> np.ndarray:
    out = np.full(shape, default)
    np.copyto(out, conditioned, where=where, casting="unsafe")
    return out


def _boundaries(index: np.ndarray, condition) -> np.ndarray:
    previous = np.floor(index)
    gamma = index - previous
    out = _gamma_mask(index.shape, previous + 1, previous, condition(gamma, index))
    out = out.astype(np.intp)
    out[out < 0] = 0
    return out


def _virtual_index(n: int, fraction: np.ndarray, method: str) -> np.ndarray:
    """numpy's (virtual) sorted position of each quantile, for ``n`` values."""
    if method == "inverted_cdf":
        return _boundaries(n * fraction - 1, lambda g, _: g == 0)
    if method == "closest_observation":
        return _boundaries(n * fraction - 1 - 0.5, lambda g, i: (g == 0) & (np.floor(i) % 2 == 1))
    if method == "averaged_inverted_cdf":
        return np.asanyarray(n * fraction - 1)
    if method in _ALPHA_BETA:
        alpha, beta = _ALPHA_BETA[method]
        return np.asanyarray(n * fraction + (alpha + fraction * (1 - alpha - beta)) - 1)
    if method == "lower":
        return np.floor((n - 1) * fraction).astype(np.intp)
    if method == "higher":
        return np.ceil((n - 1) * fraction).astype(np.intp)
    if method == "nearest":
        return np.around((n - 1) * fraction).astype(np.intp)
    if method == "midpoint":
        return np.asanyarray(0.5 * (np.floor((n - 1) * fraction) + np.ceil((n - 1) * fraction)))
    return np.asanyarray((n - 1) * fraction)


def _fix_gamma(gamma: np.ndarray, index: np.ndarray, method: str) -> np.ndarray:
    if method == "averaged_inverted_cdf":
        return _gamma_mask(gamma.shape, 1.0, 0.5, gamma == 0)
    if method == "midpoint":
        return _gamma_mask(gamma.shape, 0.5, 0.0, index % 1 == 0)
    return gamma


def plan_quantiles(n: int, fraction: np.ndarray, method: str):
    """The sorted positions numpy reads for each quantile of ``n`` values, and the weights.

    Returns ``(previous, next, gamma)``: intp positions in ``[0, n)`` of
    ``fraction``'s shape, and numpy's interpolation weight (``None`` for the
    methods that pick one value, when ``previous`` is ``next``).

    >>> plan_quantiles(5, np.array([0.5, 0.9]), "linear")[0].tolist()
    [2, 3]
    """
    index = _virtual_index(n, fraction, method)
    if np.issubdtype(index.dtype, np.integer):
        return index, index, None
    previous = np.floor(index, out=...)
    following = np.add(previous, 1, out=...)
    above = index >= n - 1
    previous[above] = -1
    following[above] = -1
    below = index < 0
    previous[below] = 0
    following[below] = 0
    previous, following = previous.astype(np.intp), following.astype(np.intp)
    gamma = np.asanyarray(index - previous)
    gamma = np.asanyarray(_fix_gamma(gamma, index, method), dtype=index.dtype)
    return previous % n, following % n, gamma


def _lerp(low, high, t):
    """numpy's interpolation between the two neighbours (exactly its arithmetic)."""
    diff = high - low
    out = np.add(low, diff * t, out=...)
    np.subtract(
        high, diff * (1 - t), out=out, where=t >= 0.5, casting="unsafe", dtype=type(out.dtype)
    )
    return out


def combine_quantiles(low, high, gamma, weak: bool, has_nan: bool, dtype) -> np.ndarray:
    """numpy's percentile from the values at the planned positions (see :func:`plan_quantiles`).

    >>> combine_quantiles(np.array(2.0), np.array(3.0), np.array(0.25), False, False, "f8")
    array(2.25)
    """
    low = np.asarray(low, dtype=dtype)
    high = np.asarray(high, dtype=dtype)
    out = np.array(low) if gamma is None else _lerp(low, high, float(gamma) if weak else gamma)
    if has_nan:
        if out.ndim == 0:
            return np.asarray(np.nan, dtype=dtype)
        out[...] = np.nan
    return np.asarray(out)
