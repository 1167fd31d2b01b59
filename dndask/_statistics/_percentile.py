"""Front ends :func:`dndask.percentile` and :func:`dndask.median`, and their layouts.

The result is a reduction with ``q``'s shape in front. Reduced axes that are
not the split axis are whole on every rank, so each rank reduces its own chunk
and the result keeps the split (shifted). If the split axis is reduced and
another axis survives, the array is first resplit to the longest surviving axis
and then reduced locally; the result is split along that axis. If every axis
is reduced (``axis=None`` or a 1-D array), the values come from the exact
distributed selection (:mod:`._selection`) at the positions planned by
:mod:`._quantiles`, and the result is ``split=None``.
"""

from __future__ import annotations

import functools
import itertools

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


def _percentile_of(chunk, q, axis, method, keepdims):
    """numpy's percentile of a chunk in its own namespace (``q`` copied there if an array)."""
    xp = _xp.namespace_of(chunk)
    q = xp.asarray(q) if isinstance(q, np.ndarray) else q
    return xp.percentile(chunk, q, axis=axis, method=method, keepdims=keepdims)


def _median_of(chunk, axis, keepdims):
    return _xp.namespace_of(chunk).median(chunk, axis=axis, keepdims=keepdims)


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
    a = _checks.check_array(a, "percentile")
    _checks.check_kind(a.dtype, "iuf", "percentile", "a", "an integer or floating")
    if isinstance(q, _dndarray.DNDarray) or _torch.is_tensor(q):
        q = _checks.to_numpy(q, "q")
    values, fraction, weak = _quantiles.check_q(q)
    method = _quantiles.check_method(method, interpolation)
    keepdims = _checks.check_bool(keepdims, "keepdims")
    _check_sketch(sketched, sketch_size)
    axes = _layout.normalize_axes(axis, a.ndim)
    _check_reduced(a, axes, "percentile")
    lead = np.shape(values)
    if not _is_global(a, axes):
        fn = functools.partial(
            _percentile_of, q=values, axis=axes, method=method, keepdims=keepdims
        )
        return _along("percentile", fn, a, axes, keepdims, lead)
    previous, following, gamma = _quantiles.plan_quantiles(a.size, fraction, method)
    positions = np.concatenate([np.ravel(previous), np.ravel(following)])
    found, has_nan = _selection.order_statistics(a, positions)
    low = _selection.pick(found, previous, a.dtype)
    high = _selection.pick(found, following, a.dtype)
    values = _quantiles.combine_quantiles(low, high, gamma, weak, has_nan, a.dtype)
    return _as_result(values, a, keepdims, lead)


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
    a = _checks.check_array(a, "median")
    _checks.check_kind(a.dtype, "biuf", "median", "a", "a boolean, integer or floating")
    keepdims = _checks.check_bool(keepdims, "keepdims")
    _check_sketch(sketched, sketch_size)
    axes = _layout.normalize_axes(axis, a.ndim)
    _check_reduced(a, axes, "median")
    if not _is_global(a, axes):
        fn = functools.partial(_median_of, axis=axes, keepdims=keepdims)
        return _along("median", fn, a, axes, keepdims, ())
    n = a.size
    middle = [n // 2] if n % 2 else [n // 2 - 1, n // 2]
    found, has_nan = _selection.order_statistics(a, middle)
    if has_nan:
        return _as_result(np.asarray(np.nan, dtype=a.dtype), a, keepdims, ())
    part = np.asarray([found[k] for k in middle], dtype=a.dtype)
    return _as_result(np.mean(part, axis=0), a, keepdims, ())
