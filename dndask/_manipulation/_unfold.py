"""``unfold``: sliding windows along one axis (Heat's, after ``torch.Tensor.unfold``).

Along a non-split axis every rank unfolds its own chunk. Along the split axis a
window may reach into the next ranks: each rank receives the first ``size - 1`` rows
of the next populated rank (a halo exchange, :func:`dndask.halos`) and builds the
windows that start in its own rows. As in Heat, a window may span at most one rank
boundary, so ``size - 1`` must not exceed any populated rank's count (``RuntimeError``).
"""

from __future__ import annotations

import numbers

from .. import _dndarray, _halo, _xp
from . import _checks, _graph

__all__ = ["unfold"]


def _windows(chunk, axis: int, size: int, step: int, start: int, count: int):
    """``count`` windows of ``size`` along ``axis`` from ``start`` by ``step``; window axis last."""
    xp = _xp.namespace_of(chunk)
    if count == 0:
        shape = list(chunk.shape)
        shape[axis] = 0
        return xp.empty((*shape, size), dtype=chunk.dtype)
    view = xp.lib.stride_tricks.sliding_window_view(chunk, size, axis=axis)
    index = [slice(None)] * view.ndim
    index[axis] = slice(start, start + step * (count - 1) + 1, step)
    return xp.ascontiguousarray(view[tuple(index)])


def _int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an int, got {type(value).__name__}")
    return int(value)


def unfold(a: _dndarray.DNDarray, axis: int, size: int, step: int = 1) -> _dndarray.DNDarray:
    """Every window of ``size`` elements along ``axis``, ``step`` apart (Heat's ``unfold``).

    As ``torch.Tensor.unfold``: ``axis`` holds the windows (``(n - size) // step + 1``
    of them) and a new last axis of length ``size`` their elements. Heat-only (numpy's
    nearest is ``sliding_window_view``, without ``step``). The split stays; along the
    split axis rank ``r`` holds the windows that start in its rows.

    >>> import dndask as ht
    >>> ht.unfold(ht.arange(12, split=0), 0, 3, 3).numpy().tolist()
    [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]]
    """
    _checks.check_dndarray(a)
    axis = _int(axis, "axis")
    if not -a.ndim <= axis < a.ndim:
        raise ValueError(f"`axis` must be in [{-a.ndim}, {a.ndim}), got {axis}")
    axis %= a.ndim
    size, step = _int(size, "size"), _int(step, "step")
    n = a.shape[axis]
    if size < 2:  # Heat refuses windows of one element
        raise ValueError(f"`size` must be at least 2, got {size}")
    if step < 1:
        raise ValueError(f"`step` must be at least 1, got {step}")
    if size > n:
        raise ValueError(f"`size` must be at most the length {n} of `axis` {axis}, got {size}")
    total = (n - size) // step + 1
    shape = (*(total if ax == axis else s for ax, s in enumerate(a.shape)), size)
    if a.split != axis or a.comm.size == 1:
        if a.split is None:
            counts = (0,)
        elif a.split == axis:  # one rank holds every window
            counts = (total,)
        else:
            counts = a.distribution.counts
        return _graph.local(
            [a],
            _windows,
            shape,
            a.split,
            counts,
            prefix="unfold",
            args_of=lambda r: (axis, size, step, 0, total),
        )
    counts, displs = a.counts_displs()
    populated = [c for c in counts if c]
    if size - 1 > min(populated):
        raise RuntimeError(
            f"`size` - 1 = {size - 1} must be at most every populated rank's count along the "
            "split axis (a window spans at most one rank boundary, as in Heat), got "
            f"{min(populated)}"
        )
    extended = _halo.halos(a, size - 1, prev=False, next=True)[2] if size > 1 else a
    starts, window_counts = [], []
    for c, d in zip(counts, displs, strict=True):
        first = -(-d // step) * step  # the first window start at or after this rank's rows
        last = min(d + c, n - size + 1)  # window starts must lie in [d, last)
        k = max(0, -(-(last - first) // step)) if c else 0
        starts.append(first - d)
        window_counts.append(k)
    return _graph.local(
        [extended],
        _windows,
        shape,
        axis,
        window_counts,
        prefix="unfold",
        args_of=lambda r: (axis, size, step, starts[r], window_counts[r]),
    )
