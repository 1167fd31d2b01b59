"""The Dask side's inputs: a DNDarray's values as a plain dask array of Dask's own."""

from __future__ import annotations

import dask
import dask.array as da
import distributed
import numpy as np

import dndask as ht


def own_copy(a: ht.DNDarray) -> da.Array:
    """``a``'s values and chunks as a dask array under keys of Dask's own, persisted by Dask.

    A graph built on ``a.to_dask()`` holds the DNDarray's layers, which dndask submits
    unfused (:func:`dndask._compute.array_optimize`); a copy under Dask's own keys gets
    Dask's optimizations (blockwise fusion included), as a Dask user's array would.
    Each chunk is copied where it is; Dask then places the copies as it likes.
    """
    (copy,) = persisted(a.to_dask().map_blocks(np.copy, dtype=a.dtype))
    return copy


def persisted(*arrays: da.Array) -> tuple:
    """``dask.persist`` and wait until every chunk is in memory (a user's idiom)."""
    out = dask.persist(*arrays)
    distributed.wait(out)
    return out
