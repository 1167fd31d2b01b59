"""Operations on DNDarrays: align the operands' distributions, run dask, re-wrap.

Heat's rule for operands with different splits: the result takes the split
of the first operand that is split, and the other operands are resplit and
redistributed to match it, so every result keeps the DNDarray invariant.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import dask.array as da
import numpy as np
import torch
from dask.base import tokenize

from . import _dndarray, _layout, _types
from ._torch import from_torch


def _describe(x) -> str:
    if isinstance(x, _dndarray.DNDarray):
        return f"DNDarray(shape={x.shape}, split={x.split})"
    return f"{type(x).__name__}(shape={np.shape(x)})"


def align(values: tuple, name: str):
    """The operands as dask/numpy values laid out like the reference operand."""
    dnds = [v for v in values if isinstance(v, _dndarray.DNDarray)]
    ref = next((v for v in dnds if v.split is not None), dnds[0])
    for v in dnds:
        if v.comm != ref.comm:
            raise ValueError(
                f"operands of `{name}` must share a comm, got {v.comm!r} and {ref.comm!r}"
            )
    shapes = [np.shape(v) if not isinstance(v, _dndarray.DNDarray) else v.shape for v in values]
    try:
        out_shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(
            f"operands of `{name}` could not be broadcast together: "
            + ", ".join(_describe(v) for v in values)
        ) from None
    ndim = len(out_shape)
    split = None if ref.split is None else ref.split + ndim - ref.ndim
    out, parents = [], []
    for v in values:
        if isinstance(v, torch.Tensor):
            v = from_torch(v)
        if isinstance(v, _dndarray.DNDarray):
            v = _match(v, ref, split, ndim)
            parents.append(v)
            out.append(v.to_dask())
        else:
            out.append(v)
    return out, split, ref.comm, tuple(parents)


def _match(v, ref, split: int | None, ndim: int):
    """``v`` resplit/redistributed so its chunks line up with ``ref``'s in the result."""
    if v is ref or split is None:
        return v
    axis = split - (ndim - v.ndim)
    if axis < 0 or v.shape[axis] != ref.shape[ref.split]:
        # ``v`` is broadcast along the split axis: every rank needs all of it.
        return v.resplit(None)
    if v.split != axis:
        v = v.resplit(axis)
    if v.lshape_map[:, axis].tolist() != ref.lshape_map[:, ref.split].tolist():
        target = v.lshape_map
        target[:, axis] = ref.lshape_map[:, ref.split]
        v = v.redistribute(target_map=target)
    return v


def elementwise(fn: Callable, *values, name: str) -> _dndarray.DNDarray:
    """Apply ``fn`` to dask versions of ``values`` (at least one a DNDarray)."""
    arrays, split, comm, parents = align(values, name)
    return _dndarray.from_dask(fn(*arrays), split, comm, parents)


def binary(op: Callable, left, right) -> _dndarray.DNDarray:
    """A binary operator; NotImplemented for operands dndask does not handle."""
    for v in (left, right):
        if not isinstance(v, (_dndarray.DNDarray, np.ndarray, torch.Tensor)) and not (
            _types.is_scalar(v)
        ):
            return NotImplemented
    return elementwise(op, left, right, name=op.__name__)


def inplace(op: Callable, target: _dndarray.DNDarray, other) -> _dndarray.DNDarray:
    """``target op= other``: checked first, then ``target``'s graph is replaced."""
    result = binary(op, target, other)
    if result is NotImplemented:
        return NotImplemented
    if result.shape != target.shape:
        raise ValueError(
            f"in-place `{op.__name__}` cannot change the shape {target.shape}, "
            f"got {_describe(other)}"
        )
    if not np.can_cast(result.dtype, target.dtype, "same_kind"):
        raise TypeError(
            f"in-place `{op.__name__}` cannot cast the result from {result.dtype} to {target.dtype}"
        )
    if result.split != target.split:
        result = result.resplit(target.split)
    if result.dtype != target.dtype:
        result = result.astype(target.dtype)
    return target._set(result.to_dask(), target.split, result._lineage())


def _without_empty_ranks(a: _dndarray.DNDarray):
    """``a``'s dask array minus the empty chunks of its split axis (about to be reduced).

    Dask's min/max/mean trip over zero-size chunks; dropping them only
    rewires the graph (no data moves), and the reduced axis disappears anyway.
    """
    x = a.to_dask()
    keep = [r for r, c in enumerate(x.chunks[a.split]) if c] or [0]
    if len(keep) == len(x.chunks[a.split]):
        return x
    index = [slice(None)] * x.ndim
    blocks = []
    for r in keep:
        index[a.split] = r
        blocks.append(x.blocks[tuple(index)])
    return blocks[0] if len(blocks) == 1 else da.concatenate(blocks, axis=a.split)


def _local_reduction(np_fn: Callable, x, axes, keepdims: bool, kwargs: dict):
    """Reduce axes that each chunk holds whole: one task per rank, no combine step."""
    local = functools.partial(np_fn, axis=axes, keepdims=keepdims, **kwargs)
    dtype = np.asarray(local(np.ones((1,) * x.ndim, dtype=x.dtype))).dtype
    chunks = [
        ((1,) * len(c) if keepdims else None) if axis in axes else c
        for axis, c in enumerate(x.chunks)
    ]
    chunks = tuple(c for c in chunks if c is not None)
    return da.map_blocks(
        local,
        x,
        chunks=chunks,
        drop_axis=[] if keepdims else list(axes),
        dtype=dtype,
        meta=np.empty((0,) * len(chunks), dtype=dtype),
        name=f"{np_fn.__name__}-local-{tokenize(x.name, axes, keepdims, kwargs)}",
    )


def reduce(
    np_fn: Callable, dask_fn: Callable, a: _dndarray.DNDarray, axis, keepdims: bool, **kwargs
):
    """A reduction; the result's split follows the reduced axes.

    Axes other than ``split`` are whole in every chunk, so they reduce
    locally on each rank; a reduction over ``split`` uses Dask's tree reduction.
    """
    if not isinstance(keepdims, bool):
        raise TypeError(f"`keepdims` must be a bool, got {type(keepdims).__name__}")
    axes = _layout.normalize_axes(axis, a.ndim)
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    if a.split is None or a.split not in axes:
        result = _local_reduction(np_fn, a.to_dask(), axes, keepdims, kwargs)
    else:
        result = dask_fn(_without_empty_ranks(a), axis=axes, keepdims=keepdims, **kwargs)
    split = _layout.reduced_split(a.split, axes, keepdims)
    return _dndarray.from_dask(result, split, a.comm, parents=(a,))
