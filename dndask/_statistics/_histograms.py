"""Histograms: :func:`dndask.bincount`, :func:`dndask.histc`, :func:`dndask.histogram`.

Each rank bins its own chunk on bins shared by all ranks (found from the
global extrema when the caller does not give them), then Dask sums the
per-rank rows as a tree (:mod:`._rows`); the result is ``split=None``.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import _dndarray, _factories, _ops, _torch, _xp
from .._graph import chunk_meta
from . import _checks, _rows


def _local_bincount(length: int):
    def count(x, w=None):
        xp = _xp.namespace_of(x)
        w = None if w is None else w.astype(np.float64)
        return xp.bincount(x.astype(np.intp), weights=w, minlength=length)

    return count


def bincount(x, weights=None, minlength=0):
    """Count the occurrences of each value in a 1-D array of non-negative ints.

    Every rank counts its own chunk into ``max(x.max() + 1, minlength)`` bins
    (the global maximum is two values of metadata per rank, computed now), then
    Dask sums the per-rank counts as a tree. The result is ``split=None``.

    Parameters
    ----------
    x : DNDarray
        1-D, integer or boolean, non-negative.
    weights : DNDarray, numpy array or torch tensor, optional
        Same shape as ``x``; ``out[n] += weights[i]`` for ``x[i] == n``.
    minlength : int, optional
        Minimum number of bins.

    Returns
    -------
    DNDarray
        int64 counts, or float64 sums of weights; ``split=None``.

    Examples
    --------
    >>> import dndask as ht
    >>> ht.bincount(ht.array([0, 1, 1, 3, 1], split=0)).numpy().tolist()
    [1, 3, 0, 1]
    >>> w = ht.array([0.5, 1.0, 2.0])
    >>> ht.bincount(ht.array([0, 1, 1], split=0), weights=w).numpy().tolist()
    [0.5, 3.0]
    """
    x = _checks.check_array(x, "bincount", "x")
    _checks.check_kind(x.dtype, "biu", "bincount", "x", "an integer")
    if x.ndim != 1:
        raise ValueError(f"`x` of `bincount` must be 1-dimensional, got shape {x.shape}")
    minlength = _checks.check_int(minlength, "minlength")
    if minlength < 0:
        raise ValueError(f"`minlength` must be non-negative, got {minlength}")
    if weights is not None:
        weights = _checks.same_shape_weights(weights, x, "bincount", "x")
    dtype = np.dtype(np.float64 if weights is not None else np.int64)
    extrema = _rows.extrema(x)
    length = minlength
    if extrema is not None:
        low, high = (int(v) for v in extrema)
        if low < 0:
            raise ValueError(f"`x` of `bincount` must hold non-negative ints, got minimum {low}")
        length = max(high + 1, minlength)
    operands = (x,) if weights is None else (x, weights)
    arrays, split, comm, parents = _ops.align(operands, "bincount")
    fn = _local_bincount(length)
    rows, task_ranks = _rows.per_rank_rows("bincount", fn, arrays, split, length, dtype, (length,))
    return _rows.summed(rows, task_ranks, dtype, comm, parents)


def _local_histc(bins: int, low: float, high: float, dtype: np.dtype):
    def hist(x):
        # a device chunk reaches torch through DLPack (a CUDA tensor for CuPy), and the
        # histogram is adopted back (or copied there explicitly): nothing goes through host
        xp = _xp.namespace_of(x)
        t = _torch.to_torch(xp.ascontiguousarray(x.reshape(-1).astype(dtype)))
        return _xp.from_torch(_torch.torch().histc(t, bins=bins, min=low, max=high), x)

    return hist


def histc(a, bins=100, min=0, max=0):
    """Histogram with ``bins`` equal-width bins between ``min`` and ``max`` (torch/Heat rules).

    If ``min == max`` (the default ``0, 0`` included) the data's minimum and
    maximum are used (two values of metadata per rank, computed now), and if
    those are equal too the range is widened by one on each side, as torch
    does. Values outside the range and NaNs are ignored; the maximum falls
    into the last bin. Every rank bins its chunk with :func:`torch.histc` on the
    shared range, then Dask sums the per-rank histograms as a tree.

    Parameters
    ----------
    a : DNDarray
        Integer or floating data (any shape; binned flat).
    bins : int, optional
        Number of bins, at least 1.
    min, max : float, optional
        Range of the bins (inclusive); ``max`` must not be less than ``min``.

    Returns
    -------
    DNDarray
        ``(bins,)`` counts in ``a``'s floating dtype (float64 for integer
        ``a``); ``split=None``.

    Examples
    --------
    >>> import dndask as ht
    >>> ht.histc(ht.array([1.0, 2.0, 1.0], split=0), bins=4, min=0, max=3).numpy().tolist()
    [0.0, 2.0, 1.0, 0.0]
    >>> ht.histc(ht.arange(10, split=0), bins=5).numpy().tolist()
    [2.0, 2.0, 2.0, 2.0, 2.0]
    """
    a = _checks.check_array(a, "histc")
    _checks.check_kind(a.dtype, "iuf", "histc", "a", "an integer or floating")
    bins = _checks.check_int(bins, "bins")
    if bins <= 0:
        raise ValueError(f"`bins` must be positive, got {bins}")
    low, high = float(_checks.check_real(min, "min")), float(_checks.check_real(max, "max"))
    if not (np.isfinite(low) and np.isfinite(high)):
        raise ValueError(f"`min` and `max` must be finite, got [{low}, {high}]")
    if low > high:
        raise ValueError(f"`max` must not be less than `min`, got min={low}, max={high}")
    if low == high:
        extrema = _rows.extrema(a)
        if extrema is not None:
            low, high = float(extrema[0]), float(extrema[1])
            if not (np.isfinite(low) and np.isfinite(high)):
                raise ValueError(
                    f"`a` has a range of [{low}, {high}] that is not finite; give `min` and `max`"
                )
        if low == high:
            low, high = low - 1, high + 1
    dtype = a.dtype if a.dtype.kind == "f" else np.dtype(np.float64)
    fn = _local_histc(bins, low, high, dtype)
    params = (bins, low, high)
    rows, task_ranks = _rows.per_rank_rows("histc", fn, [a.to_dask()], a.split, bins, dtype, params)
    return _rows.summed(rows, task_ranks, dtype, a.comm, (a,))


def _check_bins(bins):
    """``bins`` as an int or as a numpy array of edges, checked as numpy does."""
    if isinstance(bins, str):
        raise NotImplementedError(
            f"`histogram` does not support `bins` given as a string yet, got {bins!r}"
        )
    if isinstance(bins, (bool, np.bool_)):
        raise TypeError("`bins` must be an int or a sequence of edges, got bool")
    if isinstance(bins, numbers.Integral):
        if bins < 1:
            raise ValueError(f"`bins` must be positive, when an integer, got {bins}")
        return int(bins)
    edges = _checks.to_numpy(bins, "bins")
    if edges.dtype.kind not in "iuf":
        raise TypeError(f"`bins` must hold real numbers, got {edges.dtype}")
    if edges.ndim != 1:
        raise ValueError(f"`bins` must be 1-D, when an array, got shape {edges.shape}")
    if np.any(edges[:-1] > edges[1:]):
        raise ValueError(f"`bins` must increase monotonically, when an array, got {edges}")
    return edges


def _check_range(value):
    if value is None:
        return None
    try:
        low, high = value
    except (TypeError, ValueError):
        raise TypeError(f"`range` must be None or a pair (min, max), got {value!r}") from None
    _checks.check_real(low, "range[0]")
    _checks.check_real(high, "range[1]")
    if low > high:
        raise ValueError(f"`range` must have max >= min, got {value!r}")
    if not (np.isfinite(low) and np.isfinite(high)):
        raise ValueError(f"`range` must be finite, got {value!r}")
    return low, high


def _histogram_range(a: _dndarray.DNDarray, bins, range_):
    """The range each rank passes to numpy so its edges equal numpy's global ones."""
    if not isinstance(bins, int) or range_ is not None:
        return range_
    extrema = _rows.extrema(a)
    if extrema is None:
        return (0, 1)
    if not (np.isfinite(extrema[0]) and np.isfinite(extrema[1])):
        raise ValueError(
            f"`a` has an autodetected range of [{extrema[0]}, {extrema[1]}] that is not "
            "finite; give `range`"
        )
    return extrema


def _local_histogram(edges: np.ndarray):
    """Each rank's counts on numpy's global ``edges`` (copied into the chunk's namespace).

    Counting on explicit edges gives numpy's counts for an int ``bins`` too: numpy corrects
    its equal-width indices to agree with its edges, and a device's own ``linspace`` could
    differ from numpy's in the last bit.
    """

    def hist(x, w=None):
        xp = _xp.namespace_of(x)
        w = None if w is None else w.reshape(-1)
        return xp.histogram(x.reshape(-1), bins=xp.asarray(edges), weights=w)[0]

    return hist


def _density(counts, widths: np.ndarray):
    xp = _xp.namespace_of(counts)
    return counts / xp.asarray(widths) / counts.sum()


def histogram(a, bins=10, range=None, weights=None, density=False):
    """Histogram of ``a`` and its bin edges, as :func:`numpy.histogram`.

    With an int ``bins`` and no ``range`` the range is the data's minimum and
    maximum (two values of metadata per rank, computed now; widened by 0.5 on
    each side if they are equal). Every rank bins its chunk with
    :func:`numpy.histogram` on exactly the edges numpy would use for the whole
    array, then Dask sums the per-rank counts as a tree, so the counts equal
    numpy's. Values outside the range are ignored, the last bin includes its
    right edge.

    Parameters
    ----------
    a : DNDarray
        Integer or floating data (any shape; binned flat).
    bins : int or sequence of float, optional
        Number of equal-width bins (at least 1), or the bin edges (1-D,
        non-decreasing; numpy, torch, list or DNDarray).
    range : (float, float), optional
        Lower and upper edge for an int ``bins``; ignored with edges.
    weights : DNDarray, numpy array or torch tensor, optional
        Same shape as ``a``; each value counts with its weight.
    density : bool, optional
        Normalise so that the integral over the range is 1.

    Returns
    -------
    hist : DNDarray
        Counts (int64, the weights' dtype, or float64 with ``density``); ``split=None``.
    bin_edges : DNDarray
        ``len(hist) + 1`` edges; ``split=None``.

    Examples
    --------
    >>> import dndask as ht
    >>> hist, edges = ht.histogram(ht.array([1.0, 2.0, 1.0, 4.0], split=0), bins=3)
    >>> hist.numpy().tolist(), edges.numpy().tolist()
    ([2, 1, 1], [1.0, 2.0, 3.0, 4.0])
    >>> ht.histogram(ht.arange(6, split=0), bins=[0, 2, 6])[0].numpy().tolist()
    [2, 4]
    """
    a = _checks.check_array(a, "histogram")
    _checks.check_kind(a.dtype, "iuf", "histogram", "a", "an integer or floating")
    bins = _check_bins(bins)
    density = _checks.check_bool(density, "density")
    range_ = _check_range(range) if isinstance(bins, int) else None
    if weights is not None:
        weights = _checks.same_shape_weights(weights, a, "histogram", "a")
    range_ = _histogram_range(a, bins, range_)
    empty_w = None if weights is None else np.empty(0, dtype=weights.dtype)
    edges = np.histogram(np.empty(0, dtype=a.dtype), bins=bins, range=range_)[1]
    fn = _local_histogram(edges)
    dtype = np.asarray(fn(np.empty(0, dtype=a.dtype), empty_w)).dtype
    operands = (a,) if weights is None else (a, weights)
    arrays, split, comm, parents = _ops.align(operands, "histogram")
    params = (edges.tobytes(), edges.dtype.str)
    rows, task_ranks = _rows.per_rank_rows(
        "histogram", fn, arrays, split, len(edges) - 1, dtype, params
    )
    hist = _rows.summed(rows, task_ranks, dtype, comm, parents)
    if density:
        widths = np.array(np.diff(edges), float)
        h = hist.to_dask().rechunk(-1)
        meta = _xp.namespace_of(chunk_meta(h)).empty((0,), dtype=np.float64)
        h = h.map_blocks(_density, widths, dtype=np.float64, meta=meta)
        hist = _dndarray.from_dask(h, None, comm, parents=(hist,))
    bin_edges = _factories.array(edges, comm=comm, device=a.device)  # the edges go to a's device
    return hist, bin_edges
