"""Planning ``a[key]`` (pure): the result's layout and which rows every output chunk fetches.

:func:`result_layout` gives the shape of a selection by numpy's placement
rule; :func:`plan_fetch` decides which rows of which rank one target needs,
and :func:`plan_getitem` the split and counts of the result with one fetch per
output chunk. The helpers that locate rows on ranks are shared with the
assignment plans of ``_setplan``. Nothing here touches array data or the
scheduler.

Which split a result gets
-------------------------
- ``split=None`` input: one chunk in, one chunk out, ``split=None``.
- A slice on the split axis is local: rank ``r`` keeps the selected rows it
  holds, so the result keeps the split (moved to the output position of that
  axis: ints before it shift it down, ``None`` shifts it up) and is usually
  unbalanced. Nothing is rebalanced; ``balanced`` reports the truth, call
  ``balance_()`` to even it out.
- A slice with a negative step on the split axis reverses the order of the
  rows, so it mirrors the ranks, as Heat's ``flip`` does: output rank ``r``
  holds (reversed) the selection of input rank ``P - 1 - r``. Each rank's
  selection moves whole to its mirror rank.
- An int on the split axis removes it: the result is ``split=None`` and its
  data comes from the one rank that owns the row.
- Any other axis indexed basically keeps the split where it is (shifted).
- Integer arrays on non-split axes are applied by every rank locally; the
  split moves to wherever numpy puts that axis.
- Integer arrays (or, in a key holding arrays, an int) on the split axis:
  the result is split along the first broadcast dimension of the advanced
  indices and balanced by Heat's rule; each output rank fetches its elements
  from the ranks that hold them (one piece per source rank, reordered on
  arrival).
- A boolean mask as the only advanced index (the usual ``a[mask]``): each rank
  applies its part of the mask, so the result is split along the mask's
  flattened dimension with per-rank counts equal to the number of ``True`` in
  each rank's part (for a full-shape mask: a 1-D result, ``split=0``). When
  the mask covers the split axis but not as its first axis, C order would
  interleave the ranks, so the array and the mask are first resplit to the
  mask's first axis (Heat's rule: the result then counts the ``True`` of the
  balanced layout along that axis). A mask that does not cover the split axis
  goes whole to every rank. A 1-D mask on the split axis next to other
  advanced indices keeps those counts too (sorted, so each rank keeps its rows).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import _layout
from ._keys import Item, Key, local_key


class Layout(NamedTuple):
    """Shape of a selection and where each output dimension comes from.

    ``dims[j]`` is ``("new",)``, ``("axis", i)`` (a slice of input axis ``i``)
    or ``("adv", k)`` (dimension ``k`` of the advanced indices' broadcast shape).
    """

    shape: tuple[int, ...]
    dims: tuple[tuple, ...]


class FetchPlan(NamedTuple):
    """How one target assembles ``x[key]`` from the chunks of ``x``.

    Each piece is ``(source rank, local key)``: the source rank runs
    ``chunk[local key]``. The pieces are joined along ``axis``, reordered by
    ``order`` along it (if not None) and reshaped to ``shape``.
    """

    pieces: tuple[tuple[int, tuple], ...]
    axis: int | None
    order: np.ndarray | None
    shape: tuple[int, ...]


class GetPlan(NamedTuple):
    """The result of ``a[key]``: shape, split, counts, and one fetch per output chunk."""

    shape: tuple[int, ...]
    split: int | None
    counts: tuple[int, ...]
    fetches: tuple[FetchPlan, ...]


# ------------------------------------------------------------------- layout
def result_layout(key: Key) -> Layout:
    """Shape and dimension origins of ``x[key]``, by numpy's placement rule.

    >>> from dndask._indexing._keys import normalize_key
    >>> result_layout(normalize_key((slice(None), 0, [1, 2]), (2, 3, 4))).shape
    (2, 2)
    >>> result_layout(normalize_key((None, slice(1, 3)), (4,))).dims
    (('new',), ('axis', 0))
    """
    items = key.items
    positioned = [it for it in items if it.kind != "new"]
    adv = [j for j, it in enumerate(positioned) if it.kind in ("array", "mask")]
    adjacent = not adv or adv == list(range(adv[0], adv[0] + len(adv)))
    shape: list[int] = []
    dims: list[tuple] = []

    def add_broadcast() -> None:
        for k, n in enumerate(key.bshape):
            shape.append(n)
            dims.append(("adv", k))

    if not adjacent:
        add_broadcast()
    placed = not adjacent or not adv
    for it in items:
        if it.kind == "new":
            shape.append(1)
            dims.append(("new",))
        elif it.kind == "slice":
            shape.append(len(it.value))
            dims.append(("axis", it.axis))
        elif it.kind in ("array", "mask") and not placed:
            add_broadcast()
            placed = True
    return Layout(tuple(shape), tuple(dims))


# ------------------------------------------------------- rows and their ranks
def split_item(key: Key, split: int) -> tuple[int, Item]:
    """The position in ``key.items`` of the item that indexes the split axis, and the item."""
    for pos, it in enumerate(key.items):
        if it.axis is None:
            continue
        width = it.value.ndim if it.kind == "mask" else 1
        if it.axis <= split < it.axis + width:
            return pos, it
    raise AssertionError("a normalised key covers every axis")  # pragma: no cover


def replace_item(key: Key, pos: int, item: Item) -> Key:
    """``key`` with its item at ``pos`` replaced by ``item``."""
    items = list(key.items)
    items[pos] = item
    return key._replace(items=tuple(items))


def positions_in(r: range, lo: int, hi: int) -> tuple[int, int]:
    """The positions ``[i0, i1)`` of ``r`` whose values lie in ``[lo, hi)``.

    ``r`` is monotone, so they are contiguous.

    >>> positions_in(range(1, 10, 3), 3, 8)
    (1, 3)
    >>> positions_in(range(9, 0, -2), 2, 6)
    (2, 4)
    """
    n = len(r)
    if n == 0:
        return 0, 0
    if r.step > 0:

        def below(x: int) -> int:  # values < x
            return min(max(-(-(x - r.start) // r.step), 0), n)

        return below(lo), below(hi)

    def at_least(x: int) -> int:  # values >= x, which come first
        return min(max((r.start - x) // -r.step + 1, 0), n)

    return at_least(hi), at_least(lo)


def owners(idx, counts: tuple[int, ...]):
    """The rank that holds each global row of ``idx`` (empty ranks hold none)."""
    return np.searchsorted(np.cumsum(counts), idx, side="right")


def by_owner(idx: np.ndarray, counts: tuple[int, ...]) -> tuple[np.ndarray, list[np.ndarray]]:
    """The positions of ``idx`` grouped by owning rank, in order within each rank.

    Returns the positions in rank order (one stable sort) and each rank's share of them.
    """
    ranks = owners(idx, counts)
    grouped = np.argsort(ranks, kind="stable")
    bounds = np.cumsum(np.bincount(ranks, minlength=len(counts)))
    return grouped, np.split(grouped, bounds[:-1])


def flattened(items: tuple[Item, ...]) -> tuple[Item, ...]:
    """``items`` with every index array raveled (the broadcast dimensions as one)."""
    return tuple(
        it._replace(value=it.value.reshape(-1)) if it.kind == "array" else it for it in items
    )


def _take_arrays(items: tuple[Item, ...], sel) -> list[Item]:
    """``items`` with every index array cut to ``sel`` (along its first axis)."""
    return [it._replace(value=it.value[sel]) if it.kind == "array" else it for it in items]


def _shifted(it: Item, offset: int) -> Item:
    """``it`` (on the split axis) in the coordinates of a chunk starting at ``offset``."""
    if it.kind == "slice":
        r = it.value
        return it._replace(value=range(r.start - offset, r.stop - offset, r.step))
    return it._replace(value=it.value - offset)


def rows_key(key: Key, pos: int, rows: range, offset: int) -> tuple:
    """The local key of ``key`` on a chunk starting at ``offset``, selecting global ``rows``."""
    split = key.items[pos].axis
    return local_key(replace_item(key, pos, _shifted(Item("slice", split, rows), offset)).items)


def elements_key(flat: tuple[Item, ...], sel: np.ndarray, pos: int, offset: int) -> tuple:
    """The local key of the elements ``sel`` of the raveled arrays ``flat``, on a chunk
    starting at ``offset`` (the array at ``pos`` indexes the split axis)."""
    local = _take_arrays(flat, sel)
    local[pos] = _shifted(local[pos], offset)
    return local_key(tuple(local))


# ------------------------------------------------------------------ fetches
def plan_fetch(key: Key, split: int | None, counts: tuple[int, ...]) -> FetchPlan:
    """Plan assembling ``x[key]`` from ``x``'s chunks (``counts`` rows per rank along ``split``).

    Only the ranks holding selected rows contribute, each with one piece.

    >>> from dndask._indexing._keys import normalize_key
    >>> p = plan_fetch(normalize_key(slice(1, 6), (7,)), 0, (2, 2, 2, 1))
    >>> [(s, k) for s, k in p.pieces]
    [(0, (slice(1, 2, 1),)), (1, (slice(0, 2, 1),)), (2, (slice(0, 2, 1),))]
    """
    layout = result_layout(key)
    if split is None:
        return FetchPlan(((0, local_key(key.items)),), None, None, layout.shape)
    displs = _layout.displacements(counts)
    pos, it = split_item(key, split)
    if it.kind == "int":
        s = int(owners(it.value, counts))
        piece = (s, local_key(replace_item(key, pos, _shifted(it, displs[s])).items))
        return FetchPlan((piece,), None, None, layout.shape)
    if it.kind == "slice":
        return _fetch_slice(key, layout, split, counts, pos, it)
    if it.kind == "mask":
        raise ValueError("`key` a mask over the split axis is applied per rank, not fetched")
    return _fetch_array(key, layout, counts, pos)


def _fetch_slice(key, layout, split, counts, pos, it) -> FetchPlan:
    displs = _layout.displacements(counts)
    rows = it.value
    pieces = []
    if len(rows):
        first, last = sorted(owners(np.array([rows[0], rows[-1]]), counts).tolist())
        ranks = range(first, last + 1) if rows.step > 0 else range(last, first - 1, -1)
        for s in ranks:
            i0, i1 = positions_in(rows, displs[s], displs[s] + counts[s])
            if i1 > i0:
                pieces.append((s, rows_key(key, pos, rows[i0:i1], displs[s])))
    return FetchPlan(tuple(pieces), layout.dims.index(("axis", split)), None, layout.shape)


def _fetch_array(key, layout, counts, pos) -> FetchPlan:
    """Integer arrays on the split axis: one piece per source rank, then reorder."""
    displs = _layout.displacements(counts)
    flat = flattened(key.items)
    grouped, shares = by_owner(flat[pos].value, counts)
    pieces = [
        (s, elements_key(flat, sel, pos, displs[s])) for s, sel in enumerate(shares) if sel.size
    ]
    order = None
    if np.any(np.diff(grouped) < 0):
        order = np.empty_like(grouped)
        order[grouped] = np.arange(grouped.size)  # the inverse permutation
    return FetchPlan(tuple(pieces), layout.dims.index(("adv", 0)), order, layout.shape)


# ------------------------------------------------------------------ getitem
def plan_getitem(key: Key, split: int | None, counts: tuple[int, ...], true_counts=None) -> GetPlan:
    """Plan ``a[key]`` for an array split along ``split`` with ``counts`` rows per rank.

    In ``"mask"`` mode ``true_counts`` holds the number of ``True`` per rank
    (mask over the split axis, which must be its first axis) or the total.

    >>> from dndask._indexing._keys import normalize_key
    >>> p = plan_getitem(normalize_key(slice(1, None), (7,)), 0, (2, 2, 2, 1))
    >>> p.split, p.counts
    (0, (1, 2, 2, 1))
    >>> plan_getitem(normalize_key(slice(None, None, -1), (7,)), 0, (2, 2, 2, 1)).counts
    (1, 2, 2, 2)
    """
    if key.mode == "mask":
        key = key._replace(bshape=(int(np.sum(true_counts)),))
    layout = result_layout(key)
    if split is None:
        return GetPlan(layout.shape, None, (), (plan_fetch(key, None, ()),))
    pos, it = split_item(key, split)
    if it.kind == "int":
        return GetPlan(layout.shape, None, (), (plan_fetch(key, split, counts),))
    if it.kind == "slice":
        return _get_slice(key, layout, split, counts, pos, it)
    if it.kind == "mask":
        return _get_mask(key, layout, split, it, true_counts)
    return _get_array(key, layout, split, counts, it)


def _get_slice(key, layout, split, counts, pos, it) -> GetPlan:
    """Each output rank takes one input rank's selection (its mirror for a negative step)."""
    size = len(counts)
    displs = _layout.displacements(counts)
    fetches, out_counts = [], []
    for r in range(size):
        s = r if it.value.step > 0 else size - 1 - r
        i0, i1 = positions_in(it.value, displs[s], displs[s] + counts[s])
        sub = replace_item(key, pos, Item("slice", split, it.value[i0:i1]))
        fetches.append(plan_fetch(sub, split, counts))
        out_counts.append(i1 - i0)
    d = layout.dims.index(("axis", split))
    return GetPlan(layout.shape, d, tuple(out_counts), tuple(fetches))


def _get_mask(key, layout, split, it, true_counts) -> GetPlan:
    """Each rank applies its part of the mask; it keeps its ``True`` elements."""
    if split != it.axis:
        raise ValueError("`key` mask must start at the split axis; resplit the array first")
    true_counts = tuple(int(c) for c in np.asarray(true_counts).reshape(-1))
    d = layout.dims.index(("adv", 0))
    fetches = []
    for r, c in enumerate(true_counts):
        shape = (*layout.shape[:d], c, *layout.shape[d + 1 :])
        fetches.append(FetchPlan(((r, local_key(key.items)),), None, None, shape))
    return GetPlan(layout.shape, d, true_counts, tuple(fetches))


def _get_array(key, layout, split, counts, it) -> GetPlan:
    """Split along the first broadcast dimension: balanced, or kept local for a mask."""
    bshape = key.bshape
    size = len(counts)
    idx = it.value.reshape(-1)
    if split in key.from_mask and len(bshape) == 1 and not np.any(np.diff(idx) < 0):
        out_counts = tuple(np.bincount(owners(idx, counts), minlength=size).tolist())
    else:
        out_counts = _layout.balanced_counts(bshape[0], size)
    fetches = []
    for lo, c in zip(_layout.displacements(out_counts), out_counts, strict=True):
        items = tuple(_take_arrays(key.items, slice(lo, lo + c)))
        sub = key._replace(items=items, bshape=(c, *bshape[1:]))
        fetches.append(plan_fetch(sub, split, counts))
    d = layout.dims.index(("adv", 0))
    return GetPlan(layout.shape, d, out_counts, tuple(fetches))
