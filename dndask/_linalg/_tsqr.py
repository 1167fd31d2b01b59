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
import numbers
import operator
from collections.abc import Callable, Sequence
from typing import NamedTuple

import dask.array as da
import numpy as np
from dask.base import tokenize

from .. import _dndarray, _graph, _manipulation, _torch, _xp
from .._compat import List, SliceTask, Task, TaskRef
from . import _products
from ._build import _wrap, _zeros
from ._checks import _check_array, _check_bool, _describe, _norm_dtype, _real_float


class QR(NamedTuple):
    """What :func:`qr` returns: ``Q`` (None for ``mode="r"``) and ``R``."""

    Q: _dndarray.DNDarray | None
    R: _dndarray.DNDarray


class SVD(NamedTuple):
    """What :func:`svd` returns with ``compute_uv=True``: ``A = U @ diag(S) @ Vh``.

    numpy's convention (and Heat 1.8's): ``Vh`` holds the right singular vectors
    as rows, ``Vh = V.conj().T``.
    """

    U: _dndarray.DNDarray
    S: _dndarray.DNDarray
    Vh: _dndarray.DNDarray


def _decomposition_input(a, fname: str) -> _dndarray.DNDarray:
    """``a`` checked and, as in numpy's linalg, integers and booleans taken as float64."""
    _check_array(a, "a")
    if a.ndim < 2:
        raise ValueError(f"`{fname}` needs `a` with at least 2 dimensions, got {a.ndim}")
    if a.dtype.kind in "fc" and a.dtype.itemsize < 4:
        raise TypeError(f"`{fname}` supports float32, float64 and complex dtypes, got {a.dtype}")
    return _real_float(a)


def _positive_diagonal(q, r):
    """Scale R's rows (and Q's columns) so that R's diagonal is real and non-negative.

    ``Q D`` and ``conj(D) R`` with ``D`` diagonal of unit modulus still multiply
    to ``A``; the fixed signs make results comparable across layouts. Works on
    stacks and in the chunks' namespace.
    """
    xp = _xp.namespace_of(r)
    k = min(r.shape[-2], r.shape[-1])
    diag = xp.diagonal(r[..., :k, :k], axis1=-2, axis2=-1)
    mag = xp.abs(diag)
    phase = xp.where(mag == 0, 1, diag / xp.where(mag == 0, 1, mag)).astype(r.dtype)
    r = r.copy()
    r[..., :k, :] *= xp.conj(phase)[..., :, None]
    if q is not None:
        q = q.copy()
        q[..., :, :k] *= phase[..., None, :]
    return q, r


_TORCH_QR_DTYPES = tuple(np.dtype(t) for t in ("float32", "float64", "complex64", "complex128"))


def _lapack_qr(block, mode: str) -> tuple:
    """``(Q, R)`` of ``block`` (stacked matrices too); Q is None for "r".

    Host chunks go through torch's LAPACK: torch's CPU QR runs several times
    faster than numpy's (on a 65536 x 128 float32 block, 0.25 s against 1.4 s on
    one thread); the arrays stay numpy. Blocks without elements, dtypes torch
    does not factor and device chunks use their own namespace's ``linalg.qr``.
    """
    xp = _xp.namespace_of(block)
    if xp is not np or block.size == 0 or block.dtype not in _TORCH_QR_DTYPES:
        if mode == "r":
            return None, xp.linalg.qr(block, mode="r")
        return tuple(xp.linalg.qr(block, mode=mode))
    if not (block.flags.writeable and block.flags.c_contiguous) or block.ctypes.data % 16:
        # torch warns on read-only memory, refuses negative strides, and its complex
        # kernels crash on buffers a transfer leaves aligned to 8 bytes only
        block = np.array(block)
    torch = _torch.torch()
    q, r = torch.linalg.qr(torch.from_numpy(block), mode=mode)
    return (None if mode == "r" else q.numpy()), r.numpy()


def _qr_block(block, mode: str) -> tuple:
    if mode == "r":
        return (_positive_diagonal(*_lapack_qr(block, "r"))[1],)
    return _positive_diagonal(*_lapack_qr(block, mode))


def _svd_block(block, full_matrices: bool, compute_uv: bool) -> tuple:
    xp = _xp.namespace_of(block)
    if not compute_uv:
        return (xp.linalg.svd(block, compute_uv=False),)
    return tuple(xp.linalg.svd(block, full_matrices=full_matrices))


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


def _local_qr(block, mode: str) -> tuple:
    return _lapack_qr(block, "r" if mode == "r" else "reduced")


def _second(pair: tuple):
    return pair[1]


def _merge_factors(factors: list, empty, want: str) -> dict:
    """QR of the R factors of one group, stacked along the rows (their second-last axis).

    ``want``: ``"r"`` (R only), ``"qr"`` (R and the member blocks of the group's
    Q), ``"svd"``/``"s"`` (also the SVD of R: the top of the tree). ``empty`` is
    the meta-like array standing for no rows at all.
    """
    xp = _xp.namespace_of(factors[0]) if factors else _xp.namespace_of(empty)
    stacked = xp.concatenate(factors, axis=-2) if len(factors) > 1 else (factors or [empty])[0]
    q2, r = _positive_diagonal(*_lapack_qr(stacked, "r" if want in ("r", "s") else "reduced"))
    out = {"R": r}
    if want == "s":
        out["S"] = xp.linalg.svd(r, compute_uv=False)
    if want == "svd":
        u_r, s, vh = xp.linalg.svd(r, full_matrices=False)
        q2 = xp.matmul(q2, u_r)
        out.update(S=s, Vh=vh)
    if want in ("qr", "svd"):
        out["Q"] = q2
        out["bounds"] = [int(f.shape[-2]) for f in factors]
    return out


def _member_block(merged: dict, parent_block, index: int):
    """Member ``index``'s rows of the group's Q, times the block the group's parent sent."""
    start = sum(merged["bounds"][:index])
    rows = merged["Q"][..., start : start + merged["bounds"][index], :]
    if parent_block is None:
        return rows
    return _xp.namespace_of(rows).matmul(rows, parent_block)


def _times(pair: tuple, block):
    return _xp.namespace_of(block).matmul(pair[0], block)


def _groups(members: list, procs_to_merge: int) -> list[list]:
    """``members`` in consecutive groups of ``procs_to_merge`` (0: all in one group)."""
    size = len(members) if procs_to_merge == 0 else procs_to_merge
    return [members[i : i + size] for i in range(0, len(members), size)]


def _tsqr(a: _dndarray.DNDarray, want: str, procs_to_merge: int = 0) -> dict:
    """The TSQR of a matrix (or a stack of them) split along its rows, as a graph.

    ``a`` is split along axis ``a.ndim - 2``. ``want``: ``"qr"`` (Q and R),
    ``"r"`` (R), ``"svd"`` (Q holding U, S, Vh) or ``"s"`` (S). Rank ``r`` factors
    its rows locally; only the small R factor (at most ``n x n`` per matrix)
    leaves it. The R factors are merged in a tree: groups of ``procs_to_merge``
    consecutive ranks (0: all ranks in one group) stack and factor their R factors
    on the group's first rank, and the groups' R factors are merged the same way
    until one is left (for the SVD, its SVD is taken there). Q flows back down:
    every merge sends each member its block of the merge's Q times the block the
    merge got from above, and rank ``r`` multiplies its local Q by its block. Q
    has ``a``'s counts; R, S and Vh are split None. Ranks without rows do no work.
    """
    x, comm = a.to_dask(), a.comm
    *batch, m, n = a.shape
    k = min(m, n)
    nd, split = a.ndim, a.ndim - 2
    counts = a.distribution.counts
    contributors = [r for r, c in enumerate(counts) if c]
    name = f"tsqr-{want}-{tokenize(x.name, want, procs_to_merge)}"
    mode = "reduced" if want in ("qr", "svd") else "r"
    inner = "qr" if mode == "reduced" else "r"
    like = _graph.meta_of(a.dtype, nd, like=a)
    dsk, task_ranks = {}, {}
    # level 0: the local factorizations; a node is (key of its R factor, its rank)
    nodes = []
    for r in contributors:
        local, factor = (f"{name}-local", r), (f"{name}-factor", r)
        dsk[local] = Task(local, _local_qr, TaskRef(_graph.chunk_key(x, split, r)), mode)
        # a task of its own, never fused downstream, so only the R factor travels
        dsk[factor] = SliceTask(factor, _second, TaskRef(local))
        task_ranks[local] = task_ranks[factor] = r
        nodes.append((factor, r))
    empty = (f"{name}-empty",)
    dsk[empty] = Task(empty, _zeros, (*batch, 0, n), a.dtype, like)
    task_ranks[empty] = 0
    # up the tree: merges[i] = (merge key, its members' nodes)
    merges, level = [], 0
    while True:
        groups = _groups(nodes, procs_to_merge) if len(nodes) > 1 else [nodes]
        top = len(groups) == 1
        next_nodes = []
        for g, members in enumerate(groups):
            merge = (f"{name}-merge", level, g)
            factors = List(*(TaskRef(key) for key, _ in members))
            step = want if top else inner
            dsk[merge] = Task(merge, _merge_factors, factors, TaskRef(empty), step)
            rank = members[0][1] if members else 0
            task_ranks[merge] = rank
            merges.append((merge, members, level))
            if not top:
                r_key = (f"{name}-mergeR", level, g)
                dsk[r_key] = SliceTask(r_key, operator.getitem, TaskRef(merge), "R")
                task_ranks[r_key] = rank
                next_nodes.append((r_key, rank))
        if top:
            break
        nodes, level = next_nodes, level + 1
    top_merge = merges[-1][0]
    real = _norm_dtype(a)
    small = {
        "R": ((*batch, k, n), a.dtype),
        "S": ((*batch, k), real),
        "Vh": ((*batch, k, n), a.dtype),
    }
    wanted = {"qr": ("R",), "r": ("R",), "svd": ("S", "Vh"), "s": ("S",)}[want]
    out = {}
    for label in wanted:
        shape, dtype = small[label]
        key_name = f"{name}-{label}"
        key = (key_name, *(0,) * len(shape))
        layer = {**dsk, key: Task(key, operator.getitem, TaskRef(top_merge), label)}
        out[label] = _wrap(key_name, layer, [x], shape, None, (), dtype, comm, (a,), task_ranks)
    if mode == "reduced":
        # down the tree: the block each node's merge hands it, from the top merge down
        blocks = {}
        for merge, members, _ in reversed(merges):
            parent = blocks.get(merge)
            for i, (node, _rank) in enumerate(members):
                block = (f"{name}-block", *merge[1:], i)
                parent_ref = None if parent is None else TaskRef(parent)
                dsk[block] = SliceTask(block, _member_block, TaskRef(merge), parent_ref, i)
                task_ranks[block] = task_ranks[merge]
                if node[0] == f"{name}-mergeR":
                    blocks[(f"{name}-merge", *node[1:])] = block
                else:
                    blocks[node] = block
        q_name = f"{name}-Q"
        layer = dict(dsk)
        for r, count in enumerate(counts):
            key = (q_name, *_graph.block_index(split, nd, r))
            if not count:
                layer[key] = Task(key, _zeros, (*batch, 0, k), a.dtype, like)
                continue
            block = blocks[(f"{name}-factor", r)]
            layer[key] = Task(key, _times, TaskRef((f"{name}-local", r)), TaskRef(block))
        q_shape, dtype = (*batch, m, k), a.dtype
        out["Q"] = _wrap(q_name, layer, [x], q_shape, split, counts, dtype, comm, (a,), task_ranks)
    return out


def _swap_last(a: _dndarray.DNDarray, conjugate: bool = False) -> _dndarray.DNDarray:
    """The (conjugate) transpose of the last two axes; every chunk is transposed where it lives."""
    arr = da.swapaxes(a.to_dask(), -1, -2)
    if conjugate and a.dtype.kind == "c":
        arr = da.conj(arr)
    nd, split = a.ndim, a.split
    if split is not None and split >= nd - 2:
        split = (2 * nd - 3) - split
    return _dndarray.from_dask(arr, split, a.comm, parents=(a,))


def _check_procs_to_merge(procs_to_merge) -> None:
    if isinstance(procs_to_merge, bool) or not isinstance(procs_to_merge, numbers.Integral):
        raise TypeError(f"`procs_to_merge` must be an int, got {type(procs_to_merge).__name__}")
    if procs_to_merge < 0 or procs_to_merge == 1:
        raise ValueError(f"`procs_to_merge` must be 0 (all at once) or >= 2, got {procs_to_merge}")


def qr(a, mode: str = "reduced", procs_to_merge: int = 0) -> QR:
    """The QR decomposition ``a = Q @ R``: tall-skinny QR (TSQR) for a split matrix.

    ``R``'s diagonal is made real and non-negative (numpy leaves its signs to
    LAPACK), so results agree across layouts and rank counts.

    Layouts (a stack of matrices is treated matrix by matrix, in the same tasks):

    - split None, or split along a batch axis of a stack: every rank factors its
      own matrices; ``Q`` and ``R`` are split like ``a``. Every mode works.
    - split along the rows (axis ``-2``) and ``m >= n``: TSQR. Each rank factors
      its rows (ranks with fewer rows than columns, or none, are fine), the
      ``R`` factors are merged in a tree (``procs_to_merge``), each rank multiplies
      its local ``Q`` by its block of the merged ``Q``. Only the ``n``-column
      factors travel. ``Q`` keeps ``a``'s counts, ``R`` is split None.
    - split along the columns (axis ``-1``) and ``m >= n``: ``a`` is resplit to
      its rows first (every element not on its final rank moves once), then TSQR.
    - ``m < n``, split along a matrix axis: ``a = [A1 | A2]`` with ``A1`` the
      leading ``m x m`` block; TSQR of ``A1`` (resplit to its rows) gives ``Q``
      and ``R1``, and ``R2 = Q^H @ A2`` is a distributed product. ``R = [R1 | R2]``
      is as large as ``a`` and keeps ``a``'s split; ``Q`` is split along its rows.
    - ``mode="complete"`` of a split matrix raises ``NotImplementedError``
      (``Q`` would be ``m x m`` in one chunk).

    Parameters
    ----------
    a : DNDarray
        At least 2-D; integers and booleans are factored in float64.
    mode : {"reduced", "r", "complete"}
        ``"reduced"``: ``Q`` is ``(..., m, k)`` and ``R`` ``(..., k, n)`` with
        ``k = min(m, n)``; ``"r"``: only ``R``; ``"complete"``: ``Q`` is ``(m, m)``
        (inputs not split along a matrix axis only).
    procs_to_merge : int
        How many ranks' ``R`` factors one merge of the TSQR stacks: ``0`` (default)
        merges all at once on rank 0, ``p >= 2`` merges groups of ``p`` consecutive
        ranks level by level (less data on one rank, more levels).

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
    _check_procs_to_merge(procs_to_merge)
    m, n = a.shape[-2:]
    if a.split is None or a.split < a.ndim - 2:
        return _qr_per_block(a, mode)
    if mode == "complete":
        raise NotImplementedError(
            f"`qr` with mode='complete' of a matrix split along a matrix axis ({_describe(a)}) "
            "is not implemented: Q would be m x m in one chunk"
        )
    if m < n:
        return _qr_wide(a, mode, procs_to_merge)
    rows = a if a.split == a.ndim - 2 else a.resplit(a.ndim - 2)
    out = _tsqr(rows, "qr" if mode == "reduced" else "r", procs_to_merge)
    return QR(out.get("Q"), out["R"])


def _qr_wide(a: _dndarray.DNDarray, mode: str, procs_to_merge: int) -> QR:
    """QR of ``m < n`` matrices split along a matrix axis: TSQR of the leading square block,
    then ``R2 = Q^H A2`` as a distributed product (see :func:`qr`)."""
    m = a.shape[-2]
    lead = a[..., :m]
    if lead.split != a.ndim - 2:
        lead = lead.resplit(a.ndim - 2)
    out = _tsqr(lead, "qr", procs_to_merge)
    q, r1 = out["Q"], out["R"]
    r2 = _products.matmul(_swap_last(q, conjugate=True), a[..., m:])
    r = _manipulation.concatenate([r1, r2], axis=-1)
    if r.split != a.split:
        r = r.resplit(a.split)
    return QR(q if mode == "reduced" else None, r)


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
    vh_out = ((*batch, n if full_matrices else k, n), a.dtype)
    return SVD(*_per_block(a, fn, [u_out, s_out, vh_out], "svd"))


def svd(a, full_matrices: bool = False, compute_uv: bool = True, procs_to_merge: int = 0):
    """The singular value decomposition ``a = U @ diag(S) @ Vh``, built on TSQR.

    numpy's convention (Heat 1.8's too): ``Vh = V.conj().T`` holds the right
    singular vectors as rows. Singular values are in descending order. A stack
    of matrices is decomposed matrix by matrix, in the same tasks.

    Layouts:

    - split None, or split along a batch axis of a stack: every rank decomposes
      its own matrices; outputs split like ``a``. ``full_matrices=True`` works here.
    - split along a matrix axis, ``m >= n``: TSQR of ``a`` (resplit to its rows
      first if split along its columns), then the SVD of the small
      ``R = U_r S Vh`` where the TSQR's merges end, folded into the TSQR's last
      step: ``U = Q U_r`` is split along its rows with ``a``'s counts, ``S`` and
      ``Vh`` are split None.
    - split along a matrix axis, ``m < n``: the same on ``a``'s conjugate
      transpose (resplit to its rows if ``a`` is split along its rows), so ``U``
      and ``S`` are split None and ``Vh`` is split along its columns (axis -1).
    - ``full_matrices=True`` for a matrix split along a matrix axis raises
      ``NotImplementedError`` (``U`` or ``Vh`` would be square and in one chunk).

    Parameters
    ----------
    a : DNDarray
        At least 2-D; integers and booleans are decomposed in float64.
    full_matrices : bool
        ``False`` (default): ``U`` is ``(..., m, k)``, ``Vh`` is ``(..., k, n)``,
        ``k = min(m, n)``.
    compute_uv : bool
        ``False``: return only ``S``.
    procs_to_merge : int
        The TSQR's merge width, as in :func:`qr`.

    Returns
    -------
    SVD or DNDarray
        The named tuple ``(U, S, Vh)``, or ``S`` for ``compute_uv=False``.

    Examples
    --------
    >>> import dndask as ht
    >>> a = ht.array([[3.0, 0.0], [0.0, -4.0], [0.0, 0.0]], split=0)
    >>> u, s, vh = ht.linalg.svd(a)
    >>> u.split, s.split, vh.split, s.numpy().round(6).tolist()
    (0, None, None, [4.0, 3.0])
    """
    a = _decomposition_input(a, "svd")
    _check_bool(full_matrices, "full_matrices")
    _check_bool(compute_uv, "compute_uv")
    _check_procs_to_merge(procs_to_merge)
    if a.split is None or a.split < a.ndim - 2:
        return _svd_per_block(a, full_matrices, compute_uv)
    if full_matrices:
        raise NotImplementedError(
            f"`svd` with full_matrices=True of a matrix split along a matrix axis "
            f"({_describe(a)}) is not implemented: U or Vh would be square and in one chunk"
        )
    m, n = a.shape[-2:]
    tall = m >= n
    t = a if tall else _swap_last(a, conjugate=True)
    if t.split != t.ndim - 2:
        t = t.resplit(t.ndim - 2)
    out = _tsqr(t, "svd" if compute_uv else "s", procs_to_merge)
    if not compute_uv:
        return out["S"]
    if tall:
        return SVD(out["Q"], out["S"], out["Vh"])
    # a^H = U' S Vh', hence a = Vh'^H S U'^H
    return SVD(_swap_last(out["Vh"], True), out["S"], _swap_last(out["Q"], True))
