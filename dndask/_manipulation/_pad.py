"""Padding, as :func:`numpy.pad`, with the split axis's padding built where it goes.

Non-split axes pad locally. Along the split axis the ``before`` rows go to
rank 0 and the ``after`` rows to the last rank: constant and empty padding
is made there, the other modes first move there only the rows numpy reads
(edge rows, a reflection's width, ``stat_length`` rows), or combine one
partial statistic row per rank for a statistic over the whole axis.
"""

from __future__ import annotations

import numpy as np
from dask.base import tokenize

from .. import _dndarray, _layout
from .._compat import Task, TaskRef
from . import _checks, _graph, _plan

_PAD_MODES = (
    "constant",
    "edge",
    "linear_ramp",
    "maximum",
    "mean",
    "minimum",
    "reflect",
    "symmetric",
    "wrap",
    "empty",
)
_STAT_MODES = ("maximum", "mean", "minimum")


def _pad_width(ndim: int, axis: int, widths: tuple[int, int]) -> tuple:
    """numpy's ``pad_width`` padding only ``axis``."""
    return tuple(tuple(widths) if a == axis else (0, 0) for a in range(ndim))


def _padded_shape(shape: tuple[int, ...], axis: int, widths: tuple[int, int]) -> tuple[int, ...]:
    return tuple(s + sum(widths) if a == axis else s for a, s in enumerate(shape))


# ----------------------------------------------------------------- chunk functions
# Module-level so that tasks pickle and tokenize by name.


def _pad_chunk(chunk: np.ndarray, pad_width: tuple, mode: str, kwargs: dict) -> np.ndarray:
    return np.pad(chunk, pad_width, mode=mode, **kwargs)


def _pad_side(
    window: np.ndarray, axis: int, widths: tuple[int, int], mode: str, kwargs: dict, side: int
) -> np.ndarray:
    """The ``before`` (side 0) or ``after`` (side 1) rows numpy pads ``window`` with."""
    padded = np.pad(window, _pad_width(window.ndim, axis, widths), mode=mode, **kwargs)
    n = widths[side]
    index = slice(0, n) if side == 0 else slice(padded.shape[axis] - n, None)
    return padded[(slice(None),) * axis + (index,)]


_STAT_FUNCTIONS = {"mean": np.sum, "maximum": np.max, "minimum": np.min}


def _partial_stat(chunk: np.ndarray, axis: int, stat: str) -> np.ndarray:
    return _STAT_FUNCTIONS[stat](chunk, axis=axis, keepdims=True)


def _stat_rows(
    *partials: np.ndarray, axis: int, stat: str, n: int, width: int, dtype
) -> np.ndarray:
    """``width`` rows of the statistic over the whole axis, combined from per-rank partials."""
    joined = np.concatenate(partials, axis=axis)
    if stat == "mean":
        value = np.sum(joined, axis=axis, keepdims=True) / n
        if np.dtype(dtype).kind in "iu":
            value = np.round(value)
    else:
        value = _STAT_FUNCTIONS[stat](joined, axis=axis, keepdims=True)
    shape = list(joined.shape)
    shape[axis] = width
    return np.broadcast_to(value, shape).astype(dtype)


def _pairs(value, ndim: int, name: str, *, ints: bool) -> np.ndarray:
    """numpy's ``(before, after)`` per axis reading of a pad argument, as an ``(ndim, 2)`` array."""
    arr = np.asarray(value)
    if ints and (arr.dtype.kind not in "iu"):
        raise TypeError(f"`{name}` must hold ints, got {arr.dtype}")
    if not ints and arr.dtype.kind not in "biufc":
        raise TypeError(f"`{name}` must hold numbers, got {arr.dtype}")
    try:
        out = np.broadcast_to(arr, (ndim, 2))
    except ValueError:
        raise ValueError(
            f"`{name}` must broadcast to ({ndim}, 2) (before, after) pairs, got shape {arr.shape}"
        ) from None
    if ints and (out < 0).any():
        raise ValueError(f"`{name}` must hold non-negative ints, got {arr.tolist()}")
    return out


def _pad_options(mode, ndim, constant_values, end_values, stat_length, reflect_type) -> dict:
    """Checked per-axis numpy keywords of ``mode``: ``{axis: kwargs}``."""
    if mode == "median":
        raise NotImplementedError("`pad` does not support mode 'median'")
    if not isinstance(mode, str):
        raise TypeError(f"`mode` must be a str, got {type(mode).__name__}")
    if mode not in _PAD_MODES:
        raise ValueError(f"`mode` must be one of {', '.join(_PAD_MODES)}, got {mode!r}")
    if mode == "constant":
        values = _pairs(constant_values, ndim, "constant_values", ints=False)
        return {ax: {"constant_values": tuple(values[ax])} for ax in range(ndim)}
    if mode == "linear_ramp":
        values = _pairs(end_values, ndim, "end_values", ints=False)
        return {ax: {"end_values": tuple(values[ax])} for ax in range(ndim)}
    if mode in _STAT_MODES:
        if stat_length is None:
            return {ax: {"stat_length": None} for ax in range(ndim)}
        lengths = _pairs(stat_length, ndim, "stat_length", ints=True)
        if (lengths == 0).any():
            raise ValueError(f"`stat_length` must hold positive ints, got {lengths.tolist()}")
        return {ax: {"stat_length": tuple(int(v) for v in lengths[ax])} for ax in range(ndim)}
    if mode in ("reflect", "symmetric"):
        if reflect_type not in ("even", "odd"):
            raise ValueError(f"`reflect_type` must be 'even' or 'odd', got {reflect_type!r}")
        return {ax: {"reflect_type": reflect_type} for ax in range(ndim)}
    return {ax: {} for ax in range(ndim)}


def _axis_kwargs(kwargs: dict, axis: int, ndim: int) -> dict:
    """``kwargs`` of one axis as numpy wants them for a pad of that axis only."""
    out = {}
    for key, value in kwargs.items():
        if key == "reflect_type" or value is None:
            out[key] = value
        else:
            filler = (1, 1) if key == "stat_length" else (0, 0)
            out[key] = tuple(value if a == axis else filler for a in range(ndim))
    return out


def _window(mode: str, n: int, widths: tuple[int, int], side: int, kwargs: dict):
    """Rows ``[lo, hi)`` one side's padding depends on, and the widths to pad them with.

    ``None`` means a statistic over the whole axis (combined from per-rank
    partials). A side that reaches past what one reflection covers depends
    on the whole axis and on the other side, so it pads all rows with both widths.
    """
    width = widths[side]
    own = (width, 0) if side == 0 else (0, width)
    if mode in ("edge", "linear_ramp"):
        return ((0, 1) if side == 0 else (n - 1, n)), own
    if mode in _STAT_MODES:
        length = kwargs["stat_length"]
        length = n if length is None else min(length[side], n)
        if length >= n:
            return None, own
        return ((0, length) if side == 0 else (n - length, n)), own
    reach = {"reflect": n - 1, "symmetric": n, "wrap": n}[mode]
    if width > reach:
        return (0, n), tuple(widths)
    if mode == "wrap":
        return ((n - width, n) if side == 0 else (0, width)), own
    rows = width + (mode == "reflect")
    return ((0, rows) if side == 0 else (n - rows, n)), own


def _pad_local(
    d: _dndarray.DNDarray, axis: int, widths, mode: str, kwargs: dict
) -> _dndarray.DNDarray:
    """Pad a non-split axis: every rank pads its own chunk."""
    shape = _padded_shape(d.shape, axis, widths)
    pad_width = _pad_width(d.ndim, axis, widths)
    kw = _axis_kwargs(kwargs, axis, d.ndim)
    return _graph.local(
        [d],
        _pad_chunk,
        shape,
        d.split,
        d.distribution.counts,
        prefix="pad",
        args_of=lambda r: (pad_width, mode, kw),
    )


def _pad_split_constant(
    d: _dndarray.DNDarray, widths, mode: str, kwargs: dict
) -> _dndarray.DNDarray:
    """Constant/empty padding of the split axis: rank 0 and the last rank pad their own chunk."""
    axis, size = d.split, d.comm.size
    counts = _plan.padded_counts(d.distribution.counts, *widths)
    shape = _padded_shape(d.shape, axis, widths)
    kw = _axis_kwargs(kwargs, axis, d.ndim)

    def args(r: int) -> tuple:
        own = (widths[0] if r == 0 else 0, widths[1] if r == size - 1 else 0)
        return (_pad_width(d.ndim, axis, own), mode, kw)

    return _graph.local([d], _pad_chunk, shape, axis, counts, prefix="pad", args_of=args)


def _side_task(
    d: _dndarray.DNDarray,
    side: int,
    widths,
    mode: str,
    kwargs: dict,
    name: str,
    dsk: dict,
    task_ranks: dict,
):
    """Add the tasks of one side's padding rows to ``dsk``; return their key."""
    axis, n, size = d.split, d.shape[d.split], d.comm.size
    target = 0 if side == 0 else size - 1
    counts = d.distribution.counts
    key = (f"{name}-side", side)
    task_ranks[key] = target
    window, pad = _window(mode, n, widths, side, kwargs)
    if window is None:  # a statistic of the whole axis: one partial row per non-empty rank
        parts = []
        for r, c in enumerate(counts):
            if c:
                part = (f"{name}-partial", side, r)
                dsk[part] = Task(
                    part,
                    _partial_stat,
                    TaskRef(_graph.chunk_key(d.to_dask(), d.split, r)),
                    axis,
                    mode,
                )
                task_ranks[part] = r
                parts.append(TaskRef(part))
        dsk[key] = Task(
            key, _stat_rows, *parts, axis=axis, stat=mode, n=n, width=widths[side], dtype=d.dtype
        )
        return key
    pieces = [_plan.OperandPiece(0, *p) for p in _plan.plan_ranges(counts, [window])]
    lshape = tuple(window[1] - window[0] if a == axis else s for a, s in enumerate(d.shape))
    window_key = (f"{name}-window", side)
    part_dsk, part_task_ranks = _graph.pieces_graph(
        [d], [pieces], [window_key], axis, [lshape], d.dtype, f"{name}-{side}"
    )
    dsk.update(part_dsk)
    task_ranks.update(part_task_ranks)
    task_ranks[window_key] = target
    kw = _axis_kwargs(kwargs, axis, d.ndim)
    dsk[key] = Task(key, _pad_side, TaskRef(window_key), axis, tuple(pad), mode, kw, side)
    return key


def _pad_split_rows(d: _dndarray.DNDarray, widths, mode: str, kwargs: dict) -> _dndarray.DNDarray:
    """Padding of the split axis that depends on the data: rows built from the axis's ends.

    Each side's rows are computed from the few rows numpy would read (moved
    to rank 0 or the last rank), or from per-rank partial statistics.
    """
    axis, size = d.split, d.comm.size
    counts = _plan.padded_counts(d.distribution.counts, *widths)
    shape = _padded_shape(d.shape, axis, widths)
    chunks = _layout.chunks_for(shape, axis, counts)
    lshapes = _graph.local_shapes(shape, axis, counts)
    name = f"pad-{tokenize(d.to_dask().name, widths, mode, kwargs)}"
    dsk: dict = {}
    task_ranks: dict = {}
    before = _side_task(d, 0, widths, mode, kwargs, name, dsk, task_ranks) if widths[0] else None
    after = _side_task(d, 1, widths, mode, kwargs, name, dsk, task_ranks) if widths[1] else None
    for r in range(size):
        keys = [_graph.chunk_key(d.to_dask(), d.split, r)]
        if r == 0 and before is not None:
            keys.insert(0, before)
        if r == size - 1 and after is not None:
            keys.append(after)
        out_key = _graph.block_key(name, axis, d.ndim, r)
        like = _graph.meta_of(d.dtype, d.ndim, like=d)
        dsk[out_key] = _graph.join_task(out_key, keys, axis, lshapes[r], d.dtype, like)
    return _graph.wrap(dsk, name, chunks, d.dtype, [d], axis, d.comm, task_ranks)


def pad(
    a: _dndarray.DNDarray,
    pad_width,
    mode: str = "constant",
    constant_values=0,
    *,
    end_values=0,
    stat_length=None,
    reflect_type: str = "even",
) -> _dndarray.DNDarray:
    """Pad an array, as :func:`numpy.pad`.

    Modes: ``constant``, ``edge``, ``linear_ramp``, ``maximum``, ``mean``,
    ``minimum``, ``reflect``, ``symmetric``, ``wrap``, ``empty`` (``median``
    and callables raise ``NotImplementedError``). ``end_values``,
    ``stat_length`` and ``reflect_type`` are numpy's keywords of those modes.

    The split stays. Along the split axis the ``before`` rows go to rank 0
    and the ``after`` rows to the last rank (as in Heat); the other ranks keep
    their counts. Constant and empty padding is made where it goes; the other
    modes move to rank 0 / the last rank only the rows numpy reads for the
    padding (the edge rows, a reflection's width, ``stat_length`` rows; for a
    statistic over the whole axis one partial row per rank). Other axes pad
    locally. Axes are padded in order, as numpy does.

    >>> import dndask as ht
    >>> p = ht.pad(ht.arange(5, split=0), (2, 1), mode="edge")
    >>> p.numpy().tolist(), p.lshape_map.tolist()
    ([0, 0, 0, 1, 2, 3, 4, 4], [[4], [1], [1], [2]])
    """
    _checks.check_dndarray(a)
    kwargs = _pad_options(mode, a.ndim, constant_values, end_values, stat_length, reflect_type)
    widths = _pairs(pad_width, a.ndim, "pad_width", ints=True)
    for axis, (b, f) in enumerate(widths):
        if (b or f) and a.shape[axis] == 0 and mode not in ("constant", "empty"):
            raise ValueError(
                f"`mode` {mode!r} cannot pad the empty axis {axis}; use 'constant' or 'empty'"
            )
    out = a.copy()
    for axis, (b, f) in enumerate(widths):
        b, f = int(b), int(f)
        if not (b or f):
            continue
        if axis != out.split:
            out = _pad_local(out, axis, (b, f), mode, kwargs[axis])
        elif mode in ("constant", "empty"):
            out = _pad_split_constant(out, (b, f), mode, kwargs[axis])
        else:
            out = _pad_split_rows(out, (b, f), mode, kwargs[axis])
    return out
