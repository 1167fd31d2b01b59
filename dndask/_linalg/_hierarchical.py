"""Hierarchical SVD: ``hsvd``, ``hsvd_rank`` and ``hsvd_rtol`` (Iwen and Ong 2016; Himpe,
Leibner and Rave 2018).

The matrix is split along its columns (a matrix split along its rows is handled
as its transpose). Every rank truncates the SVD of its column block to
``U_r S_r`` (by rank, or by the absolute tolerance ``rtol ||A|| / sqrt(2 P - 1)``)
and the truncated factors are merged up a tree: each merge stacks its members'
``U S`` side by side and truncates their SVD again, on the first member's rank.
Only the truncated factors (``m x (rank + safetyshift)`` each) travel. The
squared singular values cut on the way, and those of the safety shift's columns
(kept, but counted as Heat counts them), add up to the error estimate, which bounds
the true error. The top
merge's ``U`` (``m x k``, ``k`` known only then) is fetched to the driver and
sent back to rank 0 (split None, as Heat's); ``V = A^T U / S`` is a distributed
product, with ``S`` the norms of ``A^T U``'s columns (Heat's), so that
``U S V^T = U U^T A``, the projection whose error the estimate bounds.
"""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np
from dask.base import tokenize

from .. import _factories, _graph, _manipulation
from .._compat import List, Task, TaskRef
from ._build import _wrap
from ._checks import _check_array
from ._products import matmul
from ._tsqr import _per_block, _swap_last, qr


def _noise(dtype) -> float:
    return 1e-7 if np.dtype(dtype) == np.float32 else 1e-14


def _truncate(block, maxrank, atol, safetyshift: int, scale: bool):
    """``(U S or U, S, squared error)`` of ``block``'s SVD truncated as Heat truncates."""
    block = np.asarray(block)
    if block.size == 0:
        return np.zeros((block.shape[0], 0), block.dtype), np.zeros(0, block.dtype), 0.0
    u, s, _ = np.linalg.svd(block, full_matrices=False)
    keep = np.nonzero(s >= _noise(block.dtype))[0]
    if keep.size == 0:
        return (
            np.zeros((block.shape[0], 1), block.dtype),
            np.zeros(1, block.dtype),
            float(np.sum(s.astype(np.float64) ** 2)),
        )
    rank = int(keep.max()) + 1
    if maxrank is not None:
        rank = min(rank, maxrank)
    if atol is not None:
        tails = np.sqrt(np.cumsum((s.astype(np.float64) ** 2)[::-1])[::-1])
        ideal = int(np.nonzero(np.append(tails, 0.0) < atol)[0].min())
        rank = min(rank, ideal)
    rank = max(min(s.shape[0], max(rank, 0) + safetyshift), 1)
    # Heat's estimate: what is cut, and the safety shift's columns too (kept, but
    # counted), so that it stays above the true error; Heat's slice, also where
    # ``rank - safetyshift`` is negative (then the last singular values)
    err = float(np.sum(s[rank - safetyshift :].astype(np.float64) ** 2))
    u, s = u[:, :rank], s[:rank]
    return (u * s if scale else u), s, err


def _leaf(block, maxrank, atol, safetyshift):
    us, _, err = _truncate(block, maxrank, atol, safetyshift, True)
    return us, err


def _merge(parts, maxrank, atol, safetyshift, top: bool, kmax: int):
    """One merge; the top one returns ``U`` packed with ``S``, ``k`` and the squared error
    into a ``(m + 2, kmax)`` array (its shape must be known before ``k`` is)."""
    stacked = np.hstack([p[0] for p in parts])
    err = sum(p[1] for p in parts)
    us, s, err_new = _truncate(stacked, maxrank, atol, 0 if top else safetyshift, not top)
    if not top:
        return us, err + err_new
    m, k = us.shape
    packed = np.zeros((m + 2, kmax), dtype=us.dtype)
    packed[:m, :k] = us
    packed[m, :k] = s
    packed[m + 1, :2] = (k, err + err_new)
    return packed


def hsvd(
    a,
    maxrank: int | None = None,
    rtol: float | None = None,
    safetyshift: int = 5,
    group: int = 2,
    compute_sv: bool = False,
):
    """The hierarchical SVD of a 2-D float matrix, truncated by ``maxrank`` and/or ``rtol``.

    Returns ``(U, S, Vh, err)`` with ``compute_sv``, else ``(U, err)``: ``err`` bounds
    ``||A - U S Vh||_F / ||A||_F`` by Heat's estimate (the singular values cut on the way,
    and those of the safety shift's columns; with leaves smaller than the safety shift it
    counts what they keep too, so it can be loose, even above 1). ``U`` is split
    None for a matrix split along its columns (``Vh`` split along its columns);
    the other way round for one split along its rows.

    Examples
    --------
    >>> import numpy as np, dndask as ht
    >>> x = np.outer(np.arange(1.0, 5.0), np.arange(1.0, 9.0))
    >>> u, s, vh, err = ht.linalg.hsvd(ht.array(x, split=1), maxrank=2, compute_sv=True)
    >>> bool(np.allclose((u.numpy() * s.numpy()) @ vh.numpy(), x)), u.shape[0], err >= 0
    (True, 4, True)
    """
    _check_array(a, "a")
    if a.ndim != 2:
        raise ValueError(f"`a` of `hsvd` must be 2-dimensional, got {a.ndim} dimensions")
    if a.dtype not in (np.float32, np.float64):
        raise TypeError(f"`a` of `hsvd` must be float32 or float64, got {a.dtype}")
    transposed = a.split == 0
    t = _swap_last(a) if transposed else a
    comm = a.comm
    norm = float(np.sqrt(np.asarray(((t * t).sum()).numpy(), dtype=np.float64)))
    counts = t.distribution.counts if t.split == 1 else (t.shape[1],)
    ranks = [r for r, c in enumerate(counts) if c] or [0]
    atol = None if rtol is None else norm * rtol / math.sqrt(2 * len(ranks) - 1)
    arr = t.to_dask()
    name = f"hsvd-{tokenize(arr.name, maxrank, rtol, safetyshift, group)}"
    dsk, task_ranks = {}, {}
    nodes = []
    for r in ranks:
        key = (f"{name}-leaf", r)
        chunk = (
            _graph.chunk_key(arr, t.split, r) if t.split == 1 else _graph.chunk_key(arr, None, 0)
        )
        dsk[key] = Task(key, _leaf, TaskRef(chunk), maxrank, atol, safetyshift)
        task_ranks[key] = r
        nodes.append((key, r))
    m = t.shape[0]
    # at least 2 columns: the header row holds k and the squared error
    kmax = max(2, min(m, t.shape[1]) if maxrank is None else min(maxrank, m, t.shape[1]))
    level = 0
    while True:
        groups = [nodes[i : i + group] for i in range(0, len(nodes), group)]
        top = len(groups) == 1
        nodes = []
        for g, members in enumerate(groups):
            if len(members) == 1 and not top:  # nothing to merge: passed up as it is
                nodes.append(members[0])
                continue
            key = (f"{name}-merge", level, g)
            parts = List(*(TaskRef(k) for k, _ in members))
            if top:
                key = (name, 0, 0)
            dsk[key] = Task(key, _merge, parts, maxrank, atol, safetyshift, top, kmax)
            task_ranks[key] = members[0][1]
            nodes.append((key, members[0][1]))
        if top:
            break
        level += 1
    packed = _wrap(name, dsk, [arr], (m + 2, kmax), None, (), t.dtype, comm, (t,), task_ranks)
    packed = packed.persist(wait=True)  # the tree runs once; only its header comes back
    header = np.asarray(packed[m + 1 :].numpy(), dtype=np.float64)
    k, err2 = int(header[0, 0]), float(header[0, 1])
    u = packed[:m, :k]
    err = (math.sqrt(err2) / norm) if norm > 0 else 0.0
    if not (transposed or compute_sv):
        return u, err
    v = matmul(_swap_last(t), u)  # (A^T U), whose columns are S V
    sigma = ((v * v).sum(axis=0)) ** 0.5  # S = ||A^T u_j||: then U S V^T = U U^T A exactly
    v = v / (sigma + (sigma == 0))  # a zero column stays zero
    if transposed:  # t = A^T = u S v^T, hence A = v S u^T
        if compute_sv:
            return v, sigma, _swap_last(u), err
        return v, err
    return u, sigma, _swap_last(v), err


def _check_int(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"`{name}` must be at least {minimum}, got {value}")
    return int(value)


def _local_columns(a) -> int:
    t_split = 1 if a.split != 0 else 0
    counts = a.distribution.counts if a.split is not None else (a.shape[t_split],)
    return max(counts) if counts else 0


def _group(maxmergedim: int, width: int) -> int:
    return max(2, maxmergedim // max(width, 1))


def hsvd_rank(a, maxrank: int, compute_sv: bool = False, maxmergedim=None, safetyshift: int = 5):
    """:func:`hsvd` truncated to at most ``maxrank`` singular values.

    ``maxmergedim`` bounds the columns one merge stacks (at least
    ``2 (maxrank + safetyshift) + 1``, RuntimeError below, as Heat's).

    Examples
    --------
    >>> import numpy as np, dndask as ht
    >>> x = np.outer(np.arange(1.0, 5.0), np.arange(1.0, 9.0))
    >>> u, err = ht.linalg.hsvd_rank(ht.array(x, split=1), 1)
    >>> u = u.numpy()
    >>> true = np.linalg.norm(u @ u.T @ x - x) / np.linalg.norm(x)  # U U^T A: the result
    >>> u.shape, bool(true <= err)
    ((4, 1), True)
    """
    _check_array(a, "a")
    maxrank = _check_int(maxrank, "maxrank", 1)
    safetyshift = _check_int(safetyshift, "safetyshift", 0)
    if maxmergedim is not None:
        maxmergedim = _check_int(maxmergedim, "maxmergedim", 1)
        if maxmergedim < 2 * (maxrank + safetyshift) + 1:
            raise RuntimeError(
                f"`maxmergedim` must be at least 2 * (maxrank + safetyshift) + 1 = "
                f"{2 * (maxrank + safetyshift) + 1}, got {maxmergedim}"
            )
    else:
        maxmergedim = max(_local_columns(a), 2 * (maxrank + safetyshift) + 1)
    group = _group(maxmergedim, maxrank + safetyshift)
    return hsvd(a, maxrank, None, safetyshift, group, compute_sv)


def hsvd_rtol(
    a,
    rtol: float,
    compute_sv: bool = False,
    no_of_merges=None,
    maxrank=None,
    maxmergedim=None,
    safetyshift: int = 5,
):
    """:func:`hsvd` truncated to the relative Frobenius error ``rtol`` (and ``maxrank``).

    Examples
    --------
    >>> import numpy as np, dndask as ht
    >>> x = np.outer(np.arange(1.0, 5.0), np.arange(1.0, 9.0))
    >>> u, err = ht.linalg.hsvd_rtol(ht.array(x, split=1), 1e-6)
    >>> u = u.numpy()
    >>> true = np.linalg.norm(u @ u.T @ x - x) / np.linalg.norm(x)
    >>> u.shape, bool(true <= 1e-6), bool(true <= err)
    ((4, 1), True, True)
    """
    _check_array(a, "a")
    if isinstance(rtol, bool) or not isinstance(rtol, numbers.Real):
        raise TypeError(f"`rtol` must be a float, got {type(rtol).__name__}")
    if not rtol > 0:
        raise ValueError(f"`rtol` must be positive, got {rtol}")
    safetyshift = _check_int(safetyshift, "safetyshift", 0)
    local = _local_columns(a)
    if maxrank is not None:
        maxrank = _check_int(maxrank, "maxrank", 1)
    if maxmergedim is not None:
        maxmergedim = _check_int(maxmergedim, "maxmergedim", 1)
        if maxrank is None:
            maxrank = maxmergedim // 2 - safetyshift
            if maxrank <= 0:
                raise ValueError(
                    f"`safetyshift` ({safetyshift}) is too large for `maxmergedim` {maxmergedim}"
                )
        if maxmergedim < 2 * (maxrank + safetyshift) + 1:
            raise ValueError(
                f"`maxmergedim` must be at least 2 * (maxrank + safetyshift) + 1 = "
                f"{2 * (maxrank + safetyshift) + 1}, got {maxmergedim}"
            )
    elif maxrank is not None:
        maxmergedim = max(local, 2 * (maxrank + safetyshift) + 1)
    if no_of_merges is not None:
        no_of_merges = _check_int(no_of_merges, "no_of_merges", 0)
        if no_of_merges < 2:
            raise ValueError(f"`no_of_merges` must be at least 2, got {no_of_merges}")
    if no_of_merges is not None:
        group = no_of_merges
    elif maxmergedim is not None:
        group = _group(maxmergedim, maxrank + safetyshift)
    else:
        group = 2
    return hsvd(a, maxrank, float(rtol), safetyshift, group, compute_sv)


def _small_svd(block, rank: int):
    u, s, vh = np.linalg.svd(block, full_matrices=False)
    return u[:, :rank], s[:rank], vh[:rank]


def isvd(new_data, u_old, s_old, vh_old, maxrank: int | None = None):
    """Incremental SVD (Brand 2006): the SVD of ``[X_old | new_data]`` from that of ``X_old``.

    With ``C = U^T N`` and the TSQR ``N - U C = Q R``, the small matrix
    ``K = [[diag(S), C], [0, R]]`` (``(k + p)`` square, factored in one task) gives
    ``U_new = [U | Q] U_K``, ``S_new = S_K`` and ``Vh_new = Vh_K @ blockdiag(Vh, I)``.
    ``maxrank`` truncates the result.

    Returns
    -------
    tuple of DNDarray
        ``U`` (split like the product ``[U | Q] U_K``), ``S`` and ``Vh`` (split None).

    Examples
    --------
    >>> import numpy as np, dndask as ht
    >>> x = np.arange(24.0).reshape(6, 4) ** 0.5
    >>> u, s, vh = ht.linalg.svd(ht.array(x[:, :2], split=0))
    >>> u2, s2, vh2 = ht.linalg.isvd(ht.array(x[:, 2:], split=0), u, s, vh)
    >>> bool(np.allclose((u2.numpy() * s2.numpy()) @ vh2.numpy(), x))
    True
    """
    names = ("new_data", "u_old", "s_old", "vh_old")
    for value, name, ndim in zip(
        (new_data, u_old, s_old, vh_old), names, (2, 2, 1, 2), strict=True
    ):
        _check_array(value, name)
        if value.ndim != ndim:
            raise ValueError(f"`{name}` must be {ndim}-dimensional, got {value.ndim} dimensions")
        if value.dtype not in (np.float32, np.float64):
            raise TypeError(f"`{name}` must be float32 or float64, got {value.dtype}")
    k = s_old.shape[0]
    if u_old.shape[1] != k:
        raise ValueError(
            f"`u_old` must have {k} columns (the length of `s_old`), got {u_old.shape[1]}"
        )
    if vh_old.shape[0] != k:
        raise ValueError(
            f"`vh_old` must have {k} rows (the length of `s_old`), got {vh_old.shape[0]}"
        )
    if new_data.shape[0] != u_old.shape[0]:
        raise ValueError(
            f"`new_data` must have {u_old.shape[0]} rows (those of `u_old`), "
            f"got {new_data.shape[0]}"
        )
    if maxrank is not None:
        maxrank = _check_int(maxrank, "maxrank", 1)
    dtype = new_data.dtype
    c = matmul(_swap_last(u_old), new_data)
    residual = new_data - matmul(u_old, c)
    q, r = qr(residual if residual.split != 1 else residual.resplit(0))
    top = _manipulation.concatenate(
        [_manipulation.diag(s_old.astype(dtype)), c.resplit(None)], axis=1
    )
    bottom = _manipulation.concatenate(
        [_factories.zeros((r.shape[0], k), dtype=dtype, comm=new_data.comm), r.resplit(None)],
        axis=1,
    )
    small = _manipulation.concatenate([top.resplit(None), bottom.resplit(None)], axis=0).resplit(
        None
    )
    size = small.shape[0]
    rank = min(size, small.shape[1]) if maxrank is None else min(maxrank, size, small.shape[1])
    outputs = [((size, rank), dtype), ((rank,), dtype), ((rank, small.shape[1]), dtype)]
    uk, sk, vhk = _per_block(small, functools.partial(_small_svd, rank=rank), outputs, "isvd")
    basis = _manipulation.concatenate([u_old.astype(dtype), q.resplit(u_old.split)], axis=1)
    u_new = matmul(basis, uk)
    vh_new = _manipulation.concatenate(
        [matmul(vhk[:, :k], vh_old.astype(dtype).resplit(None)), vhk[:, k:]], axis=1
    )
    return u_new, sk, vh_new
