"""Shape manipulation of DNDarrays: each result keeps the one-chunk-per-rank invariant.

Every function works chunk by chunk where the numpy operation leaves the
split axis alone, so those cases move no data: each rank's result chunk is
built from its own chunk only (``transpose``, ``expand_dims``, ``repeat``
along a non-split axis, ...). Where rows must change owner, the pieces are
planned by pure functions and assembled from slices that run on the rank
holding the source chunk, so only the rows that change owner travel
(``concatenate`` along the split axis, ``roll``, ``tile``, the flat-range
redistribution of ``reshape``).

What lives where:

- ``_plan``: the pure plans (no Dask): which rows each rank needs, from where.
- ``_graph``: the graph builders: per-rank local results, planned moves.
- ``_checks``: argument checks shared by the functions below.
- ``_reshape``: ``reshape``, ``flatten``, ``ravel``.
- ``_axes``: ``transpose``, ``swapaxes``, ``moveaxis``, ``expand_dims``, ``squeeze``.
- ``_join``: ``concatenate``, ``stack``, ``vstack``, ``hstack``.
- ``_repeat``: ``repeat``, ``tile``.
- ``_reorder``: ``flip``, ``roll``, ``rot90``.
- ``_pad``: ``pad``.
- ``_windows``: ``sliding_window_view`` (a copy; windows along the split take a halo).
- ``_diag``: ``diag``, ``diagonal``, ``triu``, ``tril``.
- ``_split``: ``split``, ``hsplit``, ``vsplit``, ``dsplit``.
- ``_unfold``: ``unfold`` (Heat's sliding windows; a halo exchange along the split axis).
- ``_broadcast``: ``broadcast_to``, ``broadcast_arrays``, ``column_stack``, ``row_stack``,
  ``fliplr``, ``flipud``.
"""

from __future__ import annotations

from ._axes import expand_dims, moveaxis, squeeze, swapaxes, transpose
from ._broadcast import broadcast_arrays, broadcast_to, column_stack, fliplr, flipud, row_stack
from ._diag import diag, diagonal, fill_diagonal, tril, triu
from ._join import concatenate, hstack, stack, vstack
from ._pad import pad
from ._reorder import flip, roll, rot90
from ._repeat import repeat, tile
from ._reshape import flatten, ravel, reshape
from ._split import dsplit, hsplit, split, vsplit
from ._unfold import unfold
from ._windows import sliding_window_view

__all__ = [
    "broadcast_arrays",
    "broadcast_to",
    "column_stack",
    "concatenate",
    "diag",
    "diagonal",
    "fill_diagonal",
    "dsplit",
    "expand_dims",
    "flatten",
    "flip",
    "fliplr",
    "flipud",
    "hsplit",
    "hstack",
    "moveaxis",
    "pad",
    "ravel",
    "repeat",
    "reshape",
    "roll",
    "rot90",
    "row_stack",
    "sliding_window_view",
    "split",
    "squeeze",
    "stack",
    "swapaxes",
    "tile",
    "transpose",
    "tril",
    "triu",
    "unfold",
    "vsplit",
    "vstack",
]
