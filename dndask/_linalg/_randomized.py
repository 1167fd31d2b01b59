"""Randomized factorizations: ``rsvd`` and ``reigh`` (Halko, Martinsson and Tropp, 2011).

A Gaussian sketch ``Y = A @ Omega`` (``Omega`` is ``n x ell`` with ``ell = rank +
n_oversamples``) is orthonormalized by the TSQR (:func:`qr`), optionally refined by
power iterations (each a product with ``A^H`` and ``A`` and a TSQR), and ``A`` is
projected on it: ``B = Q^H A`` (``ell x n``) for the SVD, ``B = Q^H A Q``
(``ell x ell``) for the eigendecomposition. Only ``B`` is factored on one rank
(one task); ``A``, ``Y`` and ``Q`` stay split. An unsplit ``A`` is factored where it
is: the whole algorithm in one task (numpy's QR for the bases), every result split None.
"""

from __future__ import annotations

import functools
import itertools
import numbers
import operator

import numpy as np
from dask.base import tokenize

from .. import _dndarray, _graph, _random
from .._compat import List, Task, TaskRef
from ._build import _wrap
from ._checks import _check_array
from ._products import matmul
from ._tsqr import SVD, _lapack_qr, _per_block, _swap_last, qr


def check_real_matrix(a, fname: str) -> _dndarray.DNDarray:
    """``a`` a 2-D float32 or float64 DNDarray, else TypeError/ValueError."""
    _check_array(a, "a")
    if a.ndim != 2:
        raise ValueError(f"`a` of `{fname}` must be 2-dimensional, got {a.ndim} dimensions")
    if a.dtype not in (np.float32, np.float64):
        raise TypeError(f"`a` of `{fname}` must be float32 or float64, got {a.dtype}")
    return a


def check_count(value, name: str, minimum: int) -> int:
    """An int ``>= minimum`` (TypeError for another type, ValueError below it)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"`{name}` must be at least {minimum}, got {value}")
    return int(value)


def _rows(x: _dndarray.DNDarray) -> _dndarray.DNDarray:
    """``x`` split along its rows (the TSQR's layout)."""
    return x if x.split == 0 else x.resplit(0)


def range_finder(a, rank: int, n_oversamples: int, power_iter: int, procs_to_merge: int):
    """An orthonormal ``m x ell`` basis ``Q`` (split 0) of the range of ``a @ Omega``."""
    omega = _sketch(a, rank, n_oversamples)
    # every basis is persisted (submitted, not awaited): the graphs stay one step deep
    q = qr(_rows(matmul(a, omega)), procs_to_merge=procs_to_merge).Q.persist()
    ah = _swap_last(a, conjugate=True)
    for _ in range(power_iter):
        z = qr(_rows(matmul(ah, q)), procs_to_merge=procs_to_merge).Q.persist()
        q = qr(_rows(matmul(a, z)), procs_to_merge=procs_to_merge).Q.persist()
    return q


def _local_basis(block, omega, power_iter: int):
    """:func:`range_finder` on one block (numpy's QR)."""
    q = np.linalg.qr(block @ omega)[0]
    for _ in range(power_iter):
        z = np.linalg.qr(block.conj().T @ q)[0]
        q = np.linalg.qr(block @ z)[0]
    return q


def _local_rsvd(block, omega, rank: int, power_iter: int):
    block = np.asarray(block)
    q = _local_basis(block, np.asarray(omega), power_iter)
    ub, s, vh = _svd_small(q.conj().T @ block, rank)
    return q @ ub, s, vh


def _local_reigh(block, omega, rank: int, power_iter: int):
    block = np.asarray(block)
    q = _local_basis(block, np.asarray(omega), power_iter)
    values, w = _eigh_small(q.conj().T @ block @ q, rank)
    return values, q @ w


def _on_one_rank(a, omega, fn, outputs, prefix: str) -> list:
    """``fn(a, omega)`` in one task where the unsplit ``a`` is (rank 0), one array
    (split None) per ``(shape, dtype)`` of ``outputs``."""
    arr, om = a.to_dask(), omega.to_dask()
    name = f"{prefix}-{tokenize(arr.name, om.name, fn)}"
    stage = (f"{name}-stage", 0)
    a_key, om_key = _graph.chunk_key(arr, None, 0), _graph.chunk_key(om, None, 0)
    dsk = {stage: Task(stage, fn, TaskRef(a_key), TaskRef(om_key))}
    results = []
    for i, (shape, dtype) in enumerate(outputs):
        out_name = f"{name}-{i}"
        key = (out_name, *(0,) * len(shape))
        layer = {**dsk, key: Task(key, operator.getitem, TaskRef(stage), i)}
        results.append(
            _wrap(out_name, layer, [arr, om], shape, None, (), dtype, a.comm, (a,), {stage: 0})
        )
    return results


def _sketch_qr(block, omega):
    """A rank's ``(Q0, R)``: the QR of its rows of the sketch ``Y = A @ Omega``."""
    return _lapack_qr(block @ omega, "reduced")


def _merge_r(*stages):
    """The QR of the ranks' stacked ``R`` factors: each rank's rows of its ``Q``."""
    q, _ = _lapack_qr(np.concatenate([stage[1] for stage in stages]), "reduced")
    edges = np.cumsum([0] + [stage[1].shape[0] for stage in stages])
    return [q[lo:hi] for lo, hi in itertools.pairwise(edges)]


def _project(stage, pieces, r: int, block):
    """A rank's rows of the basis, ``Q_r = Q0_r @ piece_r``, and its ``Q_r^H A_r``."""
    q = stage[0] @ pieces[r]
    return q, q.conj().T @ block


def _small_svd(*projected, rank: int):
    """``svd_rank`` triplets of ``B = sum_r Q_r^H A_r`` (one task)."""
    b = projected[0][1].copy()
    for part in projected[1:]:
        b += part[1]
    return _svd_small(b, rank)


def _lift(projected, small):
    return projected[0] @ small[0]


def _rsvd_rows(a, omega, rank: int) -> SVD:
    """:func:`rsvd` without power iterations of an ``a`` split along its rows, as one graph
    of depth five: per rank the sketch's rows and their QR, one merge of the ``R`` factors,
    per rank its basis rows and ``Q_r^H A_r``, one small SVD, per rank ``U_r``.

    The general path (products, a TSQR, a relayout of ``B``, each their own layers) is
    about twice as many dependent steps, each a scheduler round trip.
    """
    arr, om, comm = a.to_dask(), omega.to_dask(), a.comm
    name = f"rsvd-rows-{tokenize(arr.name, om.name, rank)}"
    om_key = TaskRef(_graph.chunk_key(om, None, 0))
    ranks = range(comm.size)
    block = {r: TaskRef(_graph.chunk_key(arr, 0, r)) for r in ranks}
    dsk, task_ranks = {}, {}
    for r in ranks:
        key = (f"{name}-sketch", r)
        dsk[key] = Task(key, _sketch_qr, block[r], om_key)
        task_ranks[key] = r
    merge = (f"{name}-merge", 0)
    dsk[merge] = Task(merge, _merge_r, *(TaskRef((f"{name}-sketch", r)) for r in ranks))
    task_ranks[merge] = 0
    for r in ranks:
        key = (f"{name}-project", r)
        dsk[key] = Task(key, _project, TaskRef((f"{name}-sketch", r)), TaskRef(merge), r, block[r])
        task_ranks[key] = r
    small = (f"{name}-small", 0)
    projected = List(*(TaskRef((f"{name}-project", r)) for r in ranks))
    dsk[small] = Task(small, _apply, functools.partial(_small_svd, rank=rank), projected)
    task_ranks[small] = 0
    m, n = a.shape
    real = np.empty(0, a.dtype).real.dtype
    u_name = f"{name}-u"
    u_layer = dict(dsk)
    for r in ranks:
        key = (u_name, r, 0)
        u_layer[key] = Task(key, _lift, TaskRef((f"{name}-project", r)), TaskRef(small))
        task_ranks[key] = r
    counts = a.distribution.counts
    deps = [arr, om]
    u = _wrap(u_name, u_layer, deps, (m, rank), 0, counts, a.dtype, comm, (a,), task_ranks)
    results = [u]
    for i, shape, dtype in ((1, (rank,), real), (2, (rank, n), a.dtype)):
        out_name = f"{name}-{i}"
        key = (out_name, *(0,) * len(shape))
        layer = {**dsk, key: Task(key, operator.getitem, TaskRef(small), i)}
        results.append(_wrap(out_name, layer, deps, shape, None, (), dtype, comm, (a,), {}))
    return SVD(*results)


def _apply(fn, parts):
    return fn(*parts)


def _sketch(a, rank: int, n_oversamples: int):
    """The Gaussian ``n x ell`` test matrix (split None)."""
    m, n = a.shape
    ell = min(rank + n_oversamples, m, n)
    return _random.randn(n, ell, dtype=a.dtype, split=None, comm=a.comm)


def _check(a, rank, n_oversamples, power_iter, procs_to_merge, fname, rank_name):
    a = check_real_matrix(a, fname)
    rank = check_count(rank, rank_name, 1)
    n_oversamples = check_count(n_oversamples, "n_oversamples", 0)
    power_iter = check_count(power_iter, "power_iter", 0)
    procs_to_merge = check_count(procs_to_merge, "qr_procs_to_merge", 0)
    if procs_to_merge == 1:
        raise ValueError("`qr_procs_to_merge` must be 0 (all at once) or >= 2, got 1")
    if rank > min(a.shape):
        raise ValueError(
            f"`{rank_name}` must be at most min(m, n) = {min(a.shape)} for `a` of shape "
            f"{a.shape}, got {rank}"
        )
    return a, rank, n_oversamples, power_iter, procs_to_merge


def _svd_small(block, rank: int):
    u, s, vh = np.linalg.svd(block, full_matrices=False)
    return u[:, :rank], s[:rank], vh[:rank]


def _eigh_small(block, rank: int):
    values, vectors = np.linalg.eigh((block + block.conj().T) / 2)
    order = np.argsort(values)[::-1][:rank]
    return values[order], vectors[:, order]


def rsvd(
    a, svd_rank: int, n_oversamples: int = 10, power_iter: int = 0, qr_procs_to_merge: int = 2
) -> SVD:
    """A rank-``svd_rank`` approximation ``a ≈ U @ diag(S) @ Vh`` by a randomized sketch.

    Parameters
    ----------
    a : DNDarray
        A float32 or float64 matrix, split along either axis or not at all.
    svd_rank : int
        The number of singular triplets, ``1 <= svd_rank <= min(a.shape)``.
    n_oversamples : int
        Extra sketch columns (accuracy); the sketch has ``svd_rank + n_oversamples``
        columns, at most ``min(a.shape)``.
    power_iter : int
        Power iterations (each two products with ``a`` and two TSQRs); they help for
        slowly decaying singular values.
    qr_procs_to_merge : int
        The TSQR's merge width (see :func:`qr`).

    Returns
    -------
    SVD
        ``U`` (``m x svd_rank``, split 0; None for an unsplit ``a``), ``S`` (split None,
        descending) and ``Vh``
        (``svd_rank x n``, split None); ``Vh`` holds the right singular vectors as rows.

    Examples
    --------
    >>> import numpy as np, dndask as ht
    >>> x = np.outer(np.arange(1.0, 7.0), np.arange(1.0, 5.0))
    >>> u, s, vh = ht.linalg.rsvd(ht.array(x, split=0), 1)
    >>> bool(np.allclose((u.numpy() * s.numpy()) @ vh.numpy(), x))
    True
    """
    a, rank, n_over, power, merge = _check(
        a, svd_rank, n_oversamples, power_iter, qr_procs_to_merge, "rsvd", "svd_rank"
    )
    if a.split is None:  # one chunk: the whole algorithm in one task, where it is
        m, n = a.shape
        real = np.empty(0, a.dtype).real.dtype
        outputs = [((m, rank), a.dtype), ((rank,), real), ((rank, n), a.dtype)]
        fn = functools.partial(_local_rsvd, rank=rank, power_iter=power)
        return SVD(*_on_one_rank(a, _sketch(a, rank, n_over), fn, outputs, "rsvd-local"))
    if a.split == 0 and power == 0:
        return _rsvd_rows(a, _sketch(a, rank, n_over), rank)
    q = range_finder(a, rank, n_over, power, merge)
    b = matmul(_swap_last(q, conjugate=True), a).resplit(None).persist()
    ell, n = b.shape
    real = np.empty(0, a.dtype).real.dtype
    outputs = [((ell, rank), a.dtype), ((rank,), real), ((rank, n), a.dtype)]
    ub, s, vh = _per_block(b, functools.partial(_svd_small, rank=rank), outputs, "rsvd-small")
    return SVD(matmul(q, ub), s, vh)


def reigh(
    a, n_eigenvalues: int, n_oversamples: int = 10, power_iter: int = 0, qr_procs_to_merge: int = 2
):
    """The ``n_eigenvalues`` largest eigenpairs of a symmetric ``a``, by a randomized sketch.

    Heat's order: eigenvalues in descending order (by value).

    Parameters
    ----------
    a : DNDarray
        A symmetric float32 or float64 matrix (not checked: the sketch reads ``a`` only
        through products).
    n_eigenvalues : int
        How many, ``1 <= n_eigenvalues <= n``.
    n_oversamples, power_iter, qr_procs_to_merge : int
        As in :func:`rsvd`.

    Returns
    -------
    tuple of DNDarray
        The eigenvalues (split None) and the eigenvectors as columns (``n x
        n_eigenvalues``, split 0; None for an unsplit ``a``).

    Examples
    --------
    >>> import numpy as np, dndask as ht
    >>> a = ht.array(np.diag([5.0, 1.0, 3.0, 0.5]), split=0)
    >>> values, vectors = ht.linalg.reigh(a, 2, n_oversamples=2)
    >>> np.round(values.numpy(), 6).tolist()
    [5.0, 3.0]
    """
    a, rank, n_over, power, merge = _check(
        a, n_eigenvalues, n_oversamples, power_iter, qr_procs_to_merge, "reigh", "n_eigenvalues"
    )
    if a.shape[0] != a.shape[1]:
        raise ValueError(f"`a` of `reigh` must be square, got shape {a.shape}")
    if a.split is None:  # one chunk: the whole algorithm in one task, where it is
        outputs = [((rank,), a.dtype), ((a.shape[0], rank), a.dtype)]
        fn = functools.partial(_local_reigh, rank=rank, power_iter=power)
        return tuple(_on_one_rank(a, _sketch(a, rank, n_over), fn, outputs, "reigh-local"))
    q = range_finder(a, rank, n_over, power, merge)
    b = matmul(_swap_last(q, conjugate=True), matmul(a, q)).resplit(None).persist()
    ell = b.shape[0]
    outputs = [((rank,), a.dtype), ((ell, rank), a.dtype)]
    values, w = _per_block(b, functools.partial(_eigh_small, rank=rank), outputs, "reigh-small")
    return values, matmul(q, w)
