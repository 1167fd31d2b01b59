"""Front ends :func:`topk`, :func:`searchsorted`, :func:`nonzero`, :func:`where`, :func:`isin`,
:func:`take` and :func:`take_along_axis`.

- ``topk`` along the split axis: each rank picks its own top ``k`` (with
  global indices) and one task on rank 0 merges the ``P k`` candidates: no
  full sort, ``P k`` values move. Along another axis each rank works alone.
- ``searchsorted``: the haystack is sorted over the ranks in rank order, so the
  global insertion point is the sum of every rank's local one. The needles
  travel to every rank of the haystack; only int64 positions come back.
- ``nonzero``/one-argument ``where``: each rank finds its own nonzero
  coordinates (one small round brings their numbers); split 0 keeps numpy's C
  order by rank order, another split sorts the flat indices (sample sort).
- ``isin``: in-memory test values go into every rank's task; a DNDarray of test
  values travels to every rank of ``element`` (``P`` times its size).
- ``take``/``take_along_axis``: integer-array indexing (:mod:`dndask._indexing`,
  whose index arrays are computed to the driver), or, for ``take_along_axis``
  along an axis that is whole on every rank, numpy's own on each rank.
"""

from __future__ import annotations

import numbers
import operator

import dask.array as da
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from .. import _comm, _dndarray, _elementwise, _layout, _ops, _xp
from .._compat import SliceTask, TaskRef, new_array
from .._graph import block_index, chunk_meta, meta_of
from . import _checks, _exchange, _tasks

__all__ = ["isin", "nonzero", "searchsorted", "take", "take_along_axis", "topk", "where"]


def _int(value, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an int, got {type(value).__name__}")
    return int(value)


def _in_memory(values: np.ndarray, comm, device="cpu") -> _dndarray.DNDarray:
    """A driver-side array as a ``split=None`` DNDarray (it is small: needles, elements).

    It is sent as host memory and copied to ``device`` on its worker (explicitly).
    """
    host = _dndarray.from_dask(da.from_array(values, chunks=values.shape), None, comm)
    return host._on_device(device)


def _graph_array(a, name, dsk, hints, chunks, dtype, split, deps):
    """The tasks ``dsk`` as a DNDarray whose chunks are in ``a``'s namespace (its device)."""
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[d.to_dask() for d in deps])
    y = new_array(graph, name, chunks, meta_of(dtype, len(chunks), like=a))
    out = _dndarray.from_dask(y, split, a.comm, parents=tuple(deps))
    out._task_ranks.update(hints)
    return out


# ------------------------------------------------------------------ topk
def _head(x, k: int, axis: int):
    return x[(slice(None),) * axis + (slice(0, k),)]


def _lane_topk(x, k, axis, largest, offset):
    xp = _xp.namespace_of(x)
    order = _head(_tasks.lane_order(x, axis, largest), min(k, x.shape[axis]), axis)
    return xp.take_along_axis(x, order, axis), order + offset


def _merge_topk(candidates, k, axis, largest):
    xp = _xp.namespace_of(candidates[0][0])
    values = xp.concatenate([v for v, _ in candidates], axis=axis)
    index = xp.concatenate([i for _, i in candidates], axis=axis)
    order = _head(_tasks.lane_order(values, axis, largest), k, axis)
    return xp.take_along_axis(values, order, axis), xp.take_along_axis(index, order, axis)


def topk(a, k, dim=-1, largest=True, sorted=True, out=None):
    """The ``k`` largest (or smallest) entries along ``dim`` and their indices, as Heat's.

    Ordered from the largest (NaN first) when ``largest``, else from the
    smallest (NaN last); ties keep their index order. Along the split axis
    each rank selects its own ``k`` candidates and one task merges them (no
    full sort); the result is ``split=None``. Along another axis every rank
    works on its own lanes and the split is kept.

    Parameters
    ----------
    a : DNDarray
        Boolean, integer or real data.
    k : int
        How many entries, at most the length of ``dim``.
    dim : int, optional
        The axis (default the last).
    largest : bool, optional
        The largest (default) or the smallest entries.
    sorted : bool, optional
        Heat's flag; the entries are always sorted.
    out : tuple of two DNDarrays, optional
        Filled with the values and the indices.

    Returns
    -------
    tuple of DNDarray
        ``(values, indices)``; the indices are int64.

    Examples
    --------
    >>> import dndask as ht
    >>> v, i = ht.topk(ht.array([1, 5, 3, 5, 2], split=0), 2)
    >>> v.numpy().tolist(), i.numpy().tolist()
    ([5, 5], [1, 3])
    """
    a = _checks.check_sortable(a, "topk")
    dim = _layout.normalize_axis(dim, a.ndim, "dim")
    if dim is None:
        raise TypeError("`dim` must be an int, got None")
    k = _int(k, "k")
    largest = _checks.check_bool(largest, "largest")
    _checks.check_bool(sorted, "sorted")
    if not 0 <= k <= a.shape[dim]:
        raise ValueError(f"`k` must be in [0, {a.shape[dim]}] (the length of `dim`), got {k}")
    if out is not None and (
        not isinstance(out, tuple)
        or len(out) != 2
        or not all(isinstance(o, _dndarray.DNDarray) for o in out)
    ):
        raise TypeError(f"`out` must be a tuple of two DNDarrays, got {type(out).__name__}")
    x = a.to_dask()
    shape = tuple(k if ax == dim else s for ax, s in enumerate(a.shape))
    name = f"topk-{tokenize(x.name, k, dim, largest)}"
    dsk: dict = {}
    hints: dict = {}
    if a.split == dim and a.comm.size > 1:
        displs = a.counts_displs()[1]
        for r, key in enumerate(a._chunk_keys()):
            dsk[(name + "-cand", r)] = (_lane_topk, key, k, dim, largest, displs[r])
            hints[(name + "-cand", r)] = r
        cands = [(name + "-cand", r) for r in range(a.comm.size)]
        dsk[(name + "-merge", 0)] = (_merge_topk, cands, k, dim, largest)
        hints[(name + "-merge", 0)] = 0
        split, chunks = None, tuple((s,) for s in shape)
        sources = [((name + "-merge", 0), (0,) * a.ndim, 0)]
    else:
        chunks = tuple((k,) if ax == dim else c for ax, c in enumerate(x.chunks))
        split = a.split
        sources = []
        for r, key in enumerate(a._chunk_keys()):
            both = (name + "-both", r)
            dsk[both] = (_lane_topk, key, k, dim, largest, 0)
            hints[both] = r
            sources.append((both, block_index(split, a.ndim, r), r))
    results = []
    for i, (suffix, dtype) in enumerate((("values", a.dtype), ("indices", np.dtype(np.int64)))):
        part = f"{name}-{suffix}"
        part_dsk = dict(dsk)
        for src, idx, _ in sources:
            part_dsk[(part, *idx)] = (operator.getitem, src, i)
        results.append(_graph_array(a, part, part_dsk, hints, chunks, dtype, split, [a]))
    if out is None:
        return tuple(results)
    out[0][...] = results[0]
    out[1][...] = results[1]
    return out


# ---------------------------------------------------------- searchsorted
def _count(haystack, needles, side):
    xp = _xp.namespace_of(haystack)
    return xp.searchsorted(haystack, needles, side=side).astype(np.int64)


def _sum(parts):
    out = parts[0]
    for part in parts[1:]:
        out = out + part
    return out


def searchsorted(a, v, side="left", sorter=None):
    """Insertion points of ``v`` in the sorted 1-D array ``a``, as :func:`numpy.searchsorted`.

    ``a`` may be split (sorted over the ranks in rank order, as :func:`sort`
    leaves it). The needles travel to every rank of ``a``, which counts its
    values below them; the counts are summed where the needles live. The
    result has ``v``'s shape (and layout, if ``v`` is a DNDarray; otherwise
    ``split=None``).

    Parameters
    ----------
    a : DNDarray
        1-D, sorted ascending.
    v : scalar, array-like or DNDarray
        The values to insert.
    side : {"left", "right"}, optional
        The first or the last suitable position.
    sorter : array-like or DNDarray, optional
        Indices that sort ``a`` (``a`` is taken in that order first).

    Returns
    -------
    DNDarray
        int64 positions.

    Examples
    --------
    >>> import dndask as ht
    >>> ht.searchsorted(ht.array([1, 2, 4, 8], split=0), [0, 4, 9]).numpy().tolist()
    [0, 2, 4]
    """
    a = _checks.check_sortable(a, "searchsorted")
    if a.ndim != 1:
        raise ValueError(f"`a` of `searchsorted` must be 1-D, got {a.ndim}-D")
    if side not in ("left", "right"):
        raise ValueError(f"`side` must be 'left' or 'right', got {side!r}")
    if sorter is not None:
        a = take(a, sorter)
    if not isinstance(v, _dndarray.DNDarray):
        v = _in_memory(np.asarray(v), a.comm, a.device)
    _ops.check_one_device([a, v], "searchsorted")
    if v.dtype.kind == "c":
        raise TypeError(f"`v` of `searchsorted` must not be complex, got {v.dtype}")
    hay = a._chunk_keys()
    hay_ranks = list(range(a.comm.size)) if a.split is not None else [None]
    x = v.to_dask()
    name = f"searchsorted-{tokenize(a.to_dask().name, x.name, side)}"
    dsk: dict = {}
    hints: dict = {}
    for q, needle in enumerate(v._chunk_keys()):
        parts = []
        for r, key in zip(hay_ranks, hay, strict=True):
            part = (name + "-part", q, 0 if r is None else r)
            dsk[part] = SliceTask(part, _count, TaskRef(key), TaskRef(needle), side)
            hints[part] = q if r is None else r
            parts.append(part)
        dsk[(name, *block_index(v.split, v.ndim, q))] = (_sum, parts)
    return _graph_array(a, name, dsk, hints, x.chunks, np.dtype(np.int64), v.split, [a, v])


# --------------------------------------------------------------- nonzero
def _count_nonzero(chunk):
    # one count per rank: metadata the driver plans with, copied to host explicitly
    count = _xp.namespace_of(chunk).count_nonzero(chunk)
    return np.array([int(_xp.to_host(count))], dtype=np.int64)


def _per_rank_counts(a) -> list[int]:
    """Every rank's number of nonzero elements (one small round)."""
    x = a.to_dask()
    name = f"nonzero-count-{tokenize(x.name)}"
    dsk = {(name, r): (_count_nonzero, key) for r, key in enumerate(a._chunk_keys())}
    if a.split is None:
        dsk = {(name, 0): dsk[(name, 0)]}
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[x])
    y = new_array(graph, name, ((1,) * len(dsk),), meta_of(np.int64, 1))
    return (
        _dndarray.from_dask(y, 0 if len(dsk) > 1 else None, a.comm, parents=(a,)).numpy().tolist()
    )


def _coordinates(chunk, offset, split):
    xp = _xp.namespace_of(chunk)
    coords = (
        xp.stack(xp.nonzero(chunk)).astype(np.int64) if chunk.ndim else xp.empty((0, 0), np.int64)
    )
    if split is not None and coords.size:
        coords[split] += offset
    return coords


def _flat_nonzero(chunk, offsets, gshape):
    xp = _xp.namespace_of(chunk)
    flat = _tasks.global_flat_index(tuple(offsets), chunk.shape, tuple(gshape), xp)
    return flat[xp.flatnonzero(chunk)]


def _unravel(flat, axis, shape):
    return _xp.namespace_of(flat).unravel_index(flat, shape)[axis].astype(np.int64)


def nonzero(a):
    """The indices of the nonzero elements, one int64 array per axis, as :func:`numpy.nonzero`.

    In numpy's (C) order. Each coordinate array is 1-D and split 0 when ``a``
    is split (its counts follow the data), else ``split=None``. One small
    round brings every rank's number of nonzero elements to the driver; a
    split other than 0 also sorts the flat indices over the ranks.

    Examples
    --------
    >>> import dndask as ht
    >>> r, c = ht.nonzero(ht.array([[0, 3], [4, 0]], split=1))
    >>> r.numpy().tolist(), c.numpy().tolist()
    ([0, 1], [1, 0])
    """
    a = _checks.check_array(a, "nonzero")
    if a.ndim == 0:
        raise ValueError(
            "`a` of `nonzero` must not be 0-d (numpy refuses it); use a 1-element array"
        )
    counts = _per_rank_counts(a)
    x = a.to_dask()
    name = f"nonzero-{tokenize(x.name)}"
    if a.split is None or a.split == 0 or a.comm.size == 1:
        offsets = a.counts_displs()[1] if a.split is not None else [0]
        keys = a._chunk_keys()
        dsk = {(name, r): (_coordinates, key, offsets[r], a.split) for r, key in enumerate(keys)}
        hints = {(name, r): r for r in range(len(keys))}
        split = None if a.split is None else 0
        outs = []
        for axis in range(a.ndim):
            part = f"{name}-{axis}"
            part_dsk = dict(dsk)
            for r in range(len(keys)):
                part_dsk[(part, r)] = (operator.getitem, (name, r), axis)
            outs.append(
                _graph_array(a, part, part_dsk, hints, (tuple(counts),), np.int64, split, [a])
            )
        return tuple(outs)
    flat = _exchange.local_runs(a, _flat_nonzero, np.dtype(np.int64), counts=counts)
    ordered = _exchange.flat_sort(flat, with_keys=False, descending=False)
    y = ordered.to_dask()
    return tuple(
        _dndarray.from_dask(
            y.map_blocks(_unravel, axis, a.shape, dtype=np.int64, meta=chunk_meta(y)),
            0,
            a.comm,
            parents=(ordered,),
        )
        for axis in range(a.ndim)
    )


def where(cond, x=None, y=None, /):
    """``x`` where ``cond`` is true, ``y`` elsewhere; ``where(cond)`` is :func:`nonzero`.

    >>> import dndask as ht
    >>> a = ht.arange(5, split=0)
    >>> ht.where(a > 2, a, -1).numpy().tolist()
    [-1, -1, -1, 3, 4]
    >>> ht.where(a > 2)[0].numpy().tolist()
    [3, 4]
    """
    if x is None and y is None:
        return nonzero(cond)
    return _elementwise.where(cond, x, y)


# ------------------------------------------------------------------ isin
def _isin_any(element, tests, invert, kind):
    """``isin`` of a chunk in its namespace; host test values are copied there explicitly."""
    xp = _xp.namespace_of(element)
    hit = xp.zeros(element.shape, dtype=bool)
    extra = {} if kind is None else {"kind": kind}
    for t in tests:
        hit |= xp.isin(element, xp.asarray(t), **extra)
    return ~hit if invert else hit


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Whether each element of ``element`` is in ``test_elements``, as :func:`numpy.isin`.

    The result has ``element``'s shape and layout. In-memory test values go
    into every rank's task; a DNDarray of test values travels to every rank of
    ``element`` (``P`` times its size moves).

    Examples
    --------
    >>> import dndask as ht
    >>> ht.isin(ht.arange(5, split=0), [1, 3]).numpy().tolist()
    [False, True, False, True, False]
    """
    if not isinstance(element, _dndarray.DNDarray):
        like = test_elements if isinstance(test_elements, _dndarray.DNDarray) else None
        comm = _comm.get_comm() if like is None else like.comm
        element = _in_memory(np.asarray(element), comm, None if like is None else like.device)
    _checks.check_bool(assume_unique, "assume_unique")
    invert = _checks.check_bool(invert, "invert")
    if kind not in (None, "sort", "table"):
        raise ValueError(f"`kind` must be None, 'sort' or 'table', got {kind!r}")
    x = element.to_dask()
    if isinstance(test_elements, _dndarray.DNDarray):
        _ops.check_one_device([element, test_elements], "isin")
        tests = test_elements
        test_keys = [k for k, c in zip(tests._chunk_keys(), _sizes(tests), strict=True) if c]
        deps = [element, tests]
    else:
        tests = None
        test_keys = [np.asarray(test_elements)]
        deps = [element]
    tested = test_keys if tests is None else tests.to_dask().name
    name = f"isin-{tokenize(x.name, tested, invert, kind)}"
    dsk = {
        (name, *block_index(element.split, element.ndim, r)): (
            _isin_any,
            key,
            test_keys,
            invert,
            kind,
        )
        for r, key in enumerate(element._chunk_keys())
    }
    return _graph_array(element, name, dsk, {}, x.chunks, np.dtype(bool), element.split, deps)


def _sizes(a) -> list[int]:
    if a.split is None:
        return [a.size]
    return [int(np.prod(row)) for row in a.lshape_map.tolist()]


# ------------------------------------------------------------------ take
def _index_values(indices, name: str) -> np.ndarray:
    values = indices.numpy() if isinstance(indices, _dndarray.DNDarray) else np.asarray(indices)
    if values.dtype.kind not in "iu":
        raise TypeError(f"`{name}` must hold integers, got {values.dtype}")
    return values


def take(a, indices, axis=None, mode="raise"):
    """Elements of ``a`` at ``indices`` along ``axis`` (flattened if None), as :func:`numpy.take`.

    Integer-array indexing of :mod:`dndask._indexing`: the indices are
    computed to the driver (an index array is small metadata), every rank
    sends only the selected rows. ``mode`` is numpy's (``"raise"``,
    ``"wrap"``, ``"clip"``).

    Examples
    --------
    >>> import dndask as ht
    >>> ht.take(ht.arange(10, split=0) * 2, [7, 0, -1]).numpy().tolist()
    [14, 0, 18]
    """
    a = _checks.check_array(a, "take")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"`mode` must be 'raise', 'wrap' or 'clip', got {mode!r}")
    axis = _checks.sort_axis(axis, a)
    if axis is None and a.ndim != 1:
        a = a.flatten()
    axis = 0 if axis is None else axis
    values = _index_values(indices, "indices")
    length = a.shape[axis]
    if mode == "wrap" and length:
        values = values % length
    elif mode == "clip":
        values = np.clip(values, 0, max(length - 1, 0))
    return a[(slice(None),) * axis + (values,)]


def take_along_axis(arr, indices, axis=-1):
    """Values of ``arr`` at ``indices`` along ``axis``, as :func:`numpy.take_along_axis`.

    When ``indices`` has ``arr``'s shape off ``axis`` and the lanes along
    ``axis`` are whole on every rank, numpy's own runs on each rank (the
    indices are moved to ``arr``'s layout first, if needed); otherwise it is
    integer-array indexing (the indices computed to the driver).

    Examples
    --------
    >>> import dndask as ht
    >>> a = ht.array([[3, 1, 2], [9, 7, 8]], split=0)
    >>> ht.take_along_axis(a, ht.argsort(a, axis=1), axis=1).numpy().tolist()
    [[1, 2, 3], [7, 8, 9]]
    """
    arr = _checks.check_array(arr, "take_along_axis", "arr")
    axis = _checks.sort_axis(axis, arr)
    ndim = np.ndim(indices) if not isinstance(indices, _dndarray.DNDarray) else indices.ndim
    if axis is None:
        if ndim != 1:
            raise ValueError(f"`indices` must be 1-D when `axis` is None, got {ndim}-D")
        return take(arr, indices)
    if ndim != arr.ndim:
        raise ValueError(f"`indices` must have {arr.ndim} dimensions like `arr`, got {ndim}")
    shape = indices.shape if isinstance(indices, _dndarray.DNDarray) else np.shape(indices)
    same = all(s == t for ax, (s, t) in enumerate(zip(shape, arr.shape, strict=True)) if ax != axis)
    if (
        same
        and (arr.split != axis or arr.comm.size == 1)
        and isinstance(indices, _dndarray.DNDarray)
    ):
        if indices.dtype.kind not in "iu":
            raise TypeError(f"`indices` must hold integers, got {indices.dtype}")
        _ops.check_one_device([arr, indices], "take_along_axis")
        idx = indices if indices.split == arr.split else indices.resplit(arr.split)
        if arr.split is not None and idx.counts_displs()[0] != arr.counts_displs()[0]:
            target = idx.lshape_map
            target[:, arr.split] = arr.lshape_map[:, arr.split]
            idx = idx.redistribute(target_map=target)
        return _along_local(arr, idx, axis)
    values = _index_values(indices, "indices")
    key = tuple(
        values
        if ax == axis
        else np.arange(arr.shape[ax]).reshape([-1 if d == ax else 1 for d in range(arr.ndim)])
        for ax in range(arr.ndim)
    )
    return arr[key]


def _along_local(arr, idx, axis):
    x, i = arr.to_dask(), idx.to_dask()
    name = f"take-along-{tokenize(x.name, i.name, axis)}"
    dsk = {
        ik: (_take_along, xk, (i.name, *ik[1:]), axis)
        for xk, ik in zip(
            arr._chunk_keys(), [(name, *k[1:]) for k in idx._chunk_keys()], strict=True
        )
    }
    return _graph_array(arr, name, dsk, {}, i.chunks, arr.dtype, arr.split, [arr, idx])


def _take_along(chunk, indices, axis):
    return _xp.namespace_of(chunk).take_along_axis(chunk, indices, axis)
