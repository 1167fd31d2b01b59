"""Classification on DNDarrays: :class:`KNeighborsClassifier`."""

from .neighbors import KNeighborsClassifier

__all__ = ["KNeighborsClassifier"]
