"""``sliding_window_view``: every window of ``w`` neighbouring slices along an axis.

numpy returns a strided view; a DNDarray has no views across ranks, so the
result is a copy. Window ``k`` (``0 <= k < w``) of output row ``i`` is input
row ``i + k``: the result is the ``w`` shifted slices ``a[k : n - w + 1 + k]``
stacked along a new last axis. The slices along the split axis come from
neighbouring ranks, and the stack joins them in the layout of the first, so a
rank receives the ``w - 1`` rows past its end (a halo) and nothing else moves.
The split stays; the last ranks hold ``w - 1`` fewer rows in all.
"""

from __future__ import annotations

from .. import _dndarray, _layout
from . import _checks
from ._join import stack


def sliding_window_view(
    a: _dndarray.DNDarray, window_shape, axis=None, *, subok: bool = False, writeable=False
) -> _dndarray.DNDarray:
    """Every window of ``window_shape`` along ``axis``, as numpy's ``sliding_window_view``.

    The window axes are appended at the end, in the order of ``axis``
    (``None``: every axis, ``window_shape`` one size per axis). The result is
    a copy (``writeable=True``, a writable view, is not supported) and keeps
    ``a``'s split; windows along the split axis take the ``w - 1`` rows after
    each rank's own from the ranks that hold them.

    >>> import dndask as ht, numpy as np
    >>> w = np.lib.stride_tricks.sliding_window_view(ht.arange(5, split=0), 3)
    >>> w.numpy().tolist(), w.split
    ([[0, 1, 2], [1, 2, 3], [2, 3, 4]], 0)
    """
    _checks.check_dndarray(a, "x")
    if subok or writeable:
        raise NotImplementedError(
            "`sliding_window_view` of a DNDarray is a copy: `subok` and `writeable` must be False"
        )
    windows = _checks.int_tuple(window_shape, "window_shape")
    if axis is None:
        axes = tuple(range(a.ndim))
        if len(windows) != a.ndim:
            raise ValueError(
                f"`window_shape` must have one size per axis ({a.ndim}) when `axis` is None, "
                f"got {len(windows)}"
            )
    else:
        axes = tuple(
            _layout.normalize_axis(ax, a.ndim, "axis") for ax in _checks.int_tuple(axis, "axis")
        )
        if len(axes) != len(windows):
            raise ValueError(
                f"`window_shape` must have one size per axis in `axis` ({len(axes)}), "
                f"got {len(windows)}"
            )
    out = a
    for ax, w in zip(axes, windows, strict=True):
        if w < 1:
            raise ValueError(f"`window_shape` must be at least 1, got {w}")
        if w > out.shape[ax]:
            raise ValueError(
                f"`window_shape` must not exceed the axis length: axis {ax} has "
                f"{out.shape[ax]}, window {w}"
            )
        keep = out.shape[ax] - w + 1
        shifted = [
            out[tuple(slice(k, k + keep) if i == ax else slice(None) for i in range(out.ndim))]
            for k in range(w)
        ]
        out = stack(shifted, axis=-1)
    return out


__all__ = ["sliding_window_view"]
