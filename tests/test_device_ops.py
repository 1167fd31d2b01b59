"""The core operations on device chunks: every test runs on cpu, the strict stand-in and CuPy.

The stand-in (tests/_standin.py) is the "gpu" backend: its chunks refuse implicit host
conversion and numpy operands, and refuse to be deserialized in the driver. A test that
passes on "gpu" proves that the operation kept the chunk type (the result's meta and its
computed chunks) and that no task moved device data to host behind the caller's back;
values are compared to numpy after ``compute()``, which copies each chunk to host on its
worker. The same tests run again with real CuPy as the "gpu" backend where CUDA is: those
carry the ``gpu`` marker and skip without it (conftest's ``device`` and ``gpu_backend``).
"""

import os
import sys

import numpy as np
import pytest
import torch
from conftest import gpu_backend_of, holders, on_device

import dndask as ht
from dndask import _transport, _xp
from dndask._linalg import _tsqr

sys.path.insert(0, os.path.dirname(__file__))
from _standin import StrictArray


def check(a: ht.DNDarray, expected, device: str, rtol=1e-6, atol=1e-9) -> None:
    """``a`` is on ``device`` and holds ``expected`` (read back through host copies)."""
    assert isinstance(a, ht.DNDarray)
    assert a.device == device
    assert on_device(a.to_dask()._meta, device)
    got = a.numpy()
    assert type(got) is np.ndarray
    expected = np.asarray(expected)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


def data(shape=(7, 4), dtype=np.float64):
    return (np.arange(np.prod(shape), dtype=np.float64).reshape(shape) * 1.5 - 6.0).astype(dtype)


# ------------------------------------------------------------------------------ _xp
def test_xp_from_dlpack_adopts_only_what_lives_there_and_torch_device(standin, monkeypatch):
    host = np.arange(3.0)
    adopted = _xp.from_dlpack(host, "gpu")  # the stand-in reads host memory, as CuPy reads CUDA
    assert isinstance(adopted, StrictArray) and adopted.get().tolist() == [0.0, 1.0, 2.0]
    assert _xp.from_dlpack(adopted, "gpu") is adopted
    assert _xp.from_dlpack(torch.ones(2), "gpu").get().tolist() == [1.0, 1.0]
    assert _xp.from_dlpack([1, 2], "gpu") is None  # no DLPack: the caller copies explicitly
    assert _xp.torch_device("cpu") == "cpu" and _xp.torch_device("gpu") == "cpu"
    cuda_like = _xp.Backend(  # CuPy's shape: adopts CUDA memory only, tensors on cuda
        "gpu", np, _NotHere, np.asarray, np.asarray,
        from_dlpack=lambda v: pytest.fail("host memory must not be adopted"),
        dlpack_device=2, torch_device="cuda",
    )  # fmt: skip
    monkeypatch.setitem(_xp._BACKENDS, "gpu", cuda_like)
    assert _xp.from_dlpack(host, "gpu") is None  # host memory: copied explicitly instead
    assert _xp.torch_device("gpu:1") == "cuda:1"


class _NotHere:
    """An array type nothing is."""


# ------------------------------------------------------------------ ht.array, *_like
@pytest.mark.parametrize("split", [None, 0, 1])
def test_array_puts_driver_data_on_the_device(device, comm_of, split):
    values = data()
    a = ht.array(values, split=split, comm=comm_of(3), device=device)
    check(a, values, device)
    assert a.split == split
    check(ht.array(a), values, device)  # a DNDarray keeps its device
    check(ht.array(a, device="cpu"), values, "cpu")
    check(
        ht.array([[1.0, 2.0], [3.0, 4.0]], split=0, comm=comm_of(2), device=device),
        [[1, 2], [3, 4]],
        device,
    )


def test_use_device_is_the_default_of_array_but_not_of_dndarrays(gpu_backend, comm_of):
    cpu = ht.array(data(), split=0, comm=comm_of(2))
    try:
        ht.use_device("gpu")
        assert ht.array(data(), split=0, comm=comm_of(2)).device == "gpu"
        assert ht.array(cpu).device == "cpu"
        assert ht.random.rand(3, 2, split=0, comm=comm_of(2)).device == "gpu"
    finally:
        ht.use_device("cpu")


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like", "full_like"])
def test_like_factories_keep_or_change_the_device(device, comm_of, name):
    a = ht.array(data(), split=1, comm=comm_of(3), device=device)
    fn = getattr(ht, name)
    args = (2.5,) if name == "full_like" else ()
    same = fn(a, *args)
    assert same.device == device and same.split == 1 and same.shape == a.shape
    other = "cpu" if device == "gpu" else "gpu"
    moved = fn(a, *args, device=other)
    assert moved.device == other
    if name != "empty_like":
        expected = {"zeros_like": 0.0, "ones_like": 1.0, "full_like": 2.5}[name]
        check(same, np.full(a.shape, expected), device)
        check(moved, np.full(a.shape, expected), other)


# --------------------------------------------------------------------------- random
RANDOM = [
    ("rand", lambda d, c: ht.random.rand(9, 4, split=0, comm=c, device=d), True),
    ("random", lambda d, c: ht.random.random((9, 4), split=1, comm=c, device=d), True),
    ("randint", lambda d, c: ht.random.randint(-5, 50, (9, 4), split=0, comm=c, device=d), True),
    ("randperm", lambda d, c: ht.random.randperm(11, split=0, comm=c, device=d), True),
    ("randn", lambda d, c: ht.random.randn(9, 4, split=1, comm=c, device=d), False),
    ("normal", lambda d, c: ht.random.normal(2.0, 3.0, (9, 4), split=0, comm=c, device=d), False),
]


@pytest.mark.parametrize(("name", "make", "exact"), RANDOM, ids=[r[0] for r in RANDOM])
def test_random_numbers_match_across_devices(gpu_backend, comm_of, name, make, exact):
    ht.random.seed(11)
    cpu = make("cpu", comm_of(3))
    ht.random.seed(11)
    gpu = make("gpu", comm_of(3))
    assert cpu.device == "cpu" and gpu.device == "gpu"
    check(gpu, cpu.numpy(), "gpu")  # drawn on host on the worker, copied there
    if exact:  # integers and uniforms: bit-identical
        np.testing.assert_array_equal(gpu.numpy(), cpu.numpy())
    ht.random.seed(11)
    assert not np.array_equal(make("gpu", comm_of(4)).numpy(), make("gpu", comm_of(4)).numpy())


# --------------------------------------------------------------------- distribution
@pytest.mark.parametrize("size", [1, 3, 5])
def test_redistribute_resplit_balance_keep_chunks_on_device_and_rank(client, device, comm_of, size):
    comm = comm_of(size)
    values = data((9, 4))
    a = ht.array(values, split=0, comm=comm, device=device)
    target = a.lshape_map
    target[:, 0] = torch.tensor([9] + [0] * (size - 1))
    a.redistribute_(target_map=target)
    assert a.lshape_map[:, 0].tolist() == target[:, 0].tolist()
    check(a, values, device)
    a.balance_()
    assert a.balanced
    check(a, values, device)
    a.resplit_(1)
    check(a, values, device)
    a = a.persist(wait=True)
    assert holders(client, a) == [(w,) for w in comm.workers]
    a.resplit_(None)
    check(a, values, device)
    a.resplit_(0)
    check(a, values, device)


def test_p2p_resplit_of_device_chunks_is_refused(gpu_backend, comm_of):
    g = ht.array(data(), split=0, comm=comm_of(3), device="gpu")
    with pytest.raises(
        ValueError, match=r"`method` 'p2p' needs host chunks .* got chunks on gpu:0"
    ):
        g.resplit_(1, method="p2p")
    assert g.split == 0
    c = ht.array(data(), split=0, comm=comm_of(3))
    check(c.resplit(1, method="p2p"), data(), "cpu")


def test_shm_relayout_of_device_chunks_is_refused_and_none_keeps_tasks(gpu_backend, comm_of):
    g = ht.array(data(), split=0, comm=comm_of(3), device="gpu")
    with pytest.raises(
        ValueError, match=r"`method` 'shm' needs host chunks .* got chunks on gpu:0"
    ):
        g.resplit_(1, method="shm")
    assert g.split == 0
    b = g.resplit(1)  # None: Dask's comms, never /dev/shm
    assert not any(_transport.is_control(k) for k in dict(b.to_dask().dask))
    check(b, data(), "gpu")


# ------------------------------------------------------------------------ elementwise
def test_elementwise_and_operators(device, comm_of):
    x = data()
    a = ht.array(x, split=0, comm=comm_of(3), device=device)
    b = ht.array(x.T.copy(), split=1, comm=comm_of(3), device=device).T
    check(a * b + 1, x * x + 1, device)
    check(ht.exp(a / 10), np.exp(x / 10), device)
    check(ht.where(a > 0, a, -a), np.abs(x), device)
    check((a >= 1.5).astype(ht.int32), (x >= 1.5).astype(np.int32), device)
    check(ht.maximum(a, 0.0), np.maximum(x, 0.0), device)


# ------------------------------------------------------------------------- reductions
@pytest.mark.parametrize("split", [None, 0, 1])
@pytest.mark.parametrize("name", ["sum", "mean", "std", "var", "min", "max", "argmax", "argmin"])
def test_reductions(device, comm_of, split, name):
    x = data()
    x[3, 1] = 40.0  # a unique max and min for the arg reductions
    x[5, 2] = -40.0
    a = ht.array(x, split=split, comm=comm_of(3), device=device)
    for axis in (None, 0, 1):
        check(getattr(a, name)(axis), getattr(np, name)(x, axis=axis), device)
    check(getattr(ht, name)(a, 0, keepdims=True), getattr(np, name)(x, 0, keepdims=True), device)


@pytest.mark.parametrize("split", [0, 1])
def test_cumsum_and_empty_ranks(device, comm_of, split):
    x = data((3, 4))
    a = ht.array(x, split=split, comm=comm_of(5), device=device)  # ranks without rows
    check(ht.cumsum(a, 0), np.cumsum(x, 0), device)
    check(ht.cumsum(a, 1), np.cumsum(x, 1), device)
    check(a.sum(split), x.sum(split), device)


# ----------------------------------------------------------------------- manipulation
@pytest.mark.parametrize("split", [0, 1])
def test_transpose_reshape_concatenate_flip(device, comm_of, split):
    x = data((6, 4))
    a = ht.array(x, split=split, comm=comm_of(4), device=device)
    check(a.T, x.T, device)
    check(a.reshape((4, 6)), x.reshape(4, 6), device)
    check(a.reshape((24,)), x.reshape(24), device)
    check(ht.concatenate([a, a * 2], axis=0), np.concatenate([x, x * 2], 0), device)
    check(ht.concatenate([a, a], axis=1), np.concatenate([x, x], 1), device)
    check(ht.flip(a, split), np.flip(x, split), device)
    check(ht.pad(a, ((1, 2), (0, 1))), np.pad(x, ((1, 2), (0, 1))), device)


# --------------------------------------------------------------------------- indexing
@pytest.mark.parametrize("split", [None, 0, 1])
def test_getitem(device, comm_of, split):
    x = data()
    a = ht.array(x, split=split, comm=comm_of(3), device=device)
    check(a[1:6:2, ::-1], x[1:6:2, ::-1], device)
    check(a[2], x[2], device)
    check(a[:, 3], x[:, 3], device)
    check(a[[5, 0, 3]], x[[5, 0, 3]], device)
    check(a[:, [3, 0]], x[:, [3, 0]], device)
    check(a[a > 1.0], x[x > 1.0], device)
    assert a[4, 1].item() == x[4, 1]


@pytest.mark.parametrize("split", [None, 0])
def test_setitem(device, comm_of, split):
    x = data()
    a = ht.array(x, split=split, comm=comm_of(3), device=device)
    a[1:3] = 5.0
    x[1:3] = 5.0
    a[:, 0] = np.arange(7.0)  # host values go to the device on the workers
    x[:, 0] = np.arange(7.0)
    a[[0, 6], 1:3] = ht.array([[1.0, 2.0], [3.0, 4.0]], comm=a.comm, device=device)
    x[[0, 6], 1:3] = [[1.0, 2.0], [3.0, 4.0]]
    a[a < 0] = -1.0
    x[x < 0] = -1.0
    check(a, x, device)


def test_mixed_devices_raise_before_any_task(gpu_backend, comm_of):
    c = ht.array(data(), split=0, comm=comm_of(3))
    g = ht.array(data(), split=0, comm=comm_of(3), device="gpu")
    name = g.to_dask().name
    with pytest.raises(
        ValueError, match=r"`value` must be on the array's device, got cpu:0 and gpu:0"
    ):
        g[0:2] = c[0:2]
    assert g.to_dask().name == name
    with pytest.raises(ValueError, match=r"operands of `matmul` must be on one device"):
        c @ g.T
    check(c.gpu() @ g.T, data() @ data().T, "gpu")


# ---------------------------------------------------------------------------- matmul
@pytest.mark.parametrize(("sa", "sb"), [(None, None), (0, None), (0, 0), (1, 0), (1, 1), (None, 1)])
def test_matmul(device, comm_of, sa, sb):
    x, y = data((6, 5)), data((5, 3)) / 7
    a = ht.array(x, split=sa, comm=comm_of(3), device=device)
    b = ht.array(y, split=sb, comm=comm_of(3), device=device)
    check(a @ b, x @ y, device)
    check(ht.dot(a[:5, 0], b[:, 0]), x[:5, 0] @ y[:, 0], device)


# ------------------------------------------------------------------------------ sort
@pytest.mark.parametrize("split", [None, 0, 1])
def test_sort_and_argsort(device, comm_of, split):
    x = np.array([[3.0, -1.0, 2.5, 7.0], [0.5, 9.0, -4.0, 1.0], [2.0, 2.0, 8.0, -3.0]])
    a = ht.array(x, split=split, comm=comm_of(3), device=device)
    check(ht.sort(a, axis=1), np.sort(x, axis=1), device)  # lanes sorted where they live
    check(ht.sort(a, axis=0), np.sort(x, axis=0), device)
    check(ht.sort(a, axis=1, descending=True), -np.sort(-x, axis=1), device)
    check(ht.argsort(a, axis=1), np.argsort(x, axis=1, kind="stable"), device)
    flat = ht.array(x.ravel(), split=0 if split is not None else None, comm=a.comm, device=device)
    check(ht.sort(flat), np.sort(x.ravel()), device)  # the sample sort, through host copies
    check(ht.argsort(flat, descending=True), np.argsort(-x.ravel(), kind="stable"), device)


# -------------------------------------------------------------------------- per rank
def _device_piece(rank):
    return _xp.to_device(np.full((2, 3), float(rank)), "gpu")  # the worker's "gpu" backend


def test_map_local_runs_on_device_chunks_and_keeps_the_device(device, comm_of):
    x = data()
    a = ht.array(x, split=0, comm=comm_of(3), device=device)
    b = a.map_local(lambda t, rank: t * 2 + rank)
    counts = a.lshape_map[:, 0].tolist()
    ranks = np.repeat(np.arange(3), counts)[:, None]
    check(b, x * 2 + ranks, device)
    t = a.larray  # a CUDA tensor for CuPy chunks; the stand-in lives in host memory
    assert isinstance(t, torch.Tensor) and t.device.type == _xp.backend(device).torch_device
    np.testing.assert_array_equal(t.cpu().numpy(), x[: counts[0]])


def test_per_rank_device_pieces_are_joined_on_the_device(gpu_backend, comm_of):
    comm = comm_of(3)
    pieces = ht.per_rank(_device_piece, comm=comm)
    g = ht.array(pieces, is_split=0)
    check(g, np.repeat(np.arange(3.0), 2)[:, None] * np.ones((6, 3)), "gpu")
    mixed = ht.per_rank(lambda r: _device_piece(r) if r else np.zeros((2, 3)), comm=comm)
    with pytest.raises(
        ValueError,
        match=r"`is_split` pieces must be on one device: rank 0 has cpu:0, rank 1 has gpu:0",
    ):
        ht.array(mixed, is_split=0)


# -------------------------------------------------------------------------- real CuPy
@pytest.mark.gpu
def test_cupy_chunks_end_to_end(standin, client, comm_of):
    """The tour's steps on real CuPy chunks: device arrays all the way, CUDA tensors at the edge."""
    with gpu_backend_of("cupy", standin, client) as cupy_ndarray:
        x = data((9, 4))
        a = ht.array(x, split=0, comm=comm_of(2), device="gpu")
        assert type(a.to_dask()._meta) is cupy_ndarray
        np.testing.assert_allclose((a * a + 1).sum(1).numpy(), (x * x + 1).sum(1))
        np.testing.assert_allclose(a.resplit(1).numpy(), x)
        np.testing.assert_allclose((a @ a.T).numpy(), x @ x.T)
        assert a.larray.is_cuda
        ht.random.seed(3)
        r = ht.random.randint(0, 100, (9, 4), split=0, comm=comm_of(2), device="gpu").numpy()
        ht.random.seed(3)
        np.testing.assert_array_equal(
            r, ht.random.randint(0, 100, (9, 4), split=0, comm=comm_of(2)).numpy()
        )


# ------------------------------------------------------------------- qr, svd, norms
@pytest.mark.parametrize(
    ("shape", "split"), [((9, 3), 0), ((9, 3), 1), ((3, 8), 1), ((2, 7, 3), 1), ((4, 3), None)]
)
def test_qr_svd_and_norms(device, comm_of, shape, split):
    x = np.random.default_rng(3).standard_normal(shape)
    a = ht.array(x, split=split, comm=comm_of(3), device=device)
    q, r = ht.linalg.qr(a, procs_to_merge=2)
    check(q @ r, x, device)
    expected_r = np.array(
        [
            _tsqr._positive_diagonal(None, np.linalg.qr(m, mode="r"))[1]
            for m in x.reshape(-1, *shape[-2:])
        ]
    )
    check(r, expected_r.reshape(r.shape), device)
    check(ht.linalg.svd(a, compute_uv=False), np.linalg.svd(x, compute_uv=False), device)
    u, s, vh = ht.linalg.svd(a)
    check(u, u.numpy(), device)
    np.testing.assert_allclose((u.numpy() * s.numpy()[..., None, :]) @ vh.numpy(), x, atol=1e-10)
    check(ht.linalg.vector_norm(a, axis=-2), np.linalg.vector_norm(x, axis=-2), device)
