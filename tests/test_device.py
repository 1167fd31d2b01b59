"""Devices: the chunk namespace (dndask._xp), the strict stand-in for CuPy, device= factories.

The stand-in (tests/_standin.py) is registered as the "gpu" backend: the same registry CuPy
uses. Its chunks refuse implicit host conversion and numpy operands, and refuse to be
deserialized in the driver, so a passing test proves the dispatch and that the driver
only ever receives chunks copied to host explicitly. Where CUDA is, the device tests run
again with real CuPy as the "gpu" backend (the ``gpu`` marker; conftest's ``device``).
"""

import os
import sys

import numpy as np
import pytest
from conftest import holders, on_device

import dndask as ht
from dndask import _xp

sys.path.insert(0, os.path.dirname(__file__))
from _standin import StrictArray


# ------------------------------------------------------------------ the stand-in itself
def test_standin_refuses_implicit_host_conversion():
    x = StrictArray(np.arange(3.0))
    with pytest.raises(TypeError, match="implicit conversion"):
        np.asarray(x)
    with pytest.raises(TypeError, match="numpy-array operand refused"):
        x + np.ones(3)
    with pytest.raises(TypeError, match="numpy-array operand refused"):
        np.concatenate([x, np.ones(3)])
    np.testing.assert_array_equal(x.get(), [0.0, 1.0, 2.0])
    assert isinstance(x + 1, StrictArray)
    assert isinstance(np.concatenate([x, x]), StrictArray)
    assert isinstance(np.sum(x, axis=0), (StrictArray, np.floating))


def test_standin_dlpack_and_driver_deserialization():
    import pickle

    import torch

    x = StrictArray(np.arange(4.0))
    assert torch.from_dlpack(x).tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(TypeError, match="deserialized outside a worker"):
        pickle.loads(pickle.dumps(x))
    assert pickle.loads(pickle.dumps(StrictArray(np.empty((0, 2))))).shape == (0, 2)


# ------------------------------------------------------------------------------- _xp
def test_xp_meta_namespace_and_copies(device):
    m = _xp.meta(np.float32, 2, device)
    assert m.shape == (0, 0) and m.dtype == np.float32
    assert _xp.device_of(m) == device
    assert on_device(m, device)
    chunk = _xp.to_device(np.arange(3), device)
    assert _xp.namespace_of(chunk) is _xp.namespace_of(m)
    host = _xp.to_host(chunk)
    assert type(host) is np.ndarray and host.tolist() == [0, 1, 2]
    assert _xp.empty_like_meta(m, (2, 5)).shape == (2, 5)


@pytest.mark.parametrize(
    ("device", "error", "match"),
    [
        ("tpu", ValueError, "`device` must be 'cpu', 'gpu' or 'gpu:<n>', got 'tpu'"),
        ("gpu:x", ValueError, "got 'gpu:x'"),
        (3, TypeError, "`device` must be a Device or a str, got int"),
    ],
)
def test_bad_device(device, error, match):
    with pytest.raises(error, match=match):
        _xp.sanitize_device(device)
    with pytest.raises(error, match=match):
        ht.zeros(3, device=device)


def test_device_without_backend_names_what_is_missing(monkeypatch):
    monkeypatch.delitem(_xp._BACKENDS, "gpu")
    with pytest.raises(
        RuntimeError, match="device 'gpu:0' needs CuPy and a CUDA GPU: CuPy is not installed"
    ):
        ht.zeros(3, device="gpu")


def test_use_device_sets_the_factory_default(gpu_backend, comm_of):
    try:
        ht.use_device("gpu")
        assert ht.get_device() == "gpu"
        a = ht.arange(6, split=0, comm=comm_of(2))
        assert a.device == "gpu"
    finally:
        ht.use_device("cpu")
    assert ht.get_device() == "cpu" and ht.arange(3).device == "cpu"


# ------------------------------------------------------------------------ factories
FACTORIES = [
    ("zeros", lambda d, s, c: ht.zeros((7, 3), split=s, comm=c, device=d), np.zeros((7, 3))),
    ("ones", lambda d, s, c: ht.ones((7, 3), split=s, comm=c, device=d), np.ones((7, 3))),
    ("full", lambda d, s, c: ht.full((7, 3), 2.5, split=s, comm=c, device=d), np.full((7, 3), 2.5)),
    (
        "arange",
        lambda d, s, c: ht.arange(2, 9, split=0 if s is not None else None, comm=c, device=d),
        np.arange(2, 9),
    ),
    (
        "linspace",
        lambda d, s, c: ht.linspace(0, 1, 7, split=0 if s is not None else None, comm=c, device=d),
        np.linspace(0, 1, 7),
    ),
    ("eye", lambda d, s, c: ht.eye((7, 3), split=s, comm=c, device=d), np.eye(7, 3)),
]


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5])
@pytest.mark.parametrize(("name", "make", "expected"), FACTORIES, ids=[f[0] for f in FACTORIES])
def test_factories_on_device(comm_of, device, size, name, make, expected):
    for split in (None, 0, 1):
        a = make(device, split, comm_of(size))
        assert a.device == device
        assert on_device(a.to_dask()._meta, device)
        result = a.numpy()  # chunks copied to host on their workers, then gathered
        assert type(result) is np.ndarray
        np.testing.assert_allclose(result, expected.astype(result.dtype), rtol=1e-6)


# --------------------------------------------------------------------- cpu() and gpu()
@pytest.mark.parametrize("size", [1, 3, 5])
def test_cpu_gpu_move_each_chunk_on_its_rank(gpu_backend, client, comm_of, size):
    comm = comm_of(size)
    a = ht.arange(12, split=0, comm=comm).reshape((4, 3), new_split=0).persist(wait=True)
    g = a.gpu().persist(wait=True)
    assert g.device == "gpu" and on_device(g.to_dask()._meta, "gpu")
    assert len(g.to_dask().__dask_graph__().layers[g.to_dask().name]) == size  # one task a chunk
    assert holders(client, g) == [(w,) for w in comm.workers]
    back = g.cpu().persist(wait=True)
    assert back.device == "cpu" and holders(client, back) == [(w,) for w in comm.workers]
    np.testing.assert_array_equal(back.numpy(), np.arange(12).reshape(4, 3))
    assert g.gpu() is g and back.cpu() is back


def test_mixing_devices_raises_before_any_task(gpu_backend, comm_of):
    a = ht.ones(4, split=0, comm=comm_of(2))
    g = ht.ones(4, split=0, comm=comm_of(2), device="gpu")
    with pytest.raises(
        ValueError, match=r"operands of `add` must be on one device, got cpu:0 and gpu:0"
    ):
        a + g
    np.testing.assert_array_equal((a.gpu() + g).numpy(), [2.0] * 4)
    np.testing.assert_array_equal((g * g + 1).numpy(), [2.0] * 4)
