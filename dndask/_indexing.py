"""Indexing of DNDarrays: ``a[key]`` and ``a[key] = value``.

Values follow numpy exactly; the distribution of a result follows Heat. The
key is first normalised (:func:`normalize_key`), then pure planning functions
(:func:`plan_getitem`, :func:`plan_fetch`, :func:`plan_setitem`) decide which
rows of which rank every output chunk needs; only then is a Dask graph built.
No step gathers the indexed array: every rank slices its own chunk, and only
the selected rows travel to the rank that needs them.

Keys
----
- Basic indices on every axis: ints (negative too), slices with any step,
  ``Ellipsis``, ``None`` (``np.newaxis``), and tuples of them.
- Integer arrays (numpy, torch, lists, DNDarrays) on any axis, broadcast
  together as in numpy; when a key holds an array, its ints are advanced
  indices too, and numpy's rule places the broadcast dimensions (at the first
  advanced index if the advanced indices are adjacent, else first).
- Boolean masks (numpy, torch, lists, DNDarrays) over one or more axes.

An index array is small metadata: a DNDarray used as an integer index, or as a
1-D mask next to other advanced indices, is computed to the driver. A
multi-dimensional DNDarray mask is never computed; only its per-rank numbers
of ``True`` are, when the result's layout depends on them.

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

Assignment
----------
``a[key] = value`` replaces ``a``'s graph in place; the chunks keep their
sizes. ``value`` is a scalar, a numpy array, a torch tensor, a list or a
DNDarray, broadcast to the selection as in numpy (leading length-1 axes are
dropped). Rank ``r`` receives only the part of ``value`` that lands in its
chunk: a numpy value is cut in the driver, a DNDarray value is sliced where
its rows live and only the needed rows travel. Ranks the key does not touch
keep their chunk as it is. With repeated indices the last assignment wins,
as in numpy. Everything is checked before ``a`` changes.

Errors
------
Bad indices raise ``IndexError`` as numpy does (out of bounds, too many
indices, a mask whose shape does not match, float indices or arrays, arrays
that do not broadcast), a slice with a float bound is a ``TypeError``, a
value that does not broadcast to the selection a ``ValueError``, a value
whose dtype cannot be cast to ``a.dtype`` under numpy's ``same_kind`` rule (the
rule of the in-place operators) a ``TypeError``, and scalar booleans as keys or
a multi-dimensional DNDarray mask next to other advanced indices a
``NotImplementedError``.
"""

from __future__ import annotations

import bisect
import numbers
from typing import Any, NamedTuple

import dask.array as da
import numpy as np
import torch
from dask._task_spec import Alias, List, Task, TaskRef
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from . import _compute, _distribution, _dndarray, _layout
from ._graph import block_index, meta_of
from ._torch import from_torch

# Stands for the mask in a local key; the task receives the mask piece separately.
MASK = "<mask>"

_VALID = (
    "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) "
    "and integer or boolean arrays are valid indices"
)


class Item(NamedTuple):
    """One normalised entry of a key.

    ``kind`` is ``"new"`` (None), ``"int"`` (``value`` a non-negative int),
    ``"slice"`` (``value`` a ``range`` of the selected positions), ``"array"``
    (``value`` a non-negative int64 array, broadcast to the advanced shape)
    or ``"mask"`` (``value`` a boolean numpy array or DNDarray). ``axis`` is the
    first axis of the indexed array it applies to.
    """

    kind: str
    axis: int | None
    value: Any


class Key(NamedTuple):
    """A normalised key: one :class:`Item` per entry, every axis covered.

    ``mode`` is ``"basic"``, ``"advanced"`` (integer arrays, masks turned into
    them) or ``"mask"`` (a single boolean mask is the only advanced index).
    ``bshape`` is the broadcast shape of the advanced indices (``(nnz,)`` for
    a mask, once known); ``from_mask`` the axes whose arrays came from a mask.
    """

    items: tuple[Item, ...]
    shape: tuple[int, ...]
    mode: str
    bshape: tuple[int, ...] | None = None
    from_mask: frozenset = frozenset()


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


# ----------------------------------------------------------------- key leaves
def _is_dnd(obj: object) -> bool:
    return isinstance(obj, _dndarray.DNDarray)


def _is_array(obj: object) -> bool:
    return isinstance(obj, np.ndarray) or _is_dnd(obj)


def _is_mask(obj: object) -> bool:
    return _is_array(obj) and obj.dtype == np.bool_


def _check_slice(s: slice) -> slice:
    for part in (s.start, s.stop, s.step):
        if part is not None and not hasattr(type(part), "__index__"):
            raise TypeError(
                f"`key` slice indices must be integers or None, got {type(part).__name__}"
            )
    if s.step is not None and int(s.step) == 0:
        raise ValueError("`key` slice step cannot be zero")
    return slice(*(None if p is None else int(p) for p in (s.start, s.stop, s.step)))


def _array_leaf(arr: np.ndarray, raw: object):
    if arr.dtype.kind == "b":
        if arr.ndim == 0:
            raise NotImplementedError(
                "`key` scalar booleans (0-d masks) are not supported; use None to add an axis"
            )
        return arr
    if arr.dtype.kind in "iu":
        return int(arr) if arr.ndim == 0 else arr
    if isinstance(raw, (list, tuple)) and arr.size == 0:
        return arr.astype(np.int64)  # numpy reads an empty list as an integer index
    raise IndexError(
        f"`key` arrays used as indices must be of integer (or boolean) type, got {arr.dtype}"
    )


def _leaf(obj: object):
    """One entry of a key in canonical form (ints, slices, None, ..., arrays, DNDarrays)."""
    if obj is None or obj is Ellipsis:
        return obj
    if isinstance(obj, slice):
        return _check_slice(obj)
    if isinstance(obj, (bool, np.bool_)):
        raise NotImplementedError(
            "`key` scalar booleans (0-d masks) are not supported; use None to add an axis"
        )
    if isinstance(obj, numbers.Integral):
        return int(obj)
    if _is_dnd(obj):
        if obj.dtype.kind not in "biu":
            raise IndexError(
                f"`key` arrays used as indices must be of integer (or boolean) type, "
                f"got {obj.dtype}"
            )
        if obj.dtype.kind == "b" and obj.ndim == 0:
            raise NotImplementedError("`key` scalar booleans (0-d masks) are not supported")
        return obj
    if isinstance(obj, torch.Tensor):
        return _array_leaf(from_torch(obj), obj)
    if isinstance(obj, (np.ndarray, list, tuple)):
        try:
            arr = np.asarray(obj)
        except ValueError as err:
            raise IndexError(f"`key` holds an array-like numpy cannot read: {err}") from None
        return _array_leaf(arr, obj)
    raise IndexError(f"`key` {_VALID}, got {type(obj).__name__}")


def leaves(key: object) -> tuple:
    """The entries of ``key`` in canonical form (a non-tuple key is one entry).

    >>> leaves((1, slice(None), [0, 2]))
    (1, slice(None, None, None), array([0, 2]))
    """
    items = key if isinstance(key, tuple) else (key,)
    return tuple(_leaf(k) for k in items)


def key_mode(entries: tuple) -> str:
    """``"basic"``, ``"mask"`` (one boolean array is the only advanced index) or ``"advanced"``.

    >>> key_mode(leaves((0, slice(1, 3)))), key_mode(leaves([True, False]))
    ('basic', 'mask')
    >>> key_mode(leaves((0, [True, False])))
    'advanced'
    """
    arrays = [e for e in entries if _is_array(e)]
    if not arrays:
        return "basic"
    ints = any(isinstance(e, int) for e in entries)
    if len(arrays) == 1 and _is_mask(arrays[0]) and not ints:
        return "mask"
    return "advanced"


# ------------------------------------------------------------- normalisation
def _consumes(entry) -> int:
    if entry is None or entry is Ellipsis:
        return 0
    if _is_mask(entry):
        return entry.ndim
    return 1


def _expand(entries: tuple, ndim: int) -> list:
    """``entries`` with the Ellipsis (or the missing trailing axes) spelt out as slices."""
    ellipses = sum(1 for e in entries if e is Ellipsis)
    if ellipses > 1:
        raise IndexError("`key` can only have a single ellipsis ('...')")
    used = sum(_consumes(e) for e in entries)
    if used > ndim:
        raise IndexError(
            f"`key` has too many indices for the array: array is {ndim}-dimensional, "
            f"but {used} were indexed"
        )
    fill = [slice(None)] * (ndim - used)
    out = []
    for e in entries:
        out.extend(fill if e is Ellipsis else [e])
    return out if ellipses else out + fill


def _out_of_bounds(index: int, axis: int, size: int) -> IndexError:
    return IndexError(f"`key` index {index} is out of bounds for axis {axis} with size {size}")


def _int_item(i: int, axis: int, size: int) -> Item:
    if not -size <= i < size:
        raise _out_of_bounds(i, axis, size)
    return Item("int", axis, i % size)


def _array_item(arr: np.ndarray, axis: int, size: int) -> Item:
    bad = (arr < -size) | (arr >= size)
    if bad.any():
        raise _out_of_bounds(int(arr[bad].flat[0]), axis, size)
    arr = arr.astype(np.int64)
    return Item("array", axis, np.where(arr < 0, arr + size, arr))


def _mask_item(mask, axis: int, shape: tuple[int, ...]) -> Item:
    for j, m in enumerate(mask.shape):
        if m != shape[axis + j]:
            raise IndexError(
                f"`key` boolean index did not match the array along axis {axis + j}: "
                f"size of axis is {shape[axis + j]} but size of the boolean axis is {m}"
            )
    return Item("mask", axis, mask)


def _items(entries: list, shape: tuple[int, ...]) -> tuple[Item, ...]:
    items, axis = [], 0
    for e in entries:
        if e is None:
            items.append(Item("new", None, None))
            continue
        if isinstance(e, int):
            items.append(_int_item(e, axis, shape[axis]))
        elif isinstance(e, slice):
            items.append(Item("slice", axis, range(*e.indices(shape[axis]))))
        elif _is_mask(e):
            items.append(_mask_item(e, axis, shape))
        elif _is_dnd(e):
            raise TypeError("`key` DNDarray integer indices must be computed before planning")
        else:
            items.append(_array_item(e, axis, shape[axis]))
        axis += _consumes(e)
    return tuple(items)


def _advanced(items: tuple[Item, ...]) -> tuple[tuple[Item, ...], tuple[int, ...], frozenset]:
    """Masks as their ``nonzero`` arrays, ints as 0-d arrays, all broadcast together."""
    out, from_mask = [], set()
    for it in items:
        if it.kind == "mask":
            if _is_dnd(it.value):
                raise NotImplementedError(
                    "`key` with a multi-dimensional DNDarray mask next to other integer or "
                    "array indices is not supported"
                )
            for j, idx in enumerate(np.nonzero(it.value)):
                out.append(Item("array", it.axis + j, idx.astype(np.int64)))
                from_mask.add(it.axis + j)
        elif it.kind == "int":
            out.append(Item("array", it.axis, np.array(it.value, dtype=np.int64)))
        else:
            out.append(it)
    arrays = [it.value for it in out if it.kind == "array"]
    try:
        broadcast = iter(np.broadcast_arrays(*arrays))
    except ValueError:
        shapes = " ".join(str(a.shape) for a in arrays)
        raise IndexError(
            f"`key` shape mismatch: indexing arrays could not be broadcast together "
            f"with shapes {shapes}"
        ) from None
    out = [it._replace(value=next(broadcast)) if it.kind == "array" else it for it in out]
    bshape = np.broadcast_shapes(*(a.shape for a in arrays))
    return tuple(out), tuple(bshape), frozenset(from_mask)


def normalize_key(key: object, shape: tuple[int, ...]) -> Key:
    """Check ``key`` against ``shape`` and normalise it (pure: no array data, no scheduler).

    DNDarrays in ``key`` must already be computed, except a boolean DNDarray
    that is the only advanced index (kept as a lazy mask).

    >>> k = normalize_key((-1, slice(None, None, -2)), (7, 5))
    >>> [(it.kind, it.axis, it.value) for it in k.items]
    [('int', 0, 6), ('slice', 1, range(4, -1, -2))]
    >>> normalize_key(([0, 2], 1), (3, 4)).bshape
    (2,)
    """
    shape = tuple(int(s) for s in shape)
    entries = leaves(key)
    mode = key_mode(entries)
    items = _items(_expand(entries, len(shape)), shape)
    if mode == "basic":
        return Key(items, shape, mode)
    if mode == "mask":
        (mask,) = (it.value for it in items if it.kind == "mask")
        bshape = None if _is_dnd(mask) else (int(np.count_nonzero(mask)),)
        return Key(items, shape, mode, bshape)
    items, bshape, from_mask = _advanced(items)
    return Key(items, shape, mode, bshape, from_mask)


# ------------------------------------------------------------------- layout
def result_layout(key: Key) -> Layout:
    """Shape and dimension origins of ``x[key]``, by numpy's placement rule.

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


def _split_item(key: Key, split: int) -> tuple[int, Item]:
    """The position in ``key.items`` of the item that indexes the split axis, and the item."""
    for pos, it in enumerate(key.items):
        if it.axis is None:
            continue
        width = it.value.ndim if it.kind == "mask" else 1
        if it.axis <= split < it.axis + width:
            return pos, it
    raise AssertionError("a normalised key covers every axis")  # pragma: no cover


def _replace(key: Key, pos: int, item: Item) -> Key:
    items = list(key.items)
    items[pos] = item
    return key._replace(items=tuple(items))


def _slice_of(r: range) -> slice:
    """The numpy slice that selects exactly the positions of ``r``."""
    if len(r) == 0:
        return slice(0, 0, 1)
    stop = r.start + len(r) * r.step
    return slice(r.start, None if stop < 0 else stop, r.step)


def local_key(items: tuple[Item, ...]) -> tuple:
    """The numpy key of ``items`` (a mask becomes the :data:`MASK` placeholder).

    >>> local_key(normalize_key((None, 1, slice(None, None, -1)), (3, 3)).items)
    (None, 1, slice(2, None, -1))
    """
    out = []
    for it in items:
        if it.kind == "new":
            out.append(None)
        elif it.kind == "slice":
            out.append(_slice_of(it.value))
        elif it.kind == "mask":
            out.append(MASK)
        else:
            out.append(it.value)
    return tuple(out)


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


def _owners(idx: np.ndarray, counts: tuple[int, ...]) -> np.ndarray:
    """The rank that holds each global row of ``idx`` (empty ranks hold none)."""
    return np.searchsorted(np.cumsum(counts), idx, side="right")


def _by_owner(idx: np.ndarray, counts: tuple[int, ...]) -> tuple[np.ndarray, list[np.ndarray]]:
    """The positions of ``idx`` grouped by owning rank, in order within each rank.

    Returns the positions in rank order (one stable sort) and each rank's share of them.
    """
    owners = _owners(idx, counts)
    grouped = np.argsort(owners, kind="stable")
    bounds = np.cumsum(np.bincount(owners, minlength=len(counts)))
    return grouped, np.split(grouped, bounds[:-1])


def _flattened(items: tuple[Item, ...]) -> list[Item]:
    """``items`` with every index array raveled (the broadcast dimensions as one)."""
    return [it._replace(value=it.value.reshape(-1)) if it.kind == "array" else it for it in items]


def _shifted(it: Item, offset: int) -> Item:
    """``it`` (on the split axis) in the coordinates of a chunk starting at ``offset``."""
    if it.kind == "slice":
        r = it.value
        return it._replace(value=range(r.start - offset, r.stop - offset, r.step))
    return it._replace(value=it.value - offset)


# ------------------------------------------------------------------ planning
def plan_fetch(key: Key, split: int | None, counts: tuple[int, ...]) -> FetchPlan:
    """Plan assembling ``x[key]`` from ``x``'s chunks (``counts`` rows per rank along ``split``).

    Only the ranks holding selected rows contribute, each with one piece.

    >>> p = plan_fetch(normalize_key(slice(1, 6), (7,)), 0, (2, 2, 2, 1))
    >>> [(s, k) for s, k in p.pieces]
    [(0, (slice(1, 2, 1),)), (1, (slice(0, 2, 1),)), (2, (slice(0, 2, 1),))]
    """
    layout = result_layout(key)
    if split is None:
        return FetchPlan(((0, local_key(key.items)),), None, None, layout.shape)
    displs = _layout.displacements(counts)
    pos, it = _split_item(key, split)
    if it.kind == "int":
        s = bisect.bisect_right(np.cumsum(counts).tolist(), it.value)
        piece = (s, local_key(_replace(key, pos, _shifted(it, displs[s])).items))
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
        first, last = sorted(_owners(np.array([rows[0], rows[-1]]), counts).tolist())
        ranks = range(first, last + 1) if rows.step > 0 else range(last, first - 1, -1)
        for s in ranks:
            i0, i1 = positions_in(rows, displs[s], displs[s] + counts[s])
            if i1 > i0:
                sub = Item("slice", split, rows[i0:i1])
                pieces.append((s, local_key(_replace(key, pos, _shifted(sub, displs[s])).items)))
    return FetchPlan(tuple(pieces), layout.dims.index(("axis", split)), None, layout.shape)


def _fetch_array(key, layout, counts, pos) -> FetchPlan:
    """Integer arrays on the split axis: one piece per source rank, then reorder."""
    displs = _layout.displacements(counts)
    flat = _flattened(key.items)
    grouped, shares = _by_owner(flat[pos].value, counts)
    pieces = []
    for s, sel in enumerate(shares):
        if not sel.size:
            continue
        local = [it._replace(value=it.value[sel]) if it.kind == "array" else it for it in flat]
        local[pos] = _shifted(local[pos], displs[s])
        pieces.append((s, local_key(tuple(local))))
    order = None
    if np.any(np.diff(grouped) < 0):
        order = np.empty_like(grouped)
        order[grouped] = np.arange(grouped.size)  # the inverse permutation
    return FetchPlan(tuple(pieces), layout.dims.index(("adv", 0)), order, layout.shape)


def plan_getitem(key: Key, split: int | None, counts: tuple[int, ...], true_counts=None) -> GetPlan:
    """Plan ``a[key]`` for an array split along ``split`` with ``counts`` rows per rank.

    In ``"mask"`` mode ``true_counts`` holds the number of ``True`` per rank
    (mask over the split axis, which must be its first axis) or the total.

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
    pos, it = _split_item(key, split)
    if it.kind == "int":
        return GetPlan(layout.shape, None, (), (plan_fetch(key, split, counts),))
    if it.kind == "slice":
        return _get_slice(key, layout, split, counts, pos, it)
    if it.kind == "mask":
        return _get_mask(key, layout, split, it, true_counts)
    return _get_array(key, layout, split, counts, pos, it)


def _get_slice(key, layout, split, counts, pos, it) -> GetPlan:
    """Each output rank takes one input rank's selection (its mirror for a negative step)."""
    size = len(counts)
    displs = _layout.displacements(counts)
    fetches, out_counts = [], []
    for r in range(size):
        s = r if it.value.step > 0 else size - 1 - r
        i0, i1 = positions_in(it.value, displs[s], displs[s] + counts[s])
        sub = _replace(key, pos, Item("slice", split, it.value[i0:i1]))
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


def _get_array(key, layout, split, counts, pos, it) -> GetPlan:
    """Split along the first broadcast dimension: balanced, or kept local for a mask."""
    bshape = key.bshape
    size = len(counts)
    idx = it.value.reshape(-1)
    if split in key.from_mask and len(bshape) == 1 and not np.any(np.diff(idx) < 0):
        out_counts = tuple(np.bincount(_owners(idx, counts), minlength=size).tolist())
    else:
        out_counts = _layout.balanced_counts(bshape[0], size)
    fetches = []
    for lo, c in zip(_layout.displacements(out_counts), out_counts, strict=True):
        items = tuple(
            i._replace(value=i.value[lo : lo + c]) if i.kind == "array" else i for i in key.items
        )
        sub = key._replace(items=items, bshape=(c, *bshape[1:]))
        fetches.append(plan_fetch(sub, split, counts))
    d = layout.dims.index(("adv", 0))
    return GetPlan(layout.shape, d, out_counts, tuple(fetches))


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
    pos, it = _split_item(key, split)
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
        sub = _shifted(Item("slice", split, it.value[i0:i1]), displs[r])
        targets.append((local_key(_replace(key, pos, sub).items), Region("rows", d, i0, i1)))
    return tuple(targets)


def _set_mask(key, layout, split, size, it, true_counts) -> tuple:
    local = local_key(key.items)
    if true_counts is None:  # the value is broadcast along the mask: every rank assigns it all
        return ((local, ALL),) * size
    d = layout.dims.index(("adv", 0))
    table = np.asarray(true_counts, dtype=np.int64)
    if split == it.axis:
        displs = _layout.displacements(table.reshape(-1).tolist())
        rows = zip(displs, table.reshape(-1).tolist(), strict=True)
        return tuple((local, Region("rows", d, o, o + c)) if c else None for o, c in rows)
    return tuple(
        (local, Region("take", d, positions=p)) if p.size else None for p in mask_positions(table)
    )


def _set_array(key, layout, counts, pos) -> tuple:
    displs = _layout.displacements(counts)
    flat = _flattened(key.items)
    _, shares = _by_owner(flat[pos].value, counts)
    d = layout.dims.index(("adv", 0))
    targets = []
    for r, sel in enumerate(shares):
        if not sel.size:
            targets.append(None)
            continue
        local = [it._replace(value=it.value[sel]) if it.kind == "array" else it for it in flat]
        local[pos] = _shifted(local[pos], displs[r])
        region = Region("take", d, ndims=len(key.bshape), positions=sel)
        targets.append((local_key(tuple(local)), region))
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
    items = [Item("int", ax, 0) for ax in range(extra)]
    axes = range(extra, len(vshape))
    full = {ax: Item("slice", ax, range(vshape[ax])) for ax in axes}
    if region.kind == "rows":
        ax = region.dim - offset
        if ax in full and vshape[ax] > 1:
            full[ax] = Item("slice", ax, range(region.lo, region.hi))
    if region.kind != "take":
        return Key(tuple(items) + tuple(full[ax] for ax in axes), tuple(vshape), "basic")
    lo, hi = region.dim, region.dim + region.ndims
    inside = [ax for ax in axes if lo <= ax + offset < hi]
    if not inside:
        return Key(tuple(items) + tuple(full[ax] for ax in axes), tuple(vshape), "basic")
    if all(vshape[ax] == 1 for ax in inside):
        for ax in inside[1:]:
            full[ax] = Item("int", ax, 0)
        return Key(tuple(items) + tuple(full[ax] for ax in axes), tuple(vshape), "basic")
    coords = np.unravel_index(region.positions, shape[lo:hi])
    for ax in inside:
        c = coords[ax + offset - lo].astype(np.int64)
        full[ax] = Item("array", ax, c if vshape[ax] > 1 else np.zeros_like(c))
    bshape = (len(region.positions),)
    return Key(tuple(items) + tuple(full[ax] for ax in axes), tuple(vshape), "advanced", bshape)


# ------------------------------------------------------------- chunk tasks
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


def _empty(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    return np.empty(shape, dtype=dtype)


def assign(chunk: np.ndarray, key: tuple, value, mask=None) -> np.ndarray:
    """A copy of ``chunk`` with ``value`` assigned at ``key`` (inputs are never mutated)."""
    out = chunk.copy()
    out[_fill(key, mask)] = value
    return out


def run_fetch(plan: FetchPlan, chunks: list, dtype, masks=None) -> np.ndarray:
    """Execute ``plan`` on in-memory chunks (what the tasks do; used to test plans)."""
    if not plan.pieces:
        return _empty(plan.shape, dtype)
    parts = [pick(chunks[s], k, None if masks is None else masks[s]) for s, k in plan.pieces]
    return join(parts, plan.axis, plan.order, plan.shape)


# ------------------------------------------------------------ graph builders
def _chunk_key(x: da.Array, split: int | None, rank: int) -> tuple:
    return (x.name, *block_index(split, x.ndim, 0 if split is None else rank))


def _chunk_shape(x: da.Array, split: int | None, rank: int) -> tuple[int, ...]:
    return tuple(c[rank] if a == split else c[0] for a, c in enumerate(x.chunks))


def _is_whole(key: tuple, shape: tuple[int, ...]) -> bool:
    return len(key) == len(shape) and all(
        isinstance(k, slice) and k.indices(n) == (0, n, 1) for k, n in zip(key, shape, strict=True)
    )


def _fetch_into(
    dsk: dict, hints: dict, out_key, target: int, src, plan: FetchPlan, mask_for, dtype
) -> None:
    """Add the tasks that assemble ``plan`` on rank ``target`` under ``out_key``.

    ``src`` is ``(dask array, split)``; each piece is sliced on its source rank
    (a pinned task Dask does not fuse away), so only the piece travels.
    """
    x, split = src
    hints[out_key] = target
    if not plan.pieces:
        dsk[out_key] = Task(out_key, _empty, plan.shape, dtype)
        return
    (s0, k0) = plan.pieces[0]
    if len(plan.pieces) == 1 and plan.order is None and s0 == target:
        ref = TaskRef(_chunk_key(x, split, s0))
        dsk[out_key] = Task(out_key, take, ref, k0, plan.shape, mask_for(s0))
        return
    refs = []
    for j, (s, k) in enumerate(plan.pieces):
        ref = TaskRef(_chunk_key(x, split, s))
        if mask_for(s) is None and _is_whole(k, _chunk_shape(x, split, s)):
            refs.append(ref)
            continue
        piece = (f"{out_key[0]}-piece", target, j)
        dsk[piece] = _distribution.SliceTask(piece, pick, ref, k, mask_for(s))
        hints[piece] = s
        refs.append(TaskRef(piece))
    dsk[out_key] = Task(out_key, join, List(*refs), plan.axis, plan.order, plan.shape)


def _no_mask(rank: int) -> None:
    return None


# ------------------------------------------------------------ preparation
def _host_indices(entries: tuple) -> tuple:
    """Compute the DNDarrays of a key that are index metadata (not lazy masks)."""
    mode = key_mode(entries)
    out = []
    for e in entries:
        if _is_dnd(e) and e.dtype.kind in "iu":
            e = _leaf(e.numpy())
        elif _is_dnd(e) and mode == "advanced":
            if e.ndim != 1:
                raise NotImplementedError(
                    "`key` with a multi-dimensional DNDarray mask next to other integer or "
                    "array indices is not supported"
                )
            e = e.numpy()
        out.append(e)
    return tuple(out)


def _normalized(a, key) -> Key:
    return normalize_key(_host_indices(leaves(key)), a.shape)


def _the_mask(key: Key) -> tuple[int, Item]:
    return next((pos, it) for pos, it in enumerate(key.items) if it.kind == "mask")


def _covers(it: Item, split: int | None) -> bool:
    return split is not None and it.axis <= split < it.axis + it.value.ndim


class _Mask(NamedTuple):
    """A mask laid out for an array: what each rank's task gets, and its counts table."""

    arg: Any  # callable rank -> mask argument of that rank's task
    table: Any  # callable () -> per-rank True counts (or the total)
    array: Any  # the aligned mask DNDarray (a graph dependency), or None


def _aligned_dnd_mask(mask, a, it: Item):
    """The DNDarray ``mask`` laid out like ``a``'s chunks (whole if it misses the split axis)."""
    if mask.comm != a.comm:
        raise ValueError(
            f"`key` mask must share the array's comm, got {mask.comm!r} and {a.comm!r}"
        )
    if not _covers(it, a.split):
        return mask.resplit(None), None
    axis = a.split - it.axis
    out = mask if mask.split == axis else mask.resplit(axis)
    counts = list(a.counts_displs()[0])
    if out.lshape_map[:, axis].tolist() != counts:
        target = out.lshape_map
        target[:, axis] = torch.tensor(counts)
        out = out.redistribute(target_map=target)
    return out, axis


def _count_block(chunk: np.ndarray, axis: int) -> np.ndarray:
    return np.asarray(chunk.sum(axis=tuple(range(axis, chunk.ndim)), dtype=np.int64))[None]


def _true_table(mask, axis: int | None) -> np.ndarray:
    """Per rank, the number of ``True`` for each index of the axes before ``axis`` (computed)."""
    axis = 0 if axis is None else axis
    keys = mask._chunk_keys()
    prefix = mask.shape[:axis]
    name = f"count-true-{tokenize(mask.to_dask().name, axis)}"
    dsk, table = {}, mask._placement()
    for r, src in enumerate(keys):
        key = (name, r, *(0,) * len(prefix))
        dsk[key] = Task(key, _count_block, TaskRef(src), axis)
        table[key] = mask.comm.workers[r]
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[mask.to_dask()])
    chunks = ((1,) * len(keys), *((n,) for n in prefix))
    counts = da.Array(graph, name, chunks, meta=meta_of(np.dtype(np.int64), len(chunks)))
    return _compute.compute(counts, mask.comm.client, table)


def _laid_out_mask(a, it: Item) -> _Mask:
    """The mask of ``it`` prepared for ``a``'s layout, numpy or DNDarray."""
    mask = it.value
    covered = _covers(it, a.split)
    if _is_dnd(mask):
        aligned, axis = _aligned_dnd_mask(mask, a, it)
        keys = aligned._chunk_keys()

        def arg(rank: int):
            return TaskRef(keys[rank if covered else 0])

        return _Mask(arg, lambda: _true_table(aligned, axis), aligned)
    if not covered:
        return _Mask(lambda rank: mask, lambda: np.array([np.count_nonzero(mask)]), None)
    axis = a.split - it.axis
    pieces = np.split(mask, np.cumsum(a.counts_displs()[0])[:-1], axis=axis)
    table = np.stack([p.sum(axis=tuple(range(axis, mask.ndim))) for p in pieces])
    return _Mask(lambda rank: pieces[rank], lambda: table, None)


# ------------------------------------------------------------------ getitem
def getitem(a, key):
    """``a[key]``: basic, integer-array and boolean indexing with Heat's result layout.

    Values are numpy's; the split of the result follows the rules in this
    module's docstring (a slice of the split axis stays local and keeps the
    split, an int on it gives ``split=None``, arrays on it give a balanced
    result, a mask gives each rank its ``True`` elements).

    Parameters
    ----------
    a : DNDarray
        The indexed array.
    key : int, slice, Ellipsis, None, array-like, DNDarray or tuple of them
        The index, as numpy reads it.

    Returns
    -------
    DNDarray
        A new array (never a view; ``a`` is unchanged).

    Examples
    --------
    >>> import dndask as ht
    >>> a = ht.arange(10, split=0, comm=ht.get_comm().subcomm([0, 1, 2]))
    >>> b = a[2:9:2]
    >>> b.numpy().tolist(), b.split, b.lshape_map.tolist(), b.balanced
    ([2, 4, 6, 8], 0, [[1], [2], [1]], False)
    >>> a[-1].split is None, a[-1].item()
    (True, 9)
    >>> c = a[a % 3 == 0]
    >>> c.numpy().tolist(), c.lshape_map.tolist()
    ([0, 3, 6, 9], [[2], [1], [1]])
    """
    norm = _normalized(a, key)
    if norm.mode == "mask":
        return _getitem_masked(a, norm)
    counts = a.counts_displs()[0] if a.split is not None else ()
    plan = plan_getitem(norm, a.split, counts)
    return _build_get(a, plan, _no_mask, None, tokenize(norm))


def _getitem_masked(a, norm: Key):
    _, it = _the_mask(norm)
    if _covers(it, a.split) and a.split != it.axis:
        # C order over the mask's axes interleaves the ranks: split on its first axis
        a = a.resplit(it.axis)
    mask = _laid_out_mask(a, it)
    counts = a.counts_displs()[0] if a.split is not None else ()
    plan = plan_getitem(norm, a.split, counts, mask.table())
    token = tokenize(norm, None if mask.array is None else mask.array.to_dask().name)
    return _build_get(a, plan, mask.arg, mask.array, token)


def _build_get(a, plan: GetPlan, mask_for, mask_array, token: str):
    x = a.to_dask()
    name = f"getitem-{tokenize(x.name, token, plan.split, plan.counts)}"
    ndim = len(plan.shape)
    dsk: dict = {}
    hints: dict = {}
    for r, fetch in enumerate(plan.fetches):
        out_key = (name, *block_index(plan.split, ndim, r))
        _fetch_into(dsk, hints, out_key, r, (x, a.split), fetch, mask_for, a.dtype)
    deps = [x] if mask_array is None else [x, mask_array.to_dask()]
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=deps)
    chunks = _layout.chunks_for(plan.shape, plan.split, plan.counts or None)
    out = da.Array(graph, name, chunks, meta=meta_of(a.dtype, ndim))
    parents = (a,) if mask_array is None else (a, mask_array)
    result = _dndarray.from_dask(out, plan.split, a.comm, parents=parents)
    result._hints.update(hints)
    return result


# ------------------------------------------------------------------ setitem
_PY_SCALARS = (bool, int, float, complex)


def _value(value, dtype: np.dtype):
    """``value`` as a numpy array or DNDarray, checked to cast to ``dtype`` (same_kind)."""
    if _is_dnd(value):
        vdtype = value.dtype
    elif isinstance(value, _PY_SCALARS):
        vdtype = np.result_type(dtype, value)  # Python scalars are weak, as in numpy
        if np.can_cast(vdtype, dtype, "same_kind"):
            try:
                value = np.asarray(value, dtype=dtype)
            except OverflowError:
                raise ValueError(f"`value` {value!r} is out of bounds for {dtype}") from None
    else:
        value = from_torch(value) if isinstance(value, torch.Tensor) else np.asarray(value)
        if value.dtype.kind not in "biufc":
            raise TypeError(f"`value` must be numeric or boolean, got dtype {value.dtype}")
        vdtype = value.dtype
    if not np.can_cast(vdtype, dtype, "same_kind"):
        raise TypeError(
            f"`value` of dtype {vdtype} cannot be cast to the array's dtype {dtype} "
            "(same_kind rule)"
        )
    return value


def _needs_flat_counts(vshape: tuple[int, ...], shape: tuple[int, ...], dim: int) -> bool:
    """Whether the value varies along selection dimension ``dim`` (so positions matter)."""
    ax = dim - (len(shape) - len(vshape))
    return 0 <= ax < len(vshape) and vshape[ax] > 1


def _set_plan(a, norm: Key, vshape: tuple[int, ...]):
    """Check the value's shape and plan the assignment; returns ``(plan, mask)``."""
    counts = a.counts_displs()[0] if a.split is not None else ()
    if norm.mode != "mask":
        plan = plan_setitem(norm, a.split, counts)
        check_value_shape(vshape, plan.shape)
        return plan, None
    _, it = _the_mask(norm)
    mask = _laid_out_mask(a, it)
    table = None
    if norm.bshape is not None:  # a numpy mask: its counts are free
        table = mask.table()
    else:
        probe = result_layout(norm._replace(bshape=(-1,)))
        d = probe.dims.index(("adv", 0))
        if _needs_flat_counts(vshape, probe.shape, d):
            table = mask.table()
    plan = plan_setitem(norm, a.split, counts, table)
    check_value_shape(vshape, plan.shape)
    return plan, mask


def setitem(a, key, value) -> None:
    """``a[key] = value`` in place: ``a``'s graph is replaced, its chunks keep their sizes.

    ``value`` (scalar, numpy array, torch tensor, list or DNDarray) is
    broadcast to the selection as in numpy; each rank gets only the part of
    it that lands in its chunk. Everything is checked first: a failed
    assignment leaves ``a`` exactly as it was.

    Parameters
    ----------
    a : DNDarray
        The array to change.
    key : int, slice, Ellipsis, None, array-like, DNDarray or tuple of them
        The index, as numpy reads it.
    value : scalar, array-like or DNDarray
        What to assign; its dtype must cast to ``a.dtype`` (same_kind).

    Examples
    --------
    >>> import dndask as ht
    >>> a = ht.zeros((4, 3), split=0, comm=ht.get_comm().subcomm([0, 1]))
    >>> a[1:3, 0] = ht.array([5.0, 6.0], split=0, comm=a.comm)
    >>> a[a == 0] = -1
    >>> a.numpy().tolist()
    [[-1.0, -1.0, -1.0], [5.0, -1.0, -1.0], [6.0, -1.0, -1.0], [-1.0, -1.0, -1.0]]
    >>> a.lshape_map.tolist()
    [[2, 3], [2, 3]]
    """
    norm = _normalized(a, key)
    value = _value(value, a.dtype)
    if _is_dnd(value) and value.comm != a.comm:
        raise ValueError(f"`value` must share the array's comm, got {value.comm!r} and {a.comm!r}")
    plan, mask = _set_plan(a, norm, tuple(value.shape))
    if all(t is None for t in plan.targets):
        return
    array, hints = _build_set(a, norm, plan, value, mask)
    a._set(array, a.split, hints)


def _value_arg(dsk, hints, value, vkey: Key, out_key, rank: int, dtype):
    """What rank ``rank``'s assignment task gets: a numpy piece, or a ref to fetched rows."""
    if not _is_dnd(value):
        return np.array(value[local_key(vkey.items)])
    counts = value.counts_displs()[0] if value.split is not None else ()
    fetch = plan_fetch(vkey, value.split, counts)
    key = (f"{out_key[0]}-value", rank)
    _fetch_into(dsk, hints, key, rank, (value.to_dask(), value.split), fetch, _no_mask, dtype)
    return TaskRef(key)


def _build_set(a, norm: Key, plan: SetPlan, value, mask) -> tuple[da.Array, dict]:
    x = a.to_dask()
    vtoken = value.to_dask().name if _is_dnd(value) else value
    mtoken = None if mask is None or mask.array is None else mask.array.to_dask().name
    name = f"setitem-{tokenize(x.name, norm, vtoken, mtoken)}"
    mask_for = _no_mask if mask is None else mask.arg
    dsk: dict = {}
    hints: dict = {}
    for r, target in enumerate(plan.targets):
        out_key = (name, *block_index(a.split, x.ndim, r))
        old = _chunk_key(x, a.split, r)
        if target is None:
            dsk[out_key] = Alias(out_key, old)
            continue
        local, region = target
        vkey = value_key(tuple(value.shape), plan.shape, region)
        arg = _value_arg(dsk, hints, value, vkey, out_key, r, value.dtype)
        dsk[out_key] = Task(out_key, assign, TaskRef(old), local, arg, mask_for(r))
    deps = [x]
    if _is_dnd(value):
        deps.append(value.to_dask())
        hints = {**value._lineage(), **hints}
    if mask is not None and mask.array is not None:
        deps.append(mask.array.to_dask())
        hints = {**mask.array._lineage(), **hints}
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=deps)
    return da.Array(graph, name, x.chunks, meta=x._meta), hints
