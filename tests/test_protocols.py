"""numpy's protocols and the array API namespace: numpy calls return DNDarrays, never gathers."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_layout, layouts, skewed, values_of

import dndask as ht
from dndask import array_api
from dndask._protocols import handled_functions, handler, implements


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
        (lambda: np.lexsort((a,)), "numpy.lexsort"),
        (lambda: np.intersect1d(a, a), "numpy.intersect1d"),
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
    assert not hasattr(xp, "meshgrid")
    with pytest.raises(NotImplementedError, match="`meshgrid` of the array API is not implemented"):
        xp.meshgrid  # noqa: B018 (the attribute access is the test)
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


# ------------------------------------------------------------ the explicit registry
def _public_numpy_functions():
    """Every public numpy function that dispatches through ``__array_function__``."""
    for module in (np, np.linalg, np.fft):
        for name in sorted(dir(module)):
            f = getattr(module, name)
            if not name.startswith("_") and callable(f) and hasattr(f, "_implementation"):
                yield f


def test_unregistered_numpy_functions_raise(comm_of):
    a = ht.arange(6, split=0, comm=comm_of(2))
    unregistered = [f for f in _public_numpy_functions() if f not in handled_functions()]
    assert np.save in unregistered and np.lexsort in unregistered and len(unregistered) > 100
    for f in unregistered:
        with pytest.raises(NotImplementedError, match=r"is not supported by dndask for DNDarrays"):
            a.__array_function__(f, (ht.DNDarray,), (a,), {})


def test_np_save_is_not_routed_to_ht_save(comm_of, tmp_path):
    a = ht.arange(6, split=0, comm=comm_of(2))
    path = tmp_path / "a.npy"
    with pytest.raises(NotImplementedError, match=r"`numpy\.save` is not supported by dndask"):
        np.save(path, a)
    assert not path.exists() and list(tmp_path.iterdir()) == []


def test_registering_twice_or_a_ufunc_is_refused():
    with pytest.raises(ValueError, match=r"`numpy\.sum` is already implemented by sum"):
        implements(np.sum)(lambda a: a)
    with pytest.raises(TypeError, match="`numpy_functions` must be numpy functions"):
        implements(np.add)
    assert handler(np.sum) is ht.sum and handler(np.save) is None


def _examples(x):
    """numpy function -> its call on ``x`` (a numpy array or a DNDarray of the same values)."""
    col = x[:, 0]
    out = {
        np.all: lambda: np.all(x > 2, axis=0),
        np.any: lambda: np.any(x > 11),
        np.sum: lambda: np.sum(x, axis=1),
        np.prod: lambda: np.prod(x, 0),
        np.mean: lambda: np.mean(x),
        np.var: lambda: np.var(x, axis=0, ddof=1),
        np.std: lambda: np.std(x, 1),
        np.min: lambda: np.min(x, axis=0),
        np.amin: lambda: np.amin(x, 1),
        np.max: lambda: np.max(x),
        np.amax: lambda: np.amax(x, axis=0),
        np.argmin: lambda: np.argmin(x, axis=1),
        np.argmax: lambda: np.argmax(x),
        np.cumsum: lambda: np.cumsum(x, axis=0),
        np.cumprod: lambda: np.cumprod(x, 1),
        np.nansum: lambda: np.nansum(x / (x - 5), axis=0),
        np.nanprod: lambda: np.nanprod(x, 1),
        np.nanmean: lambda: np.nanmean(np.where(x > 10, np.nan, x)),
        np.nanvar: lambda: np.nanvar(x, axis=0, ddof=1),
        np.nanstd: lambda: np.nanstd(x, 1),
        np.nanmin: lambda: np.nanmin(x, axis=0),
        np.nanmax: lambda: np.nanmax(x),
        np.nanargmin: lambda: np.nanargmin(x, axis=1),
        np.nanargmax: lambda: np.nanargmax(x),
        np.nancumsum: lambda: np.nancumsum(x, axis=0),
        np.nancumprod: lambda: np.nancumprod(x, 1),
        np.round: lambda: np.round(x / 7, 2),
        np.around: lambda: np.around(x / 7),
        np.clip: lambda: np.clip(x, 2, 7),
        np.where: lambda: np.where(x > 5, x, 0.0),
        np.isclose: lambda: np.isclose(x, x + 1e-9),
        np.allclose: lambda: np.allclose(x, x + 1e-3),
        np.nan_to_num: lambda: np.nan_to_num(x / 0, posinf=7.0),
        np.real: lambda: np.real(x),
        np.imag: lambda: np.imag(x),
        np.arange: lambda: np.arange(5, like=x),
        np.array: lambda: np.array([1.5, 2.0], like=x),
        np.empty: lambda: np.empty((2, 3), like=x).shape,
        np.eye: lambda: np.eye(3, 2, like=x),
        np.full: lambda: np.full(4, 2.5, like=x),
        np.ones: lambda: np.ones(3, like=x),
        np.zeros: lambda: np.zeros((2, 2), like=x),
        np.empty_like: lambda: np.empty_like(x).shape,
        np.full_like: lambda: np.full_like(x, 3.0),
        np.ones_like: lambda: np.ones_like(x),
        np.zeros_like: lambda: np.zeros_like(x),
        np.concatenate: lambda: np.concatenate([x, x], axis=1),
        np.expand_dims: lambda: np.expand_dims(x, 0),
        np.flip: lambda: np.flip(x, 0),
        np.hstack: lambda: np.hstack([x, x]),
        np.moveaxis: lambda: np.moveaxis(x, 0, 1),
        np.pad: lambda: np.pad(x, 1),
        np.ravel: lambda: np.ravel(x),
        np.repeat: lambda: np.repeat(x, 2, axis=0),
        np.reshape: lambda: np.reshape(x, (3, 4)),
        np.roll: lambda: np.roll(x, 1, axis=0),
        np.rot90: lambda: np.rot90(x, 1, (0, 1)),
        np.lib.stride_tricks.sliding_window_view: lambda: np.lib.stride_tricks.sliding_window_view(
            x, 2, axis=0
        ),
        np.squeeze: lambda: np.squeeze(np.reshape(x, (1, 12))),
        np.stack: lambda: np.stack([x, x]),
        np.swapaxes: lambda: np.swapaxes(x, 0, 1),
        np.tile: lambda: np.tile(x, (2, 1)),
        np.transpose: lambda: np.transpose(x),
        np.vstack: lambda: np.vstack([x, x]),
        np.dot: lambda: np.dot(x, np.transpose(x)),
        np.outer: lambda: np.outer(col, col),
        np.tensordot: lambda: np.tensordot(x, x, axes=([0], [0])),
        np.linalg.norm: lambda: np.linalg.norm(x),
        np.linalg.qr: lambda: np.abs(np.linalg.qr(x, mode="r")),
        np.linalg.svd: lambda: np.linalg.svd(x, compute_uv=False),
        np.average: lambda: np.average(x, axis=0),
        np.bincount: lambda: np.bincount(col.astype(np.int64)),
        np.histogram: lambda: np.histogram(x, bins=4),
        np.convolve: lambda: np.convolve(x[:, 0], [1.0, -2.0, 0.5], mode="same"),
        np.angle: lambda: np.angle(x - 1.0, deg=True),
        np.iscomplex: lambda: np.iscomplex(x),
        np.isreal: lambda: np.isreal(x),
        np.median: lambda: np.median(x, axis=0),
        np.broadcast_to: lambda: np.broadcast_to(x[:1], (3, *x.shape[1:])),
        np.broadcast_arrays: lambda: tuple(np.broadcast_arrays(x, x[:1])),
        np.percentile: lambda: np.percentile(x, 30, axis=1),
        np.quantile: lambda: np.quantile(x, [0.2, 0.7], axis=0),
        np.nanmedian: lambda: np.nanmedian(np.where(x > 10, np.nan, x)),
        np.nanpercentile: lambda: np.nanpercentile(np.where(x > 10, np.nan, x), 30, axis=1),
        np.nanquantile: lambda: np.nanquantile(np.where(x > 10, np.nan, x), 0.4, axis=0),
        np.sort: lambda: np.sort(x, axis=0),
        np.argsort: lambda: np.argsort(x, axis=None),
        np.partition: lambda: np.partition(x, 1, axis=1),
        np.argpartition: lambda: np.argpartition(x, 1, axis=1),
        np.unique: lambda: np.unique(x, return_counts=True),
        np.isin: lambda: np.isin(x, [2.0, 5.0]),
        np.nonzero: lambda: np.nonzero(x > 6),
        np.searchsorted: lambda: np.searchsorted(col, [2.0, 8.0]),
        np.take: lambda: np.take(x, [0, 5]),
        np.take_along_axis: lambda: np.take_along_axis(x, np.argsort(x, axis=1), axis=1),
        np.shape: lambda: np.shape(x),
        np.ndim: lambda: np.ndim(x),
        np.size: lambda: np.size(x),
    }
    optional = {
        (np, "concat"): lambda: np.concat([x, x]),
        (np, "permute_dims"): lambda: np.permute_dims(x, (1, 0)),
        (np, "cumulative_sum"): lambda: np.cumulative_sum(x, axis=1),
        (np, "cumulative_prod"): lambda: np.cumulative_prod(x, axis=0),
        (np, "round_"): lambda: np.round_(x),
        (np, "unique_all"): lambda: np.unique_all(x),
        (np, "unique_counts"): lambda: np.unique_counts(x),
        (np, "unique_inverse"): lambda: np.unique_inverse(x),
        (np, "unique_values"): lambda: np.sort(np.unique_values(x)),
        (np.linalg, "matmul"): lambda: np.linalg.matmul(x, np.transpose(x)),
        (np.linalg, "matrix_norm"): lambda: np.linalg.matrix_norm(x),
        (np.linalg, "outer"): lambda: np.linalg.outer(col, col),
        (np.linalg, "tensordot"): lambda: np.linalg.tensordot(x, x, axes=2),
        (np.linalg, "vecdot"): lambda: np.linalg.vecdot(x, x),
        (np.linalg, "vector_norm"): lambda: np.linalg.vector_norm(x, axis=0),
    }
    for (module, name), call in optional.items():
        if hasattr(module, name):
            out[getattr(module, name)] = call
    return out


def _flat(value) -> list:
    """Arrays and plain values of a result (tuples of DNDarrays unpacked)."""
    if isinstance(value, tuple) and any(isinstance(v, (ht.DNDarray, np.ndarray)) for v in value):
        return [w for v in value for w in _flat(v)]
    return [value]


def test_every_registered_function_round_trips(comm_of):
    g = np.arange(1.0, 13.0).reshape(4, 3)
    a = ht.array(g, split=0, comm=comm_of(3))
    ours, theirs = _examples(a), _examples(g)
    assert set(ours) == handled_functions(), "every registered function has an example here"
    got, expected = [], []
    with np.errstate(divide="ignore"):
        for f in ours:
            mine, numpys = _flat(ours[f]()), _flat(theirs[f]())
            assert len(mine) == len(numpys), f
            for m, n in zip(mine, numpys, strict=True):
                assert type(m) is type(n) or isinstance(m, ht.DNDarray), (f, m, n)
                got.append(m)
                expected.append((f, n))
    computed = iter(values_of(m for m in got if isinstance(m, ht.DNDarray)))  # one round trip
    for m, (f, n) in zip(got, expected, strict=True):
        if isinstance(m, ht.DNDarray):
            m = next(computed)
        np.testing.assert_allclose(m, n, rtol=1e-12, atol=1e-12, err_msg=str(f))
