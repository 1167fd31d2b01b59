"""Planning ``a[key] = value`` (pure): which ranks change, with which local key, from which part
of the value.

:func:`plan_setitem` gives, per rank, the local key it assigns at and the
:class:`Region` of the selection that lands in its chunk (``None``: the rank
is untouched); :func:`value_key` cuts that region out of the value, and
:func:`check_value_shape` checks that the value broadcasts to the selection
(a ``ValueError`` otherwise, as numpy's). For a mask over the split axis,
:func:`mask_positions` places each rank's ``True`` elements in the selection.
Nothing here touches array data or the scheduler.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import _layout
from ._keys import Item, Key, local_key
from ._plan import (
    by_owner,
    elements_key,
    flattened,
    plan_fetch,
    positions_in,
    result_layout,
    rows_key,
    split_item,
)


class Region(NamedTuple):
    """The part of the selection a rank assigns to.

    ``"all"``: everything; ``"rows"``: rows ``[lo, hi)`` of selection dimension
    ``dim``; ``"take"``: the flat ``positions`` of the ``ndims`` selection
    dimensions starting at ``dim`` (C order).
    """

    kind: str
    dim: int = 0
    lo: int = 0
    hi: int = 0
    ndims: int = 1
    positions: np.ndarray | None = None


ALL = Region("all")


class SetPlan(NamedTuple):
    """``a[key] = value``: the selection's shape and, per rank, its local key and region.

    A rank whose entry is ``None`` is not touched.
    """

    shape: tuple[int, ...]
    targets: tuple[tuple[tuple, Region] | None, ...]


def mask_positions(table: np.ndarray) -> list[np.ndarray]:
    """Per rank, the C-order positions of its ``True`` elements among all of them.

    ``table[r, q...]`` counts rank ``r``'s ``True`` elements for each index
    ``q`` of the mask axes before the split axis; within one such index the
    ranks' elements follow each other in rank order.

    >>> [p.tolist() for p in mask_positions(np.array([[1, 2], [2, 0]]))]
    [[0, 3, 4], [1, 2]]
    """
    size = table.shape[0]
    t = np.asarray(table, dtype=np.int64).reshape(size, -1)
    totals = t.sum(axis=0)
    starts = np.cumsum(totals) - totals
    before = np.cumsum(t, axis=0) - t
    out = []
    for r in range(size):
        lengths = t[r]
        firsts = starts + before[r]
        runs = np.cumsum(lengths) - lengths
        out.append(np.repeat(firsts - runs, lengths) + np.arange(int(lengths.sum())))
    return out


def plan_setitem(key: Key, split: int | None, counts: tuple[int, ...], true_counts=None) -> SetPlan:
    """Plan ``a[key] = value``: which ranks change, with which local key, from which region.

    In ``"mask"`` mode ``true_counts`` is the table of :func:`mask_positions`
    (or the total when the mask misses the split axis); ``None`` when the value
    is broadcast along the mask's dimension, so no rank needs positions.

    >>> from dndask._indexing._keys import normalize_key
    >>> p = plan_setitem(normalize_key(slice(1, 4), (7,)), 0, (2, 2, 2, 1))
    >>> [t and (t[0], t[1].lo, t[1].hi) for t in p.targets]
    [((slice(1, 2, 1),), 0, 1), ((slice(0, 2, 1),), 1, 3), None, None]
    """
    if key.mode == "mask":
        nnz = -1 if true_counts is None else int(np.sum(true_counts))
        key = key._replace(bshape=(nnz,))
    layout = result_layout(key)
    if split is None:
        return SetPlan(layout.shape, ((local_key(key.items), ALL),))
    pos, it = split_item(key, split)
    if it.kind == "int":
        fetch = plan_fetch(key, split, counts)
        ((s, local),) = fetch.pieces
        targets = [None] * len(counts)
        targets[s] = (local, ALL)
        return SetPlan(layout.shape, tuple(targets))
    if it.kind == "slice":
        return SetPlan(layout.shape, _set_slice(key, layout, split, counts, pos, it))
    if it.kind == "mask":
        return SetPlan(layout.shape, _set_mask(key, layout, split, len(counts), it, true_counts))
    return SetPlan(layout.shape, _set_array(key, layout, counts, pos))


def _set_slice(key, layout, split, counts, pos, it) -> tuple:
    displs = _layout.displacements(counts)
    d = layout.dims.index(("axis", split))
    targets = []
    for r, c in enumerate(counts):
        i0, i1 = positions_in(it.value, displs[r], displs[r] + c)
        if i1 == i0:
            targets.append(None)
            continue
        local = rows_key(key, pos, it.value[i0:i1], displs[r])
        targets.append((local, Region("rows", d, i0, i1)))
    return tuple(targets)


def _set_mask(key, layout, split, size, it, true_counts) -> tuple:
    local = local_key(key.items)
    if true_counts is None:  # the value is broadcast along the mask: every rank assigns it all
        return ((local, ALL),) * size
    d = layout.dims.index(("adv", 0))
    table = np.asarray(true_counts, dtype=np.int64)
    if split == it.axis:
        per_rank = table.reshape(-1).tolist()
        rows = zip(_layout.displacements(per_rank), per_rank, strict=True)
        return tuple((local, Region("rows", d, o, o + c)) if c else None for o, c in rows)
    return tuple(
        (local, Region("take", d, positions=p)) if p.size else None for p in mask_positions(table)
    )


def _set_array(key, layout, counts, pos) -> tuple:
    displs = _layout.displacements(counts)
    flat = flattened(key.items)
    _, shares = by_owner(flat[pos].value, counts)
    d = layout.dims.index(("adv", 0))
    targets = []
    for r, sel in enumerate(shares):
        if not sel.size:
            targets.append(None)
            continue
        region = Region("take", d, ndims=len(key.bshape), positions=sel)
        targets.append((elements_key(flat, sel, pos, displs[r]), region))
    return tuple(targets)


def check_value_shape(vshape: tuple[int, ...], shape: tuple[int, ...]) -> None:
    """Raise ``ValueError`` unless a value of ``vshape`` broadcasts to the selection ``shape``.

    Leading length-1 axes of the value are ignored, as numpy does; a ``-1`` in
    ``shape`` (an unknown length) accepts only length 1.

    >>> check_value_shape((1, 1, 3), (2, 3))
    >>> check_value_shape((2,), (2, 3))
    Traceback (most recent call last):
    ...
    ValueError: `value` of shape (2,) could not be broadcast to the indexed shape (2, 3)
    """
    v = list(vshape)
    while len(v) > len(shape) and v[0] == 1:
        v.pop(0)
    fits = len(v) <= len(shape) and all(
        vd == 1 or vd == sd for vd, sd in zip(reversed(v), reversed(shape), strict=False)
    )
    if not fits:
        shown = tuple(max(s, 0) for s in shape)
        raise ValueError(
            f"`value` of shape {tuple(vshape)} could not be broadcast to the indexed shape {shown}"
        )


def value_key(vshape: tuple[int, ...], shape: tuple[int, ...], region: Region) -> Key:
    """The key that cuts from a value of ``vshape`` the part for ``region`` of the selection.

    The cut part still broadcasts against the rank's local selection.

    >>> k = value_key((5, 3), (5, 3), Region("rows", 0, 1, 4))
    >>> local_key(k.items)
    (slice(1, 4, 1), slice(0, 3, 1))
    >>> local_key(value_key((1, 3), (5, 3), Region("rows", 0, 1, 4)).items)
    (slice(0, 1, 1), slice(0, 3, 1))
    """
    extra = max(len(vshape) - len(shape), 0)
    offset = len(shape) - len(vshape)
    leading = tuple(Item("int", ax, 0) for ax in range(extra))
    axes = range(extra, len(vshape))
    full = {ax: Item("slice", ax, range(vshape[ax])) for ax in axes}

    def basic() -> Key:
        return Key(leading + tuple(full[ax] for ax in axes), tuple(vshape), "basic")

    if region.kind == "rows":
        ax = region.dim - offset
        if ax in full and vshape[ax] > 1:
            full[ax] = Item("slice", ax, range(region.lo, region.hi))
    if region.kind != "take":
        return basic()
    lo, hi = region.dim, region.dim + region.ndims
    inside = [ax for ax in axes if lo <= ax + offset < hi]
    if not inside:
        return basic()
    if all(vshape[ax] == 1 for ax in inside):
        for ax in inside[1:]:
            full[ax] = Item("int", ax, 0)
        return basic()
    coords = np.unravel_index(region.positions, shape[lo:hi])
    for ax in inside:
        c = coords[ax + offset - lo].astype(np.int64)
        full[ax] = Item("array", ax, c if vshape[ax] > 1 else np.zeros_like(c))
    bshape = (len(region.positions),)
    return Key(leading + tuple(full[ax] for ax in axes), tuple(vshape), "advanced", bshape)
