"""Spectral divide and conquer as per-rank task graphs: :func:`eigh_rows`.

The matrix of every subproblem is held as row blocks, one per rank, and each step
of the algorithm is a few tasks per rank and one task (a *merge*) that combines
what the ranks send it. A whole QDWH polar decomposition is one graph: its weights
follow a scalar recurrence, so its steps are known before any data moves. A
QR-based step (weight ``c > 100``) sends each rank's ``sqrt(c) X_r`` (or the ``R`` of
its local QR when it has more rows than columns) to the merge, which factors them
stacked on the identity and sends rank ``r`` its rows of ``Q1 Q2^T``; a
Cholesky-based step sends the Gram matrices ``X_r^T X_r`` and gets back
``(I + c X^T X)^{-1}``. The driver waits once per level of the recursion, for the
dimensions ``k`` of the invariant subspaces (they fix the subproblems' shapes);
every subproblem of a level is built and submitted before that wait, and the
eigenvectors are assembled back in the last graph.

Per subproblem of order ``n`` (``sigma`` the median of the diagonal):
``U = polar(A - sigma I)`` (its sign), ``k = (trace(U) + n) / 2``, an orthogonal
``V = [V1 V2]`` from the QR of ``[P G1 | (I - P) G2]`` (``P = (U + I) / 2``, ``G``
Gaussian), once refined; ``V^T A V`` is block diagonal up to rounding and its two
diagonal blocks are the subproblems, factored by LAPACK in one task once they have
at most ``leaf`` rows or once their share of the ranks is one. The shares are Heat's:
a subproblem of order ``k`` out of ``n`` gets ``round(k / n * share)`` of its parent's
share (at least one, leaving one to its sibling), so the recursion is as deep as
Heat's; here every subproblem still runs on all ranks.
"""

from __future__ import annotations

import itertools
import math
import operator
from dataclasses import dataclass, field

import numpy as np

from .. import _compute, _dndarray, _graph, _layout
from .._compat import List, SliceTask, Task, TaskRef
from ._build import _wrap
from ._tsqr import _lapack_qr

QR_ABOVE = 100.0  # QDWH steps with a larger weight ``c`` use the QR form (stable for any c)


def qdwh_weights(l0: float, eps: float) -> list[tuple[float, float, float]]:
    """The weights ``(a, b, c)`` of every QDWH step from the lower bound ``l0``.

    >>> len(qdwh_weights(1e-16, 2.2e-16))
    6
    """
    weights, lower = [], l0
    while abs(1 - lower) > 10 * eps and len(weights) < 20:
        dd = (4 * (1 - lower**2) / lower**4) ** (1 / 3)
        sqd = math.sqrt(1 + dd)
        a = sqd + 0.5 * math.sqrt(8 - 4 * dd + 8 * (2 - lower**2) / (lower**2 * sqd))
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        weights.append((a, b, c))
        lower = min(1.0, lower * (a + b * lower**2) / (1 + c * lower**2))
    return weights


def _counts(n: int, size: int) -> list[int]:
    return [n // size + (r < n % size) for r in range(size)]


def _qr_q(block):
    return _lapack_qr(block, "reduced")[0] if block.size else np.zeros(block.shape, block.dtype)


# ----------------------------------------------------------------- kernels (run in tasks)
def _rows_of(chunk, transpose: bool):
    return np.ascontiguousarray(chunk.T) if transpose else chunk


def _probe(block, start: int, n: int, seed: int):
    """A rank's diagonal and its parts of ``a g`` and ``a^T g`` for two Gaussian probes."""
    g = np.random.default_rng(seed).standard_normal((n, 2)).astype(block.dtype)
    rows = block.shape[0]
    diag = block[np.arange(rows), start + np.arange(rows)].astype(np.float64)
    return diag, block @ g, block.T @ g[start : start + rows]


def _shift(probes: list, check: bool):
    """``(sigma, gap, scale)``: the median of the diagonal and the symmetry probe's norms."""
    sigma = float(np.median(np.concatenate([p[0] for p in probes])))
    if not check:
        return sigma, 0.0, 1.0
    left = np.concatenate([p[1] for p in probes]).astype(np.float64)
    right = sum(p[2].astype(np.float64) for p in probes)
    gap = float(np.linalg.norm(left - right))
    return sigma, gap, float(np.linalg.norm(left) + np.linalg.norm(right))


def _shifted_sumsq(block, start: int, shift) -> float:
    x = block.astype(np.float64)
    rows = x.shape[0]
    x[np.arange(rows), start + np.arange(rows)] -= shift[0]
    return float(np.vdot(x, x))


def _scale(parts: list, shift) -> tuple[float, float]:
    """``(sigma, alpha)``: the shift and the Frobenius norm of the shifted matrix."""
    return shift[0], math.sqrt(sum(parts))


def _prepare(x, kind: str | None, c: float, start=None):
    """The state ``(x, q, up)`` a rank keeps before a QDWH step of ``kind``; ``up`` goes
    to the merge. After the last step, ``up`` is the rank's part of ``trace(x)``."""
    n = x.shape[1]
    if kind == "qr":
        y = x * np.asarray(math.sqrt(c), x.dtype)
        if x.shape[0] > n:  # compress: only R leaves the rank
            q, r = _lapack_qr(y, "reduced")
            return x, q, r
        return x, None, y
    if kind == "chol":
        return x, None, x.T @ x
    rows = x.shape[0]
    return x, None, float(x[np.arange(rows), start + np.arange(rows)].sum())


def _start(block, start: int, scale, kind: str, c: float, shifted: bool):
    sigma, alpha = scale
    x = block.astype(block.dtype, copy=True)
    if shifted:
        rows = x.shape[0]
        x[np.arange(rows), start + np.arange(rows)] -= np.asarray(sigma, x.dtype)
    x /= np.asarray(alpha if alpha > 0 else 1.0, x.dtype)
    return _prepare(x, kind, c, start)


def _sumsq(block) -> float:
    x = block.astype(np.float64)
    return float(np.vdot(x, x))


def _merge_qr(ups: list, n: int, dtype):
    """The QR of ``[up_0; ...; up_{P-1}; I]``; each rank's rows of ``Q1`` times ``Q2^T``."""
    stacked = np.concatenate([*ups, np.eye(n, dtype=dtype)])
    q = _qr_q(stacked)
    q2t = q[-n:].T
    edges = np.cumsum([0] + [u.shape[0] for u in ups])
    return [q[lo:hi] @ q2t for lo, hi in itertools.pairwise(edges)]


def _merge_chol(ups: list, n: int, dtype, c: float):
    """``(I + c X^T X)^{-1}`` from the ranks' Gram matrices ``X_r^T X_r``."""
    z = np.eye(n) + c * sum(u.astype(np.float64) for u in ups)
    zinv = np.linalg.inv(z)
    return ((zinv + zinv.T) / 2).astype(dtype)


def _step(state, down, weights, kind: str, nxt: str | None, c_next: float, start: int):
    """One QDWH step on a rank's rows, then the state for the next one."""
    x, q, _ = state
    a, b, c = weights
    if kind == "qr":
        update = down if q is None else q @ down
        coef = (a - b / c) / math.sqrt(c)
    else:
        update = x @ down
        coef = a - b / c
    x = x * np.asarray(b / c, x.dtype) + update * np.asarray(coef, x.dtype)
    return _prepare(x, nxt, c_next, start)


def _split_point(traces: list, n: int, scale) -> int:
    """``k``, the number of eigenvalues above the shift (0 when the shifted matrix is zero)."""
    if scale[1] == 0:
        return 0
    return int(min(n, max(0, round((sum(traces) + n) / 2))))


def _basis_start(state, start: int, n: int, k: int, seed: int):
    """A rank's rows of ``[P G1 | (I - P) G2]``, ``P = (U + I) / 2``."""
    u = state[0]
    g = np.random.default_rng(seed).standard_normal((n, n)).astype(u.dtype)
    ug = u @ g
    rows = g[start : start + u.shape[0]]
    out = (rows + ug) * np.asarray(0.5, u.dtype)
    out[:, k:] = (rows[:, k:] - ug[:, k:]) * np.asarray(0.5, u.dtype)
    return out


def _basis_refine(state, pieces: list, start: int, k: int):
    """A rank's rows of ``[P V1 | (I - P) V2]`` for the basis ``V`` from its pieces."""
    u = state[0]
    v = np.concatenate(pieces)
    uv = u @ v
    rows = v[start : start + u.shape[0]]
    out = (rows + uv) * np.asarray(0.5, u.dtype)
    out[:, k:] = (rows[:, k:] - uv[:, k:]) * np.asarray(0.5, u.dtype)
    return out


def _merge_basis(parts: list):
    """The Q of the stacked rows, cut back into the ranks' rows."""
    q = _qr_q(np.concatenate(parts))
    edges = np.cumsum([0] + [p.shape[0] for p in parts])
    return [q[lo:hi] for lo, hi in itertools.pairwise(edges)]


def _project(block, pieces: list, mine):
    """A rank's part of ``V^T A V``: ``V_r^T (A_r V)``."""
    return mine.T @ (block @ np.concatenate(pieces))


def _halves(parts: list, k: int):
    b = sum(parts[1:], parts[0].copy())
    b = (b + b.T) * np.asarray(0.5, b.dtype)
    return np.ascontiguousarray(b[:k, :k]), np.ascontiguousarray(b[k:, k:])


def _leaf_eigh(matrix):
    matrix = np.concatenate(matrix) if isinstance(matrix, list) else matrix
    values, vectors = np.linalg.eigh((matrix + matrix.T) / 2)
    return values[::-1].copy(), np.ascontiguousarray(vectors[:, ::-1])


def _combine(v, k: int, w1, w2):
    """A rank's rows of ``V @ blockdiag(W1, W2)``."""
    w1 = np.concatenate(w1) if isinstance(w1, list) else w1
    w2 = np.concatenate(w2) if isinstance(w2, list) else w2
    return np.concatenate([v[:, :k] @ w1, v[:, k:] @ w2], axis=1)


def _values(first, second):
    return np.concatenate([first, second])


# ----------------------------------------------------------------- the graph builder
@dataclass
class _Node:
    """A subproblem: its order, the keys of its row blocks and their counts."""

    n: int
    rows: list  # per rank: the key of its row block (None for no rows)
    counts: list[int]
    merge_rank: int
    share: int  # ranks Heat would give it: in proportion to its order, at least one
    kind: str = "divide"  # "divide" or "leaf"
    u: dict = field(default_factory=dict)  # rank -> the key of its state after the last step
    k_key: tuple | None = None
    k: int = 0
    basis: list = field(default_factory=list)
    children: list = field(default_factory=list)
    values: tuple | None = None  # key of the eigenvalues (descending)
    vectors: object = None  # key of the whole matrix (leaf) or per-rank row keys


class _Builder:
    def __init__(self, comm, dtype, token: str):
        self.comm, self.dtype, self.token = comm, dtype, token
        self.size = comm.size
        self.new: dict = {}
        self.ranks: dict = {}
        self.held: dict = {}
        self._ids = itertools.count()

    def task(self, rank: int, fn, *args, label: str = "t", slice_: bool = False) -> tuple:
        key = (f"sdc-{label}-{self.token}", next(self._ids))
        self.new[key] = (SliceTask if slice_ else Task)(key, fn, *args)
        self.ranks[key] = rank
        return key

    def piece(self, rank: int, key, index, label: str) -> tuple:
        return self.task(rank, operator.getitem, TaskRef(key), index, label=label, slice_=True)

    def submit(self, hold: list, fetch: list):
        """Submit the new tasks; keep futures of ``hold``, return the values of ``fetch``."""
        keys = list(hold) + list(fetch)
        dsk = _compute.optimize({**self.held, **self.new}, keys)
        table = {k: self.comm.workers[r] for k, r in self.ranks.items() if k in dsk}
        token = f"dndask-sdc-{_compute.fresh_token()}"
        futures = _compute._submit(dsk, keys, self.comm.client, table, token)
        self.held = dict(zip(hold, futures[: len(hold)], strict=True))
        self.new, self.ranks = {}, {}
        return _compute.fetch(self.comm.client, futures[len(hold) :]) if fetch else []


def _qdwh_chain(b: _Builder, node: _Node, starts: list, scale_key, shifted: bool, n: int):
    """The QDWH steps on the node's rows; returns the per-rank keys of the last state."""
    eps = float(np.finfo(b.dtype).eps)
    weights = _weights(n, eps)
    kinds = ["qr" if c > QR_ABOVE else "chol" for _, _, c in weights] + [None]
    cs = [c for _, _, c in weights] + [0.0]
    states = {}
    for r, key in enumerate(node.rows):
        if key is None:
            continue
        states[r] = b.task(
            r,
            _start,
            TaskRef(key),
            starts[r],
            TaskRef(scale_key),
            kinds[0],
            cs[0],
            shifted,
            label="start",
        )
    m = node.merge_rank
    for i, w in enumerate(weights):
        ups = [b.piece(r, states[r], 2, "up") for r in sorted(states)]
        if kinds[i] == "qr":
            merge = b.task(m, _merge_qr, List(*map(TaskRef, ups)), n, b.dtype, label="mqr")
            downs = {r: b.piece(m, merge, j, "down") for j, r in enumerate(sorted(states))}
        else:
            merge = b.task(m, _merge_chol, List(*map(TaskRef, ups)), n, b.dtype, w[2], label="mch")
            downs = dict.fromkeys(states, merge)
        states = {
            r: b.task(
                r,
                _step,
                TaskRef(s),
                TaskRef(downs[r]),
                w,
                kinds[i],
                kinds[i + 1],
                cs[i + 1],
                starts[r],
                label="step",
            )
            for r, s in states.items()
        }
    return states


def _weights(n: int, eps: float):
    return qdwh_weights(1.0 / (1.0e16 * math.sqrt(n)), eps)


def _present(node: _Node) -> list[int]:
    """The ranks holding rows of the node, in order."""
    return [r for r, key in enumerate(node.rows) if key is not None]


def _probed(b: _Builder, node: _Node, check: bool, seed: int) -> tuple:
    """The key of ``(sigma, gap, scale)``: the shift and the symmetry probe's norms."""
    starts = _layout.displacements(node.counts)
    probes = [
        b.task(r, _probe, TaskRef(node.rows[r]), starts[r], node.n, seed, label="probe")
        for r in _present(node)
    ]
    return b.task(node.merge_rank, _shift, List(*map(TaskRef, probes)), check, label="shift")


def _begin(b: _Builder, node: _Node, check: bool, seed: int) -> tuple:
    """The graph of a node up to ``k``: shift, scale, QDWH; returns the shift's key."""
    n, m = node.n, node.merge_rank
    starts = _layout.displacements(node.counts)
    ranks = _present(node)
    shift = _probed(b, node, check, seed)
    sums = [
        b.task(r, _shifted_sumsq, TaskRef(node.rows[r]), starts[r], TaskRef(shift), label="ss")
        for r in ranks
    ]
    scale = b.task(m, _scale, List(*map(TaskRef, sums)), TaskRef(shift), label="scale")
    node.u = _qdwh_chain(b, node, starts, scale, True, n)
    traces = [b.piece(r, node.u[r], 2, "trace") for r in ranks]
    node.k_key = b.task(m, _split_point, List(*map(TaskRef, traces)), n, TaskRef(scale), label="k")
    return shift


def _leaf(b: _Builder, node: _Node, matrix) -> None:
    node.kind = "leaf"
    both = b.task(node.merge_rank, _leaf_eigh, matrix, label="leaf")
    node.values = b.piece(node.merge_rank, both, 0, "leafvalues")
    node.vectors = b.piece(node.merge_rank, both, 1, "leafvectors")


def _divide(b: _Builder, node: _Node, leaf: int, seed: int, next_rank) -> list[_Node]:
    """The graph of a node once ``k`` is known: the basis, ``V^T A V``, the children."""
    n, k, m = node.n, node.k, node.merge_rank
    starts = _layout.displacements(node.counts)
    ranks = _present(node)
    first = [
        b.task(r, _basis_start, TaskRef(node.u[r]), starts[r], n, k, seed, label="basis")
        for r in ranks
    ]
    merged = b.task(m, _merge_basis, List(*map(TaskRef, first)), label="mbasis")
    pieces = [b.piece(m, merged, j, "v") for j in range(len(ranks))]
    refined = [
        b.task(
            r,
            _basis_refine,
            TaskRef(node.u[r]),
            List(*map(TaskRef, pieces)),
            starts[r],
            k,
            label="refine",
        )
        for r in ranks
    ]
    merged = b.task(m, _merge_basis, List(*map(TaskRef, refined)), label="mrefine")
    node.basis = [b.piece(m, merged, j, "v2") for j in range(len(ranks))]
    basis = List(*map(TaskRef, node.basis))
    parts = [
        b.task(r, _project, TaskRef(node.rows[r]), basis, TaskRef(v), label="vtav")
        for r, v in zip(ranks, node.basis, strict=True)
    ]
    halves = b.task(m, _halves, List(*map(TaskRef, parts)), k, label="halves")
    pending = []
    first = max(1, min(node.share - 1, round(k / n * node.share)))
    for j, (size, share) in enumerate(((k, first), (n - k, node.share - first))):
        block = b.piece(m, halves, j, "half")
        child = _Node(size, [], _counts(size, b.size), next(next_rank) % b.size, share)
        node.children.append(child)
        if size <= leaf or share <= 1:
            _leaf(b, child, TaskRef(block))
            continue
        edges = _layout.displacements(child.counts)
        child.rows = [
            b.piece(m, block, slice(lo, lo + c), "rows") if c else None
            for lo, c in zip(edges, child.counts, strict=True)
        ]
        _begin(b, child, False, seed + 1 + len(pending))
        pending.append(child)
    return pending


def _assemble(b: _Builder, node: _Node) -> None:
    """The eigenvalues and the rows of the eigenvectors of a divided node, from its children."""
    if node.kind == "leaf":
        return
    for child in node.children:
        _assemble(b, child)
    ws = []
    for child in node.children:
        if child.kind == "leaf":
            ws.append(TaskRef(child.vectors))
        else:
            ws.append(List(*(TaskRef(child.vectors[r]) for r in _present(child))))
    node.vectors = {
        r: b.task(r, _combine, TaskRef(v), node.k, *ws, label="combine")
        for r, v in zip(_present(node), node.basis, strict=True)
    }
    first, second = (TaskRef(child.values) for child in node.children)
    node.values = b.task(node.merge_rank, _values, first, second, label="values")


def _kept(nodes: list[_Node], done: list[_Node]) -> list:
    """The keys later graphs use: the pending nodes' rows and states, every basis and leaf."""
    keys = []
    for node in nodes:
        keys += [key for key in node.rows if key is not None] + list(node.u.values())
    for node in done:
        keys += list(node.basis)
        if node.kind == "leaf":
            keys += [node.values, node.vectors]
    return keys


def eigh_rows(a: _dndarray.DNDarray, leaf: int, seed: int = 0):
    """Eigenvalues (descending, split 0) and eigenvectors (split 0, ``a``'s counts) of the
    symmetric ``a``, split 0 or 1, by spectral divide and conquer (see the module).

    Raises ValueError if the symmetry probe finds ``a`` not symmetric.
    """
    comm, n = a.comm, a.shape[0]
    arr = a.to_dask()
    counts = list(a.distribution.counts)
    b = _Builder(comm, a.dtype, _compute.fresh_token())
    b.held = dict(arr.__dask_graph__())  # ``a`` is persisted: its chunks' futures
    rows = []
    for r, c in enumerate(counts):
        chunk = _graph.chunk_key(arr, a.split, r)
        if not c:
            rows.append(None)
        elif a.split == 1:
            rows.append(b.task(r, _rows_of, TaskRef(chunk), True, label="rowsof"))
        else:
            rows.append(chunk)
    root = _Node(n, rows, counts, 0, comm.size)
    next_rank = itertools.count(1)
    done: list[_Node] = []
    pending = []
    if n <= leaf:
        (_, gap, scale), *_ = b.submit(_kept([root], done), [_probed(b, root, True, seed)])
        _raise_unless_symmetric(gap, scale, a.dtype, n)
        _leaf(b, root, List(*(TaskRef(k) for k in rows if k is not None)))
        probe = []
    else:
        probe = [_begin(b, root, True, seed)]
        pending = [root]
    while pending:  # one wait per level of the recursion
        ks = b.submit(_kept(pending, done), [node.k_key for node in pending] + probe)
        if probe:  # the first level: the symmetry probe's numbers come with k
            _, gap, scale = ks.pop()
            _raise_unless_symmetric(gap, scale, a.dtype, n)
            probe = []
        following = []
        for node, k in zip(pending, ks, strict=True):
            node.k = k
            if k in (0, node.n):  # the shift separates nothing: factor it whole
                _leaf(b, node, List(*(TaskRef(key) for key in node.rows if key is not None)))
            else:
                following += _divide(b, node, leaf, seed + 100 * len(done) + 1, next_rank)
            done.append(node)
            done += [child for child in node.children if child.kind == "leaf"]
        pending = following
    _assemble(b, root)
    return _outputs(b, root, a, counts, done)


def _raise_unless_symmetric(gap: float, scale: float, dtype, n: int) -> None:
    eps = float(np.finfo(dtype).eps)
    if gap > 100 * eps * math.sqrt(n) * max(scale, np.finfo(dtype).tiny):
        raise ValueError(
            f"`a` of `eigh` must be symmetric: |(a - a^T) g| / |a g| is {gap / scale:.3e} "
            "for a random probe g"
        )


def _cut(whole, lo: int, hi: int):
    return whole[lo:hi]


def _outputs(b: _Builder, root: _Node, a, counts: list[int], done: list[_Node]):
    n, comm = root.n, b.comm
    starts = _layout.displacements(counts)
    v_name, w_name = f"eigh-values-{b.token}", f"eigh-vectors-{b.token}"
    v_keys, w_keys = [], []
    for r, (lo, c) in enumerate(zip(starts, counts, strict=True)):
        v_key, w_key = (v_name, r), (w_name, r, 0)
        b.new[v_key] = Task(v_key, _cut, TaskRef(root.values), lo, lo + c)
        if root.kind == "leaf":
            b.new[w_key] = Task(w_key, _cut, TaskRef(root.vectors), lo, lo + c)
        elif c:
            b.new[w_key] = Task(w_key, np.asarray, TaskRef(root.vectors[r]))
        else:
            b.new[w_key] = Task(w_key, np.zeros, (0, n), a.dtype)
        b.ranks[v_key] = b.ranks[w_key] = r
        v_keys.append(v_key)
        w_keys.append(w_key)
    b.submit(v_keys + w_keys, [])
    ranks = {key: r for r, key in enumerate(v_keys)} | {key: r for r, key in enumerate(w_keys)}
    values = _wrap(
        v_name, {k: b.held[k] for k in v_keys}, [], (n,), 0, counts, a.dtype, comm, (a,), ranks
    )
    vectors = _wrap(
        w_name, {k: b.held[k] for k in w_keys}, [], (n, n), 0, counts, a.dtype, comm, (a,), ranks
    )
    return values, vectors
