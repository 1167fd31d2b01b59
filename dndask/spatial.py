"""Pairwise distances between the rows of DNDarrays: ``cdist``, ``rbf``, ``manhattan``.

Planned like a matrix product: the result is split as the operands allow (rows of
``X`` split: the result's rows; only ``Y``'s rows split: its columns; neither: not
split), and each output chunk is one task on the rank that holds it, which reads
its own block of the split operand and every block of the other. So each block
moves at most once to each rank, and never to the driver.

>>> import dndask as ht, numpy as np
>>> from dndask.spatial import cdist
>>> x = ht.array([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]], split=0)
>>> cdist(x).numpy().tolist()
[[0.0, 5.0, 10.0], [5.0, 0.0, 5.0], [10.0, 5.0, 0.0]]
>>> cdist(x).split
0
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Callable

import dask.array as da
import numpy as np

import dndask as ht

__all__ = ["cdist", "manhattan", "rbf"]

# rows of X per slab in a kernel: a slab's temporaries hold about this many elements
_SLAB_ELEMENTS = 1 << 22


def _slabs(x: np.ndarray, y: np.ndarray, width: int) -> list[slice]:
    step = max(1, _SLAB_ELEMENTS // max(1, y.shape[0] * width))
    return [slice(i, i + step) for i in range(0, max(1, x.shape[0]), step)]


def _squared_direct(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``|x_i - y_j|^2`` from the differences (exact where the values are)."""
    out = np.empty((x.shape[0], y.shape[0]), dtype=x.dtype)
    for rows in _slabs(x, y, x.shape[1]):
        diff = x[rows, None, :] - y[None, :, :]
        np.einsum("ijk,ijk->ij", diff, diff, out=out[rows])
    return out


def _squared_expanded(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``|x_i|^2 + |y_j|^2 - 2 x_i.y_j``, clipped at 0 (one matrix product: faster).

    Every step writes into the product's buffer: the result is the only ``n x m``
    allocation (fresh pages cost more than the arithmetic at these widths).
    """
    out = np.matmul(x, y.T)
    out *= -2
    out += np.einsum("ij,ij->i", x, x)[:, None]
    out += np.einsum("ij,ij->i", y, y)[None, :]
    return np.maximum(out, 0, out=out)


def _euclidean(x, y, expand: bool) -> np.ndarray:
    d2 = (_squared_expanded if expand else _squared_direct)(x, y)
    return np.sqrt(d2, out=d2)


def _gaussian(x, y, expand: bool, sigma: float) -> np.ndarray:
    d2 = (_squared_expanded if expand else _squared_direct)(x, y)
    return np.exp(d2 / x.dtype.type(-2.0 * sigma * sigma))


def _cityblock(x, y, expand: bool) -> np.ndarray:
    del expand  # one way to compute it; the flag is Heat's
    out = np.empty((x.shape[0], y.shape[0]), dtype=x.dtype)
    for rows in _slabs(x, y, x.shape[1]):
        np.abs(x[rows, None, :] - y[None, :, :]).sum(axis=2, out=out[rows])
    return out


def _kernel(metric: Callable, dtype: np.dtype, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return metric(np.asarray(x, dtype=dtype), np.asarray(y, dtype=dtype))


def _operand(a, name: str) -> ht.DNDarray:
    if not isinstance(a, ht.DNDarray):
        raise TypeError(f"`{name}` must be a DNDarray, got {type(a).__name__}")
    if a.ndim != 2:
        raise ValueError(f"`{name}` must be 2-D (samples, features), got shape {a.shape}")
    kind = a.to_dask().dtype
    if not (np.issubdtype(kind, np.number) or kind == np.bool_) or np.issubdtype(
        kind, np.complexfloating
    ):
        raise TypeError(f"`{name}` must have a real numeric dtype, got {kind}")
    return a


def _result_dtype(X: ht.DNDarray, Y: ht.DNDarray, dtype) -> np.dtype:
    if dtype is None:
        return np.result_type(X.to_dask().dtype, Y.to_dask().dtype, np.float32)
    dtype = np.dtype(dtype)
    if not np.issubdtype(dtype, np.floating):
        raise TypeError(f"`dtype` must be a floating dtype, got {dtype}")
    return dtype


def _pairwise(X, Y, metric: Callable, dtype) -> ht.DNDarray:
    """The plan shared by the three metrics (see the module docstring)."""
    X = _operand(X, "X")
    Y = X if Y is None else _operand(Y, "Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(
            f"`X` and `Y` must have the same number of features, got {X.shape[1]} and {Y.shape[1]}"
        )
    if X.comm != Y.comm:
        raise ValueError("`X` and `Y` must live on the same comm")
    dtype = _result_dtype(X, Y, dtype)
    # a split along the features is no layout for row-wise work: split the rows instead
    same = Y is X
    X = X.resplit(0) if X.split == 1 else X
    Y = X if same else (Y.resplit(0) if Y.split == 1 else Y)
    fn = functools.partial(_kernel, metric, dtype)
    xa, ya = X.to_dask(), Y.to_dask()
    m, n = X.shape[0], Y.shape[0]
    if X.split == 0:
        # chunk i: x_i against every block of Y (concatenated inside the task)
        out = da.blockwise(
            fn, "iz", xa, "ik", ya, "jk", concatenate=True, new_axes={"z": n}, dtype=dtype
        )
        split = 0
    elif Y.split == 0:
        out = da.blockwise(
            fn, "zj", xa, "ik", ya, "jk", concatenate=True, new_axes={"z": m}, dtype=dtype
        )
        split = 1
    else:
        out = da.blockwise(fn, "ij", xa, "ik", ya, "jk", concatenate=True, dtype=dtype)
        split = None
    return ht.from_dask(out, split=split, comm=X.comm)


def _check_flag(value, name: str) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"`{name}` must be a bool, got {type(value).__name__}")


def cdist(
    X: ht.DNDarray, Y: ht.DNDarray | None = None, quadratic_expansion: bool = False, *, dtype=None
) -> ht.DNDarray:
    """Euclidean distances between the rows of ``X`` and those of ``Y`` (``X``'s own if None).

    Parameters
    ----------
    X, Y : DNDarray
        ``(m, f)`` and ``(n, f)``; any split (one along the features is resplit to rows).
    quadratic_expansion : bool
        Compute ``|x|^2 + |y|^2 - 2 x.y`` (one matrix product: faster, less exact for
        close points) instead of the differences.
    dtype : floating dtype, optional
        The dtype to compute in and return; default: the operands' common floating type.

    Returns
    -------
    DNDarray
        ``(m, n)``, split 0 if ``X`` is split, else 1 if ``Y`` is, else not split.

    Examples
    --------
    >>> import dndask as ht
    >>> from dndask.spatial import cdist
    >>> cdist(ht.array([[0.0, 0.0]]), ht.array([[3.0, 4.0], [0.0, 1.0]], split=0)).numpy().tolist()
    [[5.0, 1.0]]
    """
    _check_flag(quadratic_expansion, "quadratic_expansion")
    return _pairwise(X, Y, functools.partial(_euclidean, expand=quadratic_expansion), dtype)


def rbf(
    X: ht.DNDarray,
    Y: ht.DNDarray | None = None,
    sigma: float = 1.0,
    quadratic_expansion: bool = False,
    *,
    dtype=None,
) -> ht.DNDarray:
    """The Gaussian kernel ``exp(-|x - y|^2 / (2 sigma^2))`` between rows (see :func:`cdist`).

    >>> import dndask as ht
    >>> from dndask.spatial import rbf
    >>> rbf(ht.array([[0.0], [2.0]], split=0), sigma=1.0, dtype="float64").numpy().round(4).tolist()
    [[1.0, 0.1353], [0.1353, 1.0]]
    """
    _check_flag(quadratic_expansion, "quadratic_expansion")
    if isinstance(sigma, bool) or not isinstance(sigma, numbers.Real):
        raise TypeError(f"`sigma` must be a real number, got {type(sigma).__name__}")
    if not sigma > 0:
        raise ValueError(f"`sigma` must be positive, got {sigma}")
    metric = functools.partial(_gaussian, expand=quadratic_expansion, sigma=float(sigma))
    return _pairwise(X, Y, metric, dtype)


def manhattan(
    X: ht.DNDarray, Y: ht.DNDarray | None = None, expand: bool = False, *, dtype=None
) -> ht.DNDarray:
    """City-block distances ``sum |x_k - y_k|`` between rows (see :func:`cdist`).

    ``expand`` is accepted for Heat's signature; there is one way to compute it.

    >>> import dndask as ht
    >>> from dndask.spatial import manhattan
    >>> manhattan(ht.array([[0, 0], [1, 2]], split=0)).numpy().tolist()
    [[0.0, 3.0], [3.0, 0.0]]
    """
    _check_flag(expand, "expand")
    return _pairwise(X, Y, functools.partial(_cityblock, expand=expand), dtype)
