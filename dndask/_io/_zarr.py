"""zarr: load an array rank by rank, save one with every rank writing its own chunks.

A save picks the store's chunking so that each rank's rows are whole chunks
(:func:`_zarr_layout`), so the ranks write at the same time.
"""

from __future__ import annotations

import warnings

import dask.array as da
import numpy as np

from .. import _comm, _dndarray, _layout
from .._distribution import relayout
from . import _checks, _files, _labelled, _tasks

# Largest zarr chunk dndask aims for when it picks the store's chunking.
_ZARR_CHUNK_BYTES = _layout.STORE_CHUNK_BYTES


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
        if not is_group:
            return node
        data = _data_arrays(node)
        if len(data) != 1:
            raise ValueError(
                f"`component` must name an array of the zarr group {path!r}, got None; "
                f"it holds {sorted(node.array_keys())}"
            )
        return node[data[0]]
    if not is_group or component not in node or not isinstance(node[component], zarr.Array):
        held = sorted(node.array_keys()) if is_group else "a single array, no group"
        raise KeyError(f"`component` {component!r} is not an array of {path!r}; it holds {held}")
    return node[component]


def _data_arrays(group) -> list[str]:
    """The group's arrays that are not coordinates, as xarray tells them apart.

    A coordinate is an array named after a dimension, or one that another
    array's ``coordinates`` attribute lists.
    """
    arrays = {name: group[name] for name in group.array_keys()}
    coords = set()
    for array in arrays.values():
        coords.update(_zarr_dims(array) or ())
        coords.update(str(array.attrs.get("coordinates", "")).split())
    coords.update(str(group.attrs.get("coordinates", "")).split())
    return sorted(name for name in arrays if name not in coords)


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
    # the array's path in the store: a group's only data variable if ``component`` is None
    return shape, np.dtype(array.dtype).str, _zarr_dims(array), array.path, _files.stamp(path)


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


def load_zarr(path, split=0, component=None, comm=None, device=None) -> _dndarray.DNDarray:
    """Load a zarr array; each rank reads only its own slab, on its worker.

    ``path`` is a zarr store holding one array, or a group whose array
    ``component`` names (``None``: the group's only data variable, the one
    array that is not a coordinate, as :func:`save_zarr` writes it).
    ``split`` is an axis or a dimension name (zarr v3 ``dimension_names``
    or xarray's ``_ARRAY_DIMENSIONS``). Lazy, like :func:`load_hdf5`.

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
    device : str or Device, optional
        Where the chunks live (``"cpu"``, ``"gpu"``; the default device if None): each
        rank reads into host memory and copies its chunk to the device on its worker.

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
    device = _tasks.load_device(device)
    comm = _comm.sanitize_comm(comm)
    shape, dtype, dims, array_path, stamp = _tasks.on_rank0(comm, _zarr_meta, path, component)
    what = "the zarr array" if component is None else f"`component` {component!r}"
    dtype = _checks.check_loadable(dtype, what)
    axis = _checks.split_axis(split, shape, dims, what)
    return _tasks.lazy_load(
        "load-zarr", _read_zarr, shape, dtype, axis, comm, (path, array_path, dtype, stamp), device
    )


def _zarr_rows(shape, split: int, size: int, itemsize: int) -> int:
    """Rows per zarr chunk along ``split``: a rank's share, capped near 64 MiB per chunk."""
    return _layout.chunk_rows(shape, split, size, itemsize, _ZARR_CHUNK_BYTES)


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
    counts = _layout.whole_chunk_counts(shape[split], size, rows)
    return relayout(a, a.distribution.with_counts(counts)), chunks


def _create_zarr(tmp: str, component: str, shape, dtype, chunks, dims) -> None:
    """A group holding one array, ``component``, with xarray's dimension names."""
    zarr = _checks.require("zarr", "save_zarr")
    v3 = int(zarr.__version__.split(".")[0]) >= 3
    names = {"dimension_names": dims} if v3 else {}
    zarr.open_group(store=tmp, mode="w")
    array = zarr.open_array(
        store=tmp, mode="w", path=component, shape=shape, chunks=chunks, dtype=dtype, **names
    )
    if not v3:
        array.attrs["_ARRAY_DIMENSIONS"] = list(dims)


def _create_labelled_zarr(tmp: str, coords, variables) -> None:
    """xarray writes the store's metadata, coordinates and attributes; no data variable's data.

    Each data variable is a placeholder Dask array chunked as the store will
    be; ``to_zarr(compute=False)`` writes its metadata (with xarray's
    encoding) and returns the writes of its data, which are dropped: the
    ranks write the data afterwards.
    """
    xr = _checks.require("xarray", "save_zarr")
    template = coords.copy()
    for name, (dims, shape, dtype, attrs, chunks) in variables.items():
        placeholder = da.empty(shape, dtype=dtype, chunks=chunks)
        template[name] = xr.Variable(dims, placeholder, attrs)
    template.to_zarr(tmp, mode="w", compute=False, consolidated=False)


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


def _save_labelled(obj, path, component, mode, dims) -> None:
    """Save a DataArray or Dataset: xarray writes the metadata, the ranks write the data."""
    _checks.require("xarray", "save_zarr")
    labelled = _labelled.labelled(obj, component, dims, "component")
    arrays, variables = {}, {}
    for name, a in labelled.arrays.items():
        var_dims, attrs = labelled.variables[name]
        arrays[name], chunks = _zarr_layout(a)
        variables[name] = (var_dims, a.shape, a.dtype.str, attrs, chunks)
    first, *others = arrays.values()
    target, tmp = _tasks.prepare(first, path, mode, "save_zarr", "zarr", kind="zarr")
    plan = _tasks.WritePlan(first, "save-zarr", others)
    create = plan.create(_create_labelled_zarr, tmp, labelled.coords, variables)
    writes = []
    for tag, (name, a) in enumerate(arrays.items()):  # every rank, every variable at once
        writes += _tasks.add_writes(
            plan, _write_zarr, tmp, name, after=create, in_turn=False, array=a, tag=tag
        )
    plan.add(f"{plan.name}-finish", 0, _finish_zarr, tmp, create, *writes)
    _tasks.execute(plan, tmp, target, mode, kind="zarr")


def save_zarr(a, path, component=None, mode="w-", dims=None) -> None:
    """Save ``a`` as a zarr group; every rank writes its own chunks, all in parallel.

    The store is chunked along the split axis so that each rank's rows are
    whole chunks (a rank's share, capped near 64 MiB per chunk, and one chunk
    along every other axis): ranks never share a chunk, so they write at the
    same time. If ``a``'s counts are not multiples of the chunk rows (e.g.
    Heat's balanced counts 3, 2, 2), the rows at the boundaries first move
    to the neighbouring rank. The store is written under a temporary name and
    renamed to ``path`` at the end.

    The store is always a group with consolidated metadata, which
    ``xr.open_zarr(path)`` opens. A DNDarray is its array ``component``
    (xarray's default name ``__xarray_dataarray_variable__`` if None, which
    ``xr.open_dataarray(path, engine="zarr")`` reads back with no name), with
    dimension names. ``a`` may also be an ``xarray.DataArray`` or ``Dataset``:
    xarray writes its metadata, coordinates and attributes on rank 0's worker
    and the ranks write the data variables, so ``xr.open_zarr(path)`` reads it
    back identical. A DNDarray made by :func:`dndask.from_xarray` is saved as
    its DataArray (with the labels it brought in) when ``dims`` is None.

    Parameters
    ----------
    a : DNDarray, xarray.DataArray or xarray.Dataset
        Any split.
    path : str or os.PathLike
        The store (a folder) to create.
    component : str, optional
        The array's name in the group: a DataArray's name by default (xarray's
        default if it has none); None for a Dataset.
    mode : {'w-', 'w'}
        ``'w-'`` refuses an existing ``path``; ``'w'`` replaces a zarr store (only).
    dims : sequence of str, optional
        Dimension names of a DNDarray (``dim_0, dim_1, ...`` by default);
        None for xarray objects, which name their own.

    Examples
    --------
    >>> import dndask as ht, os, tempfile, xarray as xr
    >>> folder = tempfile.TemporaryDirectory()  # removed when the doctest ends
    >>> path = os.path.join(folder.name, "x.zarr")
    >>> ht.save_zarr(ht.arange(7, split=0), path)
    >>> xr.open_dataarray(path, engine="zarr").values.tolist()
    [0, 1, 2, 3, 4, 5, 6]
    >>> x = ht.arange(3, split=0).to_xarray(dims="time", coords={"time": [10, 20, 30]}, name="t")
    >>> ht.save_zarr(x, path, mode="w")
    >>> xr.open_zarr(path)["t"].time.values.tolist()
    [10, 20, 30]
    """
    a = _labelled.with_labels(a, dims)  # a DNDarray from from_xarray: its labels too
    if _labelled.is_labelled(a):
        _save_labelled(a, path, component, mode, dims)
        return
    _checks.check_name(component, "component", optional=True)
    component = _labelled.DEFAULT_NAME if component is None else component
    dims = _layout.normalize_dims(dims, a.ndim, strings=True)
    target, tmp = _tasks.prepare(a, path, mode, "save_zarr", "zarr", kind="zarr")
    a, chunks = _zarr_layout(a)
    plan = _tasks.WritePlan(a, "save-zarr")
    create = plan.create(_create_zarr, tmp, component, a.shape, a.dtype.str, chunks, dims)
    writes = _tasks.add_writes(plan, _write_zarr, tmp, component, after=create, in_turn=False)
    plan.add(f"{plan.name}-finish", 0, _finish_zarr, tmp, create, *writes)
    _tasks.execute(plan, tmp, target, mode, kind="zarr")
