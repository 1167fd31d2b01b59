"""The chunk functions the sorting graphs run on the workers (numpy in, numpy out).

:func:`lane_order` also runs on device chunks, in the chunk's own namespace.

A *run* is one rank's values sorted by ``(value, key)``: a plain array when
ties need no telling apart (keys implicit, see :mod:`._plan`), or a *record*
array with fields ``v`` (value) and ``k`` (the int64 key) when the result needs
global indices or numpy's stable order.
"""

from __future__ import annotations

import numpy as np

from .. import _xp
from . import _plan

__all__ = [
    "RECORD_KEY",
    "RECORD_VALUE",
    "cuts_of",
    "field",
    "global_flat_index",
    "lane_order",
    "local_run",
    "merge",
    "records",
    "samples_of",
    "values_of",
]

RECORD_VALUE = "v"
RECORD_KEY = "k"


def records(values: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """A record array of ``values`` and their int64 ``keys``."""
    out = np.empty(values.shape, dtype=[(RECORD_VALUE, values.dtype), (RECORD_KEY, np.int64)])
    out[RECORD_VALUE] = values
    out[RECORD_KEY] = keys
    return out


def values_of(run: np.ndarray) -> np.ndarray:
    return run[RECORD_VALUE] if run.dtype.names else run


def _keys_of(run: np.ndarray) -> np.ndarray | None:
    return run[RECORD_KEY] if run.dtype.names else None


def field(run: np.ndarray, name: str, negate: bool = False) -> np.ndarray:
    """One field of a record run as its own contiguous array (``-k`` if ``negate``)."""
    out = np.ascontiguousarray(run[name])
    return -out if negate else out


def global_flat_index(offsets: tuple, lshape: tuple, gshape: tuple, xp=np) -> np.ndarray:
    """The global C-order flat index of every element of a chunk, in the chunk's C order.

    Made in the array module ``xp`` (a device chunk's, to index it where it lives).
    """
    out = xp.zeros(lshape, dtype=np.int64)
    stride = 1
    for axis in reversed(range(len(gshape))):
        shape = [1] * len(gshape)
        shape[axis] = lshape[axis]
        out += (xp.arange(lshape[axis], dtype=np.int64) + offsets[axis]).reshape(shape) * stride
        stride *= gshape[axis]
    return out.reshape(-1)


def local_run(chunk: np.ndarray, offsets, gshape, with_keys: bool, descending: bool):
    """A rank's sorted run of its (flattened) chunk.

    Without keys a plain ascending sort, in the chunk's namespace (a device chunk's run
    stays on the device); with keys the records sorted by ``(value, key)``, ``key`` the
    global flat index (negated when descending, so that reversing the merged result keeps
    ties in index order). Records are numpy's only (CuPy has no structured dtype).
    """
    if not with_keys:
        return _xp.namespace_of(chunk).sort(chunk.reshape(-1))
    values = np.ravel(chunk)
    keys = global_flat_index(tuple(offsets), chunk.shape, tuple(gshape))
    if descending:
        keys = -keys
    order = np.lexsort((keys, values))
    return records(values[order], keys[order])


def samples_of(run: np.ndarray, offset: int, ranks: int):
    """A rank's regular samples: ``(values, keys, weight of each sample)``.

    They go to the driver, which chooses the splitters from them: the few samples of a
    device run are copied to host explicitly.
    """
    pos = _plan.sample_positions(run.size, ranks)
    keys = _keys_of(run)
    sample_keys = (pos + offset) if keys is None else keys[pos]
    weight = run.size / pos.size if pos.size else 0.0
    samples = np.array(_xp.to_host(values_of(run)[pos]))
    return samples, np.asarray(sample_keys, dtype=np.int64), weight


def cuts_of(run: np.ndarray, offset: int, split_values, split_keys) -> np.ndarray:
    """Where the splitters cut a sorted run (``P + 1`` ints, for the driver)."""
    xp = _xp.namespace_of(run)
    if xp is np:
        return _plan.cut_positions(values_of(run), _keys_of(run), offset, split_values, split_keys)
    # a device run (no keys): the searches run where it lives, only the bounds come to host
    bounds = xp.asarray(np.asarray(split_values, dtype=run.dtype))
    low = _xp.to_host(xp.searchsorted(run, bounds, side="left"))
    high = _xp.to_host(xp.searchsorted(run, bounds, side="right"))
    return _plan.implicit_cuts(np.asarray(low), np.asarray(high), run.size, offset, split_keys)


def merge(pieces: list, descending: bool, sort: bool, dtype: np.dtype, device: str = "cpu"):
    """A destination rank's result: its pieces joined (and sorted, and reversed).

    Plain runs are joined in their namespace; a rank without pieces gets an empty chunk
    on ``device`` (the runs' device).
    """
    if not pieces:
        return _xp.backend(device).module.empty(0, dtype=dtype)
    xp = _xp.namespace_of(pieces[0])
    out = xp.concatenate(pieces) if len(pieces) > 1 else pieces[0].copy()
    if sort:
        if out.dtype.names:
            out = out[np.lexsort((out[RECORD_KEY], out[RECORD_VALUE]))]
        else:
            out.sort()
    return out[::-1].copy() if descending else out


def lane_order(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable sorting indices of every lane of ``x`` along ``axis``.

    Descending order is numpy's stable ascending order of the reversed lane,
    reversed: values from largest (NaN first) to smallest, ties in index order.
    ``x`` may be a device chunk: the indices are computed in its namespace.
    """
    xp = _xp.namespace_of(x)
    if not descending:
        return stable_argsort(x, axis)
    n = x.shape[axis]
    flipped = stable_argsort(xp.flip(x, axis), axis)
    return xp.flip(n - 1 - flipped, axis)


def stable_argsort(x, axis: int):
    """numpy's stable argsort of a chunk in its namespace (CuPy's is always stable, no kind)."""
    xp = _xp.namespace_of(x)
    if xp is np:
        return np.argsort(x, axis=axis, kind="stable")
    return xp.argsort(x, axis=axis)
