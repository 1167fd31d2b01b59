"""Statistics against numpy (and torch for histc) on every split, rank count and skewed layouts."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest
import torch
from conftest import RANK_COUNTS, LayoutBatch, assert_layout, layouts, received_bytes
from dask.sizeof import sizeof
from hypothesis import given, settings
from hypothesis import strategies as st

import dndask as ht
from dndask import _moment_partials
from dndask._statistics import _quantiles, _selection

PROPS = settings(derandomize=True, max_examples=150, deadline=None)
QS = [50, [0, 12.5, 50, 87.5, 100]]


def unbalanced(a: ht.DNDarray) -> ht.DNDarray:
    """A copy of ``a`` moved with ``redistribute_`` so that rank 0 and the middle ranks are empty."""
    b = a.copy()
    if b.split is None or b.comm.size == 1:
        return b
    n, size = b.shape[b.split], b.comm.size
    counts = [0] * size
    counts[1] = n // 3
    counts[-1] += n - n // 3
    target = b.lshape_map
    target[:, b.split] = torch.tensor(counts)
    return b.redistribute_(target_map=target)


def inputs(g: np.ndarray, split, comm) -> list[ht.DNDarray]:
    a = ht.array(g, split=split, comm=comm)
    return [a, unbalanced(a)] if split is not None and comm.size > 1 else [a]


def reduced_split(shape, split, axis, keepdims, lead=0):
    """The split rule of percentile/median: resplit to the longest surviving axis if needed."""
    ndim = len(shape)
    axes = range(ndim) if axis is None else [ax % ndim for ax in np.atleast_1d(axis)]
    rest = [ax for ax in range(ndim) if ax not in axes]
    if split is None or (split in axes and not rest):
        return None
    if split in axes:
        split = max(rest, key=lambda ax: (shape[ax], -ax))
    kept = [ax for ax in range(ndim) if ax not in axes or keepdims]
    return lead + kept.index(split)


def assert_unchanged(a: ht.DNDarray, values: np.ndarray, split, lshape_map) -> None:
    assert a.split == split
    assert a.lshape_map.tolist() == lshape_map
    np.testing.assert_array_equal(a.numpy(), values)


# ------------------------------------------------------------- pure planning
def test_plan_and_combine_equal_numpy_for_every_method():
    rng = np.random.default_rng(0)
    qs = [50, 50.0, [0, 100, 33.3, 66.7, 12.5], np.float64(37.5), np.array([1.0, 99.0], np.float32)]
    for n in [1, 2, 3, 4, 5, 7, 10, 33]:
        for dtype in (np.float32, np.float64, np.int64, np.int16):
            data = rng.integers(-4, 5, n).astype(dtype)
            if dtype == np.float64:
                data[0] = np.inf
            s = np.sort(data)
            for q in qs:
                _, fraction, weak = _quantiles.check_q(q)
                for method in _quantiles._METHODS:
                    low, high, gamma = _quantiles.plan_quantiles(n, fraction, method)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", RuntimeWarning)
                        got = _quantiles.combine_quantiles(
                            s[low], s[high], gamma, weak, False, data.dtype
                        )
                        want = np.asarray(np.percentile(data, q, method=method))
                    assert got.dtype == want.dtype, (n, dtype, q, method)
                    np.testing.assert_array_equal(got, want, err_msg=f"{n} {dtype} {q} {method}")


def test_nan_result_keeps_numpy_dtype():
    data = np.array([1.0, np.nan, 3.0], np.float32)
    for q in (50, [10, 90], np.float64(3)):
        _, fraction, weak = _quantiles.check_q(q)
        low, _, gamma = _quantiles.plan_quantiles(3, fraction, "linear")
        zeros = np.zeros(np.shape(low), np.float32)
        got = _quantiles.combine_quantiles(zeros, zeros, gamma, weak, True, data.dtype)
        want = np.asarray(np.percentile(data, q))
        assert got.dtype == want.dtype and np.isnan(got).all()


def local_select(chunks, positions, m):
    """Run the selection against in-memory chunks: the worker side is ``probe``."""
    ordered = [np.sort(c) for c in chunks]
    return _selection.select(positions, lambda b: [_selection.probe(s, b, m) for s in ordered], m)


@PROPS
@given(
    data=st.lists(
        st.lists(st.integers(-3, 3) | st.floats(-1e6, 1e6), max_size=30), min_size=1, max_size=6
    ),
    m=st.integers(2, 6),
    picks=st.lists(st.floats(0, 1), min_size=1, max_size=4),
)
def test_select_finds_exact_order_statistics(data, m, picks):
    chunks = [np.asarray(c, dtype=np.float64) for c in data]
    full = np.sort(np.concatenate(chunks))
    if full.size == 0:
        return
    positions = sorted({int(p * (full.size - 1)) for p in picks})
    found, has_nan, stats = local_select(chunks, positions, m)
    assert not has_nan
    assert {k: found[k] for k in positions} == {k: full[k] for k in positions}
    assert stats["rounds"] >= 1


@PROPS
@given(
    data=st.lists(
        st.lists(st.integers(-3, 3) | st.floats(-1e6, 1e6) | st.just(np.nan), max_size=30),
        min_size=1,
        max_size=6,
    ),
    m=st.integers(2, 6),
    picks=st.lists(st.floats(0, 1), min_size=1, max_size=4),
)
def test_select_past_nans_finds_the_order_statistics_without_them(data, m, picks):
    chunks = [np.asarray(c, dtype=np.float64) for c in data]
    values = np.concatenate(chunks)
    valid = np.sort(values[~np.isnan(values)])
    assert sum(_selection.valid_count(np.sort(c)) for c in chunks) == valid.size
    if valid.size == 0:
        return
    positions = sorted({int(p * (valid.size - 1)) for p in picks})
    ordered = [np.sort(c) for c in chunks]
    found, has_nan, _ = _selection.select(
        positions, lambda b: [_selection.probe(s, b, m) for s in ordered], m, nan_stops=False
    )
    assert not has_nan
    assert {k: found[k] for k in positions} == {k: valid[k] for k in positions}


def test_select_rounds_and_traffic_stay_small():
    rng = np.random.default_rng(3)
    n, size = 200_000, 8
    layouts_ = {
        "balanced": np.array_split(rng.standard_normal(n), size),
        "one rank": [rng.standard_normal(n)] + [np.empty(0)] * (size - 1),
        "sorted": np.array_split(np.arange(n, dtype=float), size),
        "ties": np.array_split(rng.integers(0, 3, n).astype(float), size),
    }
    positions = [0, n // 2 - 1, n // 2, n - 1]
    for name, chunks in layouts_.items():
        full = np.sort(np.concatenate(chunks))
        found, _, stats = local_select(chunks, positions, 256)
        assert [found[k] for k in positions] == [full[k] for k in positions], name
        assert stats["rounds"] <= 3, (name, stats)
        # at most m values per rank and bracket and round travel
        assert stats["values"] <= stats["rounds"] * size * 256 * len(positions), (name, stats)
        assert stats["values"] < n / 10, (name, stats)


def test_probe_counts_ties_instead_of_sending_them():
    values = np.array([1.0, 2.0, 2.0, 2.0, 2.0, 5.0])
    has_nan, answers = _selection.probe(values, [(None, None), (1.0, 2.0), (2.0, None)], 2)
    assert not has_nan
    assert answers[0][:2] == (0, 6) and answers[0][2].tolist() == [1.0, 5.0]
    assert answers[1][:2] == (1, 1) and answers[1][2].size == 0
    assert answers[2][:2] == (5, 6) and answers[2][2].tolist() == [5.0]
    assert _selection.probe(np.array([0.0, np.nan]), [(None, None)], 4)[0]


# ---------------------------------------------------------- percentile, median
@pytest.mark.parametrize(("shape", "split", "n"), layouts([(9,), (4, 6)], rank_counts=(1, 2, 3, 5)))
def test_percentile_against_numpy(comm_of, shape, split, n):
    comm = comm_of(n)
    g = np.random.default_rng(1).integers(0, 7, size=shape).astype(np.float64)  # ties
    axes = [None, *range(len(shape)), tuple(range(len(shape)))]
    check = LayoutBatch()
    for a in inputs(g, split, comm):
        for axis in axes:
            for i, q in enumerate(QS):
                keepdims = bool(i)
                got = ht.percentile(a, q, axis=axis, keepdims=keepdims)
                want = np.asarray(np.percentile(g, q, axis=axis, keepdims=keepdims))
                lead = np.ndim(q)
                check.add(got, want, reduced_split(shape, split, axis, keepdims, lead), comm)
    check.check()


@pytest.mark.parametrize(("shape", "split", "n"), layouts([(7,), (3, 4, 2)], rank_counts=(1, 3, 5)))
def test_median_against_numpy(comm_of, shape, split, n):
    comm = comm_of(n)
    g = np.random.default_rng(2).integers(-3, 4, size=shape)
    axes = [None, 0, -1] + ([(0, len(shape) - 1)] if len(shape) > 1 else [])
    check = LayoutBatch()
    for a in inputs(g, split, comm):
        for i, axis in enumerate(axes):
            keepdims = bool(i % 2)
            got = ht.median(a, axis=axis, keepdims=keepdims)
            want = np.asarray(np.median(g, axis=axis, keepdims=keepdims))
            check.add(got, want, reduced_split(shape, split, axis, keepdims), comm)
    check.check()


QF = [0.5, [0, 0.125, 0.5, 0.875, 1]]


@pytest.mark.parametrize(("shape", "split", "n"), layouts([(9,), (4, 6)], rank_counts=(1, 3, 5)))
def test_nan_quantiles_and_quantile_against_numpy(comm_of, shape, split, n):
    comm = comm_of(n)
    g = np.random.default_rng(6).integers(0, 7, size=shape).astype(np.float64)  # ties
    g.flat[[0, 4, 5]] = np.nan  # NaNs on several ranks
    if g.ndim == 2:
        g[2, :] = np.nan  # an all-NaN row: NaN there, as numpy
    axes = [None, *range(len(shape))]
    pairs = [
        (ht.nanpercentile, np.nanpercentile, QS),
        (ht.nanquantile, np.nanquantile, QF),
        (ht.quantile, np.quantile, QF),
    ]
    check = LayoutBatch()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's all-NaN slices
        for a in inputs(g, split, comm):
            for axis in axes:
                for ours, theirs, qs in pairs:
                    for i, q in enumerate(qs):
                        keepdims = bool(i)
                        got = ours(a, q, axis=axis, keepdims=keepdims)
                        want = np.asarray(theirs(g, q, axis=axis, keepdims=keepdims))
                        lead = np.ndim(q)
                        check.add(
                            got, want, reduced_split(shape, split, axis, keepdims, lead), comm
                        )
                got = ht.nanmedian(a, axis=axis, keepdims=bool(axis))
                want = np.asarray(np.nanmedian(g, axis=axis, keepdims=bool(axis)))
                check.add(got, want, reduced_split(shape, split, axis, bool(axis)), comm)
    check.check()


def test_nan_selection_over_several_rounds(comm_of, monkeypatch):
    comm = comm_of(5)
    monkeypatch.setattr(_selection, "_SAMPLES", 4)  # force several rounds
    rng = np.random.default_rng(7)
    for dtype in (np.float64, np.float32):
        g = rng.standard_normal(40).astype(dtype)
        g[rng.choice(40, 9, replace=False)] = np.nan
        a = unbalanced(ht.array(g, split=0, comm=comm))
        for i, method in enumerate(_quantiles._METHODS):
            q = ([3, 50, 97.5], 33.3)[i % 2]
            got = ht.nanpercentile(a, q, method=method)
            assert_layout(got, np.asarray(np.nanpercentile(g, q, method=method)), None, comm)
        assert _selection.last_selection["rounds"] > 1
        assert_layout(ht.nanmedian(a), np.asarray(np.nanmedian(g)), None, comm)
        assert_layout(ht.nanquantile(a, 0.3), np.asarray(np.nanquantile(g, 0.3)), None, comm)


def test_nan_versions_of_all_nan_ints_and_numpy_dispatch(comm_of):
    comm = comm_of(3)
    nans = ht.array(np.full(5, np.nan), split=0, comm=comm)
    with pytest.warns(RuntimeWarning, match="All-NaN slice encountered in `nanmedian`"):
        assert_layout(ht.nanmedian(nans), np.asarray(np.nan), None, comm)
    with pytest.warns(RuntimeWarning, match="All-NaN slice encountered in `nanquantile`"):
        got = ht.nanquantile(nans, [0.2, 0.5])
    assert_layout(got, np.full(2, np.nan), None, comm)
    ints = ht.arange(7, split=0, comm=comm)  # no NaN: the plain functions' values
    assert_layout(ht.nanmedian(ints), np.asarray(np.nanmedian(np.arange(7))), None, comm)
    assert_layout(
        ht.nanpercentile(ints, 40), np.asarray(np.nanpercentile(np.arange(7), 40)), None, comm
    )
    g = np.array([3.0, np.nan, 1.0, 2.0])
    a = ht.array(g, split=0, comm=comm)
    for fn, args in (
        (np.nanmedian, ()),
        (np.nanpercentile, (25,)),
        (np.nanquantile, (0.25,)),
        (np.quantile, (0.25,)),
    ):
        got = fn(a, *args)
        assert isinstance(got, ht.DNDarray)
        np.testing.assert_array_equal(got.numpy(), fn(g, *args))
    with pytest.raises(ValueError, match=r"`q` must be in \[0, 1\], got 1.5"):
        ht.quantile(a, 1.5)
    with pytest.raises(ValueError, match=r"`q` must be in \[0, 1\], got 50"):
        ht.nanquantile(a, 50)
    with pytest.raises(
        TypeError,
        match=r"`a` of `nanmedian` must have a boolean, integer or floating dtype, got complex64",
    ):
        ht.nanmedian(ht.array([1j], comm=comm))
    assert a.lshape_map[:, 0].tolist() == [2, 1, 1]


def test_global_selection_every_method_and_dtype(comm_of, monkeypatch):
    comm = comm_of(5)
    monkeypatch.setattr(_selection, "_SAMPLES", 4)  # force several rounds
    rng = np.random.default_rng(4)
    data = {
        "int32 ties": np.repeat(np.arange(4, dtype=np.int32), 10),
        "float32": rng.standard_normal(40).astype(np.float32),
    }
    for name, g in data.items():
        a = unbalanced(ht.array(g, split=0, comm=comm))
        for i, method in enumerate(_quantiles._METHODS):
            for q in ([3, 50, 97.5], 33.3)[i % 2 :]:
                got = ht.percentile(a, q, method=method)
                want = np.asarray(np.percentile(g, q, method=method))
                assert_layout(got, want, None, comm)
        assert _selection.last_selection["rounds"] > 1, name
        assert_layout(ht.median(a), np.asarray(np.median(g)), None, comm)


def test_selection_moves_only_counts_and_samples(comm_of):
    comm = comm_of(4)
    g = np.random.default_rng(5).standard_normal(40_000)
    a = ht.array(g, split=0, comm=comm).persist()
    got = ht.percentile(a, [1, 50, 99])
    assert_layout(got, np.percentile(g, [1, 50, 99]), None, comm)
    stats = _selection.last_selection
    assert stats["rounds"] <= 3
    assert stats["values"] <= stats["rounds"] * comm.size * stats["samples"] * 6
    assert stats["bytes"] < g.nbytes / 20


def test_nan_propagates(comm_of):
    comm = comm_of(3)
    g = np.arange(12.0).reshape(4, 3)
    g[2, 1] = np.nan
    for split in (None, 0, 1):
        a = ht.array(g, split=split, comm=comm)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            for axis in (None, 0, 1):
                got = ht.percentile(a, [10, 50], axis=axis).numpy()
                np.testing.assert_array_equal(got, np.percentile(g, [10, 50], axis=axis))
                np.testing.assert_array_equal(
                    ht.median(a, axis=axis).numpy(), np.median(g, axis=axis)
                )
    b = ht.array(g.ravel(), split=0, comm=comm)
    got = ht.percentile(b, 50)
    assert got.numpy().dtype == np.float64 and np.isnan(got.item())


def test_heat_spellings_and_numpy_dispatch(comm_of):
    comm = comm_of(3)
    g = np.arange(10.0)
    a = ht.array(g, split=0, comm=comm)
    got = ht.percentile(a, 30, interpolation="lower", sketched=True, sketch_size=0.5)
    assert got.item() == np.percentile(g, 30, method="lower")
    assert ht.median(a, sketched=True).item() == 4.5
    assert isinstance(np.percentile(a, 50), ht.DNDarray)
    assert np.median(a).item() == 4.5
    assert ht.percentile(a, torch.tensor([50.0])).numpy().tolist() == [4.5]
    assert ht.percentile(a, ht.array([25.0, 75.0], comm=comm)).numpy().tolist() == [2.25, 6.75]


def test_booleans_float16_and_0d(comm_of):
    comm = comm_of(4)
    b = np.array([True, False, True, True, False])
    for split in (None, 0):
        assert_layout(
            ht.median(ht.array(b, split=split, comm=comm)), np.asarray(np.median(b)), None, comm
        )
    h = np.linspace(-3, 3, 11).astype(np.float16)
    a = ht.array(h, split=0, comm=comm)
    assert_layout(ht.percentile(a, 33), np.asarray(np.percentile(h, 33)), None, comm)
    assert_layout(
        ht.percentile(ht.array(5.0, comm=comm), [50]),
        np.percentile(np.float32(5.0), [50]),
        None,
        comm,
    )


def test_percentile_of_zero_size_axes(comm_of):
    comm = comm_of(3)
    z = ht.zeros((0, 4), split=0, comm=comm)
    assert_layout(
        ht.percentile(z, 50, axis=1),
        np.percentile(np.zeros((0, 4)), 50, axis=1).astype(np.float32),
        0,
        comm,
    )
    with pytest.raises(ValueError, match="`a` of `percentile` has no values along `axis`"):
        ht.percentile(z, 50)
    with pytest.raises(ValueError, match="`a` of `median` has no values along `axis`"):
        ht.median(z, axis=0)


def test_percentile_bad_input_leaves_a_unchanged(comm_of):
    comm = comm_of(3)
    g = np.arange(12.0).reshape(4, 3)
    a = unbalanced(ht.array(g, split=0, comm=comm))
    lmap = a.lshape_map.tolist()
    cases = [
        (ValueError, r"`q` must be in \[0, 100\], got 101", dict(q=101)),
        (ValueError, r"`q` must be in \[0, 100\]", dict(q=[10, -1])),
        (ValueError, r"`q` must be in \[0, 100\]", dict(q=float("nan"))),
        (ValueError, "`q` must be a scalar or 1-D", dict(q=[[10]])),
        (TypeError, "`q` must be real numbers", dict(q="50")),
        (ValueError, r"`axis` must be in \[-2, 1\]", dict(q=50, axis=2)),
        (TypeError, "`axis` must be None, an int or a tuple", dict(q=50, axis=1.0)),
        (ValueError, "`method` must be one of", dict(q=50, method="cubic")),
        (
            TypeError,
            "give only one of `method` and `interpolation`",
            dict(q=5, method="lower", interpolation="higher"),
        ),
        (TypeError, "`keepdims` must be a bool", dict(q=50, keepdims=1)),
        (ValueError, r"`sketch_size` must be in \(0, 1\]", dict(q=50, sketch_size=2.0)),
    ]
    for error, message, kwargs in cases:
        with pytest.raises(error, match=message):
            ht.percentile(a, **kwargs)
    with pytest.raises(TypeError, match="`a` of `percentile` must have an integer or floating"):
        ht.percentile(a > 2, 50)
    with pytest.raises(TypeError, match="`a` of `median` must be a DNDarray"):
        ht.median(g)
    assert_unchanged(a, g, 0, lmap)


# ------------------------------------------------------------------- average
@pytest.mark.parametrize(("shape", "split", "n"), layouts([(7,), (4, 5)], rank_counts=(1, 2, 5)))
def test_average_against_numpy(comm_of, shape, split, n):
    comm = comm_of(n)
    rng = np.random.default_rng(6)
    g = rng.integers(0, 9, size=shape).astype(np.float64)  # integer values: sums are exact
    w = rng.integers(1, 4, size=shape)
    check = LayoutBatch()
    for a in inputs(g, split, comm):
        for axis in [None, *range(len(shape))]:
            want_split = _split_of_reduction(split, axis, len(shape))
            check.add(
                ht.average(a, axis=axis), np.asarray(np.average(g, axis=axis)), want_split, comm
            )
            # split weights on a split=None `a`: the result follows the weights (Heat's rule)
            weights = ht.array(w, split=0 if split is None else None, comm=comm)
            weighted_split = _split_of_reduction(0 if split is None else split, axis, len(shape))
            avg, total = ht.average(a, axis=axis, weights=weights, returned=True)
            want_avg, want_total = np.average(g, axis=axis, weights=w, returned=True)
            check.add(avg, np.asarray(want_avg), weighted_split, comm)
            check.add(total, np.asarray(want_total), weighted_split, comm)
            if axis is not None:
                w1 = np.arange(1, shape[axis] + 1)
                kinds = (ht.array(w1, split=0, comm=comm), w1, torch.from_numpy(w1))
                w1_in = kinds[(axis + (split or 0)) % 3]  # each kind on some axis and split
                avg, total = ht.average(a, axis=axis, weights=w1_in, returned=True)
                want_avg, want_total = np.average(g, axis=axis, weights=w1, returned=True)
                check.add(avg, want_avg, want_split, comm)
                check.add(total, want_total, want_split, comm)
    check.check()


def _split_of_reduction(split, axis, ndim, keepdims=False):
    axes = range(ndim) if axis is None else [ax % ndim for ax in np.atleast_1d(axis)]
    if split is None or split in axes:
        return None
    return split if keepdims else split - sum(1 for ax in axes if ax < split)


def test_average_tuple_axes_keepdims_and_ints(comm_of):
    comm = comm_of(3)
    g = np.arange(24).reshape(2, 3, 4)
    w = np.arange(8).reshape(2, 4) % 3 + 1
    for split in (None, 0, 1, 2):
        a = unbalanced(ht.array(g, split=split, comm=comm))
        got = ht.average(a, axis=(2, 0), weights=w.T, keepdims=True)
        want = np.average(g, axis=(2, 0), weights=w.T, keepdims=True)
        assert_layout(got, want, None if split in (0, 2) else split, comm)
        assert_layout(ht.average(a > 10), np.asarray(np.average(g > 10)), None, comm)


def test_average_bad_input(comm_of):
    comm = comm_of(3)
    g = np.arange(12.0).reshape(4, 3)
    a = unbalanced(ht.array(g, split=0, comm=comm))
    lmap = a.lshape_map.tolist()
    with pytest.raises(ZeroDivisionError, match="`weights` sum to zero"):
        ht.average(a, axis=0, weights=np.array([1.0, -1.0, 0.0, 0.0]))
    with pytest.raises(
        TypeError, match=r"`weights` must have the shape of `a` \(4, 3\) when `axis` is None"
    ):
        ht.average(a, weights=np.ones(3))
    with pytest.raises(ValueError, match=r"`weights` must have shape \(4, 3\) or \(3,\)"):
        ht.average(a, axis=1, weights=np.ones(4))
    with pytest.raises(TypeError, match="`weights` of `average` must have a numeric dtype"):
        ht.average(a, axis=1, weights=np.array(["a", "b", "c"]))
    with pytest.raises(TypeError, match="`returned` must be a bool"):
        ht.average(a, returned="yes")
    with pytest.raises(ValueError, match=r"`axis` must be in \[-2, 1\]"):
        ht.average(a, axis=3)
    assert_unchanged(a, g, 0, lmap)


# ------------------------------------------------------------------ bincount
@pytest.mark.parametrize(("shape", "split", "n"), layouts([(7,), (3,)], rank_counts=(1, 2, 5)))
def test_bincount_against_numpy(comm_of, shape, split, n):
    comm = comm_of(n)
    g = np.random.default_rng(7).integers(0, 6, size=shape)
    w = np.linspace(0.5, 3.5, shape[0])
    check = LayoutBatch()
    for x in inputs(g, split, comm):
        check.add(ht.bincount(x), np.bincount(g), None, comm)
        check.add(ht.bincount(x, minlength=9), np.bincount(g, minlength=9), None, comm)
        for weights in (w, ht.array(w, split=0, comm=comm), torch.from_numpy(w)):
            check.add(ht.bincount(x, weights=weights), np.bincount(g, weights=w), None, comm)
    check.check()


def test_bincount_empty_bool_and_bad_input(comm_of):
    comm = comm_of(3)
    empty = ht.array(np.zeros(0, np.int64), split=0, comm=comm)
    assert_layout(ht.bincount(empty, minlength=3), np.bincount([], minlength=3), None, comm)
    flags = ht.array(np.array([True, False, True]), split=0, comm=comm)
    assert_layout(ht.bincount(flags), np.bincount([1, 0, 1]), None, comm)
    g = np.array([1, 0, -2, 3])
    x = unbalanced(ht.array(g, split=0, comm=comm))
    lmap = x.lshape_map.tolist()
    with pytest.raises(
        ValueError, match="`x` of `bincount` must hold non-negative ints, got minimum -2"
    ):
        ht.bincount(x)
    with pytest.raises(TypeError, match="`x` of `bincount` must have an integer dtype, got float"):
        ht.bincount(x.astype(ht.float32))
    with pytest.raises(
        ValueError, match=r"`x` of `bincount` must be 1-dimensional, got shape \(1, 4\)"
    ):
        ht.bincount(ht.array(g[None, :], comm=comm))
    with pytest.raises(ValueError, match="`minlength` must be non-negative, got -1"):
        ht.bincount(x, minlength=-1)
    with pytest.raises(TypeError, match="`minlength` must be an int"):
        ht.bincount(x, minlength=2.0)
    with pytest.raises(
        ValueError, match=r"`weights` must have the shape of `x` \(4,\), got \(3,\)"
    ):
        ht.bincount(x, weights=np.ones(3))
    assert_unchanged(x, g, 0, lmap)


# ------------------------------------------------------------ histogram, histc
@pytest.mark.parametrize(("shape", "split", "n"), layouts([(9,), (3, 4)], rank_counts=(1, 2, 5)))
def test_histogram_against_numpy(comm_of, shape, split, n):
    comm = comm_of(n)
    rng = np.random.default_rng(8)
    g = rng.integers(-5, 6, size=shape).astype(np.float32)
    w = rng.integers(1, 4, size=shape).astype(np.float64)
    edges = [-5.0, -1.0, 0.0, 0.0, 2.5, 5.0]
    check = LayoutBatch()
    for a in inputs(g, split, comm):
        for kwargs in (
            {},
            {"bins": 4, "range": (-2, 3)},
            {"bins": edges, "weights": w},
            {"bins": 3, "density": True},
            {"bins": 1, "weights": ht.array(w, split=split, comm=comm), "density": True},
        ):
            hist, bin_edges = ht.histogram(a, **kwargs)
            np_kwargs = {k: (w if k == "weights" else v) for k, v in kwargs.items()}
            want_hist, want_edges = np.histogram(g, **np_kwargs)
            check.add(hist, want_hist, None, comm)
            check.add(bin_edges, want_edges, None, comm)
        for kwargs in (
            {"bins": 7},
            {"bins": 4, "min": -2, "max": 3},
            {"bins": 3, "min": 4, "max": 4},
        ):
            want = torch.histc(torch.from_numpy(g), **kwargs).numpy()
            check.add(ht.histc(a, **kwargs), want, None, comm)
    check.check()


def test_histograms_edge_cases(comm_of):
    comm = comm_of(5)
    same = ht.array(np.full(3, 2, np.int64), split=0, comm=comm)  # two ranks empty
    assert_layout(ht.histogram(same, bins=2)[0], np.histogram(np.full(3, 2), bins=2)[0], None, comm)
    want = torch.histc(torch.full((3,), 2.0, dtype=torch.float64), bins=4).numpy()
    assert_layout(ht.histc(same, bins=4), want, None, comm)
    empty = ht.zeros(0, split=0, comm=comm)
    for got, want in zip(
        ht.histogram(empty, bins=3), np.histogram(np.zeros(0, np.float32), bins=3), strict=True
    ):
        assert_layout(got, want, None, comm)
    assert_layout(ht.histc(empty, bins=2), np.zeros(2, np.float32), None, comm)
    g = np.array([1.0, np.nan, 3.0, 2.0])
    a = ht.array(g, split=0, comm=comm)
    assert_layout(
        ht.histogram(a, bins=2, range=(0, 4))[0],
        np.histogram(g, bins=2, range=(0, 4))[0],
        None,
        comm,
    )
    want = torch.histc(torch.from_numpy(g), bins=2, min=0, max=4).numpy()
    assert_layout(ht.histc(a, bins=2, min=0, max=4), want, None, comm)
    with pytest.raises(ValueError, match="autodetected range of \\[nan, nan\\] that is not finite"):
        ht.histogram(a)
    with pytest.raises(ValueError, match="range of \\[nan, nan\\] that is not finite"):
        ht.histc(a)


def test_histograms_bad_input_leave_a_unchanged(comm_of):
    comm = comm_of(3)
    g = np.arange(6.0)
    a = unbalanced(ht.array(g, split=0, comm=comm))
    lmap = a.lshape_map.tolist()
    cases = [
        (ValueError, "`bins` must be positive, when an integer, got 0", dict(bins=0)),
        (ValueError, "`bins` must increase monotonically", dict(bins=[0, 2, 1])),
        (ValueError, "`bins` must be 1-D", dict(bins=[[0, 1]])),
        (TypeError, "`bins` must be an int or a sequence of edges, got bool", dict(bins=True)),
        (
            NotImplementedError,
            "`histogram` does not support `bins` given as a string",
            dict(bins="auto"),
        ),
        (ValueError, r"`range` must have max >= min", dict(range=(3, 1))),
        (ValueError, r"`range` must be finite", dict(range=(0, np.inf))),
        (TypeError, r"`range` must be None or a pair", dict(range=5)),
        (
            ValueError,
            r"`weights` must have the shape of `a` \(6,\), got \(2,\)",
            dict(weights=np.ones(2)),
        ),
        (TypeError, "`density` must be a bool", dict(density=None)),
    ]
    for error, message, kwargs in cases:
        with pytest.raises(error, match=message):
            ht.histogram(a, **kwargs)
    with pytest.raises(ValueError, match="`bins` must be positive, got -1"):
        ht.histc(a, bins=-1)
    with pytest.raises(TypeError, match="`bins` must be an int"):
        ht.histc(a, bins=2.5)
    with pytest.raises(ValueError, match="`max` must not be less than `min`"):
        ht.histc(a, min=3, max=1)
    with pytest.raises(ValueError, match="`min` and `max` must be finite"):
        ht.histc(a, min=-np.inf)
    with pytest.raises(
        TypeError, match="`a` of `histc` must have an integer or floating dtype, got bool"
    ):
        ht.histc(a > 1)
    with pytest.raises(TypeError, match="`a` of `histogram` must be a DNDarray, got ndarray"):
        ht.histogram(g)
    assert_unchanged(a, g, 0, lmap)


@pytest.mark.parametrize("n", RANK_COUNTS)
def test_skew_and_kurtosis_of_float32_match_scipy(comm_of, n):
    """The one-pass partials (blocks of a chunk, merged across ranks) against scipy.stats."""
    stats = pytest.importorskip("scipy.stats")
    comm = comm_of(n)
    g = np.random.default_rng(11).gamma(2.0, size=(301, 7)).astype(np.float32) + 5.0
    results, expected = [], []
    for split in (None, 0, 1):
        for a in inputs(g, split, comm):
            for axis in (None, 0, 1):
                for bias in (True, False):
                    results.append(ht.skew(a, axis, unbiased=not bias))
                    expected.append(stats.skew(g.astype(np.float64), axis=axis, bias=bias))
                    results.append(ht.kurtosis(a, axis, unbiased=not bias, Fischer=bias))
                    expected.append(
                        stats.kurtosis(g.astype(np.float64), axis=axis, bias=bias, fisher=bias)
                    )
    for fn in (ht.skew, ht.kurtosis):
        with pytest.raises(ValueError, match="axis"):
            fn(inputs(g, 0, comm)[0], axis=2)
    for got, want in zip(results, expected, strict=True):
        assert got.dtype == ht.float32
        np.testing.assert_allclose(got.numpy(), want, rtol=2e-4, atol=2e-5)


def test_skew_moves_only_the_ranks_partials(client, comm_of):
    """Along the split axis each rank reduces its own rows: only P - 1 partials travel."""
    comm = comm_of(4)
    a = ht.random.rand(4 * 20000, 16, dtype=ht.float32, split=0, comm=comm).persist_(wait=True)
    partial = _moment_partials._partials(np.zeros((20000, 16), np.float32), (0,))
    since = time.time()
    got = ht.skew(a, axis=0, unbiased=False).numpy()
    assert received_bytes(client, since) == (comm.size - 1) * sizeof(partial)
    x = a.numpy().astype(np.float64)
    d = x - x.mean(axis=0)
    np.testing.assert_allclose(got, (d**3).mean(0) / (d**2).mean(0) ** 1.5, rtol=2e-3, atol=1e-4)
