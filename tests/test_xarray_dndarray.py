"""``xr.DataArray(a, dims=...)``: xarray's own operations on DNDarray-backed data.

Which operations keep a DNDarray (and its layout), which hand the data to
Dask (and warn once per kind, with the reason), and that the values are right
either way, on several rank counts with an empty rank.
"""

from __future__ import annotations

import warnings
from importlib.metadata import EntryPoint

import dask
import dask.array as da
import distributed
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from conftest import holders, layouts, skewed

import dndask as ht
from dndask import _handoff

DIMS = ("time", "lat")


def backed(comm, days: int = 11, empty: bool = True) -> tuple[xr.DataArray, xr.DataArray]:
    """A (days, 4) field with NaNs, split by time over ``comm`` (an empty rank 0 if asked).

    Returns the DNDarray-backed DataArray and the same in memory.
    """
    values = (np.arange(days * 4, dtype=np.float64).reshape(days, 4) * 7) % 11
    values[1, 2] = values[days - 2, 0] = np.nan
    coords = {"time": pd.date_range("2000-01-01", periods=days), "lat": np.arange(4.0) * 10}
    a = ht.array(values, split=0, comm=comm)
    if empty:
        a = skewed(a)
    return (
        xr.DataArray(a, dims=DIMS, coords=coords, name="t"),
        xr.DataArray(values, dims=DIMS, coords=coords, name="t"),
    )


def check(result: xr.DataArray, expected: xr.DataArray, split, comm, counts=None) -> None:
    """``result`` is DNDarray-backed on ``comm``, split as said, and equal to ``expected``."""
    data = result.data
    assert isinstance(data, ht.DNDarray), type(data)
    assert data.split == split and data.comm == comm
    for axis, c in enumerate(data.chunks):
        assert len(c) == (comm.size if axis == split else 1)
    if counts is not None:
        assert list(data.chunks[split]) == list(counts)
    xr.testing.assert_allclose(result.compute(), expected)


@pytest.fixture(autouse=True)
def _fresh_warnings():
    """Every test sees the first LayoutWarning of each kind again."""
    _handoff.reset_warnings()
    yield
    _handoff.reset_warnings()


# ----------------------------------------------------- operations that keep the DNDarray
@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_reductions_keep_a_dndarray(comm_of, n):
    comm = comm_of(n)
    x, memory = backed(comm)
    counts = x.data.chunks[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ht.LayoutWarning)
        for op in ("mean", "std", "var", "max", "min", "sum", "prod", "argmax", "count"):
            check(getattr(x, op)("time"), getattr(memory, op)("time"), None, comm)
            check(getattr(x, op)("lat"), getattr(memory, op)("lat"), 0, comm, counts)
        check(x.mean(), memory.mean(), None, comm)
        check(x.mean("time", skipna=False), memory.mean("time", skipna=False), None, comm)
        check(x.std("time", ddof=1), memory.std("time", ddof=1), None, comm)
        check(x.cumsum("time"), memory.cumsum("time"), 0, comm, counts)
        check(x.cumprod("lat"), memory.cumprod("lat"), 0, comm, counts)
        check(x.resample(time="3D").mean(), memory.resample(time="3D").mean(), None, comm)
        by_day = x.groupby("time.dayofweek").mean()
        check(by_day, memory.groupby("time.dayofweek").mean(), None, comm)
        check(x.groupby("lat").mean(), memory.groupby("lat").mean(), 0, comm, counts)
        check(x.argmin("lat"), memory.argmin("lat"), 0, comm, counts)
        ds = xr.Dataset({"t": x, "m": x.mean("lat")})
        check(ds.mean("time")["t"], memory.mean("time"), None, comm)
        check(ds.mean("lat")["t"], memory.mean("lat"), 0, comm, counts)


@pytest.mark.parametrize("n", [1, 3, 4])
def test_arithmetic_keeps_a_dndarray(comm_of, n):
    comm = comm_of(n)
    x, memory = backed(comm)
    counts = x.data.chunks[0]
    balanced = xr.DataArray(ht.array(memory.values * 2, split=0, comm=comm), dims=DIMS)
    by_lat = xr.DataArray(ht.array(memory.values, split=1, comm=comm), dims=DIMS)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ht.LayoutWarning)
        check(x * 2 + 1, memory * 2 + 1, 0, comm, counts)
        check(x - x.mean("time"), memory - memory.mean("time"), 0, comm, counts)
        check(x + balanced, memory + memory.values * 2, 0, comm, counts)  # first operand's layout
        check(x * by_lat, memory * memory.values, 0, comm, counts)
        check(x + memory, memory * 2, 0, comm, counts)  # numpy-backed operand
        check(np.sin(x), np.sin(memory), 0, comm, counts)
        check(x.where(x > 3), memory.where(memory > 3), 0, comm, counts)
        check(x.fillna(0), memory.fillna(0), 0, comm, counts)
        check(x.astype("float32"), memory.astype("float32"), 0, comm, counts)
        check(x.T, memory.T, 1, comm, counts)
        allowed = xr.apply_ufunc(np.sqrt, x, dask="allowed")
        check(allowed, np.sqrt(memory), 0, comm, counts)
        check(x.diff("time"), memory.diff("time"), 0, comm)
        # the anomaly against a groupby climatology: still x's rows on x's ranks
        climatology = x.groupby("time.dayofweek").mean()
        anomaly = x.groupby("time.dayofweek") - climatology
        expected = memory.groupby("time.dayofweek") - memory.groupby("time.dayofweek").mean()
        check(anomaly, expected, 0, comm, counts)


@pytest.mark.parametrize("n", [2, 3, 5])
def test_selection_keeps_a_dndarray_and_rows_in_place(comm_of, n):
    comm = comm_of(n)
    x, memory = backed(comm)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ht.LayoutWarning)
        for sel in (slice(2, 7), slice(None, None, 2), [0, 9, 4], slice(5, 5)):
            check(x.isel(time=sel), memory.isel(time=sel), 0, comm)
        check(x.isel(lat=[3, 1]), memory.isel(lat=[3, 1]), 0, comm, x.data.chunks[0])
        window = slice("2000-01-03", "2000-01-08")
        check(x.sel(time=window), memory.sel(time=window), 0, comm)
        check(
            x.coarsen(time=2, boundary="trim").mean(),
            memory.coarsen(time=2, boundary="trim").mean(),
            0,
            comm,
        )
        check(xr.concat([x, x], "time"), xr.concat([memory, memory], "time"), 0, comm)
        check(x.pad(time=(1, 2)), memory.pad(time=(1, 2)), 0, comm)
    # rows stay where they were: isel over rank boundaries moves nothing
    picked = x.isel(time=slice(2, 9)).data
    whole = x.data.lshape_map[:, 0].tolist()
    starts = np.cumsum([0, *whole[:-1]])
    kept = [max(0, min(s + c, 9) - max(s, 2)) for s, c in zip(starts, whole, strict=True)]
    assert picked.lshape_map[:, 0].tolist() == kept


@pytest.mark.parametrize("n", [2, 5])
def test_persist_and_compute_keep_placement(client, comm, n):
    ranks = comm.subcomm(list(range(n))[::-1])  # rank r on worker n - 1 - r: not Dask's pick
    x, memory = backed(ranks)
    for obj, expected in (
        (x, memory),
        (x * 2 + 1, memory * 2 + 1),
        (x.mean("lat"), memory.mean("lat")),
    ):
        persisted = obj.persist()
        assert isinstance(persisted.data, ht.DNDarray) and persisted.data.comm == ranks
        assert holders(client, persisted.data) == [(w,) for w in ranks.workers]
        xr.testing.assert_allclose(persisted.compute(), expected)
    computed = x.compute()
    assert isinstance(computed.data, np.ndarray)
    xr.testing.assert_identical(computed, memory)


def test_accessor_reads_the_dndarray(comm_of):
    comm = comm_of(3)
    x, memory = backed(comm)
    assert x.dnd.split == "time" and x.dnd.comm == comm
    assert x.dnd.lshape_map.tolist() == x.data.lshape_map.tolist()
    a = x.dnd.to_dndarray()
    assert a.to_dask().name == x.data.to_dask().name and a is not x.data  # same graph, no copy
    assert a.to_xarray().dims == DIMS and x.data._labels is None  # the labels go on the new one
    by_lat = x.dnd.resplit("lat")
    check(by_lat, memory, 1, comm)
    check(x.dnd.balance(), memory, 0, comm, ht.array(memory.values, split=0, comm=comm).chunks[0])
    ds = xr.Dataset({"t": x, "m": x.mean("lat")})
    assert ds.dnd.split == "time"
    check(ds.dnd.resplit("lat")["t"], memory, 1, comm)
    assert ds.dnd.resplit("lat")["m"].data.split is None


# ------------------------------------------------ operations that hand the data to Dask
def _one_layout_warning(record, match: str) -> None:
    found = [w for w in record if issubclass(w.category, ht.LayoutWarning)]
    assert len(found) == 1, [str(w.message) for w in found]
    assert match in str(found[0].message)


@pytest.mark.parametrize("n", [2, 3, 5])
def test_rolling_warns_once_and_is_right(comm_of, n):
    comm = comm_of(n)
    x, memory = backed(comm)
    with pytest.warns(
        ht.LayoutWarning, match=r"`rolling`.*Dask's own sliding_window_view.*\.dnd\.conform\(\)"
    ):
        rolled = x.rolling(time=3).mean()
    assert isinstance(rolled.data, da.Array)
    xr.testing.assert_allclose(rolled.compute(), memory.rolling(time=3).mean())
    with warnings.catch_warnings():  # once per kind of operation, not per call
        warnings.simplefilter("error", ht.LayoutWarning)
        centred = x.rolling(time=4, center=True, min_periods=2).sum()
        by_lat = x.rolling(lat=2).max()
    xr.testing.assert_allclose(
        centred.compute(), memory.rolling(time=4, center=True, min_periods=2).sum()
    )
    xr.testing.assert_allclose(by_lat.compute(), memory.rolling(lat=2).max())
    # the comm and split are still found, and conform lays the result out per rank again
    assert rolled.dnd.comm == comm and rolled.dnd.split == "time"
    conformed = rolled.dnd.conform()
    assert conformed.data.chunks[1] == (4,) and len(conformed.data.chunks[0]) == n
    xr.testing.assert_allclose(conformed.compute(), memory.rolling(time=3).mean())


@pytest.mark.parametrize(
    ("label", "op", "match"),
    [
        ("shift", lambda o: o.shift(time=2), r"`shift`.*rechunk"),
        ("roll", lambda o: o.roll(time=3), r"`roll`.*joins two slices"),
        ("chunk", lambda o: o.chunk({"time": 2}), r"`chunk`.*Dask chunks"),
        (
            "apply_ufunc",
            lambda o: xr.apply_ufunc(np.sqrt, o, dask="parallelized", output_dtypes=[float]),
            r"`apply_ufunc\(\.\.\., dask='parallelized'\)`.*apply_gufunc",
        ),
    ],
)
def test_operations_that_leave_the_layout_warn_once(comm_of, label, op, match):
    comm = comm_of(3)
    x, memory = backed(comm)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        out = op(x)
        again = op(x + 1)
    _one_layout_warning(record, "")
    _handoff.reset_warnings()
    with pytest.warns(ht.LayoutWarning, match=match):
        op(x)
    assert isinstance(out.data, da.Array)
    xr.testing.assert_allclose(out.compute(), op(memory))
    xr.testing.assert_allclose(again.compute(), op(memory + 1))
    assert len(out.dnd.conform().data.chunks[0]) == comm.size


def test_each_kind_warns_once_per_process(comm_of):
    """Once per kind of operation (not per call, array or variable), each kind for itself."""
    x, memory = backed(comm_of(3))
    ds = xr.Dataset({"t": x, "u": x * 2})
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for obj in (x, x + 1, ds):
            obj.rolling(time=3).mean()
            obj.shift(time=1)
    found = [str(w.message) for w in record if issubclass(w.category, ht.LayoutWarning)]
    assert len(found) == 2, found
    assert "`rolling`" in found[0] and "`shift`" in found[1]
    assert all("once per kind of operation" in m for m in found)
    with warnings.catch_warnings():  # later calls, in any order, are quiet
        warnings.simplefilter("error", ht.LayoutWarning)
        shifted = (x * 3).shift(time=2)
    xr.testing.assert_allclose(shifted.compute(), (memory * 3).shift(time=2))
    _handoff.reset_warnings()
    with pytest.warns(ht.LayoutWarning, match="`shift`"):
        x.shift(time=1)


def test_polyfit_warns_with_its_reason(comm_of):
    x, memory = backed(comm_of(3), empty=False)
    with pytest.warns(ht.LayoutWarning, match=r"`polyfit`.*apply_along_axis"):
        fitted = x.fillna(0).polyfit("lat", 1).polyfit_coefficients
    assert isinstance(fitted.data, da.Array)
    expected = memory.fillna(0).polyfit("lat", 1).polyfit_coefficients
    xr.testing.assert_allclose(fitted.compute(), expected)


def test_left_layout_results_persist_on_their_ranks(client, comm):
    ranks = comm.subcomm([3, 1, 0])
    x, memory = backed(ranks, empty=False)
    with pytest.warns(ht.LayoutWarning):
        rolled = x.rolling(time=3).mean().dnd.conform()
    persisted = rolled.persist()
    distributed.wait(persisted.data)
    who = client.who_has(persisted.data)
    keys = list(dask.core.flatten(persisted.data.__dask_keys__()))
    assert [tuple(who[k]) for k in keys] == [(w,) for w in ranks.workers]
    xr.testing.assert_allclose(persisted.compute(), memory.rolling(time=3).mean())


def test_dask_outside_xarray_does_not_warn(comm_of):
    a = ht.arange(10.0, split=0, comm=comm_of(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ht.LayoutWarning)
        np.testing.assert_array_equal(da.asarray(a).compute(), np.arange(10.0))
        assert a.rechunk(5).chunks == ((5, 5),)


@pytest.mark.parametrize("n", [1, 3, 5])
def test_median_and_quantile_keep_a_dndarray(comm_of, n):
    """xarray calls np.nanmedian / np.nanquantile (and xp.median / xp.quantile without skipna)."""
    comm = comm_of(n)
    x, memory = backed(comm)
    counts = x.data.chunks[0]
    by_lat = ht.array(memory.values, split=1, comm=comm).chunks[1]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ht.LayoutWarning)
        # along lat: each rank its own rows, nothing moves
        check(x.median("lat"), memory.median("lat"), 0, comm, counts)
        check(x.median("lat", skipna=False), memory.median("lat", skipna=False), 0, comm, counts)
        quartiles = x.quantile([0.25, 0.75], "lat")
        check(quartiles, memory.quantile([0.25, 0.75], "lat"), 1, comm, counts)
        # along time (the split): resplit along lat first, as dndask.median does
        check(x.median("time"), memory.median("time"), 0, comm, by_lat)
        check(x.quantile(0.3, "time"), memory.quantile(0.3, "time"), 0, comm, by_lat)
        check(
            x.quantile(0.5, "time", skipna=False),
            memory.quantile(0.5, "time", skipna=False),
            0,
            comm,
            by_lat,
        )
        # over everything: the exact distributed selection, NaNs left out
        check(x.median(), memory.median(), None, comm)
        check(x.quantile([0.1, 0.9]), memory.quantile([0.1, 0.9]), None, comm)
        by_day = x.groupby("time.dayofweek").median()
        check(by_day, memory.groupby("time.dayofweek").median(), 1, comm, by_lat)
        ds = xr.Dataset({"t": x})
        check(ds.median("lat")["t"], memory.median("lat"), 0, comm, counts)


@pytest.mark.parametrize("n", [1, 3, 5])
def test_expand_dims_broadcast_and_idxmax_keep_a_dndarray(comm_of, n):
    """xarray's expand_dims/broadcast_like call xp.broadcast_to; idxmax indexes with a DNDarray."""
    comm = comm_of(n)
    x, memory = backed(comm)
    counts = x.data.chunks[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ht.LayoutWarning)
        check(x.expand_dims(member=2), memory.expand_dims(member=2), 1, comm, counts)
        check(x.isel(lat=0).broadcast_like(x), memory.isel(lat=0).broadcast_like(memory), 0, comm)
        check(x.fillna(0).idxmax("time"), memory.fillna(0).idxmax("time"), None, comm)
        check(x.fillna(0).idxmin("lat"), memory.fillna(0).idxmin("lat"), 0, comm, counts)
        # where(drop=True): xarray refuses a lazy boolean indexer (as for Dask); computed, it works
        kept = x.where((x > 5).compute(), drop=True)
        check(kept, memory.where(memory > 5, drop=True), 0, comm)
    with pytest.raises(KeyError, match="Indexing with a boolean dask array is not allowed"):
        x.where(x > 5, drop=True)
    np.testing.assert_array_equal(np.broadcast_to(x.data, (2, 11, 4)).numpy()[1], memory.values)
    assert x.fillna(0).data.tolist() == memory.fillna(0).values.tolist()


@pytest.mark.parametrize("n", [1, 3, 5])
def test_outer_and_pointwise_selection(comm_of, n):
    """xarray's outer indexing (lists on two dims) and vectorized indexing (``vindex``)."""
    comm = comm_of(n)
    values = np.arange(11 * 4 * 5.0).reshape(11, 4, 5)
    a = ht.array(values, split=0, comm=comm)
    if n > 1:
        a = skewed(a)
    dims = ("time", "lat", "lon")
    x, memory = xr.DataArray(a, dims=dims), xr.DataArray(values, dims=dims)

    def p(v):
        return xr.DataArray(v, dims="p")

    with warnings.catch_warnings():
        warnings.simplefilter("error", ht.LayoutWarning)
        for idx, split in (
            ({"time": [0, 2], "lat": [1, 3]}, 0),  # same lengths: numpy would pair them
            ({"time": [9, 2, 5], "lat": [1, 3], "lon": [4, 0]}, 0),
            ({"time": p([0, 3, 9]), "lat": p([1, 2, 0])}, 0),
            ({"lat": p([1, 2, 0]), "lon": p([4, 4, 1])}, 0),  # vindex puts p first, xarray back
            ({"time": p([0, 10]), "lon": p([4, 1])}, 0),
        ):
            check(x.isel(idx), memory.isel(idx), split, comm)
    g = np.arange(24).reshape(2, 3, 4)
    b = ht.array(g, split=1, comm=comm)
    i, j = np.array([0, 2, 2]), np.array([[1], [3]])
    got = b.vindex[:, i, j]  # numpy would keep the broadcast axes in the middle
    np.testing.assert_array_equal(got.numpy(), np.moveaxis(g[:, i, j], (1, 2), (0, 1)))
    np.testing.assert_array_equal(b.vindex[1, i].numpy(), g[1, i])
    np.testing.assert_array_equal(b[[0, 1], [2, 0]].numpy(), g[[0, 1], [2, 0]])  # numpy's rule


def test_unsupported_operations_say_so(comm_of):
    x, _ = backed(comm_of(2))
    with pytest.raises(AttributeError, match="einsum"):
        x.dot(x)


def test_a_dndask_chunk_manager_would_clash_with_dask(comm_of):
    """Why dndask registers no ``xarray.chunkmanagers`` entry point (see docs/xarray-io.md).

    xarray's Dask chunk manager claims every Dask collection, a DNDarray too,
    and xarray refuses an array that two managers claim. If this starts to
    pass without the TypeError, a dndask chunk manager becomes possible.
    """
    from xarray.namedarray import parallelcompat

    a = ht.arange(4.0, split=0, comm=comm_of(2))
    entry = EntryPoint("dask", "xarray.namedarray.daskmanager:DaskManager", "xarray.chunkmanagers")
    managers = parallelcompat.load_chunkmanagers([entry])
    managers["dndask"] = _ClaimsDNDarrays()
    original = parallelcompat.list_chunkmanagers
    parallelcompat.list_chunkmanagers = lambda: managers
    try:
        with pytest.raises(TypeError, match="Multiple ChunkManagers recognise type"):
            parallelcompat.get_chunked_array_type(a)
    finally:
        parallelcompat.list_chunkmanagers = original


class _ClaimsDNDarrays:
    """The one method of a chunk manager that ``get_chunked_array_type`` calls."""

    def is_chunked_array(self, data) -> bool:
        return isinstance(data, ht.DNDarray)


# ------------------------------------------------------------ the numpy functions behind it
@pytest.mark.parametrize(("shape", "split", "n"), layouts([(7, 3)], rank_counts=[1, 3, 5]))
def test_nan_reductions_match_numpy(comm_of, shape, split, n):
    values = np.arange(21.0).reshape(shape) * 7 % 23  # no ties: argmax has one answer
    values[0, 1] = values[4, :] = np.nan
    a = ht.array(values, split=split, comm=comm_of(n))
    if split is not None and n > 1:
        a = skewed(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's all-NaN slice warnings
        for fn in (np.nansum, np.nanprod, np.nanmean, np.nanvar, np.nanstd, np.nanmin, np.nanmax):
            for axis in (None, 0, 1):
                out = fn(a, axis=axis)
                assert isinstance(out, ht.DNDarray)
                np.testing.assert_allclose(out.numpy(), fn(values, axis=axis), equal_nan=True)
        np.testing.assert_allclose(
            np.nanstd(a, axis=0, ddof=1).numpy(), np.nanstd(values, axis=0, ddof=1)
        )
        for fn in (np.nanargmin, np.nanargmax):
            np.testing.assert_array_equal(fn(a, axis=0).numpy(), fn(values, axis=0))
            assert int(fn(a)) == fn(values)
        for fn in (np.nancumsum, np.nancumprod):
            for axis in (0, 1):
                out = fn(a, axis=axis)
                assert out.split == a.split and out.lshape_map.tolist() == a.lshape_map.tolist()
                np.testing.assert_allclose(out.numpy(), fn(values, axis=axis))


@pytest.mark.parametrize(("shape", "split", "n"), layouts([(9, 4)], rank_counts=[1, 2, 4, 5]))
def test_sliding_window_view_matches_numpy(comm_of, shape, split, n):
    values = np.arange(36).reshape(shape)
    a = ht.array(values, split=split, comm=comm_of(n))
    if split is not None and n > 2:
        a = skewed(a)
    view = np.lib.stride_tricks.sliding_window_view
    for window, axis in ((3, 0), (2, 1), ((2, 3), (0, 1)), ((2, 2), (0, 0)), ((9, 4), None)):
        out = view(a, window, axis=axis)
        assert isinstance(out, ht.DNDarray) and out.split == a.split
        for ax, c in enumerate(out.chunks):
            assert len(c) == (a.comm.size if ax == a.split else 1)
        np.testing.assert_array_equal(out.numpy(), view(values, window, axis=axis))
    xp = a.__array_namespace__()
    assert xp.lib.stride_tricks.sliding_window_view(a, 2, axis=0).shape == (8, 4, 2)


def test_sliding_window_view_bad_input(comm_of):
    a = ht.arange(6, split=0, comm=comm_of(2))
    view = np.lib.stride_tricks.sliding_window_view
    with pytest.raises(
        ValueError, match=r"`window_shape` must not exceed the axis length: axis 0 has 6, window 7"
    ):
        view(a, 7)
    with pytest.raises(ValueError, match=r"`window_shape` must be at least 1, got 0"):
        view(a, 0)
    with pytest.raises(
        ValueError, match=r"`window_shape` must have one size per axis in `axis` \(1\), got 2"
    ):
        view(a, (2, 2), axis=0)
    with pytest.raises(
        TypeError, match=r"`window_shape` must be an int or a tuple of ints, got float"
    ):
        view(a, 2.0)
    with pytest.raises(NotImplementedError, match=r"a copy: `subok` and `writeable` must be False"):
        view(a, 2, writeable=True)


def test_a_scalar_of_the_default_comm_is_a_value(comm_of):
    """xarray's ``fillna(0)`` makes ``xp.asarray(0)`` on the default comm: a 0-d operand."""
    sub = comm_of(2)
    a = ht.array([1.0, np.nan, 3.0], split=0, comm=sub)
    zero = ht.array(0.0)  # the default comm (5 ranks)
    assert zero.comm != sub
    out = ht.where(ht.isnan(a), zero, a)
    assert out.comm == sub and out.split == 0
    np.testing.assert_array_equal(out.numpy(), [1.0, 0.0, 3.0])
    np.testing.assert_array_equal((zero + a).numpy(), [1.0, np.nan, 3.0])
    assert (zero + a).comm == sub
    with pytest.raises(ValueError, match="operands of `add` must share a comm"):
        a + ht.zeros(3, split=0)
