"""Linear algebra against numpy: products over every split pair, norms, TSQR-based QR and SVD.

Inputs are made once per (data, split, ranks) and reused, so each case costs
one compute. Pure planning (split rules, plan choice, byte estimates) is
tested without the cluster.
"""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
import torch
from conftest import received_bytes, splits_of

import dndask as ht
from dndask._linalg import _build, _plan, _tsqr

RNG = np.random.default_rng(20261202)
_CACHE: dict = {}


def data(shape, dtype=np.float64, seed=0) -> np.ndarray:
    """Deterministic global data for ``shape``."""
    key = ("np", tuple(shape), np.dtype(dtype).str, seed)
    if key not in _CACHE:
        rng = np.random.default_rng(hash((tuple(shape), seed)) % 2**32)
        values = rng.standard_normal(shape)
        if np.dtype(dtype).kind == "c":
            values = values + 1j * rng.standard_normal(shape)
        _CACHE[key] = values.astype(dtype)
    return _CACHE[key]


def dnd(values: np.ndarray, split, comm) -> ht.DNDarray:
    """A DNDarray of ``values`` (cached: tests never change their inputs).

    The cache keeps ``values`` alive with its array: an ``id`` alone could be
    reused by a later array once the first one is freed.
    """
    key = ("dnd", id(values), split, comm.workers)
    cached = _CACHE.get(key)
    if cached is None or cached[0] is not values:
        cached = _CACHE[key] = (values, ht.array(values, split=split, comm=comm))
    return cached[1]


def tol(dtype) -> float:
    return 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


def check(result, expected, split, comm, rtol=1e-10) -> np.ndarray:
    """Split, comm and the chunk invariant of ``result``; values close to ``expected``."""
    assert isinstance(result, ht.DNDarray)
    assert result.shape == np.shape(expected)
    assert result.split == split
    assert result.comm == comm
    chunks = result.to_dask().chunks
    for axis, c in enumerate(chunks):
        assert len(c) == (comm.size if axis == split else 1)
    if split is not None:
        assert result.lshape_map[:, split].tolist() == list(chunks[split])
    values = result.numpy()
    assert values.dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(values, expected, rtol=rtol, atol=rtol)
    return values


def unbalanced(values: np.ndarray, split: int, counts, comm) -> ht.DNDarray:
    a = ht.array(values, split=split, comm=comm)
    target = a.lshape_map
    target[:, split] = torch.tensor(counts)
    return a.redistribute_(target_map=target)


def unchanged(x: ht.DNDarray, values: np.ndarray, split, lmap) -> None:
    assert x.split == split
    assert x.lshape_map.tolist() == lmap
    np.testing.assert_array_equal(x.numpy(), values)


# ======================================================== pure planning (no cluster)

# Heat 1.8's result splits for 2-D operands (tests/core/linalg/test_basics.py)
HEAT_2D = {
    (None, None): None,
    (0, None): 0,
    (0, 0): 0,
    (0, 1): 0,
    (1, None): 1,
    (1, 0): 1,
    (1, 1): 1,
    (None, 0): 0,
    (None, 1): 1,
}


@pytest.mark.parametrize(("a_split", "b_split"), list(HEAT_2D))
def test_matmul_split_follows_heat_for_matrices(a_split, b_split):
    spec = _plan.matmul_spec((5, 4), (4, 3))
    assert _plan.matmul_split(spec, a_split, b_split) == HEAT_2D[a_split, b_split]


def test_matmul_split_of_vectors_and_stacks():
    vec_mat = _plan.matmul_spec((4,), (4, 3))
    mat_vec = _plan.matmul_spec((5, 4), (4,))
    vec_vec = _plan.matmul_spec((4,), (4,))
    for a_split, b_split in itertools.product([None, 0], [None, 0, 1]):
        expected = None if a_split is None and b_split is None else 0
        assert _plan.matmul_split(vec_mat, a_split, b_split) == expected
    for a_split, b_split in itertools.product([None, 0, 1], [None, 0]):
        expected = None if a_split is None and b_split is None else 0
        assert _plan.matmul_split(mat_vec, a_split, b_split) == expected
    assert _plan.matmul_split(vec_vec, 0, 0) is None
    stack = _plan.matmul_spec((2, 5, 4), (4, 3))
    assert [_plan.matmul_split(stack, s, None) for s in (0, 1, 2)] == [0, 1, 2]
    assert _plan.matmul_split(stack, None, 0) == 1  # b's rows are the result's rows
    bcast = _plan.matmul_spec((2, 5, 4), (1, 4, 3))
    assert bcast.b_labels[0] == "b-bcast0" and bcast.a_labels[0] == "batch0"
    with pytest.raises(ValueError, match="inner dimensions differ: 4 != 5"):
        _plan.matmul_spec((3, 4), (5, 2))


def test_planner_prefers_the_plan_moving_fewer_bytes():
    # a split 1, b split 0 with the same counts and a small result: partial products
    spec = _plan.matmul_spec((4, 600), (600, 4))
    a, b = _plan.Layout((4, 600), 1, (300, 300), 8), _plan.Layout((600, 4), 0, (300, 300), 8)
    inner = _plan.plan_product(spec, a, b, "n", 2, 8)
    assert inner.kind == "inner" and inner.contributors == (0, 1)
    assert inner.split == 1 and inner.counts == (2, 2)
    assert inner.a == _plan.Need(1, (300, 300)) and inner.b == _plan.Need(0, (300, 300))
    assert inner.moved == 2 * 4 * 2 * 8  # each rank sends the other rank's half of its partial
    # a large result: every rank fetching a's other columns is cheaper
    spec = _plan.matmul_spec((40, 6), (6, 40))
    a, b = _plan.Layout((40, 6), 1, (3, 3), 8), _plan.Layout((6, 40), 0, (3, 3), 8)
    outer = _plan.plan_product(spec, a, b, "n", 2, 8)
    assert outer.kind == "outer" and outer.split == 1 and outer.a == _plan.Need(None, ())
    assert outer.moved == 2 * 960 + 960  # half of a to each rank, b resplit keeps half
    # rows of a times b: b travels once to every other active rank
    spec = _plan.matmul_spec((9, 4), (4, 3))
    a, b = _plan.Layout((9, 4), 0, (3, 3, 3), 8), _plan.Layout((4, 3), None, (), 8)
    plan = _plan.plan_product(spec, a, b, "m", 3, 8)
    assert plan.kind == "outer" and plan.a == _plan.Need(0, (3, 3, 3))
    assert plan.b == _plan.Need(None, ()) and plan.moved == 2 * 4 * 3 * 8
    # ranks with no result rows fetch nothing
    a = _plan.Layout((9, 4), 0, (9, 0, 0), 8)
    assert _plan.plan_product(spec, a, b, "m", 3, 8).moved == 0
    # None x split 0: a's rows scattered and b allgathered, or partial products: the cheaper
    spec = _plan.matmul_spec((2, 30), (30, 50))
    a, b = _plan.Layout((2, 30), None, (), 8), _plan.Layout((30, 50), 0, (10, 10, 10), 8)
    plan = _plan.plan_product(spec, a, b, "m", 3, 8)
    assert plan.kind == "inner" and plan.split == 0 and plan.counts == (1, 1, 0)


def test_costs_and_other_split_rules():
    lay = _plan.Layout((6, 2), 0, (2, 2, 2), 4)
    assert _plan.whole_cost(lay, (0, 1, 2)) == 2 * 48
    assert _plan.block_cost(lay, 0, (2, 2, 2)) == 0
    assert _plan.block_cost(lay, 0, (0, 3, 3)) == 3 * 8  # rows 0, 1 and 3 change rank
    assert _plan.block_cost(lay, 0, (6, 0, 0)) == 4 * 8
    assert _plan.block_cost(lay, 1, (1, 1, 0)) == 48 - 16  # blocks (0, 0), (1, 1) stay
    assert _plan.block_cost(_plan.Layout((6, 2), None, (), 4), 0, (6, 0, 0)) == 0
    spec = _plan.tensordot_spec((6, 2), (6, 3), [0], [0])
    assert spec.out_labels == ("a1", "b1")
    assert _plan.tensordot_split(spec, 0, 0) == 0
    assert _plan.tensordot_split(spec, 0, 1) == 1
    assert _plan.tensordot_split(spec, 1, 0) == 0
    assert _plan.tensordot_split(spec, None, None) is None
    assert _plan.tensordot_split(_plan.tensordot_spec((4,), (4,), [0], [0]), 0, 0) is None
    vspec = _plan.vecdot_spec((5, 3), (3,), -1)
    assert vspec.out_labels == ("d0",) and vspec.b_labels == ("d1",)
    assert _plan._first_split_heir(vspec, 1, None) is None  # Heat: a sum over split


def test_positive_diagonal_keeps_the_product():
    a = data((5, 3))
    q, r = np.linalg.qr(a)
    q2, r2 = _tsqr._positive_diagonal(q, r)
    np.testing.assert_allclose(q2 @ r2, a, atol=1e-12)
    assert (np.diag(r2) >= 0).all()
    c = data((4, 3), np.complex128)
    q, r = np.linalg.qr(c)
    q2, r2 = _tsqr._positive_diagonal(q, r)
    np.testing.assert_allclose(q2 @ r2, c, atol=1e-12)
    np.testing.assert_allclose(np.diag(r2).imag, 0, atol=1e-12)


# ======================================================== matmul


@pytest.mark.parametrize("n", [1, 2, 3, 5])
@pytest.mark.parametrize(("a_split", "b_split"), list(HEAT_2D))
def test_matmul_every_split_pair(comm_of, n, a_split, b_split):
    comm = comm_of(n)
    A, B = data((7, 5)), data((5, 4))
    c = dnd(A, a_split, comm) @ dnd(B, b_split, comm)
    check(c, A @ B, HEAT_2D[a_split, b_split], comm)


@pytest.mark.parametrize(("a_split", "b_split"), list(HEAT_2D))
def test_matmul_float32_and_empty_ranks(comm_of, a_split, b_split):
    comm = comm_of(5)  # 3 rows and 2 columns on 5 ranks: several empty ranks
    A, B = data((3, 4), np.float32), data((4, 2), np.float32)
    c = ht.matmul(dnd(A, a_split, comm), dnd(B, b_split, comm))
    check(c, A @ B, HEAT_2D[a_split, b_split], comm, rtol=1e-5)


VECTOR_CASES = [
    ((5,), (5, 4)),
    ((7, 5), (5,)),
    ((5,), (5,)),
]


@pytest.mark.parametrize("n", [2, 5])
@pytest.mark.parametrize(("a_shape", "b_shape"), VECTOR_CASES)
def test_matmul_with_vectors(comm_of, n, a_shape, b_shape):
    comm = comm_of(n)
    A, B = data(a_shape), data(b_shape)
    expected = A @ B
    for a_split, b_split in itertools.product(splits_of(A.ndim), splits_of(B.ndim)):
        c = ht.matmul(dnd(A, a_split, comm), dnd(B, b_split, comm))
        unsplit = a_split is None and b_split is None
        split = None if unsplit or np.ndim(expected) == 0 else 0
        check(c, expected, split, comm)


def test_matmul_keeps_an_unbalanced_layout_with_empty_ranks(comm_of):
    comm = comm_of(4)
    A, B = data((8, 5)), data((5, 3))
    a = unbalanced(A, 0, (0, 5, 0, 3), comm)
    c = a @ dnd(B, 1, comm)
    check(c, A @ B, 0, comm)
    assert c.lshape_map[:, 0].tolist() == [0, 5, 0, 3]
    # contraction split on both sides with different counts: b is lined up with a
    a1 = unbalanced(A.T.copy(), 1, (0, 6, 2, 0), comm)  # (5, 8) split 1
    b0 = unbalanced(data((8, 3)), 0, (3, 0, 0, 5), comm)
    check(a1 @ b0, A.T @ data((8, 3)), 1, comm)
    b_none = dnd(data((8, 3)), None, comm)
    check(a1 @ b_none, A.T @ data((8, 3)), 1, comm)
    check(dnd(data((2, 8)), None, comm) @ b0, data((2, 8)) @ data((8, 3)), 0, comm)


STACKS = [
    ((3, 4, 5), (5, 2)),
    ((3, 4, 5), (1, 5, 2)),
    ((2, 1, 4, 5), (3, 5, 2)),
    ((5,), (3, 5, 2)),
    ((3, 4, 5), (5,)),
]


@pytest.mark.parametrize(("a_shape", "b_shape"), STACKS)
def test_stacked_matmul_broadcasts_batches(comm_of, a_shape, b_shape):
    comm = comm_of(3)
    A, B = data(a_shape), data(b_shape)
    expected = np.matmul(A, B)
    spec = _plan.matmul_spec(A.shape, B.shape)
    for a_split, b_split in itertools.product(splits_of(A.ndim), splits_of(B.ndim)):
        c = ht.matmul(dnd(A, a_split, comm), dnd(B, b_split, comm))
        check(c, expected, _plan.matmul_split(spec, a_split, b_split), comm)


def test_matmul_converts_numpy_and_torch_operands(comm_of):
    comm = comm_of(3)
    A, B = data((6, 3)), data((3, 2))
    check(ht.matmul(A, dnd(B, 1, comm)), A @ B, 1, comm)
    check(ht.matmul(dnd(A, 0, comm), torch.from_numpy(B)), A @ B, 0, comm)
    check(A @ dnd(B, 0, comm), A @ B, 0, comm)  # numpy's operator routes to dndask
    check(dnd(B, 1, comm).__rmatmul__(A), A @ B, 1, comm)
    S = data((4, 4))
    square = dnd(S, 1, comm)
    check(square @ square, S @ S, 1, comm)
    ints = np.arange(6).reshape(3, 2)
    check(ht.matmul(dnd(ints, 0, comm), ints.T.copy()), ints @ ints.T, 0, comm)
    bools = np.array([[True, False], [False, False], [True, True]])
    check(ht.matmul(dnd(bools, 1, comm), bools.T.copy()), bools @ bools.T, 1, comm)


def test_matmul_bad_input_names_the_operands(comm_of):
    comm = comm_of(3)
    A, B = data((4, 3)), data((4, 2))
    a, b = dnd(A, 0, comm), dnd(B, 1, comm)
    with pytest.raises(ValueError, match=r"`a` has shape \(4, 3\) \(split 0\), `b` has shape "):
        ht.matmul(a, b)
    with pytest.raises(ValueError, match="split 1"):
        a @ b
    with pytest.raises(ValueError, match="`matmul` needs operands of at least one dimension"):
        ht.matmul(a, ht.array(2.0, comm=comm))
    with pytest.raises(ValueError, match="must share a comm"):
        ht.matmul(a, dnd(B.T.copy(), 0, comm_of(2)))
    with pytest.raises(TypeError, match="`b` must have a boolean or numeric dtype, got <U1"):
        ht.matmul(a, np.array([["x"], ["y"], ["z"]]))
    with pytest.raises(TypeError, match="`b` must be a DNDarray, numpy array or torch tensor"):
        ht.matmul(a, [[1.0], [2.0], [3.0]])
    with pytest.raises(TypeError, match="at least one DNDarray"):
        ht.matmul(A, B.T)
    with pytest.raises(ValueError, match="do not fit"):
        ht.matmul(dnd(data((2, 4, 3)), 0, comm), dnd(data((3, 3, 2)), 0, comm))
    unchanged(a, A, 0, [[2, 3], [1, 3], [1, 3]])
    unchanged(b, B, 1, [[4, 1], [4, 1], [4, 0]])


# ======================================================== data movement


def test_rows_times_whole_moves_b_once_to_every_other_rank(client, comm_of):
    comm = comm_of(4)
    A, B = data((40, 30)), data((30, 20))
    a, b = dnd(A, 0, comm), dnd(B, None, comm)
    since = time.time()
    c = (a @ b).persist(wait=True)
    assert received_bytes(client, since) == 3 * B.nbytes
    np.testing.assert_allclose(c.numpy(), A @ B, rtol=1e-10)


def test_contraction_split_sends_only_result_blocks(client, comm_of):
    comm = comm_of(4)
    A, B = data((12, 400)), data((400, 8))
    a, b = dnd(A, 1, comm), dnd(B, 0, comm)
    plan = _plan.plan_product(
        _plan.matmul_spec(A.shape, B.shape),
        _build._layout_of(a),
        _build._layout_of(b),
        "n",
        4,
        8,
    )
    assert plan.kind == "inner"
    since = time.time()
    c = (a @ b).persist(wait=True)
    moved = received_bytes(client, since)
    assert moved == plan.moved == 4 * 3 * (12 * 2 * 8)  # each rank sends 3 blocks of 12 x 2
    assert moved < (A.nbytes + B.nbytes) / 10
    check(c, A @ B, 1, comm)


def test_tsqr_moves_only_small_factors(client, comm_of):
    comm = comm_of(4)
    A = data((400, 6))
    a = dnd(A, 0, comm)
    since = time.time()
    q, r = ht.linalg.qr(a)
    q = q.persist(wait=True)
    moved = received_bytes(client, since)
    # three R factors (6 x 6) to rank 0, three 6 x 6 blocks back
    assert moved == 2 * 3 * 6 * 6 * 8
    Q = check(q, q.numpy(), 0, comm)
    np.testing.assert_allclose(Q @ r.numpy(), A, atol=1e-10)


# ======================================================== dot, tensordot, vecdot, outer


def test_dot_follows_numpy(comm_of):
    comm = comm_of(3)
    v = data((6,))
    check(ht.dot(dnd(v, 0, comm), dnd(v, None, comm)), np.dot(v, v), None, comm)
    check(ht.dot(dnd(v, 0, comm), 2.0), v * 2.0, 0, comm)
    check(ht.dot(3, dnd(v, 0, comm)), 3 * v, 0, comm)
    A, B = data((2, 3, 4)), data((5, 4, 2))
    check(ht.dot(dnd(A, 1, comm), dnd(B, 0, comm)), np.dot(A, B), 1, comm)
    M = data((6, 4))
    check(ht.dot(dnd(M, 1, comm), dnd(data((4,)), 0, comm)), M @ data((4,)), 0, comm)
    with pytest.raises(TypeError, match="at least one DNDarray"):
        ht.dot(2.0, 3.0)


@pytest.mark.parametrize("n", [1, 3])
def test_tensordot_every_split_pair(comm_of, n):
    comm = comm_of(n)
    A, B = data((4, 3, 5)), data((5, 3, 2))
    axes = ([1, 2], [1, 0])
    expected = np.tensordot(A, B, axes=axes)
    spec = _plan.tensordot_spec(A.shape, B.shape, *axes)
    for a_split, b_split in itertools.product(splits_of(3), splits_of(3)):
        c = ht.tensordot(dnd(A, a_split, comm), dnd(B, b_split, comm), axes=axes)
        check(c, expected, _plan.tensordot_split(spec, a_split, b_split), comm)


def test_tensordot_axes_forms_and_errors(comm_of):
    comm = comm_of(3)
    A, B = data((4, 3, 5)), data((3, 5, 2))
    a, b = dnd(A, 1, comm), dnd(B, 0, comm)
    check(ht.tensordot(a, b), np.tensordot(A, B), 0, comm)
    check(ht.tensordot(a, b, axes=(-1, 1)), np.tensordot(A, B, axes=(-1, 1)), 1, comm)
    C = data((4, 2))
    check(ht.tensordot(dnd(C, 0, comm), dnd(C, 1, comm), 0), np.tensordot(C, C, 0), 0, comm)
    with pytest.raises(ValueError, match="lengths 4 and 3 differ"):
        ht.tensordot(a, b, axes=([0], [0]))
    with pytest.raises(ValueError, match=r"`axes` must be in \[0, 3\]"):
        ht.tensordot(a, b, axes=4)
    with pytest.raises(TypeError, match="`axes` must be an int or a pair"):
        ht.tensordot(a, b, axes="x")
    with pytest.raises(ValueError, match="as many axes"):
        ht.tensordot(a, b, axes=([1, 2], [0]))
    unchanged(a, A, 1, [[4, 1, 5]] * 3)


def test_vecdot_broadcasts_and_follows_heats_split(comm_of):
    comm = comm_of(3)
    A, v = data((5, 3)), data((3,))
    for a_split, b_split in itertools.product(splits_of(2), splits_of(1)):
        c = ht.vecdot(dnd(A, a_split, comm), dnd(v, b_split, comm))
        split = 0 if a_split == 0 else None  # a split 1 or b split: a sum over the split
        check(c, np.vecdot(A, v), split, comm)
    check(ht.vecdot(dnd(A, 0, comm), dnd(A, 1, comm), axis=0), np.vecdot(A, A, axis=0), None, comm)
    check(ht.vecdot(dnd(A, 1, comm), dnd(A, 0, comm), axis=0), np.vecdot(A, A, axis=0), 0, comm)
    Z = data((4, 3), np.complex128)
    check(ht.vecdot(dnd(Z, 0, comm), dnd(Z, 0, comm)), np.vecdot(Z, Z), 0, comm)
    with pytest.raises(ValueError, match="same length along `axis`"):
        ht.vecdot(dnd(A, 0, comm), dnd(data((5, 1)), 0, comm))
    with pytest.raises(ValueError, match="must be an axis of both operands"):
        ht.vecdot(dnd(A, 0, comm), dnd(v, 0, comm), axis=0)
    with pytest.raises(TypeError, match="`axis` must be an int"):
        ht.vecdot(dnd(A, 0, comm), dnd(v, 0, comm), axis=1.0)
    with pytest.raises(ValueError, match="do not broadcast"):
        ht.vecdot(dnd(A, 0, comm), dnd(data((2,)), 0, comm))


def test_outer_split_rule_and_flattening(comm_of):
    comm = comm_of(3)
    a, b = data((5,)), data((2, 3))
    expected = np.outer(a, b)
    for a_split, b_split in itertools.product(splits_of(1), splits_of(2)):
        default = None if a_split is None and b_split is None else 0
        for split in (None, 0, 1):
            c = ht.outer(dnd(a, a_split, comm), dnd(b, b_split, comm), split=split)
            check(c, expected, default if split is None else split, comm)
    with pytest.raises(ValueError, match="`split` must be None, 0 or 1, got 2"):
        ht.outer(dnd(a, 0, comm), dnd(a, 0, comm), split=2)
    with pytest.raises(TypeError, match="`split` must be None, 0 or 1"):
        ht.outer(dnd(a, 0, comm), dnd(a, 0, comm), split="0")


# ======================================================== norms

VECTOR_ORDS = [None, 2, 1, 0, 3, 0.5, -1, np.inf, -np.inf]
MATRIX_ORDS = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


@pytest.mark.parametrize("split", splits_of(2))
def test_norm_matches_numpy_for_every_ord(comm_of, split):
    comm = comm_of(3)
    X = data((6, 4))
    x = dnd(X, split, comm)
    for ord in MATRIX_ORDS:
        check(ht.linalg.norm(x, ord=ord), np.linalg.norm(X, ord=ord), None, comm)
    for ord, axis in itertools.product(VECTOR_ORDS, (0, 1)):
        expected = np.linalg.norm(X, ord=ord, axis=axis)
        out_split = None if split in (None, axis) else 0
        check(ht.linalg.norm(x, ord=ord, axis=axis), expected, out_split, comm)
    check(ht.linalg.norm(x, keepdims=True), np.linalg.norm(X, keepdims=True), None, comm)
    check(
        ht.linalg.norm(x, ord=1, axis=(1, 0), keepdims=True),
        np.linalg.norm(X, ord=1, axis=(1, 0), keepdims=True),
        None,
        comm,
    )
    check(
        ht.linalg.norm(x, ord="nuc", keepdims=True),
        np.linalg.norm(X, ord="nuc", keepdims=True),
        None,
        comm,
    )


def test_vector_and_matrix_norm_follow_the_array_api(comm_of):
    comm = comm_of(5)
    T = data((4, 3, 2), np.float32)
    for split in splits_of(3):
        t = dnd(T, split, comm)
        for ord in (2, 1, np.inf, 0):
            expected = np.linalg.vector_norm(T, ord=ord, axis=(0, 2))
            out = None if split in (None, 0, 2) else 0
            check(ht.linalg.vector_norm(t, ord=ord, axis=(0, 2)), expected, out, comm, 1e-5)
        for ord in ("fro", 1, np.inf, "nuc" if split == 0 else -1):
            expected = np.linalg.matrix_norm(T, ord=ord)
            out = 0 if split == 0 else None
            check(ht.linalg.matrix_norm(t, ord=ord), expected, out, comm, 1e-5)
    check(ht.linalg.vector_norm(dnd(T, 0, comm)), np.linalg.vector_norm(T), None, comm, 1e-5)
    ints = np.arange(-3, 5)
    check(ht.linalg.norm(dnd(ints, 0, comm)), np.linalg.norm(ints), None, comm)
    Z = data((5, 2), np.complex128)
    check(ht.linalg.norm(dnd(Z, 0, comm)), np.linalg.norm(Z), None, comm)
    check(ht.linalg.norm(dnd(Z, 0, comm), ord=1, axis=1), np.linalg.norm(Z, 1, 1), 0, comm)


def test_norm_on_uneven_layout_with_empty_ranks(comm_of):
    comm = comm_of(4)
    X = data((6, 3))
    x = unbalanced(X, 0, (0, 4, 0, 2), comm)
    for ord in (None, 1, np.inf, "nuc", 2):
        check(ht.linalg.norm(x, ord=ord), np.linalg.norm(X, ord=ord), None, comm)
    check(ht.linalg.norm(x, axis=1), np.linalg.norm(X, axis=1), 0, comm)


def test_norm_bad_input(comm_of):
    comm = comm_of(3)
    X = data((6, 4))
    x = dnd(X, 0, comm)
    with pytest.raises(ValueError, match="`ord` must be one of 'fro', 'nuc'"):
        ht.linalg.norm(x, ord=3)
    with pytest.raises(ValueError, match="`ord` 'fro' is a matrix norm"):
        ht.linalg.norm(x, ord="fro", axis=0)
    with pytest.raises(TypeError, match="`ord` must be a real number"):
        ht.linalg.vector_norm(x, ord=[2])
    with pytest.raises(ValueError, match="needs a 1-D or 2-D `x`"):
        ht.linalg.norm(dnd(data((2, 2, 2)), 0, comm), ord=1)
    with pytest.raises(TypeError, match="`axis` must be a pair of ints"):
        ht.linalg.matrix_norm(x, axis=0)
    with pytest.raises(ValueError, match="two different axes"):
        ht.linalg.matrix_norm(x, axis=(0, -2))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        ht.linalg.matrix_norm(dnd(data((4,)), 0, comm))
    with pytest.raises(TypeError, match="`keepdims` must be a bool"):
        ht.linalg.norm(x, keepdims=1)
    with pytest.raises(TypeError, match="`x` must be a DNDarray"):
        ht.linalg.norm(X)
    unchanged(x, X, 0, [[2, 4], [2, 4], [2, 4]])


# ======================================================== QR


def check_qr(q, r, A, comm, rtol):  # noqa: N803 (the matrix)
    k = min(A.shape)
    Q = check(q, q.numpy(), 0 if q.split == 0 else None, comm, rtol)
    R = r.numpy()
    assert r.split is None and R.shape == (k, A.shape[1])
    np.testing.assert_allclose(Q @ R, A, atol=rtol * 10)
    np.testing.assert_allclose(Q.conj().T @ Q, np.eye(k), atol=rtol * 10)
    np.testing.assert_array_equal(np.tril(R, -1), 0)
    assert (np.diag(R).real >= 0).all()
    return Q, R


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(("shape", "n"), [((9, 3), 3), ((12, 5), 5), ((3, 3), 5), ((9, 3), 1)])
@pytest.mark.parametrize("split", splits_of(2))
def test_qr_tall_skinny(comm_of, dtype, shape, n, split):
    comm = comm_of(n)  # (12, 5) and (3, 3) on 5 ranks: ranks with fewer rows than columns
    A = data(shape, dtype)
    q, r = ht.linalg.qr(dnd(A, split, comm))
    assert q.split == (None if split is None else 0)
    if split == 0:
        assert q.lshape_map[:, 0].tolist() == dnd(A, split, comm).lshape_map[:, 0].tolist()
    Q, R = check_qr(q, r, A, comm, tol(dtype))
    assert Q.dtype == dtype and R.dtype == dtype
    qr_r = ht.linalg.qr(dnd(A, split, comm), mode="r")
    assert qr_r.Q is None
    np.testing.assert_allclose(qr_r.R.numpy(), R, atol=tol(dtype) * 10)


def test_qr_with_empty_ranks_and_other_dtypes(comm_of):
    comm = comm_of(5)
    A = data((10, 4))
    a = unbalanced(A, 0, (0, 6, 0, 0, 4), comm)
    q, r = ht.linalg.qr(a)
    assert q.lshape_map[:, 0].tolist() == [0, 6, 0, 0, 4]
    check_qr(q, r, A, comm, 1e-10)
    Z = data((8, 3), np.complex128)
    check_qr(*ht.linalg.qr(dnd(Z, 0, comm)), Z, comm, 1e-10)
    ints = np.arange(24).reshape(8, 3) % 5
    check_qr(*ht.linalg.qr(dnd(ints, 0, comm)), ints.astype(np.float64), comm, 1e-10)
    # all results agree with numpy's after its signs are fixed the same way
    q0, r0 = _tsqr._positive_diagonal(*np.linalg.qr(A))
    np.testing.assert_allclose(r.numpy(), r0, atol=1e-10)
    np.testing.assert_allclose(q.numpy(), q0, atol=1e-10)


def test_qr_of_stacks_and_complete_mode_are_local(comm_of):
    comm = comm_of(3)
    S = data((4, 5, 3))
    for split, c in ((None, comm), (0, comm), (0, comm_of(5))):  # 4 matrices on 5 ranks
        q, r = ht.linalg.qr(dnd(S, split, c))
        assert q.split == split and r.split == split
        np.testing.assert_allclose(q.numpy() @ r.numpy(), S, atol=1e-10)
    A = data((5, 3))
    q, r = ht.linalg.qr(dnd(A, None, comm), mode="complete")
    assert q.shape == (5, 5) and r.shape == (5, 3)
    np.testing.assert_allclose(q.numpy() @ r.numpy(), A, atol=1e-10)
    W = data((3, 6))
    q, r = ht.linalg.qr(dnd(W, None, comm))
    np.testing.assert_allclose(q.numpy() @ r.numpy(), W, atol=1e-10)


def test_qr_bad_input(comm_of):
    comm = comm_of(3)
    W, A = data((3, 6)), data((6, 3))
    w, a = dnd(W, 0, comm), dnd(A, 1, comm)
    with pytest.raises(NotImplementedError, match="mode='complete'"):
        ht.linalg.qr(w, mode="complete")
    with pytest.raises(NotImplementedError, match="mode='complete'"):
        ht.linalg.qr(a, mode="complete")
    with pytest.raises(NotImplementedError, match="mode='raw'"):
        ht.linalg.qr(a, mode="raw")
    with pytest.raises(ValueError, match="`mode` must be 'reduced', 'r' or 'complete', got 'x'"):
        ht.linalg.qr(a, mode="x")
    with pytest.raises(TypeError, match="`mode` must be a str"):
        ht.linalg.qr(a, mode=1)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        ht.linalg.qr(dnd(data((4,)), 0, comm))
    with pytest.raises(TypeError, match="`procs_to_merge` must be an int, got float"):
        ht.linalg.qr(a, procs_to_merge=2.0)
    with pytest.raises(
        ValueError, match=r"`procs_to_merge` must be 0 \(all at once\) or >= 2, got -1"
    ):
        ht.linalg.qr(a, procs_to_merge=-1)
    with pytest.raises(TypeError, match="float16"):
        ht.linalg.qr(dnd(A.astype(np.float16), 0, comm))
    with pytest.raises(TypeError, match="`a` must be a DNDarray"):
        ht.linalg.qr(A)
    unchanged(w, W, 0, [[1, 6]] * 3)
    unchanged(a, A, 1, [[6, 1]] * 3)


def abs_close(got, expected, rtol):
    """Equal up to the signs (phases) LAPACK leaves free: compare magnitudes."""
    np.testing.assert_allclose(np.abs(got), np.abs(expected), atol=rtol * 10)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize(("shape", "n"), [((4, 9), 3), ((3, 11), 5), ((5, 6), 2), ((2, 7), 1)])
@pytest.mark.parametrize("split", [0, 1])
def test_qr_of_wide_matrices_split_along_either_axis(comm_of, dtype, shape, n, split):
    comm = comm_of(n)  # (3, 11) on 5 ranks: ranks without rows (split 0)
    A = data(shape, dtype)
    a = dnd(A, split, comm)
    q, r = ht.linalg.qr(a)
    m = shape[0]
    assert q.shape == (m, m) and r.shape == shape
    assert q.split == 0 and r.split == split
    Q, R = q.numpy(), r.numpy()
    np.testing.assert_allclose(Q @ R, A, atol=tol(dtype) * 10)
    np.testing.assert_allclose(Q.conj().T @ Q, np.eye(m), atol=tol(dtype) * 10)
    np.testing.assert_allclose(np.tril(R, -1), 0, atol=tol(dtype) * 10)
    assert (np.diag(R).real >= 0).all()
    abs_close(R, np.linalg.qr(A, mode="r"), tol(dtype))
    r_only = ht.linalg.qr(a, mode="r", procs_to_merge=2)
    assert r_only.Q is None
    np.testing.assert_allclose(r_only.R.numpy(), R, atol=tol(dtype) * 10)
    unchanged(a, A, split, a.lshape_map.tolist())


STACK_CASES = [
    # shape, split (a matrix axis), ranks
    ((3, 10, 4), 1, 3),
    ((3, 10, 4), 2, 4),
    ((2, 3, 9, 5), 2, 5),
    ((2, 3, 9, 5), 3, 2),
    ((4, 3, 8), 1, 3),  # wide matrices, rows split
    ((4, 3, 8), 2, 5),  # wide matrices, columns split
]


@pytest.mark.parametrize(("shape", "split", "n"), STACK_CASES)
def test_qr_and_svd_of_stacks_split_along_a_matrix_axis(comm_of, shape, split, n):
    comm = comm_of(n)
    A = data(shape)
    a = dnd(A, split, comm)
    m, k = shape[-2], min(shape[-2:])
    q, r = ht.linalg.qr(a)
    assert q.shape == (*shape[:-2], m, k) and r.shape == (*shape[:-2], k, shape[-1])
    Q, R = q.numpy(), r.numpy()
    np.testing.assert_allclose(Q @ R, A, atol=1e-10)
    np.testing.assert_allclose(
        np.swapaxes(Q, -1, -2) @ Q, np.broadcast_to(np.eye(k), (*shape[:-2], k, k)), atol=1e-10
    )
    abs_close(R, np.linalg.qr(A, mode="r"), 1e-10)
    u, s, vh = ht.linalg.svd(a)
    S = check(s, np.linalg.svd(A, compute_uv=False), None, comm, 1e-9)
    np.testing.assert_allclose((u.numpy() * S[..., None, :]) @ vh.numpy(), A, atol=1e-10)
    check(ht.linalg.svd(a, compute_uv=False), S, None, comm, 1e-9)
    check(
        ht.linalg.matrix_norm(a, ord=2), np.linalg.norm(A, ord=2, axis=(-2, -1)), None, comm, 1e-9
    )
    unchanged(a, A, split, a.lshape_map.tolist())


@pytest.mark.parametrize("procs_to_merge", [2, 3, 4])
def test_tsqr_tree_merge_gives_the_same_factors(comm_of, procs_to_merge):
    comm = comm_of(5)
    A = data((23, 4))
    a = unbalanced(A, 0, (5, 0, 7, 3, 8), comm)  # an empty rank inside a group
    q0, r0 = ht.linalg.qr(a)
    q, r = ht.linalg.qr(a, procs_to_merge=procs_to_merge)
    assert q.lshape_map[:, 0].tolist() == [5, 0, 7, 3, 8]
    np.testing.assert_allclose(q.numpy(), q0.numpy(), atol=1e-10)
    np.testing.assert_allclose(r.numpy(), r0.numpy(), atol=1e-10)
    u, s, vh = ht.linalg.svd(a, procs_to_merge=procs_to_merge)
    check_svd((u, s, vh), A, comm, 1e-10, (0, None, None))
    # one merge per group and level: 4 contributors in groups of p
    nodes, merges = 4, 0
    while True:
        groups = -(-nodes // procs_to_merge)
        merges += groups
        if groups == 1:
            break
        nodes = groups
    graph = q.to_dask().__dask_graph__()
    merge_keys = [k for k in graph if isinstance(k, tuple) and str(k[0]).endswith("-merge")]
    assert len(merge_keys) == merges


# ======================================================== SVD


def check_svd(result, A, comm, rtol, splits):  # noqa: N803 (the matrix)
    u, s, vh = result
    assert (u.split, s.split, vh.split) == splits
    U = check(u, u.numpy(), u.split, comm, rtol)
    S = check(s, np.linalg.svd(A, compute_uv=False), None, comm, rtol * 10)
    VH = check(vh, vh.numpy(), vh.split, comm, rtol)
    k = min(A.shape)
    assert U.shape == (A.shape[0], k) and VH.shape == (k, A.shape[1])
    np.testing.assert_allclose((U * S) @ VH, A, atol=rtol * 10)
    np.testing.assert_allclose(U.conj().T @ U, np.eye(k), atol=rtol * 10)
    np.testing.assert_allclose(VH @ VH.conj().T, np.eye(k), atol=rtol * 10)


SVD_CASES = [
    # shape, split, ranks, (U, S, Vh) splits
    ((9, 3), None, 3, (None, None, None)),
    ((9, 3), 0, 3, (0, None, None)),
    ((9, 3), 1, 3, (0, None, None)),
    ((12, 5), 0, 5, (0, None, None)),
    ((3, 8), 1, 4, (None, None, 1)),
    ((3, 8), 0, 2, (None, None, 1)),
    ((4, 4), 0, 5, (0, None, None)),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(("shape", "split", "n", "splits"), SVD_CASES)
def test_svd_reconstructs_and_matches_numpys_singular_values(
    comm_of, dtype, shape, split, n, splits
):
    comm = comm_of(n)
    A = data(shape, dtype)
    check_svd(ht.linalg.svd(dnd(A, split, comm)), A, comm, tol(dtype), splits)
    s = ht.linalg.svd(dnd(A, split, comm), compute_uv=False)
    check(s, np.linalg.svd(A, compute_uv=False), None, comm, tol(dtype) * 10)


def test_svd_empty_ranks_complex_stacks_and_full_matrices(comm_of):
    comm = comm_of(4)
    A = data((10, 3))
    check_svd(ht.linalg.svd(unbalanced(A, 0, (0, 7, 0, 3), comm)), A, comm, 1e-10, (0, None, None))
    Z = data((7, 3), np.complex128)
    check_svd(ht.linalg.svd(dnd(Z, 0, comm)), Z, comm, 1e-10, (0, None, None))
    Zw = data((2, 7), np.complex128)
    check_svd(ht.linalg.svd(dnd(Zw, 1, comm)), Zw, comm, 1e-10, (None, None, 1))
    S = data((3, 4, 2))
    u, s, vh = ht.linalg.svd(dnd(S, 0, comm))
    assert u.split == s.split == vh.split == 0
    np.testing.assert_allclose(
        np.matmul(u.numpy() * s.numpy()[:, None, :], vh.numpy()), S, atol=1e-10
    )
    u, s, vh = ht.linalg.svd(dnd(A, None, comm), full_matrices=True)
    assert u.shape == (10, 10) and vh.shape == (3, 3)


def test_svd_bad_input(comm_of):
    comm = comm_of(3)
    A = data((6, 3))
    a = dnd(A, 0, comm)
    with pytest.raises(NotImplementedError, match="full_matrices=True"):
        ht.linalg.svd(a, full_matrices=True)
    with pytest.raises(TypeError, match="`compute_uv` must be a bool"):
        ht.linalg.svd(a, compute_uv=1)
    with pytest.raises(TypeError, match="`full_matrices` must be a bool"):
        ht.linalg.svd(a, full_matrices=None)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        ht.linalg.svd(dnd(data((4,)), None, comm))
    with pytest.raises(TypeError, match="`procs_to_merge` must be an int, got str"):
        ht.linalg.svd(a, procs_to_merge="2")
    with pytest.raises(
        ValueError, match=r"`procs_to_merge` must be 0 \(all at once\) or >= 2, got 1"
    ):
        ht.linalg.svd(a, procs_to_merge=1)
    unchanged(a, A, 0, [[2, 3]] * 3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_local_qr_takes_any_buffer_torch_may_not(dtype):
    """Per-rank QR goes through torch: read-only, reversed and 8-byte-aligned blocks work."""
    A = data((9, 4), dtype)
    raw = np.zeros(A.nbytes + 8, dtype=np.uint8)
    shifted = raw[8 : 8 + A.nbytes].view(dtype).reshape(A.shape)  # aligned to 8 bytes only
    shifted[...] = A
    frozen = A.copy()
    frozen.flags.writeable = False
    assert shifted.ctypes.data % 16 == 8
    tol = 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10
    for block in (shifted, frozen, A[::-1], np.asfortranarray(A)):
        for mode in ("reduced", "r"):
            q, r = _tsqr._lapack_qr(block, mode)
            expected_r = np.abs(np.linalg.qr(np.array(block), mode="r"))
            np.testing.assert_allclose(np.abs(r), expected_r, atol=tol)
            if mode == "r":
                assert q is None
            else:
                np.testing.assert_allclose(q @ r, block, atol=tol)
    q, r = _tsqr._lapack_qr(np.zeros((0, 3), dtype), "reduced")  # numpy handles no rows
    assert q.shape == (0, 0) and r.shape == (0, 3)
