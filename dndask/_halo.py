"""Halos: each rank's chunk extended by its neighbours' edge rows along ``split`` (Heat's).

Heat's ``get_halo(h)`` sends the first and last ``h`` rows of every process's chunk to
the previous and next *populated* process (empty ranks are skipped) and keeps what it
received as ``halo_prev``/``halo_next``. Here the same exchange is a graph: one slicing
task per edge runs on the rank that holds the rows, and one task on each receiving rank
joins ``[halo_prev, chunk, halo_next]``. The results are three DNDarrays with the
source's split, one chunk per rank (empty where a rank gets no halo):

- ``prev``: rank ``r``'s chunk is the last ``h`` rows of the previous populated rank;
- ``next``: the first ``h`` rows of the next populated rank;
- ``with_halos``: ``prev``, the rank's own chunk and ``next`` joined along ``split``.

The planning (:func:`plan_halos`) is pure; :func:`halos` builds the graph.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from . import _dndarray, _xp
from ._compat import new_array
from ._graph import meta_of

__all__ = ["check_arguments", "halos", "plan_halos"]


def plan_halos(
    counts: Sequence[int], halo_size: int, prev: bool = True, next: bool = True
) -> list[tuple[int | None, int | None]]:
    """``(source of halo_prev, source of halo_next)`` per rank; ``None`` where there is none.

    Only populated ranks (a nonzero count) exchange, each with its nearest populated
    neighbours, as in Heat; a ``halo_size`` of 0 exchanges nothing.

    >>> plan_halos([2, 0, 3, 1], 1)
    [(None, 2), (None, None), (0, 3), (2, None)]
    """
    populated = [r for r, n in enumerate(counts) if n]
    sources: list[tuple[int | None, int | None]] = [(None, None)] * len(counts)
    if not halo_size:
        return sources
    for i, r in enumerate(populated):
        src_prev = populated[i - 1] if prev and i > 0 else None
        src_next = populated[i + 1] if next and i + 1 < len(populated) else None
        sources[r] = (src_prev, src_next)
    return sources


def _edge(chunk, axis: int, start: int | None, stop: int | None):
    index = [slice(None)] * chunk.ndim
    index[axis] = slice(start, stop)
    return chunk[tuple(index)]


def _join(parts, axis: int):
    xp = _xp.namespace_of(parts[0])
    return xp.concatenate(parts, axis=axis)


def _empty_piece(chunk, axis: int):
    return _edge(chunk, axis, 0, 0)


def check_arguments(halo_size, prev, next) -> None:
    """Type and value checks of :func:`halos`' arguments (shared with ``get_halo``)."""
    if isinstance(halo_size, bool) or not isinstance(halo_size, numbers.Integral):
        raise TypeError(f"`halo_size` must be an int, got {type(halo_size).__name__}")
    if halo_size < 0:
        raise ValueError(f"`halo_size` must be non-negative, got {halo_size}")
    for value, what in ((prev, "prev"), (next, "next")):
        if not isinstance(value, bool):
            raise TypeError(f"`{what}` must be a bool, got {type(value).__name__}")


def halos(a: _dndarray.DNDarray, halo_size: int, prev: bool = True, next: bool = True):
    """``(prev, next, with_halos)``: the halos of every rank of ``a``, and its chunks with them.

    Parameters
    ----------
    a : DNDarray
        A distributed array (``split`` not None).
    halo_size : int
        Rows each rank receives from each neighbour; at most the count of every
        populated rank.
    prev, next : bool
        Whether to receive the previous / next neighbour's rows.

    Examples
    --------
    >>> import dndask as ht
    >>> a = ht.arange(6, split=0, comm=ht.get_comm().subcomm([0, 1, 2]))
    >>> p, n, w = ht.halos(a, 1)
    >>> w.lshape_map.tolist(), w.numpy().tolist()
    ([[3], [4], [3]], [0, 1, 2, 1, 2, 3, 4, 3, 4, 5])
    """
    if not isinstance(a, _dndarray.DNDarray):
        raise TypeError(f"`a` of `halos` must be a DNDarray, got {type(a).__name__}")
    check_arguments(halo_size, prev, next)
    if a.split is None:
        raise ValueError("`a` of `halos` must be distributed (split not None), got split=None")
    axis = a.split
    counts = a.counts_displs()[0]
    for r, n in enumerate(counts):
        if n and halo_size > n:
            raise ValueError(
                f"`halo_size` {halo_size} must be at most every populated rank's count along "
                f"`split`, got {n} on rank {r}"
            )
    plan = plan_halos(counts, int(halo_size), prev, next)
    keys = a._chunk_keys()
    x = a.to_dask()
    token = tokenize(x.name, halo_size, prev, next)
    names = {part: f"halo-{part}-{token}" for part in ("prev", "next", "with")}
    edges = f"halo-edge-{token}"
    dsk: dict = {name: {} for name in names.values()}
    hints: dict = {}
    sizes = {"prev": [], "next": [], "with": []}
    for r, (src_prev, src_next) in enumerate(plan):
        index = tuple(r if ax == axis else 0 for ax in range(a.ndim))
        pieces = {}
        for part, src, start, stop in (
            ("prev", src_prev, -halo_size, None),
            ("next", src_next, 0, halo_size),
        ):
            if src is None:
                dsk[names[part]][(names[part], *index)] = (_empty_piece, keys[r], axis)
                sizes[part].append(0)
            else:  # sliced on the rank that holds the rows, then received by rank r
                edge = (edges, part, r)
                dsk[names[part]][edge] = (_edge, keys[src], axis, start, stop)
                hints[edge] = src
                dsk[names[part]][(names[part], *index)] = edge
                sizes[part].append(halo_size)
            hints[(names[part], *index)] = r
            pieces[part] = (names[part], *index)
        dsk[names["with"]][(names["with"], *index)] = (
            _join,
            [pieces["prev"], keys[r], pieces["next"]],
            axis,
        )
        hints[(names["with"], *index)] = r
        sizes["with"].append(sizes["prev"][-1] + counts[r] + sizes["next"][-1])
    results = []
    for part in ("prev", "next", "with"):
        layer = dict(dsk[names[part]])
        if part == "with":
            layer.update(dsk[names["prev"]])
            layer.update(dsk[names["next"]])
        graph = HighLevelGraph.from_collections(names[part], layer, dependencies=[x])
        chunks = tuple(tuple(sizes[part]) if ax == axis else (n,) for ax, n in enumerate(a.shape))
        y = new_array(graph, names[part], chunks, meta_of(x.dtype, a.ndim))
        out = _dndarray.from_dask(y, axis, a.comm, parents=(a,))
        out._task_ranks.update(hints)
        results.append(out)
    return tuple(results)
