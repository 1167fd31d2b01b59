"""Keys of ``a[key]``: their entries read, checked against a shape and normalised (pure).

:func:`normalize_key` turns a key into a :class:`Key`, one :class:`Item` per
entry with every axis covered; :func:`local_key` turns items back into the
numpy key a chunk is indexed with. Nothing here touches array data or the
scheduler: DNDarrays in a key must be computed first (see ``_prepare``),
except a boolean DNDarray that is the only advanced index (a lazy mask).

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

Errors
------
Bad indices raise ``IndexError`` as numpy does (out of bounds, too many
indices, a mask whose shape does not match, float indices or arrays, arrays
that do not broadcast), a slice with a float bound is a ``TypeError``, and
scalar booleans as keys or a multi-dimensional DNDarray mask next to other
advanced indices a ``NotImplementedError``. (Errors of the value assigned are
raised by ``_setplan`` and ``_setitem``.)
"""

from __future__ import annotations

import numbers
from typing import Any, NamedTuple

import numpy as np

from .. import _torch
from .._abc import DistributedArray

# Stands for the mask in a local key; the task receives the mask piece separately.
MASK = "<mask>"

_VALID = (
    "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) "
    "and integer or boolean arrays are valid indices"
)
_SCALAR_BOOL = "`key` scalar booleans (0-d masks) are not supported"
DND_MASK_WITH_ARRAYS = (
    "`key` with a multi-dimensional DNDarray mask next to other integer or "
    "array indices is not supported"
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


# ----------------------------------------------------------------- key leaves
def is_dnd(obj: object) -> bool:
    """Whether ``obj`` is a DNDarray."""
    return isinstance(obj, DistributedArray)


def _is_array(obj: object) -> bool:
    return isinstance(obj, np.ndarray) or is_dnd(obj)


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
            raise NotImplementedError(f"{_SCALAR_BOOL}; use None to add an axis")
        return arr
    if arr.dtype.kind in "iu":
        return int(arr) if arr.ndim == 0 else arr
    if isinstance(raw, (list, tuple)) and arr.size == 0:
        return arr.astype(np.int64)  # numpy reads an empty list as an integer index
    raise IndexError(
        f"`key` arrays used as indices must be of integer (or boolean) type, got {arr.dtype}"
    )


def leaf(obj: object):
    """One entry of a key in canonical form (ints, slices, None, ..., arrays, DNDarrays)."""
    if obj is None or obj is Ellipsis:
        return obj
    if isinstance(obj, slice):
        return _check_slice(obj)
    if isinstance(obj, (bool, np.bool_)):
        raise NotImplementedError(f"{_SCALAR_BOOL}; use None to add an axis")
    if isinstance(obj, numbers.Integral):
        return int(obj)
    if is_dnd(obj):
        if obj.dtype.kind not in "biu":
            raise IndexError(
                f"`key` arrays used as indices must be of integer (or boolean) type, "
                f"got {obj.dtype}"
            )
        if obj.dtype.kind == "b" and obj.ndim == 0:
            raise NotImplementedError(_SCALAR_BOOL)
        return obj
    if _torch.is_tensor(obj):
        return _array_leaf(_torch.from_torch(obj), obj)
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
    return tuple(leaf(k) for k in items)


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
        elif is_dnd(e):
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
            if is_dnd(it.value):
                raise NotImplementedError(DND_MASK_WITH_ARRAYS)
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
        bshape = None if is_dnd(mask) else (int(np.count_nonzero(mask)),)
        return Key(items, shape, mode, bshape)
    items, bshape, from_mask = _advanced(items)
    return Key(items, shape, mode, bshape, from_mask)


# ---------------------------------------------------------------- key queries
def the_mask(key: Key) -> tuple[int, Item]:
    """The position in ``key.items`` of the (first) mask item, and the item."""
    return next((pos, it) for pos, it in enumerate(key.items) if it.kind == "mask")


def covers(it: Item, split: int | None) -> bool:
    """Whether the mask item ``it`` spans the split axis."""
    return split is not None and it.axis <= split < it.axis + it.value.ndim


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
