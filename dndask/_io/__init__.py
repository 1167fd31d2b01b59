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

What lives where:

- ``_checks``: argument checks on the driver, and the optional packages;
- ``_files``: paths, save modes, the temporary name and the rename at the
  end, and the existence checks that run on a worker;
- ``_tasks``: the task graphs: tasks on rank 0, lazy per-rank loads, a
  save's write plan (create, per-rank writes in rank order or in parallel,
  rename or cleanup);
- ``_labelled``: xarray objects in saves (their data variables as DNDarrays on one
  comm, their coordinates and attributes apart, written by xarray on rank 0);
- ``_hdf5``, ``_netcdf``, ``_zarr``, ``_csv``: one format each, its load and save;
- ``_dispatch``: :func:`load` and :func:`save`, by the path's extension.
"""

from __future__ import annotations

from ._csv import load_csv, save_csv
from ._dispatch import load, save
from ._hdf5 import load_hdf5, save_hdf5
from ._netcdf import load_netcdf, save_netcdf
from ._zarr import load_zarr, save_zarr

__all__ = [
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
]
