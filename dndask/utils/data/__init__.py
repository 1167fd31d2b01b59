"""Synthetic data sets as DNDarrays: clusters (:mod:`.spherical`) and test matrices
(:mod:`.matrixgallery`), the same for any number of ranks (dndask's random stream)."""

from . import matrixgallery, spherical

__all__ = ["matrixgallery", "spherical"]
