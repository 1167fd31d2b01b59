"""numpy's protocols and the array API namespace: numpy calls return DNDarrays, never gathers."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_layout, layouts, skewed

import dndask as ht
from dndask import array_api


@pytest.mark.parametrize(("shape", "split", "n"), layouts([(6, 4)], rank_counts=(1, 3, 5)))
def test_numpy_functions_return_dndarrays(comm_of, shape, split, n):
    comm = comm_of(n)
    g = np.arange(24.0).reshape(shape)
    a = skewed(ht.array(g, split=split, comm=comm))
    assert_layout(np.exp(a), np.exp(g), split, comm)
    assert_layout(np.add(a, g), g + g, split, comm)
    np.testing.assert_allclose(np.sum(a).numpy(), np.sum(g))
    np.testing.assert_allclose(np.sum(a, axis=1).numpy(), np.sum(g, axis=1))
    np.testing.assert_allclose(np.mean(a, 0).numpy(), np.mean(g, 0))
    np.testing.assert_allclose(np.std(a, 0, None, None, 1).numpy(), np.std(g, 0, ddof=1))
    np.testing.assert_allclose(np.var(a, axis=1, ddof=1).numpy(), np.var(g, axis=1, ddof=1))
    np.testing.assert_allclose(np.amax(a, axis=0).numpy(), np.amax(g, axis=0))
    np.testing.assert_array_equal(np.argmin(a, axis=1).numpy(), np.argmin(g, axis=1))
    np.testing.assert_array_equal(np.cumsum(a, axis=0).numpy(), np.cumsum(g, axis=0))
    assert_layout(np.where(a > 5, a, 0.0), np.where(g > 5, g, 0.0), split, comm)
    assert_layout(np.clip(a, 2, 7), np.clip(g, 2, 7), split, comm)
    assert_layout(np.round(a / 7, 2), np.round(g / 7, 2), split, comm)
    assert isinstance(np.sum(a), ht.DNDarray)
    assert np.shape(a) == g.shape and np.ndim(a) == 2 and np.size(a) == g.size
    assert np.allclose(a, g) is True


def test_ufunc_methods_and_multiple_outputs(comm_of):
    comm = comm_of(4)
    g = np.arange(1.0, 13.0).reshape(4, 3)
    a = ht.array(g, split=0, comm=comm)
    np.testing.assert_allclose(np.add.reduce(a, axis=1).numpy(), np.add.reduce(g, axis=1))
    np.testing.assert_allclose(np.multiply.reduce(a).numpy(), np.multiply.reduce(g))
    np.testing.assert_allclose(np.maximum.reduce(a, axis=0).numpy(), g.max(0))
    np.testing.assert_allclose(np.add.accumulate(a).numpy(), np.add.accumulate(g))
    q, r = np.divmod(a, 5)
    assert_layout(q, g // 5, 0, comm)
    assert_layout(r, g % 5, 0, comm)
    mantissa, exponent = np.frexp(a)
    assert_layout(mantissa, np.frexp(g)[0], 0, comm)
    assert_layout(exponent, np.frexp(g)[1], 0, comm)
    out = ht.zeros((4, 3), dtype=ht.float64, split=1, comm=comm)
    assert np.multiply(a, 2, out=out) is out
    assert_layout(out, g * 2, 1, comm)
    with pytest.raises(NotImplementedError, match=r"`numpy\.add\.outer` is not supported"):
        np.add.outer(a, a)
    with pytest.raises(TypeError, match="`out` must hold DNDarrays, got ndarray"):
        np.exp(a, out=np.zeros((4, 3)))


def test_unsupported_numpy_functions_raise_instead_of_gathering(comm_of):
    a = ht.arange(10, split=0, comm=comm_of(3))
    for call, name in [
        (lambda: np.sort(a), "numpy.sort"),
        (lambda: np.unique(a), "numpy.unique"),
        (lambda: np.fft.fft(a), "numpy.fft.fft"),
    ]:
        with pytest.raises(NotImplementedError, match=f"`{name}` is not supported by dndask"):
            call()
    assert np.asarray(a).tolist() == list(range(10))  # the explicit gather still works


def test_array_api_namespace(comm_of):
    comm = comm_of(3)
    g = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
    a = ht.array(g, split=1, comm=comm)
    xp = a.__array_namespace__()
    assert xp is array_api and xp.__array_api_version__ == "2023.12"
    assert a.__array_namespace__(api_version="2022.12") is array_api
    with pytest.raises(ValueError, match="`api_version` must be one of"):
        a.__array_namespace__(api_version="2019.01")
    assert_layout(xp.acos(a), np.arccos(g), 1, comm)
    assert_layout(xp.pow(a, 2), g**2, 1, comm)
    assert_layout(xp.bitwise_invert(xp.asarray(a > 0)), ~(g > 0), 1, comm)
    np.testing.assert_allclose(xp.std(a, axis=0, correction=1).numpy(), np.std(g, 0, ddof=1))
    np.testing.assert_allclose(xp.cumulative_sum(a, axis=1).numpy(), np.cumsum(g, 1))
    assert xp.isdtype(a.dtype, "real floating") and not xp.isdtype(a.dtype, "integral")
    assert xp.isdtype(xp.int8, ("bool", "signed integer"))
    assert xp.result_type(a, xp.float32) == np.float64
    assert xp.can_cast(xp.int8, xp.int64) and not xp.can_cast(a, xp.int8)
    assert xp.finfo(xp.float32).bits == 32 and xp.iinfo(xp.int16).max == 2**15 - 1
    assert xp.asarray(a) is a and xp.astype(a, xp.float32).dtype == ht.float32
    assert xp.e == np.e and xp.newaxis is None
    assert not hasattr(xp, "sort")
    with pytest.raises(NotImplementedError, match="`sort` of the array API is not implemented"):
        xp.sort  # noqa: B018 (the attribute access is the test)
    with pytest.raises(NotImplementedError, match="`correction` must be a whole number"):
        xp.var(a, correction=0.5)
    assert sorted(array_api.__all__) == array_api.__all__


def test_numpy_linalg_keeps_numpy_conventions(comm_of):
    comm = comm_of(3)
    g = np.random.default_rng(3).standard_normal((12, 3))
    a = ht.array(g, split=0, comm=comm)
    r = np.linalg.qr(a, mode="r")
    assert isinstance(r, ht.DNDarray)
    np.testing.assert_allclose(np.abs(r.numpy()), np.abs(np.linalg.qr(g, mode="r")), atol=1e-12)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose((u.numpy() * s.numpy()) @ vh.numpy(), g, atol=1e-12)
    np.testing.assert_allclose(np.linalg.svd(a, compute_uv=False).numpy(), np.linalg.svd(g)[1])
    np.testing.assert_allclose(np.linalg.norm(a).numpy(), np.linalg.norm(g))
    assert_layout(np.matmul(a, g.T[:, :2]), g @ g.T[:, :2], 0, comm)
    np.testing.assert_allclose((a @ a.T).numpy(), g @ g.T, atol=1e-12)
