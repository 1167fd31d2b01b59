"""Where a DNDarray leaves the one-chunk-per-rank layout inside xarray, and the warning it gives.

An ``xarray.DataArray(a, dims=...)`` keeps the DNDarray ``a`` as its data, and
most of xarray's operations (reductions, arithmetic, ``isel``, ``where``,
``transpose``, ``persist``) call numpy functions or the array API namespace
on it, which dndask implements, so their results are DNDarrays again. A few
hand the DNDarray to a Dask function instead (xarray treats any Dask
collection as a Dask array): Dask's ``sliding_window_view`` for ``rolling``,
``rechunk`` for ``.chunk()``, ``shift`` and ``roll``, ``dask.array.apply_gufunc`` for
``apply_ufunc(dask="parallelized")``. Dask reads the DNDarray as its plain
Dask array (``DNDarray.to_dask_array``, ``DNDarray.rechunk``), and the result
is a ``dask.array.Array`` in Dask's chunks. Those two methods call
:func:`leaving`, which warns once per kind of xarray operation, with the
reason, and remembers the array's comm so that ``.dnd.conform()`` on the result
finds it. Calls that do not come from xarray (``da.asarray(a)`` in user code)
pass silently.
"""

from __future__ import annotations

import collections
import sys
import threading
import warnings
from typing import NamedTuple

from ._placement import Ranks


class LayoutWarning(UserWarning):
    """An xarray operation on DNDarray-backed data could not keep one chunk per rank.

    Its result is a plain ``dask.array.Array`` in the chunks Dask chose; the
    values are right. ``result.dnd.conform()`` lays it out one chunk per rank
    again. Given once per kind of operation (see :func:`leaving`).
    """


# the xarray function that hands the DNDarray to Dask -> (the xarray operations, why)
_REASONS: dict[str, tuple[str, str]] = {
    "sliding_window_view": (
        "`rolling` (and `rolling(...).construct`)",
        "xarray calls Dask's own sliding_window_view on any Dask collection; Dask regroups "
        "the rows so that every chunk holds whole windows (the first rank's chunk grows by "
        "the padding, the last shrinks, empty ranks merge with a neighbour)",
    ),
    "rechunk": (
        "`chunk`",
        "the chunks asked for are Dask chunks, which need not be one per rank",
    ),
    "_shift_one_dim": (
        "`shift`",
        "xarray pads and slices the DNDarray (which keeps the layout) and then calls "
        "`data.rechunk(chunks)`, which gives Dask's array (Dask's own functions rely on that)",
    ),
    "_roll_one_dim": (
        "`roll`",
        "xarray joins two slices of the DNDarray (which keeps the layout) and then calls "
        "`data.rechunk(chunks)`, which gives Dask's array (Dask's own functions rely on that)",
    ),
    "apply_gufunc": (
        "`apply_ufunc(..., dask='parallelized')`",
        "xarray calls dask.array.apply_gufunc, which reads the DNDarray as a plain Dask array",
    ),
    "least_squares": (
        "`polyfit`",
        "xarray fits with Dask's apply_along_axis on any Dask collection, which reads the "
        "DNDarray as a plain Dask array (and fails on an empty rank's chunk, as on an empty "
        "Dask chunk)",
    ),
    "map_blocks": (
        "`map_blocks`",
        "xarray calls dask.array.map_blocks, which reads the DNDarray as a plain Dask array",
    ),
}

_warned: set[str] = set()
_warned_lock = threading.Lock()


class Departed(NamedTuple):
    """A DNDarray that xarray handed to Dask: its comm, split axis and the ranks of its tasks."""

    comm: object
    split: int | None
    task_ranks: Ranks


_DEPARTED_SIZE = 1024
_departed: collections.OrderedDict[str, Departed] = collections.OrderedDict()


def _xarray_caller() -> tuple[str, str] | None:
    """``(module, function)`` of the innermost xarray frame on the stack, or None."""
    frame = sys._getframe(2)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module == "xarray" or module.startswith("xarray."):
            return module, frame.f_code.co_name
        frame = frame.f_back
    return None


def leaving(name: str, comm, split: int | None, task_ranks: Ranks) -> bool:
    """The DNDarray with Dask name ``name`` is handed to Dask as a plain Dask array.

    If xarray asked for it, warn (once per xarray function) and remember its
    comm for :func:`departed`. Called by ``DNDarray.to_dask_array`` and
    ``DNDarray.rechunk`` only. Returns whether xarray asked.
    """
    caller = _xarray_caller()
    if caller is None:
        return False
    with _warned_lock:
        _departed[name] = Departed(comm, split, task_ranks)
        _departed.move_to_end(name)
        while len(_departed) > _DEPARTED_SIZE:
            _departed.popitem(last=False)
        kind = caller[1]
        first = kind not in _warned
        _warned.add(kind)
    if first:
        warnings.warn(_message(*caller), LayoutWarning, stacklevel=3)
    return True


def _message(module: str, kind: str) -> str:
    operations, why = _REASONS.get(
        kind,
        (
            f"`{kind}` ({module})",
            "xarray hands the DNDarray to Dask, which reads it as a plain Dask array",
        ),
    )
    return (
        f"xarray's {operations} cannot keep one chunk per rank on DNDarray data: {why}. "
        "The result is a dask.array.Array in Dask's chunks (values are right); "
        "`.dnd.conform()` lays it out one chunk per rank again. "
        "(dndask gives this warning once per kind of operation.)"
    )


def departed(name: str) -> Departed | None:
    """What :func:`leaving` remembered of the DNDarray with Dask name ``name``."""
    with _warned_lock:
        return _departed.get(name)


def xarray_outer_indexing(key) -> bool:
    """Whether xarray's Dask adapter asks for outer indexing with several index arrays.

    xarray indexes any Dask collection as Dask does: ``array[key]`` with two or
    more index arrays is outer (orthogonal) indexing, and a
    ``NotImplementedError`` makes xarray index one axis at a time. A DNDarray
    indexes the numpy way (the arrays broadcast together), so
    ``DNDarray.__getitem__`` raises that error for exactly this caller.
    """
    if not isinstance(key, tuple):
        return False
    arrays = sum(1 for k in key if not isinstance(k, (slice, int)) and k is not None)
    if arrays < 2:
        return False
    frame = sys._getframe(2)
    return (
        frame is not None
        and frame.f_code.co_name == "_oindex_get"
        and frame.f_globals.get("__name__", "").startswith("xarray.")
    )


def reset_warnings() -> None:
    """Warn again for every kind of operation (for tests)."""
    with _warned_lock:
        _warned.clear()


__all__ = [
    "Departed",
    "LayoutWarning",
    "departed",
    "leaving",
    "reset_warnings",
    "xarray_outer_indexing",
]
