"""Spread and shape: ``ptp``, ``skew``, ``kurtosis``, ``cov``.

All are built from the reductions and elementwise functions, so the result's
split follows the reductions' rule (reducing the split axis gives ``split=None``,
otherwise the split is kept, shifted left by the reduced axes before it).
``cov`` of an ``(m, n)`` array is an ``(m, m)`` product of the centred rows with
themselves (:func:`dndask.matmul`'s split rule).

``skew`` and ``kurtosis`` of real numpy chunks are one tree reduction: every chunk
reduces itself to its count, mean and central sums of powers 2 to 4 (a task on the
chunk's rank, in blocks of about 4 MiB, so no full-size temporary), and one task per
result chunk combines them (Pébay's pairwise update). Only those partials move; skew
and kurtosis of the same array share the chunk tasks.
"""

from __future__ import annotations

import functools
import numbers

import numpy as np

from .. import _dndarray, _elementwise, _layout, _reductions
from .. import _moment_partials as _partials
from .._linalg import matmul
from .._manipulation import concatenate, expand_dims, transpose


def _check(a, name: str) -> None:
    if not isinstance(a, _dndarray.DNDarray):
        raise TypeError(f"`a` of `{name}` must be a DNDarray, got {type(a).__name__}")


def _check_bool(value, name: str) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"`{name}` must be a bool, got {type(value).__name__}")


def ptp(a: _dndarray.DNDarray, axis=None, keepdims: bool = False) -> _dndarray.DNDarray:
    """Range of values (maximum minus minimum) along ``axis``, as :func:`numpy.ptp`.

    >>> import dndask as ht
    >>> ht.ptp(ht.array([[1, 5], [2, 9]], split=0), axis=0).numpy().tolist()
    [1, 4]
    """
    _check(a, "ptp")
    return _elementwise.subtract(
        _reductions.max(a, axis, keepdims=keepdims), _reductions.min(a, axis, keepdims=keepdims)
    )


def _float(a):
    return a if a.dtype.kind in "fc" else a.astype(np.float64)


def _central(a, axis, order: int):
    """The deviations from the mean, their squares and the ``order``-th central moment.

    Powers 3 and 4 are products of the squares (``d2 * d``, ``d2 * d2``): numpy's
    ``power`` with another exponent than 2 calls ``pow`` per element, about 90x slower.
    """
    a = _float(a)
    mu = _reductions.mean(a, axis, keepdims=True)
    dev = _elementwise.subtract(a, mu)
    dev2 = _elementwise.multiply(dev, dev)
    powered = {2: dev2, 3: _elementwise.multiply(dev2, dev), 4: _elementwise.multiply(dev2, dev2)}
    return dev2, _reductions.mean(powered[order], axis)


def _standardized_moment(a, axis, order: int):
    """``m_order / m2 ** (order / 2)`` over ``axis`` of a real numpy-chunked ``a``, one tree
    reduction whose chunk tasks (the partials up to power 4) any order shares."""
    axes = _layout.normalize_axes(axis, a.ndim)
    aggregate = functools.partial(_partials.standardized, order=order)
    result = _partials.reduction(a.to_dask(), aggregate, axes, False)
    split = _layout.reduced_split(a.split, axes, False)
    return _dndarray.from_dask(result, split, a.comm, parents=(a,))


def _moment_ratio(a, axis, order: int, bias: bool, name: str):
    _check(a, name)
    _check_bool(bias, "bias")
    if axis is not None and not isinstance(axis, numbers.Integral):
        raise TypeError(f"`axis` of `{name}` must be an int or None, got {type(axis).__name__}")
    axes = _layout.normalize_axes(axis, a.ndim)  # ValueError out of range
    n = int(np.prod([a.shape[i] for i in axes]))
    a = _float(a)
    if _partials.applies(a.to_dask()):
        return _standardized_moment(a, axis, order), n
    dev2, m_k = _central(a, axis, order)
    m2 = _reductions.mean(dev2, axis)
    return _elementwise.divide(m_k, _elementwise.power(m2, order / 2)), n


def skew(a: _dndarray.DNDarray, axis=None, unbiased: bool = True) -> _dndarray.DNDarray:
    """Sample skewness (Fisher-Pearson) along ``axis``; ``unbiased`` applies the
    ``sqrt(n (n-1)) / (n-2)`` correction (scipy's ``bias=False``).

    >>> import dndask as ht
    >>> round(float(ht.skew(ht.array([1.0, 2.0, 10.0], split=0), unbiased=False)), 6)
    0.674555
    """
    g1, n = _moment_ratio(a, axis, 3, unbiased, "skew")
    if unbiased:
        if n < 3:
            raise ValueError(f"unbiased `skew` needs at least 3 samples, got {n}")
        g1 = _elementwise.multiply(g1, float(np.sqrt(n * (n - 1)) / (n - 2)))
    return g1


def kurtosis(
    a: _dndarray.DNDarray,
    axis=None,
    unbiased: bool = True,
    Fischer: bool = True,  # noqa: N803
) -> _dndarray.DNDarray:
    """Sample kurtosis along ``axis``: Fisher's (excess, ``Fischer=True``) or Pearson's.

    ``unbiased`` applies scipy's ``bias=False`` correction.

    >>> import dndask as ht
    >>> round(float(ht.kurtosis(ht.array([1.0, 2.0, 3.0, 10.0], split=0), unbiased=False)), 6)
    -0.7696
    """
    _check_bool(Fischer, "Fischer")
    g2, n = _moment_ratio(a, axis, 4, unbiased, "kurtosis")
    if unbiased:
        if n < 4:
            raise ValueError(f"unbiased `kurtosis` needs at least 4 samples, got {n}")
        g2 = _elementwise.add(
            _elementwise.multiply(
                _elementwise.subtract(_elementwise.multiply(g2, n + 1), 3 * (n - 1)),
                (n - 1) / ((n - 2) * (n - 3)),
            ),
            3.0,
        )
    return _elementwise.subtract(g2, 3.0) if Fischer else g2


def cov(m, y=None, rowvar: bool = True, bias: bool = False, ddof=None) -> _dndarray.DNDarray:
    """Covariance matrix of the variables in ``m`` (and ``y``), as :func:`numpy.cov`.

    >>> import dndask as ht
    >>> ht.cov(ht.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]], split=1)).numpy().tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    _check(m, "cov")
    _check_bool(rowvar, "rowvar")
    _check_bool(bias, "bias")
    if ddof is not None and (isinstance(ddof, bool) or not isinstance(ddof, numbers.Integral)):
        raise TypeError(f"`ddof` must be an int, got {type(ddof).__name__}")
    if m.ndim > 2:
        raise ValueError(f"`m` of `cov` must be 1-D or 2-D, got {m.ndim}-D")
    x = _float(m)
    x = expand_dims(x, 0) if x.ndim == 1 else x
    if not rowvar and x.shape[0] != 1:
        x = transpose(x)
    if y is not None:
        _check(y, "cov")
        if y.ndim > 2:
            raise ValueError(f"`y` of `cov` must be 1-D or 2-D, got {y.ndim}-D")
        yy = _float(y)
        yy = expand_dims(yy, 0) if yy.ndim == 1 else yy
        if not rowvar and yy.shape[0] != 1:
            yy = transpose(yy)
        if yy.shape[1] != x.shape[1]:
            raise ValueError(
                f"`m` and `y` of `cov` must have the same number of observations, "
                f"got {x.shape[1]} and {yy.shape[1]}"
            )
        x = concatenate([x, yy.astype(x.dtype) if yy.dtype != x.dtype else yy], axis=0)
    n = x.shape[1]
    ddof = (0 if bias else 1) if ddof is None else int(ddof)
    centred = _elementwise.subtract(x, _reductions.mean(x, 1, keepdims=True))
    out = _elementwise.divide(matmul(centred, transpose(_elementwise.conj(centred))), n - ddof)
    return out
