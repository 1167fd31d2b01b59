"""Joining arrays: concatenate, stack, vstack, hstack.

The result takes the split of the first split operand (Heat's rule). Along
a non-split axis the operands are brought to that operand's counts and every
rank joins its own chunks; along the split axis the result is balanced and
only the rows that change owner move (:func:`~dndask._manipulation._plan.plan_concatenation`).
"""

from __future__ import annotations

from collections.abc import Sequence

import dask.array as da
import numpy as np

from .. import _dndarray, _layout, _torch
from .._distribution import relayout
from .._layout import Distribution
from . import _graph, _plan
from ._axes import expand_dims
from ._reshape import flatten, reshape


def _cast(d: _dndarray.DNDarray, dtype) -> _dndarray.DNDarray:
    return d if d.dtype == dtype else d.astype(dtype)


def _operands(arrays, name: str) -> list[_dndarray.DNDarray]:
    """The entries of ``arrays`` as DNDarrays on one comm; numpy/torch ones become split=None."""
    if not isinstance(arrays, (list, tuple)):
        raise TypeError(f"`arrays` must be a list or tuple of arrays, got {type(arrays).__name__}")
    if not arrays:
        raise ValueError(f"`arrays` of `{name}` must hold at least one array, got none")
    first = next((i for i, v in enumerate(arrays) if isinstance(v, _dndarray.DNDarray)), None)
    if first is None:
        raise TypeError(f"`arrays` of `{name}` must hold at least one DNDarray")
    comm = arrays[first].comm
    out = []
    for i, v in enumerate(arrays):
        if isinstance(v, _dndarray.DNDarray):
            if v.comm != comm:
                raise ValueError(
                    f"`arrays` of `{name}` must share one comm, got {comm!r} at {first} "
                    f"and {v.comm!r} at {i}"
                )
            out.append(v)
        elif isinstance(v, np.ndarray) or _torch.is_tensor(v):
            values = _torch.from_torch(v) if _torch.is_tensor(v) else v
            x = da.from_array(values, chunks=tuple(max(s, 1) for s in values.shape))
            out.append(_dndarray.from_dask(x, None, comm))
        else:
            raise TypeError(
                f"`arrays` of `{name}` must hold DNDarrays, numpy arrays or torch tensors, "
                f"got {type(v).__name__} at {i}"
            )
    return out


def _describe(d: _dndarray.DNDarray, index: int) -> str:
    return f"DNDarray(shape={d.shape}, split={d.split}) at {index}"


def _reference(operands: Sequence[_dndarray.DNDarray]) -> _dndarray.DNDarray | None:
    """Heat's rule: the first split operand sets the result's split."""
    return next((d for d in operands if d.split is not None), None)


def _check_join_shapes(operands: Sequence[_dndarray.DNDarray], axis: int, name: str) -> None:
    ref = operands[0]
    for i, d in enumerate(operands):
        if d.ndim != ref.ndim:
            raise ValueError(
                f"`arrays` of `{name}` must have the same number of dimensions, got "
                f"{_describe(ref, 0)} and {_describe(d, i)}"
            )
        if any(
            s != t for k, (s, t) in enumerate(zip(d.shape, ref.shape, strict=True)) if k != axis
        ):
            raise ValueError(
                f"`arrays` of `{name}` must have the same shape except along axis {axis}, got "
                f"{_describe(ref, 0)} and {_describe(d, i)}"
            )


def _concatenate(operands: Sequence[_dndarray.DNDarray], axis: int) -> _dndarray.DNDarray:
    dtype = np.result_type(*(d.dtype for d in operands))
    operands = [_cast(d, dtype) for d in operands]
    shape = list(operands[0].shape)
    shape[axis] = sum(d.shape[axis] for d in operands)
    shape = tuple(shape)
    ref = _reference(operands)
    if ref is None:
        return _graph.local(
            operands, _graph.join, shape, None, (), prefix="concatenate", kwargs={"axis": axis}
        )
    split = ref.split
    if axis != split:
        counts = ref.distribution.counts
        aligned = [relayout(d, Distribution(split, counts, d.comm)) for d in operands]
        return _graph.local(
            aligned, _graph.join, shape, split, counts, prefix="concatenate", kwargs={"axis": axis}
        )
    # along the split axis: a split=None operand is one chunk on rank 0, so it joins as is
    sources = [d if d.split in (None, split) else d.resplit(split) for d in operands]
    counts = [d.distribution.counts if d.split is not None else (d.shape[split],) for d in sources]
    dst, plan = _plan.plan_concatenation(counts, ref.comm.size)
    return _graph.assemble(sources, plan, shape, split, dst, "concatenate")


def concatenate(arrays, axis: int | None = 0) -> _dndarray.DNDarray:
    """Join arrays along an existing axis, as :func:`numpy.concatenate`.

    The result takes the split of the first split operand (Heat's rule; split
    None if none is split); numpy arrays and torch tensors in ``arrays`` join as
    split=None operands. Along a non-split axis the other operands are
    brought to the reference's counts and every rank joins its own chunks
    (the counts stay, no rebalance). Along the split axis the result is
    balanced, and only the rows that change owner move. ``axis=None``
    flattens every operand first.

    >>> import dndask as ht
    >>> c = ht.concatenate([ht.arange(3, split=0), ht.arange(5, split=0)])
    >>> c.numpy().tolist(), c.lshape_map.tolist()
    ([0, 1, 2, 0, 1, 2, 3, 4], [[2], [2], [2], [2]])
    """
    operands = _operands(arrays, "concatenate")
    if axis is None:
        operands = [flatten(d) for d in operands]
        axis = 0
    if any(d.ndim == 0 for d in operands):
        bad = next(i for i, d in enumerate(operands) if d.ndim == 0)
        raise ValueError(
            f"`arrays` of `concatenate` must be at least 1-dimensional, got "
            f"{_describe(operands[bad], bad)}"
        )
    axis = _layout.normalize_axis(axis, operands[0].ndim, "axis")
    _check_join_shapes(operands, axis, "concatenate")
    return _concatenate(operands, axis)


def stack(arrays, axis: int = 0) -> _dndarray.DNDarray:
    """Join arrays of one shape along a new axis, as :func:`numpy.stack`.

    The result takes the split of the first split operand, shifted past the
    new axis; the new axis is never the split, so every rank joins its own
    chunks once the operands share the reference's counts.

    >>> import dndask as ht
    >>> s = ht.stack([ht.arange(4, split=0), ht.arange(4, split=0)], axis=0)
    >>> s.shape, s.split
    ((2, 4), 1)
    """
    operands = _operands(arrays, "stack")
    for i, d in enumerate(operands):
        if d.shape != operands[0].shape:
            raise ValueError(
                "`arrays` of `stack` must all have the same shape, got "
                f"{_describe(operands[0], 0)} and {_describe(d, i)}"
            )
    axis = _layout.normalize_axis(axis, operands[0].ndim + 1, "axis")
    return _concatenate([expand_dims(d, axis) for d in operands], axis)


def vstack(arrays) -> _dndarray.DNDarray:
    """Stack arrays row-wise (1-D arrays become rows), as :func:`numpy.vstack`.

    >>> import dndask as ht
    >>> v = ht.vstack([ht.arange(3, split=0), ht.arange(3, split=0)])
    >>> v.shape, v.split
    ((2, 3), 1)
    """
    operands = _operands(arrays, "vstack")
    operands = [
        d if d.ndim >= 2 else expand_dims(d, 0) if d.ndim == 1 else reshape(d, (1, 1))
        for d in operands
    ]
    _check_join_shapes(operands, 0, "vstack")
    return _concatenate(operands, 0)


def hstack(arrays) -> _dndarray.DNDarray:
    """Stack arrays column-wise (1-D arrays join end to end), as :func:`numpy.hstack`.

    >>> import dndask as ht
    >>> ht.hstack([ht.arange(3, split=0), ht.arange(2)]).numpy().tolist()
    [0, 1, 2, 0, 1]
    """
    operands = _operands(arrays, "hstack")
    operands = [d if d.ndim >= 1 else reshape(d, (1,)) for d in operands]
    axis = 0 if operands[0].ndim == 1 else 1
    _check_join_shapes(operands, axis, "hstack")
    return _concatenate(operands, axis)
