"""Reductions and cumulative operations against numpy on every split, rank count and skew."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import LayoutBatch, assert_layout, layouts, skewed, values_of

import dndask as ht

REDUCTIONS = ["sum", "prod", "mean", "var", "std", "min", "max", "all", "any"]
AXES = [None, 0, 1, -1, (0, 2), (0, 1, 2), ()]


def expected_split(split, axis, ndim, keepdims):
    axes = range(ndim) if axis is None else [a % ndim for a in np.atleast_1d(axis)]
    if split is None or split in axes:
        return None
    return split if keepdims else split - sum(1 for a in axes if a < split)


def _inputs(g, split, comm):
    a = ht.array(g, split=split, comm=comm)
    return [a, skewed(a)] if split is not None and comm.size > 1 else [a]


@pytest.mark.parametrize(("shape", "split", "n"), layouts([(5, 4, 3)], rank_counts=(1, 2, 5)))
def test_reductions_against_numpy(comm_of, shape, split, n):
    comm = comm_of(n)
    g = np.random.default_rng(1).uniform(0.5, 1.5, size=shape)
    cases = []
    for a in _inputs(g, split, comm):
        for name in REDUCTIONS:
            for axis in AXES:
                for keepdims in (False, True):
                    got = getattr(ht, name)(a, axis, keepdims=keepdims)
                    assert got.split == expected_split(split, axis, 3, keepdims), (name, axis)
                    assert got.comm == comm
                    cases.append((got, getattr(np, name)(g, axis=axis, keepdims=keepdims), name))
    for (_, want, name), values in zip(cases, values_of(c[0] for c in cases), strict=True):
        assert values.dtype == want.dtype, name
        np.testing.assert_allclose(values, want, rtol=1e-12, err_msg=name)


@pytest.mark.parametrize(("shape", "split", "n"), layouts([(7, 3)], rank_counts=(1, 3, 5)))
def test_arg_reductions(comm_of, shape, split, n):
    comm = comm_of(n)
    g = np.random.default_rng(2).permutation(21).reshape(shape).astype(np.float64)
    g[4, 1] = g.max() + 1  # a unique maximum away from rank 0
    cases = []
    for a in _inputs(g, split, comm):
        for name in ("argmin", "argmax"):
            for axis in (None, 0, 1, -1):
                for keepdims in (False, True):
                    got = getattr(a, name)(axis, keepdims=keepdims)
                    assert got.split == expected_split(split, axis, 2, keepdims)
                    cases.append((got, getattr(np, name)(g, axis=axis, keepdims=keepdims)))
    for (_, want), values in zip(cases, values_of(c[0] for c in cases), strict=True):
        np.testing.assert_array_equal(values, want)


@pytest.mark.parametrize(("shape", "split", "n"), layouts([(6, 4)], rank_counts=(1, 3, 5)))
def test_cumulative(comm_of, shape, split, n):
    comm = comm_of(n)
    g = np.arange(1, 25, dtype=np.int64).reshape(shape) % 5 + 1
    with LayoutBatch() as batch:  # the values of every result in one round trip
        for a in _inputs(g, split, comm):
            for name in ("cumsum", "cumprod"):
                for axis in (0, 1, -1):
                    got = getattr(ht, name)(a, axis)
                    batch.add(got, getattr(np, name)(g, axis=axis), split, comm)
                    if split is not None:  # the distribution is kept
                        assert got.lshape_map.tolist() == a.lshape_map.tolist()
                flat = getattr(a, name)()
                batch.expect(flat, getattr(np, name)(g))
                assert flat.split == (None if split is None else 0)
            assert ht.cumsum(a, 0, dtype=ht.float32).dtype == ht.float32


def test_empty_ranks_and_zero_size(comm_of):
    comm = comm_of(5)
    g = np.arange(6.0).reshape(3, 2)  # 3 rows on 5 ranks: two ranks hold nothing
    a = ht.array(g, split=0, comm=comm)
    assert 0 in a.lshape_map[:, 0].tolist()
    for name in [*REDUCTIONS, "argmin", "argmax"]:
        np.testing.assert_allclose(getattr(ht, name)(a, 0).numpy(), getattr(np, name)(g, axis=0))
        np.testing.assert_allclose(getattr(ht, name)(a).numpy(), getattr(np, name)(g))
    assert_layout(ht.cumsum(a, 0), np.cumsum(g, axis=0), 0, comm)
    z = ht.zeros((0, 3), split=0, comm=comm)
    assert_layout(ht.sum(z, 0), np.zeros(3, dtype=np.float32), None, comm)
    assert_layout(ht.prod(z, 1), np.ones(0, dtype=np.float32), 0, comm)
    assert bool(ht.all(z)) and not bool(ht.any(z))
    for name in ("min", "max", "argmin", "argmax"):
        with pytest.raises(ValueError, match=f"`{name}` of a zero-size reduction has no identity"):
            getattr(ht, name)(z, 0)


@pytest.mark.parametrize("n", [1, 2, 4])
def test_dtype_ddof_and_out(comm_of, n):
    comm = comm_of(n)
    g = np.arange(12, dtype=np.int32).reshape(4, 3)
    a = ht.array(g, split=0, comm=comm)
    assert ht.sum(a).dtype == np.sum(g).dtype
    assert ht.sum(a, dtype=ht.float32).dtype == ht.float32
    assert ht.mean(a, 1, dtype=np.float32).dtype == ht.float32
    assert ht.prod(a, 0, dtype="int64").dtype == ht.int64
    for ddof in (0, 1, 2):
        np.testing.assert_allclose(ht.var(a, 0, ddof=ddof).numpy(), np.var(g, 0, ddof=ddof))
        np.testing.assert_allclose(a.std(1, ddof=ddof).numpy(), np.std(g, 1, ddof=ddof))
    out = ht.zeros(3, dtype=ht.float64, comm=comm)
    assert ht.sum(a, 0, out=out) is out
    assert_layout(out, np.sum(g, 0).astype(np.float64), None, comm)
    rows = ht.zeros(4, dtype=ht.int64, split=0, comm=comm)
    a.max(1, out=rows)
    assert_layout(rows, g.max(1).astype(np.int64), 0, comm)


def test_bad_arguments_leave_the_array_unchanged(comm_of):
    comm = comm_of(3)
    g = np.arange(12.0).reshape(4, 3)
    a = ht.array(g, split=1, comm=comm)
    name, layout = a.to_dask().name, a.lshape_map.tolist()
    with pytest.raises(
        ValueError, match=r"`axis` must be in \[-2, 1\] for a 2-dimensional array, got 2"
    ):
        ht.sum(a, 2)
    with pytest.raises(ValueError, match="`axis` must not repeat an axis"):
        ht.mean(a, (0, 0))
    with pytest.raises(TypeError, match="`keepdims` must be a bool, got int"):
        ht.max(a, keepdims=1)
    with pytest.raises(TypeError, match="`ddof` must be an int, got float"):
        ht.var(a, ddof=1.5)
    with pytest.raises(ValueError, match="`ddof` must be non-negative, got -1"):
        ht.std(a, ddof=-1)
    with pytest.raises(TypeError, match=r"`axis` of `argmax` must be an int or None, got \(0, 1\)"):
        ht.argmax(a, (0, 1))
    with pytest.raises(TypeError, match="`a` of `sum` must be a DNDarray, got ndarray"):
        ht.sum(g)
    with pytest.raises(TypeError, match="`dtype` must be a boolean or numeric type"):
        ht.sum(a, dtype="U3")
    with pytest.raises(ValueError, match=r"`out` of `sum` must have shape \(3,\), got \(4,\)"):
        ht.sum(a, 0, out=ht.zeros(4, comm=comm))
    assert a.to_dask().name == name and a.lshape_map.tolist() == layout
    assert_layout(a, g, 1, comm)
