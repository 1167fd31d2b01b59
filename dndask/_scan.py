"""Prefix scans (cumsum, cumprod) along the split axis, as Heat does with an exclusive scan.

Each rank scans its own chunk, sends only its last row (its total) on, and
adds the carry of the ranks before it. Empty ranks pass the carry through.
The chain of carries is ``P`` tiny tasks; no chunk leaves its rank.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import dask.array as da
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from ._compat import new_array
from ._graph import block_index, meta_of


def _last(block: np.ndarray, axis: int) -> np.ndarray | None:
    """The last row of a scanned chunk (its running total), ``None`` if the chunk is empty."""
    if block.shape[axis] == 0:
        return None
    return np.take(block, [block.shape[axis] - 1], axis=axis)


def _carry(combine: Callable, before: np.ndarray | None, total: np.ndarray | None):
    if total is None:
        return before
    if before is None:
        return total
    return combine(before, total)


def _apply(combine: Callable, block: np.ndarray, carry: np.ndarray | None) -> np.ndarray:
    return block if carry is None else combine(block, carry).astype(block.dtype, copy=False)


def split_scan(
    np_fn: Callable, combine: Callable, x: da.Array, axis: int, dtype: np.dtype
) -> tuple[da.Array, dict]:
    """``np_fn`` (e.g. ``np.cumsum``) along ``axis``, which holds one chunk per rank.

    Returns the scanned array (same chunks as ``x``) and the rank each
    helper task runs on.
    """
    ndim, size = x.ndim, len(x.chunks[axis])
    token = tokenize(np_fn.__name__, x.name, axis, dtype)
    prefix = f"{np_fn.__name__}-{token}"
    local, total, carry = f"{prefix}-local", f"{prefix}-total", f"{prefix}-carry"
    scan = functools.partial(np_fn, axis=axis, dtype=dtype)
    dsk: dict = {}
    task_ranks: dict = {}
    for r in range(size):
        dsk[(local, r)] = (scan, (x.name, *block_index(axis, ndim, r)))
        dsk[(total, r)] = (_last, (local, r), axis)
        task_ranks[(local, r)] = task_ranks[(total, r)] = r
        if r:
            before = (carry, r - 1) if r > 1 else None
            dsk[(carry, r)] = (_carry, combine, before, (total, r - 1))
            task_ranks[(carry, r)] = r
        dsk[(prefix, *block_index(axis, ndim, r))] = (
            _apply,
            combine,
            (local, r),
            (carry, r) if r else None,
        )
    graph = HighLevelGraph.from_collections(prefix, dsk, dependencies=[x])
    return new_array(graph, prefix, x.chunks, meta_of(dtype, ndim, like=x)), task_ranks
