"""QR and SVD: ``qr``, ``svd``, their result tuples and the tall-skinny QR (TSQR) graph.

:func:`qr` is the tall-skinny QR (TSQR): one local QR per rank, a QR of the
stacked small ``R`` factors on rank 0, and ``Q_r = Q_local_r @ block_r`` on rank
``r``. Only the ``R`` factors and the blocks of the second-level ``Q`` travel.
Per-rank factorizations use torch's LAPACK on the numpy chunks (:func:`_lapack_qr`).
:func:`svd` adds the SVD of the small ``R`` to the same graph. Matrices that are
not split along a matrix axis are factored per chunk, where they live.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import NamedTuple

import dask.array as da
import numpy as np
from dask.base import tokenize

from .. import _dndarray, _graph, _torch
from .._compat import List, SliceTask, Task, TaskRef
from ._build import _wrap, _zeros
from ._checks import _check_array, _check_bool, _describe, _norm_dtype, _real_float


class QR(NamedTuple):
    """What :func:`qr` returns: ``Q`` (None for ``mode="r"``) and ``R``."""

    Q: _dndarray.DNDarray | None
    R: _dndarray.DNDarray


class SVD(NamedTuple):
    """What :func:`svd` returns with ``compute_uv=True``: ``A = U @ diag(S) @ V.conj().T``.

    ``V`` holds the right singular vectors as columns (Heat's convention), not
    numpy's ``Vh``.
    """

    U: _dndarray.DNDarray
    S: _dndarray.DNDarray
    V: _dndarray.DNDarray


def _decomposition_input(a, fname: str) -> _dndarray.DNDarray:
    """``a`` checked and, as in numpy's linalg, integers and booleans taken as float64."""
    _check_array(a, "a")
    if a.ndim < 2:
        raise ValueError(f"`{fname}` needs `a` with at least 2 dimensions, got {a.ndim}")
    if a.dtype.kind in "fc" and a.dtype.itemsize < 4:
        raise TypeError(f"`{fname}` supports float32, float64 and complex dtypes, got {a.dtype}")
    return _real_float(a)


def _positive_diagonal(q: np.ndarray | None, r: np.ndarray):
    """Scale R's rows (and Q's columns) so that R's diagonal is real and non-negative.

    ``Q D`` and ``conj(D) R`` with ``D`` diagonal of unit modulus still multiply
    to ``A``; the fixed signs make results comparable across layouts.
    """
    k = min(r.shape[-2], r.shape[-1])
    diag = np.diagonal(r[..., :k, :k], axis1=-2, axis2=-1)
    mag = np.abs(diag)
    phase = np.where(mag == 0, 1, diag / np.where(mag == 0, 1, mag)).astype(r.dtype)
    r = r.copy()
    r[..., :k, :] *= np.conj(phase)[..., :, None]
    if q is not None:
        q = q.copy()
        q[..., :, :k] *= phase[..., None, :]
    return q, r


_TORCH_QR_DTYPES = tuple(np.dtype(t) for t in ("float32", "float64", "complex64", "complex128"))


def _lapack_qr(block: np.ndarray, mode: str) -> tuple:
    """``(Q, R)`` of ``block`` (stacked matrices too) through torch's LAPACK; Q is None for "r".

    torch's CPU QR runs several times faster than numpy's (on a 65536 x 128
    float32 block, 0.25 s against 1.4 s on one thread), so the per-rank
    factorizations use it; the arrays stay numpy. Blocks without elements, and
    dtypes torch does not factor, go to numpy.
    """
    if block.size == 0 or block.dtype not in _TORCH_QR_DTYPES:
        if mode == "r":
            return None, np.linalg.qr(block, mode="r")
        return tuple(np.linalg.qr(block, mode=mode))
    if not (block.flags.writeable and block.flags.c_contiguous) or block.ctypes.data % 16:
        # torch warns on read-only memory, refuses negative strides, and its complex
        # kernels crash on buffers a transfer leaves aligned to 8 bytes only
        block = np.array(block)
    torch = _torch.torch()
    q, r = torch.linalg.qr(torch.from_numpy(block), mode=mode)
    return (None if mode == "r" else q.numpy()), r.numpy()


def _qr_block(block: np.ndarray, mode: str) -> tuple:
    if mode == "r":
        return (_positive_diagonal(*_lapack_qr(block, "r"))[1],)
    return _positive_diagonal(*_lapack_qr(block, mode))


def _svd_block(block: np.ndarray, full_matrices: bool, compute_uv: bool) -> tuple:
    if not compute_uv:
        return (np.linalg.svd(block, compute_uv=False),)
    u, s, vh = np.linalg.svd(block, full_matrices=full_matrices)
    return u, s, np.swapaxes(vh, -1, -2).conj()


def _per_block(x: _dndarray.DNDarray, fn: Callable, outputs: Sequence, prefix: str) -> list:
    """Run ``fn`` on every chunk where it lives; it returns one array per ``outputs`` entry.

    ``outputs`` holds ``(global shape, dtype)`` pairs; each result is split like
    ``x`` (along a batch axis, or not at all) with ``x``'s counts.
    """
    arr, split, comm = x.to_dask(), x.split, x.comm
    counts = x.distribution.counts
    name = f"{prefix}-{tokenize(arr.name, fn)}"
    ranks = range(comm.size) if split is not None else range(1)
    dsk, task_ranks = {}, {}
    for r in ranks:
        key = (f"{name}-stage", r)
        dsk[key] = Task(key, fn, TaskRef(_graph.chunk_key(arr, split, r)))
        task_ranks[key] = r
    results = []
    for i, (shape, dtype) in enumerate(outputs):
        out_name = f"{name}-{i}"
        layer = dict(dsk)
        for r in ranks:
            key = (out_name, *_graph.block_index(split, len(shape), r))
            layer[key] = Task(key, operator.getitem, TaskRef((f"{name}-stage", r)), i)
        results.append(
            _wrap(out_name, layer, [arr], shape, split, counts, dtype, comm, (x,), task_ranks)
        )
    return results


def _local_qr(block: np.ndarray, mode: str) -> tuple:
    return _lapack_qr(block, "r" if mode == "r" else "reduced")


def _second(pair: tuple) -> np.ndarray:
    return pair[1]


def _tsqr_merge(factors: list, n: int, dtype, want: str) -> dict:
    """QR (and SVD) of the stacked R factors: the only step that sees more than one rank."""
    stacked = np.concatenate(factors, axis=0) if factors else np.zeros((0, n), dtype=dtype)
    q2, r = _positive_diagonal(*np.linalg.qr(stacked))
    out = {"R": r}
    if want == "s":
        out["S"] = np.linalg.svd(r, compute_uv=False)
    if want == "svd":
        u_r, s, vh = np.linalg.svd(r, full_matrices=False)
        q2 = q2 @ u_r
        out.update(S=s, V=vh.conj().T)
    if want in ("qr", "svd"):
        bounds = np.cumsum([f.shape[0] for f in factors])[:-1]
        out["blocks"] = tuple(np.split(q2, bounds, axis=0))
    return out


def _block_of(merged: dict, index: int) -> np.ndarray:
    return merged["blocks"][index]


def _times(pair: tuple, block: np.ndarray) -> np.ndarray:
    return pair[0] @ block


def _tsqr(a: _dndarray.DNDarray, want: str) -> dict:
    """The TSQR of a 2-D, split=0 DNDarray as a graph.

    ``want``: ``"qr"`` (Q and R), ``"r"`` (R), ``"svd"`` (Q holding U, S, V) or
    ``"s"`` (S). Rank ``r`` factors its rows locally; only the small R factor
    (at most ``n x n``) leaves it. Rank 0 factors the stacked R factors (and,
    for the SVD, the resulting R), then sends rank ``r`` its block of the
    second-level Q, which rank ``r`` multiplies into its local Q. Q has ``a``'s
    counts; R, S and V are split None. Ranks without rows do no work.
    """
    x, comm = a.to_dask(), a.comm
    m, n = a.shape
    k = min(m, n)
    counts = a.distribution.counts
    contributors = [r for r, c in enumerate(counts) if c]
    name = f"tsqr-{want}-{tokenize(x.name, want)}"
    mode = "reduced" if want in ("qr", "svd") else "r"
    dsk, task_ranks, factors = {}, {}, []
    for r in contributors:
        local, factor = (f"{name}-local", r), (f"{name}-factor", r)
        dsk[local] = Task(local, _local_qr, TaskRef((x.name, r, 0)), mode)
        # a task of its own, never fused downstream, so only the R factor travels
        dsk[factor] = SliceTask(factor, _second, TaskRef(local))
        task_ranks[local] = task_ranks[factor] = r
        factors.append(TaskRef(factor))
    merge = (f"{name}-merge",)
    dsk[merge] = Task(merge, _tsqr_merge, List(*factors), n, a.dtype, want)
    task_ranks[merge] = 0
    real = _norm_dtype(a)
    small = {"R": ((k, n), a.dtype), "S": ((k,), real), "V": ((n, k), a.dtype)}
    wanted = {"qr": ("R",), "r": ("R",), "svd": ("S", "V"), "s": ("S",)}[want]
    out = {}
    for label in wanted:
        shape, dtype = small[label]
        key_name = f"{name}-{label}"
        key = (key_name, *(0,) * len(shape))
        layer = {**dsk, key: Task(key, operator.getitem, TaskRef(merge), label)}
        out[label] = _wrap(key_name, layer, [x], shape, None, (), dtype, comm, (a,), task_ranks)
    if mode == "reduced":
        q_name = f"{name}-Q"
        layer = dict(dsk)
        for r, count in enumerate(counts):
            key = (q_name, r, 0)
            if not count:
                layer[key] = Task(key, _zeros, (0, k), a.dtype)
                continue
            block = (f"{name}-block", r)
            layer[block] = SliceTask(block, _block_of, TaskRef(merge), contributors.index(r))
            task_ranks[block] = 0
            layer[key] = Task(key, _times, TaskRef((f"{name}-local", r)), TaskRef(block))
        out["Q"] = _wrap(q_name, layer, [x], (m, k), 0, counts, a.dtype, comm, (a,), task_ranks)
    return out


def _transposed(a: _dndarray.DNDarray, conjugate: bool = False) -> _dndarray.DNDarray:
    """The (conjugate) transpose of a 2-D array; every chunk is transposed where it lives."""
    arr = a.to_dask().T
    if conjugate and a.dtype.kind == "c":
        arr = da.conj(arr)
    split = None if a.split is None else 1 - a.split
    return _dndarray.from_dask(arr, split, a.comm, parents=(a,))


def qr(a, mode="reduced"):
    """The QR decomposition ``a = Q @ R``: tall-skinny QR (TSQR) for a split matrix.

    ``R``'s diagonal is made real and non-negative (numpy leaves its signs to
    LAPACK), so results agree across layouts and rank counts.

    Layouts:

    - split None, or split along a batch axis of a stack: every rank factors its
      own matrices with numpy; ``Q`` and ``R`` are split like ``a``. Every mode works.
    - split 0 (rows) and ``m >= n``: TSQR. Each rank factors its rows (ranks with
      fewer rows than columns, or none, are fine), rank 0 factors the stacked
      ``R`` factors, each rank multiplies its local ``Q`` by its block of that
      second-level ``Q``. Only the ``n``-column factors travel. ``Q`` keeps
      ``a``'s counts (split 0), ``R`` is split None.
    - split 1 (columns) and ``m >= n``: ``a`` is resplit to 0 first (every element
      not on its final rank moves once), then TSQR; Heat keeps split 1 here.
    - ``m < n`` split along a matrix axis, a stack split along a matrix axis, and
      ``mode="complete"`` of a split matrix raise ``NotImplementedError`` (``R``,
      respectively ``Q``, would be as large as the matrix and one chunk).

    Parameters
    ----------
    a : DNDarray
        At least 2-D; integers and booleans are factored in float64.
    mode : {"reduced", "r", "complete"}
        ``"reduced"``: ``Q`` is ``(m, k)`` and ``R`` ``(k, n)`` with ``k = min(m, n)``;
        ``"r"``: only ``R``; ``"complete"``: ``Q`` is ``(m, m)`` (unsplit inputs only).

    Returns
    -------
    QR
        The named tuple ``(Q, R)`` (Heat's convention); ``Q`` is None for ``mode="r"``.

    Examples
    --------
    >>> import dndask as ht
    >>> a = ht.array([[3.0, 0.0], [4.0, 5.0], [0.0, 0.0], [0.0, 0.0]], split=0)
    >>> q, r = ht.linalg.qr(a)
    >>> q.split, r.split, r.numpy().round(6).tolist()
    (0, None, [[5.0, 4.0], [0.0, 3.0]])
    """
    a = _decomposition_input(a, "qr")
    if not isinstance(mode, str):
        raise TypeError(f"`mode` must be a str, got {type(mode).__name__}")
    if mode == "raw":
        raise NotImplementedError("`qr` with mode='raw' is not implemented")
    if mode not in ("reduced", "r", "complete"):
        raise ValueError(f"`mode` must be 'reduced', 'r' or 'complete', got {mode!r}")
    m, n = a.shape[-2:]
    if a.split is None or a.split < a.ndim - 2:
        return _qr_per_block(a, mode)
    if mode == "complete":
        raise NotImplementedError(
            f"`qr` with mode='complete' of a matrix split along a matrix axis ({_describe(a)}) "
            "is not implemented: Q would be m x m in one chunk"
        )
    if a.ndim > 2:
        raise NotImplementedError(
            f"`qr` of a stack of matrices split along a matrix axis ({_describe(a)}) is not "
            "implemented; split it along a batch axis"
        )
    if m < n:
        raise NotImplementedError(
            f"`qr` of a wide matrix (m < n) split along an axis ({_describe(a)}) is not "
            "implemented: R would be as large as the matrix"
        )
    if a.split == 1:
        a = a.resplit(0)
    out = _tsqr(a, "qr" if mode == "reduced" else "r")
    return QR(out.get("Q"), out["R"])


def _qr_per_block(a: _dndarray.DNDarray, mode: str) -> QR:
    *batch, m, n = a.shape
    k = min(m, n)
    rows = m if mode == "complete" else k
    r_out = ((*batch, rows, n), a.dtype)
    if mode == "r":
        (r,) = _per_block(a, functools.partial(_qr_block, mode=mode), [r_out], "qr")
        return QR(None, r)
    q_out = ((*batch, m, rows), a.dtype)
    q, r = _per_block(a, functools.partial(_qr_block, mode=mode), [q_out, r_out], "qr")
    return QR(q, r)


def _svd_per_block(a: _dndarray.DNDarray, full_matrices: bool, compute_uv: bool):
    *batch, m, n = a.shape
    k = min(m, n)
    fn = functools.partial(_svd_block, full_matrices=full_matrices, compute_uv=compute_uv)
    s_out = ((*batch, k), _norm_dtype(a))
    if not compute_uv:
        return _per_block(a, fn, [s_out], "svd")[0]
    u_out = ((*batch, m, m if full_matrices else k), a.dtype)
    v_out = ((*batch, n, n if full_matrices else k), a.dtype)
    return SVD(*_per_block(a, fn, [u_out, s_out, v_out], "svd"))


def svd(a, full_matrices=False, compute_uv=True):
    """The singular value decomposition ``a = U @ diag(S) @ V.conj().T``, built on TSQR.

    Heat's convention: ``V`` (right singular vectors as columns) is returned, not
    numpy's ``Vh = V.conj().T``. Singular values are in descending order.

    Layouts:

    - split None, or split along a batch axis of a stack: numpy on every rank's
      own matrices; outputs split like ``a``. ``full_matrices=True`` works here.
    - 2-D with ``m >= n``: TSQR of ``a`` (resplit to 0 first if split 1), then the
      SVD of the small ``R = U_r S V^H`` on rank 0, folded into the TSQR's last
      step: ``U = Q U_r`` is split 0 with ``a``'s counts, ``S`` and ``V`` are split None.
    - 2-D with ``m < n``: the same on ``a``'s conjugate transpose (resplit to 0
      if ``a`` is split 0), so ``U`` and ``S`` are split None and ``V`` is split 0.
    - ``full_matrices=True`` for a split matrix and stacks split along a matrix
      axis raise ``NotImplementedError``.

    Parameters
    ----------
    a : DNDarray
        At least 2-D; integers and booleans are decomposed in float64.
    full_matrices : bool
        ``False`` (default): ``U`` is ``(m, k)``, ``V`` is ``(n, k)``, ``k = min(m, n)``.
    compute_uv : bool
        ``False``: return only ``S``.

    Returns
    -------
    SVD or DNDarray
        The named tuple ``(U, S, V)``, or ``S`` for ``compute_uv=False``.

    Examples
    --------
    >>> import dndask as ht
    >>> a = ht.array([[3.0, 0.0], [0.0, -4.0], [0.0, 0.0]], split=0)
    >>> u, s, v = ht.linalg.svd(a)
    >>> u.split, s.split, v.split, s.numpy().round(6).tolist()
    (0, None, None, [4.0, 3.0])
    """
    a = _decomposition_input(a, "svd")
    _check_bool(full_matrices, "full_matrices")
    _check_bool(compute_uv, "compute_uv")
    if a.split is None or a.split < a.ndim - 2:
        return _svd_per_block(a, full_matrices, compute_uv)
    if full_matrices:
        raise NotImplementedError(
            f"`svd` with full_matrices=True of a matrix split along a matrix axis "
            f"({_describe(a)}) is not implemented: U or V would be square and in one chunk"
        )
    if a.ndim > 2:
        raise NotImplementedError(
            f"`svd` of a stack of matrices split along a matrix axis ({_describe(a)}) is not "
            "implemented; split it along a batch axis"
        )
    m, n = a.shape
    tall = m >= n
    t = a if tall else _transposed(a, conjugate=True)
    if t.split != 0:
        t = t.resplit(0)
    out = _tsqr(t, "svd" if compute_uv else "s")
    if not compute_uv:
        return out["S"]
    if tall:
        return SVD(out["Q"], out["S"], out["V"])
    # a^H = U' S V'^H, hence a = V' S U'^H
    return SVD(out["V"], out["S"], out["Q"])
