"""Bin indices: ``digitize`` (numpy's rule) and ``bucketize`` (torch's rule).

The bin edges are small and 1-D: they go to every rank, and each rank looks up
its own elements, so the result has the input's split and distribution.
"""

from __future__ import annotations

import numpy as np

from .. import _dndarray, _ops, _xp


def _edges(bins, name: str) -> np.ndarray:
    if isinstance(bins, _dndarray.DNDarray) or (hasattr(bins, "numpy") and callable(bins.numpy)):
        bins = bins.numpy()
    edges = np.asarray(bins)
    if edges.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D, got {edges.ndim}-D")
    if edges.dtype.kind not in "biuf":
        raise TypeError(f"`{name}` must be real numbers, got {edges.dtype}")
    if edges.size > 1:
        d = np.diff(edges)
        if not ((d >= 0).all() or (d <= 0).all()):
            raise ValueError(f"`{name}` must be monotonic")
    return edges


def _digitize(chunk, edges: np.ndarray, right: bool):
    """numpy's bin indices of a chunk; the (small) edges are copied into its namespace."""
    xp = _xp.namespace_of(chunk)
    return xp.digitize(chunk, xp.asarray(edges), right=right).astype(np.int64)


def _bucketize(chunk, edges: np.ndarray, side: str, dtype):
    xp = _xp.namespace_of(chunk)
    return xp.searchsorted(xp.asarray(edges), chunk, side=side).astype(dtype)


def _check(x, name: str) -> None:
    if not isinstance(x, _dndarray.DNDarray):
        raise TypeError(f"`x` of `{name}` must be a DNDarray, got {type(x).__name__}")


def digitize(x: _dndarray.DNDarray, bins, right: bool = False) -> _dndarray.DNDarray:
    """The index of the bin of each element, as :func:`numpy.digitize` (int64).

    >>> import dndask as ht
    >>> ht.digitize(ht.array([0.5, 1.0, 2.5], split=0), [1.0, 2.0]).numpy().tolist()
    [0, 1, 2]
    """
    _check(x, "digitize")
    if not isinstance(right, (bool, np.bool_)):
        raise TypeError(f"`right` must be a bool, got {type(right).__name__}")
    edges = _edges(bins, "bins")

    def local(v):
        return v.map_blocks(_digitize, edges, bool(right), dtype=np.int64)

    return _ops.elementwise(local, x, name="digitize")


def bucketize(x: _dndarray.DNDarray, boundaries, out_int32: bool = False, right: bool = False):
    """The index of each element's bucket, as :func:`torch.bucketize`.

    With ``right=False`` element ``v`` goes to ``i`` with ``b[i-1] < v <= b[i]``;
    with ``right=True`` to ``i`` with ``b[i-1] <= v < b[i]``.

    >>> import dndask as ht
    >>> ht.bucketize(ht.array([1.0, 1.5, 2.0], split=0), [1.0, 2.0]).numpy().tolist()
    [0, 1, 1]
    """
    _check(x, "bucketize")
    for name, value in (("out_int32", out_int32), ("right", right)):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"`{name}` must be a bool, got {type(value).__name__}")
    edges = _edges(boundaries, "boundaries")
    side = "right" if right else "left"
    dtype = np.int32 if out_int32 else np.int64

    def local(v):
        return v.map_blocks(_bucketize, edges, side, dtype, dtype=dtype)

    return _ops.elementwise(local, x, name="bucketize")
