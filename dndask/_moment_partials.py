"""The central moments of chunks, merged: what ``var``, ``skew`` and ``kurtosis`` reduce with.

Every chunk reduces itself to its count, mean and central sums ``M2``, ``M3``, ``M4``
over the reduced axes (one task on the chunk's rank, two passes over the chunk in blocks
of about 4 MiB, so no full-size temporary); one task per result chunk merges them
(Pébay's pairwise update) and finishes the statistic. Only the partials move between
ranks, and moments of the same array computed together share the chunk tasks.
"""

from __future__ import annotations

import functools

import dask.array as da
import numpy as np

from . import _graph

__all__ = ["applies", "reduction", "standardized", "variance"]

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


def _empty_meta(meta: np.ndarray) -> np.ndarray:
    """``meta`` as an empty 1-d array of its type: dask reshapes it to any step's dimensions."""
    return meta.reshape(-1)[:0]


def _combine(parts, axis, keepdims=True, computing_meta: bool = False):
    if computing_meta:
        return _empty_meta(parts)
    return _as_tuple(functools.reduce(_merge, _leaves(parts)))


def _finish(value, axis, keepdims: bool, dtype):
    return (value if keepdims else value.squeeze(axis=axis)).astype(dtype)


def standardized(parts, axis, keepdims, order: int, dtype, computing_meta: bool = False):
    """``m_order / m2 ** (order / 2)`` of the merged partials, in ``dtype``."""
    if computing_meta:
        return _empty_meta(parts)
    total = functools.reduce(_merge, _leaves(parts))
    with np.errstate(divide="ignore", invalid="ignore"):
        value = total["m" + str(order)] / total["n"] / (total["m2"] / total["n"]) ** (order / 2)
    return _finish(value, axis, keepdims, dtype)


def variance(parts, axis, keepdims, ddof: int, dtype, computing_meta: bool = False):
    """``M2 / (n - ddof)`` of the merged partials, in ``dtype``."""
    if computing_meta:
        return _empty_meta(parts)
    total = functools.reduce(_merge, _leaves(parts))
    with np.errstate(divide="ignore", invalid="ignore"):
        value = total["m2"] / np.float64(total["n"] - ddof)
    return _finish(value, axis, keepdims, dtype)


def applies(x) -> bool:
    """Whether the partials serve ``x``: real floating numpy chunks."""
    return x.dtype.kind == "f" and type(_graph.chunk_meta(x)) is np.ndarray


def reduction(x, aggregate, axes: tuple[int, ...], keepdims: bool):
    """``aggregate`` (called with ``dtype=x.dtype``) of the merged partials of ``x`` over
    ``axes``: a task per chunk, one task per result chunk. The chunk layer's name depends
    only on ``x`` and ``axes``, so every moment of the same array shares it.

    ``_combine`` and the aggregates take dask's ``computing_meta`` and then return an empty
    meta of the type they are given: dask's expression arrays compute a reduction's meta by
    calling them on it (and reshape it to each step's dimensions), where graph arrays take
    the ``meta`` passed here."""
    ndim = x.ndim - (0 if keepdims else len(axes))
    return da.reduction(
        x,
        _partials,
        functools.partial(aggregate, dtype=x.dtype),
        axis=axes,
        keepdims=keepdims,
        dtype=x.dtype,
        combine=_combine,
        split_every=max(len(x.chunks[i]) for i in axes) if axes else None,
        concatenate=False,
        meta=_graph.meta_of(x.dtype, ndim, like=x),
        name="moment-partials",
    )
