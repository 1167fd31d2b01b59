"""netCDF-4: load a variable rank by rank, save one with the ranks writing in turn.

Metadata (dimension names, the variable's dataset) comes from h5netcdf; the
ranks then read and write the variable as an HDF5 dataset, with ``_hdf5``.
"""

from __future__ import annotations

import numpy as np

from .. import _comm, _dndarray, _layout
from . import _checks, _files, _hdf5, _labelled, _tasks


def _netcdf_meta(path: str, variable: str):
    """Shape, dtype, dimension names, dataset path and stamp of a netCDF-4 variable."""
    h5netcdf = _checks.require("h5netcdf", "load_netcdf")
    _files.check_exists(path)
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
            _files.stamp(path),
        )


def load_netcdf(path, variable, split=0, comm=None, device=None) -> _dndarray.DNDarray:
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
    device : str or Device, optional
        Where the chunks live (``"cpu"``, ``"gpu"``; the default device if None): each
        rank reads into host memory and copies its chunk to the device on its worker.

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
    path = _files.as_path(path)
    _checks.check_name(variable, "variable")
    _checks.check_split_type(split, names=True)
    _checks.require("h5netcdf", "load_netcdf")
    device = _tasks.load_device(device)
    comm = _comm.sanitize_comm(comm)
    shape, dtype, dims, dataset, stamp = _tasks.on_rank0(comm, _netcdf_meta, path, variable)
    dtype = _checks.check_loadable(dtype, f"`variable` {variable!r}")
    axis = _checks.split_axis(split, shape, dims, f"`variable` {variable!r}")
    # a netCDF-4 variable is an HDF5 dataset: the ranks read it with h5py
    return _tasks.lazy_load(
        "load-netcdf",
        _hdf5.read_hdf5,
        shape,
        dtype,
        axis,
        comm,
        (path, dataset, dtype, stamp),
        device,
    )


def _create_netcdf(tmp: str, variable: str, dims, shape, dtype) -> None:
    h5netcdf = _checks.require("h5netcdf", "save_netcdf")
    with h5netcdf.File(tmp, "w") as f:
        f.dimensions = dict(zip(dims, shape, strict=True))
        f.create_variable(variable, dims, dtype=dtype)


def _create_labelled_netcdf(tmp: str, coords, variables) -> None:
    """The file with xarray's coordinates and attributes, and the empty data variables.

    xarray writes ``coords`` (a Dataset of coordinates and global attrs) with
    its own encoding; h5netcdf then adds each data variable, written by the
    ranks afterwards. A boolean variable is stored as xarray stores one
    (int8, ``dtype='bool'``), so xarray reads it back as bool.
    """
    h5netcdf = _checks.require("h5netcdf", "save_netcdf")
    coords.to_netcdf(tmp, engine="h5netcdf")
    with h5netcdf.File(tmp, "a") as f:
        for name, (dims, shape, dtype, attrs) in variables.items():
            for dim, size in zip(dims, shape, strict=True):
                if dim not in f.dimensions:
                    f.dimensions[dim] = size
            var = f.create_variable(name, dims, dtype=dtype)
            var.attrs.update(attrs)


def _save_labelled(obj, path, variable, dims, mode) -> None:
    """Save a DataArray or Dataset: coordinates and attributes from rank 0, data by the ranks."""
    _checks.require("xarray", "save_netcdf")
    labelled = _labelled.labelled(obj, variable, dims, "variable")
    arrays, variables = {}, {}
    for name, a in labelled.arrays.items():
        var_dims, attrs = labelled.variables[name]
        if a.dtype == np.bool_:  # netCDF has no bool: xarray's encoding
            a, attrs = a.astype(np.int8), {**attrs, "dtype": "bool"}
        arrays[name] = a
        variables[name] = (var_dims, a.shape, a.dtype.str, attrs)
    first, *others = arrays.values()
    target, tmp = _tasks.prepare(first, path, mode, "save_netcdf", "h5netcdf")
    plan = _tasks.WritePlan(first, "save-netcdf", others)
    after = plan.create(_create_labelled_netcdf, tmp, labelled.coords, variables)
    for tag, (name, a) in enumerate(arrays.items()):  # one writer at a time, variable by variable
        writes = _tasks.add_writes(
            plan, _hdf5.write_hdf5, tmp, name, after=after, in_turn=True, array=a, tag=tag
        )
        after = writes[-1] if writes else after
    _tasks.execute(plan, tmp, target, mode)


def save_netcdf(a, path, variable=None, dims=None, mode="w-") -> None:
    """Save ``a`` to netCDF-4; each rank writes its own slab from its worker.

    The file is netCDF-4 (HDF5), written as :func:`save_hdf5` writes: ranks in
    turn, under a temporary name renamed at the end. xarray opens it with
    ``xr.open_dataset(path)``.

    ``a`` may also be an ``xarray.DataArray`` or ``Dataset`` (for instance one
    made by :meth:`DNDarray.to_xarray` or :func:`dndask.from_xarray`): its
    coordinates and attributes are written too, by xarray itself on rank 0's
    worker, and ``xr.open_dataset(path)`` reads the file back identical. Its
    data variables are written by their ranks (see :mod:`dndask._io._labelled`).
    A DNDarray made by :func:`dndask.from_xarray` is saved as its DataArray
    (with the labels it brought in) when ``dims`` is None.

    Parameters
    ----------
    a : DNDarray, xarray.DataArray or xarray.Dataset
        Any split.
    path : str or os.PathLike
        The file to create.
    variable : str, optional
        The variable's name: required for a DNDarray; a DataArray's name by
        default (xarray's default name if it has none); None for a Dataset.
    dims : sequence of str, optional
        Dimension names of a DNDarray; ``dim_0, dim_1, ...`` by default
        (xarray's default). None for xarray objects, which name their own.
    mode : {'w-', 'w'}
        ``'w-'`` refuses an existing ``path``; ``'w'`` replaces a file (never a folder).

    Examples
    --------
    >>> import dndask as ht, os, tempfile, xarray as xr
    >>> folder = tempfile.TemporaryDirectory()  # removed when the doctest ends
    >>> path = os.path.join(folder.name, "t.nc")
    >>> ht.save_netcdf(ht.arange(3, split=0), path, "t", dims=("time",))
    >>> xr.open_dataset(path)["t"].values.tolist()
    [0, 1, 2]
    >>> x = ht.arange(3, split=0).to_xarray(dims="time", coords={"time": [10, 20, 30]}, name="t")
    >>> ht.save_netcdf(x, path, mode="w")
    >>> xr.open_dataset(path)["t"].time.values.tolist()
    [10, 20, 30]
    """
    a = _labelled.with_labels(a, dims)  # a DNDarray from from_xarray: its labels too
    if _labelled.is_labelled(a):
        _save_labelled(a, path, variable, dims, mode)
        return
    _checks.check_name(variable, "variable")
    dims = _layout.normalize_dims(dims, a.ndim, strings=True)
    target, tmp = _tasks.prepare(a, path, mode, "save_netcdf", "h5netcdf")
    plan = _tasks.WritePlan(a, "save-netcdf")
    create = plan.create(_create_netcdf, tmp, variable, dims, a.shape, a.dtype.str)
    _tasks.add_writes(plan, _hdf5.write_hdf5, tmp, variable, after=create, in_turn=True)
    _tasks.execute(plan, tmp, target, mode)
