"""xarray integration: DataArray/Dataset views of DNDarrays and the ``.dnd`` accessor."""

from __future__ import annotations


def to_xarray(a, dims=None, coords=None, name=None, attrs=None):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`to_xarray` is not implemented yet")


def from_xarray(obj, split=None, comm=None):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`from_xarray` is not implemented yet")
