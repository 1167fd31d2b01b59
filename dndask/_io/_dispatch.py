"""``load`` and ``save``: the format from the path's extension."""

from __future__ import annotations

import os

from .. import _dndarray
from . import _files
from ._csv import load_csv, save_csv
from ._hdf5 import load_hdf5, save_hdf5
from ._netcdf import load_netcdf, save_netcdf
from ._zarr import load_zarr, save_zarr

_EXTENSIONS = {
    ".h5": "hdf5",
    ".hdf5": "hdf5",
    ".hdf": "hdf5",
    ".nc": "netcdf",
    ".nc4": "netcdf",
    ".netcdf": "netcdf",
    ".zarr": "zarr",
    ".csv": "csv",
}
# each format's loader and saver
_FORMATS = {
    "hdf5": (load_hdf5, save_hdf5),
    "netcdf": (load_netcdf, save_netcdf),
    "zarr": (load_zarr, save_zarr),
    "csv": (load_csv, save_csv),
}


def _format_of(path, caller: str) -> str:
    path = _files.as_path(path)
    ext = os.path.splitext(path.rstrip(os.sep))[1].lower()
    if ext not in _EXTENSIONS:
        raise ValueError(
            f"`path` must end with one of {sorted(_EXTENSIONS)} for `{caller}` to pick a "
            f"format, got {os.path.basename(path)!r}; call load_hdf5/load_netcdf/... directly"
        )
    return _EXTENSIONS[ext]


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
    loader, _ = _FORMATS[_format_of(path, "load")]
    return loader(path, *args, **kwargs)


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
    _, saver = _FORMATS[_format_of(path, "save")]
    saver(a, path, *args, mode=mode, **kwargs)
