"""Small builders of Dask arrays whose chunks follow a DNDarray layout."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import dask.array as da
import numpy as np
from dask.array.utils import meta_from_array
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from . import _layout, _xp
from ._abc import DistributedArray
from ._compat import new_array


def block_index(split: int | None, ndim: int, rank: int) -> tuple[int, ...]:
    """The Dask block index of ``rank``'s chunk."""
    return tuple(rank if axis == split else 0 for axis in range(ndim))


def chunk_key(x: da.Array, split: int | None, rank: int) -> tuple:
    """The Dask key of ``rank``'s chunk of ``x`` split along ``split`` (rank 0's for ``None``)."""
    return (x.name, *block_index(split, x.ndim, 0 if split is None else rank))


def empty(lshape, dtype: np.dtype, like=None):
    """An empty chunk of ``lshape``: the chunk of a rank without rows (a task function).

    ``like`` (a meta) names the chunk type; numpy's by default.
    """
    if like is None:
        return np.empty(tuple(lshape), dtype=dtype)
    return _xp.empty_like_meta(like, lshape, dtype)


def meta_of(dtype: np.dtype, ndim: int, like=None):
    """An empty array standing for the chunk type: numpy's, or that of ``like``.

    ``like`` is a DNDarray, a dask array, a chunk or a meta; the result is in its
    namespace (CuPy for GPU chunks), so arrays built from it keep its device.

    >>> meta_of(np.float32, 1)
    array([], dtype=float32)
    """
    if like is None:
        return _xp.meta(dtype, ndim)
    return _xp.namespace_of(chunk_meta(like)).empty((0,) * ndim, dtype=dtype)


def chunk_meta(like):
    """The meta (empty chunk) of a DNDarray or dask array; a chunk or meta as it is."""
    if isinstance(like, DistributedArray):
        like = like.to_dask()
    return meta_from_array(like) if isinstance(like, da.Array) else like


def from_chunk_function(
    prefix: str,
    fn: Callable,
    shape: tuple[int, ...],
    dtype: np.dtype,
    split: int | None,
    counts: tuple[int, ...],
    args: tuple = (),
    meta=None,
    place: tuple = (),
) -> da.Array:
    """A Dask array whose chunk ``r`` is ``fn(offsets, lshape, *args)``.

    ``offsets`` is the chunk's global start on every axis, ``lshape`` its
    shape; ``meta`` (numpy's by default) names the chunk type ``fn`` returns.
    Creation runs on the workers; nothing but ``args`` travels. ``place``
    names where the chunks will live (the comm's workers): it is part of the
    keys, so the same values made for two comms are two sets of tasks, each
    pinned to its own workers, never one set the scheduler already placed.
    """
    chunks = _layout.chunks_for(shape, split, counts)
    name = f"{prefix}-{tokenize(prefix, fn, shape, dtype, chunks, args, place)}"
    starts = [_layout.displacements(c) for c in chunks]
    dsk = {}
    for idx in itertools.product(*(range(len(c)) for c in chunks)):
        offsets = tuple(starts[a][i] for a, i in enumerate(idx))
        lshape = tuple(chunks[a][i] for a, i in enumerate(idx))
        dsk[(name, *idx)] = (fn, offsets, lshape, *args)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=())
    meta = meta_of(dtype, len(shape)) if meta is None else meta
    return new_array(graph, name, chunks, meta)
