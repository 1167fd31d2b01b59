"""Front ends :func:`sort`, :func:`argsort`, :func:`partition`, :func:`argpartition`.

Where the lanes are whole on every rank (the axis is not the split axis, the
array is not distributed) each rank works alone. Along the split axis of a 1-D
array (or over the flattened array, ``axis=None``) the sample sort of
:mod:`._exchange` runs; the result is split 0 and its counts follow the data.
Along the split axis of an N-D array every lane would need its own splitters
and its own counts per rank, which no rectangular chunk can hold; such an
array is resplit to its longest other axis, sorted lane by lane, and resplit
back, so the result is balanced (twice the array moves).

Device chunks (CuPy) sort lanes where they live, and the sample sort of plain values
(``sort`` without a stable order of floats) runs on them too: runs, slices and merges stay
on the device, only the samples and the cut positions come to the driver (explicit copies).
Runs with keys are structured records, which CuPy has no dtype for, so a device array that
needs them (``argsort`` and a stable ``sort`` of floats along the exchange, ``partition``)
goes through host memory explicitly: ``a.cpu()`` (one task per chunk, on its rank), the
work, and the result copied back to the device the same way.
"""

from __future__ import annotations

import numpy as np

from .. import _dndarray, _layout, _xp
from .._graph import meta_of
from .._statistics import _selection
from . import _checks, _exchange, _plan, _tasks

__all__ = ["along_lanes", "argpartition", "argsort", "local", "partition", "sort"]


def local(a: _dndarray.DNDarray, fn, dtype) -> _dndarray.DNDarray:
    """``fn(chunk)`` (same shape) on every rank where its chunk lives; ``a``'s layout is kept."""
    y = a.to_dask().map_blocks(fn, dtype=dtype, meta=meta_of(dtype, a.ndim, like=a))
    return _dndarray.from_dask(y, a.split, a.comm, parents=(a,))


def along_lanes(a: _dndarray.DNDarray, axis: int, fn, dtype) -> _dndarray.DNDarray:
    """``fn(chunk)`` with every lane along ``axis`` whole in its chunk (resplitting if needed)."""
    if a.split != axis or a.comm.size == 1 or a.ndim == 1:
        return local(a, fn, dtype)
    other = max((ax for ax in range(a.ndim) if ax != axis), key=lambda ax: (a.shape[ax], -ax))
    return local(a.resplit(other), fn, dtype).resplit(axis)


def _sort_lanes(x: np.ndarray, axis: int, descending: bool, kind) -> np.ndarray:
    xp = _xp.namespace_of(x)
    if not descending:  # CuPy's sort is always stable and takes no other kind
        return xp.sort(x, axis=axis, kind=kind if xp is np else None)
    return xp.take_along_axis(x, _tasks.lane_order(x, axis, True), axis)


def _flat_local(a: _dndarray.DNDarray, fn, dtype) -> _dndarray.DNDarray:
    """``fn`` of the flattened values of a ``split=None`` array: one task, ``split=None``."""
    flat = a.to_dask().reshape(-1).rechunk(-1) if a.ndim != 1 else a.to_dask()
    y = flat.map_blocks(fn, dtype=dtype, meta=meta_of(dtype, 1, like=a))
    return _dndarray.from_dask(y, None, a.comm, parents=(a,))


def _through_host(fn, a: _dndarray.DNDarray, *args, **kwargs) -> _dndarray.DNDarray:
    """``fn(a.cpu(), ...)`` copied back to ``a``'s device: explicit copies, one task per chunk."""
    return fn(a.cpu(), *args, **kwargs)._on_device(a.device)


def _finish(result: _dndarray.DNDarray, balanced: bool) -> _dndarray.DNDarray:
    return result.balance_() if balanced and result.split is not None else result


def sort(a, axis=-1, descending=False, kind=None, *, stable=None, balanced=False, method=None):
    """The values of ``a`` sorted along ``axis``, as :func:`numpy.sort`.

    NaNs sort last (first when ``descending``, as in Heat, whose descending
    order is the ascending one reversed). Along the split axis the order is
    always stable, so ``kind="stable"`` gives numpy's order exactly.

    Distribution: along a non-split axis each rank sorts its own lanes (the
    layout is kept). Along the split axis of a 1-D array, or flattened
    (``axis=None``), a sample sort runs: each rank sorts its chunk, two small
    rounds (samples, then cut positions) go through the driver now, and one
    all-to-all exchange of ranges follows (lazy). The result is split 0 and
    its counts follow the data: ``result.balanced`` is usually False, and
    ``balanced=True`` redistributes it to Heat's balanced layout. Along the
    split axis of an N-D array the lanes are sorted after a resplit to another
    axis and resplit back (balanced).

    Parameters
    ----------
    a : DNDarray
        Boolean, integer or real data (complex is refused).
    axis : int or None, optional
        The axis to sort along (default the last); ``None`` sorts the flattened array.
    descending : bool, optional
        Largest first (Heat's argument).
    kind : str, optional
        numpy's ``kind``: ``"stable"``/``"mergesort"`` ask for a stable order.
    stable : bool, optional
        numpy's ``stable``.
    balanced : bool, optional
        Rebalance a result whose counts follow the data.
    method : {None, "shm", "mpi", "tasks", "two-level"}, optional
        The sample sort's exchange: ``"shm"`` or ``"mpi"``, as relayouts carry
        their pieces (a post per rank, a barrier, a collect per rank, then each
        rank sorts what it got); ``"tasks"``, one slice task per pair of ranks
        (``P²``, through Dask's comms); ``"two-level"``, two hops through
        ``sqrt(P)`` groups of ranks (``O(P^1.5)`` tasks, the data move twice).
        None picks as relayouts do (``$DNDASK_RELAYOUT``, then MPI under dndask's
        ``mpirun`` launch, shared memory on one host), else ``"two-level"``
        above ``$DNDASK_P2P_THRESHOLD`` pieces (64 ranks) and ``"tasks"`` below.

    Returns
    -------
    DNDarray

    Examples
    --------
    >>> import dndask as ht
    >>> a = ht.array([3, 1, 2, 5, 4, 0], split=0)
    >>> ht.sort(a).numpy().tolist()
    [0, 1, 2, 3, 4, 5]
    >>> ht.sort(a, descending=True, balanced=True).balanced
    True
    """
    a = _checks.check_sortable(a, "sort")
    axis = _checks.sort_axis(axis, a)
    descending = _checks.check_bool(descending, "descending")
    is_stable = _checks.check_kind(kind, stable)
    balanced = _checks.check_bool(balanced, "balanced")
    _exchange.check_method(method)
    numpy_kind = "stable" if is_stable else kind
    if axis is None and a.split is None:
        return _flat_local(a, lambda v: _sort_lanes(v, 0, descending, numpy_kind), a.dtype)
    if axis is None or (a.ndim == 1 and a.split == axis and a.comm.size > 1):
        with_keys = is_stable and a.dtype.kind == "f"
        if with_keys and a.device != "cpu":  # records: through host (see the module docs)
            return _through_host(
                sort, a, axis, descending, kind, stable=stable, balanced=balanced, method=method
            )
        out = _exchange.flat_sort(a, with_keys=with_keys, descending=descending, method=method)
        if with_keys:
            out = _exchange.field(out, _tasks.RECORD_VALUE, a.dtype)
        return _finish(out, balanced)
    out = along_lanes(a, axis, lambda x: _sort_lanes(x, axis, descending, numpy_kind), a.dtype)
    return _finish(out, balanced)


def argsort(a, axis=-1, descending=False, kind=None, *, stable=None, balanced=False, method=None):
    """Indices that sort ``a`` along ``axis`` (global int64), as :func:`numpy.argsort`.

    The order is always stable (ties keep their index order, even descending),
    so it equals numpy's ``kind="stable"`` result; NaNs are last (first when
    ``descending``). Distributed as :func:`sort`: along the split axis of a
    1-D array (or ``axis=None``) the sample sort carries every value's global
    index (flat index for ``axis=None``) and the result's counts follow the data.

    Parameters
    ----------
    a : DNDarray
        Boolean, integer or real data.
    axis : int or None, optional
        The axis (default the last); ``None``: indices into the flattened array.
    descending : bool, optional
        Largest first.
    kind, stable : optional
        numpy's arguments (checked; the order is stable anyway).
    balanced : bool, optional
        Rebalance a result whose counts follow the data.
    method : {None, "shm", "mpi", "tasks", "two-level"}, optional
        The sample sort's exchange, as in :func:`sort`.

    Returns
    -------
    DNDarray
        int64 indices.

    Examples
    --------
    >>> import dndask as ht
    >>> ht.argsort(ht.array([3, 1, 2, 1], split=0)).numpy().tolist()
    [1, 3, 2, 0]
    """
    a = _checks.check_sortable(a, "argsort")
    axis = _checks.sort_axis(axis, a)
    descending = _checks.check_bool(descending, "descending")
    _checks.check_kind(kind, stable)
    balanced = _checks.check_bool(balanced, "balanced")
    _exchange.check_method(method)
    if axis is None and a.split is None:
        return _flat_local(a, lambda v: _tasks.lane_order(v, 0, descending), np.dtype(np.int64))
    if axis is None or (a.ndim == 1 and a.split == axis and a.comm.size > 1):
        if a.device != "cpu":
            return _through_host(
                argsort, a, axis, descending, kind, stable=stable, balanced=balanced, method=method
            )
        out = _exchange.flat_sort(a, with_keys=True, descending=descending, method=method)
        return _finish(
            _exchange.field(out, _tasks.RECORD_KEY, np.int64, negate=descending), balanced
        )
    out = along_lanes(a, axis, lambda x: _tasks.lane_order(x, axis, descending), np.dtype(np.int64))
    return _finish(out, balanced)


def _check_kth(kth, length: int) -> np.ndarray:
    values = np.asarray(kth)
    if values.dtype.kind not in "iu" or values.ndim > 1:
        raise TypeError(f"`kth` must be an int or a 1-D sequence of ints, got {kth!r}")
    values = np.atleast_1d(values).astype(np.int64)
    bad = values[(values < -length) | (values >= length)]
    if bad.size:
        raise ValueError(f"`kth` must be in [{-length}, {length - 1}], got {int(bad[0])}")
    return np.unique(values % length) if length else values


def _bucket_run(chunk, offsets, gshape, pivots, with_keys):
    values = np.ravel(chunk)
    order = np.argsort(_plan.bucket_of(values, pivots), kind="stable")
    if not with_keys:
        return values[order]
    keys = _tasks.global_flat_index(tuple(offsets), chunk.shape, tuple(gshape))
    return _tasks.records(values[order], keys[order])


def _bucket_sizes(run, pivots, buckets):
    return np.bincount(_plan.bucket_of(_tasks.values_of(run), pivots), minlength=buckets)


def _partition_flat(a: _dndarray.DNDarray, kth: np.ndarray, with_keys: bool):
    """The split array ``a`` flattened, partitioned at ``kth``: selection, then one exchange.

    The exact distributed selection (the one percentile uses) finds the values
    at ``kth``; every rank groups its values into the buckets those values
    define (:func:`._plan.bucket_of`), one round brings the bucket sizes, and
    the exchange sends each balanced destination its positions of the
    bucket-ordered whole. Returns None if the data hold a NaN.
    """
    found, has_nan = _selection.order_statistics(a, kth)
    if has_nan:
        return None
    pivots = np.unique(np.asarray([found[int(k)] for k in kth], dtype=a.dtype))
    dtype = _exchange.run_dtype(a.dtype, with_keys)
    runs = _exchange.local_runs(a, _bucket_run, dtype, pivots, with_keys).persist(wait=True)
    buckets = 2 * pivots.size + 1
    sizes = _exchange.submit(
        a.comm, _bucket_sizes, _exchange.run_futures(runs), [(pivots, buckets)] * a.comm.size
    )
    counts = _layout.balanced_counts(a.size, a.comm.size)
    plans = _plan.plan_ordered_exchange(np.stack(sizes), counts)
    return _exchange.exchange(runs, plans, counts, descending=False, sort=False, prefix="partition")


def _partition(a, kth, axis, kind, fn: str, indices: bool):
    a = _checks.check_sortable(a, fn)
    axis = _checks.sort_axis(axis, a)
    if kind != "introselect":
        raise ValueError(f"`kind` must be 'introselect', got {kind!r}")
    length = a.size if axis is None else a.shape[axis]
    kth = _check_kth(kth, length)
    dtype = np.dtype(np.int64) if indices else a.dtype
    if axis is None and a.split is None:
        return _flat_local(a, lambda v: _partition_lanes(v, kth, 0, indices), dtype)
    if axis is None or (a.ndim == 1 and a.split == axis and a.comm.size > 1):
        if a.device != "cpu":  # the exchange's runs are host records (see the module docs)
            return _through_host(_partition, a, kth, axis, kind, fn, indices)
        out = _partition_flat(a, kth, indices) if a.size else None
        if out is None:  # NaNs (sorted last, as numpy partitions them) or no data: a full sort
            return argsort(a, axis=axis) if indices else sort(a, axis=axis)
        if indices:
            return _exchange.field(out, _tasks.RECORD_KEY, np.int64)
        return out
    return along_lanes(a, axis, lambda x: _partition_lanes(x, kth, axis, indices), dtype)


def _partition_lanes(x, kth: np.ndarray, axis: int, indices: bool):
    """numpy's (arg)partition of a chunk's lanes, in the chunk's namespace."""
    xp = _xp.namespace_of(x)
    kth = [int(k) for k in kth]  # host ints: no host array reaches a device function
    return (xp.argpartition if indices else xp.partition)(x, kth, axis=axis)


def partition(a, kth, axis=-1, kind="introselect"):
    """``a`` partitioned at ``kth`` along ``axis``, as :func:`numpy.partition`.

    The value at each ``kth`` position is the one a sort puts there, smaller
    values are before it and larger ones after. Where the lanes are whole on
    every rank, numpy's own partition runs on each (the values equal numpy's).
    Along the split axis of a 1-D array (or ``axis=None``) the values at
    ``kth`` come from the exact distributed selection that percentile uses,
    and one exchange moves each value to its bucket's place: the result is
    balanced and equals numpy's up to the order inside each bucket. An array
    holding NaN is sorted instead (a sort is a valid partition).

    Parameters
    ----------
    a : DNDarray
        Boolean, integer or real data.
    kth : int or sequence of ints
        Positions to partition at (negative count from the end).
    axis : int or None, optional
        The axis (default the last); ``None`` flattens.
    kind : str, optional
        ``"introselect"``, numpy's only kind.

    Returns
    -------
    DNDarray

    Examples
    --------
    >>> import dndask as ht
    >>> p = ht.partition(ht.array([5, 1, 4, 2, 3], split=0), 2).numpy()
    >>> int(p[2]), sorted(p[:2].tolist()), sorted(p[3:].tolist())
    (3, [1, 2], [4, 5])
    """
    return _partition(a, kth, axis, kind, "partition", False)


def argpartition(a, kth, axis=-1, kind="introselect"):
    """Indices that partition ``a`` at ``kth`` along ``axis``, as :func:`numpy.argpartition`.

    Distributed as :func:`partition`; the indices are global (flat for
    ``axis=None``), int64.

    Examples
    --------
    >>> import dndask as ht
    >>> a = ht.array([5, 1, 4, 2, 3], split=0)
    >>> int(a.numpy()[ht.argpartition(a, 0).numpy()[0]])
    1
    """
    return _partition(a, kth, axis, kind, "argpartition", True)
