"""Argument checks shared by the sorting and set functions (pure, no graphs)."""

from __future__ import annotations

import numbers

import numpy as np

from .. import _dndarray, _layout

__all__ = ["KINDS", "check_array", "check_bool", "check_kind", "check_sortable", "sort_axis"]

# numpy's sorting kinds; dndask's order along a split axis is always stable
KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def check_array(a, fn: str, name: str = "a") -> _dndarray.DNDarray:
    if not isinstance(a, _dndarray.DNDarray):
        raise TypeError(f"`{name}` of `{fn}` must be a DNDarray, got {type(a).__name__}")
    return a


def check_sortable(a, fn: str, name: str = "a") -> _dndarray.DNDarray:
    """A DNDarray of booleans, integers or reals (complex order is refused)."""
    a = check_array(a, fn, name)
    if a.dtype.kind == "c":
        raise TypeError(
            f"`{name}` of `{fn}` must not be complex (dndask does not order complex "
            f"numbers; sort the real and imaginary parts), got {a.dtype}"
        )
    if a.dtype.kind not in "biuf":
        raise TypeError(
            f"`{name}` of `{fn}` must have a boolean, integer or real dtype, got {a.dtype}"
        )
    return a


def check_bool(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"`{name}` must be a bool, got {type(value).__name__}")
    return bool(value)


def check_kind(kind, stable=None) -> bool:
    """Whether numpy's ``kind``/``stable`` ask for a stable order (they are checked)."""
    if kind not in KINDS:
        raise ValueError(f"`kind` must be one of {list(KINDS)}, got {kind!r}")
    if stable is not None:
        check_bool(stable, "stable")
    return bool(stable) or kind in ("mergesort", "stable")


def sort_axis(axis, a: _dndarray.DNDarray) -> int | None:
    """``axis`` normalised against ``a`` (``None`` = flattened)."""
    if axis is not None and (isinstance(axis, bool) or not isinstance(axis, numbers.Integral)):
        raise TypeError(f"`axis` must be None or an int, got {type(axis).__name__}")
    return _layout.normalize_axis(axis, a.ndim, "axis")
