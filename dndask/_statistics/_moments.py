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

import dask.array as da
import numpy as np

from .. import _dndarray, _elementwise, _graph, _layout, _reductions
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


# the rows of a chunk (along its first reduced axis) one block of the deviations holds
_BLOCK_BYTES = 4 * 2**20


def _partials(chunk, axis, keepdims=True):
    """A chunk's mean, central sums ``M2``, ``M3``, ``M4`` over ``axis`` (float64, reduced
    axes kept) and count, from two passes over the chunk in blocks along ``axis[0]``.

    A tuple led by an array (Dask reads the meta of a reduction's chunk tasks from it).
    """
    x = np.asarray(chunk)
    shape = tuple(1 if i in axis else n for i, n in enumerate(x.shape))
    n = int(np.prod([x.shape[i] for i in axis]))
    out = {"n": n, "mean": np.zeros(shape)}
    out.update({k: np.zeros(shape) for k in ("m2", "m3", "m4")})
    if n == 0:
        return _as_tuple(out)
    mean = x.sum(axis=axis, keepdims=True) / np.asarray(n, x.dtype)
    out["mean"] = mean.astype(np.float64)
    lead = axis[0]
    per_row = max(x.nbytes // max(x.shape[lead], 1), 1)
    step = max(_BLOCK_BYTES // per_row, 1)
    for start in range(0, x.shape[lead], step):
        block = x[(slice(None),) * lead + (slice(start, start + step),)]
        d = np.subtract(block, mean)
        d2 = np.multiply(d, d)
        out["m2"] += d2.sum(axis=axis, keepdims=True)
        out["m3"] += np.multiply(d2, d, out=d).sum(axis=axis, keepdims=True)
        out["m4"] += np.multiply(d2, d2, out=d2).sum(axis=axis, keepdims=True)
    return _as_tuple(out)


_FIELDS = ("mean", "m2", "m3", "m4", "n")


def _as_tuple(parts: dict) -> tuple:
    return tuple(parts[k] for k in _FIELDS)


def _merge(a: dict, b: dict) -> dict:
    """The partials of two disjoint parts together (Pébay 2008, eqs. 2.1-2.3)."""
    if not b["n"]:
        return a
    if not a["n"]:
        return b
    na, nb = a["n"], b["n"]
    n = na + nb
    delta = b["mean"] - a["mean"]
    m2 = a["m2"] + b["m2"] + delta**2 * na * nb / n
    m3 = (
        a["m3"]
        + b["m3"]
        + delta**3 * na * nb * (na - nb) / n**2
        + 3 * delta * (na * b["m2"] - nb * a["m2"]) / n
    )
    m4 = (
        a["m4"]
        + b["m4"]
        + delta**4 * na * nb * (na * na - na * nb + nb * nb) / n**3
        + 6 * delta**2 * (na * na * b["m2"] + nb * nb * a["m2"]) / n**2
        + 4 * delta * (na * b["m3"] - nb * a["m3"]) / n
    )
    return {"n": n, "mean": a["mean"] + delta * nb / n, "m2": m2, "m3": m3, "m4": m4}


def _leaves(parts) -> list:
    """The partials (tuples) in Dask's nested lists of them, as dicts."""
    if isinstance(parts, tuple):
        return [dict(zip(_FIELDS, parts, strict=True))]
    return [x for p in parts for x in _leaves(p)]


def _combine(parts, axis, keepdims=True):
    return _as_tuple(functools.reduce(_merge, _leaves(parts)))


def _ratio(parts, axis, keepdims, order: int, dtype):
    """``m_order / m2 ** (order / 2)`` of the merged partials, in ``dtype``."""
    total = functools.reduce(_merge, _leaves(parts))
    with np.errstate(divide="ignore", invalid="ignore"):
        value = total["m" + str(order)] / total["n"] / (total["m2"] / total["n"]) ** (order / 2)
    if not keepdims:
        value = value.squeeze(axis=axis)
    return value.astype(dtype)


def _standardized_moment(a, axis, order: int):
    """``m_order / m2 ** (order / 2)`` over ``axis`` of a real numpy-chunked ``a``, one tree
    reduction whose chunk tasks (the partials up to power 4) any order shares."""
    x = a.to_dask()
    axes = _layout.normalize_axes(axis, a.ndim)
    dtype = x.dtype
    ndim = a.ndim - len(axes)
    result = da.reduction(
        x,
        _partials,
        functools.partial(_ratio, order=order, dtype=dtype),
        axis=axes,
        keepdims=False,
        dtype=dtype,
        combine=_combine,
        split_every=max(len(x.chunks[i]) for i in axes) if axes else None,
        concatenate=False,
        meta=_graph.meta_of(dtype, ndim, like=x),
        name="moment-partials",
    )
    split = _layout.reduced_split(a.split, axes, False)
    return _dndarray.from_dask(result, split, a.comm, parents=(a,))


def _moment_ratio(a, axis, order: int, bias: bool, name: str):
    _check(a, name)
    _check_bool(bias, "bias")
    if axis is not None and not isinstance(axis, numbers.Integral):
        raise TypeError(f"`axis` of `{name}` must be an int or None, got {type(axis).__name__}")
    n = a.size if axis is None else a.shape[int(axis)]
    a = _float(a)
    if a.dtype.kind == "f" and type(a.to_dask()._meta) is np.ndarray:
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
