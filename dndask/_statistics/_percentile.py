"""Front ends :func:`dndask.percentile`, :func:`dndask.quantile`, :func:`dndask.median`,
their NaN-skipping versions (``nanpercentile``, ``nanquantile``, ``nanmedian``), and
their layouts.

The result is a reduction with ``q``'s shape in front. Reduced axes that are
not the split axis are whole on every rank, so each rank reduces its own chunk
and the result keeps the split (shifted). If the split axis is reduced and
another axis survives, the array is first resplit to the longest surviving axis
and then reduced locally; the result is split along that axis. If every axis
is reduced (``axis=None`` or a 1-D array), the values come from the exact
distributed selection (:mod:`._selection`) at the positions planned by
:mod:`._quantiles`, and the result is ``split=None``. The ``nan*`` versions
plan the positions over the values that are not NaN (NaNs sort last, so the
selection finds them below that count), as numpy leaves NaNs out.
"""

from __future__ import annotations

import functools
import itertools
import warnings

import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from .. import _dndarray, _factories, _layout, _torch, _xp
from .._compat import new_array
from .._graph import meta_of
from . import _checks, _quantiles, _selection


def _check_sketch(sketched, sketch_size) -> None:
    _checks.check_bool(sketched, "sketched")
    if sketch_size is not None:
        _checks.check_real(sketch_size, "sketch_size")
        if not 0 < sketch_size <= 1:
            raise ValueError(f"`sketch_size` must be in (0, 1], got {sketch_size}")


def _reduce_chunk(fn, chunk, shape: tuple, dtype):
    xp = _xp.namespace_of(chunk)
    # numpy's median cannot reshape a chunk that is empty along a kept axis
    if 0 in shape:
        return xp.empty(shape, dtype=dtype)
    return xp.asarray(fn(chunk), dtype=dtype)


def _percentile_of(chunk, q, axis, method, keepdims, name="percentile"):
    """numpy's ``name`` (``percentile``, ``quantile`` or their ``nan`` versions) of a chunk.

    In the chunk's own namespace (``q`` copied there if an array); an all-NaN
    slice gives NaN without numpy's RuntimeWarning on the worker.
    """
    xp = _xp.namespace_of(chunk)
    q = xp.asarray(q) if isinstance(q, np.ndarray) else q
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return getattr(xp, name)(chunk, q, axis=axis, method=method, keepdims=keepdims)


def _median_of(chunk, axis, keepdims, name="median"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return getattr(_xp.namespace_of(chunk), name)(chunk, axis=axis, keepdims=keepdims)


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
    y = new_array(graph, name, chunks, meta_of(dtype, len(chunks), like=x))
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
    # the few selected values are in the driver (host): they go to ``a``'s device
    return _factories.array(values, comm=a.comm, device=a.device)


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
    _check_sketch(sketched, sketch_size)
    return _quantiles_of("percentile", a, q, axis, method, keepdims, interpolation)


def _quantiles_of(name: str, a, q, axis, method, keepdims, interpolation=None):
    """``percentile``, ``quantile``, ``nanpercentile`` or ``nanquantile`` (``name``)."""
    a = _checks.check_array(a, name)
    _checks.check_kind(a.dtype, "iuf", name, "a", "an integer or floating")
    if isinstance(q, _dndarray.DNDarray) or _torch.is_tensor(q):
        q = _checks.to_numpy(q, "q")
    values, fraction, weak = _quantiles.check_q(q, 1 if name.endswith("quantile") else 100)
    method = _quantiles.check_method(method, interpolation)
    keepdims = _checks.check_bool(keepdims, "keepdims")
    axes = _layout.normalize_axes(axis, a.ndim)
    _check_reduced(a, axes, name)
    lead = np.shape(values)
    skip_nan = name.startswith("nan") and a.dtype.kind == "f"
    if not _is_global(a, axes):
        fn = functools.partial(
            _percentile_of, q=values, axis=axes, method=method, keepdims=keepdims, name=name
        )
        return _along(name, fn, a, axes, keepdims, lead)

    def plan(n):
        previous, following, gamma = _quantiles.plan_quantiles(n, fraction, method)
        return previous, following, gamma, np.concatenate([np.ravel(previous), np.ravel(following)])

    if skip_nan:
        found, n = _selection.order_statistics(a, lambda n: plan(n)[3], skip_nan=True)
        if n == 0:
            return _all_nan(a, keepdims, lead, name)
        has_nan = False
    else:
        n = a.size
        found, has_nan = _selection.order_statistics(a, plan(n)[3])
    previous, following, gamma, _ = plan(n)
    low = _selection.pick(found, previous, a.dtype)
    high = _selection.pick(found, following, a.dtype)
    values = _quantiles.combine_quantiles(low, high, gamma, weak, has_nan, a.dtype)
    return _as_result(values, a, keepdims, lead)


def _all_nan(a, keepdims: bool, lead, name: str):
    """numpy's answer for values that are all NaN: NaN, with its RuntimeWarning."""
    warnings.warn(f"All-NaN slice encountered in `{name}`", RuntimeWarning, stacklevel=4)
    return _as_result(np.full(lead, np.nan, dtype=a.dtype), a, keepdims, lead)


def quantile(a, q, axis=None, method="linear", keepdims=False):
    """The ``q``-th quantiles of ``a`` over ``axis``, as :func:`numpy.quantile`.

    :func:`percentile` with ``q`` in ``[0, 1]`` instead of ``[0, 100]``: the
    same methods, distribution and result layout; NaNs propagate.

    Examples
    --------
    >>> import dndask as ht
    >>> ht.quantile(ht.array([[10.0, 7.0, 4.0], [3.0, 2.0, 1.0]], split=0), 0.5).item()
    3.5
    """
    return _quantiles_of("quantile", a, q, axis, method, keepdims)


def nanpercentile(a, q, axis=None, method="linear", keepdims=False):
    """:func:`percentile` of the values that are not NaN, as :func:`numpy.nanpercentile`.

    A slice with no such value gives NaN (numpy's RuntimeWarning in the driver
    when every value is NaN). Over all axes of a split array the selection
    counts each rank's NaNs first (one small task per rank) and plans the
    positions over the rest. Integer data has no NaN: as :func:`percentile`.

    Examples
    --------
    >>> import dndask as ht
    >>> ht.nanpercentile(ht.array([1.0, float("nan"), 3.0, 4.0], split=0), 50).item()
    3.0
    """
    return _quantiles_of("nanpercentile", a, q, axis, method, keepdims)


def nanquantile(a, q, axis=None, method="linear", keepdims=False):
    """:func:`quantile` of the values that are not NaN, as :func:`numpy.nanquantile`.

    See :func:`nanpercentile`; ``q`` is in ``[0, 1]``.

    Examples
    --------
    >>> import dndask as ht
    >>> ht.nanquantile(ht.array([1.0, float("nan"), 3.0, 4.0], split=0), 0.5).item()
    3.0
    """
    return _quantiles_of("nanquantile", a, q, axis, method, keepdims)


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
    _check_sketch(sketched, sketch_size)
    return _median("median", a, axis, keepdims)


def nanmedian(a, axis=None, keepdims=False):
    """:func:`median` of the values that are not NaN, as :func:`numpy.nanmedian`.

    A slice with no such value gives NaN (numpy's RuntimeWarning in the driver
    when every value is NaN). Distributed as :func:`median`; over all axes of a
    split array each rank first counts its values that are not NaN (one small
    task per rank), and the selection finds the middle of those.

    Examples
    --------
    >>> import dndask as ht
    >>> ht.nanmedian(ht.array([5.0, float("nan"), 1.0, 4.0], split=0)).item()
    4.0
    """
    return _median("nanmedian", a, axis, keepdims)


def _middle(n: int) -> list[int]:
    return [n // 2] if n % 2 else [n // 2 - 1, n // 2]


def _median(name: str, a, axis, keepdims):
    a = _checks.check_array(a, name)
    _checks.check_kind(a.dtype, "biuf", name, "a", "a boolean, integer or floating")
    keepdims = _checks.check_bool(keepdims, "keepdims")
    axes = _layout.normalize_axes(axis, a.ndim)
    _check_reduced(a, axes, name)
    if not _is_global(a, axes):
        fn = functools.partial(_median_of, axis=axes, keepdims=keepdims, name=name)
        return _along(name, fn, a, axes, keepdims, ())
    if name == "nanmedian" and a.dtype.kind == "f":
        found, n = _selection.order_statistics(a, _middle, skip_nan=True)
        if n == 0:
            return _all_nan(a, keepdims, (), name)
    else:
        n = a.size
        found, has_nan = _selection.order_statistics(a, _middle(n))
        if has_nan:
            return _as_result(np.asarray(np.nan, dtype=a.dtype), a, keepdims, ())
    part = np.asarray([found[k] for k in _middle(n)], dtype=a.dtype)
    return _as_result(np.mean(part, axis=0), a, keepdims, ())
