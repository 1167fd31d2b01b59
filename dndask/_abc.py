"""The abstract kind of a DNDarray, below every planner.

Planners (``_indexing._keys``...) need to tell a DNDarray from a numpy array, and the
DNDarray class sits above them (it builds graphs, and its methods call the operations).
They test ``isinstance(obj, DistributedArray)`` instead: the one DNDarray class derives
from it, so no planner imports the array class.

>>> import dndask as ht
>>> isinstance(ht.zeros(3), DistributedArray)
True
"""

from __future__ import annotations


class DistributedArray:
    """What every DNDarray is; nothing else derives from it."""

    __slots__ = ()


__all__ = ["DistributedArray"]
