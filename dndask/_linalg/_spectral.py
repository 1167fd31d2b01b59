"""The polar decomposition (QDWH) and the symmetric eigendecomposition built on it.

:func:`polar`: the QR-based dynamically weighted Halley iteration (QDWH, Nakatsukasa,
Bai and Gygi 2010), the ``r = 1`` member of the Zolotarev family Heat's ``zolopd``
uses. Each step is one TSQR of the stacked ``[sqrt(c) X; I]`` (``(m + n) x n``,
split along its rows) and one distributed product ``Q1 @ Q2^T``; its weights
follow a scalar recurrence from the lower bound ``1 / condition_estimate``, so the
number of steps (at most 6 in double precision) is known before any data moves.

:func:`eigh`: spectral divide and conquer (Nakatsukasa and Higham 2013). The
sign of ``A - sigma I`` (``sigma`` the median of the diagonal) is the polar factor
of that symmetric matrix; ``P = (sign + I) / 2`` projects on the eigenvectors with
eigenvalues above ``sigma``. An orthogonal ``V = [V1 V2]`` with ``V1`` spanning its
range splits the problem into ``V1^T A V1`` and ``V2^T A V2``, solved the same way
until a subproblem has at most ``max(n / ranks, 64)`` rows, or its share of the ranks
(Heat's: in proportion to its order) is one: that leaf is factored by LAPACK in one
task, on one rank. The recursion is built as per-rank task graphs
(:mod:`._sdc`): a whole polar decomposition is one graph, and the driver waits once
per level of the recursion.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .. import _dndarray, _factories, _manipulation, _random
from ._products import matmul
from ._randomized import check_real_matrix
from ._sdc import eigh_rows, qdwh_weights
from ._tsqr import _check_procs_to_merge, _per_block, _swap_last, qr


def _scalar(x: _dndarray.DNDarray) -> float:
    return float(np.asarray(x.numpy()).reshape(()))


def _frobenius(x: _dndarray.DNDarray) -> _dndarray.DNDarray:
    return ((x * x).sum()) ** 0.5


def _local_polar(block, calc_h: bool):
    u, s, vh = np.linalg.svd(block, full_matrices=False)
    unitary = u @ vh
    if not calc_h:
        return (unitary,)
    return unitary, (vh.T * s) @ vh


def polar(a, calc_h: bool = True, condition_estimate: float = 1.0e16, procs_to_merge: int = 0):
    """The polar decomposition ``a = U @ H``: ``U`` with orthonormal columns, ``H`` symmetric
    positive semi-definite, by QDWH.

    Parameters
    ----------
    a : DNDarray
        An ``m x n`` float32 or float64 matrix with ``m >= n``.
    calc_h : bool
        Also return ``H = U^T a`` (symmetrized).
    condition_estimate : float
        An upper bound of ``a``'s condition number (default 1e16, the worst case:
        six steps); a tighter one saves steps.
    procs_to_merge : int
        The TSQR's merge width (see :func:`qr`).

    Returns
    -------
    DNDarray or tuple of DNDarray
        ``U`` (split like ``a``) and, with ``calc_h``, ``H`` (``n x n``, split like ``a``).
        A matrix on one rank (split None, or one rank) is decomposed there by an SVD.

    Examples
    --------
    >>> import numpy as np, dndask as ht
    >>> x = np.array([[2.0, 0.0], [0.0, 3.0], [0.0, 0.0]])
    >>> u, h = ht.linalg.polar(ht.array(x, split=0))
    >>> np.round(h.numpy(), 6).tolist(), bool(np.allclose(u.numpy() @ h.numpy(), x))
    ([[2.0, 0.0], [0.0, 3.0]], True)
    """
    a = check_real_matrix(a, "polar")
    m, n = a.shape
    if m < n:
        raise ValueError(
            f"`a` of `polar` must have at least as many rows as columns, got {a.shape}"
        )
    if not isinstance(calc_h, bool):
        raise TypeError(f"`calc_h` must be a bool, got {type(calc_h).__name__}")
    if isinstance(condition_estimate, bool) or not isinstance(condition_estimate, (int, float)):
        raise TypeError(
            f"`condition_estimate` must be a float, got {type(condition_estimate).__name__}"
        )
    if not condition_estimate >= 1:
        raise ValueError(f"`condition_estimate` must be at least 1, got {condition_estimate}")
    if a.split is None or a.comm.size == 1:
        out = [((m, n), a.dtype)] + ([((n, n), a.dtype)] if calc_h else [])
        fn = functools.partial(_local_polar, calc_h=calc_h)
        results = _per_block(a, fn, out, "polar-local")
        return tuple(results) if calc_h else results[0]
    x = a if a.split == 0 else a.resplit(0)
    alpha = _scalar(_frobenius(x))
    if alpha == 0:
        raise ValueError("`a` of `polar` is zero: its polar factor is not unique")
    eps = float(np.finfo(a.dtype).eps)
    x = (x / alpha).persist()
    eye = _factories.eye(n, dtype=a.dtype, split=0, comm=a.comm)
    for wa, wb, wc in qdwh_weights(1.0 / (condition_estimate * math.sqrt(n)), eps):
        stacked = _manipulation.concatenate([x * math.sqrt(wc), eye], axis=0)
        q = qr(stacked, procs_to_merge=procs_to_merge).Q
        q1, q2 = q[:m], q[m:]
        update = matmul(q1, _swap_last(q2))
        if update.split != 0:
            update = update.resplit(0)
        x = (x * (wb / wc) + update * ((wa - wb / wc) / math.sqrt(wc))).persist()
    u = x if a.split == 0 else x.resplit(a.split)
    if not calc_h:
        return u
    h = matmul(_swap_last(x), a)
    h = (h + _swap_last(h)) * 0.5
    return u, (h if h.split == a.split else h.resplit(a.split))


def _local_eigh(block):
    values, vectors = np.linalg.eigh((block + block.T) / 2)
    return values[::-1].copy(), vectors[:, ::-1].copy()


def _check_symmetric(a: _dndarray.DNDarray) -> None:
    """ValueError unless ``a`` is symmetric, probed with two Gaussian vectors.

    ``(a - a^T) g`` is computed as ``a g - (g^T a)^T``: two products, no transpose of ``a``.
    """
    g = _random.randn(a.shape[0], 2, dtype=a.dtype, split=None, comm=a.comm)
    left = matmul(a, g)
    right = _swap_last(matmul(_swap_last(g), a))
    if right.split != left.split:
        right = right.resplit(left.split)
    gap = _frobenius(left - right)
    scale = _frobenius(left) + _frobenius(right)
    values = a.comm.client.gather(a.comm.client.compute([gap, scale]))
    gap, scale = (float(np.asarray(v)) for v in values)
    eps = float(np.finfo(a.dtype).eps)
    if gap > 100 * eps * math.sqrt(a.shape[0]) * max(scale, np.finfo(a.dtype).tiny):
        raise ValueError(
            f"`a` of `eigh` must be symmetric: |(a - a^T) g| / |a g| is {gap / scale:.3e} "
            "for a random probe g"
        )


def eigh(a, procs_to_merge: int = 0):
    """The eigendecomposition ``a = V @ diag(L) @ V^T`` of a symmetric matrix (descending ``L``).

    Spectral divide and conquer on the polar decomposition (see the module): every
    step is a few tasks per rank and one merge task; subproblems of at most
    ``max(n / ranks, 64)`` rows, or with a share of one rank (Heat's rule), are
    factored by LAPACK in one task each. An unsplit matrix, or one on one rank, is
    factored where it lives.

    Parameters
    ----------
    a : DNDarray
        A symmetric ``n x n`` float32 or float64 matrix; symmetry is checked with two
        random probes (ValueError).
    procs_to_merge : int
        Accepted as :func:`qr`'s; the recursion's merges take every rank's rows at once
        (a merge width would add a step to each of them).

    Returns
    -------
    tuple of DNDarray
        ``L`` (``n``, descending, split 0 as Heat's) and ``V`` (orthonormal columns,
        split like ``a``).

    Examples
    --------
    >>> import numpy as np, dndask as ht
    >>> values, vectors = ht.linalg.eigh(ht.array(np.diag([1.0, 3.0, 2.0]), split=0))
    >>> np.round(values.numpy(), 6).tolist()
    [3.0, 2.0, 1.0]
    """
    a = check_real_matrix(a, "eigh")
    n = a.shape[0]
    if a.shape[1] != n:
        raise ValueError(f"`a` of `eigh` must be square (and symmetric), got shape {a.shape}")
    _check_procs_to_merge(procs_to_merge)
    if a.split is None or a.comm.size == 1:
        _check_symmetric(a)
        values, vectors = _per_block(a, _local_eigh, [((n,), a.dtype), ((n, n), a.dtype)], "eigh")
    else:
        leaf = max(math.ceil(n / a.comm.size), 64)
        values, vectors = eigh_rows(a.persist(), leaf)
    if values.split != 0:
        values = values.resplit(0)
    if vectors.split != a.split:
        vectors = vectors.resplit(a.split)
    return values, vectors
