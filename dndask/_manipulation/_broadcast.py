"""Broadcasting, stacking shorthands and axis flips built on the other manipulations.

``broadcast_to`` keeps the split on the same (shifted) axis unless that axis is the
one being broadcast, in which case the result is split along it and rebalanced.
``column_stack``/``row_stack`` are :func:`concatenate`/``vstack``; ``fliplr`` and
``flipud`` are :func:`flip` along axis 1 and 0 (their splits follow those).
"""

from __future__ import annotations

import dask.array as da
import numpy as np

from .. import _dndarray, _layout
from . import _checks
from ._axes import expand_dims
from ._join import concatenate, vstack
from ._reorder import flip


def broadcast_to(x: _dndarray.DNDarray, shape) -> _dndarray.DNDarray:
    """``x`` broadcast to ``shape``, as :func:`numpy.broadcast_to` (a copy, not a view).

    >>> import dndask as ht
    >>> ht.broadcast_to(ht.arange(3, split=0), (2, 3)).split
    1
    """
    _checks.check_dndarray(x, "x")
    shape = _layout.normalize_shape(shape)
    try:
        np.broadcast_shapes(x.shape, shape)
    except ValueError:
        raise ValueError(f"`x` of shape {x.shape} cannot be broadcast to `shape` {shape}") from None
    if len(shape) < x.ndim or np.broadcast_shapes(x.shape, shape) != shape:
        raise ValueError(f"`x` of shape {x.shape} cannot be broadcast to `shape` {shape}")
    split = None if x.split is None else x.split + len(shape) - x.ndim
    out = da.broadcast_to(x.to_dask(), shape)
    return _dndarray.from_dask(out, split, x.comm, parents=(x,))


def broadcast_arrays(*arrays: _dndarray.DNDarray) -> list:
    """The arrays broadcast against each other, as :func:`numpy.broadcast_arrays`.

    >>> import dndask as ht
    >>> [a.shape for a in ht.broadcast_arrays(ht.zeros((3, 1)), ht.zeros((4,), split=0))]
    [(3, 4), (3, 4)]
    """
    for i, a in enumerate(arrays):
        _checks.check_dndarray(a, f"arrays[{i}]")
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        shapes = ", ".join(str(a.shape) for a in arrays)
        raise ValueError(f"`arrays` of shapes {shapes} cannot be broadcast together") from None
    return [broadcast_to(a, shape) for a in arrays]


def column_stack(arrays) -> _dndarray.DNDarray:
    """Stack 1-D arrays as columns (2-D ones as they are), as :func:`numpy.column_stack`.

    >>> import dndask as ht
    >>> ht.column_stack([ht.arange(2, split=0), ht.arange(2, split=0)]).numpy().tolist()
    [[0, 0], [1, 1]]
    """
    if not isinstance(arrays, (list, tuple)) or not arrays:
        raise TypeError("`arrays` of `column_stack` must be a non-empty list or tuple of DNDarrays")
    cols = []
    for i, a in enumerate(arrays):
        _checks.check_dndarray(a, f"arrays[{i}]")
        if a.ndim > 2:
            raise ValueError(f"`arrays[{i}]` of `column_stack` must be 1-D or 2-D, got {a.ndim}-D")
        cols.append(expand_dims(a, 1) if a.ndim == 1 else a)
    return concatenate(cols, axis=1)


def row_stack(arrays) -> _dndarray.DNDarray:
    """Stack arrays as rows: :func:`vstack`.

    >>> import dndask as ht
    >>> ht.row_stack([ht.arange(2), ht.arange(2)]).shape
    (2, 2)
    """
    return vstack(arrays)


def fliplr(a: _dndarray.DNDarray) -> _dndarray.DNDarray:
    """Reverse the columns (axis 1), as :func:`numpy.fliplr`.

    >>> import dndask as ht
    >>> ht.fliplr(ht.arange(4, split=0).reshape((2, 2))).numpy().tolist()
    [[1, 0], [3, 2]]
    """
    _checks.check_dndarray(a)
    if a.ndim < 2:
        raise ValueError(f"`a` of `fliplr` must have at least 2 dimensions, got {a.ndim}")
    return flip(a, 1)


def flipud(a: _dndarray.DNDarray) -> _dndarray.DNDarray:
    """Reverse the rows (axis 0), as :func:`numpy.flipud`.

    >>> import dndask as ht
    >>> ht.flipud(ht.arange(3, split=0)).numpy().tolist()
    [2, 1, 0]
    """
    _checks.check_dndarray(a)
    if a.ndim < 1:
        raise ValueError("`a` of `flipud` must have at least 1 dimension")
    return flip(a, 0)
