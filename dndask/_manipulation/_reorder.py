"""Reordering along axes: flip and roll.

``flip`` of the split axis mirrors the counts, so rank ``r`` receives the
chunk of rank ``size - 1 - r``; ``roll`` of it keeps the counts and each rank
receives at most two wrapped ranges of rows
(:func:`~dndask._manipulation._plan.plan_roll`). Other axes work locally.
"""

from __future__ import annotations

import numpy as np

from .. import _dndarray, _layout
from . import _checks, _graph, _plan
from ._axes import transpose
from ._reshape import flatten, reshape


def flip(a: _dndarray.DNDarray, axis=None) -> _dndarray.DNDarray:
    """Reverse the order of elements along ``axis`` (all axes by default).

    Along the split axis the counts are reversed: rank ``r`` receives the
    chunk of rank ``size - 1 - r``, flipped, so data moves between mirrored
    ranks only. Other axes flip locally.

    >>> import dndask as ht
    >>> f = ht.arange(7, split=0).flip(0)
    >>> f.numpy().tolist(), f.lshape_map.tolist()
    ([6, 5, 4, 3, 2, 1, 0], [[1], [2], [2], [2]])
    """
    _checks.check_dndarray(a)
    axes = _layout.normalize_axes(axis, a.ndim)
    counts = a.distribution.counts
    size = a.comm.size
    mirrored = a.split is not None and a.split in axes
    return _graph.local(
        [a],
        np.flip,
        a.shape,
        a.split,
        counts[::-1] if mirrored else counts,
        prefix="flip",
        args_of=lambda r: (axes,),
        src_of=(lambda r: size - 1 - r) if mirrored else (lambda r: r),
    )


def _roll_shifts(shift, axis, ndim: int) -> dict[int, int]:
    shifts = _checks.int_tuple(shift, "shift")
    axes = _checks.int_tuple(axis, "axis")
    try:
        pairs = np.broadcast(np.asarray(shifts), np.asarray(axes))
    except ValueError:
        raise ValueError(
            f"`shift` and `axis` must have matching lengths, got {len(shifts)} and {len(axes)}"
        ) from None
    total: dict[int, int] = {}
    for s, ax in pairs:
        ax = _layout.normalize_axis(int(ax), ndim, "axis")
        total[ax] = total.get(ax, 0) + int(s)
    return total


def roll(a: _dndarray.DNDarray, shift, axis=None) -> _dndarray.DNDarray:
    """Roll elements along ``axis``, as :func:`numpy.roll` (tuple shifts and axes too).

    Along the split axis the counts stay; each rank receives the global rows
    it must hold (at most two wrapped ranges) as slices of the source
    chunks. Other axes roll locally. ``axis=None`` rolls the flattened array
    and reshapes it back, keeping the split (balanced along it).

    >>> import dndask as ht
    >>> r = ht.roll(ht.arange(7, split=0), 2)
    >>> r.numpy().tolist(), r.lshape_map.tolist()
    ([5, 6, 0, 1, 2, 3, 4], [[2], [2], [2], [1]])
    """
    _checks.check_dndarray(a)
    if axis is None:
        total = sum(_checks.int_tuple(shift, "shift"))
        rolled = roll(flatten(a), total, 0)
        return reshape(rolled, a.shape, new_split=a.split)
    shifts = _roll_shifts(shift, axis, a.ndim)
    out = a
    if a.split in shifts:
        n = a.shape[a.split]
        step = shifts.pop(a.split) % n if n else 0
        if step:
            plan = _plan.plan_roll(a.distribution.counts, step)
            out = _graph.assemble([a], plan, a.shape, a.split, a.distribution.counts, "roll")
    shifts = {ax: s for ax, s in shifts.items() if a.shape[ax] and s % a.shape[ax]}
    if not shifts:
        return a.copy() if out is a else out
    steps, axes = tuple(shifts.values()), tuple(shifts)
    return _graph.local(
        [out],
        np.roll,
        a.shape,
        a.split,
        out.distribution.counts,
        prefix="roll",
        args_of=lambda r: (steps, axes),
    )


def rot90(m: _dndarray.DNDarray, k: int = 1, axes=(0, 1)) -> _dndarray.DNDarray:
    """Rotate ``m`` by 90 degrees ``k`` times in the plane of ``axes``, as :func:`numpy.rot90`.

    The rotation is a :func:`flip` and a :func:`~dndask.swapaxes`: the split follows its
    axis (an odd ``k`` moves a split on one of ``axes`` to the other), and a flip of
    the split axis mirrors the ranks' counts.

    >>> import dndask as ht
    >>> r = ht.rot90(ht.arange(6, split=0).reshape((2, 3)))
    >>> r.numpy().tolist(), r.split
    ([[2, 5], [1, 4], [0, 3]], 1)
    """
    _checks.check_dndarray(m)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"`k` must be an int, got {type(k).__name__}")
    axes = tuple(axes) if isinstance(axes, (list, tuple)) else axes
    if not isinstance(axes, tuple) or len(axes) != 2:
        raise ValueError(f"`axes` must be two axes, got {axes!r}")
    for ax in axes:
        if isinstance(ax, bool) or not isinstance(ax, (int, np.integer)):
            raise TypeError(f"`axes` must hold ints, got {type(ax).__name__}")
        if not -m.ndim <= ax < m.ndim:
            raise ValueError(f"`axes` must be in [{-m.ndim}, {m.ndim}), got {axes}")
    first, second = (int(ax) % m.ndim for ax in axes)
    if first == second:
        raise ValueError(f"`axes` must be two different axes, got {axes}")
    k = int(k) % 4
    if k == 0:
        return m.copy()
    if k == 2:
        return flip(m, (first, second))
    order = list(range(m.ndim))
    order[first], order[second] = second, first
    if k == 1:
        return transpose(flip(m, second), tuple(order))
    return flip(transpose(m, tuple(order)), second)
