"""Parallel I/O: every rank reads and writes its own slab, on its own worker.

Loads are lazy: chunk ``r`` of the result is a task that opens the file and
reads rank ``r``'s rows, and computing or persisting the array pins that task
to rank ``r``'s worker, so no data passes through the driver or another rank.

Saves write into a temporary file (or zarr folder) next to the target. Each
rank writes its own slab on its own worker; the temporary name replaces the
target only after every write has succeeded, and a failed save removes it,
so a save leaves either the complete new file or nothing new behind.

The driver never opens a file itself: metadata reads, existence checks and
the final rename run as small tasks on rank 0's worker, so the files only
need to be visible to the workers.
"""

from __future__ import annotations

import importlib
import io
import math
import os
import shutil
import uuid
import warnings
from collections.abc import Callable, Sequence

import distributed
import numpy as np
import torch
from dask._task_spec import Task, TaskRef
from dask.highlevelgraph import HighLevelGraph

from . import _comm, _compute, _dndarray, _factories, _layout, _per_rank, _types

_MODES = ("w-", "w")
# Largest zarr chunk dndask aims for when it picks the store's chunking.
_ZARR_CHUNK_BYTES = 64 * 2**20


# ------------------------------------------------------------------ helpers
def _require(module: str, caller: str):
    """Import an optional dependency, or say which extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"`{caller}` needs the {module} package: pip install 'dndask[io]'"
        ) from exc


def _as_path(path: object) -> str:
    """``path`` as an absolute string, resolved against the driver's working folder."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"`path` must be a str or os.PathLike, got {type(path).__name__}")
    path = os.fspath(path)
    if not isinstance(path, str):
        raise TypeError(f"`path` must be a text path, got {type(path).__name__}")
    return os.path.abspath(path)


def _check_name(value: object, name: str, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str) or not value:
        kind = "None or a non-empty str" if optional else "a non-empty str"
        raise TypeError(f"`{name}` must be {kind}, got {value!r}")


def _check_split_type(split: object, names: bool) -> None:
    """Reject a ``split`` of the wrong type before any file or cluster is touched."""
    if split is None or (isinstance(split, int) and not isinstance(split, bool)):
        return
    if names and isinstance(split, str):
        return
    kinds = "None, an int or a dimension name" if names else "None or an int"
    raise TypeError(f"`split` must be {kinds}, got {type(split).__name__}")


def _split_axis(split, shape: tuple[int, ...], dims: Sequence[str] | None, what: str):
    """``split`` (an axis or a dimension name) as an axis of ``shape``."""
    if isinstance(split, str):
        if not dims or split not in dims:
            raise ValueError(
                f"`split` must be None, an axis or a dimension of {what} "
                f"{tuple(dims or ())}, got {split!r}"
            )
        return list(dims).index(split)
    return _layout.normalize_axis(split, len(shape), "split")


def _check_mode(mode: object) -> None:
    if mode not in _MODES:
        raise ValueError(
            f"`mode` must be 'w-' (refuse an existing file) or 'w' (overwrite), got {mode!r}"
        )


def _check_dndarray(a: object) -> None:
    if not isinstance(a, _dndarray.DNDarray):
        raise TypeError(f"`a` must be a DNDarray, got {type(a).__name__}")


def _check_loadable(dtype: str, what: str) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype.kind not in "biufc":
        raise TypeError(f"{what} has dtype {dtype}; only boolean and numeric data loads")
    return dtype


def _on_rank0(comm: _comm.Comm, fn: Callable, *args):
    """Run ``fn(*args)`` on rank 0's worker and return its result (or raise its error)."""
    future = comm.client.submit(
        fn,
        *args,
        key=f"io-{fn.__name__.strip('_')}-{uuid.uuid4().hex}",
        workers=[comm.workers[0]],
        allow_other_workers=False,
        pure=False,
    )
    return future.result()


def _stamp(path: str) -> tuple[int, int, int]:
    """Identity of a file's current version: a rewritten file gets new graph keys."""
    st = os.stat(path)
    return st.st_ino, st.st_size, st.st_mtime_ns


def _check_exists(path: str) -> None:
    if not os.path.exists(path):
        raise FileNotFoundError(f"`path` {path!r} does not exist")


def _slab(offsets: Sequence[int], lshape: Sequence[int]) -> tuple[slice, ...]:
    return tuple(slice(o, o + n) for o, n in zip(offsets, lshape, strict=True))


def _empty_block(lshape: Sequence[int], dtype: np.dtype) -> np.ndarray | None:
    """An empty block for a rank with no rows (no need to open the file), else None."""
    return np.empty(tuple(lshape), dtype=dtype) if 0 in lshape else None


# ------------------------------------------------------------------- HDF5
def _open_hdf5(path: str, mode: str = "r", caller: str = "load_hdf5"):
    h5py = _require("h5py", caller)
    try:
        return h5py.File(path, mode)
    except OSError as exc:
        problem = str(exc)
    # raised outside the handler: a worker's error travels with its context, and
    # library exceptions do not always survive that trip
    raise ValueError(f"`path` {path!r} cannot be opened as an HDF5 file: {problem}")


def _hdf5_datasets(f) -> list[str]:
    h5py = _require("h5py", "load_hdf5")
    names: list[str] = []
    f.visititems(lambda name, obj: names.append(name) if isinstance(obj, h5py.Dataset) else None)
    return names


def _hdf5_meta(path: str, dataset: str):
    """Shape, dtype and version stamp of ``dataset`` (runs on rank 0's worker)."""
    h5py = _require("h5py", "load_hdf5")
    _check_exists(path)
    with _open_hdf5(path) as f:
        node = f.get(dataset)
        if not isinstance(node, h5py.Dataset):
            raise KeyError(
                f"`dataset` {dataset!r} is not a dataset of {path!r}; it holds {_hdf5_datasets(f)}"
            )
        return tuple(int(s) for s in node.shape), node.dtype.str, _stamp(path)


def _read_hdf5(offsets, lshape, path, dataset, dtype, stamp):
    """Rank chunk reader: the rows of this rank, straight from the file."""
    empty = _empty_block(lshape, dtype)
    if empty is not None:
        return empty
    with _open_hdf5(path) as f:
        block = f[dataset][_slab(offsets, lshape)]
    return np.asarray(block).astype(dtype, copy=False)


def load_hdf5(path, dataset, split=0, dtype=None, comm=None) -> _dndarray.DNDarray:
    """Load an HDF5 dataset; each rank reads only its own slab, on its worker.

    The result is lazy and balanced along ``split``: chunk ``r`` is a task
    that opens the file and reads rank ``r``'s rows when the array is
    computed or persisted. Rank 0's worker reads the shape and dtype now.

    Parameters
    ----------
    path : str or os.PathLike
        The HDF5 file.
    dataset : str
        The dataset's name, e.g. ``"data"`` or ``"group/data"``.
    split : int or None
        The axis to distribute along (``None``: one chunk on rank 0).
    dtype : optional
        Cast to this type; the file's dtype by default.
    comm : Comm, optional
        The ranks; the default comm otherwise.

    Returns
    -------
    DNDarray

    Raises
    ------
    FileNotFoundError
        ``path`` does not exist.
    KeyError
        ``dataset`` is not a dataset of the file.

    Examples
    --------
    >>> import dndask as ht, os, tempfile
    >>> folder = tempfile.TemporaryDirectory()  # removed when the doctest ends
    >>> path = os.path.join(folder.name, "x.h5")
    >>> ht.save_hdf5(ht.arange(10, split=0), path, "x")
    >>> a = ht.load_hdf5(path, "x", split=0, comm=ht.get_comm().subcomm([0, 1, 2]))
    >>> a.lshape_map.tolist(), a.numpy().tolist()
    ([[4], [3], [3]], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    """
    path = _as_path(path)
    _check_name(dataset, "dataset")
    _check_split_type(split, names=False)
    out_dtype = None if dtype is None else _types.canonical_dtype(dtype)
    _require("h5py", "load_hdf5")
    comm = _comm.sanitize_comm(comm)
    shape, file_dtype, stamp = _on_rank0(comm, _hdf5_meta, path, dataset)
    file_dtype = _check_loadable(file_dtype, f"`dataset` {dataset!r}")
    axis = _split_axis(split, shape, None, f"`dataset` {dataset!r}")
    out_dtype = file_dtype if out_dtype is None else out_dtype
    return _lazy_load(
        "load-hdf5", _read_hdf5, shape, out_dtype, axis, comm, (path, dataset, out_dtype, stamp)
    )


def _lazy_load(prefix, reader, shape, dtype, split, comm, args) -> _dndarray.DNDarray:
    counts = _layout.balanced_counts(shape[split], comm.size) if split is not None else ()
    return _factories.from_function(prefix, reader, shape, dtype, split, counts, comm, args)


# ----------------------------------------------------------------- netCDF
def _netcdf_meta(path: str, variable: str):
    """Shape, dtype, dimension names, dataset path and stamp of a netCDF-4 variable."""
    h5netcdf = _require("h5netcdf", "load_netcdf")
    _check_exists(path)
    try:
        f = h5netcdf.File(path, "r")
    except OSError as exc:
        f, problem = None, str(exc)
    if f is None:
        raise ValueError(
            f"`path` {path!r} is not a netCDF-4 (HDF5) file; netCDF-3 files are not "
            f"supported: {problem}"
        )
    with f:
        var = f.get(variable)
        if not isinstance(var, h5netcdf.Variable):
            raise KeyError(
                f"`variable` {variable!r} is not a variable of {path!r}; "
                f"it holds {list(f.variables)}"
            )
        return (
            tuple(int(s) for s in var.shape),
            var.dtype.str,
            tuple(var.dimensions),
            var.name,
            _stamp(path),
        )


def load_netcdf(path, variable, split=0, comm=None) -> _dndarray.DNDarray:
    """Load a netCDF-4 variable; each rank reads only its own slab, on its worker.

    ``split`` is an axis or one of the variable's dimension names. Values are
    read as stored (no CF decoding of ``scale_factor`` or ``_FillValue``);
    netCDF-3 files are not supported. Lazy, like :func:`load_hdf5`.

    Parameters
    ----------
    path : str or os.PathLike
        The netCDF-4 file.
    variable : str
        The variable's name.
    split : int, str or None
        The axis or dimension name to distribute along.
    comm : Comm, optional
        The ranks; the default comm otherwise.

    Returns
    -------
    DNDarray

    Raises
    ------
    FileNotFoundError, KeyError, ValueError
        A missing file, a missing variable, or a ``split`` that is not a
        dimension of the variable.

    Examples
    --------
    >>> import dndask as ht, os, tempfile
    >>> folder = tempfile.TemporaryDirectory()  # removed when the doctest ends
    >>> path = os.path.join(folder.name, "t.nc")
    >>> ht.save_netcdf(ht.zeros((4, 3), split=0), path, "t", dims=("time", "x"))
    >>> ht.load_netcdf(path, "t", split="x").split
    1
    """
    path = _as_path(path)
    _check_name(variable, "variable")
    _check_split_type(split, names=True)
    _require("h5netcdf", "load_netcdf")
    comm = _comm.sanitize_comm(comm)
    shape, dtype, dims, dataset, stamp = _on_rank0(comm, _netcdf_meta, path, variable)
    dtype = _check_loadable(dtype, f"`variable` {variable!r}")
    axis = _split_axis(split, shape, dims, f"`variable` {variable!r}")
    # a netCDF-4 variable is an HDF5 dataset: the ranks read it with h5py
    return _lazy_load(
        "load-netcdf", _read_hdf5, shape, dtype, axis, comm, (path, dataset, dtype, stamp)
    )


# ------------------------------------------------------------------- zarr
def _zarr_array(path: str, component: str | None):
    zarr = _require("zarr", "load_zarr")
    _check_exists(path)
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
    return shape, np.dtype(array.dtype).str, _zarr_dims(array), _stamp(path)


def _read_zarr(offsets, lshape, path, component, dtype, stamp):
    """Rank chunk reader: the rows of this rank, straight from the store."""
    empty = _empty_block(lshape, dtype)
    if empty is not None:
        return empty
    zarr = _require("zarr", "load_zarr")
    array = zarr.open_array(store=path, mode="r", path=component or "")
    return np.asarray(array[_slab(offsets, lshape)]).astype(dtype, copy=False)


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
    path = _as_path(path)
    _check_name(component, "component", optional=True)
    _check_split_type(split, names=True)
    _require("zarr", "load_zarr")
    comm = _comm.sanitize_comm(comm)
    shape, dtype, dims, stamp = _on_rank0(comm, _zarr_meta, path, component)
    what = "the zarr array" if component is None else f"`component` {component!r}"
    dtype = _check_loadable(dtype, what)
    axis = _split_axis(split, shape, dims, what)
    return _lazy_load(
        "load-zarr", _read_zarr, shape, dtype, axis, comm, (path, component, dtype, stamp)
    )


# -------------------------------------------------------------------- CSV
def _csv_lines(f, start: int, stop: int) -> list[bytes]:
    """The lines whose first byte lies in ``[start, stop)``; ``f`` is positioned at ``start``."""
    lines = []
    while f.tell() < stop:
        line = f.readline()
        if not line:
            break
        lines.append(line)
    return lines


def _csv_rank_rows(rank: int, path: str, sep: str, header_lines: int, dtype, size: int):
    """Parse the rows of one rank's byte range of a CSV file (runs on that rank's worker).

    The body after the header is cut into ``size`` equal byte ranges; a rank
    takes every line that starts in its range, so each line is read once.
    """
    with open(path, "rb") as f:
        for _ in range(header_lines):
            f.readline()
        body = f.tell()
        width = _csv_width(f, sep)
        total = os.fstat(f.fileno()).st_size
        start = body + (total - body) * rank // size
        stop = body + (total - body) * (rank + 1) // size
        if start > body:
            f.seek(start - 1)
            f.readline()  # finish the line that started before this range
        else:
            f.seek(body)
        lines = [line.decode() for line in _csv_lines(f, start, stop) if line.strip()]
    if not lines:
        return np.empty((0, width), dtype=dtype)
    rows = np.loadtxt(lines, delimiter=sep, dtype=dtype, ndmin=2, comments=None)
    if rows.shape[1] != width:
        raise ValueError(
            f"`path` {path!r} rows must all have {width} values (as the first row), "
            f"got {rows.shape[1]}"
        )
    return rows


def _csv_width(f, sep: str) -> int:
    """Values per row, from the first non-blank line after the header (position restored)."""
    here = f.tell()
    width = 0
    for line in f:
        if line.strip():
            width = len(line.decode().split(sep))
            break
    f.seek(here)
    return width


def load_csv(path, split=0, sep=",", header_lines=0, dtype=None, comm=None) -> _dndarray.DNDarray:
    """Load a CSV table as a 2-D array; each rank parses its own part of the file.

    The file's body is cut into equal byte ranges, one per rank, and each
    rank's worker parses the lines that start in its range now (the row
    counts are only known after parsing). The rows stay on their workers and
    the result is then balanced along axis 0 (a lazy redistribution that
    moves only the rows that change rank), and resplit if ``split`` is not 0.

    Parameters
    ----------
    path : str or os.PathLike
        The CSV file.
    split : int or None
        0 (rows), 1 (columns) or None.
    sep : str
        The separator between values.
    header_lines : int
        Lines to skip at the top of the file.
    dtype : optional
        The values' type; float32 by default, as in Heat.
    comm : Comm, optional
        The ranks; the default comm otherwise.

    Returns
    -------
    DNDarray

    Examples
    --------
    >>> import dndask as ht, os, tempfile
    >>> folder = tempfile.TemporaryDirectory()  # removed when the doctest ends
    >>> path = os.path.join(folder.name, "t.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("a,b\\n1,2\\n3,4\\n5,6\\n")
    >>> a = ht.load_csv(path, header_lines=1, comm=ht.get_comm().subcomm([0, 1]))
    >>> a.lshape_map.tolist(), a.numpy().tolist()
    ([[2, 2], [1, 2]], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    """
    path = _as_path(path)
    _check_name(sep, "sep")
    if isinstance(header_lines, bool) or not isinstance(header_lines, int) or header_lines < 0:
        raise ValueError(f"`header_lines` must be a non-negative int, got {header_lines!r}")
    _check_split_type(split, names=False)
    _layout.normalize_axis(split, 2, "split")
    dtype = _types.float32 if dtype is None else _types.canonical_dtype(dtype)
    comm = _comm.sanitize_comm(comm)
    _on_rank0(comm, _check_exists, path)
    pieces = _per_rank.per_rank(
        _csv_rank_rows, path, sep, header_lines, dtype, comm.size, comm=comm
    )
    out = _per_rank.join(pieces.futures, 0, comm, "load_csv").balance_()
    split = _layout.normalize_axis(split, 2, "split")
    return out if split == 0 else out.resplit_(split)


# ------------------------------------------------------------------ dispatch
_LOADERS = {
    ".h5": "hdf5",
    ".hdf5": "hdf5",
    ".hdf": "hdf5",
    ".nc": "netcdf",
    ".nc4": "netcdf",
    ".netcdf": "netcdf",
    ".zarr": "zarr",
    ".csv": "csv",
}


def _format_of(path, caller: str) -> str:
    path = _as_path(path)
    ext = os.path.splitext(path.rstrip(os.sep))[1].lower()
    if ext not in _LOADERS:
        raise ValueError(
            f"`path` must end with one of {sorted(_LOADERS)} for `{caller}` to pick a "
            f"format, got {os.path.basename(path)!r}; call load_hdf5/load_netcdf/... directly"
        )
    return _LOADERS[ext]


def load(path, *args, **kwargs) -> _dndarray.DNDarray:
    """Load a file, choosing the loader from its extension.

    ``.h5``/``.hdf5``/``.hdf``: :func:`load_hdf5`; ``.nc``/``.nc4``/``.netcdf``:
    :func:`load_netcdf`; ``.zarr``: :func:`load_zarr`; ``.csv``:
    :func:`load_csv`. The other arguments go to that loader.

    Examples
    --------
    >>> import dndask as ht, os, tempfile
    >>> folder = tempfile.TemporaryDirectory()  # removed when the doctest ends
    >>> path = os.path.join(folder.name, "x.h5")
    >>> ht.save(ht.ones((2, 2), split=0), path, "x")
    >>> ht.load(path, "x", split=1).numpy().tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    loader = {"hdf5": load_hdf5, "netcdf": load_netcdf, "zarr": load_zarr, "csv": load_csv}
    return loader[_format_of(path, "load")](path, *args, **kwargs)


def save(a, path, *args, mode="w-", **kwargs) -> None:
    """Save ``a``, choosing the writer from the extension of ``path`` (see :func:`load`).

    Examples
    --------
    >>> import dndask as ht, os, tempfile
    >>> folder = tempfile.TemporaryDirectory()  # removed when the doctest ends
    >>> path = os.path.join(folder.name, "x.zarr")
    >>> ht.save(ht.arange(4, split=0), path)
    >>> ht.load(path).numpy().tolist()
    [0, 1, 2, 3]
    """
    saver = {"hdf5": save_hdf5, "netcdf": save_netcdf, "zarr": save_zarr, "csv": save_csv}
    saver[_format_of(path, "save")](a, path, *args, mode=mode, **kwargs)


# ------------------------------------------------------------------ writing
def _check_target(target: str, mode: str) -> None:
    """Refuse a save before any work: a missing folder, or an existing target under 'w-'."""
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"`path` {target!r}: the folder {folder!r} does not exist")
    if mode == "w-" and os.path.lexists(target):
        raise FileExistsError(f"`path` {target!r} exists; pass mode='w' to overwrite it")


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.remove(path)


def _commit(tmp: str, target: str, mode: str) -> None:
    """Move the finished temporary file or folder to the target name."""
    if not os.path.lexists(target):
        os.rename(tmp, target)
        return
    if mode == "w-":
        raise FileExistsError(f"`path` {target!r} appeared while saving; nothing was written")
    if os.path.isfile(target) and os.path.isfile(tmp):
        os.replace(tmp, target)  # atomic
        return
    old = f"{tmp}-old"
    os.rename(target, old)
    try:
        os.rename(tmp, target)
    except BaseException:
        os.rename(old, target)
        raise
    _remove(old)


def _temp_name(target: str) -> str:
    folder, base = os.path.split(target)
    return os.path.join(folder, f".{base}.dndask-tmp-{uuid.uuid4().hex[:12]}")


def _slabs(a: _dndarray.DNDarray) -> list[tuple[int, tuple, tuple[slice, ...]]]:
    """``(rank, chunk key, global slices)`` of every chunk that holds data."""
    if a.size == 0:
        return []
    keys = a._chunk_keys()
    if a.split is None:
        return [(0, keys[0], tuple(slice(0, s) for s in a.shape))]
    counts, displs = a.counts_displs()
    out = []
    for r, (count, start) in enumerate(zip(counts, displs, strict=True)):
        if count:
            slices = tuple(
                slice(start, start + count) if ax == a.split else slice(0, s)
                for ax, s in enumerate(a.shape)
            )
            out.append((r, keys[r], slices))
    return out


class _WritePlan:
    """A save as one graph: create on rank 0, per-rank writes, an optional finish on rank 0."""

    def __init__(self, a: _dndarray.DNDarray, prefix: str):
        self.a = a
        self.name = f"{prefix}-{uuid.uuid4().hex}"
        self.tasks: dict = {}
        self.table = a._placement()
        self.keys: list = []

    def add(self, key, rank: int, fn: Callable, *args) -> TaskRef:
        self.tasks[key] = Task(key, fn, *args)
        self.table[key] = self.a.comm.workers[rank]
        self.keys.append(key)
        return TaskRef(key)

    def run(self) -> None:
        """Run every task; wait for all of them (so none writes after a cleanup); raise."""
        graph = HighLevelGraph.from_collections(self.name, self.tasks, dependencies=[self.a])
        client = self.a.comm.client
        with _compute._placed(self.table):
            futures = client.get(graph, self.keys, sync=False)
        try:
            distributed.wait(futures)
        except BaseException:  # interrupted: stop what has not started yet
            client.cancel(futures)
            raise
        for future in futures:
            if future.status == "error":
                future.result()


def _execute(plan: _WritePlan, tmp: str, target: str, mode: str) -> None:
    """Run the plan into ``tmp``; rename it to ``target`` on success, remove it on failure."""
    comm = plan.a.comm
    try:
        plan.run()
        _on_rank0(comm, _commit, tmp, target, mode)
    except BaseException:
        try:
            _on_rank0(comm, _remove, tmp)
        except Exception as cleanup:  # the save's own error matters more
            warnings.warn(f"could not remove {tmp!r}: {cleanup}", RuntimeWarning, stacklevel=3)
        raise


def _prepare(a, path, mode, caller: str, module: str | None) -> tuple[str, str]:
    """Check a save's target (the arguments are checked); returns ``(target, temporary name)``."""
    target = _as_path(path)
    _check_mode(mode)
    if module is not None:
        _require(module, caller)
    _on_rank0(a.comm, _check_target, target, mode)
    return target, _temp_name(target)


def _create_hdf5(tmp: str, dataset: str, shape, dtype) -> None:
    with _open_hdf5(tmp, "w", "save_hdf5") as f:
        f.create_dataset(dataset, shape=shape, dtype=dtype)


def _write_hdf5(tmp: str, dataset: str, slices, block, after) -> None:
    """Write one rank's slab; ``after`` orders the writers (HDF5 allows one at a time)."""
    with _open_hdf5(tmp, "r+", "save_hdf5") as f:
        f[dataset][slices] = block


def _hdf5_writes(plan: _WritePlan, tmp: str, dataset: str, create: TaskRef) -> None:
    """Each rank writes its slab, in rank order: a chain of tasks, one writer at a time."""
    previous = create
    for rank, key, slices in _slabs(plan.a):
        previous = plan.add(
            (plan.name, rank), rank, _write_hdf5, tmp, dataset, slices, TaskRef(key), previous
        )


def save_hdf5(a, path, dataset, mode="w-") -> None:
    """Save ``a`` as an HDF5 dataset; each rank writes its own slab from its worker.

    HDF5 (without MPI-IO) allows one writer per file at a time, so the ranks
    write in turn, each opening the file for its own rows; the data never
    passes through the driver. The file is written under a temporary name
    and renamed to ``path`` only when every rank has written.

    Parameters
    ----------
    a : DNDarray
        Any split.
    path : str or os.PathLike
        The file to create.
    dataset : str
        The dataset's name (``"group/name"`` creates the group).
    mode : {'w-', 'w'}
        ``'w-'`` refuses an existing ``path``; ``'w'`` replaces it.

    Raises
    ------
    FileExistsError
        ``path`` exists and ``mode`` is ``'w-'``.

    Examples
    --------
    >>> import dndask as ht, h5py, os, tempfile
    >>> folder = tempfile.TemporaryDirectory()  # removed when the doctest ends
    >>> path = os.path.join(folder.name, "x.h5")
    >>> ht.save_hdf5(ht.arange(5, split=0), path, "x")
    >>> h5py.File(path, "r")["x"][...].tolist()
    [0, 1, 2, 3, 4]
    """
    _check_dndarray(a)
    _check_name(dataset, "dataset")
    target, tmp = _prepare(a, path, mode, "save_hdf5", "h5py")
    plan = _WritePlan(a, "save-hdf5")
    create = plan.add(f"{plan.name}-create", 0, _create_hdf5, tmp, dataset, a.shape, a.dtype.str)
    _hdf5_writes(plan, tmp, dataset, create)
    _execute(plan, tmp, target, mode)


def _create_netcdf(tmp: str, variable: str, dims, shape, dtype) -> None:
    h5netcdf = _require("h5netcdf", "save_netcdf")
    with h5netcdf.File(tmp, "w") as f:
        f.dimensions = dict(zip(dims, shape, strict=True))
        f.create_variable(variable, dims, dtype=dtype)


def _check_dims(dims, ndim: int) -> tuple[str, ...]:
    if dims is None:
        return tuple(f"dim_{i}" for i in range(ndim))
    if isinstance(dims, str):
        dims = (dims,)
    dims = tuple(dims)
    if len(dims) != ndim or not all(isinstance(d, str) and d for d in dims):
        raise ValueError(f"`dims` must be {ndim} dimension names, got {dims!r}")
    if len(set(dims)) != ndim:
        raise ValueError(f"`dims` must not repeat a name, got {dims!r}")
    return dims


def save_netcdf(a, path, variable, dims=None, mode="w-") -> None:
    """Save ``a`` as a netCDF-4 variable; each rank writes its own slab from its worker.

    The file is netCDF-4 (HDF5), written as :func:`save_hdf5` writes: ranks in
    turn, under a temporary name renamed at the end. xarray opens it with
    ``xr.open_dataset(path)``.

    Parameters
    ----------
    a : DNDarray
        Any split.
    path : str or os.PathLike
        The file to create.
    variable : str
        The variable's name.
    dims : sequence of str, optional
        Dimension names; ``dim_0, dim_1, ...`` by default (xarray's default).
    mode : {'w-', 'w'}
        ``'w-'`` refuses an existing ``path``; ``'w'`` replaces it.

    Examples
    --------
    >>> import dndask as ht, os, tempfile, xarray as xr
    >>> folder = tempfile.TemporaryDirectory()  # removed when the doctest ends
    >>> path = os.path.join(folder.name, "t.nc")
    >>> ht.save_netcdf(ht.arange(3, split=0), path, "t", dims=("time",))
    >>> xr.open_dataset(path)["t"].values.tolist()
    [0, 1, 2]
    """
    _check_dndarray(a)
    _check_name(variable, "variable")
    dims = _check_dims(dims, a.ndim)
    target, tmp = _prepare(a, path, mode, "save_netcdf", "h5netcdf")
    plan = _WritePlan(a, "save-netcdf")
    create = plan.add(
        f"{plan.name}-create", 0, _create_netcdf, tmp, variable, dims, a.shape, a.dtype.str
    )
    _hdf5_writes(plan, tmp, variable, create)
    _execute(plan, tmp, target, mode)


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
    if list(a.counts_displs()[0]) != counts:
        target = a.lshape_map
        target[:, split] = torch.tensor(counts)
        a = a.redistribute(target_map=target)
    return a, chunks


def _create_zarr(tmp: str, component, shape, dtype, chunks, dims) -> None:
    zarr = _require("zarr", "save_zarr")
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
    zarr = _require("zarr", "save_zarr")
    zarr.open_array(store=tmp, mode="r+", path=component or "")[slices] = block


def _finish_zarr(tmp: str, *writes) -> None:
    """Consolidate a group's metadata so xarray opens it in one read."""
    zarr = _require("zarr", "save_zarr")
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
        ``'w-'`` refuses an existing ``path``; ``'w'`` replaces it.
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
    _check_dndarray(a)
    _check_name(component, "component", optional=True)
    if dims is not None:
        dims = _check_dims(dims, a.ndim)
    target, tmp = _prepare(a, path, mode, "save_zarr", "zarr")
    a, chunks = _zarr_layout(a)
    plan = _WritePlan(a, "save-zarr")
    create = plan.add(
        f"{plan.name}-create", 0, _create_zarr, tmp, component, a.shape, a.dtype.str, chunks, dims
    )
    writes = [
        plan.add((plan.name, rank), rank, _write_zarr, tmp, component, slices, TaskRef(key), create)
        for rank, key, slices in _slabs(a)
    ]
    if component is not None:
        plan.add(f"{plan.name}-finish", 0, _finish_zarr, tmp, create, *writes)
    _execute(plan, tmp, target, mode)


def _csv_text(block, sep: str, header: str | None) -> bytes:
    """One rank's rows as CSV text (numbers in their shortest round-trip form)."""
    block = np.asarray(block)
    if block.ndim == 1:
        block = block.reshape(-1, 1)
    if block.dtype.kind == "b":
        block = block.astype(np.uint8)
    buffer = io.StringIO()
    if header is not None:
        buffer.write(header.rstrip("\n") + "\n")
    np.savetxt(buffer, block, fmt="%s", delimiter=sep)
    return buffer.getvalue().encode()


def _create_csv(tmp: str, *lengths: int) -> None:
    with open(tmp, "wb") as f:
        f.truncate(sum(lengths))


def _write_csv(tmp: str, text: bytes, after, *before: int) -> None:
    """Write one rank's text at its offset (the lengths of the ranks before it)."""
    with open(tmp, "r+b") as f:
        f.seek(sum(before))
        f.write(text)


def save_csv(a, path, sep=",", mode="w-", header=None) -> None:
    """Save a 1-D or 2-D array as CSV; every rank writes its own rows, all in parallel.

    Each rank formats its rows on its worker; the ranks then write their text
    at its byte offset in the file (known from the lengths of the ranks
    before), at the same time. A column-split array is first resplit to
    rows (lazily, worker to worker). 1-D arrays become one column.

    Parameters
    ----------
    a : DNDarray
        1-D or 2-D, real (booleans are written as 0/1).
    path : str or os.PathLike
        The file to create.
    sep : str
        The separator between values.
    mode : {'w-', 'w'}
        ``'w-'`` refuses an existing ``path``; ``'w'`` replaces it.
    header : str, optional
        A first line (read it back with ``load_csv(..., header_lines=1)``).

    Examples
    --------
    >>> import dndask as ht, os, tempfile
    >>> folder = tempfile.TemporaryDirectory()  # removed when the doctest ends
    >>> path = os.path.join(folder.name, "t.csv")
    >>> ht.save_csv(ht.array([[1.5, 2.0], [3.0, 4.0]], split=0), path, header="a,b")
    >>> open(path).read().splitlines()
    ['a,b', '1.5,2.0', '3.0,4.0']
    """
    _check_dndarray(a)
    _check_name(sep, "sep")
    if header is not None and not isinstance(header, str):
        raise TypeError(f"`header` must be None or a str, got {type(header).__name__}")
    if a.ndim not in (1, 2):
        raise ValueError(f"`a` must be 1-D or 2-D to save as CSV, got {a.ndim}-D")
    if a.dtype.kind == "c":
        raise TypeError(f"`a` must be real to save as CSV, got {a.dtype}")
    target, tmp = _prepare(a, path, mode, "save_csv", None)
    if a.split not in (None, 0):
        a = a.resplit(0)
    plan = _WritePlan(a, "save-csv")
    slabs = _slabs(a)
    texts, lengths = [], []
    for rank, key, _ in slabs:
        text = plan.add(
            (f"{plan.name}-text", rank), rank, _csv_text, TaskRef(key), sep,
            header if rank == slabs[0][0] else None,
        )  # fmt: skip
        texts.append(text)
        lengths.append(plan.add((f"{plan.name}-length", rank), rank, len, text))
    create = plan.add(f"{plan.name}-create", 0, _create_csv, tmp, *lengths)
    for i, (rank, _, _) in enumerate(slabs):
        plan.add((plan.name, rank), rank, _write_csv, tmp, texts[i], create, *lengths[:i])
    if not slabs and header is not None:
        plan.add(f"{plan.name}-header", 0, _write_header, tmp, header, create)
    _execute(plan, tmp, target, mode)


def _write_header(tmp: str, header: str, after) -> None:
    with open(tmp, "w") as f:
        f.write(header.rstrip("\n") + "\n")
