"""The functions indexing tasks run on chunks, and :func:`run_fetch`, which runs a fetch plan
on in-memory chunks the same way (used to test plans).

Chunks are numpy or device (CuPy) arrays; host index arrays of a key, an order or an assigned
value are copied into the chunk's namespace explicitly (``xp.asarray``) before use."""

from __future__ import annotations

import numpy as np

from .. import _xp
from .._graph import empty
from ._keys import MASK
from ._plan import FetchPlan


def _in(xp, value):
    """``value`` in the array module ``xp``: host index arrays are copied there explicitly."""
    return xp.asarray(value) if isinstance(value, np.ndarray) and xp is not np else value


def _fill(key: tuple, mask, xp=np) -> tuple:
    if mask is None:
        return tuple(_in(xp, k) for k in key)
    return tuple(mask if isinstance(k, str) and k == MASK else _in(xp, k) for k in key)


def pick(chunk: np.ndarray, key: tuple, mask=None) -> np.ndarray:
    """``chunk[key]``, the mask piece put in for :data:`MASK`."""
    return chunk[_fill(key, mask, _xp.namespace_of(chunk))]


def take(chunk: np.ndarray, key: tuple, shape: tuple[int, ...], mask=None) -> np.ndarray:
    """``chunk[key]`` reshaped to ``shape``."""
    out = pick(chunk, key, mask)
    return _xp.namespace_of(chunk).asarray(out).reshape(shape)


def join(parts: list, axis: int | None, order, shape: tuple[int, ...]) -> np.ndarray:
    """Join pieces along ``axis``, reorder them along it, reshape to ``shape``."""
    xp = _xp.namespace_of(parts[0])
    out = _xp.concatenate(parts, axis)
    if order is not None:
        out = xp.take(out, _in(xp, order), axis=axis)
    return xp.asarray(out).reshape(shape)


def assign(chunk: np.ndarray, key: tuple, value, mask=None) -> np.ndarray:
    """A copy of ``chunk`` with ``value`` assigned at ``key`` (inputs are never mutated)."""
    xp = _xp.namespace_of(chunk)
    out = chunk.copy()
    out[_fill(key, mask, xp)] = _in(xp, value)
    return out


def run_fetch(plan: FetchPlan, chunks: list, dtype, masks=None) -> np.ndarray:
    """Execute ``plan`` on in-memory chunks (what the tasks do; used to test plans)."""
    if not plan.pieces:
        return empty(plan.shape, dtype)
    parts = [pick(chunks[s], k, None if masks is None else masks[s]) for s, k in plan.pieces]
    return join(parts, plan.axis, plan.order, plan.shape)
