"""Front ends :func:`unique` and the array API's ``unique_values``/``_counts``/``_inverse``/``_all``

Distributed ``unique`` (``axis=None``) runs on the sample sort: the flattened
values are sorted over the ranks (with their global flat indices when the
first indices or the inverse are asked for), each rank finds its groups of
equal values, and one round brings five numbers per rank to the driver, which
joins the groups that cross rank boundaries (:func:`._plan.plan_unique`). The
results are split 0 with one group per entry, their counts following the data.
The inverse goes back to the input's layout in one more exchange: each sorted
rank sends every destination rank the group numbers of the values it owns.

``axis=`` (unique subarrays) on a distributed array gathers the array onto
rank 0's worker (``resplit(None)``) and runs numpy there: it is not distributed.

Device chunks (CuPy): the values and counts are found on the device (the sample sort of
plain values; only the five numbers per rank come to the driver). First indices, the
inverse and ``axis=`` need host records or numpy: the array is copied to host explicitly
(``a.cpu()``, one task per chunk on its rank), and the results back to the device.
"""

from __future__ import annotations

import operator
from typing import NamedTuple

import dask
import dask.array as da
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from .. import _dndarray, _xp
from .._compat import SliceTask, TaskRef, new_array
from .._graph import block_index, meta_of
from . import _checks, _exchange, _plan, _tasks

__all__ = [
    "UniqueAllResult",
    "UniqueCountsResult",
    "UniqueInverseResult",
    "unique",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
]


class UniqueAllResult(NamedTuple):
    values: _dndarray.DNDarray
    indices: _dndarray.DNDarray
    inverse_indices: _dndarray.DNDarray
    counts: _dndarray.DNDarray


class UniqueCountsResult(NamedTuple):
    values: _dndarray.DNDarray
    counts: _dndarray.DNDarray


class UniqueInverseResult(NamedTuple):
    values: _dndarray.DNDarray
    inverse_indices: _dndarray.DNDarray


def _starts(values: np.ndarray, equal_nan: bool) -> np.ndarray:
    """Positions where a group of equal values starts in a sorted run (in its namespace)."""
    xp = _xp.namespace_of(values)
    if values.size == 0:
        return xp.empty(0, dtype=np.int64)
    same = values[1:] == values[:-1]
    if equal_nan and values.dtype.kind == "f":
        same |= xp.isnan(values[1:]) & xp.isnan(values[:-1])
    return xp.flatnonzero(xp.concatenate([xp.ones(1, dtype=bool), ~same]))


def _summary(run: np.ndarray, equal_nan: bool):
    values = _tasks.values_of(run)
    if values.size == 0:
        return 0, None, None, 0, 0
    starts = _starts(values, equal_nan)
    # five numbers for the driver: explicit scalar copies of a device run's values
    first_count = int(starts[1]) if starts.size > 1 else values.size
    first_index = int(run[_tasks.RECORD_KEY][0]) if run.dtype.names else 0
    return starts.size, values[0].item(), values[-1].item(), first_count, first_index


def _values(run, equal_nan, drop):
    values = _tasks.values_of(run)
    return values[_starts(values, equal_nan)][int(drop) :].copy()


def _counts(run, equal_nan, drop, extra):
    values = _tasks.values_of(run)
    xp = _xp.namespace_of(values)
    starts = _starts(values, equal_nan)
    ends = xp.concatenate([starts[1:], xp.full(min(starts.size, 1), values.size, dtype=np.int64)])
    counts = (ends - starts).astype(np.int64)
    if counts.size:
        counts[-1] += extra
    return counts[int(drop) :]


def _first_index(run, equal_nan, drop, extra):
    starts = _starts(_tasks.values_of(run), equal_nan)
    index = run[_tasks.RECORD_KEY][starts].astype(np.int64)
    if index.size:
        index[-1] = min(int(index[-1]), extra)
    return index[int(drop) :]


def _route_inverse(run, equal_nan, drop, offset, gshape, split, displs, counts):
    """Every destination rank's ``(local flat positions, group numbers)`` of this sorted run."""
    values = _tasks.values_of(run)
    keys = run[_tasks.RECORD_KEY]
    group = np.zeros(values.size, dtype=np.int64)
    starts = _starts(values, equal_nan)
    if starts.size:
        group[starts[1:]] = 1
    ids = np.cumsum(group) + (offset - int(drop))
    inner = int(np.prod(gshape[split + 1 :], dtype=np.int64))
    coord = (keys // inner) % gshape[split]
    dest = np.searchsorted(np.asarray(displs), coord, side="right") - 1
    outer = keys // (inner * gshape[split])
    out = []
    for q, (start, count) in enumerate(zip(displs, counts, strict=True)):
        mine = dest == q
        local = (outer[mine] * count + (coord[mine] - start)) * inner + keys[mine] % inner
        out.append((local, ids[mine]))
    return out


def _assemble_inverse(pieces, lshape):
    out = np.empty(int(np.prod(lshape, dtype=np.int64)), dtype=np.int64)
    for pos, ids in pieces:
        out[pos] = ids
    return out.reshape(lshape)


def _per_rank(sorted_, fn, counts, dtype, *args_of_rank):
    """A 1-D split-0 DNDarray whose chunk ``r`` is ``fn(sorted chunk r, *args_of_rank(r))``."""
    x = sorted_.to_dask()
    name = f"unique-{fn.__name__.strip('_')}-{tokenize(x.name, args_of_rank, fn)}"
    dsk = {(name, r): (fn, (x.name, r), *args_of_rank[r]) for r in range(sorted_.comm.size)}
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[x])
    y = new_array(graph, name, (tuple(counts),), meta_of(dtype, 1, like=x))
    return _dndarray.from_dask(y, 0, sorted_.comm, parents=(sorted_,))


def _inverse(sorted_, a, plan, equal_nan):
    """The group number of every element of ``a``, in ``a``'s layout (one exchange)."""
    x = sorted_.to_dask()
    size = a.comm.size
    counts, displs = a.counts_displs()
    name = f"unique-inverse-{tokenize(x.name, plan, a.to_dask().name)}"
    route, piece = f"{name}-route", f"{name}-piece"
    dsk: dict = {}
    hints: dict = {}
    for r in range(size):
        dsk[(route, r)] = (
            _route_inverse,
            (x.name, r),
            equal_nan,
            plan.drop[r],
            plan.offsets[r],
            a.shape,
            a.split,
            displs,
            counts,
        )
        hints[(route, r)] = r
    for q in range(size):
        keys = []
        for r in range(size):
            key = (piece, q, r)
            dsk[key] = SliceTask(key, operator.getitem, TaskRef((route, r)), q)
            hints[key] = r
            keys.append(key)
        lshape = tuple(counts[q] if ax == a.split else s for ax, s in enumerate(a.shape))
        dsk[(name, *block_index(a.split, a.ndim, q))] = (_assemble_inverse, keys, lshape)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[x])
    y = new_array(graph, name, a.to_dask().chunks, meta_of(np.int64, a.ndim))
    out = _dndarray.from_dask(y, a.split, a.comm, parents=(sorted_,))
    out._task_ranks.update(hints)
    return out


def _unique_flat(a, return_index, return_inverse, return_counts, equal_nan):
    shape, split = a.shape, a.split
    if a.ndim == 0:
        a = a.reshape((1,))
    if a.split is None:
        a = a.resplit(0)
    with_keys = return_index or return_inverse
    sorted_ = _exchange.flat_sort(a, with_keys=with_keys, descending=False).persist(wait=True)
    futures = _exchange.run_futures(sorted_)
    size = a.comm.size
    summaries = _exchange.submit(a.comm, _summary, futures, [(equal_nan,)] * size)
    plan = _plan.plan_unique(summaries)
    out = [_per_rank(sorted_, _values, plan.counts, a.dtype, *[(equal_nan, d) for d in plan.drop])]
    if return_index:
        args = [(equal_nan, d, e) for d, e in zip(plan.drop, plan.extra_index, strict=True)]
        out.append(_per_rank(sorted_, _first_index, plan.counts, np.int64, *args))
    if return_inverse:
        inverse = _inverse(sorted_, a, plan, equal_nan)
        if split is None:  # back to the input's layout (it was spread to sort it)
            inverse = inverse.resplit(None)
        out.append(inverse.reshape(shape) if len(shape) == 0 else inverse)
    if return_counts:
        args = [(equal_nan, d, e) for d, e in zip(plan.drop, plan.extra_counts, strict=True)]
        out.append(_per_rank(sorted_, _counts, plan.counts, np.int64, *args))
    return out


def _unique_on_one(a, axis, flags, equal_nan):
    """numpy's ``unique`` along ``axis`` on rank 0's worker (the array gathered there)."""
    whole = a.resplit(None) if a.split is not None else a
    x = whole.to_dask()
    block = x.to_delayed().ravel()[0]  # the one chunk
    client = a.comm.client
    future = client.compute(
        dask.delayed(np.unique)(
            block,
            return_index=flags[0],
            return_inverse=flags[1],
            return_counts=flags[2],
            axis=axis,
            equal_nan=equal_nan,
        ),
        workers=[a.comm.workers[0]],
    )
    shapes = client.submit(
        lambda res: [np.shape(r) for r in (res if isinstance(res, tuple) else (res,))], future
    ).result()
    outs = []
    dtypes = [a.dtype] + [np.dtype(np.int64)] * (len(shapes) - 1)
    for i, (shp, dt) in enumerate(zip(shapes, dtypes, strict=True)):
        part = (
            dask.delayed(operator.getitem)(future, i) if len(shapes) > 1 else dask.delayed(future)
        )
        outs.append(_dndarray.from_dask(da.from_delayed(part, shp, dtype=dt), None, a.comm))
    return outs


def unique(
    a,
    return_index=False,
    return_inverse=False,
    return_counts=False,
    axis=None,
    *,
    equal_nan=True,
    sorted=True,
):
    """The sorted unique values of ``a``, as :func:`numpy.unique`.

    With ``axis=None`` (the default) the values are flattened and the work is
    distributed (see the module docs): the unique values, the first indices
    and the counts are split 0 with counts that follow the data; the inverse
    has ``a``'s shape and layout. With ``axis=`` the array is gathered onto
    rank 0's worker and numpy runs there (results ``split=None``).

    Parameters
    ----------
    a : DNDarray
        Boolean, integer or real data.
    return_index, return_inverse, return_counts : bool, optional
        Also return the first (flat) index of each value, the group of every
        element, the number of each value.
    axis : int or None, optional
        Unique subarrays along ``axis``.
    equal_nan : bool, optional
        Count all NaNs as one value (numpy's default).
    sorted : bool, optional
        Heat's and numpy's flag; the result is always sorted.

    Returns
    -------
    DNDarray or tuple of DNDarray

    Examples
    --------
    >>> import dndask as ht
    >>> values, counts = ht.unique(ht.array([3, 1, 3, 2, 3], split=0), return_counts=True)
    >>> values.numpy().tolist(), counts.numpy().tolist()
    ([1, 2, 3], [1, 1, 3])
    """
    a = _checks.check_sortable(a, "unique")
    flags = tuple(
        _checks.check_bool(v, n)
        for v, n in (
            (return_index, "return_index"),
            (return_inverse, "return_inverse"),
            (return_counts, "return_counts"),
        )
    )
    equal_nan = _checks.check_bool(equal_nan, "equal_nan")
    _checks.check_bool(sorted, "sorted")
    axis = _checks.sort_axis(axis, a)
    # The values and counts of a device array are found where its chunks live (plain runs).
    # First indices and the inverse need runs with keys, structured records, which CuPy
    # has no dtype for, and ``axis=`` runs numpy's unique: those go through host memory
    # explicitly (one task per chunk each way, on its rank).
    if axis is None:
        out = _unique_flat(a if not (flags[0] or flags[1]) else a.cpu(), *flags, equal_nan)
    else:
        out = _unique_on_one(a.cpu(), axis, flags, equal_nan)
    out = [o._on_device(a.device) for o in out]
    return out[0] if len(out) == 1 else tuple(out)


def unique_values(x, /):
    """The array API's ``unique_values``: :func:`unique` of ``x``."""
    return unique(x)


def unique_counts(x, /) -> UniqueCountsResult:
    """The array API's ``unique_counts``: ``(values, counts)``."""
    return UniqueCountsResult(*unique(x, return_counts=True))


def unique_inverse(x, /) -> UniqueInverseResult:
    """The array API's ``unique_inverse``: ``(values, inverse_indices)`` (shaped as ``x``)."""
    return UniqueInverseResult(*unique(x, return_inverse=True))


def unique_all(x, /) -> UniqueAllResult:
    """The array API's ``unique_all``: ``(values, indices, inverse_indices, counts)``."""
    return UniqueAllResult(*unique(x, return_index=True, return_inverse=True, return_counts=True))
