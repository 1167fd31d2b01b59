"""Argument checks shared by the manipulations (the input array, ints, axis lists)."""

from __future__ import annotations

import numbers

from .. import _dndarray, _layout


def check_dndarray(a, name: str = "a") -> None:
    if not isinstance(a, _dndarray.DNDarray):
        raise TypeError(f"`{name}` must be a DNDarray, got {type(a).__name__}")


def is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def int_tuple(value, name: str) -> tuple[int, ...]:
    items = tuple(value) if isinstance(value, (tuple, list, range)) else (value,)
    for item in items:
        if not is_int(item):
            raise TypeError(
                f"`{name}` must be an int or a tuple of ints, got {type(item).__name__}"
            )
    return tuple(int(i) for i in items)


def ordered_axes(value, ndim: int, name: str) -> tuple[int, ...]:
    """Axes in the order given, normalised, without repeats."""
    axes = tuple(_layout.normalize_axis(a, ndim, name) for a in int_tuple(value, name))
    if len(set(axes)) != len(axes):
        raise ValueError(f"`{name}` must not repeat an axis, got {value}")
    return axes
