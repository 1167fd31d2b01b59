"""Repetition: repeat (each element) and tile (the whole array).

``repeat`` along the split axis has every rank repeat its own rows, so no
data moves and the counts scale; ``tile`` along it balances the result and
each rank receives its copies' rows as slices of the source chunks
(:func:`~dndask._manipulation._plan.plan_tile`). Other axes work locally.
"""

from __future__ import annotations

import numpy as np

from .. import _dndarray, _layout, _torch
from . import _checks, _graph, _plan
from ._axes import expand_dims
from ._reshape import flatten


def _repeats(repeats):
    """``repeats`` as an int or a 1-D int64 numpy array (a DNDarray is fetched: small metadata)."""
    if _checks.is_int(repeats):
        value = int(repeats)
        if value < 0:
            raise ValueError(f"`repeats` must be non-negative, got {value}")
        return value
    if isinstance(repeats, _dndarray.DNDarray):
        repeats = repeats.numpy()
    elif _torch.is_tensor(repeats):
        repeats = _torch.from_torch(repeats)
    elif not isinstance(repeats, (np.ndarray, list, tuple)):
        raise TypeError(
            f"`repeats` must be an int or a 1-D array of ints, got {type(repeats).__name__}"
        )
    values = np.asarray(repeats)
    if values.dtype.kind not in "iu" and not (values.size == 0 and values.dtype.kind == "f"):
        raise TypeError(f"`repeats` must hold ints, got {values.dtype}")
    if values.ndim > 1:
        raise ValueError(f"`repeats` must be an int or 1-D, got {values.ndim} dimensions")
    values = values.astype(np.int64).reshape(-1)
    if (values < 0).any():
        raise ValueError(f"`repeats` must be non-negative, got {values.tolist()}")
    return values


def repeat(a: _dndarray.DNDarray, repeats, axis: int | None = None) -> _dndarray.DNDarray:
    """Repeat elements, as :func:`numpy.repeat`.

    ``repeats`` is an int or a 1-D array (one entry per element along
    ``axis``, or a single entry). Along the split axis every rank repeats its
    own rows (with its slice of ``repeats``), so no data moves and the
    counts scale. Other axes repeat locally. ``axis=None`` flattens first:
    the result is split 0 if ``a`` is split, else None.

    >>> import dndask as ht
    >>> r = ht.arange(3, split=0).repeat(2, axis=0)
    >>> r.numpy().tolist(), r.lshape_map.tolist()
    ([0, 0, 1, 1, 2, 2], [[2], [2], [2], [0]])
    """
    _checks.check_dndarray(a)
    reps = _repeats(repeats)
    if axis is None:
        return repeat(flatten(a), reps, 0)
    axis = _layout.normalize_axis(axis, a.ndim, "axis")
    n = a.shape[axis]
    if not isinstance(reps, int):
        if reps.size == 1:
            reps = int(reps[0])
        elif reps.size != n:
            raise ValueError(
                f"`repeats` must have 1 or {n} entries for axis {axis}, got {reps.size}"
            )
    length = n * reps if isinstance(reps, int) else int(reps.sum())
    shape = tuple(length if i == axis else s for i, s in enumerate(a.shape))
    counts = a.distribution.counts
    if a.split != axis:
        return _graph.local(
            [a], np.repeat, shape, a.split, counts, prefix="repeat", args_of=lambda r: (reps, axis)
        )
    new_counts = _plan.repeated_counts(counts, reps)
    displs = _layout.displacements(counts)

    def args(r: int) -> tuple:
        own = reps if isinstance(reps, int) else reps[displs[r] : displs[r] + counts[r]]
        return (own, axis)

    return _graph.local([a], np.repeat, shape, axis, new_counts, prefix="repeat", args_of=args)


def tile(a: _dndarray.DNDarray, reps) -> _dndarray.DNDarray:
    """Repeat the whole array ``reps`` times per axis, as :func:`numpy.tile`.

    With more entries in ``reps`` than ``a.ndim``, ``a`` gains leading axes
    and its split shifts by as many. Along the split axis the result is
    balanced and each rank receives its copies' rows as slices of the source
    chunks; other axes tile locally.

    >>> import dndask as ht
    >>> t = ht.tile(ht.arange(3, split=0), (2, 2))
    >>> t.shape, t.split, t.lshape_map.tolist()
    ((2, 6), 1, [[2, 2], [2, 2], [2, 1], [2, 1]])
    """
    _checks.check_dndarray(a)
    if isinstance(reps, np.ndarray):
        reps = reps.tolist()
    reps = _checks.int_tuple(reps, "reps")
    if any(r < 0 for r in reps):
        raise ValueError(f"`reps` must hold non-negative ints, got {reps}")
    ndim = max(len(reps), a.ndim)
    reps = (1,) * (ndim - len(reps)) + reps
    b = a if a.ndim == ndim else expand_dims(a, tuple(range(ndim - a.ndim)))
    shape = tuple(s * r for s, r in zip(b.shape, reps, strict=True))
    if b.split is None:
        return _graph.local([b], np.tile, shape, None, (), prefix="tile", args_of=lambda r: (reps,))
    split = b.split
    dst, plan = _plan.plan_tile(b.distribution.counts, reps[split], b.comm.size)
    rows = tuple(shape[split] if i == split else s for i, s in enumerate(b.shape))
    out = _graph.assemble([b], plan, rows, split, dst, "tile")
    rest = tuple(1 if i == split else r for i, r in enumerate(reps))
    if all(r == 1 for r in rest):
        return out
    return _graph.local([out], np.tile, shape, split, dst, prefix="tile", args_of=lambda r: (rest,))
