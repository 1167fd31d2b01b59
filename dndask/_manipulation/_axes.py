"""Axis permutations and length-one axes: transpose, swapaxes, moveaxis, expand_dims, squeeze.

The split follows its axis and every rank works on its own chunk, so none of
these moves data, except squeezing a length-one split axis (the one rank
holding its row sends the chunk to rank 0).
"""

from __future__ import annotations

import numpy as np

from .. import _dndarray, _layout
from . import _checks, _graph


def transpose(a: _dndarray.DNDarray, axes=None) -> _dndarray.DNDarray:
    """Permute the axes (reversed by default); the split follows its axis. Moves no data.

    >>> import dndask as ht
    >>> b = ht.zeros((2, 3, 4), split=2).transpose((2, 0, 1))
    >>> b.shape, b.split
    ((4, 2, 3), 0)
    """
    _checks.check_dndarray(a)
    if axes is None:
        axes = tuple(reversed(range(a.ndim)))
    else:
        axes = _checks.ordered_axes(axes, a.ndim, "axes")
        if len(axes) != a.ndim:
            raise ValueError(
                f"`axes` must hold {a.ndim} axes for a {a.ndim}-dimensional array, got {len(axes)}"
            )
    split = None if a.split is None else axes.index(a.split)
    shape = tuple(a.shape[i] for i in axes)
    return _graph.local(
        [a],
        np.transpose,
        shape,
        split,
        a.distribution.counts,
        prefix="transpose",
        args_of=lambda r: (axes,),
    )


def swapaxes(a: _dndarray.DNDarray, axis1: int, axis2: int) -> _dndarray.DNDarray:
    """Interchange two axes; the split follows its axis. Moves no data.

    >>> import dndask as ht
    >>> ht.zeros((2, 3), split=0).swapaxes(0, 1).split
    1
    """
    _checks.check_dndarray(a)
    axis1 = _layout.normalize_axis(axis1, a.ndim, "axis1")
    axis2 = _layout.normalize_axis(axis2, a.ndim, "axis2")
    order = list(range(a.ndim))
    order[axis1], order[axis2] = axis2, axis1
    return transpose(a, tuple(order))


def moveaxis(a: _dndarray.DNDarray, source, destination) -> _dndarray.DNDarray:
    """Move axes to new positions (as :func:`numpy.moveaxis`); the split follows. Moves no data.

    >>> import dndask as ht
    >>> b = ht.moveaxis(ht.zeros((2, 3, 4), split=0), 0, -1)
    >>> b.shape, b.split
    ((3, 4, 2), 2)
    """
    _checks.check_dndarray(a)
    source = _checks.ordered_axes(source, a.ndim, "source")
    destination = _checks.ordered_axes(destination, a.ndim, "destination")
    if len(source) != len(destination):
        raise ValueError(
            "`source` and `destination` must hold as many axes, "
            f"got {len(source)} and {len(destination)}"
        )
    order = [i for i in range(a.ndim) if i not in source]
    for dst, src in sorted(zip(destination, source, strict=True)):
        order.insert(dst, src)
    return transpose(a, tuple(order))


# -------------------------------------------------------------- length-one axes
def expand_dims(a: _dndarray.DNDarray, axis) -> _dndarray.DNDarray:
    """Insert length-one axes at ``axis`` (int or tuple); the split shifts. Moves no data.

    >>> import dndask as ht
    >>> b = ht.zeros((2, 3), split=1).expand_dims(0)
    >>> b.shape, b.split
    ((1, 2, 3), 2)
    """
    _checks.check_dndarray(a)
    if axis is None:
        raise TypeError("`axis` must be an int or a tuple of ints, got NoneType")
    ndim = a.ndim + len(_checks.int_tuple(axis, "axis"))
    axes = _checks.ordered_axes(axis, ndim, "axis")
    kept = [i for i in range(ndim) if i not in axes]
    shape = [1] * ndim
    for i, s in zip(kept, a.shape, strict=True):
        shape[i] = s
    split = None if a.split is None else kept[a.split]
    return _graph.local(
        [a],
        np.expand_dims,
        tuple(shape),
        split,
        a.distribution.counts,
        prefix="expand_dims",
        args_of=lambda r: (axes,),
    )


def squeeze(a: _dndarray.DNDarray, axis=None) -> _dndarray.DNDarray:
    """Remove length-one axes (all of them by default); the split shifts.

    Squeezing a length-one split axis gives split=None: the one rank that
    holds its row sends the chunk to rank 0. Any other squeeze moves no data.

    >>> import dndask as ht
    >>> ht.zeros((1, 3, 1), split=1).squeeze().split
    0
    >>> ht.zeros((1, 3), split=0).squeeze().split is None
    True
    """
    _checks.check_dndarray(a)
    if axis is None:
        axes = tuple(i for i, s in enumerate(a.shape) if s == 1)
    else:
        axes = _checks.ordered_axes(axis, a.ndim, "axis")
        for i in axes:
            if a.shape[i] != 1:
                raise ValueError(
                    f"`axis` must name axes of length 1, got axis {i} of length {a.shape[i]}"
                )
    shape = tuple(s for i, s in enumerate(a.shape) if i not in axes)
    if a.split is not None and a.split in axes:
        holder = a.distribution.counts.index(1)
        return _graph.local(
            [a],
            np.squeeze,
            shape,
            None,
            (),
            prefix="squeeze",
            args_of=lambda r: (axes,),
            src_of=lambda r: holder,
        )
    split = None if a.split is None else a.split - sum(1 for i in axes if i < a.split)
    return _graph.local(
        [a],
        np.squeeze,
        shape,
        split,
        a.distribution.counts,
        prefix="squeeze",
        args_of=lambda r: (axes,),
    )
