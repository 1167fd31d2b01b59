"""Indexing of DNDarrays: ``a[key]`` and ``a[key] = value``."""

from __future__ import annotations


def getitem(a, key):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`getitem` is not implemented yet")


def setitem(a, key, value):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`setitem` is not implemented yet")
