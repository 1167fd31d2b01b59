"""Test matrices with known structure: Hermitian, Parter, random orthogonal, known spectrum.

The random ones draw from dndask's random stream (the same for any number of ranks).

>>> from dndask.utils.data.matrixgallery import parter
>>> parter(2, dtype="float64").numpy().tolist()
[[2.0, 0.6666666666666666], [-2.0, 2.0]]
"""

from __future__ import annotations

import numbers
from collections.abc import Callable

import numpy as np

import dndask as ht

__all__ = [
    "hermitian",
    "parter",
    "random_known_rank",
    "random_known_singularvalues",
    "random_orthogonal",
]


def _size(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"`{name}` must be at least 1, got {value}")
    return int(value)


def _split(split) -> None:
    if split not in (None, 0, 1):
        raise ValueError(f"`split` must be None, 0 or 1, got {split!r}")


def hermitian(
    n: int, dtype=np.complex64, split=None, comm=None, positive_definite: bool = False
) -> ht.DNDarray:
    """A random Hermitian (real dtypes: symmetric) ``(n, n)`` matrix: ``M + M^H`` of a Gaussian
    ``M``, or ``M M^H / n`` (positive definite with probability 1)."""
    n = _size(n, "n")
    _split(split)
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        real = np.float32 if dtype == np.complex64 else np.float64
        m = ht.random.randn(n, n, dtype=real, split=split, comm=comm).astype(dtype)
        m = m + 1j * ht.random.randn(n, n, dtype=real, split=split, comm=comm).astype(dtype)
    elif dtype.kind == "f":
        m = ht.random.randn(n, n, dtype=dtype, split=split, comm=comm)
    else:
        raise ValueError(f"`dtype` must be a floating or complex dtype, got {dtype}")
    mh = ht.conj(m).T if dtype.kind == "c" else m.T
    if positive_definite:
        return (ht.matmul(m, mh) / n).astype(dtype)
    return (m + mh).resplit(split)


def parter(n: int, split=None, comm=None, dtype=np.float32) -> ht.DNDarray:
    """The Parter matrix ``1 / (j - i + 1/2)`` (row ``i``, column ``j``): its singular values
    cluster at pi."""
    n = _size(n, "n")
    _split(split)
    i = ht.arange(n, dtype=dtype, split=0 if split == 0 else None, comm=comm).reshape(n, 1)
    j = ht.arange(n, dtype=dtype, split=0 if split == 1 else None, comm=comm).reshape(1, n)
    out = 1.0 / (j - i + 0.5)
    return out.astype(dtype) if out.split == split else out.resplit(split).astype(dtype)


def random_orthogonal(m: int, n: int, split=None, comm=None, dtype=np.float32) -> ht.DNDarray:
    """A random ``(m, n)`` matrix with orthonormal columns (``n <= m``; else a RuntimeError,
    as in Heat): the Q factor of a Gaussian matrix."""
    m, n = _size(m, "m"), _size(n, "n")
    _split(split)
    if n > m:
        raise RuntimeError(f"no {m} x {n} matrix has orthonormal columns: `n` must be at most `m`")
    q = ht.linalg.qr(ht.random.randn(m, n, dtype=dtype, comm=comm)).Q
    return q.resplit(split)


def random_known_singularvalues(
    m: int, n: int, singular_values: ht.DNDarray, split=None, comm=None, dtype=np.float32
) -> tuple[ht.DNDarray, tuple[ht.DNDarray, ht.DNDarray, ht.DNDarray]]:
    """A random ``(m, n)`` matrix ``U diag(s) V^T`` with the given singular values ``s``.

    Returns ``(A, (U, s, V))``. RuntimeError (as in Heat) unless ``s`` is a 1-D DNDarray
    of at most ``min(m, n)`` values.
    """
    m, n = _size(m, "m"), _size(n, "n")
    _split(split)
    if not isinstance(singular_values, ht.DNDarray):
        raise RuntimeError(
            f"`singular_values` must be a DNDarray, got {type(singular_values).__name__}"
        )
    if singular_values.ndim != 1:
        raise RuntimeError(f"`singular_values` must be 1-D, got {singular_values.ndim}-D")
    r = singular_values.shape[0]
    if r > min(m, n):
        raise RuntimeError(
            f"`singular_values` must number at most min(m, n) = {min(m, n)}, got {r}"
        )
    U = random_orthogonal(m, r, comm=comm, dtype=dtype)
    V = random_orthogonal(n, r, comm=comm, dtype=dtype)
    s = singular_values.astype(dtype).resplit(None)
    A = ht.matmul(U * s.reshape(1, r), V.T)
    return A.resplit(split), (U, s, V)


def random_known_rank(
    m: int,
    n: int,
    r: int,
    quantile_function: Callable = lambda x: -ht.log(x),
    split=None,
    comm=None,
    dtype=np.float32,
) -> tuple[ht.DNDarray, tuple[ht.DNDarray, ht.DNDarray, ht.DNDarray]]:
    """A random ``(m, n)`` matrix of rank ``r``: singular values ``quantile_function(u)`` of
    uniform ``u`` (default: exponential), sorted descending; see
    :func:`random_known_singularvalues`."""
    m, n, r = _size(m, "m"), _size(n, "n"), _size(r, "r")
    if r > min(m, n):
        raise RuntimeError(f"`r` must be at most min(m, n) = {min(m, n)}, got {r}")
    u = ht.random.rand(r, dtype=dtype, comm=comm)
    s = ht.sort(quantile_function(u))
    s = ht.flip(s[0] if isinstance(s, tuple) else s, 0)
    return random_known_singularvalues(m, n, s, split=split, comm=comm, dtype=dtype)
