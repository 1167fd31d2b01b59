"""DNDarrays next to dask arrays: operators both ways, the collection protocol, bad input."""

import dask
import dask.array as da
import numpy as np
import pytest

import dndask as ht
from tests.conftest import assert_layout, layouts, skewed

SHAPES = [(7, 3), (5,)]


def _dask_of(values: np.ndarray) -> da.Array:
    """A dask array chunked in a way unrelated to any rank count."""
    return da.from_array(values, chunks=tuple(max(1, s // 2) for s in values.shape))


@pytest.mark.parametrize(("shape", "split", "n"), layouts(SHAPES))
def test_operators_with_dask_both_ways(comm_of, shape, split, n):
    comm = comm_of(n)
    values = np.arange(np.prod(shape), dtype=float).reshape(shape)
    other = values[::-1].copy() + 1.0
    a = ht.array(values, split=split, comm=comm)
    x = _dask_of(other)
    assert_layout(a + x, values + other, split, comm)
    assert_layout(x + a, other + values, split, comm)
    assert_layout(x - a, other - values, split, comm)
    assert_layout(np.add(x, a), other + values, split, comm)
    assert (a + x).lshape_map.tolist() == a.lshape_map.tolist()


@pytest.mark.parametrize(("n", "empty"), [(1, False), (3, False), (5, False), (3, True), (5, True)])
def test_broadcast_dask_operand(comm_of, n, empty):
    comm = comm_of(n)
    values = np.arange(21.0).reshape(7, 3)
    a = ht.array(values, split=0, comm=comm)
    if empty:
        a = skewed(a)  # rank 0 (and the middle ranks) hold no rows
        assert a.lshape_map[0, 0] == 0
    row = da.from_array(np.array([1.0, 2.0, 3.0]), chunks=1)
    assert_layout(a * row, values * [1.0, 2.0, 3.0], 0, comm)
    assert_layout(row * a, values * [1.0, 2.0, 3.0], 0, comm)
    whole = _dask_of(values[::-1].copy())  # not broadcast: conformed to a's counts
    assert_layout(whole - a, values[::-1] - values, 0, comm)
    assert (whole - a).lshape_map.tolist() == a.lshape_map.tolist()


@pytest.mark.parametrize("n", [1, 4])
def test_dask_collection_protocol(comm_of, n):
    comm = comm_of(n)
    a = ht.arange(9, split=0, comm=comm)
    assert dask.base.is_dask_collection(a)
    (values,) = dask.compute(a)
    np.testing.assert_array_equal(values, np.arange(9))
    (p,) = dask.persist(a)
    assert_layout(p, np.arange(9), 0, comm)


def test_bad_broadcast_names_shapes_and_splits(comm_of):
    a = ht.zeros((6, 2), split=0, comm=comm_of(3))
    x = da.zeros((4, 3), chunks=2)
    with pytest.raises(ValueError, match=r"shape=\(6, 2\), split=0.*shape=\(4, 3\), split=None"):
        a + x
    with pytest.raises(ValueError, match=r"shape=\(4, 3\), split=None.*shape=\(6, 2\), split=0"):
        x + a


def test_nan_chunks_operand_is_a_value_error(comm_of):
    a = ht.zeros((6,), split=0, comm=comm_of(2))
    x = da.arange(12, chunks=4)
    x = x[x % 2 == 0]
    with pytest.raises(ValueError, match="known chunk sizes"):
        a + x


@pytest.mark.parametrize(("shape", "split", "n"), layouts([(7, 3)], rank_counts=[1, 3, 5]))
def test_dask_face(comm_of, shape, split, n):
    comm = comm_of(n)
    values = np.arange(21.0).reshape(shape)
    a = ht.array(values, split=split, comm=comm)
    assert a.chunks == a.to_dask().chunks and a.name == a.to_dask().name
    assert a.dask is a.to_dask().dask
    assert_layout(a.map_blocks(np.negative), -values, split, comm)
    summed = a.map_blocks(lambda b: b.sum(axis=1), drop_axis=1)
    assert isinstance(summed, da.Array)
    np.testing.assert_array_equal(summed.compute(), values.sum(axis=1))
    r = a.rechunk((2, 3))
    assert isinstance(r, da.Array) and r.chunks == ((2, 2, 2, 1), (3,))
    np.testing.assert_array_equal(r.compute(), values)
    if split == 0:
        np.testing.assert_array_equal(a.blocks[n - 1].compute(), np.array_split(values, n)[-1])


@pytest.mark.parametrize(("split", "n"), [(0, 1), (0, 3), (1, 4), (None, 2), (0, 5)])
def test_from_dask(comm_of, split, n):
    comm = comm_of(n)
    values = np.arange(35.0).reshape(7, 5)
    a = ht.from_dask(_dask_of(values), split=split, comm=comm)
    assert_layout(a, values, split, comm)
    counts = a.lshape_map[:, split].tolist() if split is not None else None
    if counts is not None:
        chunks = tuple(counts) if split == 0 else (7,), tuple(counts) if split == 1 else (5,)
        aligned = da.from_array(values, chunks=chunks)
        kept = ht.from_dask(aligned, split=split, comm=comm)
        assert kept.name == aligned.name  # already one chunk per rank: same graph, nothing moves


@pytest.mark.parametrize("n", [3, 5])
def test_from_dask_with_empty_ranks(comm_of, n):
    comm = comm_of(n)
    values = np.arange(10.0).reshape(2, 5)  # 2 rows on 3 or 5 ranks: empty ranks
    a = ht.from_dask(_dask_of(values), split=0, comm=comm)
    assert_layout(a, values, 0, comm)
    assert a.lshape_map[:, 0].tolist() == [1, 1] + [0] * (n - 2)
    counts = (0, 2) + (0,) * (n - 2)  # aligned, with empty chunks: kept, nothing moves
    aligned = da.from_array(values, chunks=(counts, (5,)))
    kept = ht.from_dask(aligned, split=0, comm=comm)
    assert kept.name == aligned.name and kept.lshape_map[:, 0].tolist() == list(counts)
    assert_layout(kept, values, 0, comm)
    x = da.asarray(kept)
    assert x.name == kept.name and x.chunks == kept.chunks
    np.testing.assert_array_equal(x.compute(), values)
    assert_layout(kept + _dask_of(values), values * 2, 0, comm)


def test_from_dask_bad_input(comm_of):
    x = da.arange(12, chunks=4)
    with pytest.raises(ValueError, match="known chunk sizes"):
        ht.from_dask(x[x % 2 == 0], split=0, comm=comm_of(2))
    with pytest.raises(TypeError, match=r"must be a dask\.array\.Array, got ndarray"):
        ht.from_dask(np.arange(3), split=0, comm=comm_of(2))


@pytest.mark.parametrize("n", [1, 3])
def test_da_asarray_returns_own_graph(comm_of, n):
    a = ht.arange(7, split=0, comm=comm_of(n))
    x = da.asarray(a)
    assert x.name == a.name and x.chunks == a.chunks
    np.testing.assert_array_equal(x.compute(), np.arange(7))


def test_array_of_dask_split_none_is_replicated(comm_of):
    # as for numpy input, split=None means every rank sees the whole array: one chunk
    x = _dask_of(np.arange(10.0))
    a = ht.array(x, comm=comm_of(3))
    assert_layout(a, np.arange(10.0), None, comm_of(3))
    assert a.chunks == ((10,),)
    assert_layout(ht.array(x, split=0, comm=comm_of(3)), np.arange(10.0), 0, comm_of(3))
