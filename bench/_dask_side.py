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


def persist_together(*arrays: ht.DNDarray) -> tuple:
    """Persist several DNDarrays that share a graph in one go, and wait.

    dndask has no public multi-array persist, and ``q.persist_(); r.persist_()``
    would run TSQR's first level twice; so the DNDarrays' dask arrays go to
    ``dask.persist`` together. Their first-level tasks depend on chunks pinned
    to their ranks, so Dask runs them there.
    """
    return persisted(*(a.to_dask() for a in arrays))
