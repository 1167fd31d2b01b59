"""The functions indexing tasks run on chunks (numpy in, numpy out), and :func:`run_fetch`,
which runs a fetch plan on in-memory chunks the same way (used to test plans)."""

from __future__ import annotations

import numpy as np

from .._graph import empty
from ._keys import MASK
from ._plan import FetchPlan


def _fill(key: tuple, mask) -> tuple:
    if mask is None:
        return key
    return tuple(mask if isinstance(k, str) and k == MASK else k for k in key)


def pick(chunk: np.ndarray, key: tuple, mask=None) -> np.ndarray:
    """``chunk[key]``, the mask piece put in for :data:`MASK`."""
    return chunk[_fill(key, mask)]


def take(chunk: np.ndarray, key: tuple, shape: tuple[int, ...], mask=None) -> np.ndarray:
    """``chunk[key]`` reshaped to ``shape``."""
    return np.asarray(pick(chunk, key, mask)).reshape(shape)


def join(parts: list, axis: int | None, order, shape: tuple[int, ...]) -> np.ndarray:
    """Join pieces along ``axis``, reorder them along it, reshape to ``shape``."""
    out = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=axis)
    if order is not None:
        out = np.take(out, order, axis=axis)
    return np.asarray(out).reshape(shape)


def assign(chunk: np.ndarray, key: tuple, value, mask=None) -> np.ndarray:
    """A copy of ``chunk`` with ``value`` assigned at ``key`` (inputs are never mutated)."""
    out = chunk.copy()
    out[_fill(key, mask)] = value
    return out


def run_fetch(plan: FetchPlan, chunks: list, dtype, masks=None) -> np.ndarray:
    """Execute ``plan`` on in-memory chunks (what the tasks do; used to test plans)."""
    if not plan.pieces:
        return empty(plan.shape, dtype)
    parts = [pick(chunks[s], k, None if masks is None else masks[s]) for s, k in plan.pieces]
    return join(parts, plan.axis, plan.order, plan.shape)
