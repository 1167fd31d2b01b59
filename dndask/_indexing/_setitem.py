"""``a[key] = value``: the value checked, the key prepared and planned, then ``a``'s graph
replaced by one where each touched rank assigns its part of the value.

Assignment
----------
``a[key] = value`` replaces ``a``'s graph in place; the chunks keep their
sizes. ``value`` is a scalar, a numpy array, a torch tensor, a list or a
DNDarray, broadcast to the selection as in numpy (leading length-1 axes are
dropped). Rank ``r`` receives only the part of ``value`` that lands in its
chunk: a numpy value is cut in the driver, a DNDarray value is sliced where
its rows live and only the needed rows travel. Ranks the key does not touch
keep their chunk as it is. With repeated indices the last assignment wins,
as in numpy. Everything is checked before ``a`` changes: a value that does
not broadcast to the selection is a ``ValueError``, a value whose dtype cannot
be cast to ``a.dtype`` under numpy's ``same_kind`` rule (the rule of the
in-place operators) a ``TypeError``.
"""

from __future__ import annotations

import dask.array as da
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from .. import _torch
from .._compat import Alias, Task, TaskRef, new_array
from .._graph import block_index, chunk_key
from .._placement import Ranks
from ._graph import fetch_into, no_mask
from ._keys import Key, is_dnd, local_key, the_mask
from ._plan import plan_fetch, result_layout
from ._prepare import Mask, laid_out_mask, normalized
from ._setplan import SetPlan, check_value_shape, plan_setitem, value_key
from ._tasks import assign

_PY_SCALARS = (bool, int, float, complex)


def _value(value, dtype: np.dtype):
    """``value`` as a numpy array or DNDarray, checked to cast to ``dtype`` (same_kind)."""
    if is_dnd(value):
        vdtype = value.dtype
    elif isinstance(value, _PY_SCALARS):
        vdtype = np.result_type(dtype, value)  # Python scalars are weak, as in numpy
        if np.can_cast(vdtype, dtype, "same_kind"):
            try:
                value = np.asarray(value, dtype=dtype)
            except OverflowError:
                raise ValueError(f"`value` {value!r} is out of bounds for {dtype}") from None
    else:
        value = _torch.from_torch(value) if _torch.is_tensor(value) else np.asarray(value)
        if value.dtype.kind not in "biufc":
            raise TypeError(f"`value` must be numeric or boolean, got dtype {value.dtype}")
        vdtype = value.dtype
    if not np.can_cast(vdtype, dtype, "same_kind"):
        raise TypeError(
            f"`value` of dtype {vdtype} cannot be cast to the array's dtype {dtype} "
            "(same_kind rule)"
        )
    return value


def _needs_flat_counts(vshape: tuple[int, ...], shape: tuple[int, ...], dim: int) -> bool:
    """Whether the value varies along selection dimension ``dim`` (so positions matter)."""
    ax = dim - (len(shape) - len(vshape))
    return 0 <= ax < len(vshape) and vshape[ax] > 1


def _set_plan(a, norm: Key, vshape: tuple[int, ...]) -> tuple[SetPlan, Mask | None]:
    """Check the value's shape and plan the assignment; returns ``(plan, mask)``."""
    counts = a.distribution.counts
    if norm.mode != "mask":
        plan = plan_setitem(norm, a.split, counts)
        check_value_shape(vshape, plan.shape)
        return plan, None
    _, it = the_mask(norm)
    mask = laid_out_mask(a, it)
    table = None
    if norm.bshape is not None:  # a numpy mask: its counts are free
        table = mask.table()
    else:
        probe = result_layout(norm._replace(bshape=(-1,)))
        d = probe.dims.index(("adv", 0))
        if _needs_flat_counts(vshape, probe.shape, d):
            table = mask.table()
    plan = plan_setitem(norm, a.split, counts, table)
    check_value_shape(vshape, plan.shape)
    return plan, mask


def setitem(a, key, value) -> None:
    """``a[key] = value`` in place: ``a``'s graph is replaced, its chunks keep their sizes.

    ``value`` (scalar, numpy array, torch tensor, list or DNDarray) is
    broadcast to the selection as in numpy; each rank gets only the part of
    it that lands in its chunk. Everything is checked first: a failed
    assignment leaves ``a`` exactly as it was.

    Parameters
    ----------
    a : DNDarray
        The array to change.
    key : int, slice, Ellipsis, None, array-like, DNDarray or tuple of them
        The index, as numpy reads it.
    value : scalar, array-like or DNDarray
        What to assign; its dtype must cast to ``a.dtype`` (same_kind).

    Examples
    --------
    >>> import dndask as ht
    >>> a = ht.zeros((4, 3), split=0, comm=ht.get_comm().subcomm([0, 1]))
    >>> a[1:3, 0] = ht.array([5.0, 6.0], split=0, comm=a.comm)
    >>> a[a == 0] = -1
    >>> a.numpy().tolist()
    [[-1.0, -1.0, -1.0], [5.0, -1.0, -1.0], [6.0, -1.0, -1.0], [-1.0, -1.0, -1.0]]
    >>> a.lshape_map.tolist()
    [[2, 3], [2, 3]]
    """
    norm = normalized(a, key)
    value = _value(value, a.dtype)
    if is_dnd(value) and value.comm != a.comm:
        raise ValueError(f"`value` must share the array's comm, got {value.comm!r} and {a.comm!r}")
    if is_dnd(value) and value.device != a.device:
        raise ValueError(
            f"`value` must be on the array's device, got {value.device} and {a.device}; "
            "move it with value.cpu() or value.gpu()"
        )
    plan, mask = _set_plan(a, norm, tuple(value.shape))
    if all(t is None for t in plan.targets):
        return
    array, task_ranks = _build_set(a, norm, plan, value, mask)
    a._set(array, a.split, task_ranks)


def _value_arg(dsk, task_ranks, value, vkey: Key, out_key, rank: int, dtype):
    """What rank ``rank``'s assignment task gets: a numpy piece, or a ref to fetched rows."""
    if not is_dnd(value):
        return np.array(value[local_key(vkey.items)])
    fetch = plan_fetch(vkey, value.split, value.distribution.counts)
    key = (f"{out_key[0]}-value", rank)
    fetch_into(dsk, task_ranks, key, rank, (value.to_dask(), value.split), fetch, no_mask, dtype)
    return TaskRef(key)


def _build_set(a, norm: Key, plan: SetPlan, value, mask) -> tuple[da.Array, dict]:
    x = a.to_dask()
    vtoken = value.to_dask().name if is_dnd(value) else value
    mtoken = None if mask is None or mask.array is None else mask.array.to_dask().name
    name = f"setitem-{tokenize(x.name, norm, vtoken, mtoken)}"
    mask_for = no_mask if mask is None else mask.arg
    dsk: dict = {}
    task_ranks: dict = {}
    for r, target in enumerate(plan.targets):
        out_key = (name, *block_index(a.split, x.ndim, r))
        old = chunk_key(x, a.split, r)
        if target is None:
            dsk[out_key] = Alias(out_key, old)
            continue
        local, region = target
        vkey = value_key(tuple(value.shape), plan.shape, region)
        arg = _value_arg(dsk, task_ranks, value, vkey, out_key, r, value.dtype)
        dsk[out_key] = Task(out_key, assign, TaskRef(old), local, arg, mask_for(r))
    deps = [x]
    if is_dnd(value):
        deps.append(value.to_dask())
        task_ranks = Ranks.join(value._task_ranks, task_ranks)
    if mask is not None and mask.array is not None:
        deps.append(mask.array.to_dask())
        task_ranks = Ranks.join(mask.array._task_ranks, task_ranks)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=deps)
    return new_array(graph, name, x.chunks, x), task_ranks
