"""solve_triangular, cg, lanczos, rsvd, reigh, polar, eigh and the hierarchical SVD against
numpy/scipy, checked by residuals: ||A - U S V^T||, orthogonality, ||A x - b||.

Rank counts 1-5 (5 ranks for fewer rows than ranks: empty ranks), splits 0, 1 and
None, float32 and float64. The slow spectral cases are few and small.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import torch
from conftest import RANK_COUNTS, skewed

import dndask as ht
import dndask.heat as hf
from dndask._linalg._spectral import qdwh_weights

RNG = np.random.default_rng(20261206)


def tol(dtype) -> float:
    return 5e-4 if np.dtype(dtype) == np.float32 else 1e-9


def low_rank(m, n, k, dtype=np.float64):
    values = RNG.standard_normal((m, k)) @ RNG.standard_normal((k, n))
    return values.astype(dtype)


def spd(n, dtype=np.float64):
    g = RNG.standard_normal((n, n))
    return (g @ g.T + n * np.eye(n)).astype(dtype)


def orthonormal_error(q: np.ndarray) -> float:
    return float(np.abs(q.T.conj() @ q - np.eye(q.shape[1])).max())


# ======================================================== solve_triangular


@pytest.mark.parametrize(
    ("n", "a_split", "dtype"),
    [(1, None, np.float64), (5, 0, np.float32), (3, 1, np.float64), (2, None, np.float32)],
)
def test_solve_triangular_every_layout(comm_of, n, a_split, dtype):
    comm = comm_of(n)
    upper = (np.triu(RNG.standard_normal((4, 4))) + 4 * np.eye(4)).astype(dtype)
    rhs = RNG.standard_normal((4, 3)).astype(dtype)
    for b_split in (None, 0):
        for lower, a_np in ((False, upper), (True, upper.T.copy())):
            a = ht.array(a_np, split=a_split, comm=comm)
            b = ht.array(rhs, split=b_split, comm=comm)
            x = ht.linalg.solve_triangular(a, b, lower=lower)
            assert x.split == b_split and x.dtype == dtype
            expected = scipy.linalg.solve_triangular(a_np, rhs, lower=lower)
            np.testing.assert_allclose(x.numpy(), expected, rtol=tol(dtype), atol=tol(dtype))


def test_solve_triangular_batch_split_and_uneven_counts(comm_of):
    comm = comm_of(3)
    a_np = np.triu(RNG.standard_normal((5, 6, 6))) + 6 * np.eye(6)
    b_np = RNG.standard_normal((5, 6, 2))
    x = ht.linalg.solve_triangular(
        ht.array(a_np, split=0, comm=comm), ht.array(b_np, split=0, comm=comm)
    )
    assert x.split == 0
    np.testing.assert_allclose(np.einsum("bij,bjk->bik", a_np, x.numpy()), b_np, atol=1e-10)
    # b on two ranks only, a resplit to b's row counts
    a2 = np.triu(RNG.standard_normal((6, 6))) + 6 * np.eye(6)
    b = ht.array(RNG.standard_normal((6, 2)), split=0, comm=comm)
    b.redistribute_(target_map=np.array([[0, 2], [4, 2], [2, 2]]))
    x = ht.linalg.solve_triangular(ht.array(a2, split=1, comm=comm), b)
    assert x.lshape_map[:, 0].tolist() == [0, 4, 2]
    np.testing.assert_allclose(a2 @ x.numpy(), b.numpy(), atol=1e-10)


def test_solve_triangular_bad_inputs(comm_of):
    comm = comm_of(2)
    a = ht.array(np.eye(4), split=0, comm=comm)
    with pytest.raises(TypeError, match="`b` must be a DNDarray"):
        ht.linalg.solve_triangular(a, 42)
    with pytest.raises(ValueError, match="`a` must be square"):
        ht.linalg.solve_triangular(a[1:], ht.ones((3, 1), comm=comm))
    with pytest.raises(ValueError, match="`b` must have as many dimensions as `a`"):
        ht.linalg.solve_triangular(a, ht.ones(4, comm=comm))
    with pytest.raises(ValueError, match="`b` must not be split along its columns"):
        ht.linalg.solve_triangular(a, ht.ones((4, 4), split=1, comm=comm))
    with pytest.raises(ValueError, match="`b` must have 4 rows, got 3"):
        ht.linalg.solve_triangular(a, ht.ones((3, 1), comm=comm))


# ======================================================== cg, lanczos


@pytest.mark.parametrize(
    ("n", "split", "dtype"), [(1, None, np.float64), (2, 1, np.float32), (5, 0, np.float64)]
)
def test_cg_residual(comm_of, n, split, dtype):
    comm = comm_of(n)
    a_np, b_np = spd(12, dtype), RNG.standard_normal(12).astype(dtype)
    x = ht.linalg.cg(ht.array(a_np, split=split, comm=comm), ht.array(b_np, split=0, comm=comm))
    assert x.split == 0 and x.dtype == dtype
    residual = np.linalg.norm(a_np @ x.numpy() - b_np) / np.linalg.norm(b_np)
    assert residual < (1e-4 if dtype == np.float32 else 1e-9)


def test_cg_reports_non_convergence_and_bad_inputs(comm_of):
    comm = comm_of(3)
    a = ht.array(spd(20), split=0, comm=comm)
    b = ht.array(RNG.standard_normal(20), split=0, comm=comm)
    with pytest.raises(RuntimeError, match="`cg` did not converge in 2 iterations"):
        ht.linalg.cg(a, b, maxiter=2)
    x = ht.linalg.cg(a, b, maxiter=2, strict=False)  # Heat's way: the last iterate
    assert x.shape == (20,)
    with pytest.raises(ValueError, match="`a` of `cg` must be a square matrix"):
        ht.linalg.cg(b, b)
    with pytest.raises(ValueError, match="`b` of `cg` must be a vector of length 20"):
        ht.linalg.cg(a, a)
    with pytest.raises(TypeError, match="`b` must be a DNDarray"):
        ht.linalg.cg(a, np.ones(20))


@pytest.mark.parametrize("n", [3])
def test_lanczos_full_and_partial(comm_of, n):
    comm = comm_of(n)
    for dtype in (np.float64, np.complex128):
        g = RNG.standard_normal((10, 10)) + (
            1j * RNG.standard_normal((10, 10)) if dtype == np.complex128 else 0
        )
        a_np = (g @ g.conj().T).astype(dtype)
        v, t = ht.linalg.lanczos(ht.array(a_np, split=0, comm=comm), 10)
        V, T = v.numpy(), t.numpy()
        assert v.split == 0 and t.split is None and T.dtype == np.float64
        assert orthonormal_error(V) < 1e-10
        np.testing.assert_allclose(V @ T @ V.conj().T, a_np, atol=1e-9)
        assert np.allclose(T, np.triu(np.tril(T, 1), -1))  # tridiagonal
    # a partial run: the Krylov relation A V_k = V_k T_k + beta v_{k+1} e_k^T holds on its
    # first k - 1 columns
    a_np = spd(16)
    v0 = ht.array(np.ones(16), split=0, comm=comm)
    v, t = ht.linalg.lanczos(ht.array(a_np, split=0, comm=comm), 5, v0=v0)
    V, T = v.numpy(), t.numpy()
    np.testing.assert_allclose((a_np @ V - V @ T)[:, :4], 0, atol=1e-9)
    np.testing.assert_allclose(V[:, 0], np.ones(16) / 4, atol=1e-12)


@pytest.mark.parametrize(
    ("n", "rows", "split", "dtype", "v0_split"),
    [
        (5, 4, 0, np.float64, None),  # an empty rank; v0 laid out like A's rows
        (2, 9, None, np.float32, 0),  # one chunk; a split v0 gathered
        (1, 6, 0, np.complex64, None),
    ],
)
def test_lanczos_layouts(comm_of, n, rows, split, dtype, v0_split):
    """Every layout of the per-rank graph against the Lanczos relations: V^H V = I,
    V^H A V = T (tridiagonal, real), V T V^H = A for m = n; V's split is A's."""
    comm = comm_of(n)
    g = RNG.standard_normal((rows, rows)) + (
        1j * RNG.standard_normal((rows, rows)) if np.dtype(dtype).kind == "c" else 0
    )
    a_np = (g @ g.conj().T + rows * np.eye(rows)).astype(dtype)
    v0 = ht.array(RNG.standard_normal(rows).astype(dtype), split=v0_split, comm=comm)
    v, t = ht.linalg.lanczos(ht.array(a_np, split=split, comm=comm), rows, v0=v0)
    V, T = v.numpy(), t.numpy()
    t_ = 50 * tol(np.empty(0, dtype).real.dtype)
    assert v.split == split and v.dtype == dtype and T.dtype == np.empty(0, dtype).real.dtype
    assert orthonormal_error(V) < t_
    np.testing.assert_allclose(V.conj().T @ a_np @ V, T, atol=t_ * np.abs(a_np).max())
    np.testing.assert_allclose(V @ T @ V.conj().T, a_np, atol=t_ * np.abs(a_np).max())


def test_lanczos_bad_inputs(comm_of):
    comm = comm_of(2)
    with pytest.raises(ValueError, match="`m` must be at most n = 4, got 5"):
        ht.linalg.lanczos(ht.array(np.eye(4), split=0, comm=comm), 5)
    with pytest.raises(NotImplementedError, match="split along axis 1"):
        ht.linalg.lanczos(ht.array(np.eye(4), split=1, comm=comm), 2)
    with pytest.raises(TypeError, match="must be float or complex"):
        ht.linalg.lanczos(ht.array(np.eye(4, dtype=np.int64), comm=comm), 2)


# ======================================================== randomized


@pytest.mark.parametrize(
    ("n", "split", "dtype"), [(1, None, np.float64), (3, 1, np.float32), (5, 0, np.float64)]
)
def test_rsvd_and_reigh_recover_low_rank_matrices(comm_of, n, split, dtype):
    comm = comm_of(n)
    x_np = low_rank(30, 20, 4, dtype)
    u, s, vh = ht.linalg.rsvd(ht.array(x_np, split=split, comm=comm), 4, n_oversamples=3)
    U, S, VH = u.numpy(), s.numpy(), vh.numpy()
    assert U.shape == (30, 4) and S.shape == (4,) and VH.shape == (4, 20)
    assert u.split == (None if split is None else 0)  # an unsplit matrix: one task
    assert orthonormal_error(U) < tol(dtype) and orthonormal_error(VH.T) < tol(dtype)
    scale = np.linalg.norm(x_np)
    assert np.linalg.norm((U * S) @ VH - x_np) / scale < 10 * tol(dtype)
    np.testing.assert_allclose(
        S, np.linalg.svd(x_np.astype(np.float64), compute_uv=False)[:4], rtol=10 * tol(dtype)
    )
    sym = (x_np @ x_np.T).astype(dtype)
    values, vectors = ht.linalg.reigh(ht.array(sym, split=split, comm=comm), 3, power_iter=1)
    expected = np.sort(np.linalg.eigvalsh(sym.astype(np.float64)))[::-1][:3]
    np.testing.assert_allclose(values.numpy(), expected, rtol=10 * tol(dtype))
    assert orthonormal_error(vectors.numpy()) < tol(dtype)
    assert vectors.split == (None if split is None else 0)
    # the power iterations of the one-task and distributed paths
    u, s, vh = ht.linalg.rsvd(ht.array(x_np, split=split, comm=comm), 4, 2, power_iter=2)
    U, S, VH = u.numpy(), s.numpy(), vh.numpy()
    assert np.linalg.norm((U * S) @ VH - x_np) / scale < 10 * tol(dtype)
    assert orthonormal_error(U) < tol(dtype)


@pytest.mark.parametrize("n", RANK_COUNTS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rsvd_of_rows_in_one_graph_matches_numpy(comm_of, n, dtype):
    """The split-0 path without power iterations: ranks with fewer rows than the sketch's
    columns, and empty ranks, against numpy's SVD."""
    comm = comm_of(n)
    x_np = low_rank(23, 12, 3, dtype)
    for counts in ([23] + [0] * (n - 1), None):
        a = ht.array(x_np, split=0, comm=comm)
        if counts is not None and n > 1:
            counts = counts[-1:] + counts[:-1]  # all rows on rank 1, the others empty
            target = a.lshape_map
            target[:, 0] = torch.tensor(counts)
            a = a.redistribute_(target_map=target)
        u, s, vh = ht.linalg.rsvd(a, 3, n_oversamples=4)
        U, S, VH = u.numpy(), s.numpy(), vh.numpy()
        assert (u.split, s.split, vh.split) == (0, None, None)
        assert u.lshape_map[:, 0].tolist() == a.lshape_map[:, 0].tolist()
        assert U.dtype == dtype and S.dtype == dtype and VH.dtype == dtype
        assert orthonormal_error(U) < tol(dtype) and orthonormal_error(VH.T) < tol(dtype)
        want = np.linalg.svd(x_np.astype(np.float64), compute_uv=False)[:3]
        np.testing.assert_allclose(S, want, rtol=10 * tol(dtype))
        scale = np.linalg.norm(x_np)
        assert np.linalg.norm((U * S) @ VH - x_np) / scale < 10 * tol(dtype)


def test_randomized_bad_inputs(comm_of):
    x = ht.array(np.ones((6, 4)), split=0, comm=comm_of(2))
    with pytest.raises(ValueError, match=r"`svd_rank` must be at most min\(m, n\) = 4"):
        ht.linalg.rsvd(x, 5)
    with pytest.raises(ValueError, match="`svd_rank` must be at least 1, got 0"):
        ht.linalg.rsvd(x, 0)
    with pytest.raises(TypeError, match="`n_oversamples` must be an int"):
        ht.linalg.rsvd(x, 2, n_oversamples="a")
    with pytest.raises(ValueError, match="`power_iter` must be at least 0, got -1"):
        ht.linalg.rsvd(x, 2, power_iter=-1)
    with pytest.raises(ValueError, match="`a` of `reigh` must be square"):
        ht.linalg.reigh(x, 2)
    with pytest.raises(TypeError, match="`a` of `rsvd` must be float32 or float64"):
        ht.linalg.rsvd(x.astype(np.int32), 2)


# ======================================================== polar, eigh


def test_qdwh_weights_need_at_most_six_steps():
    assert len(qdwh_weights(1e-16, 2.2e-16)) <= 6
    assert len(qdwh_weights(0.5, 2.2e-16)) <= 3


@pytest.mark.parametrize(
    ("n", "split", "dtype"),
    [(2, 0, np.float64), (3, 1, np.float32), (5, 0, np.float32), (1, None, np.float64)],
)
def test_polar_residuals(comm_of, n, split, dtype):
    comm = comm_of(n)
    x_np = RNG.standard_normal((24, 10)).astype(dtype)
    u, h = ht.linalg.polar(ht.array(x_np, split=split, comm=comm))
    U, H = u.numpy(), h.numpy()
    assert u.split == split and h.split == split and U.dtype == dtype
    t = 20 * tol(dtype)
    assert orthonormal_error(U) < t
    assert np.abs(H - H.T).max() < t and np.linalg.eigvalsh(H.astype(np.float64)).min() > 0
    assert np.linalg.norm(U @ H - x_np) / np.linalg.norm(x_np) < t
    u_ref, _ = scipy.linalg.polar(x_np.astype(np.float64))
    np.testing.assert_allclose(U, u_ref, atol=100 * tol(dtype))


@pytest.mark.parametrize(
    ("n", "split", "dtype"),
    [(2, 0, np.float64), (3, 1, np.float32), (5, 0, np.float64), (1, None, np.float32)],
)
def test_eigh_residuals(comm_of, n, split, dtype):
    comm = comm_of(n)
    g = RNG.standard_normal((80, 80))
    a_np = (g + g.T).astype(dtype)
    values, vectors = ht.linalg.eigh(ht.array(a_np, split=split, comm=comm))
    L, V = values.numpy(), vectors.numpy()
    assert values.split == 0 and vectors.split == split and V.dtype == dtype
    t = 50 * tol(dtype)
    assert orthonormal_error(V) < t
    assert np.linalg.norm(V @ np.diag(L) @ V.T - a_np) / np.linalg.norm(a_np) < t
    np.testing.assert_allclose(L, np.linalg.eigvalsh(a_np.astype(np.float64))[::-1], atol=t * 20)


@pytest.mark.parametrize(("n", "split", "dtype"), [(4, 0, np.float32), (3, 1, np.float64)])
def test_eigh_empty_ranks_and_deeper_recursion(comm_of, n, split, dtype):
    """Rank 0 without rows, and 200 rows on 64-row leaves: subproblems divided again."""
    comm = comm_of(n)
    g = RNG.standard_normal((200, 200))
    a_np = (g + g.T).astype(dtype)
    a = skewed(ht.array(a_np, split=split, comm=comm))
    values, vectors = ht.linalg.eigh(a)
    L, V = values.numpy(), vectors.numpy()
    assert vectors.split == split and values.split == 0 and V.dtype == dtype
    t = 50 * tol(dtype)
    assert orthonormal_error(V) < t
    assert np.linalg.norm(V @ np.diag(L) @ V.T - a_np) / np.linalg.norm(a_np) < t
    np.testing.assert_allclose(L, np.linalg.eigvalsh(a_np.astype(np.float64))[::-1], atol=t * 40)


def test_eigh_of_a_multiple_of_the_identity(comm_of):
    """Every eigenvalue at the shift: nothing to divide, factored whole."""
    comm = comm_of(2)
    values, vectors = ht.linalg.eigh(ht.array(3 * np.eye(100), split=0, comm=comm))
    np.testing.assert_allclose(values.numpy(), np.full(100, 3.0))
    assert orthonormal_error(vectors.numpy()) < 1e-12


def test_polar_and_eigh_bad_inputs(comm_of):
    comm = comm_of(3)
    with pytest.raises(ValueError, match="`a` of `eigh` must be square"):
        ht.linalg.eigh(ht.ones((6, 5), split=0, comm=comm))
    with pytest.raises(ValueError, match="`a` of `eigh` must be symmetric"):
        ht.linalg.eigh(ht.array(np.triu(np.ones((6, 6))), split=0, comm=comm))
    with pytest.raises(TypeError, match="`a` of `eigh` must be float32 or float64"):
        ht.linalg.eigh(ht.ones((6, 6), dtype=ht.int32, split=0, comm=comm))
    with pytest.raises(ValueError, match="at least as many rows as columns"):
        ht.linalg.polar(ht.ones((4, 5), split=0, comm=comm))
    with pytest.raises(ValueError, match="`condition_estimate` must be at least 1"):
        ht.linalg.polar(ht.ones((5, 4), split=0, comm=comm), condition_estimate=0.5)


# ======================================================== hierarchical SVD


@pytest.mark.parametrize(
    ("n", "split", "dtype"),
    [(1, None, np.float64), (3, 1, np.float32), (5, 0, np.float64), (2, 1, np.float64)],
)
def test_hsvd_error_estimates_bound_the_true_error(comm_of, n, split, dtype):
    comm = comm_of(n)
    x_np = (
        RNG.standard_normal((20, 30))
        @ np.diag(0.6 ** np.arange(30))
        @ RNG.standard_normal((30, 30))
    ).astype(dtype)
    x = ht.array(x_np, split=split, comm=comm)
    for bound, (u, s, vh, err) in (
        (1.0, ht.linalg.hsvd_rank(x, 4, compute_sv=True)),
        (1e-2, ht.linalg.hsvd_rtol(x, 1e-2, compute_sv=True)),
    ):
        U, S, VH = u.numpy(), s.numpy(), vh.numpy()
        true = np.linalg.norm((U * S) @ VH - x_np) / np.linalg.norm(x_np)
        # U S Vh is the projection of A on U's (or Vh's) span: the estimate bounds it
        assert true <= err * (1 + 10 * tol(dtype)) + 10 * tol(dtype)
        assert true <= bound + 10 * tol(dtype)  # hsvd_rtol's promise: the true error
        basis = U if split != 0 else VH.T
        projection = basis @ basis.T @ x_np if split != 0 else x_np @ basis @ basis.T
        np.testing.assert_allclose((U * S) @ VH, projection, atol=10 * tol(dtype))
        assert orthonormal_error(U if split != 0 else VH.T) < 10 * tol(dtype)
    assert ht.linalg.hsvd_rank(x, 4)[0].shape == (20, 4)
    # nothing cut (rank 20 of a 20-row matrix): Heat's estimate still counts the
    # safety shift's columns, so it stays above the (rounding-level) true error
    u, s, vh, err = ht.linalg.hsvd_rank(x, 20, compute_sv=True)
    true = np.linalg.norm((u.numpy() * s.numpy()) @ vh.numpy() - x_np) / np.linalg.norm(x_np)
    assert true <= err or true < 10 * tol(dtype)


def test_hsvd_bad_inputs(comm_of):
    x = ht.array(np.ones((10, 12)), split=1, comm=comm_of(2))
    with pytest.raises(
        RuntimeError,
        match=r"`maxmergedim` must be at least 2 \* \(maxrank \+ safetyshift\) \+ 1 = 21",
    ):
        ht.linalg.hsvd_rank(x, 5, maxmergedim=4)
    with pytest.raises(ValueError, match="`no_of_merges` must be at least 2, got 1"):
        ht.linalg.hsvd_rtol(x, 0.1, no_of_merges=1)
    with pytest.raises(TypeError, match="`maxrank` must be an int"):
        ht.linalg.hsvd_rank(x, 0.1)
    with pytest.raises(TypeError, match="`a` of `hsvd` must be float32 or float64"):
        ht.linalg.hsvd_rank(x.astype(np.int64), 2)


@pytest.mark.parametrize(("n", "split", "dtype"), [(3, 0, np.float64), (2, None, np.float32)])
def test_isvd_extends_an_svd(comm_of, n, split, dtype):
    comm = comm_of(n)
    x_np = RNG.standard_normal((12, 7)).astype(dtype)
    u, s, vh = ht.linalg.svd(ht.array(x_np[:, :4], split=split, comm=comm))
    u2, s2, vh2 = ht.linalg.isvd(ht.array(x_np[:, 4:], split=split, comm=comm), u, s, vh)
    U, S, VH = u2.numpy(), s2.numpy(), vh2.numpy()
    t = 10 * tol(dtype)
    assert np.linalg.norm((U * S) @ VH - x_np) / np.linalg.norm(x_np) < t
    assert orthonormal_error(U) < t and orthonormal_error(VH.T) < t
    np.testing.assert_allclose(S, np.linalg.svd(x_np, compute_uv=False), rtol=t)
    u3, s3, _ = ht.linalg.isvd(ht.array(x_np[:, 4:], split=split, comm=comm), u, s, vh, maxrank=2)
    assert u3.shape == (12, 2) and s3.shape == (2,)


def test_isvd_bad_inputs(comm_of):
    comm = comm_of(2)
    u, s, vh = ht.zeros((10, 2), comm=comm), ht.zeros(3, comm=comm), ht.zeros((3, 5), comm=comm)
    new = ht.zeros((10, 3), comm=comm)
    with pytest.raises(ValueError, match="`u_old` must have 3 columns"):
        ht.linalg.isvd(new, u, s, vh)
    with pytest.raises(ValueError, match="`vh_old` must have 2 rows"):
        ht.linalg.isvd(new, u, ht.zeros(2, comm=comm), vh)
    with pytest.raises(ValueError, match="`new_data` must have 10 rows"):
        ht.linalg.isvd(ht.zeros((9, 3), comm=comm), u, ht.zeros(2, comm=comm), vh[:2])


def test_face_hsvd_return_forms(comm_of):
    """Heat's forms: ``(U, S, V.T, err)``; without ``compute_sv`` ``(U, err)``, or
    ``(V.T, err)`` (``k x m``) for a row-split matrix; ``err`` a 0-d array of A's type;
    ``hsvd_rtol``'s arguments in Heat's order."""
    comm = comm_of(3)
    x_np = low_rank(12, 9, 3)
    for split in (0, 1):
        x = hf.array(x_np, split=split, comm=comm)
        u, err = hf.linalg.hsvd_rank(x, 3)
        assert err.shape == () and err.dtype == hf.float64 and float(err) >= 0
        left = np.linalg.svd(x_np)[0][:, :3]
        got = u.numpy().T if split == 0 else u.numpy()
        assert u.shape == ((3, 12) if split == 0 else (12, 3))
        np.testing.assert_allclose(np.abs(left.T @ got), np.eye(3), atol=1e-8)
        u, s, vt, err = hf.linalg.hsvd_rtol(x, 1e-3, True, 3, None, 0)  # maxrank=3, safetyshift=0
        np.testing.assert_allclose((u.numpy() * s.numpy()) @ vt.numpy(), x_np, atol=1e-8)
        assert u.shape == (12, 3)
