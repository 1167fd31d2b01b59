"""xarray views of DNDarrays, the stateless .dnd accessor, and the climate example."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import time

import dask
import dask.array as da
import distributed
import numpy as np
import pandas as pd
import pytest
import torch
import xarray as xr
from conftest import LayoutBatch, assert_layout, holders, layouts, received_bytes, skewed

import dndask as ht
from dndask import _xarray

ROOT = pathlib.Path(__file__).resolve().parents[1]
DIMS = ("time", "lat", "lon")


def labelled(
    n: int, comm, days: int = 40, empty: bool = False
) -> tuple[xr.DataArray, xr.DataArray]:
    """A (days, 4, 5) field split by time over ``comm``, and the same data in memory.

    ``empty``: rank 0 (and the middle ranks) hold no rows (``conftest.skewed``).
    """
    values = np.arange(days * 20, dtype=np.float64).reshape(days, 4, 5) % 17
    coords = {
        "time": pd.date_range("2000-01-01", periods=days, freq="D"),
        "lat": np.arange(4.0),
        "lon": np.arange(5.0) * 10,
    }
    a = ht.array(values, split=0, comm=comm)
    if empty:
        a = skewed(a)
        assert a.lshape_map[0, 0] == 0
    split = a.to_xarray(dims=DIMS, coords=coords, name="t", attrs={"units": "K"})
    return split, xr.DataArray(values, dims=DIMS, coords=coords, name="t", attrs={"units": "K"})


# ------------------------------------------------------------------- to_xarray
@pytest.mark.parametrize(("shape", "split", "n"), layouts([(7, 4, 3), (3, 2)]))
def test_to_xarray_wraps_the_same_graph(comm_of, shape, split, n):
    comm = comm_of(n)
    expected = np.arange(np.prod(shape)).reshape(shape)
    a = ht.array(expected, split=split, comm=comm)
    x = a.to_xarray()
    assert x.data is a.to_dask()  # no compute, no copy
    assert x.dims == tuple(f"dim_{i}" for i in range(len(shape)))
    assert x.dnd.split == (None if split is None else f"dim_{split}")
    assert x.dnd.comm == comm
    assert x.dnd.lshape_map.tolist() == a.lshape_map.tolist()
    b = x.dnd.to_dndarray()
    assert b.to_dask().name == a.to_dask().name  # chunks kept: nothing rechunked
    assert_layout(b, expected, split, comm)


def test_to_xarray_keeps_unbalanced_and_empty_ranks(comm_of):
    comm = comm_of(4)
    a = ht.arange(9, split=0, comm=comm)
    target = a.lshape_map
    target[:, 0] = torch.tensor([0, 5, 0, 4])
    a.redistribute_(target_map=target)
    x = a.to_xarray(dims="n", coords={"n": np.arange(9) * 2})
    assert x.dnd.lshape_map[:, 0].tolist() == [0, 5, 0, 4]
    assert x.sel(n=slice(4, 12)).values.tolist() == [2, 3, 4, 5, 6]
    assert_layout(x.dnd.to_dndarray(), np.arange(9), 0, comm)
    assert x.dnd.balance().dnd.lshape_map[:, 0].tolist() == [3, 2, 2, 2]


def test_to_xarray_bad_input(comm_of):
    a = ht.zeros((2, 3), split=0, comm=comm_of(2))
    with pytest.raises(ValueError, match="`dims` must name 2 dimensions, got 1"):
        a.to_xarray(dims=("x",))
    with pytest.raises(ValueError, match="`dims` must not repeat a name"):
        a.to_xarray(dims=("x", "x"))
    with pytest.raises(TypeError, match="`a` must be a DNDarray, got ndarray"):
        _xarray.to_xarray(np.zeros(2))
    assert a.split == 0 and a.lshape_map.tolist() == [[1, 3], [1, 3]]


# ------------------------------------------------------- xarray operations
OPERATIONS = [
    ("arithmetic", lambda v: (v * 2 + 1) / v.lon.max(), "time"),
    ("mean over time", lambda v: v.mean("time"), None),
    ("mean over lat", lambda v: v.mean("lat"), "time"),
    ("sel lat", lambda v: v.sel(lat=slice(1, 2)), "time"),
    ("isel time", lambda v: v.isel(time=slice(3, 17)), "time"),
    ("isel inside a rank", lambda v: v.isel(time=slice(0, 4)), "time"),
    ("sel one day", lambda v: v.sel(time="2000-01-05"), None),
    ("resample", lambda v: v.resample(time="7D").mean(), "time"),
    ("transpose", lambda v: v.transpose("lon", "time", "lat"), "time"),
    ("where", lambda v: v.where(v > 5, 0), "time"),
]


@pytest.mark.parametrize(("n", "empty"), [(1, False), (3, False), (5, False), (5, True)])
@pytest.mark.parametrize(("label", "op", "split"), OPERATIONS, ids=[o[0] for o in OPERATIONS])
def test_xarray_operations_keep_or_report_the_split(comm_of, n, empty, label, op, split):
    comm = comm_of(n)
    x, memory = labelled(n, comm, empty=empty)
    result, expected = op(x), op(memory)
    assert isinstance(result.data, da.Array)
    assert result.dnd.split == split
    assert result.dnd.comm == comm
    b = result.dnd.to_dndarray()
    axis = None if split is None else result.dims.index(split)
    assert_layout(b, expected.values, axis, comm)
    xr.testing.assert_allclose(result.compute(), expected)


def test_groupby_mean_reports_what_the_chunks_say(comm_of):
    comm = comm_of(3)
    x, memory = labelled(3, comm)
    result = x.groupby("time.dayofweek").mean()
    expected = memory.groupby("time.dayofweek").mean()
    xr.testing.assert_allclose(result.compute(), expected)
    chunked = [d for d, c in zip(result.dims, result.data.chunks, strict=True) if len(c) > 1]
    assert result.dnd.split == (chunked[0] if chunked else None)
    axis = result.dims.index(result.dnd.split) if result.dnd.split else None
    assert_layout(result.dnd.to_dndarray(), expected.values, axis, comm)
    anomalies = x.groupby("time.dayofweek") - result
    assert anomalies.dnd.split == "time"
    xr.testing.assert_allclose(anomalies.compute(), memory.groupby("time.dayofweek") - expected)


def test_one_rank_remembers_the_split_dimension(comm_of):
    comm = comm_of(1)
    x, _ = labelled(1, comm)
    assert x.dnd.split == "time"  # one chunk everywhere: the remembered dimension tells
    assert x.mean("lat").dnd.split == "time"
    assert x.mean("time").dnd.split is None
    assert x.dnd.to_dndarray().split == 0


# ------------------------------------- operations that break one chunk per rank
BREAKING = [
    ("anomaly", lambda v: v.groupby("time.dayofweek") - v.groupby("time.dayofweek").mean()),
    ("resample", lambda v: v.resample(time="7D").mean()),
    ("rolling", lambda v: v.rolling(time=3, min_periods=1).mean()),
    ("concat", lambda v: xr.concat([v, v.isel(time=slice(0, 9))], "time")),
    ("chunk", lambda v: v.chunk(time=4)),
]


@pytest.mark.parametrize(("n", "empty"), [(1, False), (3, False), (5, False), (3, True), (5, True)])
@pytest.mark.parametrize(("label", "op"), BREAKING, ids=[b[0] for b in BREAKING])
def test_conform_brings_back_one_chunk_per_rank(comm_of, n, empty, label, op):
    comm = comm_of(n)
    x, memory = labelled(n, comm, empty=empty)
    ds = xr.Dataset({"t": x, "z": x.mean("lat")})
    result = op(ds)
    # on one rank, xarray may chunk another dimension (rolling): name the one wanted
    conformed = result.dnd.conform() if n > 1 else result.dnd.conform("time")
    expected = op(xr.Dataset({"t": memory, "z": memory.mean("lat")}))
    check = LayoutBatch()
    for name in ("t", "z"):
        var = conformed[name]
        assert var.dnd.split == "time" and var.dnd.comm == comm
        chunks = var.data.chunks
        assert len(chunks[0]) == n and all(len(c) == 1 for c in chunks[1:])
        b = var.dnd.to_dndarray()
        assert b.to_dask() is var.data  # already one chunk per rank: nothing more to do
        check.add(b, expected[name].values, 0, comm)
    check.check()  # both variables' values in one round trip
    xr.testing.assert_allclose(conformed.compute(), expected)
    single = result["t"].dnd.conform("time")  # the DataArray accessor too
    assert single.data.chunks == conformed["t"].data.chunks and single.name == "t"


def test_conform_gives_empty_ranks_back(comm_of):
    comm = comm_of(5)
    x, memory = labelled(5, comm, days=12)
    few = x.isel(time=slice(2, 5))  # the chunks of two ranks only
    assert len(few.data.chunks[0]) == 2
    conformed = few.dnd.conform()
    assert conformed.dnd.lshape_map[:, 0].tolist() == [1, 1, 1, 0, 0]
    xr.testing.assert_identical(conformed.compute(), memory.isel(time=slice(2, 5)))
    by_lon = x.dnd.conform("lon")  # another dimension: resplit
    assert by_lon.dnd.split == "lon" and by_lon.dnd.lshape_map[:, 2].tolist() == [1] * 5
    with pytest.raises(ValueError, match=r"`dim` must be a dimension of \('time', 'lat', 'lon'\)"):
        x.dnd.conform("depth")
    with pytest.raises(ValueError, match=r"`dim` must be a dimension of"):
        xr.Dataset({"t": x}).dnd.conform("depth")


@pytest.mark.parametrize(("n", "empty"), [(2, False), (5, False), (5, True)])
def test_xarray_persist_pins_chunks_like_dndarray_persist(client, comm, n, empty):
    ranks = comm.subcomm(list(range(n))[::-1])  # rank r on worker n - 1 - r: not Dask's pick
    x, memory = labelled(n, ranks, days=12, empty=empty)
    pinned = [(w,) for w in ranks.workers]

    def held(obj):
        persisted = obj.persist()
        distributed.wait(persisted.data)
        who = client.who_has(persisted.data)
        return [tuple(who[key]) for key in dask.core.flatten(persisted.data.__dask_keys__())]

    assert held(x) == pinned
    assert held(x * 2 + 1) == pinned  # xarray's tasks on top follow their inputs
    assert held(x.resample(time="3D").mean().dnd.conform()) == pinned
    assert held(x.rolling(time=3).mean().dnd.conform()) == pinned
    ds = xr.Dataset({"t": x, "u": x.dnd.resplit("lon")}).persist()
    distributed.wait([ds["t"].data, ds["u"].data])
    for var in ("t", "u"):
        who = client.who_has(ds[var].data)
        assert [tuple(who[k]) for k in dask.core.flatten(ds[var].data.__dask_keys__())] == pinned
    xr.testing.assert_identical(ds["t"].compute(), memory)


# ---------------------------------------------------------- accessor methods
@pytest.mark.parametrize("n", [2, 5])
def test_resplit_redistribute_balance_persist(client, comm_of, n):
    comm = comm_of(n)
    x, memory = labelled(n, comm, days=9)
    by_lon = x.dnd.resplit("lon")
    assert by_lon.dnd.split == "lon"
    assert by_lon.dims == x.dims and by_lon.attrs == {"units": "K"} and by_lon.name == "t"
    xr.testing.assert_identical(by_lon.compute(), memory)
    assert x.dnd.split == "time"  # the original is untouched
    assert x.dnd.resplit(1).dnd.split == "lat"
    gathered = x.dnd.resplit(None)
    assert gathered.dnd.split is None
    assert gathered.dnd.lshape_map.tolist() == [[9, 4, 5]] * n

    target = x.dnd.lshape_map
    target[:, 0] = 0
    target[-1, 0] = 9
    moved = x.dnd.redistribute(target)
    assert moved.dnd.lshape_map[:, 0].tolist() == [0] * (n - 1) + [9]
    xr.testing.assert_identical(moved.compute(), memory)
    assert moved.dnd.balance().dnd.lshape_map.tolist() == x.dnd.lshape_map.tolist()

    persisted = by_lon.dnd.persist(wait=True)
    assert holders(client, persisted.dnd.to_dndarray()) == [(w,) for w in comm.workers]
    since = time.time()
    assert persisted.dnd.to_dndarray().persist().split == 2
    assert received_bytes(client, since) == 0
    xr.testing.assert_identical(persisted.compute(), memory)


def test_accessor_bad_input(comm_of):
    x, _ = labelled(2, comm_of(2), days=4)
    with pytest.raises(ValueError, match=r"`dim` must be a dimension of \('time', 'lat', 'lon'\)"):
        x.dnd.resplit("depth")
    with pytest.raises(ValueError, match=r"`dim` must be in \[-3, 2\]"):
        x.dnd.resplit(3)
    target = x.dnd.lshape_map
    target[0, 0] = 7
    with pytest.raises(ValueError, match="`target_map` must sum to 4 along axis 0"):
        x.dnd.redistribute(target)
    assert x.dnd.split == "time" and x.dnd.lshape_map[:, 0].tolist() == [2, 2]


def test_comm_follows_the_lineage(comm_of):
    comm = comm_of(3)
    x, _ = labelled(3, comm)
    derived = ((x - x.mean("time")) ** 2).isel(lat=[0, 2])
    assert derived.dnd.comm == comm
    assert derived.dnd.to_dndarray().comm == comm
    # a Dask array dndask never saw: the default comm, conformed to it
    foreign = xr.DataArray(da.ones((10, 3), chunks=(4, 3)), dims=("time", "x"))
    assert foreign.dnd.split == "time"
    assert foreign.dnd.comm == ht.get_comm()
    b = foreign.dnd.to_dndarray()
    assert b.comm == ht.get_comm() and b.balanced
    numpy_backed = xr.DataArray(np.ones((3, 2)), dims=("a", "b"))
    assert numpy_backed.dnd.split is None
    assert_layout(numpy_backed.dnd.to_dndarray(), np.ones((3, 2)), None, ht.get_comm())


def test_round_trip_keeps_the_comm_under_a_smaller_default(comm_of):
    """The remembered comm is checked against the cluster's workers, not the default comm."""
    four = comm_of(4)
    a = ht.arange(8, split=0, comm=four)
    ht.use_comm(comm_of(2))
    try:
        back = a.to_xarray().dnd.to_dndarray()
    finally:
        ht.use_comm(None)
    assert_layout(back, np.arange(8), 0, four)


def test_table_is_bounded(comm_of, monkeypatch):
    monkeypatch.setattr(_xarray, "_REGISTRY_SIZE", 2)
    comm = comm_of(2)
    first = ht.zeros((4, 2), split=0, comm=comm).to_xarray(dims=("t", "x"))
    for cols in (3, 4):  # distinct arrays (same arguments give the same Dask name)
        ht.ones((4, cols), split=0, comm=comm).to_xarray(dims=("t", "x"))
    assert len(_xarray._origins) <= 2
    # evicted: the chunks still say split "t", the comm falls back to the default
    assert first.dnd.split == "t"
    assert first.dnd.comm == ht.get_comm()


# ---------------------------------------------------------------- from_xarray
@pytest.mark.parametrize("n", [1, 2, 5])
@pytest.mark.parametrize("split", [None, "time", "lon", 1, -1])
def test_from_xarray_numpy_backed(comm_of, n, split):
    comm = comm_of(n)
    _, memory = labelled(n, comm, days=3)
    a = ht.from_xarray(memory, split=split, comm=comm)
    axis = {None: None, "time": 0, "lon": 2, 1: 1, -1: 2}[split]
    assert_layout(a, memory.values, axis, comm)


def test_from_xarray_dask_backed_keeps_chunks_and_comm(comm_of):
    comm = comm_of(3)
    x, memory = labelled(3, comm)
    a = ht.from_xarray(x, split="time")
    assert a.comm == comm and a.to_dask() is x.data
    b = ht.from_xarray(x.mean("lat"), split="lon")  # another axis: resplit by rechunking
    assert_layout(b, memory.mean("lat").values, 1, comm)
    c = ht.from_xarray(x, split=0, comm=comm_of(5))
    assert_layout(c, memory.values, 0, comm_of(5))


@pytest.mark.parametrize(("n", "days"), [(1, 6), (2, 6), (5, 3)])
def test_from_xarray_dataset_gives_a_dndarray_backed_dataset(comm_of, n, days):
    comm = comm_of(n)
    x, memory = labelled(n, comm, days=days)
    ds = xr.Dataset(
        {"t": memory, "z": ("lat", np.arange(4.0), {"units": "m"}), "m": x.mean("time")},
        attrs={"title": "test"},
    )
    out = ht.from_xarray(ds, split="time", comm=comm)
    assert isinstance(out, xr.Dataset)
    assert all(isinstance(v.data, da.Array) for v in out.data_vars.values())
    assert {k: v.dnd.split for k, v in out.data_vars.items()} == {"t": "time", "z": None, "m": None}
    assert out.dnd.split == "time" and out.attrs == {"title": "test"}
    assert_layout(out["t"].dnd.to_dndarray(), memory.values, 0, comm)
    assert_layout(out["z"].dnd.to_dndarray(), np.arange(4.0), None, comm)
    assert out["t"].dnd.comm == comm
    xr.testing.assert_identical(out.compute(), ds.compute())
    arrays = out.dnd.to_dndarray()  # the dict of DNDarrays, if that is what is wanted
    assert sorted(arrays) == ["m", "t", "z"] and arrays["t"].split == 0
    lat = ht.from_xarray(ds, split="lat", comm=comm)
    assert [lat[k].dnd.split for k in ("t", "z", "m")] == ["lat", "lat", "lat"]
    assert [lat[k].dnd.to_dndarray().split for k in ("t", "z", "m")] == [1, 0, 0]


@pytest.mark.parametrize("n", [1, 3, 5])
def test_to_xarray_restores_what_from_xarray_brought_in(comm_of, n):
    comm = comm_of(n)
    _, memory = labelled(n, comm, days=4)
    a = ht.from_xarray(memory, split="time", comm=comm)
    back = a.to_xarray()
    assert back.dnd.split == "time" and back.dnd.comm == comm
    xr.testing.assert_identical(back.compute(), memory)
    a.resplit_(2)  # an in-place change of distribution keeps the shape, and the labels
    xr.testing.assert_identical(a.to_xarray().compute(), memory)
    assert a.to_xarray().dnd.split == "lon"
    renamed = a.to_xarray(name="u", attrs={})  # arguments override the labels
    assert renamed.name == "u" and renamed.attrs == {} and "time" in renamed.coords
    other = a.to_xarray(dims=("d", "e", "f"))  # other dims: the old coords do not apply
    assert other.dims == ("d", "e", "f") and not other.coords and other.name == "t"
    # the accessor's round trip labels the DNDarray too
    again = back.dnd.to_dndarray().to_xarray()
    xr.testing.assert_identical(again.compute(), memory)
    # a new array made from a labelled one has no labels (its shape may differ)
    summed = (a + 1).to_xarray()
    assert summed.dims == ("dim_0", "dim_1", "dim_2") and summed.name is None


def test_to_xarray_is_not_named_after_the_dask_key(comm_of):
    a = ht.arange(5, split=0, comm=comm_of(2))
    assert a.to_xarray().name is None
    assert a.to_xarray(name="x").name == "x"
    assert ht.from_xarray(a.to_xarray().rename("v"), split=0).to_xarray().name == "v"


def test_from_xarray_bad_input(comm_of):
    _, memory = labelled(2, comm_of(2), days=3)
    with pytest.raises(
        ValueError, match=r"`split` must be a dimension of \('time', 'lat', 'lon'\), got 'depth'"
    ):
        ht.from_xarray(memory, split="depth")
    with pytest.raises(ValueError, match=r"`split` must be in \[-3, 2\]"):
        ht.from_xarray(memory, split=3)
    with pytest.raises(
        TypeError, match="`obj` must be an xarray DataArray or Dataset, got ndarray"
    ):
        ht.from_xarray(memory.values)
    with pytest.raises(TypeError, match="`split` must be None or a dimension name for a Dataset"):
        ht.from_xarray(memory.to_dataset(), split=0)
    with pytest.raises(
        ValueError, match=r"`split` must be a dimension of \('time', 'lat', 'lon'\), got 'depth'"
    ):
        ht.from_xarray(memory.to_dataset(), split="depth")
    with pytest.raises(TypeError, match=r"`comm` must be a dndask\.Comm, got str"):
        ht.from_xarray(memory, comm="all")
    with pytest.raises(TypeError, match="`obj` must hold boolean or numeric data"):
        ht.from_xarray(xr.DataArray(np.array(["a", "b"]), dims="x"))


# --------------------------------------------------------- Dataset accessor
def test_dataset_accessor(comm_of):
    comm = comm_of(3)
    x, memory = labelled(3, comm, days=9)
    ds = xr.Dataset({"t": x, "m": x.mean("lat"), "c": x.mean("time"), "z": ("lat", np.zeros(4))})
    assert ds.dnd.split == "time"
    assert ds.dnd.lshape_map["t"][:, 0].tolist() == [3, 3, 3]
    assert set(ds.dnd.to_dndarray()) == {"t", "m", "c", "z"}
    by_lon = ds.dnd.resplit("lon")
    assert {k: v.dnd.split for k, v in by_lon.data_vars.items()} == {
        "t": "lon",
        "m": "lon",
        "c": "lon",
        "z": None,
    }
    assert ds.dnd.resplit("lat")["m"].dnd.split is None  # no lat: gathered
    moved = ds.dnd.redistribute([1, 1, 7])
    assert moved["t"].dnd.lshape_map[:, 0].tolist() == [1, 1, 7]
    assert moved["m"].dnd.lshape_map[:, 0].tolist() == [1, 1, 7]
    assert moved.dnd.balance()["t"].dnd.lshape_map[:, 0].tolist() == [3, 3, 3]
    xr.testing.assert_identical(moved.dnd.persist()["t"].compute(), memory)
    with pytest.raises(ValueError, match="split along different dimensions"):
        _ = xr.Dataset({"a": x, "b": x.dnd.resplit("lon")}).dnd.split
    with pytest.raises(ValueError, match="`target_map` must hold 3 counts"):
        ds.dnd.redistribute([4, 5])
    with pytest.raises(TypeError, match="`target_map` of a Dataset must be one int count"):
        ds.dnd.redistribute([[1, 1, 7]])
    with pytest.raises(ValueError, match="`dim` must be a dimension of"):
        ds.dnd.resplit("depth")


# ------------------------------------------------------------------ packaging
def test_import_without_optional_packages():
    code = (
        "import sys\n"
        "for name in ('xarray', 'h5py', 'h5netcdf', 'zarr', 'matplotlib'):\n"
        "    sys.modules[name] = None\n"
        "import dndask as ht\n"
        "for call in (lambda: ht.from_xarray(None), lambda: ht.load_hdf5('x.h5', 'x')):\n"
        "    try:\n"
        "        call()\n"
        "    except ImportError as exc:\n"
        "        print(exc)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr
    assert "`from_xarray` needs the xarray package: pip install 'dndask[xarray]'" in result.stdout
    assert "`load_hdf5` needs the h5py package: pip install 'dndask[io]'" in result.stdout


def test_climate_example_writes_a_png(tmp_path):
    output = tmp_path / "climate.png"
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "climate.py"), str(output)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "DNDASK_WORKERS": "3", "DNDASK_PROGRESS": "off"},
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    out = result.stdout
    assert "field: dims=('time', 'lat', 'lon'), split=time" in out
    assert "loaded from netCDF: dims=('time', 'lat', 'lon'), split=time" in out
    assert "anomalies: dims=('time', 'lat', 'lon'), split=time" in out
    assert "netCDF read by xarray: coords and attrs identical=True" in out
    steps = ("anomalies", "one year", "weekly means", "31-day running mean")
    for step in (f"{s}, conformed" for s in steps):
        assert f"{step}: split=time, 3 chunks on 3 ranks, ok=True" in out
    assert (
        "resplit to space: dims=('time', 'lat', 'lon'), split=lat, lshape_map=[[1460, 6, 36]" in out
    )
    assert "trend: dims=('lat', 'lon'), split=lat" in out
    equator, poles = (float(v) for v in out.split("equator ")[1].split("\n")[0].split(", poles "))
    assert 0.0 < equator < poles  # the synthetic warming grows towards the poles
    assert output.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
