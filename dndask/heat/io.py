"""Heat's ``ht.io``: the face's load and save functions, and which file formats work here.

>>> import dndask.heat as ht
>>> ht.io.supports_hdf5() in (True, False)
True
"""

from __future__ import annotations

import importlib.util
import sys

__all__ = ["supports_hdf5", "supports_netcdf", "supports_zarr"]

# the face's functions this module also offers (Heat's ``ht.io.load_hdf5`` and the rest)
_FACE_NAMES = frozenset(
    {
        "load",
        "load_csv",
        "load_hdf5",
        "load_netcdf",
        "load_zarr",
        "save",
        "save_csv",
        "save_hdf5",
        "save_netcdf",
        "save_zarr",
    }
)


def _importable(*names: str) -> bool:
    return any(importlib.util.find_spec(name) is not None for name in names)


def supports_hdf5() -> bool:
    """Whether HDF5 files can be read and written (h5py is installed)."""
    return _importable("h5py")


def supports_netcdf() -> bool:
    """Whether netCDF files can be read and written (netCDF4 or h5netcdf is installed)."""
    return _importable("netCDF4", "h5netcdf")


def supports_zarr() -> bool:
    """Whether Zarr stores can be read and written (zarr is installed)."""
    return _importable("zarr")


def __getattr__(name: str):
    """The face's load/save functions, from the face package above this module (loaded
    before it, complete once anything here is used)."""
    if name in _FACE_NAMES:
        return getattr(sys.modules[__name__.rpartition(".")[0]], name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
