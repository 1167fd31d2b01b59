"""Statistics an analyst expects: averages, histograms, percentiles.

Values and argument names follow numpy; keyword spellings of Heat are accepted
where they are cheap (``interpolation=``, ``sketched=``, ``sketch_size=``). The
split of every result:

- ``average``: like a reduction (see :func:`dndask._ops.reduce`): reducing the
  split axis gives ``split=None``, otherwise the split is kept (shifted left by
  the reduced axes before it). ``sum_of_weights`` has the same layout.
- ``bincount``, ``histc``, ``histogram``: one histogram per rank with shared
  bins, then Dask's tree sum; the result is small and ``split=None``.
- ``percentile``, ``median``: a reduction whose result gets the ``q`` axis in
  front. Reduced axes that are not the split axis are whole on every rank, so
  each rank reduces its own chunk and the result keeps the split (shifted).
  If the split axis is reduced and another axis survives, the array is first
  resplit to the longest surviving axis and then reduced locally; the result is
  split along that axis. If every axis is reduced (``axis=None`` or a 1-D
  array), the values come from an exact distributed selection (below) and the
  result is ``split=None``.

The distributed selection
-------------------------
Every rank sorts its chunk once (kept in its worker's memory). The driver wants
the values of a few global ranks ``k`` (the sorted positions numpy's formula
needs). For each ``k`` it keeps a bracket ``(L, U]`` that is known to hold the
value, with ``#(x <= L) <= k < #(x <= U)``; at first there are no bounds. One
round sends the distinct brackets to every rank; each rank answers, with binary
searches in its sorted chunk, how many of its values are ``<= L`` and ``< U``,
and either all its values strictly inside the bracket (if at most ``m`` of
them) or ``m`` of them at evenly spaced positions. The positions are known, so
these samples bound the global count below or equal to every sample value
within ``C / m`` per rank (``C`` values strictly inside the bracket). The driver
then either knows the value (``k`` lands on ``U``, or every rank sent all its
values) or moves the bracket to the closest samples whose bounds still hold it,
which leaves at most about ``2 C / m`` values strictly inside. So a round moves
at most ``m`` values and two counts per rank and bracket, and the number of
rounds is about ``1 + log(N / m) / log(m / 2)``, 1 round when no rank holds more
than ``m = 256`` values, 3 to 4 for ``N = 10**9``. Ties never enlarge a bracket:
values equal to ``L`` or ``U`` are counted, not sent. A NaN (found in round 1,
the last value of a sorted chunk) makes every result NaN, as in numpy.
"""

from __future__ import annotations

import functools
import itertools
import numbers

import dask.array as da
import distributed
import numpy as np
import torch
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from . import _compute, _dndarray, _factories, _layout, _ops, _types
from ._graph import block_index

# Values each rank sends per bracket and round of the distributed selection.
_SAMPLES = 256

# Counters of the last distributed selection (read by the tests).
last_selection: dict = {}

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


# ----------------------------------------------------------------- checks
def _check_array(a, fn: str, name: str = "a") -> _dndarray.DNDarray:
    if not isinstance(a, _dndarray.DNDarray):
        raise TypeError(f"`{name}` of `{fn}` must be a DNDarray, got {type(a).__name__}")
    return a


def _check_kind(dtype: np.dtype, kinds: str, fn: str, name: str, what: str) -> None:
    if np.dtype(dtype).kind not in kinds:
        raise TypeError(f"`{name}` of `{fn}` must have {what} dtype, got {np.dtype(dtype)}")


def _check_bool(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"`{name}` must be a bool, got {type(value).__name__}")
    return bool(value)


def _check_int(value, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an int, got {type(value).__name__}")
    return int(value)


def _check_real(value, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a real number, got {type(value).__name__}")
    return value


def _to_numpy(value, name: str) -> np.ndarray:
    """A small operand (``q``, bin edges, in-memory weights) as a numpy array."""
    if isinstance(value, _dndarray.DNDarray):
        return value.numpy()
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    try:
        out = np.asarray(value)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be array-like, got {type(value).__name__}") from None
    if out.dtype.kind not in "biufc":
        raise TypeError(f"`{name}` must hold numbers, got {out.dtype}")
    return out


def _shape_of(value) -> tuple[int, ...]:
    if isinstance(value, (_dndarray.DNDarray, torch.Tensor)):
        return tuple(value.shape)
    return np.shape(value)


def _dtype_of(value) -> np.dtype:
    if isinstance(value, _dndarray.DNDarray):
        return value.dtype
    if isinstance(value, torch.Tensor):
        return _types.canonical_dtype(value.dtype, "weights")
    return np.asarray(value).dtype


def _distributed_like(value, like: _dndarray.DNDarray, name: str) -> _dndarray.DNDarray:
    """``value`` (same shape as ``like``) as a DNDarray on ``like``'s comm.

    In-memory data is sent to the ranks split like ``like`` (it is in the
    driver already); :func:`dndask._ops.align` then matches the counts.
    """
    if isinstance(value, _dndarray.DNDarray):
        return value
    data = _to_numpy(value, name)
    split = like.split
    if split is not None and data.shape[split] != like.shape[split]:
        split = None
    return _factories.array(data, split=split, comm=like.comm)


# ---------------------------------------------------- per-rank graph pieces
def _row(fn, *chunks) -> np.ndarray:
    return np.asarray(fn(*chunks))[None, ...]


def _per_rank_rows(prefix: str, fn, arrays: list, split, width: int, dtype, params=()) -> tuple:
    """A Dask array whose row ``i`` is ``fn`` of the ``i``-th non-empty rank's chunks.

    ``arrays`` are aligned Dask arrays (one chunk per rank along ``split``);
    ``params`` are what ``fn`` captured (for the task names). Rows are
    ``width`` long. Returns the array and the placement hints of its tasks
    (each runs on its rank).
    """
    ranks = _busy_ranks(arrays[0], split)
    token = tokenize(prefix, [x.name for x in arrays], split, width, np.dtype(dtype).str, params)
    name = f"{prefix}-{token}"
    dsk, hints = {}, {}
    for i, r in enumerate(ranks):
        keys = [(x.name, *block_index(split, x.ndim, r)) for x in arrays]
        dsk[(name, i, 0)] = (_row, fn, *keys)
        hints[(name, i, 0)] = r
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=arrays)
    chunks = ((1,) * len(ranks), (width,))
    return da.Array(graph, name, chunks, meta=np.empty((0, 0), dtype=dtype)), hints


def _summed(rows: da.Array, hints: dict, dtype, comm, parents) -> _dndarray.DNDarray:
    """The tree sum of per-rank rows as a ``split=None`` DNDarray."""
    total = rows.sum(axis=0, dtype=dtype) if rows.shape[0] > 1 else rows[0]
    out = _dndarray.from_dask(total, None, comm, parents=parents)
    out._hints.update(hints)
    return out


def _small(x: da.Array, owner: _dndarray.DNDarray, hints: dict) -> np.ndarray:
    """Compute a small Dask array (metadata) made from ``owner`` in the driver.

    ``owner``'s tasks and the ones in ``hints`` run on their ranks.
    """
    table = owner._placement()
    table.update({k: owner.comm.workers[r] for k, r in hints.items()})
    return _compute.compute(x, owner.comm.client, table)


def _busy_ranks(x: da.Array, split) -> list[int]:
    """Ranks whose chunk holds values (rank 0 if none does: it then reports zeros)."""
    if x.size == 0 or split is None:
        return [0]
    return [r for r, c in enumerate(x.chunks[split]) if c]


def _extrema_of(chunk: np.ndarray) -> np.ndarray:
    return np.array([chunk.min(), chunk.max()], dtype=chunk.dtype)


def _extrema(a: _dndarray.DNDarray):
    """Global ``(min, max)`` as numpy scalars of ``a.dtype`` (NaN propagates); None if empty.

    Two values per non-empty rank travel to the driver.
    """
    if a.size == 0:
        return None
    rows, hints = _per_rank_rows("extrema", _extrema_of, [a.to_dask()], a.split, 2, a.dtype)
    table = _small(rows, a, hints)
    return np.min(table[:, 0]), np.max(table[:, 1])


# ------------------------------------------------------------------ average
def _given_axes(axis, ndim: int) -> tuple[int, ...] | None:
    """``axis`` normalised but in the order given (numpy orders 1-D weights by it)."""
    if axis is None:
        return None
    _layout.normalize_axes(axis, ndim)
    items = axis if isinstance(axis, tuple) else (axis,)
    return tuple(int(ax) % ndim for ax in items)


def _broadcast_weights(weights, a: _dndarray.DNDarray, given: tuple[int, ...]):
    """Weights of shape ``a.shape[given]`` laid out to broadcast against ``a`` (numpy's rule)."""
    perm = tuple(int(p) for p in np.argsort(given))
    index = tuple(slice(None) if ax in given else None for ax in range(a.ndim))
    if not isinstance(weights, _dndarray.DNDarray):
        data = _to_numpy(weights, "weights").transpose(perm)
        return data[index]
    x = weights.to_dask().transpose(perm)[index]
    split = None
    if weights.split is not None:
        split = sorted(given)[perm.index(weights.split)]
    return _dndarray.from_dask(x, split, weights.comm, parents=(weights,))


def _weights_layout(weights, a: _dndarray.DNDarray, axis) -> _dndarray.DNDarray:
    """``weights`` checked against numpy's shape rules, as a DNDarray that broadcasts like ``a``."""
    shape = _shape_of(weights)
    if shape == a.shape:
        return _distributed_like(weights, a, "weights")
    given = _given_axes(axis, a.ndim)
    if given is None:
        raise TypeError(
            f"`weights` must have the shape of `a` {a.shape} when `axis` is None, got {shape}"
        )
    expected = tuple(a.shape[ax] for ax in given)
    if shape != expected:
        raise ValueError(
            f"`weights` must have shape {a.shape} or {expected} (the shape of `a` along "
            f"`axis`={axis}), got {shape}"
        )
    return _distributed_like(_broadcast_weights(weights, a, given), a, "weights")


def _aligned(a: _dndarray.DNDarray, wgt: _dndarray.DNDarray) -> tuple:
    """``a`` and the (broadcastable) weights laid out alike, so their sums line up too."""
    (x, w), split, comm, parents = _ops.align((a, wgt), "average")
    w_split = split if split is not None and wgt.shape[split] == a.shape[split] else None
    return (
        _dndarray.from_dask(x, split, comm, parents=parents),
        _dndarray.from_dask(w, w_split, comm, parents=parents),
    )


def _cast_multiply(dtype):
    def multiply(x, w):
        return x.astype(dtype) * w.astype(dtype)

    return multiply


def _full_like(value):
    def full(x):
        return da.full_like(x, value, dtype=x.dtype)

    return full


def _broadcast_like(x, s):
    return da.broadcast_to(s, x.shape, chunks=x.chunks)


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """Weighted average over ``axis``, as :func:`numpy.average`.

    ``avg = sum(a * weights, axis) / sum(weights, axis)``, computed in numpy's
    result dtype (at least float64 for integer or boolean ``a``). Without
    weights this is the mean, and ``sum_of_weights`` is the number of elements
    averaged.

    Parameters
    ----------
    a : DNDarray
        Numeric data.
    axis : None, int or tuple of ints, optional
        Axes to average over; all of them by default.
    weights : DNDarray, numpy array or torch tensor, optional
        Either the shape of ``a`` or, with ``axis`` given, the shape of ``a``
        along ``axis`` (1-D for one axis). Distributed weights are resplit and
        redistributed to line up with ``a``.
    returned : bool, optional
        Also return ``sum_of_weights``, broadcast to the shape of the average.
    keepdims : bool, optional
        Keep the reduced axes as length-one axes.

    Returns
    -------
    DNDarray or tuple of DNDarray
        The average (and the sum of weights); split as a reduction: ``None``
        if ``axis`` includes the split, otherwise the split shifted. The split
        is ``a.split``, or the weights' if ``a`` is not split and they are
        (Heat's rule for operands with different splits).

    Raises
    ------
    ZeroDivisionError
        When the weights sum to zero along ``axis`` (checked now: one bool
        travels to the driver).
    TypeError
        When ``axis`` is None and ``weights`` does not have the shape of ``a``.
    ValueError
        When ``weights`` has neither the shape of ``a`` nor of ``a`` along ``axis``.

    Examples
    --------
    >>> import dndask as ht
    >>> a = ht.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], split=0)
    >>> ht.average(a, axis=1, weights=ht.array([3.0, 1.0])).numpy().tolist()
    [1.25, 3.25, 5.25]
    >>> avg, total = ht.average(a, axis=0, returned=True)
    >>> avg.numpy().tolist(), total.numpy().tolist(), avg.split
    ([3.0, 4.0], [3.0, 3.0], None)
    """
    a = _check_array(a, "average")
    _check_kind(a.dtype, "biufc", "average", "a", "a numeric")
    returned = _check_bool(returned, "returned")
    keepdims = _check_bool(keepdims, "keepdims")
    axes = _layout.normalize_axes(axis, a.ndim)
    if weights is None:
        avg = _ops.reduce(np.mean, da.mean, a, axes, keepdims)
        if not returned:
            return avg
        count = avg.dtype.type(a.size / max(avg.size, 1))
        return avg, _ops.elementwise(_full_like(count), avg, name="average")
    _check_kind(_dtype_of(weights), "biufc", "average", "weights", "a numeric")
    a, wgt = _aligned(a, _weights_layout(weights, a, axis))
    if a.dtype.kind in "biu":
        dtype = np.result_type(a.dtype, wgt.dtype, "f8")
    else:
        dtype = np.result_type(a.dtype, wgt.dtype)
    # the check needs the sums now; keep them on the workers instead of computing them twice
    total = _ops.reduce(np.sum, da.sum, wgt, axes, keepdims, dtype=dtype).persist()
    if bool(_small((total == 0).to_dask().any(), total, {})):
        raise ZeroDivisionError("`weights` sum to zero along `axis`, can't be normalized")
    product = _ops.elementwise(_cast_multiply(dtype), a, wgt, name="average")
    avg = _ops.reduce(np.sum, da.sum, product, axes, keepdims, dtype=dtype) / total
    if not returned:
        return avg
    if total.shape != avg.shape:
        total = _ops.elementwise(_broadcast_like, avg, total, name="average")
    return avg, total


# ----------------------------------------------------------------- bincount
def _local_bincount(length: int):
    def count(x, w=None):
        w = None if w is None else w.astype(np.float64)
        return np.bincount(x.astype(np.intp), weights=w, minlength=length)

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
    x = _check_array(x, "bincount", "x")
    _check_kind(x.dtype, "biu", "bincount", "x", "an integer")
    if x.ndim != 1:
        raise ValueError(f"`x` of `bincount` must be 1-dimensional, got shape {x.shape}")
    minlength = _check_int(minlength, "minlength")
    if minlength < 0:
        raise ValueError(f"`minlength` must be non-negative, got {minlength}")
    if weights is not None:
        _check_kind(_dtype_of(weights), "biuf", "bincount", "weights", "a real numeric")
        if _shape_of(weights) != x.shape:
            raise ValueError(
                f"`weights` must have the shape of `x` {x.shape}, got {_shape_of(weights)}"
            )
        weights = _distributed_like(weights, x, "weights")
    dtype = np.dtype(np.float64 if weights is not None else np.int64)
    extrema = _extrema(x)
    length = minlength
    if extrema is not None:
        low, high = (int(v) for v in extrema)
        if low < 0:
            raise ValueError(f"`x` of `bincount` must hold non-negative ints, got minimum {low}")
        length = max(high + 1, minlength)
    operands = (x,) if weights is None else (x, weights)
    arrays, split, comm, parents = _ops.align(operands, "bincount")
    fn = _local_bincount(length)
    rows, hints = _per_rank_rows("bincount", fn, arrays, split, length, dtype, (length,))
    return _summed(rows, hints, dtype, comm, parents)


# -------------------------------------------------------- histc, histogram
def _local_histc(bins: int, low: float, high: float, dtype: np.dtype):
    def hist(x):
        t = torch.from_numpy(np.ascontiguousarray(x.ravel(), dtype=dtype))
        return torch.histc(t, bins=bins, min=low, max=high).numpy()

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
    a = _check_array(a, "histc")
    _check_kind(a.dtype, "iuf", "histc", "a", "an integer or floating")
    bins = _check_int(bins, "bins")
    if bins <= 0:
        raise ValueError(f"`bins` must be positive, got {bins}")
    low, high = float(_check_real(min, "min")), float(_check_real(max, "max"))
    if not (np.isfinite(low) and np.isfinite(high)):
        raise ValueError(f"`min` and `max` must be finite, got [{low}, {high}]")
    if low > high:
        raise ValueError(f"`max` must not be less than `min`, got min={low}, max={high}")
    if low == high:
        extrema = _extrema(a)
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
    rows, hints = _per_rank_rows("histc", fn, [a.to_dask()], a.split, bins, dtype, params)
    return _summed(rows, hints, dtype, a.comm, (a,))


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
    edges = _to_numpy(bins, "bins")
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
    _check_real(low, "range[0]")
    _check_real(high, "range[1]")
    if low > high:
        raise ValueError(f"`range` must have max >= min, got {value!r}")
    if not (np.isfinite(low) and np.isfinite(high)):
        raise ValueError(f"`range` must be finite, got {value!r}")
    return low, high


def _histogram_range(a: _dndarray.DNDarray, bins, range_):
    """The range each rank passes to numpy so its edges equal numpy's global ones."""
    if not isinstance(bins, int) or range_ is not None:
        return range_
    extrema = _extrema(a)
    if extrema is None:
        return (0, 1)
    if not (np.isfinite(extrema[0]) and np.isfinite(extrema[1])):
        raise ValueError(
            f"`a` has an autodetected range of [{extrema[0]}, {extrema[1]}] that is not "
            "finite; give `range`"
        )
    return extrema


def _local_histogram(bins, range_):
    def hist(x, w=None):
        w = None if w is None else w.ravel()
        return np.histogram(x.ravel(), bins=bins, range=range_, weights=w)[0]

    return hist


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
    a = _check_array(a, "histogram")
    _check_kind(a.dtype, "iuf", "histogram", "a", "an integer or floating")
    bins = _check_bins(bins)
    density = _check_bool(density, "density")
    range_ = _check_range(range) if isinstance(bins, int) else None
    if weights is not None:
        _check_kind(_dtype_of(weights), "biuf", "histogram", "weights", "a real numeric")
        if _shape_of(weights) != a.shape:
            raise ValueError(
                f"`weights` must have the shape of `a` {a.shape}, got {_shape_of(weights)}"
            )
        weights = _distributed_like(weights, a, "weights")
    range_ = _histogram_range(a, bins, range_)
    empty_w = None if weights is None else np.empty(0, dtype=weights.dtype)
    fn = _local_histogram(bins, range_)
    edges = np.histogram(np.empty(0, dtype=a.dtype), bins=bins, range=range_)[1]
    dtype = np.asarray(fn(np.empty(0, dtype=a.dtype), empty_w)).dtype
    operands = (a,) if weights is None else (a, weights)
    arrays, split, comm, parents = _ops.align(operands, "histogram")
    params = (bins, range_)
    rows, hints = _per_rank_rows("histogram", fn, arrays, split, len(edges) - 1, dtype, params)
    hist = _summed(rows, hints, dtype, comm, parents)
    if density:
        widths = np.array(np.diff(edges), float)
        h = hist.to_dask()
        hist = _dndarray.from_dask(h / widths / h.sum(), None, comm, parents=(hist,))
    bin_edges = _dndarray.from_dask(da.from_array(edges, chunks=edges.shape), None, comm)
    return hist, bin_edges


# ------------------------------------------------- percentile: pure planning
def _check_q(q):
    """``q`` for numpy (Python scalars kept, numpy's weak promotion), and ``q / 100``."""
    if isinstance(q, (_dndarray.DNDarray, torch.Tensor)):
        q = _to_numpy(q, "q")
    weak = type(q) in (int, float)
    values = q if weak else np.asarray(q)
    if np.asarray(q).dtype.kind not in "iuf":
        raise TypeError(f"`q` must be real numbers, got {np.asarray(q).dtype}")
    if np.ndim(q) > 1:
        raise ValueError(f"`q` must be a scalar or 1-D, got shape {np.shape(q)}")
    fraction = np.true_divide(values, 100, out=...)
    if not np.all((fraction >= 0) & (fraction <= 1)):
        raise ValueError(f"`q` must be in [0, 100], got {q}")
    return values, fraction, weak


def _check_method(method, interpolation) -> str:
    if interpolation is not None:
        if method != "linear":
            raise TypeError("give only one of `method` and `interpolation` (Heat's name)")
        method = interpolation
    if method not in _METHODS:
        raise ValueError(f"`method` must be one of {', '.join(_METHODS)}, got {method!r}")
    return method


def _check_sketch(sketched, sketch_size) -> None:
    _check_bool(sketched, "sketched")
    if sketch_size is not None:
        _check_real(sketch_size, "sketch_size")
        if not 0 < sketch_size <= 1:
            raise ValueError(f"`sketch_size` must be in (0, 1], got {sketch_size}")


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


# ------------------------------------------- percentile: the distributed selection
def _offsets(count: int, m: int) -> np.ndarray:
    """Positions of the samples a rank sends: ``m`` evenly spaced in ``[0, count)``, or all."""
    if count <= m:
        return np.arange(count, dtype=np.int64)
    return (np.arange(m, dtype=np.int64) * (count - 1)) // (m - 1)


def probe(values: np.ndarray, brackets: list, m: int):
    """One rank's answer to a selection round (runs where the sorted chunk lives).

    For each bracket ``(L, U)`` (``None`` = unbounded): the counts ``<= L`` and
    ``< U`` and the samples strictly inside. The first item says whether the
    chunk holds a NaN (sorted last).

    >>> probe(np.array([1.0, 2.0, 2.0, 5.0]), [(None, None), (1.0, 5.0)], 8)[1][1]
    (1, 3, array([2., 2.]))
    """
    has_nan = values.size > 0 and values.dtype.kind == "f" and bool(np.isnan(values[-1]))
    answers = []
    for low, high in brackets:
        lo = 0 if low is None else int(np.searchsorted(values, low, side="right"))
        hi = values.size if high is None else int(np.searchsorted(values, high, side="left"))
        answers.append((lo, hi, values[lo + _offsets(hi - lo, m)].copy()))
    return has_nan, answers


def _narrow(samples: list[np.ndarray], counts: list[int], k: int, m: int):
    """The tightest ``(L, U)`` among the samples that still hold the value of rank ``k``.

    ``samples[r]`` are rank ``r``'s sorted samples of its ``counts[r]`` values
    inside the current bracket, ``k`` the rank inside the bracket. ``L`` is the
    largest sample with surely at most ``k`` values ``<=`` it, ``U`` the smallest
    with surely more than ``k``; either is None if no sample qualifies.
    """
    candidates = np.unique(np.concatenate(samples))
    lower = np.zeros(candidates.size, dtype=np.int64)
    upper = np.zeros(candidates.size, dtype=np.int64)
    for values, count in zip(samples, counts, strict=True):
        if count == 0:
            continue
        pos = _offsets(count, m)
        j = np.searchsorted(values, candidates, side="right") - 1
        lower += np.where(j >= 0, pos[np.maximum(j, 0)] + 1, 0)
        upper += np.where(j + 1 < pos.size, pos[np.minimum(j + 1, pos.size - 1)], count)
    below = candidates[upper <= k]
    above = candidates[lower >= k + 1]
    return (below[-1] if below.size else None), (above[0] if above.size else None)


def select(ranks: list[int], ask, m: int):
    """The values at the global sorted positions ``ranks``, asking the ranks in rounds.

    ``ask(brackets)`` returns every rank's :func:`probe` answer. Returns
    ``(values, has_nan, stats)``; ``values`` is a dict from position to value
    (empty if a NaN was found).
    """
    brackets = {k: (None, None) for k in ranks}
    found: dict = {}
    stats = {"rounds": 0, "values": 0, "counts": 0}
    while len(found) < len(brackets):
        open_ = list(dict.fromkeys(brackets[k] for k in brackets if k not in found))
        replies = ask(open_)
        stats["rounds"] += 1
        if any(has_nan for has_nan, _ in replies):
            return {}, True, stats
        for b, (low, high) in enumerate(open_):
            answers = [answer[b] for _, answer in replies]
            stats["values"] += sum(vals.size for _, _, vals in answers)
            stats["counts"] += 2 * len(answers)
            at_most_low = sum(lo for lo, _, _ in answers)
            below_high = sum(hi for _, hi, _ in answers)
            counts = [hi - lo for lo, hi, _ in answers]
            samples = [vals for _, _, vals in answers]
            for k in (k for k in brackets if k not in found and brackets[k] == (low, high)):
                inner = k - at_most_low
                if k >= below_high:
                    found[k] = high
                elif all(c <= m for c in counts):
                    found[k] = np.sort(np.concatenate(samples))[inner]
                else:
                    new_low, new_high = _narrow(samples, counts, inner, m)
                    brackets[k] = (
                        low if new_low is None else new_low,
                        high if new_high is None else new_high,
                    )
    return found, False, stats


def _sorted_values(chunk: np.ndarray) -> np.ndarray:
    return np.sort(chunk, axis=None)


def _sorted_per_rank(a: _dndarray.DNDarray) -> _dndarray.DNDarray:
    """A 1-D DNDarray whose chunk ``r`` is rank ``r``'s values, sorted (lazy)."""
    x = a.to_dask()
    counts = a.counts_displs()[0]
    inner = int(np.prod([s for ax, s in enumerate(a.shape) if ax != a.split], dtype=np.int64))
    name = f"sorted-values-{tokenize(x.name)}"
    dsk = {
        (name, r): (_sorted_values, (x.name, *block_index(a.split, a.ndim, r)))
        for r in range(a.comm.size)
    }
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[x])
    chunks = (tuple(c * inner for c in counts),)
    y = da.Array(graph, name, chunks, meta=np.empty((0,), dtype=a.dtype))
    return _dndarray.from_dask(y, 0, a.comm, parents=(a,))


def _order_statistics(a: _dndarray.DNDarray, positions):
    """Values of ``a`` (flattened) at the sorted ``positions``, without gathering ``a``.

    Each rank's sorted chunk is persisted on its worker; the rounds of
    :func:`select` run as one small task per rank. Returns ``(values, has_nan)``.
    """
    sorted_ = _sorted_per_rank(a).persist()
    by_key = {f.key: f for f in distributed.futures_of(sorted_.to_dask())}
    futures = [by_key[key] for key in sorted_._chunk_keys()]
    client, workers, m = a.comm.client, a.comm.workers, max(int(_SAMPLES), 2)

    def ask(brackets):
        calls = [
            client.submit(probe, f, brackets, m, workers=[w], allow_other_workers=False, pure=False)
            for f, w in zip(futures, workers, strict=True)
        ]
        return client.gather(calls)

    found, has_nan, stats = select(sorted({int(p) for p in np.ravel(positions)}), ask, m)
    stats["bytes"] = stats["values"] * a.dtype.itemsize + stats["counts"] * 8
    last_selection.clear()
    last_selection.update(stats, ranks=a.comm.size, samples=m)
    return found, has_nan


def _pick(found: dict, positions: np.ndarray, dtype) -> np.ndarray:
    flat = [found.get(int(p), 0) for p in np.ravel(positions)]
    return np.asarray(flat, dtype=dtype).reshape(np.shape(positions))


# ----------------------------------------------- percentile: layouts and results
def _reduce_chunk(fn, chunk: np.ndarray, shape: tuple, dtype) -> np.ndarray:
    # numpy's median cannot reshape a chunk that is empty along a kept axis
    if 0 in shape:
        return np.empty(shape, dtype=dtype)
    return np.asarray(fn(chunk), dtype=dtype)


def _local_reduction(prefix: str, fn, a: _dndarray.DNDarray, axes, keepdims, lead):
    """``fn(chunk)`` on every rank: the reduced axes are whole in each chunk.

    ``lead`` is the shape ``fn`` puts in front (``q``'s). The result keeps
    ``a``'s split, shifted by ``lead`` and the dropped axes.
    """
    x = a.to_dask()
    dtype = np.asarray(fn(np.ones((1,) * a.ndim, dtype=a.dtype))).dtype
    kept = [ax for ax in range(a.ndim) if ax not in axes or keepdims]
    chunks = tuple((s,) for s in lead) + tuple((1,) if ax in axes else x.chunks[ax] for ax in kept)
    name = f"{prefix}-{tokenize(x.name, prefix, fn, axes, keepdims, lead)}"
    dsk = {}
    for idx in itertools.product(*(range(len(c)) for c in x.chunks)):
        out = (0,) * len(lead) + tuple(idx[ax] for ax in kept)
        shape = tuple(c[out[i]] for i, c in enumerate(chunks))
        dsk[(name, *out)] = (_reduce_chunk, fn, (x.name, *idx), shape, dtype)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[x])
    y = da.Array(graph, name, chunks, meta=np.empty((0,) * len(chunks), dtype=dtype))
    split = None
    if a.split is not None and a.split not in axes:
        split = len(lead) + kept.index(a.split)
    return _dndarray.from_dask(y, split, a.comm, parents=(a,))


def _along(prefix: str, fn, a: _dndarray.DNDarray, axes, keepdims, lead):
    """Reduce ``axes`` with ``fn`` locally, resplitting first if ``axes`` holds the split."""
    rest = [ax for ax in range(a.ndim) if ax not in axes]
    if a.split is not None and a.split in axes and rest:
        # on one rank this only relabels the split, so the result's split never depends on P
        a = a.resplit(max(rest, key=lambda ax: (a.shape[ax], -ax)))
    return _local_reduction(prefix, fn, a, axes, keepdims, lead)


def _is_global(a: _dndarray.DNDarray, axes) -> bool:
    return a.split is not None and a.comm.size > 1 and len(axes) == a.ndim


def _check_reduced(a: _dndarray.DNDarray, axes, fn: str) -> None:
    length = int(np.prod([a.shape[ax] for ax in axes], dtype=np.int64))
    if length == 0:
        raise ValueError(f"`a` of `{fn}` has no values along `axis`, got shape {a.shape}")


def _as_result(values: np.ndarray, a: _dndarray.DNDarray, keepdims: bool, lead):
    values = np.asarray(values)
    if keepdims:
        values = values.reshape(tuple(lead) + (1,) * a.ndim)
    return _dndarray.from_dask(da.from_array(values, chunks=values.shape), None, a.comm)


def percentile(
    a,
    q,
    axis=None,
    method="linear",
    keepdims=False,
    *,
    interpolation=None,
    sketched=False,
    sketch_size=None,
):
    """The ``q``-th percentiles of ``a`` over ``axis``, exactly as :func:`numpy.percentile`.

    Every numpy ``method`` is supported (Heat's ``interpolation=`` is another
    name for it); NaNs propagate. The result has ``q``'s shape in front of the
    reduced shape. Distribution (see the module docs): axes other than the
    split axis reduce on each rank (the result keeps the split, shifted); a
    reduced split axis with another axis left is first resplit to the longest
    such axis (the result is split along it); over all axes the values come
    from an exact distributed selection that runs now and moves only counts and
    a few samples per rank and round (the result is ``split=None``).

    Parameters
    ----------
    a : DNDarray
        Integer or floating data.
    q : float or 1-D sequence of float
        Percentiles in ``[0, 100]`` (numpy, torch, list or DNDarray).
    axis : None, int or tuple of ints, optional
        Axes to reduce; all of them by default.
    method : str, optional
        ``"linear"`` (default), ``"lower"``, ``"higher"``, ``"nearest"``,
        ``"midpoint"`` or one of numpy's other methods.
    keepdims : bool, optional
        Keep the reduced axes as length-one axes.
    interpolation : str, optional
        Heat's name for ``method``.
    sketched, sketch_size : optional
        Heat's approximate mode; accepted, and the result is exact anyway (the
        selection already moves only samples).

    Returns
    -------
    DNDarray

    Examples
    --------
    >>> import dndask as ht
    >>> a = ht.array([[10.0, 7.0, 4.0], [3.0, 2.0, 1.0]], split=0)
    >>> ht.percentile(a, 50).item()
    3.5
    >>> r = ht.percentile(a, [25, 75], axis=1)
    >>> r.numpy().tolist(), r.split
    ([[5.5, 1.5], [8.5, 2.5]], 1)
    """
    a = _check_array(a, "percentile")
    _check_kind(a.dtype, "iuf", "percentile", "a", "an integer or floating")
    values, fraction, weak = _check_q(q)
    method = _check_method(method, interpolation)
    keepdims = _check_bool(keepdims, "keepdims")
    _check_sketch(sketched, sketch_size)
    axes = _layout.normalize_axes(axis, a.ndim)
    _check_reduced(a, axes, "percentile")
    lead = np.shape(values)
    if not _is_global(a, axes):
        fn = functools.partial(np.percentile, q=values, axis=axes, method=method, keepdims=keepdims)
        return _along("percentile", fn, a, axes, keepdims, lead)
    previous, following, gamma = plan_quantiles(a.size, fraction, method)
    found, has_nan = _order_statistics(a, np.concatenate([np.ravel(previous), np.ravel(following)]))
    low, high = _pick(found, previous, a.dtype), _pick(found, following, a.dtype)
    return _as_result(
        combine_quantiles(low, high, gamma, weak, has_nan, a.dtype), a, keepdims, lead
    )


def median(a, axis=None, keepdims=False, *, sketched=False, sketch_size=None):
    """The median of ``a`` over ``axis``, exactly as :func:`numpy.median`.

    The middle value, or numpy's mean of the two middle values; NaNs
    propagate. Distributed like :func:`percentile` (without a ``q`` axis): the
    split is kept when it is not reduced, a reduced split axis with another axis
    left is resplit to the longest such axis, and over all axes the exact
    distributed selection gives a ``split=None`` result.

    Parameters
    ----------
    a : DNDarray
        Boolean, integer or floating data.
    axis : None, int or tuple of ints, optional
        Axes to reduce; all of them by default.
    keepdims : bool, optional
        Keep the reduced axes as length-one axes.
    sketched, sketch_size : optional
        Heat's approximate mode; accepted, and the result is exact anyway.

    Returns
    -------
    DNDarray

    Examples
    --------
    >>> import dndask as ht
    >>> ht.median(ht.array([5, 1, 4, 2], split=0)).item()
    3.0
    >>> ht.median(ht.array([[5, 1, 4], [2, 8, 6]], split=1), axis=1).numpy().tolist()
    [4.0, 6.0]
    """
    a = _check_array(a, "median")
    _check_kind(a.dtype, "biuf", "median", "a", "a boolean, integer or floating")
    keepdims = _check_bool(keepdims, "keepdims")
    _check_sketch(sketched, sketch_size)
    axes = _layout.normalize_axes(axis, a.ndim)
    _check_reduced(a, axes, "median")
    if not _is_global(a, axes):
        fn = functools.partial(np.median, axis=axes, keepdims=keepdims)
        return _along("median", fn, a, axes, keepdims, ())
    n = a.size
    middle = [n // 2] if n % 2 else [n // 2 - 1, n // 2]
    found, has_nan = _order_statistics(a, middle)
    if has_nan:
        return _as_result(np.asarray(np.nan, dtype=a.dtype), a, keepdims, ())
    part = np.asarray([found[k] for k in middle], dtype=a.dtype)
    return _as_result(np.mean(part, axis=0), a, keepdims, ())
