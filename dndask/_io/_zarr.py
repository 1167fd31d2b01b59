"""zarr: load an array rank by rank, save one with every rank writing its own chunks.

A save picks the store's chunking so that each rank's rows are whole chunks
(:func:`_zarr_layout`), so the ranks write at the same time.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _comm, _dndarray, _layout
from .._distribution import relayout
from . import _checks, _files, _tasks

# Largest zarr chunk dndask aims for when it picks the store's chunking.
_ZARR_CHUNK_BYTES = 64 * 2**20


def _zarr_array(path: str, component: str | None):
    zarr = _checks.require("zarr", "load_zarr")
    _files.check_exists(path)
    try:
        node = zarr.open(store=path, mode="r")
    except Exception as exc:  # zarr's own errors differ between versions
        node, problem = None, str(exc)
    if node is None:
        raise ValueError(f"`path` {path!r} is not a zarr store: {problem}")
    is_group = isinstance(node, zarr.Group)
    if component is None:
        if is_group:
            raise ValueError(
                f"`component` must name an array of the zarr group {path!r}, got None; "
                f"it holds {sorted(node.array_keys())}"
            )
        return node
    if not is_group or component not in node or not isinstance(node[component], zarr.Array):
        held = sorted(node.array_keys()) if is_group else "a single array, no group"
        raise KeyError(f"`component` {component!r} is not an array of {path!r}; it holds {held}")
    return node[component]


def _zarr_dims(array) -> tuple[str, ...] | None:
    """Dimension names: zarr v3 metadata, or xarray's v2 attribute."""
    names = getattr(getattr(array, "metadata", None), "dimension_names", None)
    if names is None:
        names = array.attrs.get("_ARRAY_DIMENSIONS")
    if names is None or any(n is None for n in names):
        return None
    return tuple(names)


def _zarr_meta(path: str, component: str | None):
    array = _zarr_array(path, component)
    shape = tuple(int(s) for s in array.shape)
    return shape, np.dtype(array.dtype).str, _zarr_dims(array), _files.stamp(path)


def _read_zarr(offsets, lshape, path, component, dtype, stamp):
    """Rank chunk reader: the rows of this rank, straight from the store."""
    empty = _tasks.empty_block(lshape, dtype)
    if empty is not None:
        return empty
    zarr = _checks.require("zarr", "load_zarr")
    _files.check_unchanged(path, stamp)
    array = zarr.open_array(store=path, mode="r", path=component or "")
    block = np.asarray(array[_tasks.slab(offsets, lshape)])
    _files.check_unchanged(path, stamp, block.shape, lshape)  # no change while reading either
    return block.astype(dtype, copy=False)


def load_zarr(path, split=0, component=None, comm=None) -> _dndarray.DNDarray:
    """Load a zarr array; each rank reads only its own slab, on its worker.

    ``path`` is a zarr store holding one array, or a group whose array
    ``component`` names. ``split`` is an axis or a dimension name (zarr v3
    ``dimension_names`` or xarray's ``_ARRAY_DIMENSIONS``). Lazy, like
    :func:`load_hdf5`.

    Parameters
    ----------
    path : str or os.PathLike
        The store (a folder).
    split : int, str or None
        The axis or dimension name to distribute along.
    component : str, optional
        The array's name inside a group store.
    comm : Comm, optional
        The ranks; the default comm otherwise.

    Returns
    -------
    DNDarray

    Examples
    --------
    >>> import dndask as ht, os, tempfile
    >>> folder = tempfile.TemporaryDirectory()  # removed when the doctest ends
    >>> path = os.path.join(folder.name, "x.zarr")
    >>> ht.save_zarr(ht.arange(6, split=0), path)
    >>> ht.load_zarr(path, split=0).numpy().tolist()
    [0, 1, 2, 3, 4, 5]
    """
    path = _files.as_path(path)
    _checks.check_name(component, "component", optional=True)
    _checks.check_split_type(split, names=True)
    _checks.require("zarr", "load_zarr")
    comm = _comm.sanitize_comm(comm)
    shape, dtype, dims, stamp = _tasks.on_rank0(comm, _zarr_meta, path, component)
    what = "the zarr array" if component is None else f"`component` {component!r}"
    dtype = _checks.check_loadable(dtype, what)
    axis = _checks.split_axis(split, shape, dims, what)
    return _tasks.lazy_load(
        "load-zarr", _read_zarr, shape, dtype, axis, comm, (path, component, dtype, stamp)
    )


def _zarr_rows(shape, split: int, size: int, itemsize: int) -> int:
    """Rows per zarr chunk along ``split``: a rank's share, capped near 64 MiB per chunk."""
    row_bytes = itemsize * math.prod(s for ax, s in enumerate(shape) if ax != split)
    per_rank = max(1, math.ceil(shape[split] / size))
    return max(1, min(per_rank, _ZARR_CHUNK_BYTES // max(1, row_bytes)))


def _zarr_layout(a: _dndarray.DNDarray) -> tuple[_dndarray.DNDarray, tuple[int, ...]]:
    """``a`` laid out so that every rank's slab is whole zarr chunks, and the chunk shape.

    Ranks writing whole chunks never touch the same chunk, so they write in
    parallel. A rank holds a multiple of the chunk rows (the last one the
    rest); if ``a``'s counts differ, a lazy redistribution moves the few rows
    at the boundaries.
    """
    shape = a.shape
    split = 0 if a.split is None else a.split
    if not shape:
        return a, ()
    size = 1 if a.split is None else a.comm.size
    rows = _zarr_rows(shape, split, size, a.dtype.itemsize)
    chunks = tuple(rows if ax == split else max(1, s) for ax, s in enumerate(shape))
    if a.split is None:
        return a, chunks
    per_rank = rows * math.ceil(max(1, math.ceil(shape[split] / size)) / rows)
    n = shape[split]
    counts = [min(per_rank, max(0, n - r * per_rank)) for r in range(size)]
    return relayout(a, a.distribution.with_counts(counts)), chunks


def _create_zarr(tmp: str, component, shape, dtype, chunks, dims) -> None:
    zarr = _checks.require("zarr", "save_zarr")
    v3 = int(zarr.__version__.split(".")[0]) >= 3
    names = {"dimension_names": dims} if dims is not None and v3 else {}
    if component is not None:
        zarr.open_group(store=tmp, mode="w")
    array = zarr.open_array(
        store=tmp, mode="w", path=component or "", shape=shape, chunks=chunks, dtype=dtype, **names
    )
    if dims is not None and not v3:
        array.attrs["_ARRAY_DIMENSIONS"] = list(dims)


def _write_zarr(tmp: str, component, slices, block, after) -> None:
    zarr = _checks.require("zarr", "save_zarr")
    zarr.open_array(store=tmp, mode="r+", path=component or "")[slices] = block


def _finish_zarr(tmp: str, *writes) -> None:
    """Consolidate a group's metadata so xarray opens it in one read."""
    zarr = _checks.require("zarr", "save_zarr")
    with warnings.catch_warnings():
        # zarr 3 warns that consolidated metadata is not in the v3 spec; readers that
        # do not know it read the ordinary metadata
        warnings.simplefilter("ignore")
        zarr.consolidate_metadata(tmp)


def save_zarr(a, path, component=None, mode="w-", dims=None) -> None:
    """Save ``a`` as a zarr array; every rank writes its own chunks, all in parallel.

    The store is chunked along the split axis so that each rank's rows are
    whole chunks (a rank's share, capped near 64 MiB per chunk, and one chunk
    along every other axis): ranks never share a chunk, so they write at the
    same time. If ``a``'s counts are not multiples of the chunk rows (e.g.
    Heat's balanced counts 3, 2, 2), the rows at the boundaries first move
    to the neighbouring rank. The store is written under a temporary name and
    renamed to ``path`` at the end.

    Parameters
    ----------
    a : DNDarray
        Any split.
    path : str or os.PathLike
        The store (a folder) to create.
    component : str, optional
        Write a group with the array under this name (xarray reads groups).
    mode : {'w-', 'w'}
        ``'w-'`` refuses an existing ``path``; ``'w'`` replaces a zarr store (only).
    dims : sequence of str, optional
        Dimension names, stored as xarray expects them.

    Examples
    --------
    >>> import dndask as ht, os, tempfile, zarr
    >>> folder = tempfile.TemporaryDirectory()  # removed when the doctest ends
    >>> path = os.path.join(folder.name, "x.zarr")
    >>> ht.save_zarr(ht.arange(7, split=0), path)
    >>> zarr.open_array(path, mode="r")[:].tolist()
    [0, 1, 2, 3, 4, 5, 6]
    """
    _checks.check_dndarray(a)
    _checks.check_name(component, "component", optional=True)
    if dims is not None:
        dims = _layout.normalize_dims(dims, a.ndim, strings=True)
    target, tmp = _tasks.prepare(a, path, mode, "save_zarr", "zarr", kind="zarr")
    a, chunks = _zarr_layout(a)
    plan = _tasks.WritePlan(a, "save-zarr")
    create = plan.create(_create_zarr, tmp, component, a.shape, a.dtype.str, chunks, dims)
    writes = _tasks.add_writes(plan, _write_zarr, tmp, component, after=create, in_turn=False)
    if component is not None:
        plan.add(f"{plan.name}-finish", 0, _finish_zarr, tmp, create, *writes)
    _tasks.execute(plan, tmp, target, mode, kind="zarr")
