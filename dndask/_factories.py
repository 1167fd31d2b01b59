"""Factories: DNDarrays from data, from per-rank pieces, or generated on the workers."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable

import dask.array as da
import numpy as np

from . import _comm, _graph, _layout, _per_rank, _torch, _types, _xp
from ._dndarray import DNDarray
from ._dndarray import from_dask as _wrap_dask

sanitize_comm = _comm.sanitize_comm


def from_function(
    prefix: str,
    fn: Callable,
    shape: tuple[int, ...],
    dtype: np.dtype,
    split: int | None,
    counts: tuple[int, ...],
    comm: _comm.Comm,
    args: tuple = (),
    meta=None,
) -> DNDarray:
    """A DNDarray whose chunks ``fn(offsets, lshape, *args)`` computes on the workers."""
    x = _graph.from_chunk_function(
        prefix, fn, shape, dtype, split, counts, args, meta, place=comm.workers
    )
    return DNDarray(x, split, comm)


def _generated(prefix, fn, shape, dtype, split, comm, args=(), device=None) -> DNDarray:
    """``fn(offsets, lshape, meta, *args)`` on the workers; ``meta`` is the chunk type."""
    shape = _layout.normalize_shape(shape)
    split = _layout.normalize_axis(split, len(shape), "split")
    meta = _xp.meta(dtype, len(shape), device)  # an unusable device fails here, in the driver
    comm = sanitize_comm(comm)  # after the checks: a bad call starts no cluster
    counts = _layout.balanced_counts(shape[split], comm.size) if split is not None else ()
    return from_function(prefix, fn, shape, dtype, split, counts, comm, (meta, *args), meta)


# ----------------------------------------------------------------- chunk makers
# Each takes the chunk type's ``meta`` and allocates in its namespace (numpy or CuPy).
def _full_chunk(offsets, lshape, meta, value, dtype):
    return _xp.namespace_of(meta).full(lshape, value, dtype=dtype)


def _empty_chunk(offsets, lshape, meta, dtype):
    return _xp.empty_like_meta(meta, lshape, dtype)


def _arange_chunk(offsets, lshape, meta, start, step, dtype):
    xp = _xp.namespace_of(meta)
    index = xp.arange(offsets[0], offsets[0] + lshape[0])
    if np.dtype(dtype).kind in "iu":
        return (start + step * index).astype(dtype)
    return (start + step * index.astype(np.float64)).astype(dtype)


def _linspace_chunk(offsets, lshape, meta, start, stop, step, num, endpoint, dtype):
    index = _xp.namespace_of(meta).arange(offsets[0], offsets[0] + lshape[0], dtype=np.float64)
    values = start + step * index
    if endpoint and num > 1 and lshape[0] > 0 and offsets[0] + lshape[0] == num:
        values[-1] = stop
    return values.astype(dtype)


def _eye_chunk(offsets, lshape, meta, dtype):
    xp = _xp.namespace_of(meta)
    rows = xp.arange(offsets[0], offsets[0] + lshape[0]).reshape(-1, 1)
    cols = xp.arange(offsets[1], offsets[1] + lshape[1]).reshape(1, -1)
    return (rows == cols).astype(dtype)


# -------------------------------------------------------------------- creation
def zeros(shape, dtype=_types.float32, split=None, comm=None, device=None) -> DNDarray:
    """An array of zeros (float32 by default, as in Heat).

    >>> import dndask as ht
    >>> ht.zeros((2, 3), split=1).numpy().tolist()
    [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    """
    return full(shape, 0, dtype=dtype, split=split, comm=comm, device=device)


def ones(shape, dtype=_types.float32, split=None, comm=None, device=None) -> DNDarray:
    """An array of ones.

    >>> import dndask as ht
    >>> int(ht.ones(5, split=0).sum())
    5
    """
    return full(shape, 1, dtype=dtype, split=split, comm=comm, device=device)


def empty(shape, dtype=_types.float32, split=None, comm=None, device=None) -> DNDarray:
    """An array with unspecified values.

    >>> import dndask as ht
    >>> ht.empty((4, 2), split=0).shape
    (4, 2)
    """
    dtype = _types.canonical_dtype(dtype)
    return _generated("empty", _empty_chunk, shape, dtype, split, comm, (dtype,), device)


def full(shape, fill_value, dtype=_types.float32, split=None, comm=None, device=None) -> DNDarray:
    """An array filled with ``fill_value``.

    >>> import dndask as ht
    >>> ht.full(3, 7, dtype=ht.int64).numpy().tolist()
    [7, 7, 7]
    """
    if not _types.is_scalar(fill_value):
        raise TypeError(f"`fill_value` must be a scalar, got {type(fill_value).__name__}")
    dtype = _types.canonical_dtype(dtype)
    args = (fill_value, dtype)
    return _generated("full", _full_chunk, shape, dtype, split, comm, args, device)


def _like(a, dtype, split, comm, device):
    if not isinstance(a, DNDarray):
        raise TypeError(f"`a` must be a DNDarray, got {type(a).__name__}")
    return (
        a.shape,
        a.dtype if dtype is None else dtype,
        a.split if split == "same" else split,
        a.comm if comm is None else comm,
        a.device if device is None else device,
    )


def zeros_like(a: DNDarray, dtype=None, split="same", comm=None, device=None) -> DNDarray:
    """Zeros with the shape (and by default dtype, split, comm and device) of ``a``.

    >>> import dndask as ht
    >>> ht.zeros_like(ht.ones((2, 2), split=0)).split
    0
    """
    shape, dtype, split, comm, device = _like(a, dtype, split, comm, device)
    return zeros(shape, dtype=dtype, split=split, comm=comm, device=device)


def ones_like(a: DNDarray, dtype=None, split="same", comm=None, device=None) -> DNDarray:
    """Ones shaped like ``a`` (on ``a``'s device unless ``device`` is given)."""
    shape, dtype, split, comm, device = _like(a, dtype, split, comm, device)
    return ones(shape, dtype=dtype, split=split, comm=comm, device=device)


def empty_like(a: DNDarray, dtype=None, split="same", comm=None, device=None) -> DNDarray:
    """An uninitialised array shaped like ``a`` (on ``a``'s device unless ``device`` is given)."""
    shape, dtype, split, comm, device = _like(a, dtype, split, comm, device)
    return empty(shape, dtype=dtype, split=split, comm=comm, device=device)


def full_like(
    a: DNDarray, fill_value, dtype=None, split="same", comm=None, device=None
) -> DNDarray:
    """``fill_value`` everywhere, shaped like ``a`` (on its device unless ``device`` is given)."""
    shape, dtype, split, comm, device = _like(a, dtype, split, comm, device)
    return full(shape, fill_value, dtype=dtype, split=split, comm=comm, device=device)


def arange(*args, dtype=None, split=None, comm=None, device=None) -> DNDarray:
    """Evenly spaced values in ``[start, stop)``: ``arange(stop)``, ``(start, stop[, step])``.

    Integer arguments give int64, any float argument float32 (Heat's default float).

    >>> import dndask as ht
    >>> ht.arange(1, 10, 3, split=0).numpy().tolist()
    [1, 4, 7]
    """
    if not 1 <= len(args) <= 3:
        raise TypeError(f"`arange` takes 1 to 3 positional arguments, got {len(args)}")
    for value in args:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"`arange` arguments must be real numbers, got {type(value).__name__}")
    start, stop, step = ((0, *args, 1) if len(args) == 1 else (*args, 1))[:3]
    if step == 0:
        raise ValueError("`step` must not be zero, got 0")
    num = max(0, math.ceil((stop - start) / step))
    if dtype is None:
        ints = all(isinstance(v, numbers.Integral) for v in args)
        dtype = _types.int64 if ints else _types.float32
    dtype = _types.canonical_dtype(dtype)
    args = (start, step, dtype)
    return _generated("arange", _arange_chunk, (num,), dtype, split, comm, args, device)


def linspace(
    start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False,
    dtype=None, split=None, comm=None, device=None,
):  # fmt: skip
    """``num`` evenly spaced samples from ``start`` to ``stop``.

    >>> import dndask as ht
    >>> ht.linspace(0, 1, 5, split=0).numpy().tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    for name, value in (("start", start), ("stop", stop)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"`{name}` must be a real number, got {type(value).__name__}")
    if isinstance(num, bool) or not isinstance(num, numbers.Integral):
        raise TypeError(f"`num` must be an int, got {type(num).__name__}")
    if num < 0:
        raise ValueError(f"`num` must be non-negative, got {num}")
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else 0.0
    dtype = _types.canonical_dtype(_types.float32 if dtype is None else dtype)
    out = _generated(
        "linspace", _linspace_chunk, (int(num),), dtype, split, comm,
        (float(start), float(stop), float(step), int(num), bool(endpoint), dtype), device,
    )  # fmt: skip
    return (out, step) if retstep else out


def eye(shape, dtype=_types.float32, split=None, comm=None, device=None) -> DNDarray:
    """The identity: ``shape`` is ``n`` or ``(n, m)``.

    >>> import dndask as ht
    >>> ht.eye(3, split=1).numpy().tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    shape = _layout.normalize_shape(shape)
    if len(shape) == 1:
        shape = (shape[0], shape[0])
    if len(shape) != 2:
        raise ValueError(f"`shape` must be n or (n, m), got {shape}")
    dtype = _types.canonical_dtype(dtype)
    return _generated("eye", _eye_chunk, shape, dtype, split, comm, (dtype,), device)


# ----------------------------------------------------------------------- array
def _is_piece(value) -> bool:
    return isinstance(value, (np.ndarray, da.Array, DNDarray)) or _torch.is_tensor(value)


def _to_numpy(obj, dtype, copy) -> np.ndarray:
    """Convert in-memory data, inferring Heat's dtypes for Python objects."""
    if _torch.is_tensor(obj):
        values = _torch.from_torch(obj)
        native = True
    elif isinstance(obj, np.ndarray):
        values, native = obj, True
    else:
        native = False
        try:
            values = np.asarray(obj)
        except ValueError as exc:
            raise ValueError(f"`obj` must be rectangular array data: {exc}") from None
        if values.dtype.kind not in "biufc":
            raise TypeError(f"`obj` must hold numbers, got {type(obj).__name__} of {values.dtype}")
    if values.dtype.kind not in "biufc":
        raise TypeError(f"`obj` must hold numbers, got dtype {values.dtype}")
    if dtype is None and not native:
        # Heat's defaults: Python floats are float32, complex numbers complex64
        dtype = {"f": _types.float32, "c": _types.complex64}.get(values.dtype.kind)
    if dtype is not None and dtype != values.dtype:
        if copy is False:
            raise ValueError(
                f"`copy` is False but converting {values.dtype} to {dtype} needs a copy"
            )
        return values.astype(dtype)
    return values.copy() if copy else values


def from_dask(x: da.Array, split: int | None = None, comm: _comm.Comm | None = None) -> DNDarray:
    """A DNDarray over the dask array ``x``, split along ``split``.

    Chunks already one per rank along ``split`` (and one along every other
    axis) are kept as they are: no data moves. Any other grid is rechunked
    to Heat's balanced layout: each row moves at most once, to its rank.
    ``split=None`` gathers ``x`` into one chunk. Unknown (nan) chunk sizes
    are a ValueError; call ``x.compute_chunk_sizes()`` first.

    Examples
    --------
    >>> import dndask as ht, dask.array as da
    >>> comm = ht.get_comm().subcomm([0, 1])
    >>> ht.from_dask(da.arange(5, chunks=(3, 2)), split=0, comm=comm).lshape_map.tolist()
    [[3], [2]]
    >>> ht.from_dask(da.arange(5, chunks=1), split=0, comm=comm).lshape_map.tolist()
    [[3], [2]]
    """
    if not isinstance(x, da.Array):
        raise TypeError(f"`x` must be a dask.array.Array, got {type(x).__name__}")
    if comm is not None and not isinstance(comm, _comm.Comm):
        raise TypeError(f"`comm` must be a dndask.Comm, got {type(comm).__name__}")
    return _wrap_dask(x, split, sanitize_comm(comm))


def array(
    obj,
    dtype=None,
    split: int | None = None,
    is_split: int | None = None,
    copy: bool | None = None,
    comm: _comm.Comm | None = None,
    device: _xp.Device | str | None = None,
) -> DNDarray:
    """Build a DNDarray from data (``split``) or from per-rank pieces (``is_split``).

    Parameters
    ----------
    obj : array-like, torch.Tensor, dask.array.Array, DNDarray, PerRank or sequence
        With ``split``: the whole global data, which is cut into balanced
        chunks and sent to the ranks. With ``is_split``: the pieces to join
        along that axis, a :class:`PerRank` (pieces stay on their workers) or
        a sequence of ``comm.size`` arrays (rank ``r`` gets piece ``r``).
    dtype : optional
        A numpy, torch or Python type; Python floats default to float32.
    split, is_split : int, optional
        Mutually exclusive.
    copy : bool, optional
        ``True`` copies the input first; ``False`` refuses a dtype change.
    comm : Comm, optional
        The ranks; the default comm (every worker) otherwise.
    device : str or Device, optional
        Where the chunks live (``"cpu"``, ``"gpu"``). Data from the driver goes to its
        rank's worker as host memory and is copied to the device there (one task per
        chunk). ``None``: DNDarrays, dask arrays and per-rank pieces keep their device,
        driver data goes to the default device (:func:`dndask.use_device`).

    Examples
    --------
    >>> import dndask as ht
    >>> a = ht.array([[1.0, 2.0], [3.0, 4.0]], split=0)
    >>> a.dtype, a.split
    (dtype('float32'), 0)
    >>> ht.array(a, split=0) is a
    True
    """
    if split is not None and is_split is not None:
        raise ValueError(
            f"`split` and `is_split` are mutually exclusive, got split={split} and "
            f"is_split={is_split}"
        )
    if copy is not None and not isinstance(copy, bool):
        raise TypeError(f"`copy` must be None or a bool, got {type(copy).__name__}")
    if comm is not None and not isinstance(comm, _comm.Comm):
        raise TypeError(f"`comm` must be a dndask.Comm, got {type(comm).__name__}")
    dtype = None if dtype is None else _types.canonical_dtype(dtype)
    # an unknown or unusable device fails here, in the driver, before any task
    target = None if device is None else _xp.sanitize_device(device)
    out = _array(obj, dtype, split, is_split, copy, comm)
    if target is None and not _keeps_device(obj):
        target = _xp.get_device()
    return out if target is None else out._on_device(target)


def _keeps_device(obj) -> bool:
    """Whether ``obj`` has a device of its own, which ``device=None`` keeps."""
    return isinstance(obj, (DNDarray, da.Array, _per_rank.PerRank)) or (
        isinstance(obj, (list, tuple)) and bool(obj) and all(_is_piece(p) for p in obj)
    )


def _array(obj, dtype, split, is_split, copy, comm) -> DNDarray:
    """:func:`array` on the chunks' own device (host memory for driver data)."""
    if isinstance(obj, DNDarray):
        return _from_dndarray(obj, dtype, split, is_split, copy, comm)
    if isinstance(obj, _per_rank.PerRank):
        if is_split is None:
            raise ValueError("`is_split` must name the axis to join a PerRank along, got None")
        if comm is not None and comm != obj.comm:
            raise ValueError(f"`comm` must be the PerRank's comm {obj.comm!r}, got {comm!r}")
        out = _per_rank.join_result(obj, is_split)
        return out if dtype is None else out.astype(dtype)
    comm = sanitize_comm(comm)
    if is_split is not None:
        if not isinstance(obj, (list, tuple)) or not all(_is_piece(p) for p in obj):
            raise TypeError(
                f"`is_split` needs one piece per rank: a PerRank from ht.per_rank or a sequence "
                f"of {comm.size} arrays, got {type(obj).__name__}"
            )
        out = _per_rank.from_pieces(obj, is_split, comm)
        return out if dtype is None else out.astype(dtype)
    if isinstance(obj, da.Array):
        split = _layout.normalize_axis(split, obj.ndim, "split")
        x = obj if dtype is None else obj.astype(dtype)
        return _wrap_dask(x, split, comm)
    values = _to_numpy(obj, dtype, copy)
    split = _layout.normalize_axis(split, values.ndim, "split") if values.ndim else None
    return _per_rank.scatter(values, split, comm)


def _from_dndarray(obj: DNDarray, dtype, split, is_split, copy, comm) -> DNDarray:
    if comm is not None and comm != obj.comm:
        raise ValueError(
            f"`comm` must match the array's comm {obj.comm!r}, got {comm!r}; "
            "build a new array from a.numpy() to move it"
        )
    out = obj
    if split is not None:
        split = _layout.normalize_axis(split, obj.ndim, "split")
        if obj.split is None:
            out = obj.resplit(split)
        elif obj.split != split:
            raise ValueError(
                f"`split` {split} does not match the array's split {obj.split}; "
                f"use ht.resplit(a, {split}) to change it"
            )
    if is_split is not None:
        is_split = _layout.normalize_axis(is_split, obj.ndim, "is_split")
        if obj.split != is_split:
            raise ValueError(
                f"`is_split` {is_split} does not match the array's split {obj.split}; "
                f"use a.resplit_({is_split}) to change it"
            )
    if dtype is not None and dtype != obj.dtype:
        if copy is False:
            raise ValueError(f"`copy` is False but converting {obj.dtype} to {dtype} needs a copy")
        out = out.astype(dtype)
    elif copy and out is obj:
        out = obj.copy()
    return out


def redistribute(arr: DNDarray, lshape_map=None, target_map=None) -> DNDarray:
    """Out-of-place redistribution: a copy of ``arr`` moved to ``target_map`` (balanced if None).

    >>> import dndask as ht, torch
    >>> a = ht.arange(10, split=0, comm=ht.get_comm().subcomm([0, 1, 2, 3]))
    >>> target = a.lshape_map
    >>> target[:, 0] = torch.tensor([1, 3, 3, 3])
    >>> ht.redistribute(a, target_map=target).lshape_map[:, 0].tolist()
    [1, 3, 3, 3]
    """
    _check_dndarray(arr, "arr")
    return arr.redistribute(lshape_map=lshape_map, target_map=target_map)


def resplit(arr: DNDarray, axis: int | None = None, *, method: str | None = None) -> DNDarray:
    """Out-of-place resplit: a copy of ``arr`` split along ``axis`` (gathered if None).

    ``method="shm"`` moves the pieces through ``/dev/shm`` (every rank on one
    host, numpy chunks): a post per source rank, a barrier, a collect per
    destination rank, ``2P + 1`` tasks. ``"tasks"`` builds one slice task per
    pair of ranks and keeps every chunk on its rank; ``"p2p"`` uses Dask's
    peer-to-peer rechunk, whose graph grows linearly with the ranks but whose
    output placement Dask decides. By default (``None``, or ``$DNDASK_RELAYOUT``)
    ``"shm"`` where it can, else ``"tasks"`` up to 64 ranks
    (``$DNDASK_P2P_THRESHOLD`` pieces) and ``"p2p"`` above.

    >>> import dndask as ht
    >>> ht.resplit(ht.zeros((4, 6), split=0), 1).split
    1
    """
    _check_dndarray(arr, "arr")
    return arr.resplit(axis, method=method)


def balance(arr: DNDarray, copy: bool = False) -> DNDarray:
    """Balance ``arr`` in place (``copy=False``, returns it) or return a balanced copy.

    >>> import dndask as ht
    >>> ht.balance(ht.zeros(5, split=0)).balanced
    True
    """
    _check_dndarray(arr, "arr")
    return arr.balance(copy=copy)


def collect(arr: DNDarray, target_rank: int = 0) -> DNDarray:
    """A copy of ``arr`` whose rows along ``split`` all sit on ``target_rank`` (Heat's ``collect``).

    The other ranks hold empty chunks; ``arr`` itself is unchanged. A ``split=None``
    array is returned as a copy (it already sits in one chunk). Heat-only (numpy
    has no such function); the in-place form is ``arr.redistribute_(target_map=...)``.

    Parameters
    ----------
    arr : DNDarray
        The array to gather.
    target_rank : int
        The rank, in ``[0, arr.comm.size)``, that receives every row.

    Examples
    --------
    >>> import dndask as ht
    >>> a = ht.arange(6, split=0, comm=ht.get_comm().subcomm([0, 1, 2]))
    >>> ht.collect(a, 2).lshape_map.tolist(), a.lshape_map.tolist()
    ([[0], [0], [6]], [[2], [2], [2]])
    """
    _check_dndarray(arr, "arr")
    if isinstance(target_rank, bool) or not isinstance(target_rank, numbers.Integral):
        raise TypeError(f"`target_rank` must be an int, got {type(target_rank).__name__}")
    if not 0 <= target_rank < arr.comm.size:
        raise ValueError(f"`target_rank` must be in [0, {arr.comm.size}), got {target_rank}")
    out = arr.copy()
    if arr.split is None:
        return out
    target = np.tile(np.asarray(arr.shape, dtype=np.int64), (arr.comm.size, 1))
    target[:, arr.split] = 0
    target[int(target_rank), arr.split] = arr.shape[arr.split]
    return out.redistribute_(target_map=target)


def _check_dndarray(value, name: str) -> None:
    if not isinstance(value, DNDarray):
        raise TypeError(f"`{name}` must be a DNDarray, got {type(value).__name__}")
