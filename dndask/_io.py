"""Parallel I/O: every rank reads and writes its own slab, on its own worker."""

from __future__ import annotations


def load_hdf5(path, dataset, split=0, dtype=None, comm=None):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`load_hdf5` is not implemented yet")


def load_netcdf(path, variable, split=0, comm=None):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`load_netcdf` is not implemented yet")


def load_zarr(path, split=0, component=None, comm=None):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`load_zarr` is not implemented yet")


def load_csv(path, split=0, sep=",", header_lines=0, dtype=None, comm=None):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`load_csv` is not implemented yet")


def load(path, *args, **kwargs):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`load` is not implemented yet")


def save(a, path, *args, mode="w-", **kwargs):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`save` is not implemented yet")


def save_hdf5(a, path, dataset, mode="w-"):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`save_hdf5` is not implemented yet")


def save_netcdf(a, path, variable, dims=None, mode="w-"):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`save_netcdf` is not implemented yet")


def save_zarr(a, path, component=None, mode="w-"):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`save_zarr` is not implemented yet")


def save_csv(a, path, sep=",", mode="w-"):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`save_csv` is not implemented yet")
