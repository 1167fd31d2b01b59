"""Small builders of Dask arrays whose chunks follow a DNDarray layout."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import dask.array as da
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from . import _layout
from ._compat import new_array


def block_index(split: int | None, ndim: int, rank: int) -> tuple[int, ...]:
    """The Dask block index of ``rank``'s chunk."""
    return tuple(rank if axis == split else 0 for axis in range(ndim))


def meta_of(dtype: np.dtype, ndim: int) -> np.ndarray:
    """An empty numpy array standing for a chunk's type."""
    return np.empty((0,) * ndim, dtype=dtype)


def from_chunk_function(
    prefix: str,
    fn: Callable,
    shape: tuple[int, ...],
    dtype: np.dtype,
    split: int | None,
    counts: tuple[int, ...],
    args: tuple = (),
) -> da.Array:
    """A Dask array whose chunk ``r`` is ``fn(offsets, lshape, *args)``.

    ``offsets`` is the chunk's global start on every axis, ``lshape`` its
    shape. Creation runs on the workers; nothing but ``args`` travels.
    """
    chunks = _layout.chunks_for(shape, split, counts)
    name = f"{prefix}-{tokenize(prefix, fn, shape, dtype, chunks, args)}"
    starts = [_layout.displacements(c) for c in chunks]
    dsk = {}
    for idx in itertools.product(*(range(len(c)) for c in chunks)):
        offsets = tuple(starts[a][i] for a, i in enumerate(idx))
        lshape = tuple(chunks[a][i] for a, i in enumerate(idx))
        dsk[(name, *idx)] = (fn, offsets, lshape, *args)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=())
    return new_array(graph, name, chunks, meta_of(dtype, len(shape)))
