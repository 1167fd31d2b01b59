"""``solve_triangular``: blocked substitution over the ranks, one task per block of rows.

``a`` is laid out by rows (split ``-2``) with the counts of ``b``'s rows, so rank
``i`` holds the rows ``I`` of ``a`` and of ``b``. For an upper triangular ``a``,
rank ``i`` solves ``a[I, I] x_I = b_I - sum_{j > i} a[I, J] x_J`` once the later
blocks ``x_J`` are known; only the ``x_J`` blocks (``|J| x k`` each) travel, to
the ranks above ``j``. A lower triangular ``a`` runs the other way. A stack
split along a batch axis is solved chunk by chunk where it lives.
"""

from __future__ import annotations

import numpy as np
from dask.base import tokenize

from .. import _dndarray, _graph, _layout, _torch
from .._compat import List, Task, TaskRef
from .._distribution import relayout
from .._layout import Distribution
from ._build import _wrap, _zeros
from ._checks import _check_array, _check_bool


def _solve(a, b, lower: bool):
    torch = _torch.torch()
    ta = torch.from_numpy(np.ascontiguousarray(a).copy())
    tb = torch.from_numpy(np.ascontiguousarray(b).copy())
    return torch.linalg.solve_triangular(ta, tb, upper=not lower).numpy()


def _block_step(a_rows, b_rows, start: int, stop: int, xs, ranges, lower: bool, dtype):
    a_rows = np.asarray(a_rows, dtype=dtype)
    rhs = np.array(b_rows, dtype=dtype)
    for x, (s, e) in zip(xs, ranges, strict=True):
        rhs -= a_rows[..., :, s:e] @ x
    return _solve(a_rows[..., :, start:stop], rhs, lower)


def _per_chunk(a_chunk, b_chunk, lower: bool, dtype):
    if a_chunk.size == 0 or b_chunk.size == 0:
        return np.zeros(b_chunk.shape, dtype=dtype)
    return _solve(np.asarray(a_chunk, dtype=dtype), np.asarray(b_chunk, dtype=dtype), lower)


def _check(a, b):
    _check_array(a, "a")
    _check_array(b, "b")
    if a.ndim < 2:
        raise ValueError(f"`a` must be a (stack of) matrices, got {a.ndim} dimension(s)")
    if b.ndim != a.ndim:
        raise ValueError(
            f"`b` must have as many dimensions as `a` ({a.ndim}), got {b.ndim} "
            "(pass a vector as an n x 1 matrix)"
        )
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"`a` must be square, got shape {a.shape}")
    nd = a.ndim
    if a.shape[:-2] != b.shape[:-2]:
        raise ValueError(
            f"`a` and `b` must have the same batch shape, got {a.shape[:-2]} and {b.shape[:-2]}"
        )
    if b.shape[-2] != a.shape[-1]:
        raise ValueError(f"`b` must have {a.shape[-1]} rows, got {b.shape[-2]}")
    if b.split == nd - 1:
        raise ValueError("`b` must not be split along its columns (axis -1)")
    batch = [x.split for x in (a, b) if x.split is not None and x.split < nd - 2]
    if batch and a.split != b.split:
        raise ValueError(
            f"`a` and `b` split along a batch axis must share it, "
            f"got splits {a.split} and {b.split}"
        )
    for x, name in ((a, "a"), (b, "b")):
        if x.dtype.kind not in "biufc":
            raise TypeError(f"`{name}` must be numeric, got {x.dtype}")


def solve_triangular(a, b, lower: bool = False) -> _dndarray.DNDarray:
    """Solve ``a @ x = b`` for a triangular (stack of) ``a``; upper triangular by default.

    Only the triangle named by ``lower`` is read. ``b`` is ``(..., n, k)`` (a vector
    is an ``n x 1`` matrix) with ``a``'s batch shape, split along its rows, a batch
    axis shared with ``a``, or not at all.

    Layouts: a stack split along a batch axis is solved chunk by chunk; otherwise
    ``a`` is laid out by rows with ``b``'s row counts (``a``'s moves once at most)
    and the blocks of ``x`` are solved one rank after the other, each rank sending
    its block to the ranks that still need it. The result is split like ``b``.

    Parameters
    ----------
    a : DNDarray
        ``(..., n, n)``, triangular (not checked), invertible.
    b : DNDarray
        ``(..., n, k)``.
    lower : bool
        ``a`` is lower triangular (default: upper, Heat's only case).

    Returns
    -------
    DNDarray
        ``x`` of ``b``'s shape, split like ``b``; float64 for integer inputs.

    Examples
    --------
    >>> import numpy as np, dndask as ht
    >>> a = ht.array([[2.0, 1.0, 0.0], [0.0, 1.0, 1.0], [0.0, 0.0, 4.0]], split=0)
    >>> x = ht.linalg.solve_triangular(a, ht.array([[3.0], [2.0], [4.0]], split=0))
    >>> x.numpy().ravel().tolist()
    [1.0, 1.0, 1.0]
    """
    _check(a, b)
    _check_bool(lower, "lower")
    dtype = np.result_type(a.dtype, b.dtype, np.float32 if a.dtype.kind in "fc" else np.float64)
    if dtype.kind not in "fc" or dtype.itemsize < 4:
        dtype = np.dtype(np.float64)
    nd, comm = a.ndim, a.comm
    if a.split is not None and a.split < nd - 2:
        b2 = relayout(b, a.distribution)
        arr = a.to_dask().map_blocks(
            _per_chunk, b2.to_dask(), lower, dtype, dtype=dtype,
            meta=_graph.meta_of(dtype, nd, like=a), chunks=b2.to_dask().chunks,
        )  # fmt: skip
        return _dndarray.from_dask(arr, a.split, comm, parents=(a, b2))
    rows = nd - 2
    if b.split == rows:
        counts = b.distribution.counts
    elif a.split is not None:
        counts = a.distribution.counts
    else:
        counts = (a.shape[-1],) + (0,) * (comm.size - 1)  # all on rank 0, where both are
    a2 = relayout(a, Distribution(rows, counts, comm))
    b2 = relayout(b, Distribution(rows, counts, comm))
    x_name = f"solve-triangular-{tokenize(a2.to_dask().name, b2.to_dask().name, lower, dtype)}"
    starts = _layout.displacements(counts)
    order = [r for r, c in enumerate(counts) if c]
    if not lower:
        order = order[::-1]
    dsk, task_ranks, done = {}, {}, []
    a_arr, b_arr = a2.to_dask(), b2.to_dask()
    for r in order:
        key = (x_name, *_graph.block_index(rows, nd, r))
        start, stop = starts[r], starts[r] + counts[r]
        ranges = [(starts[j], starts[j] + counts[j]) for j in done]
        dsk[key] = Task(
            key, _block_step,
            TaskRef(_graph.chunk_key(a_arr, rows, r)), TaskRef(_graph.chunk_key(b_arr, rows, r)),
            start, stop, List(*(TaskRef((x_name, *_graph.block_index(rows, nd, j))) for j in done)),
            ranges, lower, dtype,
        )  # fmt: skip
        task_ranks[key] = r
        done.append(r)
    like = _graph.meta_of(dtype, nd, like=a)
    for r, c in enumerate(counts):
        if not c:
            key = (x_name, *_graph.block_index(rows, nd, r))
            shape = (*b.shape[:-2], 0, b.shape[-1])
            dsk[key] = Task(key, _zeros, shape, dtype, like)
    x = _wrap(x_name, dsk, [a_arr, b_arr], b.shape, rows, counts, dtype, comm, (a2, b2), task_ranks)
    if b.split == rows:
        return x
    return relayout(x, Distribution.balanced(x.shape, b.split, comm))
