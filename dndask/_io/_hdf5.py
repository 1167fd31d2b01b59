"""HDF5: load a dataset rank by rank, save one with the ranks writing in turn.

HDF5 without MPI-IO allows one writer per file at a time, so a save chains
the ranks' writes in rank order. netCDF-4 files are HDF5 files: ``_netcdf``
reads and writes their variables with :func:`read_hdf5` and :func:`write_hdf5`.
"""

from __future__ import annotations

import numpy as np

from .. import _comm, _dndarray, _types
from . import _checks, _files, _tasks


def _open_hdf5(path: str, mode: str = "r", caller: str = "load_hdf5"):
    h5py = _checks.require("h5py", caller)
    try:
        return h5py.File(path, mode)
    except OSError as exc:
        problem = str(exc)
    # raised outside the handler: a worker's error travels with its context, and
    # library exceptions do not always survive that trip
    raise ValueError(f"`path` {path!r} cannot be opened as an HDF5 file: {problem}")


def _hdf5_datasets(f) -> list[str]:
    h5py = _checks.require("h5py", "load_hdf5")
    names: list[str] = []
    f.visititems(lambda name, obj: names.append(name) if isinstance(obj, h5py.Dataset) else None)
    return names


def _hdf5_meta(path: str, dataset: str):
    """Shape, dtype and version stamp of ``dataset`` (runs on rank 0's worker)."""
    h5py = _checks.require("h5py", "load_hdf5")
    _files.check_exists(path)
    with _open_hdf5(path) as f:
        node = f.get(dataset)
        if not isinstance(node, h5py.Dataset):
            raise KeyError(
                f"`dataset` {dataset!r} is not a dataset of {path!r}; it holds {_hdf5_datasets(f)}"
            )
        return tuple(int(s) for s in node.shape), node.dtype.str, _files.stamp(path)


def read_hdf5(offsets, lshape, path, dataset, dtype, stamp):
    """Rank chunk reader: the rows of this rank, straight from the file."""
    empty = _tasks.empty_block(lshape, dtype)
    if empty is not None:
        return empty
    _files.check_unchanged(path, stamp)
    with _open_hdf5(path) as f:
        block = f[dataset][_tasks.slab(offsets, lshape)]
    _files.check_unchanged(path, stamp, block.shape, lshape)  # no change while reading either
    return np.asarray(block).astype(dtype, copy=False)


def load_hdf5(path, dataset, split=0, dtype=None, comm=None, device=None) -> _dndarray.DNDarray:
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
    device : str or Device, optional
        Where the chunks live (``"cpu"``, ``"gpu"``; the default device if None): each
        rank reads into host memory and copies its chunk to the device on its worker.

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
    path = _files.as_path(path)
    _checks.check_name(dataset, "dataset")
    _checks.check_split_type(split, names=False)
    out_dtype = None if dtype is None else _types.canonical_dtype(dtype)
    _checks.require("h5py", "load_hdf5")
    device = _tasks.load_device(device)
    comm = _comm.sanitize_comm(comm)
    shape, file_dtype, stamp = _tasks.on_rank0(comm, _hdf5_meta, path, dataset)
    file_dtype = _checks.check_loadable(file_dtype, f"`dataset` {dataset!r}")
    axis = _checks.split_axis(split, shape, None, f"`dataset` {dataset!r}")
    out_dtype = file_dtype if out_dtype is None else out_dtype
    return _tasks.lazy_load(
        "load-hdf5",
        read_hdf5,
        shape,
        out_dtype,
        axis,
        comm,
        (path, dataset, out_dtype, stamp),
        device,
    )


def _create_hdf5(tmp: str, dataset: str, shape, dtype) -> None:
    with _open_hdf5(tmp, "w", "save_hdf5") as f:
        f.create_dataset(dataset, shape=shape, dtype=dtype)


def write_hdf5(tmp: str, dataset: str, slices, block, after) -> None:
    """Write one rank's slab; ``after`` orders the writers (HDF5 allows one at a time)."""
    with _open_hdf5(tmp, "r+", "save_hdf5") as f:
        f[dataset][slices] = block


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
        ``'w-'`` refuses an existing ``path``; ``'w'`` replaces a file (never a folder).

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
    _checks.check_dndarray(a)
    _checks.check_name(dataset, "dataset")
    target, tmp = _tasks.prepare(a, path, mode, "save_hdf5", "h5py")
    plan = _tasks.WritePlan(a, "save-hdf5")
    create = plan.create(_create_hdf5, tmp, dataset, a.shape, a.dtype.str)
    _tasks.add_writes(plan, write_hdf5, tmp, dataset, after=create, in_turn=True)
    _tasks.execute(plan, tmp, target, mode)
