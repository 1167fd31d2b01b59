"""Heat's ``ht.utils.data``: ``spherical`` and ``matrixgallery``."""

from dndask.heat.utils.data import matrixgallery, spherical

__all__ = ["matrixgallery", "spherical"]
