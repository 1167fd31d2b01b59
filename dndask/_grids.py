"""Grids and helpers on the factories: ``logspace``, ``meshgrid``, ``shape``, ``asarray``.

``logspace`` is ``base ** linspace(...)`` (each rank computes its own samples);
``meshgrid`` broadcasts 1-D coordinate arrays: the grid of the first split input
is split along that input's axis of the grid.
"""

from __future__ import annotations

import numbers

from . import _elementwise, _factories, _types
from ._dndarray import DNDarray
from ._manipulation._axes import expand_dims
from ._manipulation._broadcast import broadcast_to

__all__ = ["asarray", "logspace", "meshgrid", "shape"]


def logspace(
    start, stop, num: int = 50, endpoint: bool = True, base: float = 10.0,
    dtype=None, split=None, comm=None,
) -> DNDarray:  # fmt: skip
    """``num`` samples spaced evenly on a log scale, ``base**start`` to ``base**stop``.

    >>> import dndask as ht
    >>> ht.logspace(0, 2, 3, split=0).numpy().tolist()
    [1.0, 10.0, 100.0]
    """
    if isinstance(base, bool) or not isinstance(base, numbers.Real):
        raise TypeError(f"`base` must be a real number, got {type(base).__name__}")
    exponents = _factories.linspace(
        start, stop, num, endpoint=endpoint, dtype=_types.float64, split=split, comm=comm
    )
    out = _elementwise.power(float(base), exponents)
    dtype = _types.float32 if dtype is None else _types.canonical_dtype(dtype)
    return out.astype(dtype)


def meshgrid(*arrays: DNDarray, indexing: str = "xy") -> list:
    """Coordinate grids from 1-D arrays, as :func:`numpy.meshgrid` (``"xy"`` or ``"ij"``).

    >>> import dndask as ht
    >>> gx, gy = ht.meshgrid(ht.arange(3, split=0), ht.arange(2))
    >>> gx.shape, gx.split, gy.numpy().tolist()
    ((2, 3), 1, [[0, 0, 0], [1, 1, 1]])
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"`indexing` must be 'xy' or 'ij', got {indexing!r}")
    for i, a in enumerate(arrays):
        if not isinstance(a, DNDarray):
            raise TypeError(
                f"`arrays[{i}]` of `meshgrid` must be a DNDarray, got {type(a).__name__}"
            )
        if a.ndim != 1:
            raise ValueError(f"`arrays[{i}]` of `meshgrid` must be 1-D, got {a.ndim}-D")
    n = len(arrays)
    axes = list(range(n))
    if indexing == "xy" and n >= 2:
        axes[0], axes[1] = 1, 0
    shape = [0] * n
    for a, ax in zip(arrays, axes, strict=True):
        shape[ax] = a.shape[0]
    out = []
    for a, ax in zip(arrays, axes, strict=True):
        grid = a
        for other in range(n):
            if other != ax:
                grid = expand_dims(grid, other)
        out.append(broadcast_to(grid, tuple(shape)))
    return out


def shape(a) -> tuple[int, ...]:
    """The global shape of a DNDarray.

    >>> import dndask as ht
    >>> ht.shape(ht.zeros((2, 3), split=0))
    (2, 3)
    """
    if not isinstance(a, DNDarray):
        raise TypeError(f"`a` of `shape` must be a DNDarray, got {type(a).__name__}")
    return a.shape


def asarray(obj, dtype=None, split=None, is_split=None, comm=None) -> DNDarray:
    """:func:`dndask.array` that returns a DNDarray of the right type as it is (no copy).

    >>> import dndask as ht
    >>> a = ht.arange(3, split=0)
    >>> ht.asarray(a) is a
    True
    """
    same = dtype is None or (
        isinstance(obj, DNDarray) and _types.canonical_dtype(dtype) == obj.dtype
    )
    if isinstance(obj, DNDarray) and split is None and is_split is None and comm is None and same:
        return obj
    return _factories.array(obj, dtype=dtype, split=split, is_split=is_split, copy=False, comm=comm)
