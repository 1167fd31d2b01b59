"""DMD and DMDc against numpy: known linear systems ``x_{k+1} = A x_k (+ B c_k)`` whose
operator lives in an ``r``-dimensional subspace, and exact DMD computed in numpy."""

from __future__ import annotations

import numpy as np
import pytest

import dndask as ht
import dndask.heat as hh

RNG = np.random.default_rng(20261206)

# a reduced operator with complex, growing, decaying and negative eigenvalues
A_RED = np.array(
    [
        [0.9, -0.4, 0.0, 0.0],
        [0.4, 0.9, 0.0, 0.0],
        [0.0, 0.0, 1.1, 0.0],
        [0.0, 0.0, 0.0, -0.5],
    ]
)
B_RED = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, -0.5], [0.0, 1.0]])


def system(n: int, steps: int, control: bool = False):
    """``(X, A, B, C)``: ``steps`` snapshots of ``n`` features of a rank-4 system."""
    q, _ = np.linalg.qr(RNG.standard_normal((n, 4)))
    a, b = q @ A_RED @ q.T, q @ B_RED
    c = RNG.standard_normal((2, steps)) if control else np.zeros((2, steps))
    x = [q @ RNG.standard_normal(4)]
    for k in range(steps - 1):
        x.append(a @ x[-1] + b @ c[:, k])
    return np.stack(x, axis=1), a, b, c


def exact_dmd(x: np.ndarray, rank: int | None = None):
    """The numpy oracle: ``(U, Ã, eigenvalues)`` of exact DMD."""
    u, s, vh = np.linalg.svd(x[:, :-1], full_matrices=False)
    k = s.shape[0] if rank is None else rank
    u, s, vh = u[:, :k], s[:k], vh[:k]
    a = u.T @ x[:, 1:] @ vh.T / s
    return u, a, np.linalg.eigvals(a)


def spread(x: np.ndarray, split, comm, empty: bool) -> ht.DNDarray:
    """``x`` on ``comm``; with ``empty``, rank 0 holds nothing along the split."""
    a = ht.array(x, split=split, comm=comm)
    if empty and split is not None and comm.size > 1:
        counts = np.zeros(comm.size, dtype=int)
        counts[1:] = np.diff(np.linspace(0, x.shape[split], comm.size, dtype=int))
        target = np.tile(np.array(x.shape), (comm.size, 1))
        target[:, split] = counts
        a.redistribute_(target_map=target)
    return a


def sorted_eig(values) -> np.ndarray:
    return np.sort_complex(np.round(np.asarray(values, dtype=np.complex128), 8))


@pytest.mark.parametrize(
    ("ranks", "split", "dtype", "solver", "empty"),
    [
        (1, None, np.float64, "full", False),
        (2, 0, np.float32, "full", False),
        (3, 1, np.float64, "full", True),
        (5, 0, np.float64, "full", True),
        (4, 0, np.float64, "hierarchical", False),
        (5, 1, np.float32, "hierarchical", True),
        (3, 0, np.float64, "randomized", False),
    ],
)
def test_dmd_recovers_a_known_operator(comm_of, ranks, split, dtype, solver, empty):
    x_np, a, _, _ = system(12, 11)
    x_np = x_np.astype(dtype)
    comm = comm_of(ranks)
    x = spread(x_np, split, comm, empty)
    dmd = ht.decomposition.DMD(svd_solver=solver, svd_rank=4).fit(x)
    tol = 2e-3 if dtype == np.float32 else 1e-8
    cdtype = np.complex64 if dtype == np.float32 else np.complex128

    assert dmd.n_modes_ == 4 and dmd.rom_basis_.shape == (12, 4)
    assert dmd.rom_transfer_matrix_.dtype == dtype and dmd.rom_transfer_matrix_.split is None
    assert dmd.rom_eigenvalues_.dtype == cdtype and dmd.dmdmodes_.dtype == cdtype
    values = dmd.rom_eigenvalues_.numpy()
    np.testing.assert_allclose(sorted_eig(values), sorted_eig(np.linalg.eigvals(A_RED)), atol=tol)
    # the operator in the original space, U Ã U^T, is the oracle's and the system's
    u, at = dmd.rom_basis_.numpy().astype(np.float64), dmd.rom_transfer_matrix_.numpy()
    u_ref, a_ref, _ = exact_dmd(x_np.astype(np.float64), 4)
    np.testing.assert_allclose(u @ at @ u.T, u_ref @ a_ref @ u_ref.T, atol=tol * 10)
    np.testing.assert_allclose(u @ at @ u.T, a, atol=tol * 10)
    # the modes are eigenvectors of A: A phi = lambda phi
    modes = dmd.dmdmodes_.numpy().astype(np.complex128)
    np.testing.assert_allclose(a @ modes, modes * values, atol=tol * 10)

    scale = np.abs(x_np).max()
    nxt = dmd.predict_next(x, 1)
    assert nxt.shape == x.shape and nxt.dtype == dtype
    np.testing.assert_allclose(nxt.numpy()[:, :-1], x_np[:, 1:], atol=tol * 10 * scale)
    three = dmd.predict_next(ht.array(x_np[:, 0], comm=comm), 3)
    assert three.shape == (12,)
    np.testing.assert_allclose(
        three.numpy(), np.linalg.matrix_power(a, 3) @ x_np[:, 0], atol=tol * 10 * scale
    )
    back = dmd.predict_next(x, -1).numpy()
    np.testing.assert_allclose(back[:, 1:], x_np[:, :-1], atol=tol * 10 * scale)

    many = dmd.predict(x[:, :3], 4)
    assert many.shape == (3, 12, 4)
    expected = np.stack(
        [
            np.stack([np.linalg.matrix_power(a, s) @ x_np[:, b] for s in range(4)], 1)
            for b in range(3)
        ]
    )
    np.testing.assert_allclose(many.numpy(), expected, atol=tol * 10 * scale)
    listed = dmd.predict(ht.array(x_np[:, 2], comm=comm), [2, -1, 0])
    assert listed.shape == (12, 3)
    np.testing.assert_allclose(listed.numpy(), x_np[:, [4, 1, 2]], atol=tol * 10 * scale)


@pytest.mark.parametrize(("ranks", "split"), [(1, None), (4, 0), (5, 1)])
def test_dmd_full_matches_exact_dmd_on_noisy_data(comm_of, ranks, split):
    """No truncation, and truncation by ``svd_tol`` (the numpy oracle's count)."""
    x_np = RNG.standard_normal((9, 7))
    comm = comm_of(ranks)
    x = ht.array(x_np, split=split, comm=comm)
    dmd = ht.decomposition.DMD().fit(x)
    u_ref, a_ref, eig_ref = exact_dmd(x_np)
    assert dmd.n_modes_ == 6
    np.testing.assert_allclose(
        sorted_eig(dmd.rom_eigenvalues_.numpy()), sorted_eig(eig_ref), atol=1e-7
    )
    u = dmd.rom_basis_.numpy()
    np.testing.assert_allclose(
        u @ dmd.rom_transfer_matrix_.numpy() @ u.T, u_ref @ a_ref @ u_ref.T, atol=1e-8
    )

    s = np.linalg.svd(x_np[:, :-1], compute_uv=False)
    share = np.cumsum(s**2) / np.sum(s**2)
    for tol in (0.05, 0.3):
        k = int(np.count_nonzero(share <= 1 - tol)) + 1
        fitted = ht.decomposition.DMD(svd_tol=tol).fit(x)
        assert fitted.n_modes_ == k and fitted.rom_basis_.shape == (9, k)
        u_ref, a_ref, eig_ref = exact_dmd(x_np, k)
        np.testing.assert_allclose(
            sorted_eig(fitted.rom_eigenvalues_.numpy()), sorted_eig(eig_ref), atol=1e-7
        )
    # a rank beyond the snapshots' keeps them all
    assert ht.decomposition.DMD(svd_rank=50).fit(x).n_modes_ == 6


@pytest.mark.parametrize(
    ("ranks", "split", "dtype", "solver"),
    [
        (1, None, np.float64, "full"),
        (3, 0, np.float64, "full"),
        (4, 1, np.float32, "full"),
        (2, 1, np.float64, "hierarchical"),
        (5, 0, np.float64, "randomized"),
    ],
)
def test_dmdc_recovers_a_known_system(comm_of, ranks, split, dtype, solver):
    x_np, a, b, c_np = system(10, 14, control=True)
    x_np, c_np = x_np.astype(dtype), c_np.astype(dtype)
    comm = comm_of(ranks)
    x = ht.array(x_np, split=split, comm=comm)
    c = ht.array(c_np, split=split, comm=comm)
    dmdc = ht.decomposition.DMDc(svd_solver=solver, svd_rank=4).fit(x, c)
    tol = 2e-3 if dtype == np.float32 else 1e-8
    assert dmdc.n_modes_ == 4 and dmdc.n_modes_system_ == 6
    assert dmdc.rom_control_matrix_.shape == (4, 2) and dmdc.rom_control_matrix_.dtype == dtype
    values = dmdc.rom_eigenvalues_.numpy()
    np.testing.assert_allclose(sorted_eig(values), sorted_eig(np.linalg.eigvals(A_RED)), atol=tol)
    u = dmdc.rom_basis_.numpy().astype(np.float64)
    np.testing.assert_allclose(u @ dmdc.rom_transfer_matrix_.numpy() @ u.T, a, atol=tol * 10)
    np.testing.assert_allclose(u @ dmdc.rom_control_matrix_.numpy(), b, atol=tol * 10)
    modes = dmdc.dmdmodes_.numpy().astype(np.complex128)
    np.testing.assert_allclose(a @ modes, modes * values, atol=tol * 10)

    scale = np.abs(x_np).max()
    one = dmdc.predict(ht.array(x_np[:, 0], comm=comm), c)
    assert one.shape == (1, 10, 14) and one.dtype == dtype
    np.testing.assert_allclose(one.numpy()[0], x_np, atol=tol * 10 * scale)
    starts = ht.array(x_np[:, [3, 5, 0]].T, split=0, comm=comm)  # one state per row
    batch = dmdc.predict(starts, ht.array(c_np[:, 3:9], comm=comm)).numpy()
    assert batch.shape == (3, 10, 6)
    for row, k in enumerate((3, 5, 0)):
        expected = [x_np[:, k]]
        for t in range(5):
            expected.append(a @ expected[-1] + b @ c_np[:, 3 + t])
        np.testing.assert_allclose(batch[row], np.stack(expected, 1), atol=tol * 10 * scale)
    single = dmdc.predict(ht.array(x_np[:, 2], comm=comm), ht.array(c_np[:, 0], comm=comm))
    assert single.shape == (1, 10, 1)


def test_dmdc_with_controls_split_otherwise(comm_of):
    """``C`` split along another axis than ``X`` (or not at all) gives the same fit."""
    x_np, _, b, c_np = system(8, 12, control=True)
    comm = comm_of(3)
    x = ht.array(x_np, split=0, comm=comm)
    for c_split in (None, 1):
        dmdc = ht.decomposition.DMDc(svd_rank=4).fit(x, ht.array(c_np, split=c_split, comm=comm))
        u = dmdc.rom_basis_.numpy()
        np.testing.assert_allclose(u @ dmdc.rom_control_matrix_.numpy(), b, atol=1e-8)


def test_parameters_and_bad_inputs(comm_of):
    comm = comm_of(2)
    for cls in (ht.decomposition.DMD, ht.decomposition.DMDc):
        with pytest.raises(TypeError, match="`svd_solver` must be a str, got int"):
            cls(svd_solver=0)
        with pytest.raises(ValueError, match="`svd_solver` must be one of"):
            cls(svd_solver="Gramian")
        with pytest.raises(ValueError, match="'full'` takes at most one"):
            cls(svd_rank=3, svd_tol=0.1)
        with pytest.raises(ValueError, match=r"`svd_tol` must be positive, got -0\.5"):
            cls(svd_tol=-0.5)
        with pytest.raises(ValueError, match="'hierarchical'` takes exactly one"):
            cls(svd_solver="hierarchical")
        with pytest.raises(ValueError, match="'randomized'` takes `svd_rank` and no `svd_tol`"):
            cls(svd_solver="randomized")
        with pytest.raises(TypeError, match="`svd_rank` must be None or an int, got float"):
            cls(svd_rank=0.1)
        with pytest.raises(ValueError, match="`svd_rank` must be at least 1, got 0"):
            cls(svd_solver="randomized", svd_rank=0)
        with pytest.raises(TypeError, match="`svd_tol` must be None or a float, got str"):
            cls(svd_solver="hierarchical", svd_tol="auto")
        model = cls(svd_solver="randomized", svd_rank=2)
        assert model.get_params() == {"svd_rank": 2, "svd_solver": "randomized", "svd_tol": None}
        assert model.set_params(svd_solver="full", svd_rank=None) is model
        assert repr(model) == f"{cls.__name__}(svd_rank=None, svd_solver='full', svd_tol=None)"
        with pytest.raises(ValueError, match="`rank` is not a parameter of"):
            model.set_params(rank=2)
        with pytest.raises(ValueError, match="`svd_rank__rank` is not a parameter of"):
            model.set_params(svd_rank__rank=2)  # svd_rank is no estimator

    x_np, _, _, c_np = system(6, 8, control=True)
    x = ht.array(x_np, split=0, comm=comm)
    dmd = ht.decomposition.DMD()
    with pytest.raises(RuntimeError, match="not fitted yet"):
        dmd.predict_next(x)
    with pytest.raises(TypeError, match="`X` must be a DNDarray, got ndarray"):
        dmd.fit(x_np)
    with pytest.raises(ValueError, match=r"`X` must be 2-D \(n_features x n_timesteps\)"):
        dmd.fit(ht.zeros((4, 2, 2), comm=comm))
    with pytest.raises(ValueError, match="at least 2 time steps"):
        dmd.fit(x[:, :1])
    dmd.set_params(svd_rank=0)
    with pytest.raises(ValueError, match="`svd_rank` must be at least 1"):
        dmd.fit(x)  # set_params is checked at fit
    dmd.set_params(svd_rank=4).fit(x)
    basis = dmd.rom_basis_
    with pytest.raises(ValueError, match="at least 2 time steps"):
        dmd.fit(x[:, :1])
    assert dmd.rom_basis_ is basis and dmd.n_modes_ == 4  # a failed fit leaves the model
    with pytest.raises(ValueError, match=r"`X` must have 6 features \(rows, as in fit\), got 5"):
        dmd.predict_next(x[:5])
    with pytest.raises(TypeError, match="`n_steps` must be an int, got str"):
        dmd.predict_next(x, "2")
    with pytest.raises(TypeError, match="`steps` must be an int or a list of ints, got str"):
        dmd.predict(x, "10")
    with pytest.raises(ValueError, match="`steps` as an int must be non-negative"):
        dmd.predict(x, -1)
    # a state that vanishes after one step: the reduced operator is 0, it cannot step back
    vanishing = ht.array([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]], comm=comm)
    singular = ht.decomposition.DMD(svd_rank=1).fit(vanishing)
    with pytest.raises(ValueError, match=r"negative number of steps \(-1\) needs an invertible"):
        singular.predict_next(vanishing, -1)

    dmdc = ht.decomposition.DMDc()
    c = ht.array(c_np, comm=comm)
    with pytest.raises(RuntimeError, match="not fitted yet"):
        dmdc.predict(x[:, 0], c)
    with pytest.raises(ValueError, match="same number of time steps, got 8 and 7"):
        dmdc.fit(x, c[:, :7])
    with pytest.raises(ValueError, match=r"`C` must be 2-D \(n_control_features"):
        dmdc.fit(x, c[0])
    with pytest.raises(TypeError, match="`C` must be real"):
        dmdc.fit(x, c.astype(np.complex128))
    dmdc.fit(x, c)
    with pytest.raises(ValueError, match=r"`X` must have 6 state features \(columns"):
        dmdc.predict(x, c)
    with pytest.raises(ValueError, match=r"`C` must have 2 control features \(rows"):
        dmdc.predict(x[:, 0], c[:1])
    with pytest.raises(ValueError, match="`C` must be 1-D"):
        dmdc.predict(x[:, 0], ht.zeros((2, 2, 2), comm=comm))


def test_heat_face(comm_of):
    """Heat's ``ht.decomposition.DMD``/``DMDc``: None before fit, face arrays after, Heat's
    layout rule in ``DMD.predict`` and its squeezed result, Heat's split rule in ``DMDc.fit``."""
    comm = comm_of(3)
    x_np, _, _, c_np = system(9, 10, control=True)
    dmd = hh.decomposition.DMD(svd_solver="hierarchical", svd_rank=4)
    assert dmd.rom_basis_ is None and dmd.n_modes_ is None and hh.is_estimator(dmd)
    x = hh.array(x_np, split=1, comm=comm)
    dmd.fit(x)
    assert isinstance(dmd.rom_basis_, hh.DNDarray) and dmd.rom_basis_.split is None
    out = dmd.predict(hh.array(x_np[:, 0], comm=comm), 1)  # Heat squeezes (1, 9, 1) to (9,)
    assert isinstance(out, hh.DNDarray) and out.shape == (9,)
    np.testing.assert_allclose(out.numpy(), x_np[:, 0], atol=1e-8)
    with pytest.raises(NotImplementedError, match="split along the features"):
        dmd.predict(hh.array(x_np, split=0, comm=comm), 2)
    dmdc = hh.decomposition.DMDc(svd_rank=4)
    assert dmdc.rom_control_matrix_ is None
    with pytest.raises(ValueError, match="split along different axes"):
        dmdc.fit(hh.array(x_np, split=0, comm=comm), hh.array(c_np, split=1, comm=comm))
    dmdc.fit(x, hh.array(c_np, split=1, comm=comm))
    assert isinstance(dmdc.rom_control_matrix_, hh.DNDarray) and dmdc.n_modes_system_ == 6
