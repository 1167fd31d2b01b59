"""Statistics, NaN reductions, square-matrix linalg, sorting and set operations, I/O and xarray on device chunks.

Every case runs one operation on a cpu array and on the same array on the strict stand-in
(tests/_standin.py, the "gpu" backend): the device result must hold the cpu result's values,
be on the device (its meta and its computed chunks are stand-in arrays) and never have been
converted to host implicitly (the stand-in refuses ``__array__``, numpy operands and being
deserialized in the driver, so any such step fails the test). Where CUDA is, every case runs
again with real CuPy as the "gpu" backend (the ``gpu`` marker; conftest's ``gpu_backend``).
"""

import numpy as np
import pytest
from conftest import on_device

import dndask as ht
import dndask.heat as hf


def _on(device: str, a: ht.DNDarray) -> None:
    assert a.device == device
    assert on_device(a.to_dask()._meta, device)


def same(cpu, gpu) -> None:
    """``gpu`` is the device twin of ``cpu``: same structure, values, dtypes; on the device."""
    if isinstance(cpu, (tuple, list)):
        assert isinstance(gpu, (tuple, list)) and len(gpu) == len(cpu)
        for c, g in zip(cpu, gpu, strict=True):
            same(c, g)
        return
    if isinstance(cpu, ht.DNDarray):
        assert isinstance(gpu, ht.DNDarray)
        _on("cpu", cpu)
        _on("gpu", gpu)
        assert gpu.split == cpu.split and gpu.shape == cpu.shape
        expected, got = cpu.numpy(), gpu.numpy()
        assert type(got) is np.ndarray and got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12, equal_nan=True)
        return
    assert not isinstance(gpu, ht.DNDarray)
    np.testing.assert_allclose(np.asarray(gpu), np.asarray(cpu), rtol=1e-12, equal_nan=True)


def run(gpu_backend, comm_of, op, *arrays, split=0, ranks=3):
    """``op`` on ``arrays`` (numpy) made into DNDarrays on cpu and on the stand-in."""
    results = []
    for device in ("cpu", "gpu"):
        made = [
            ht.array(x, split=None if x.ndim == 0 else split, comm=comm_of(ranks), device=device)
            for x in arrays
        ]
        results.append(op(*made))
    same(*results)
    return results


def floats(shape=(7, 4), seed=0):
    return np.random.default_rng(seed).normal(size=shape).round(3)


def ints(shape=(13,), high=6, seed=1):
    return np.random.default_rng(seed).integers(0, high, size=shape)


with_nans = floats()
with_nans[2, 1] = np.nan
with_nans[5, 3] = np.nan

# (id, op on DNDarrays, inputs)
CASES = [
    # statistics
    ("percentile", lambda a: ht.percentile(a, [10.0, 50.0, 90.0], axis=0), [floats()]),
    ("percentile-all", lambda a: ht.percentile(a, 30.0), [floats()]),
    ("percentile-lanes", lambda a: ht.percentile(a, [25.0, 75.0], axis=1), [floats()]),
    ("median", lambda a: ht.median(a, axis=0), [floats()]),
    ("median-all", lambda a: ht.median(a), [floats()]),
    ("median-sketched", lambda a: ht.median(a, sketched=True), [floats((40,))]),
    ("nanmedian", lambda a: ht.nanmedian(a, axis=0), [with_nans]),
    ("nanmedian-all", lambda a: ht.nanmedian(a), [with_nans]),
    ("nanquantile-all", lambda a: ht.nanquantile(a, [0.1, 0.5, 0.9]), [with_nans]),
    ("quantile-lanes", lambda a: ht.quantile(a, [0.25, 0.75], axis=1), [floats()]),
    ("average", lambda a: ht.average(a, axis=0), [floats()]),
    (
        "average-weights",
        lambda a, w: ht.average(a, 0, weights=w, returned=True),
        [floats(), np.abs(floats(seed=3)) + 0.1],
    ),
    ("histogram", lambda a: ht.histogram(a, bins=5), [floats((30,))]),
    (
        "histogram-range-weights",
        lambda a, w: ht.histogram(a, bins=4, range=(-1, 1), weights=w, density=True),
        [floats((30,)), np.abs(floats((30,), seed=2))],
    ),
    ("histc", lambda a: ht.histc(a, bins=6), [floats((30,))]),
    # signal: the windows are joined, padded and convolved on the device
    ("convolve", lambda a, v: ht.convolve(a, v), [floats((30,)), floats((5,), seed=4)]),
    ("convolve-host-kernel", lambda a: ht.convolve(a, [1.0, -2.0, 0.5], "same"), [floats((9,))]),
    # square matrices: torch on the chunk's device through DLPack, and back the same way
    ("inv", lambda a: ht.linalg.inv(a), [floats((4, 4), seed=5) + 4 * np.eye(4)]),
    ("det", lambda a: ht.linalg.det(a), [floats((3, 4, 4), seed=6)]),
    ("matrix_exp", lambda a: ht.linalg.matrix_exp(a), [floats((4, 4), seed=7) / 4]),
    (
        "solve",
        lambda a, b: ht.linalg.solve(a, b),
        [floats((4, 4), seed=8) + 4 * np.eye(4), floats((4, 2), seed=9)],
    ),
    ("bincount", lambda a: ht.bincount(a), [ints()]),
    (
        "bincount-weights",
        lambda a, w: ht.bincount(a, weights=w, minlength=9),
        [ints(), floats((13,))],
    ),
    ("digitize", lambda a: ht.digitize(a, np.array([-1.0, 0.0, 0.5])), [floats()]),
    (
        "digitize-dndarray",
        lambda a, b: ht.digitize(a, b, right=True),
        [floats(), np.array([-1.0, 0.0, 0.5])],
    ),
    ("bucketize", lambda a: ht.bucketize(a, np.array([-1.0, 0.0, 0.5])), [floats()]),
    ("cov", lambda a: ht.cov(a), [floats((3, 8))]),
    ("cov-y", lambda a, b: ht.cov(a, b, rowvar=False), [floats((8, 3)), floats((8, 2), seed=5)]),
    ("skew", lambda a: ht.skew(a, axis=0), [floats()]),
    ("kurtosis", lambda a: ht.kurtosis(a), [floats()]),
    ("ptp", lambda a: ht.ptp(a, axis=1), [floats()]),
    # NaN reductions and differences
    ("nansum", lambda a: ht.nansum(a, axis=0), [with_nans]),
    ("nansum-all", lambda a: ht.nansum(a), [with_nans]),
    ("nanprod", lambda a: ht.nanprod(a, axis=1), [with_nans]),
    ("diff", lambda a: ht.diff(a, axis=0), [floats()]),
    ("diff-n2-prepend", lambda a: ht.diff(a, n=2, axis=0, prepend=0.0, append=1.0), [floats()]),
    # sorting and set operations
    ("sort-1d", lambda a: ht.sort(a), [floats((20,))]),
    ("sort-ints-descending", lambda a: ht.sort(a, descending=True), [ints((20,), high=50)]),
    ("sort-stable", lambda a: ht.sort(a, kind="stable"), [floats((20,))]),
    ("sort-flat-2d", lambda a: ht.sort(a, axis=None), [ints((7, 4), high=9)]),
    ("argsort-flat", lambda a: ht.argsort(a, axis=None), [floats((7, 3))]),
    ("unique", lambda a: ht.unique(a), [ints((20,))]),
    ("unique-values-counts", lambda a: ht.unique(a, return_counts=True), [ints((20,))]),
    ("unique-floats-nan", lambda a: ht.unique(a, return_counts=True), [with_nans.ravel().round(0)]),
    ("unique-index", lambda a: ht.unique(a, return_index=True), [ints((20,))]),
    (
        "unique-counts",
        lambda a: ht.unique(a, return_counts=True, return_inverse=True),
        [ints((20,))],
    ),
    ("unique-axis", lambda a: ht.unique(a, axis=0), [ints((9, 2), high=2)]),
    ("unique_all", lambda a: tuple(ht.unique_all(a)), [ints((20,))]),
    ("topk", lambda a: ht.topk(a, 3, dim=0), [floats()]),
    ("topk-lanes", lambda a: ht.topk(a, 2, dim=1, largest=False), [floats()]),
    (
        "searchsorted",
        lambda a, v: ht.searchsorted(a, v),
        [np.sort(floats((20,))), floats((9,), seed=4)],
    ),
    (
        "searchsorted-right",
        lambda a: ht.searchsorted(a, np.array([0.0, 0.5]), side="right"),
        [np.sort(floats((20,)))],
    ),
    ("nonzero", lambda a: ht.nonzero(a), [ints((7, 4), high=3)]),
    ("where-1arg", lambda a: ht.where(a), [ints((7, 4), high=3)]),
    ("isin", lambda a, b: ht.isin(a, b), [ints((7, 4)), np.array([1, 4])]),
    ("isin-host", lambda a: ht.isin(a, np.array([0, 3]), invert=True), [ints((7, 4))]),
    ("take", lambda a: ht.take(a, np.array([5, 0, 3, 3]), axis=0), [floats()]),
    ("take-flat", lambda a: ht.take(a, np.array([1, 20, 7])), [floats()]),
    (
        "take_along_axis",
        lambda a, i: ht.take_along_axis(a, i, axis=1),
        [floats(), ints((7, 4), high=4)],
    ),
    # the Heat face's transcendental functions: torch's kernel on the chunk's device
    ("heat-exp", lambda a: hf.exp(hf.asarray(a)), [floats()]),
    ("heat-arctanh", lambda a: hf.arctanh(hf.asarray(a) / 4), [floats()]),
    ("partition", lambda a: ht.partition(a, 6), [floats((20,))]),
    ("partition-lanes", lambda a: ht.partition(a, 1, axis=1), [floats()]),
    ("argpartition", lambda a: ht.argpartition(a, [2, 9]), [floats((20,))]),
]


@pytest.mark.parametrize(("name", "op", "inputs"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("split", [None, 0])
def test_operation_runs_on_device_chunks(gpu_backend, comm_of, name, op, inputs, split):
    run(gpu_backend, comm_of, op, *inputs, split=split)


@pytest.mark.parametrize("split", [None, 0, 1])
def test_where_nonzero_and_partition_on_other_splits(gpu_backend, comm_of, split):
    x = ints((5, 6), high=3)
    run(gpu_backend, comm_of, lambda a: ht.nonzero(a), x, split=split, ranks=4)
    run(gpu_backend, comm_of, lambda a: ht.partition(a, 2, axis=1), x, split=split, ranks=4)
    run(gpu_backend, comm_of, lambda a: ht.sort(a, axis=None), x, split=split, ranks=4)


def test_histogram_edges_and_counts_stay_on_the_device_with_empty_ranks(gpu_backend, comm_of):
    x = floats((3,))  # five ranks, two of them without values
    _, gpu = run(
        gpu_backend, comm_of, lambda a: ht.histogram(a, bins=[-2.0, 0.0, 0.5, 2.0]), x, ranks=5
    )
    np.testing.assert_array_equal(gpu[0].numpy(), np.histogram(x, [-2.0, 0.0, 0.5, 2.0])[0])


# ----------------------------------------------------------------------- I/O
FORMATS = [
    ("hdf5", "x.h5", ("x",), "h5py"),
    ("zarr", "x.zarr", (), "zarr"),
    ("netcdf", "x.nc", ("x",), "h5netcdf"),
    ("csv", "x.csv", (), None),
]


@pytest.mark.parametrize(("fmt", "file", "args", "module"), FORMATS, ids=[f[0] for f in FORMATS])
@pytest.mark.parametrize("split", [None, 0, 1])
def test_save_copies_device_chunks_to_host_and_load_puts_them_on_the_device(
    gpu_backend, comm_of, tmp_path, fmt, file, args, module, split
):
    if module is not None:
        pytest.importorskip(module)
    x = floats()
    g = ht.array(x, split=split, comm=comm_of(3), device="gpu")
    path = str(tmp_path / file)
    ht.save(g, path, *args)  # each write task copies its chunk to host on its worker
    load = getattr(ht, f"load_{fmt}")
    host = load(path, *args, split=0, comm=comm_of(3))
    _on("cpu", host)
    np.testing.assert_allclose(host.numpy(), x, rtol=1e-6)
    dev = load(path, *args, split=1, comm=comm_of(3), device="gpu")
    _on("gpu", dev)
    assert dev.split == 1
    np.testing.assert_allclose(dev.numpy(), x, rtol=1e-6)
    np.testing.assert_allclose((dev * 2).sum(0).numpy(), (host * 2).sum(0).numpy(), rtol=1e-6)


def test_load_with_an_unknown_device_fails_before_reading(gpu_backend, comm_of, tmp_path):
    pytest.importorskip("h5py")
    path = str(tmp_path / "x.h5")
    ht.save_hdf5(ht.array(floats(), split=0, comm=comm_of(2)), path, "x")
    with pytest.raises(ValueError, match=r"`device` must be 'cpu', 'gpu' or 'gpu:<n>', got 'tpu'"):
        ht.load_hdf5(path, "x", device="tpu")


# -------------------------------------------------------------------- xarray
def test_to_xarray_keeps_the_device_or_converts_explicitly(gpu_backend, comm_of, tmp_path):
    pytest.importorskip("xarray")
    x = floats()
    g = ht.array(x, split=0, comm=comm_of(3), device="gpu")
    kept = g.to_xarray(dims=("t", "c"), name="v")
    assert on_device(kept.data._meta, "gpu")  # still device chunks, nothing computed
    back = ht.from_xarray(kept, split="t")
    _on("gpu", back)
    assert back.split == 0
    np.testing.assert_array_equal(back.numpy(), x)
    host = g.to_xarray(dims=("t", "c"), device="cpu")
    assert isinstance(host.data._meta, np.ndarray)
    np.testing.assert_array_equal(host.values, x)  # computing it gives host data
    moved = ht.from_xarray(kept, device="cpu")
    _on("cpu", moved)
    assert moved.to_xarray().dims == ("t", "c")
    np.testing.assert_array_equal(moved.numpy(), x)


def test_from_xarray_puts_in_memory_data_on_the_device(gpu_backend, comm_of, tmp_path):
    xr = pytest.importorskip("xarray")
    x = floats()
    da_ = xr.DataArray(x, dims=("t", "c"), name="v", attrs={"units": "K"})
    g = ht.from_xarray(da_, split="c", comm=comm_of(3), device="gpu")
    _on("gpu", g)
    assert g.split == 1
    np.testing.assert_array_equal(g.numpy(), x)
    assert g.to_xarray().attrs == {"units": "K"}
    ds = ht.from_xarray(xr.Dataset({"v": da_}), split="t", comm=comm_of(3), device="gpu")
    _on("gpu", ds.dnd.to_dndarray()["v"])
    pytest.importorskip("zarr")
    path = str(tmp_path / "l.zarr")
    ht.save_zarr(g.to_xarray(), path)  # a labelled save of device chunks
    np.testing.assert_array_equal(xr.open_zarr(path)["v"].values, x)


# ----------------------------------------------------------------- Heat face
def test_heat_face_forwards_device(gpu_backend, comm_of):
    import dndask.heat as hht

    comm = comm_of(3)
    made = [
        hht.zeros((4, 3), split=0, comm=comm, device="gpu"),
        hht.ones((4, 3), split=1, comm=comm, device="gpu:0"),
        hht.full((4, 3), 2.0, comm=comm, device=hht.Device("gpu")),
        hht.arange(5, split=0, comm=comm, device="gpu"),
        hht.linspace(0, 1, 5, split=0, comm=comm, device="gpu"),
        hht.eye(3, split=0, comm=comm, device="gpu"),
        hht.array(floats(), split=0, comm=comm, device="gpu"),
        hht.float32([1, 2, 3], device="gpu", comm=comm),
        hht.random.rand(4, 3, split=0, comm=comm, device="gpu"),
        hht.random.randn(4, 3, split=0, comm=comm, device="gpu"),
        hht.random.randint(0, 5, (4, 3), split=0, comm=comm, device="gpu"),
        hht.random.randperm(6, split=0, comm=comm, device="gpu"),
    ]
    for a in made:
        _on("gpu", a)
        a.numpy()
    c = hht.array(floats(), split=0, comm=comm)
    _on("gpu", hht.zeros_like(c, device="gpu"))
    _on("gpu", hht.asarray(c, device="gpu"))
    _on("cpu", hht.asarray(made[6], device="cpu"))
    np.testing.assert_array_equal(hht.asarray(made[6], device="cpu").numpy(), floats())
    try:
        hht.use_device("gpu")
        assert hht.get_device() == "gpu"
        _on("gpu", hht.ones((3,), split=0, comm=comm))
    finally:
        hht.use_device("cpu")
    _on("cpu", hht.ones((3,), split=0, comm=comm))
    with pytest.raises(ValueError, match=r"`device` must be 'cpu', 'gpu' or 'gpu:<n>', got 'tpu'"):
        hht.zeros((2,), device="tpu")
    with pytest.raises(ValueError, match=r"`device` of `sum` must be None or 'cpu'"):
        hht.sum(c, device="gpu")


def test_operands_on_two_devices_raise_before_any_task(gpu_backend, comm_of):
    c = ht.array(np.sort(floats((9,))), split=0, comm=comm_of(3))
    g = ht.array(floats((4,)), split=0, comm=comm_of(3), device="gpu")
    with pytest.raises(ValueError, match=r"operands of `searchsorted` must be on one device"):
        ht.searchsorted(c, g)
    with pytest.raises(ValueError, match=r"operands of `isin` must be on one device"):
        ht.isin(g, c)
    i = ht.array(ints((7, 4), high=4), split=0, comm=comm_of(3), device="gpu")
    with pytest.raises(ValueError, match=r"operands of `take_along_axis` must be on one device"):
        ht.take_along_axis(ht.array(floats(), split=0, comm=comm_of(3)), i, axis=1)
    # a host list of test values or needles goes to the array's device
    same(ht.isin([1.0, 2.0], c), ht.isin([1.0, 2.0], c.gpu()))
    same(ht.searchsorted(c, [0.0, 1.0]), ht.searchsorted(c.gpu(), [0.0, 1.0]))


@pytest.mark.parametrize(("name", "op", "inputs"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("ranks", [1, 5])
def test_operation_runs_on_device_chunks_on_one_and_five_ranks(
    gpu_backend, comm_of, name, op, inputs, ranks
):
    run(gpu_backend, comm_of, op, *inputs, split=0, ranks=ranks)
