"""Krylov methods: the conjugate gradient solver ``cg`` and the Lanczos process ``lanczos``.

Both run their loop in the driver over distributed vectors: every product is a
distributed ``matmul`` and every iterate is persisted where it lives, so the
graphs never grow with the iteration count. ``cg`` fetches two scalars per
iteration (its step lengths and the residual norm, for the stopping test);
``lanczos`` fetches nothing until the end: its coefficients stay 0-d arrays on
the workers and are gathered once to build ``T``.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dndarray, _factories, _manipulation, _random
from ._checks import _check_array
from ._products import matmul
from ._randomized import check_count
from ._tsqr import _swap_last


def _scalar(x: _dndarray.DNDarray) -> complex:
    return complex(np.asarray(x.numpy()).reshape(()))


def _vdot(x, y) -> _dndarray.DNDarray:
    return (x.conj() * y).sum() if x.dtype.kind == "c" else (x * y).sum()


def check_system(a, b, x0, fname: str):
    """``a`` square, ``b`` and ``x0`` vectors of its size; float or complex."""
    for value, name in ((a, "a"), (b, "b")):
        _check_array(value, name)
    if x0 is not None:
        _check_array(x0, "x0")
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"`a` of `{fname}` must be a square matrix, got shape {a.shape}")
    n = a.shape[0]
    for value, name in ((b, "b"), (x0, "x0")):
        if value is not None and (value.ndim != 1 or value.shape[0] != n):
            raise ValueError(
                f"`{name}` of `{fname}` must be a vector of length {n}, got shape {value.shape}"
            )
    for value, name in ((a, "a"), (b, "b"), (x0, "x0")):
        if value is not None and value.dtype.kind not in "fc":
            raise TypeError(f"`{name}` of `{fname}` must be float or complex, got {value.dtype}")


def cg(
    a, b, x0=None, *, rtol: float | None = None, atol: float = 0.0, maxiter: int | None = None,
    strict: bool = True,
):  # fmt: skip
    """Solve ``a @ x = b`` for a Hermitian positive definite ``a`` by conjugate gradients.

    Parameters
    ----------
    a : DNDarray
        ``n x n``, Hermitian positive definite (not checked), any split.
    b : DNDarray
        The right-hand side, a vector of length ``n``.
    x0 : DNDarray, optional
        The first iterate (zeros if None).
    rtol, atol : float, optional
        Stop when ``||b - a @ x|| <= max(rtol * ||b||, atol)`` (``rtol`` defaults to
        1e-5 for single precision, 1e-10 for double; ``atol`` to 0).
    maxiter : int, optional
        At most this many iterations (default ``n``, exact arithmetic's bound).
    strict : bool
        Raise ``RuntimeError`` naming the iteration count when the tolerance is not
        reached (``False``: return the last iterate, as Heat does).

    Returns
    -------
    DNDarray
        ``x``, split like ``b``.

    Examples
    --------
    >>> import numpy as np, dndask as ht
    >>> a = ht.array(np.diag([1.0, 2.0, 4.0]), split=0)
    >>> ht.linalg.cg(a, ht.array([1.0, 2.0, 4.0], split=0)).numpy().round(8).tolist()
    [1.0, 1.0, 1.0]
    """
    check_system(a, b, x0, "cg")
    n = a.shape[0]
    maxiter = n if maxiter is None else check_count(maxiter, "maxiter", 1)
    if rtol is None:
        rtol = 1e-5 if b.dtype in (np.float32, np.complex64) else 1e-10
    for value, name in ((rtol, "rtol"), (atol, "atol")):
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
            raise ValueError(f"`{name}` must be a non-negative float, got {value!r}")
    x = _factories.zeros_like(b) if x0 is None else x0.astype(b.dtype)
    if x.split != b.split:
        x = x.resplit(b.split)
    r = (b - matmul(a, x)).persist()
    p = r
    rs = _scalar(_vdot(r, r)).real
    tol = max(rtol * math.sqrt(_scalar(_vdot(b, b)).real), atol)
    if math.sqrt(rs) <= tol:
        return x
    for _ in range(maxiter):
        ap = matmul(a, p)
        if ap.split != p.split:
            ap = ap.resplit(p.split)
        ap = ap.persist()
        curvature = _scalar(_vdot(p, ap)).real
        if curvature <= 0:
            if strict:
                raise RuntimeError(
                    f"`cg` broke down: p^H a p = {curvature:.3e} <= 0 (is `a` positive definite?)"
                )
            return x
        alpha = rs / curvature
        x = (x + alpha * p).persist()
        r = (r - alpha * ap).persist()
        rs_new = _scalar(_vdot(r, r)).real
        if math.sqrt(rs_new) <= tol:
            return x
        p = (r + (rs_new / rs) * p).persist()
        rs = rs_new
    if strict:
        raise RuntimeError(
            f"`cg` did not converge in {maxiter} iterations: residual norm "
            f"{math.sqrt(rs):.3e} > {tol:.3e} (rtol {rtol:g}, atol {atol:g})"
        )
    return x


def lanczos(a, m: int, v0=None):
    """The Lanczos process with full reorthogonalization: ``a ≈ V @ T @ V^H``.

    Parameters
    ----------
    a : DNDarray
        An ``n x n`` Hermitian matrix (float or complex), split 0 or None.
    m : int
        The number of Lanczos vectors, ``1 <= m <= n``.
    v0 : DNDarray, optional
        The starting vector (normalized here); random if None.

    Returns
    -------
    tuple of DNDarray
        ``V`` (``n x m``, orthonormal columns, split like ``a``) and the real
        tridiagonal ``T`` (``m x m``, split None). For ``m = n``, ``a = V T V^H``.

    Examples
    --------
    >>> import numpy as np, dndask as ht
    >>> a = np.diag([3.0, 1.0, 2.0])
    >>> v, t = ht.linalg.lanczos(ht.array(a, split=0), 3)
    >>> bool(np.allclose(v.numpy() @ t.numpy() @ v.numpy().T, a))
    True
    """
    _check_array(a, "a")
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"`a` of `lanczos` must be a square matrix, got shape {a.shape}")
    if a.dtype.kind not in "fc":
        raise TypeError(f"`a` of `lanczos` must be float or complex, got {a.dtype}")
    if a.split == 1:
        raise NotImplementedError("`lanczos` of a matrix split along axis 1 is not implemented")
    n = a.shape[0]
    m = check_count(m, "m", 1)
    if m > n:
        raise ValueError(f"`m` must be at most n = {n}, got {m}")
    split = a.split
    if v0 is None:
        real = np.empty(0, a.dtype).real.dtype
        v = _random.randn(n, dtype=real, split=split, comm=a.comm).astype(a.dtype)
    else:
        _check_array(v0, "v0")
        if v0.shape != (n,):
            raise ValueError(f"`v0` must have shape ({n},), got {v0.shape}")
        v = v0.astype(a.dtype)
        v = v if v.split == split else v.resplit(split)
    v = (v / _vdot(v, v).real ** 0.5).persist()
    alphas, betas = [], []
    basis = _manipulation.stack([v], axis=1).persist()  # grows by one persisted column a step
    for j in range(m):
        w = matmul(a, v)
        if w.split != split:
            w = w.resplit(split)
        alphas.append(_vdot(v, w).real)
        # classical Gram-Schmidt against every Lanczos vector, twice (CGS2)
        for _ in range(2):
            coefficients = matmul(_swap_last(basis, conjugate=True), w)
            w = w - matmul(basis, coefficients.resplit(None))
        if j == m - 1:
            break
        beta = _vdot(w, w).real ** 0.5
        betas.append(beta)
        v = (w / beta).persist()
        column = _manipulation.stack([v], axis=1)
        basis = _manipulation.concatenate([basis, column], axis=1).persist()
    values = a.comm.client.gather(a.comm.client.compute([*alphas, *betas]))
    real = np.empty(0, a.dtype).real.dtype
    t = np.diag(np.asarray(values[:m], dtype=real))
    off = np.asarray(values[m:], dtype=real)
    t += np.diag(off, 1) + np.diag(off, -1)
    return basis, _factories.array(t, split=None, comm=a.comm)
