"""Saving xarray objects: coords, attrs and data come back identical through xarray's readers."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
import torch
import xarray as xr
from conftest import assert_layout

import dndask as ht


def leftovers(folder) -> list[str]:
    return [name for name in os.listdir(folder) if "dndask-tmp" in name]


def dataset(days: int) -> xr.Dataset:
    """In memory: dates, a non-index coordinate, float, int and bool variables, attrs."""
    t = np.arange(days * 12, dtype=np.float64).reshape(days, 3, 4) % 7 - 2.5
    return xr.Dataset(
        {
            "t": (("time", "lat", "lon"), t, {"units": "K", "long_name": "temperature"}),
            "count": (("time",), np.arange(days, dtype=np.int32) * 3),
            "wet": (("time", "lon"), (np.arange(days * 4) % 3 == 0).reshape(days, 4)),
            "orography": (("lat", "lon"), np.arange(12.0).reshape(3, 4), {"units": "m"}),
        },
        coords={
            "time": pd.date_range("2001-03-01", periods=days, freq="D"),
            "lat": [-10.0, 0.0, 10.0],
            "lon": np.arange(4) * 90.0,
            "band": (("lat",), np.array([1, 2, 3], dtype=np.int16)),
        },
        attrs={"title": "synthetic", "version": 2},
    )


def read(path, fmt) -> xr.Dataset:
    opened = xr.open_dataset(path, engine="h5netcdf") if fmt == "nc" else xr.open_zarr(path)
    with opened as ds:
        return ds.load()


def save(obj, path, fmt, **kwargs) -> None:
    (ht.save_netcdf if fmt == "nc" else ht.save_zarr)(obj, path, **kwargs)


@pytest.mark.parametrize("fmt", ["nc", "zarr"])
@pytest.mark.parametrize(("n", "days"), [(1, 5), (3, 7), (5, 3)])
def test_dataset_round_trip_is_identical(tmp_path, comm_of, fmt, n, days):
    comm = comm_of(n)
    expected = dataset(days)
    ds = ht.from_xarray(expected, split="time", comm=comm)
    path = tmp_path / f"x.{fmt}"
    save(ds, path, fmt)
    xr.testing.assert_identical(read(path, fmt), expected)
    assert leftovers(tmp_path) == []
    # the data variables read back by the ranks, split by name
    if fmt == "nc":
        b = ht.load_netcdf(path, "t", split="time", comm=comm)
    else:
        b = ht.load_zarr(path, split="time", component="t", comm=comm)
    assert_layout(b, expected["t"].values, 0, comm)


@pytest.mark.parametrize("fmt", ["nc", "zarr"])
@pytest.mark.parametrize("n", [2, 4])
def test_dataarray_round_trip_keeps_coords_name_and_attrs(tmp_path, comm_of, fmt, n):
    comm = comm_of(n)
    expected = dataset(6)["t"]
    a = ht.from_xarray(expected, split="lon", comm=comm)  # a DNDarray that keeps the labels
    x = a.to_xarray()
    save(x, tmp_path / f"named.{fmt}", fmt)
    xr.testing.assert_identical(read(tmp_path / f"named.{fmt}", fmt)["t"], expected)
    # unbalanced, with empty ranks, and renamed by the argument
    target = a.lshape_map
    target[:, 2] = torch.tensor([0] * (n - 1) + [4])
    moved = x.dnd.redistribute(target)
    key = {"variable": "temp"} if fmt == "nc" else {"component": "temp"}
    save(moved, tmp_path / f"temp.{fmt}", fmt, **key)
    xr.testing.assert_identical(
        read(tmp_path / f"temp.{fmt}", fmt)["temp"], expected.rename("temp")
    )
    assert moved.dnd.lshape_map[:, 2].tolist() == [0] * (n - 1) + [4]  # the source is unchanged


@pytest.mark.parametrize("fmt", ["nc", "zarr"])
def test_labelled_dndarray_saves_its_labels(tmp_path, comm_of, fmt):
    comm = comm_of(3)
    expected = dataset(5)["t"]
    a = ht.from_xarray(expected, split="lat", comm=comm)
    save(a, tmp_path / f"x.{fmt}", fmt)
    xr.testing.assert_identical(read(tmp_path / f"x.{fmt}", fmt)["t"], expected)
    key = {"variable": "v"} if fmt == "nc" else {"component": "v"}
    save(a, tmp_path / f"plain.{fmt}", fmt, dims=("d", "e", "f"), **key)  # dims given: no labels
    plain = read(tmp_path / f"plain.{fmt}", fmt)
    assert plain["v"].dims == ("d", "e", "f") and not plain.coords and plain["v"].attrs == {}
    np.testing.assert_array_equal(plain["v"].values, expected.values)


@pytest.mark.parametrize("fmt", ["nc", "zarr"])
def test_unnamed_dataarray_reads_back_unnamed(tmp_path, comm_of, fmt):
    comm = comm_of(3)
    x = ht.arange(7, split=0, comm=comm).to_xarray(dims="n", coords={"n": np.arange(7) * 2})
    path = tmp_path / f"x.{fmt}"
    save(x, path, fmt)
    engine = "h5netcdf" if fmt == "nc" else "zarr"
    with xr.open_dataarray(path, engine=engine) as back:
        xr.testing.assert_identical(back.load(), x.compute())


def test_numpy_backed_and_mixed_comm_variables(tmp_path, comm_of):
    """In-memory variables are sent from the driver; variables on another comm are conformed."""
    expected = dataset(5)
    three = ht.from_xarray(expected[["t"]], split="time", comm=comm_of(3))
    two = ht.from_xarray(expected[["count"]], split="time", comm=comm_of(2))
    mixed = xr.merge([three, two, expected[["wet", "orography"]]])
    mixed.attrs = expected.attrs
    for fmt in ("nc", "zarr"):
        save(mixed, tmp_path / f"x.{fmt}", fmt)
        xr.testing.assert_identical(read(tmp_path / f"x.{fmt}", fmt), expected)
    plain = expected.copy()  # no Dask at all: the default comm
    save(plain, tmp_path / "plain.zarr", "zarr")
    xr.testing.assert_identical(read(tmp_path / "plain.zarr", "zarr"), expected)


@pytest.mark.parametrize("fmt", ["nc", "zarr"])
def test_bad_xarray_saves_leave_nothing_behind(tmp_path, comm_of, fmt):
    comm = comm_of(2)
    ds = ht.from_xarray(dataset(4), split="time", comm=comm)
    path = tmp_path / f"x.{fmt}"
    name = "variable" if fmt == "nc" else "component"
    with pytest.raises(ValueError, match=r"`dims` must be None for an xarray Dataset"):
        save(ds, path, fmt, dims=("a",))
    with pytest.raises(ValueError, match=rf"`{name}` must be None for a Dataset"):
        save(ds, path, fmt, **{name: "t"})
    with pytest.raises(ValueError, match="`a` must be named by a non-empty str"):
        save(ds["t"].rename(5), path, fmt)
    with pytest.raises(ValueError, match="`a` must hold at least one data variable"):
        save(xr.Dataset(coords={"x": [1, 2]}), path, fmt)
    with pytest.raises(TypeError, match="`obj` must hold boolean or numeric data"):
        save(xr.Dataset({"s": ("x", np.array(["a", "b"]))}), path, fmt)
    with pytest.raises(TypeError, match="`a` must be a DNDarray or an xarray DataArray or Dataset"):
        save([1, 2], path, fmt)
    assert not path.exists() and leftovers(tmp_path) == []
    # an existing folder is never replaced; an existing file only with mode='w'
    path.mkdir()
    (path / "mine.txt").write_text("keep me")
    with pytest.raises((IsADirectoryError, FileExistsError), match="`path`"):
        save(ds, path, fmt, mode="w")
    assert (path / "mine.txt").read_text() == "keep me"
    with pytest.raises(FileExistsError, match="pass mode='w' to overwrite it"):
        save(ds, path, fmt)
    assert sorted(os.listdir(path)) == ["mine.txt"] and leftovers(tmp_path) == []


# ------------------------------------------------------- xarray's own to_zarr
def whole_chunks(counts, rows) -> bool:
    """Every rank holds whole chunks of ``rows``, but the last rank (the rest)."""
    return all(c % rows == 0 for c in counts[:-1])


# xarray's to_zarr consolidates, which zarr 3 warns about in the driver (dndask's saves do it
# on a worker)
@pytest.mark.filterwarnings("ignore:Consolidated metadata is currently not part")
@pytest.mark.parametrize(("n", "days"), [(1, 5), (3, 7), (5, 3)])
def test_xarray_to_zarr_through_chunk_for_zarr(tmp_path, comm_of, n, days):
    comm = comm_of(n)
    expected = dataset(days)
    ds = ht.from_xarray(expected, split="time", comm=comm)
    ready = ds.dnd.chunk_for_zarr()
    t = ready["t"]
    counts = t.dnd.lshape_map[:, 0].tolist()
    rows = t.encoding["chunks"][0]
    assert t.encoding["chunks"] == (rows, 3, 4) and t.dnd.comm == comm
    assert whole_chunks(counts, rows) and sum(counts) == days
    assert_layout(t.dnd.to_dndarray(), expected["t"].values, 0, comm)
    ready.to_zarr(tmp_path / "x.zarr")  # xarray's writer, safe chunks
    xr.testing.assert_identical(read(tmp_path / "x.zarr", "zarr"), expected)
    two = ds["t"].dnd.chunk_for_zarr(rows=2)
    assert two.encoding["chunks"][0] == 2
    assert whole_chunks(two.dnd.lshape_map[:, 0].tolist(), 2)
    two.to_zarr(tmp_path / "two.zarr")
    xr.testing.assert_identical(read(tmp_path / "two.zarr", "zarr")["t"], expected["t"])
    assert ds["t"].data.chunks[0] == ht.from_xarray(expected, "time", comm)["t"].data.chunks[0]


@pytest.mark.filterwarnings("ignore:Consolidated metadata is currently not part")
@pytest.mark.parametrize(("n", "days"), [(1, 5), (3, 7), (5, 3)])
def test_dndarray_backed_objects_save(tmp_path, comm_of, n, days):
    """``xr.DataArray(a)`` data: dndask's saves, and xarray's to_zarr after chunk_for_zarr."""
    comm = comm_of(n)
    expected = dataset(days)
    backed = expected.copy()
    for name in ("t", "wet"):  # DNDarray-backed variables, split by time (empty ranks on 5)
        backed[name] = backed[name].copy(data=ht.array(expected[name].values, split=0, comm=comm))
    assert isinstance(backed["t"].data, ht.DNDarray)
    for fmt in ("nc", "zarr"):
        save(backed, tmp_path / f"ds.{fmt}", fmt)
        xr.testing.assert_identical(read(tmp_path / f"ds.{fmt}", fmt), expected)
        save(backed["t"], tmp_path / f"t.{fmt}", fmt)
        xr.testing.assert_identical(read(tmp_path / f"t.{fmt}", fmt)["t"], expected["t"])
    ready = backed.dnd.chunk_for_zarr()
    assert not isinstance(ready["t"].data, ht.DNDarray)  # Dask's store takes Dask arrays only
    assert ready["t"].dnd.comm == comm and len(ready["t"].data.chunks[0]) == n
    ready.to_zarr(tmp_path / "x.zarr")
    xr.testing.assert_identical(read(tmp_path / "x.zarr", "zarr"), expected)
    # xarray's own writers refuse DNDarray data inside Dask (docs/xarray-io.md says so)
    with pytest.raises(ValueError, match="All sources must be dask array objects"):
        backed[["t"]].to_netcdf(tmp_path / "refused.nc", engine="h5netcdf")
    assert isinstance(backed["t"].data, ht.DNDarray)


def test_chunk_for_zarr_bad_input(comm_of):
    x = ht.arange(6, split=0, comm=comm_of(2)).to_xarray(dims="t")
    with pytest.raises(ValueError, match="`rows` must be at least 1, got 0"):
        x.dnd.chunk_for_zarr(0)
    with pytest.raises(TypeError, match="`rows` must be None or an int, got str"):
        x.dnd.chunk_for_zarr("3")
    assert x.dnd.lshape_map[:, 0].tolist() == [3, 3] and "chunks" not in x.encoding
