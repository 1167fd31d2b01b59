"""xarray objects in saves: a DataArray or Dataset as DNDarrays on one comm, and its labels.

``save_netcdf`` and ``save_zarr`` accept a DataArray or a Dataset as well as a
DNDarray. Its data variables become DNDarrays on one comm (a Dask-backed
variable keeps its layout, conformed if needed; an in-memory one is sent
from the driver, not split). Its coordinates and attributes are labels,
small next to the data: they are computed into the driver and handed to
rank 0's create task, which writes them *with xarray itself*, so xarray's own
encoding applies (CF dates, non-index coordinates, booleans) and
``xr.open_dataset``/``xr.open_zarr`` read the file back identical. The data
variables are then written slab by slab, each rank its own rows, as for a
DNDarray.

Nothing here imports xarray: an object can only be an xarray object if
xarray has been imported already (:func:`xarray_module`).
"""

from __future__ import annotations

import sys
from typing import NamedTuple

import dask.array as da

from .. import _comm, _dndarray, _xarray
from . import _checks

# xarray's own name for the variable of a DataArray that has no name (``DataArray.to_netcdf``
# and ``to_zarr`` use it; ``xr.open_dataarray`` turns it back into ``name=None``)
DEFAULT_NAME = "__xarray_dataarray_variable__"


class Labelled(NamedTuple):
    """A DataArray or Dataset ready to save: its data as DNDarrays, its labels apart."""

    arrays: dict  # data variable name -> DNDarray, all on one comm
    variables: dict  # data variable name -> (dims, attrs)
    coords: object  # an xarray Dataset: the coordinates (computed) and the global attrs


def xarray_module(obj: object):
    """xarray, if ``obj`` is one of its DataArrays or Datasets; else None."""
    xr = sys.modules.get("xarray")
    if xr is not None and isinstance(obj, (xr.DataArray, xr.Dataset)):
        return xr
    return None


def is_labelled(a: object) -> bool:
    """Whether ``a`` is an xarray object (True) or a DNDarray (False); TypeError otherwise."""
    if isinstance(a, _dndarray.DNDarray):
        return False
    if xarray_module(a) is not None:
        return True
    raise TypeError(
        f"`a` must be a DNDarray or an xarray DataArray or Dataset, got {type(a).__name__}"
    )


def with_labels(a: object, dims) -> object:
    """A labelled DNDarray (made by ``from_xarray``) as its DataArray, so its labels are saved.

    Only when ``dims`` is None (names given for the save win) and the
    labels still fit the array (:class:`dndask._xarray.Labels`); anything
    else is returned as it is.
    """
    if isinstance(a, _dndarray.DNDarray) and dims is None and _xarray.labels_of(a) is not None:
        return a.to_xarray()
    return a


def _dataset(obj, variable, what: str):
    """``obj`` as a Dataset; ``variable`` names a DataArray's variable (None for a Dataset)."""
    xr = xarray_module(obj)
    if isinstance(obj, xr.DataArray):
        _checks.check_name(variable, what, optional=True)
        if variable is None:
            variable = DEFAULT_NAME if obj.name is None else obj.name
        if not isinstance(variable, str) or not variable:
            raise ValueError(
                f"`a` must be named by a non-empty str to be saved, got {variable!r}; pass `{what}`"
            )
        return obj.to_dataset(name=variable)
    if variable is not None:
        raise ValueError(
            f"`{what}` must be None for a Dataset (its variables are named), got {variable!r}"
        )
    bad = [name for name in obj.data_vars if not isinstance(name, str) or not name]
    if bad:
        raise ValueError(f"`a` must name its data variables by non-empty strs, got {bad!r}")
    if not obj.data_vars:
        raise ValueError("`a` must hold at least one data variable, got an empty Dataset")
    return obj


def labelled(obj, variable, dims, what: str) -> Labelled:
    """Split a DataArray or Dataset into DNDarrays on one comm and its labels.

    ``variable`` (``what`` names the argument) is the name of a DataArray's
    variable (default: its name, else xarray's default); ``dims`` must be
    None: the object names its own dimensions. The comm is the one of the
    first Dask-backed variable (see :mod:`dndask._xarray`), else the default;
    a variable on another comm is conformed to it.
    """
    if dims is not None:
        raise ValueError(
            f"`dims` must be None for an xarray {type(obj).__name__} (it names its own "
            f"dimensions), got {dims!r}"
        )
    ds = _dataset(obj, variable, what)
    dask_backed = [var for var in ds.data_vars.values() if isinstance(var.data, da.Array)]
    comm = dask_backed[0].dnd.comm if dask_backed else _comm.get_comm()
    arrays = {}
    for name, var in ds.data_vars.items():
        if isinstance(var.data, da.Array) and var.dnd.comm == comm:
            arrays[name] = var.dnd.to_dndarray()
        else:
            split = var.dnd.split if isinstance(var.data, da.Array) else None
            arrays[name] = _xarray.from_xarray(var, split=split, comm=comm)
    coords = ds.coords.to_dataset().compute()
    coords.attrs = dict(ds.attrs)
    variables = {name: (tuple(var.dims), dict(var.attrs)) for name, var in ds.data_vars.items()}
    return Labelled(arrays, variables, coords)
