"""``solve`` on stacks of matrices (the core) and Heat's reading of ``b`` (the face),
against numpy's ``linalg.solve``; every layout the core accepts, 1-5 ranks."""

from __future__ import annotations

import numpy as np
import pytest

import dndask as ht
import dndask.heat as hf

RNG = np.random.default_rng(20261206)


def system(a_shape, b_shape, dtype):
    a = RNG.standard_normal(a_shape) + 4 * np.eye(a_shape[-1])
    b = RNG.standard_normal(b_shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.standard_normal(a_shape)
        b = b + 1j * RNG.standard_normal(b_shape)
    return a.astype(dtype), b.astype(dtype)


def tol(dtype) -> float:
    return 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


@pytest.mark.parametrize(
    ("a_shape", "b_shape", "a_split", "b_split", "n"),
    [
        ((4, 4), (4,), None, 0, 3),  # a vector, gathered
        ((4, 4), (4, 3), 0, 1, 2),  # b split along its columns: a whole on every rank
        ((5, 3, 3), (5, 3, 2), 0, 0, 5),  # shared batch split, an empty rank
        ((5, 3, 3), (5, 3, 2), None, 0, 3),  # b leads, a follows
        ((5, 3, 3), (3,), 0, None, 4),  # one vector broadcast over the stack
        ((5, 3, 3), (3, 2), 0, None, 2),  # one matrix broadcast over the stack
        ((2, 5, 3, 3), (2, 5, 3, 1), 1, None, 3),  # a batch split in the second axis
        ((2, 2), (2, 2), 1, 0, 1),  # one rank
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_solve_stacks_against_numpy(comm_of, a_shape, b_shape, a_split, b_split, n, dtype):
    comm = comm_of(n)
    a_np, b_np = system(a_shape, b_shape, dtype)
    x = ht.linalg.solve(
        ht.array(a_np, split=a_split, comm=comm), ht.array(b_np, split=b_split, comm=comm)
    )
    if len(b_shape) == 1:
        ref = np.linalg.solve(a_np, np.broadcast_to(b_np, (*a_shape[:-1],))[..., None])[..., 0]
    else:
        ref = np.linalg.solve(a_np, np.broadcast_to(b_np, (*a_shape[:-2], *b_shape[-2:])))
    assert x.shape == ref.shape and x.dtype == np.dtype(dtype)
    np.testing.assert_allclose(x.numpy(), ref, rtol=tol(dtype), atol=tol(dtype))
    batch_split = [s for s in (a_split, b_split if len(b_shape) == len(a_shape) else None)]
    batch_split = [s for s in batch_split if s is not None and s < len(a_shape) - 2]
    if batch_split:
        assert x.split == batch_split[0]


def test_solve_integers_and_bad_inputs(comm_of):
    comm = comm_of(2)
    a = ht.array(np.array([[1, 2], [3, 5]]), comm=comm)
    x = ht.linalg.solve(a, ht.array(np.array([1, 2]), comm=comm))
    assert x.dtype == np.float32  # torch's float for integers
    np.testing.assert_allclose(x.numpy(), np.linalg.solve([[1, 2], [3, 5]], [1, 2]), rtol=1e-5)
    with pytest.raises(ValueError, match=r"`b` of `solve` must be \(2,\), \(2, k\)"):
        ht.linalg.solve(a.astype(np.float64), ht.ones(3, comm=comm))
    stack = ht.ones((3, 2, 2), split=0, comm=comm)
    with pytest.raises(ValueError, match="split along different batch axes"):
        ht.linalg.solve(
            ht.ones((3, 4, 2, 2), split=0, comm=comm), ht.ones((3, 4, 2, 1), split=1, comm=comm)
        )
    with pytest.raises(TypeError, match="`b` of `solve` must be a DNDarray"):
        ht.linalg.solve(stack, np.ones(2))


def test_face_solve_reads_b_as_heat(comm_of):
    """Heat's rules: ``(*, n)`` is a stack of vectors, ``(n, k)`` broadcasts; only batch
    splits; ``out`` of the result's shape and split; a singular matrix raises at the call."""
    comm = comm_of(3)
    a_np, b_np = system((6, 3, 3), (6, 3), np.float64)
    x = hf.linalg.solve(hf.array(a_np, split=0, comm=comm), hf.array(b_np, split=0, comm=comm))
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a_np, b_np[..., None])[..., 0])
    assert x.split == 0 and x.shape == (6, 3)
    out = hf.zeros((6, 3), split=0, comm=comm)
    hf.linalg.solve(hf.array(a_np, split=0, comm=comm), hf.array(b_np, split=0, comm=comm), out=out)
    np.testing.assert_allclose(out.numpy(), x.numpy())
    with pytest.raises(ValueError, match="`out` of `solve` must have split None"):
        hf.linalg.solve(
            hf.array(a_np, split=0, comm=comm), hf.array(b_np, comm=comm),
            out=hf.zeros((6, 3), split=1, comm=comm),
        )  # fmt: skip
    with pytest.raises(NotImplementedError, match="split along a matrix axis"):
        hf.linalg.solve(hf.array(a_np[0], split=0, comm=comm), hf.array(b_np[0], comm=comm))
    with pytest.raises(NotImplementedError, match="non-batched axis 0"):
        hf.linalg.solve(hf.array(a_np[0], comm=comm), hf.array(b_np[0], split=0, comm=comm))
    with pytest.raises(RuntimeError, match="square"):
        hf.linalg.solve(hf.ones((4, 3), comm=comm), hf.ones(3, comm=comm))
    singular = a_np.copy()
    singular[1] = 0.0
    with pytest.raises(RuntimeError, match="singular"):
        hf.linalg.solve(hf.array(singular, split=0, comm=comm), hf.array(b_np, split=0, comm=comm))
    out = hf.zeros((2,), dtype=hf.int32, comm=comm)  # an integer out becomes float in place
    hf.linalg.solve(hf.array([[1, 2], [3, 5]], comm=comm), hf.array([1, 2], comm=comm), out=out)
    assert out.dtype == hf.float32
    np.testing.assert_allclose(out.numpy(), [-1.0, 1.0], atol=1e-5)


def test_face_rand_complex(comm_of):
    """torch's complex uniform: real and imaginary parts each in [0, 1)."""
    x = hf.random.rand(50, 4, dtype=hf.complex128, split=0, comm=comm_of(3)).numpy()
    assert x.dtype == np.complex128
    for part in (x.real, x.imag):
        assert part.min() >= 0.0 and part.max() < 1.0 and part.std() > 0.1


def test_face_matmul_operator_is_heats_matmul(comm_of):
    """``a @ b`` is Heat's ``matmul``: a stack times a stack of vectors is its
    ``NotImplementedError`` (Heat's test of ``solve`` relies on it), matrices multiply."""
    comm = comm_of(2)
    a_np, b_np = system((4, 3, 3), (4, 3), np.float64)
    with pytest.raises(NotImplementedError, match="stack of matrices and a vector"):
        hf.array(a_np, split=0, comm=comm) @ hf.array(b_np, split=0, comm=comm)
    m = hf.array(a_np[0], split=0, comm=comm)
    np.testing.assert_allclose((m @ m).numpy(), a_np[0] @ a_np[0])
    np.testing.assert_allclose((a_np[1] @ m).numpy(), a_np[1] @ a_np[0])
