"""Parallel I/O: round trips on every layout, files other tools read, clean failures."""

from __future__ import annotations

import os
import shutil
import sys
import time

import dask.array as da
import h5py
import numpy as np
import pytest
import torch
import xarray as xr
import zarr
from conftest import assert_layout, holders, layouts, received_bytes

import dndask as ht
from dndask._io._zarr import _zarr_layout, _zarr_rows

SHAPES = [(7, 4, 3), (3, 2)]


def values(shape, dtype=np.float64) -> np.ndarray:
    return (np.arange(int(np.prod(shape))).reshape(shape) * 1.5 - 4).astype(dtype)


def source(shape, split, comm, dtype=np.float64) -> tuple[ht.DNDarray, np.ndarray]:
    expected = values(shape, dtype)
    return ht.array(expected, split=split, comm=comm), expected


def leftovers(folder) -> list[str]:
    """Temporary files a save might have left behind."""
    return [name for name in os.listdir(folder) if "dndask-tmp" in name]


def unbalanced(comm) -> tuple[ht.DNDarray, np.ndarray]:
    """9 x 2 rows held by ranks 1 and 3 of 4 only."""
    a, expected = source((9, 2), 0, comm)
    target = a.lshape_map
    target[:, 0] = torch.tensor([0, 5, 0, 4])
    return a.redistribute_(target_map=target), expected


# ------------------------------------------------------------------ round trips
@pytest.mark.parametrize(("shape", "split", "n"), layouts(SHAPES))
def test_hdf5_round_trip(tmp_path, comm_of, shape, split, n):
    comm = comm_of(n)
    a, expected = source(shape, split, comm)
    path = tmp_path / "x.h5"
    ht.save_hdf5(a, path, "group/x")
    with h5py.File(path, "r") as f:
        np.testing.assert_array_equal(f["group/x"][...], expected)
    assert_layout(ht.load_hdf5(path, "group/x", split=split, comm=comm), expected, split, comm)
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(("shape", "split", "n"), layouts(SHAPES, rank_counts=(1, 3, 5)))
def test_netcdf_round_trip(tmp_path, comm_of, shape, split, n):
    comm = comm_of(n)
    a, expected = source(shape, split, comm, np.float32)
    dims = ("time", "lat", "lon")[: len(shape)]
    path = tmp_path / "x.nc"
    ht.save_netcdf(a, path, "temp", dims=dims)
    with xr.open_dataset(path, engine="h5netcdf") as ds:
        assert ds["temp"].dims == dims
        np.testing.assert_array_equal(ds["temp"].values, expected)
    by_name = None if split is None else dims[split]
    b = ht.load_netcdf(path, "temp", split=by_name, comm=comm)
    assert_layout(b, expected, split, comm)


@pytest.mark.parametrize(("shape", "split", "n"), layouts(SHAPES, rank_counts=(1, 2, 4, 5)))
def test_zarr_round_trip(tmp_path, comm_of, shape, split, n):
    comm = comm_of(n)
    a, expected = source(shape, split, comm, np.int32)
    path = tmp_path / "x.zarr"
    ht.save_zarr(a, path)
    with xr.open_dataarray(path, engine="zarr") as x:  # a group xarray opens, one variable
        assert x.name is None and x.dims == tuple(f"dim_{i}" for i in range(len(shape)))
        np.testing.assert_array_equal(x.values, expected)
    assert_layout(ht.load_zarr(path, split=split, comm=comm), expected, split, comm)
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(("shape", "split", "n"), layouts([(7, 3), (2, 4)], rank_counts=(1, 3, 5)))
def test_csv_round_trip(tmp_path, comm_of, shape, split, n):
    comm = comm_of(n)
    a, expected = source(shape, split, comm, np.float32)
    path = tmp_path / "x.csv"
    ht.save_csv(a, path, header="a header")
    np.testing.assert_array_equal(np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2), expected)
    b = ht.load_csv(path, split=split, header_lines=1, comm=comm)
    assert_layout(b, expected, split, comm)


@pytest.mark.parametrize("fmt", ["h5", "nc", "zarr", "csv"])
def test_unbalanced_input_with_empty_ranks(tmp_path, comm_of, fmt):
    comm = comm_of(4)
    a, expected = unbalanced(comm)
    path = tmp_path / f"x.{fmt}"
    args = ("x",) if fmt in ("h5", "nc") else ()
    ht.save(a, path, *args)
    assert a.lshape_map[:, 0].tolist() == [0, 5, 0, 4]  # saving leaves the array as it was
    b = ht.load(path, *args, split=0, comm=comm)
    expected = expected.astype(np.float32) if fmt == "csv" else expected
    assert_layout(b, expected, 0, comm)
    assert b.lshape_map[:, 0].tolist() == [3, 2, 2, 2]


def test_zarr_store_chunks_follow_the_ranks(tmp_path, comm_of):
    # balanced 3, 2, 2 is written as 3, 3, 1: whole chunks of 3 rows, written in parallel
    a, expected = source((7, 2), 0, comm_of(3))
    ht.save_zarr(a, tmp_path / "x.zarr", component="t", dims=("time", "x"))
    store = zarr.open_group(str(tmp_path / "x.zarr"), mode="r")
    assert store["t"].chunks == (3, 2)
    with xr.open_zarr(tmp_path / "x.zarr") as ds:  # a group with consolidated metadata
        assert ds["t"].dims == ("time", "x")
        np.testing.assert_array_equal(ds["t"].values, expected)
    b = ht.load_zarr(tmp_path / "x.zarr", split="x", component="t", comm=comm_of(2))
    assert_layout(b, expected, 1, comm_of(2))


def test_zarr_layout_is_whole_chunks_per_rank(comm_of):
    a = ht.zeros((10, 3), split=0, comm=comm_of(4))  # balanced: 3, 3, 2, 2
    laid, chunks = _zarr_layout(a)
    assert chunks == (3, 3)
    assert laid.lshape_map[:, 0].tolist() == [3, 3, 3, 1]
    same, _ = _zarr_layout(ht.zeros((8, 3), split=0, comm=comm_of(4)))
    assert same.lshape_map[:, 0].tolist() == [2, 2, 2, 2]
    assert _zarr_rows((10**9,), 0, 4, 8) == 64 * 2**20 // 8  # capped near 64 MiB


def test_dtype_bool_and_zero_dim(tmp_path, comm_of):
    comm = comm_of(3)
    flags = ht.array(np.array([True, False, True, True]), split=0, comm=comm)
    ht.save_hdf5(flags, tmp_path / "f.h5", "f")
    loaded = ht.load_hdf5(tmp_path / "f.h5", "f", split=0, comm=comm)
    assert_layout(loaded, np.array([True, False, True, True]), 0, comm)
    as_float = ht.load_hdf5(tmp_path / "f.h5", "f", dtype=ht.float32, comm=comm)
    assert as_float.dtype == np.float32
    scalar = ht.array(np.float64(2.5), comm=comm)
    ht.save_zarr(scalar, tmp_path / "s.zarr")
    assert ht.load_zarr(tmp_path / "s.zarr", split=None, comm=comm).item() == 2.5


# ------------------------------------------------------ files made by other tools
def test_load_files_written_by_h5py_xarray_and_zarr(tmp_path, comm_of):
    comm = comm_of(4)
    expected = values((6, 3, 2))
    with h5py.File(tmp_path / "a.h5", "w") as f:
        f.create_dataset("deep/data", data=expected, chunks=(1, 3, 2), compression="gzip")
    assert_layout(
        ht.load_hdf5(tmp_path / "a.h5", "deep/data", split=1, comm=comm), expected, 1, comm
    )

    ds = xr.Dataset({"temp": (("time", "lat", "lon"), expected)}, coords={"time": np.arange(6)})
    ds.to_netcdf(tmp_path / "a.nc", engine="h5netcdf")
    b = ht.load_netcdf(tmp_path / "a.nc", "temp", split="lat", comm=comm)
    assert_layout(b, expected, 1, comm)
    coordinate = ht.load_netcdf(tmp_path / "a.nc", "time", split="time", comm=comm)
    assert_layout(coordinate, np.arange(6), 0, comm)

    ds.to_zarr(tmp_path / "a.zarr", consolidated=False)
    c = ht.load_zarr(tmp_path / "a.zarr", split="time", component="temp", comm=comm)
    assert_layout(c, expected, 0, comm)
    z = zarr.open_array(str(tmp_path / "b.zarr"), mode="w", shape=(5,), chunks=(2,), dtype="i2")
    z[:] = np.arange(5)
    assert_layout(ht.load(tmp_path / "b.zarr", comm=comm), np.arange(5, dtype=np.int16), 0, comm)


def test_load_csv_parses_each_part_once(tmp_path, comm_of):
    text = "x;y;z\n# units\n1;2;3\n4;5;6\n\n7;8;9\n10;11;12\n13;14;15\n\n"
    (tmp_path / "t.csv").write_text(text)
    expected = np.arange(1, 16, dtype=np.int64).reshape(5, 3)
    for n in (1, 2, 4, 5):
        comm = comm_of(n)
        a = ht.load_csv(tmp_path / "t.csv", sep=";", header_lines=2, dtype=ht.int64, comm=comm)
        assert_layout(a, expected, 0, comm)
        assert a.balanced
    one_row = tmp_path / "one.csv"
    one_row.write_text("1.5,2.5\n")
    assert_layout(
        ht.load_csv(one_row, comm=comm_of(5)), np.array([[1.5, 2.5]], np.float32), 0, comm_of(5)
    )
    empty = tmp_path / "empty.csv"
    empty.write_text("h\n")
    assert ht.load_csv(empty, header_lines=1, comm=comm_of(3)).shape == (0, 0)


def test_save_csv_1d_bool_and_empty(tmp_path, comm_of):
    comm = comm_of(3)
    ht.save_csv(ht.arange(4, split=0, comm=comm), tmp_path / "a.csv")
    assert (tmp_path / "a.csv").read_text() == "0\n1\n2\n3\n"
    flags = ht.array(np.array([[True, False]]), split=1, comm=comm)
    ht.save_csv(flags, tmp_path / "b.csv", sep=" ")
    assert (tmp_path / "b.csv").read_text() == "1 0\n"
    ht.save_csv(ht.zeros((0, 2), split=0, comm=comm), tmp_path / "c.csv", header="a,b")
    assert (tmp_path / "c.csv").read_text() == "a,b\n"


# ----------------------------------------------------------- laziness, placement
def test_each_rank_reads_its_own_slab_on_its_worker(tmp_path, client, comm_of):
    comm = comm_of(4)
    expected = values((40, 50))
    with h5py.File(tmp_path / "big.h5", "w") as f:
        f["x"] = expected
    a = ht.load_hdf5(tmp_path / "big.h5", "x", split=0, comm=comm)
    assert len(a.to_dask().dask) == comm.size  # one read task per rank, nothing else
    since = time.time()
    b = a.persist(wait=True)
    assert holders(client, b) == [(w,) for w in comm.workers]
    assert received_bytes(client, since) == 0
    np.testing.assert_array_equal(b.numpy(), expected)


@pytest.mark.parametrize("fmt", ["h5", "nc", "zarr", "csv"])
def test_saving_moves_no_data_between_workers(tmp_path, client, comm_of, fmt):
    comm = comm_of(4)
    a = ht.random.rand(400, 25, split=0, comm=comm).persist(wait=True)  # 40 kB; zarr-aligned counts
    since = time.time()
    ht.save(a, tmp_path / f"x.{fmt}", *(("x",) if fmt in ("h5", "nc") else ()))
    assert received_bytes(client, since) < 2000  # only tokens and lengths travel


def test_rewritten_file_is_read_again(tmp_path, comm_of):
    comm = comm_of(2)
    path = tmp_path / "x.h5"
    ht.save_hdf5(ht.zeros((4,), split=0, comm=comm), path, "x")
    first = ht.load_hdf5(path, "x", comm=comm).persist(wait=True)
    ht.save_hdf5(ht.ones((4,), split=0, comm=comm), path, "x", mode="w")
    assert ht.load_hdf5(path, "x", comm=comm).numpy().tolist() == [1.0] * 4
    assert first.numpy().tolist() == [0.0] * 4


# --------------------------------------------------------------------- bad input
def test_missing_file(tmp_path, comm_of):
    comm = comm_of(2)
    for call in (
        lambda p: ht.load_hdf5(p / "no.h5", "x", comm=comm),
        lambda p: ht.load_netcdf(p / "no.nc", "x", comm=comm),
        lambda p: ht.load_zarr(p / "no.zarr", comm=comm),
        lambda p: ht.load_csv(p / "no.csv", comm=comm),
        lambda p: ht.load(p / "no.h5", "x", comm=comm),
    ):
        with pytest.raises(FileNotFoundError, match=r"`path` .* does not exist"):
            call(tmp_path)


def test_missing_dataset_variable_component(tmp_path, comm_of):
    comm = comm_of(2)
    a = ht.zeros((3, 2), split=0, comm=comm)
    ht.save_hdf5(a, tmp_path / "x.h5", "x")
    with pytest.raises(KeyError, match=r"`dataset` 'y' is not a dataset .* holds \['x'\]"):
        ht.load_hdf5(tmp_path / "x.h5", "y", comm=comm)
    ht.save_netcdf(a, tmp_path / "x.nc", "temp")
    with pytest.raises(KeyError, match=r"`variable` 'rain' is not a variable .* \['temp'\]"):
        ht.load_netcdf(tmp_path / "x.nc", "rain", comm=comm)
    ht.save_zarr(a, tmp_path / "g.zarr", component="temp")
    with pytest.raises(KeyError, match=r"`component` 'rain' is not an array .* \['temp'\]"):
        ht.load_zarr(tmp_path / "g.zarr", component="rain", comm=comm)
    expected = np.zeros((3, 2), np.float32)
    assert_layout(ht.load_zarr(tmp_path / "g.zarr", comm=comm), expected, 0, comm)
    two = xr.Dataset({"u": (("x", "y"), np.zeros((3, 2))), "v": ("x", np.ones(3))})
    ht.save_zarr(two, tmp_path / "two.zarr")
    with pytest.raises(ValueError, match=r"`component` must name an array .* \['u', 'v'\]"):
        ht.load_zarr(tmp_path / "two.zarr", comm=comm)
    ht.save_zarr(a, tmp_path / "a.zarr")
    with pytest.raises(KeyError, match=r"`component` 'temp' is not an array"):
        ht.load_zarr(tmp_path / "a.zarr", component="temp", comm=comm)


def test_split_that_does_not_exist(tmp_path, comm_of):
    comm = comm_of(2)
    a = ht.zeros((3, 2), split=0, comm=comm)
    ht.save_netcdf(a, tmp_path / "x.nc", "t", dims=("time", "lat"))
    with pytest.raises(ValueError, match=r"`split` must be None, an axis or a dimension .*'depth'"):
        ht.load_netcdf(tmp_path / "x.nc", "t", split="depth", comm=comm)
    with pytest.raises(ValueError, match=r"`split` must be in \[-2, 1\]"):
        ht.load_netcdf(tmp_path / "x.nc", "t", split=2, comm=comm)
    ht.save_hdf5(a, tmp_path / "x.h5", "t")
    with pytest.raises(TypeError, match=r"`split` must be None or an int, got str"):
        ht.load_hdf5(tmp_path / "x.h5", "t", split="time", comm=comm)
    ht.save_zarr(a, tmp_path / "x.zarr")  # xarray's default dimension names
    with pytest.raises(ValueError, match=r"`split` must be .* \('dim_0', 'dim_1'\), got 'time'"):
        ht.load_zarr(tmp_path / "x.zarr", split="time", comm=comm)
    with pytest.raises(ValueError, match=r"`split` must be in \[-2, 1\]"):
        ht.load_csv(tmp_path / "x.csv", split=3, comm=comm)


def test_files_of_the_wrong_kind(tmp_path, comm_of):
    comm = comm_of(2)
    (tmp_path / "text.h5").write_text("not hdf5")
    with pytest.raises(ValueError, match=r"`path` .* cannot be opened as an HDF5 file"):
        ht.load_hdf5(tmp_path / "text.h5", "x", comm=comm)
    with pytest.raises(ValueError, match=r"netCDF-3 files are not supported"):
        ht.load_netcdf(tmp_path / "text.h5", "x", comm=comm)
    (tmp_path / "empty.zarr").mkdir()
    with pytest.raises(ValueError, match=r"`path` .* is not a zarr store"):
        ht.load_zarr(tmp_path / "empty.zarr", comm=comm)
    with h5py.File(tmp_path / "s.h5", "w") as f:
        f["names"] = np.array([b"a", b"b"])
    with pytest.raises(TypeError, match=r"`dataset` 'names' has dtype .S1; only boolean"):
        ht.load_hdf5(tmp_path / "s.h5", "names", comm=comm)
    (tmp_path / "ragged.csv").write_text("1,2\n3,4\n5,6,7\n8,9\n")
    with pytest.raises(ValueError, match=r"columns|values"):
        ht.load_csv(tmp_path / "ragged.csv", comm=comm)
    with pytest.raises(ValueError, match=r"`path` must end with one of .*'x.npy'"):
        ht.load(tmp_path / "x.npy")
    with pytest.raises(ValueError, match=r"`path` must end with one of"):
        ht.save(ht.zeros(2, comm=comm), tmp_path / "x.txt")


@pytest.mark.parametrize("fmt", ["h5", "nc", "zarr", "csv"])
def test_existing_target_needs_mode_w(tmp_path, comm_of, fmt):
    comm = comm_of(3)
    args = ("x",) if fmt in ("h5", "nc") else ()
    path = tmp_path / f"x.{fmt}"
    ht.save(ht.zeros((5, 2), split=0, comm=comm), path, *args)
    before = ht.load(path, *args, comm=comm).numpy()
    with pytest.raises(FileExistsError, match=r"`path` .* exists; pass mode='w'"):
        ht.save(ht.ones((5, 2), split=0, comm=comm), path, *args)
    np.testing.assert_array_equal(ht.load(path, *args, comm=comm).numpy(), before)
    ht.save(ht.ones((5, 2), split=0, comm=comm), path, *args, mode="w")
    assert ht.load(path, *args, comm=comm).numpy().tolist() == [[1.0, 1.0]] * 5
    assert leftovers(tmp_path) == []


def test_bad_save_arguments(tmp_path, comm_of):
    comm = comm_of(2)
    a = ht.zeros((3, 2), split=0, comm=comm)
    with pytest.raises(ValueError, match=r"`mode` must be 'w-' .* or 'w' .*, got 'a'"):
        ht.save_hdf5(a, tmp_path / "x.h5", "x", mode="a")
    with pytest.raises(FileNotFoundError, match=r"the folder .* does not exist"):
        ht.save_zarr(a, tmp_path / "no" / "x.zarr")
    with pytest.raises(TypeError, match=r"`a` must be a DNDarray, got ndarray"):
        ht.save_hdf5(np.zeros(3), tmp_path / "x.h5", "x")
    with pytest.raises(TypeError, match=r"`dataset` must be a non-empty str, got ''"):
        ht.save_hdf5(a, tmp_path / "x.h5", "")
    with pytest.raises(ValueError, match=r"`dims` must be 2 dimension names, got \(.t.,\)"):
        ht.save_netcdf(a, tmp_path / "x.nc", "v", dims=("t",))
    with pytest.raises(ValueError, match=r"`a` must be 1-D or 2-D to save as CSV, got 3-D"):
        ht.save_csv(ht.zeros((2, 2, 2), comm=comm), tmp_path / "x.csv")
    with pytest.raises(TypeError, match=r"`path` must be a str or os.PathLike, got int"):
        ht.load_hdf5(3, "x")
    assert os.listdir(tmp_path) == []


def failing(comm) -> ht.DNDarray:
    """A 12 x 1 array whose chunk 2 raises when computed (ranks 0 and 1 write first)."""

    def fail_on_rank_2(block, block_info=None):
        if block_info[0]["chunk-location"][0] == 2:
            raise RuntimeError("disk full on rank 2")
        return block

    x = ht.arange(12, split=0, comm=comm).to_dask().reshape(12, 1)
    return ht.array(x.map_blocks(fail_on_rank_2, dtype=np.int64), split=0, comm=comm)


@pytest.mark.parametrize("fmt", ["h5", "nc", "zarr", "csv"])
def test_failed_write_leaves_nothing_behind(tmp_path, comm_of, fmt):
    comm = comm_of(4)
    a = failing(comm)
    args = ("x",) if fmt in ("h5", "nc") else ()
    path = tmp_path / f"x.{fmt}"
    with pytest.raises(RuntimeError, match=r"disk full on rank 2"):
        ht.save(a, path, *args)
    assert os.listdir(tmp_path) == []
    # over an existing file: the old file stays whole
    ht.save(ht.zeros((12, 1), split=0, comm=comm), path, *args)
    with pytest.raises(RuntimeError, match=r"disk full on rank 2"):
        ht.save(a, path, *args, mode="w")
    assert ht.load(path, *args, comm=comm).numpy().tolist() == [[0]] * 12
    assert leftovers(tmp_path) == []


def test_missing_optional_package_names_the_extra(tmp_path, monkeypatch):
    for name in ("h5py", "h5netcdf", "zarr"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ImportError, match=r"`load_hdf5` needs the h5py package: .*dndask\[io\]"):
        ht.load_hdf5(tmp_path / "x.h5", "x")
    with pytest.raises(ImportError, match=r"`load_zarr` needs the zarr package"):
        ht.load_zarr(tmp_path / "x.zarr")
    with pytest.raises(ImportError, match=r"`save_netcdf` needs the h5netcdf package"):
        ht.save_netcdf(ht.zeros(2), tmp_path / "x.nc", "x")


def test_dask_array_input_saves_lazily(tmp_path, comm_of):
    comm = comm_of(3)
    x = da.arange(10, chunks=4).reshape(5, 2)
    a = ht.array(x, split=0, comm=comm)
    ht.save_hdf5(a, tmp_path / "x.h5", "x")
    with h5py.File(tmp_path / "x.h5", "r") as f:
        np.testing.assert_array_equal(f["x"][...], np.arange(10).reshape(5, 2))


# ----------------------------------------------------- what a save must never destroy
def precious_folder(path) -> dict[str, bytes]:
    """Make ``path`` a folder of the user's files; return their contents."""
    os.makedirs(path / "sub")
    files = {"precious.txt": b"keep me\n", os.path.join("sub", "data.bin"): bytes(range(256))}
    for name, content in files.items():
        (path / name).write_bytes(content)
    return files


def folder_contents(path) -> dict[str, bytes]:
    out = {}
    for root, _, names in os.walk(path):
        for name in names:
            full = os.path.join(root, name)
            with open(full, "rb") as f:
                out[os.path.relpath(full, path)] = f.read()
    return out


@pytest.mark.parametrize("fmt", ["h5", "nc", "csv"])
def test_save_never_replaces_a_folder_with_a_file(tmp_path, comm_of, fmt):
    comm = comm_of(3)
    path = tmp_path / f"d.{fmt}"
    files = precious_folder(path)
    args = ("x",) if fmt in ("h5", "nc") else ()
    with pytest.raises(IsADirectoryError, match=r"`path` .*d\.\w+' is a folder; a save replaces"):
        ht.save(ht.arange(6, split=0, comm=comm), path, *args, mode="w")
    assert folder_contents(path) == files
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("kind", ["folder", "file"])
def test_save_zarr_replaces_only_a_zarr_store(tmp_path, comm_of, kind):
    comm = comm_of(3)
    path = tmp_path / "d.zarr"
    if kind == "folder":
        files = precious_folder(path)
    else:
        path.write_bytes(b"not a store")
    with pytest.raises(FileExistsError, match=r"`path` .*d\.zarr' exists and is .*zarr store"):
        ht.save_zarr(ht.arange(6, split=0, comm=comm), path, mode="w")
    if kind == "folder":
        assert folder_contents(path) == files
    else:
        assert path.read_bytes() == b"not a store"
    assert leftovers(tmp_path) == []
    # a zarr store (a group with its own files) is replaced whole under mode='w'
    store = tmp_path / "s.zarr"
    ht.save_zarr(ht.zeros((4, 2), split=0, comm=comm), store, component="v")
    ht.save_zarr(ht.arange(6, split=0, comm=comm), store, mode="w")
    assert ht.load_zarr(store, comm=comm).numpy().tolist() == list(range(6))
    assert leftovers(tmp_path) == []


def read_only_folder(tmp_path):
    """A folder that refuses new files, or skip where none can be had (root on a writable FS)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    for candidate in (str(folder), "/sys/fs"):
        probe = os.path.join(candidate, ".probe")
        try:
            open(probe, "x").close()
        except OSError:
            return candidate
        os.remove(probe)
    pytest.skip("no read-only folder here: running as root on writable file systems")


@pytest.mark.parametrize("fmt", ["h5", "nc", "zarr", "csv"])
def test_save_into_a_read_only_folder_names_the_target(tmp_path, comm_of, fmt):
    comm = comm_of(2)
    folder = read_only_folder(tmp_path)
    args = ("x",) if fmt in ("h5", "nc") else ()
    path = os.path.join(folder, f"x.{fmt}")
    try:
        with pytest.raises(PermissionError, match=rf"`path` '.*/x\.{fmt}' cannot be written"):
            ht.save(ht.arange(6, split=0, comm=comm), path, *args)
        assert [n for n in os.listdir(folder) if "dndask-tmp" in n] == []
    finally:
        (tmp_path / "ro").chmod(0o755)


@pytest.mark.parametrize("fmt", ["h5", "nc", "zarr"])
def test_lazy_load_of_a_rewritten_file_raises(tmp_path, comm_of, fmt):
    comm = comm_of(3)
    args = ("x",) if fmt in ("h5", "nc") else ()
    path = tmp_path / f"x.{fmt}"
    ht.save(ht.arange(12, split=0, comm=comm), path, *args)
    lazy = ht.load(path, *args, comm=comm)
    ht.save(ht.arange(6, split=0, comm=comm) * -1, path, *args, mode="w")
    with pytest.raises(RuntimeError, match=r"`path` .* changed since the array was loaded"):
        lazy.numpy()
    assert lazy.shape == (12,)
    fresh = ht.load(path, *args, comm=comm)
    assert fresh.numpy().tolist() == [-i for i in range(6)]
    shutil.rmtree(path) if fmt == "zarr" else os.remove(path)
    with pytest.raises(FileNotFoundError, match=r"`path` .* was removed since it was loaded"):
        fresh.numpy()


def test_csv_bad_row_names_the_file_and_its_line(tmp_path, comm_of):
    comm = comm_of(2)
    path = tmp_path / "t.csv"
    # the bad value is on line 6 of the file, inside rank 1's half of the body
    path.write_text("a,b,c\n1,2,3\n4,5,6\n7,8,9\n10,11,12\n13,14,x\n16,17,18\n")
    with pytest.raises(ValueError, match=r"`path` '.*t\.csv' line 6 holds a value that is not "):
        ht.load_csv(path, header_lines=1, comm=comm)
    path.write_text("1,2,3\n4,5,6\n\n7,8,9\n10,11,12\n13,14\n16,17,18\n")
    with pytest.raises(ValueError, match=r"`path` '.*t\.csv' line 6 has 2 values, the first row 3"):
        ht.load_csv(path, comm=comm)


@pytest.mark.parametrize("dtype", [">f8", ">i4", "<i2"])
def test_big_endian_data_reaches_torch(tmp_path, comm_of, dtype):
    comm = comm_of(3)
    expected = np.arange(7 * 2, dtype=dtype).reshape(7, 2)
    path = tmp_path / "b.h5"
    with h5py.File(path, "w") as f:
        f["x"] = expected
    native = expected.dtype.newbyteorder("=")
    loaded = ht.load_hdf5(path, "x", comm=comm)
    assert loaded.dtype == native
    made = ht.array(expected, split=0, comm=comm)  # the byte order as given
    for a in (loaded, made):
        assert a.larray.tolist() == expected[:3].tolist()
        doubled = a.map_local(lambda t, rank: t * 2 + rank)
        offsets = np.repeat([0, 1, 2], [3, 2, 2])[:, None]
        np.testing.assert_array_equal(doubled.numpy(), expected * 2 + offsets)
