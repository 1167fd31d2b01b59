"""Krylov methods: the conjugate gradient solver ``cg`` and the Lanczos process ``lanczos``.

``cg`` runs its loop in the driver over distributed vectors: every product is a
distributed ``matmul`` and every iterate is persisted where it lives, so the
graphs never grow with the iteration count; it fetches two scalars per
iteration (its step lengths and the residual norm, for the stopping test).
``lanczos`` has no data-dependent stop: its ``m`` steps are one graph of small
per-rank tasks, submitted once, and nothing is fetched on the way.
"""

from __future__ import annotations

import functools
import math
import operator

import numpy as np
from dask.base import tokenize

from .. import _dndarray, _factories, _graph, _layout, _random
from .._compat import List, Task, TaskRef
from .._distribution import relayout
from .._layout import Distribution
from ._build import _wrap, _zeros
from ._checks import _check_array
from ._products import matmul
from ._randomized import check_count


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


def _vector(w_parts, rows: int, offset: int):
    """``v = w / |w|`` and this rank's rows of it, from every rank's ``(w_r, |w_r|^2)``."""
    beta = _lanczos_beta(w_parts)
    w = np.concatenate([np.asarray(p[0]) for p in w_parts])
    return w / beta, w[offset : offset + rows] / beta


def _lanczos_basis(basis, w_parts, rows: int, offset: int):
    """This rank's rows of the basis with the next Lanczos vector appended."""
    _, v_rows = _vector(w_parts, rows, offset)
    return np.concatenate([basis, v_rows[:, None]], axis=1)


def _lanczos_step(a_rows, basis, w_parts, rows: int, offset: int):
    """This rank's rows of ``w = A v`` and its part of the first Gram-Schmidt
    coefficients ``V_r^H w_r`` (``V_r`` with ``v``'s rows appended)."""
    v, v_rows = _vector(w_parts, rows, offset)
    basis = np.concatenate([basis, v_rows[:, None]], axis=1)
    w = np.asarray(a_rows) @ v
    return w, basis.conj().T @ w


def _coefficients(parts):
    """The sum of the ranks' parts of a coefficient vector."""
    return functools.reduce(operator.add, (p[1] for p in parts))


def _lanczos_project(parts, own: int, basis):
    """``w_r - V_r c`` (``c`` summed from every rank's part, here) and its part of the
    second coefficients ``V_r^H w_r``."""
    w = parts[own][0] - basis @ _coefficients(parts)
    return w, basis.conj().T @ w


def _lanczos_finish(parts, own: int, basis):
    """``w_r - V_r c``, this rank's rows of the next (unnormalized) vector, and its
    squared norm."""
    w = parts[own][0] - basis @ _coefficients(parts)
    return w, float(np.vdot(w, w).real)


def _lanczos_beta(parts) -> float:
    """``beta``: the norm of a vector from its ranks' squared norms."""
    return math.sqrt(sum(p[1] for p in parts))


def _lanczos_first(v_rows):
    """The start vector's rows, as the ``(w_r, |w_r|^2)`` part of a step."""
    v_rows = np.asarray(v_rows)
    return v_rows, float(np.vdot(v_rows, v_rows).real)


def _lanczos_alpha(parts, j: int) -> float:
    """``alpha_j = v_j^H A v_j``: the ``j``-th first coefficient of step ``j``."""
    return float(_coefficients(parts)[j].real)


def _lanczos_t(alphas, betas, dtype):
    """The tridiagonal ``T`` from the ``alpha_j`` and ``beta_j``."""
    off = np.asarray(betas, dtype=dtype)
    return np.diag(np.asarray(alphas, dtype=dtype)) + np.diag(off, 1) + np.diag(off, -1)


def _lanczos_graph(a, v, m: int, real):
    """The whole process as one graph of small tasks, ``4 P + 2`` a step on ``P`` ranks.

    Rank ``r`` keeps its rows of ``A`` and of the basis ``V``. A step is three
    rounds: ``A v`` with the first Gram-Schmidt coefficients, the first projection
    with the second coefficients, the second projection with the squared norm. After
    each round every rank reads every rank's part (its rows of ``w``, ``n`` numbers
    in all, and a coefficient vector) and sums the coefficients itself, so the
    critical path is three tasks a step, with no detour through a root. ``alpha``
    and ``beta`` are summed on rank 0 beside it, for ``T``. Nothing is fetched on
    the way: the driver submits the graph once.
    """
    comm, arr, varr = a.comm, a.to_dask(), v.to_dask()
    split = a.split
    counts = a.distribution.counts if split == 0 else (a.shape[0],)
    ranks = [r for r, c in enumerate(counts) if c] or [0]
    offsets = _layout.displacements(counts)
    name = f"lanczos-{tokenize(arr.name, varr.name, m)}"
    dsk, task_ranks = {}, {}

    def add(key, rank, *args):
        dsk[key] = Task(key, *args)
        task_ranks[key] = rank
        return TaskRef(key)

    def on_ranks(label, j, fn, *args):
        return {
            r: add((f"{name}-{label}", j, r), r, fn, *(x[r] if isinstance(x, dict) else x
                                                       for x in args))
            for r in ranks
        }  # fmt: skip

    rows = {r: counts[r] for r in ranks}
    offset = {r: offsets[r] for r in ranks}
    own = {r: i for i, r in enumerate(ranks)}
    a_rows = {r: TaskRef(_graph.chunk_key(arr, split, r)) for r in ranks}
    v_rows = {r: TaskRef(_graph.chunk_key(varr, split, r)) for r in ranks}
    w_parts = List(*on_ranks("w", -1, _lanczos_first, v_rows).values())
    basis = {r: add((f"{name}-V", -1, r), r, np.zeros, (counts[r], 0), a.dtype) for r in ranks}
    alphas, betas = [], []
    for j in range(m):
        step = List(
            *on_ranks("step", j, _lanczos_step, a_rows, basis, w_parts, rows, offset).values()
        )
        basis = on_ranks("V", j, _lanczos_basis, basis, w_parts, rows, offset)
        alphas.append(add((f"{name}-alpha", j), 0, _lanczos_alpha, step, j))
        if j == m - 1:
            break
        proj = List(*on_ranks("proj", j, _lanczos_project, step, own, basis).values())
        w_parts = List(*on_ranks("fin", j, _lanczos_finish, proj, own, basis).values())
        betas.append(add((f"{name}-beta", j), 0, _lanczos_beta, w_parts))
    v_name = f"{name}-basis"
    for r in range(comm.size if split == 0 else 1):
        key = (v_name, *_graph.block_index(split, 2, r))
        if r in basis:
            add(key, r, _identity, basis[r])
        else:
            dsk[key] = Task(key, _zeros, (counts[r], m), a.dtype)
    basis_out = _wrap(
        v_name, dsk, [arr, varr], (a.shape[0], m), split, counts if split == 0 else (),
        a.dtype, comm, (a, v), task_ranks,
    )  # fmt: skip
    t_name = f"{name}-T"
    t_key = (t_name, 0, 0)
    t_dsk = {t_key: Task(t_key, _lanczos_t, List(*alphas), List(*betas), real)}
    t = _wrap(t_name, t_dsk, [basis_out.to_dask()], (m, m), None, (), real, comm, (a,), {t_key: 0})
    # both submitted now, one after the other: the scheduler runs their shared steps once
    return basis_out.persist(), t.persist()


def _identity(x):
    return x


def lanczos(a, m: int, v0=None):
    """The Lanczos process with full reorthogonalization: ``a ≈ V @ T @ V^H``.

    Every step reorthogonalizes ``A v_j`` against all Lanczos vectors so far, twice
    (classical Gram-Schmidt, CGS2). The whole process is one graph submitted once
    (:func:`_lanczos_graph`): each rank keeps its rows of ``a`` and of ``V``, and a
    step moves one vector's chunks and ``2 P`` short coefficient vectors.

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
    real = np.empty(0, a.dtype).real.dtype
    if v0 is None:
        v = _random.randn(n, dtype=real, split=a.split, comm=a.comm).astype(a.dtype)
    else:
        _check_array(v0, "v0")
        if v0.shape != (n,):
            raise ValueError(f"`v0` must have shape ({n},), got {v0.shape}")
        v = v0.astype(a.dtype)
    if a.split == 0:
        v = relayout(v, Distribution(0, a.distribution.counts, a.comm))
    elif v.split is not None:
        v = v.resplit(None)
    return _lanczos_graph(a, v, m, real)
