"""Factories against numpy on every split and rank count."""

from __future__ import annotations

import dask.array as da
import numpy as np
import pytest
import torch
from conftest import RANK_COUNTS, assert_layout, layouts, splits_of

import dndask as ht

SHAPES = [(7, 4, 3), (5,), (0, 3), (3, 1)]


@pytest.mark.parametrize(("shape", "split", "n"), layouts(SHAPES))
def test_constant_factories(comm_of, shape, split, n):
    comm = comm_of(n)
    assert_layout(ht.zeros(shape, split=split, comm=comm), np.zeros(shape, np.float32), split, comm)
    assert_layout(ht.ones(shape, split=split, comm=comm), np.ones(shape, np.float32), split, comm)
    full = ht.full(shape, 7, dtype=ht.int32, split=split, comm=comm)
    assert_layout(full, np.full(shape, 7, np.int32), split, comm)
    e = ht.empty(shape, dtype=ht.float64, split=split, comm=comm)
    assert e.shape == shape and e.dtype == np.float64 and e.split == split
    assert e.balanced


@pytest.mark.parametrize(("shape", "split", "n"), layouts([(7, 4, 3), (0,), (6, 2)]))
def test_array_from_numpy_torch_lists_and_dask(comm_of, shape, split, n):
    comm = comm_of(n)
    g = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    assert_layout(ht.array(g, split=split, comm=comm), g, split, comm)
    assert_layout(ht.array(torch.from_numpy(g), split=split, comm=comm), g, split, comm)
    assert_layout(ht.array(g.tolist(), split=split, comm=comm), g.astype(np.float32), split, comm)
    x = da.from_array(g, chunks=2 if g.size else -1)
    assert_layout(ht.array(x, split=split, comm=comm), g, split, comm)
    assert ht.array(g, split=split, comm=comm).balanced


@pytest.mark.parametrize("n", RANK_COUNTS)
@pytest.mark.parametrize(
    ("args", "kwargs", "expected"),
    [
        ((10,), {}, np.arange(10)),
        ((2, 11, 3), {}, np.arange(2, 11, 3)),
        ((0.5, 3.0), {}, np.arange(0.5, 3.0, dtype=np.float32)),
        ((5, 0, -1), {}, np.arange(5, 0, -1)),
        ((4,), {"dtype": ht.float64}, np.arange(4, dtype=np.float64)),
        ((0,), {}, np.arange(0)),
    ],
)
def test_arange(comm_of, n, args, kwargs, expected):
    comm = comm_of(n)
    for split in (None, 0):
        assert_layout(ht.arange(*args, split=split, comm=comm, **kwargs), expected, split, comm)


@pytest.mark.parametrize("n", RANK_COUNTS)
def test_linspace_and_eye(comm_of, n):
    comm = comm_of(n)
    for split in (None, 0):
        for num, endpoint in ((5, True), (3, True), (7, False), (1, True), (0, True)):
            expected = np.linspace(-1, 2, num, endpoint=endpoint).astype(np.float32)
            got = ht.linspace(-1, 2, num, endpoint=endpoint, split=split, comm=comm)
            assert_layout(got, expected, split, comm)
        out, step = ht.linspace(0, 1, 5, retstep=True, split=split, comm=comm)
        assert step == 0.25
        assert_layout(out, np.linspace(0, 1, 5).astype(np.float32), split, comm)
    for split in splits_of(2):
        assert_layout(ht.eye(4, split=split, comm=comm), np.eye(4, dtype=np.float32), split, comm)
        assert_layout(
            ht.eye((3, 5), dtype=ht.int64, split=split, comm=comm),
            np.eye(3, 5, dtype=np.int64),
            split,
            comm,
        )


@pytest.mark.parametrize("split", splits_of(2))
def test_like_factories_follow_their_template(comm_of, split):
    comm = comm_of(3)
    t = ht.ones((5, 4), dtype=ht.int32, split=split, comm=comm)
    assert_layout(ht.zeros_like(t), np.zeros((5, 4), np.int32), split, comm)
    assert_layout(ht.ones_like(t, dtype=ht.float64), np.ones((5, 4)), split, comm)
    assert_layout(ht.full_like(t, 3), np.full((5, 4), 3, np.int32), split, comm)
    assert ht.empty_like(t, split=None).split is None
    assert_layout(ht.zeros_like(t, split=0), np.zeros((5, 4), np.int32), 0, comm)


def test_dtype_inference_follows_heat(comm_of):
    comm = comm_of(2)
    assert ht.array([1.5, 2.0], comm=comm).dtype == ht.float32
    assert ht.array([1, 2], comm=comm).dtype == ht.int64
    assert ht.array([True, False], comm=comm).dtype == ht.bool_
    assert ht.array([1j], comm=comm).dtype == ht.complex64
    assert ht.array(np.zeros(2, np.float64), comm=comm).dtype == ht.float64
    assert ht.array(torch.zeros(2, dtype=torch.int16), comm=comm).dtype == ht.int16
    assert ht.array([1.7], dtype=int, comm=comm).numpy().tolist() == [1]
    assert ht.array([1, 2], dtype=torch.float64, comm=comm).dtype == ht.float64
    assert ht.array(5.0, split=None, comm=comm).shape == ()


def test_array_of_dndarray(comm_of):
    comm = comm_of(3)
    a = ht.arange(7, split=0, comm=comm)
    assert ht.array(a) is a
    assert ht.array(a, split=0) is a
    assert ht.array(a, is_split=0) is a
    c = ht.array(a, copy=True)
    assert c is not a
    np.testing.assert_array_equal(c.numpy(), a.numpy())
    assert ht.array(a, dtype=ht.float64).dtype == ht.float64
    b = ht.array(ht.arange(7, comm=comm), split=0)
    assert_layout(b, np.arange(7), 0, comm)


def test_copy_false_refuses_conversion(comm_of):
    comm = comm_of(2)
    with pytest.raises(ValueError, match="`copy` is False but converting int64 to float32"):
        ht.array(np.arange(3), dtype=ht.float32, copy=False, comm=comm)
    with pytest.raises(ValueError, match="`copy` is False but converting int64 to float64"):
        ht.array(ht.arange(3, comm=comm), dtype=ht.float64, copy=False)
    a = np.arange(3)
    assert ht.array(a, copy=False, comm=comm).dtype == ht.int64


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (lambda c: ht.array([1], split=0, is_split=0, comm=c), ValueError,
         "`split` and `is_split` are mutually exclusive, got split=0 and is_split=0"),
        (lambda c: ht.array([1, 2], split=1, comm=c), ValueError,
         r"`split` must be in \[-1, 0\] for a 1-dimensional array, got 1"),
        (lambda c: ht.array([1, 2], split=0.0, comm=c), TypeError,
         "`split` must be None or an int, got float"),
        (lambda c: ht.array([1], comm="world"), TypeError, "`comm` must be a dndask.Comm, got str"),
        (lambda c: ht.array(["a", "b"], comm=c), TypeError, "`obj` must hold numbers"),
        (lambda c: ht.array([[1, 2], [3]], comm=c), ValueError,
         "`obj` must be rectangular array data"),
        (lambda c: ht.array([1], dtype="nope", comm=c), TypeError,
         "`dtype` must be a numpy, torch or Python type, got 'nope'"),
        (lambda c: ht.array([1], dtype=object, comm=c), TypeError,
         "`dtype` must be a boolean or numeric type, got object"),
        (lambda c: ht.array([1], copy="yes", comm=c), TypeError,
         "`copy` must be None or a bool, got str"),
        (lambda c: ht.array(ht.arange(4, split=0, comm=c), split=-1), ValueError,
         "nothing"),
        (lambda c: ht.zeros((2, -1), comm=c), ValueError,
         r"`shape` must hold non-negative ints, got \(2, -1\)"),
        (lambda c: ht.zeros((2, 1.5), comm=c), TypeError, "`shape` must hold ints, got float"),
        (lambda c: ht.full(3, [1, 2], comm=c), TypeError, "`fill_value` must be a scalar, got list"),
        (lambda c: ht.arange(1, 5, 0, comm=c), ValueError, "`step` must not be zero, got 0"),
        (lambda c: ht.arange("3", comm=c), TypeError,
         "`arange` arguments must be real numbers, got str"),
        (lambda c: ht.linspace(0, 1, -1, comm=c), ValueError,
         "`num` must be non-negative, got -1"),
        (lambda c: ht.eye((2, 2, 2), comm=c), ValueError, r"`shape` must be n or \(n, m\)"),
        (lambda c: ht.zeros_like(np.zeros(3)), TypeError, "`a` must be a DNDarray, got ndarray"),
    ],
)  # fmt: skip
def test_bad_factory_calls(comm_of, call, exc, match):
    if match == "nothing":  # split -1 on a split-0 1-D array is the same axis: no error
        assert call(comm_of(2)).split == 0
        return
    with pytest.raises(exc, match=match):
        call(comm_of(2))


def test_dndarray_split_mismatch(comm_of):
    a = ht.zeros((4, 4), split=0, comm=comm_of(2))
    with pytest.raises(ValueError, match=r"`split` 1 does not match the array's split 0"):
        ht.array(a, split=1)
    with pytest.raises(ValueError, match=r"`is_split` 1 does not match the array's split 0"):
        ht.array(a, is_split=1)
    with pytest.raises(ValueError, match="`comm` must match the array's comm"):
        ht.array(a, comm=comm_of(3))
    b = ht.zeros(4, comm=comm_of(2))
    with pytest.raises(ValueError, match=r"`is_split` 0 does not match the array's split None"):
        ht.array(b, is_split=0)
