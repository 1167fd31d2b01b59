"""Task-graph builders: a product's blocks from its plan, and the layer helpers TSQR shares.

:func:`_product` is the engine behind every product: it asks the pure planner
(:mod:`._plan`) for a plan, re-lays out the operands as the plan needs them and
builds one layer of tasks, ``"outer"`` (one task per result block) or ``"inner"``
(one partial product per contributing rank, then a reduce-scatter or a tree sum).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable

import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from .. import _dndarray, _graph, _layout, _ops, _xp
from .._compat import List, SliceTask, Task, TaskRef, new_array
from .._distribution import relayout
from .._layout import Distribution
from ._plan import Layout, Need, ProductSpec, plan_product


def _layout_of(x: _dndarray.DNDarray) -> Layout:
    return Layout(x.shape, x.split, x.distribution.counts, x.dtype.itemsize)


def _wrap(name: str, dsk: dict, deps: list, shape, split, counts, dtype, comm, parents, task_ranks):
    """The layer ``dsk`` as a DNDarray, with its tasks' ranks and its ``parents``' task ranks."""
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=deps)
    chunks = _layout.chunks_for(shape, split, counts)
    like = parents[0] if parents else None
    x = new_array(graph, name, chunks, _graph.meta_of(dtype, len(shape), like=like))
    out = _dndarray.from_dask(x, split, comm, parents=parents)
    out._task_ranks.update(task_ranks)
    return out


def _joined(part, axis: int | None) -> np.ndarray:
    """A block, or the whole operand from the list of its chunks."""
    if not isinstance(part, list):
        return part
    return _xp.concatenate(part, axis)


def _block_product(fn: Callable, a, a_axis, b, b_axis, dtype) -> np.ndarray:
    out = fn(_joined(a, a_axis), _joined(b, b_axis))
    return _xp.namespace_of(out).asarray(out).astype(dtype, copy=False)


def _zeros(shape: tuple[int, ...], dtype, like=None) -> np.ndarray:
    """Zeros of ``shape``: numpy's, or in the namespace of the meta ``like``."""
    return (np if like is None else _xp.namespace_of(like)).zeros(shape, dtype=dtype)


def _sum_parts(parts: list, dtype) -> np.ndarray:
    out = _xp.namespace_of(parts[0]).array(parts[0], dtype=dtype, copy=True)
    for part in parts[1:]:
        out += part
    return out


def _piece(x: _dndarray.DNDarray, need: Need, rank: int):
    """The task argument standing for what ``rank`` needs of ``x``, and its join axis."""
    arr = x.to_dask()
    if need.axis is not None:
        return TaskRef(_graph.chunk_key(arr, need.axis, rank)), None
    if x.split is None:
        return List(TaskRef(_graph.chunk_key(arr, None, 0))), None
    ranks = [r for r, c in enumerate(x.distribution.counts) if c] or [0]
    return List(*(TaskRef(_graph.chunk_key(arr, x.split, r)) for r in ranks)), x.split


def _block_shape(out_shape, split, counts, rank) -> tuple[int, ...]:
    return tuple(counts[rank] if axis == split else s for axis, s in enumerate(out_shape))


def _outer_graph(name, fn, a, b, plan, out_shape, dtype, size):
    dsk = {}
    like = _graph.meta_of(dtype, len(out_shape), like=a)
    for r in range(size if plan.split is not None else 1):
        key = (name, *_graph.block_index(plan.split, len(out_shape), r))
        shape = _block_shape(out_shape, plan.split, plan.counts, r)
        if math.prod(shape) == 0:
            dsk[key] = Task(key, _zeros, shape, dtype, like)
            continue
        a_arg, a_axis = _piece(a, plan.a, r)
        b_arg, b_axis = _piece(b, plan.b, r)
        dsk[key] = Task(key, _block_product, fn, a_arg, a_axis, b_arg, b_axis, dtype)
    return dsk, {}


def _tree_sum(dsk: dict, name: str, keys: list, out_key: tuple, dtype) -> None:
    """Sum the partials pairwise; the last sum is ``out_key`` (rank 0's chunk)."""
    level = 0
    while len(keys) > 2:
        paired = []
        for i in range(0, len(keys), 2):
            group = keys[i : i + 2]
            if len(group) == 1:
                paired.append(group[0])
                continue
            key = (f"{name}-sum", level, i // 2)
            dsk[key] = Task(key, _sum_parts, List(*(TaskRef(k) for k in group)), dtype)
            paired.append(key)
        keys, level = paired, level + 1
    dsk[out_key] = Task(out_key, _sum_parts, List(*(TaskRef(k) for k in keys)), dtype)


def _inner_graph(name, fn, a, b, plan, out_shape, dtype, size):
    dsk, task_ranks, partials = {}, {}, {}
    for r in plan.contributors:
        key = (f"{name}-partial", r)
        a_arg, _ = _piece(a, plan.a, r)
        b_arg, _ = _piece(b, plan.b, r)
        dsk[key] = Task(key, _block_product, fn, a_arg, None, b_arg, None, dtype)
        task_ranks[key] = r
        partials[r] = key
    ndim = len(out_shape)
    like = _graph.meta_of(dtype, ndim, like=a)
    if plan.split is None:
        _tree_sum(dsk, name, list(partials.values()), (name, *(0,) * ndim), dtype)
        return dsk, task_ranks
    starts = _layout.displacements(plan.counts)
    for c in range(size):
        key = (name, *_graph.block_index(plan.split, ndim, c))
        shape = _block_shape(out_shape, plan.split, plan.counts, c)
        if math.prod(shape) == 0:
            dsk[key] = Task(key, _zeros, shape, dtype, like)
            continue
        index = tuple(
            slice(starts[c], starts[c] + plan.counts[c]) if axis == plan.split else slice(None)
            for axis in range(ndim)
        )
        pieces = []
        for r, partial in partials.items():
            piece = (f"{name}-piece", r, c)
            # sliced where the partial is, so only this block travels to rank c
            dsk[piece] = SliceTask(piece, operator.getitem, TaskRef(partial), index)
            task_ranks[piece] = r
            pieces.append(TaskRef(piece))
        dsk[key] = Task(key, _sum_parts, List(*pieces), dtype)
    return dsk, task_ranks


def _result_dtype(fn: Callable, a, b) -> np.dtype:
    dummy_a = np.ones((1,) * a.ndim, dtype=a.dtype)
    dummy_b = np.ones((1,) * b.ndim, dtype=b.dtype)
    return np.asarray(fn(dummy_a, dummy_b)).dtype


def _product(fname: str, fn: Callable, a, b, spec: ProductSpec, label) -> _dndarray.DNDarray:
    """Plan, re-lay out the operands and build the product's graph."""
    comm = a.comm
    _ops.check_one_device((a, b), fname)  # before any graph: no implicit transfer
    dtype = _result_dtype(fn, a, b)
    plan = plan_product(spec, _layout_of(a), _layout_of(b), label, comm.size, dtype.itemsize)
    # each operand laid out as the plan needs it (a whole need leaves it where it is)
    a2, b2 = (
        x if need.axis is None else relayout(x, Distribution(need.axis, need.counts, comm))
        for x, need in ((a, plan.a), (b, plan.b))
    )
    out_shape = tuple(spec.sizes[lab] for lab in spec.out_labels)
    name = f"{fname}-{tokenize(a2.to_dask().name, b2.to_dask().name, fn, plan, spec)}"
    build = _outer_graph if plan.kind == "outer" else _inner_graph
    dsk, task_ranks = build(name, fn, a2, b2, plan, out_shape, dtype, comm.size)
    deps = [a2.to_dask()] if a2 is b2 else [a2.to_dask(), b2.to_dask()]
    return _wrap(
        name, dsk, deps, out_shape, plan.split, plan.counts, dtype, comm, (a2, b2), task_ranks
    )
