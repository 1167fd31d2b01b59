"""DNDarray attributes, interop, repr and the tour's arithmetic, against numpy."""

from __future__ import annotations

import operator
import uuid

import dask
import dask.array as da
import distributed
import numpy as np
import pytest
import torch
from conftest import (
    RANK_COUNTS,
    LayoutBatch,
    assert_layout,
    holders,
    layouts,
    splits_of,
    values_of,
)

import dndask as ht
from dndask._dndarray import from_dask


def test_attributes_follow_heat(comm_of):
    comm = comm_of(4)
    a = ht.zeros((7, 4, 3), split=-3, comm=comm)
    assert a.split == 0 and a.comm is comm
    assert a.shape == a.gshape == (7, 4, 3)
    assert a.ndim == 3 and a.size == a.gnumel == 84 and isinstance(a.size, int)
    assert a.nbytes == a.gnbytes == 84 * 4
    assert a.dtype == ht.float32 == np.float32
    assert a.lshape == (2, 4, 3) and a.lnumel == 24
    assert a.counts_displs() == ((2, 2, 2, 1), (0, 2, 4, 6))
    assert a.balanced is True and a.is_balanced() and a.is_distributed()
    assert str(a.device) == "cpu:0" and a.device == "cpu" and a.device.torch_device == "cpu"
    b = ht.zeros((7, 4, 3), comm=comm)
    assert b.lshape == (7, 4, 3) and not b.is_distributed() and b.balanced
    assert b.lshape_map.tolist() == [[7, 4, 3]] * 4
    with pytest.raises(ValueError, match="`counts_displs` needs a split array, got split=None"):
        b.counts_displs()
    with pytest.raises(TypeError, match="`force_check` must be a bool"):
        a.is_balanced(force_check="yes")


@pytest.mark.parametrize("n", [1, 4])
def test_sizes_of_huge_arrays_do_not_overflow(comm_of, n):
    a = ht.zeros((2**32, 2**32), split=0, comm=comm_of(n))  # lazy: nothing is allocated
    assert a.size == a.gnumel == 2**64 and isinstance(a.size, int)
    assert a.nbytes == 2**64 * 4
    assert a.lnumel == 2**64 // n


def test_lshape_inside_per_rank_is_the_local_one(comm_of):
    comm = comm_of(4)
    a = ht.zeros((7, 4), split=0, comm=comm)
    got = ht.per_rank(lambda rank: a.lshape, comm=comm).gather()
    assert got == [(2, 4), (2, 4), (2, 4), (1, 4)]


@pytest.mark.parametrize("split", splits_of(2))
def test_larray_is_rank_zeros_chunk_as_torch(comm_of, split):
    g = np.arange(12.0).reshape(4, 3)
    a = ht.array(g, split=split, comm=comm_of(3))
    t = a.larray
    assert isinstance(t, torch.Tensor) and t.dtype == torch.float64
    expected = g if split is None else np.array_split(g, 3, axis=split)[0]
    np.testing.assert_array_equal(t.numpy(), expected)
    assert tuple(t.shape) == a.lshape


def test_dask_protocols(comm_of):
    comm = comm_of(3)
    a = ht.arange(10, split=0, comm=comm)
    (values,) = dask.compute(a * 2)
    np.testing.assert_array_equal(values, np.arange(10) * 2)
    (p,) = dask.persist(a + 1)
    assert isinstance(p, ht.DNDarray) and p.split == 0 and p.comm == comm
    assert_layout(p, np.arange(10) + 1, 0, comm)
    np.testing.assert_array_equal(np.asarray(a), np.arange(10))
    assert np.asarray(a, dtype=np.float32).dtype == np.float32
    x = a.to_dask()
    assert isinstance(x, da.Array) and x.chunks == ((4, 3, 3),)
    assert dask.base.tokenize(a) == dask.base.tokenize(a)
    assert a.compute().tolist() == a.numpy().tolist()


def test_persist_out_of_place_and_in_place(comm_of):
    a = ht.ones((6, 2), split=0, comm=comm_of(2))
    lazy_name = a.to_dask().name
    p = a.persist()
    assert a.to_dask().name == lazy_name and p is not a
    assert a.persist_() is a
    np.testing.assert_array_equal(a.numpy(), np.ones((6, 2), np.float32))


def _held_until(block, name):
    distributed.Event(name).wait(timeout=60)  # until the driver sets it
    return block


def test_persist_returns_before_the_work_is_done_with_placement_exact(client, comm_of):
    comm = comm_of(3)
    a = ht.arange(9, split=0, comm=comm) * 2
    name = f"held-{uuid.uuid4().hex}"
    meta = np.empty(
        0, dtype=a.dtype
    )  # given: dask would call _held_until on a stand-in to infer it
    held = from_dask(a.to_dask().map_blocks(_held_until, name, meta=meta), 0, comm, (a,))
    p = held.persist()  # would block until the event is set if persist waited
    futures = distributed.futures_of(p)
    assert len(futures) == 3 and all(f.status == "pending" for f in futures)
    distributed.Event(name, client=client).set()
    np.testing.assert_array_equal(p.numpy(), np.arange(9) * 2)
    assert holders(client, p) == [(w,) for w in comm.workers]
    w = (held + 1).persist(wait=True)
    assert all(f.status == "finished" for f in distributed.futures_of(w))
    with pytest.raises(TypeError, match="`wait` must be a bool, got int"):
        a.persist(wait=1)


def _result_names(dask_scheduler) -> set[str]:
    """Names of the result tasks dndask's compute adds (``dndask-result-<token>``) the scheduler saw."""
    keys = (entry[0] for entry in dask_scheduler.transition_log)
    return {k[0] for k in keys if isinstance(k, tuple) and str(k[0]).startswith("dndask-result-")}


def test_compute_of_a_persisted_array_runs_no_task(client, comm_of):
    a = (ht.arange(12, split=0, comm=comm_of(4)) + 1).persist(wait=True)
    before = client.run_on_scheduler(_result_names)
    np.testing.assert_array_equal(a.numpy(), np.arange(12) + 1)
    assert "1,  2,  3" in str(a)  # print reads the chunks too
    # the scheduler's transition log is bounded, so old names may drop out: look for new ones
    assert client.run_on_scheduler(_result_names) - before == set()  # fetched from the futures
    np.testing.assert_array_equal((a + 1).numpy(), np.arange(12) + 2)  # a graph: result tasks
    assert client.run_on_scheduler(_result_names) - before


def test_copy_is_independent(comm_of):
    a = ht.arange(8, split=0, comm=comm_of(4))
    b = a.copy()
    b.resplit_(None)
    b += 1
    assert a.split == 0
    np.testing.assert_array_equal(a.numpy(), np.arange(8))
    np.testing.assert_array_equal(b.numpy(), np.arange(8) + 1)


def test_repr_small_and_summarized(comm_of):
    comm = comm_of(3)
    a = ht.array(np.array([[1.5, -2.0], [3.25, 4.0]], np.float32), split=0, comm=comm)
    assert repr(a) == (
        "DNDarray([[ 1.5000, -2.0000],\n"
        "          [ 3.2500,  4.0000]], dtype=ht.float32, device=cpu:0, split=0)"
    )
    assert str(ht.arange(4, comm=comm)) == (
        "DNDarray([0, 1, 2, 3], dtype=ht.int64, device=cpu:0, split=None)"
    )
    assert (
        repr(ht.zeros(2, comm=comm))
        == "DNDarray([0., 0.], dtype=ht.float32, device=cpu:0, split=None)"
    )
    assert repr(ht.zeros((0, 3), split=1, comm=comm)).startswith("DNDarray([], size=(0, 3)")
    assert (
        repr(ht.full((), 2.5, comm=comm))
        == "DNDarray(2.5000, dtype=ht.float32, device=cpu:0, split=None)"
    )
    big = repr(ht.arange(100 * 100, split=0, comm=comm).astype(ht.int64) * 1)
    assert big.count("...") == 1 and "9999" in big and big.startswith("DNDarray([   0,")
    g = np.arange(40 * 50).reshape(40, 50)
    text = repr(ht.array(g, split=1, comm=comm))
    assert text.count("...") == 7  # six edge rows with a gap each, and the row gap
    assert "1999" in text and "split=1" in text


def test_repr_html_shows_ranks_and_workers(comm_of):
    comm = comm_of(3)
    html = ht.zeros((7, 4), split=0, comm=comm)._repr_html_()
    for rank, lshape in enumerate(["(3, 4)", "(2, 4)", "(2, 4)"]):
        assert f"<td>{rank}</td><td>{lshape}</td>" in html
    for worker in comm.workers:
        assert worker in html
    assert "<svg" in html and "split=0" in html


OPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
       operator.mod, operator.pow, operator.lt, operator.le, operator.gt, operator.ge,
       operator.eq, operator.ne]  # fmt: skip


@pytest.mark.parametrize(("shape", "split", "n"), layouts([(7, 4), (5,)], rank_counts=(1, 3, 5)))
def test_elementwise_with_scalars_and_arrays(comm_of, shape, split, n):
    comm = comm_of(n)
    g = np.arange(1, int(np.prod(shape)) + 1, dtype=np.float64).reshape(shape)
    h = g[::-1].copy() * 0.5
    a = ht.array(g, split=split, comm=comm)
    b = ht.array(h, split=split, comm=comm)
    with LayoutBatch() as batch:  # the values of all 57 results in one round trip
        for op in OPS:
            batch.add(op(a, b), op(g, h), split, comm)
            batch.add(op(a, 3), op(g, 3), split, comm)
            batch.add(op(3, a), op(3, g), split, comm)
            batch.add(op(a, h), op(g, h), split, comm)
        batch.add(-a, -g, split, comm)
        batch.add(abs(-a), g, split, comm)
        ints = ht.array(g.astype(np.int64), split=split, comm=comm)
        batch.add(
            ~ints & 6 | 1 ^ ints, ~g.astype(np.int64) & 6 | 1 ^ g.astype(np.int64), split, comm
        )
        batch.add(np.exp(a), np.exp(g), split, comm)
        batch.add(np.maximum(a, 4.0), np.maximum(g, 4.0), split, comm)


def test_operands_with_different_layouts(comm_of):
    comm = comm_of(4)
    g = np.arange(28.0).reshape(7, 4)
    a = ht.array(g, split=0, comm=comm)
    b = ht.array(g, split=1, comm=comm)
    assert_layout(a + b, g * 2, 0, comm)  # the first split operand wins, as in Heat
    assert_layout(b + a, g * 2, 1, comm)
    c = ht.array(g, comm=comm)
    assert_layout(c + a, g * 2, 0, comm)  # an unsplit operand takes the other's split
    target = a.lshape_map
    target[:, 0] = torch.tensor([4, 0, 0, 3])
    skewed = a.redistribute(target_map=target)
    out = a + skewed
    assert_layout(out, g * 2, 0, comm)
    assert out.lshape_map.tolist() == a.lshape_map.tolist()
    row = ht.array(np.arange(4.0), split=0, comm=comm)
    assert_layout(a + row, g + np.arange(4.0), 0, comm)  # broadcast against the split axis
    col = ht.array(np.arange(7.0).reshape(7, 1), split=0, comm=comm)
    assert_layout(b * col, g * np.arange(7.0).reshape(7, 1), 1, comm)
    assert_layout(a + torch.ones(4, dtype=torch.float64), g + 1, 0, comm)


def test_in_place_operators(comm_of):
    comm = comm_of(3)
    g = np.arange(12.0).reshape(3, 4)
    a = ht.array(g, split=1, comm=comm)
    a += 1
    a *= ht.array(g, split=0, comm=comm)
    a -= 2
    a /= 4
    assert_layout(a, ((g + 1) * g - 2) / 4, 1, comm)
    i = ht.arange(6, split=0, comm=comm)
    with pytest.raises(
        TypeError, match="in-place `truediv` cannot cast the result from float64 to int64"
    ):
        i /= 2
    with pytest.raises(ValueError, match=r"in-place `add` cannot change the shape \(6,\)"):
        i += np.ones((2, 6), dtype=np.int64)
    assert_layout(i, np.arange(6), 0, comm)


def test_bad_operands(comm_of):
    a = ht.zeros((3, 4), split=0, comm=comm_of(2))
    with pytest.raises(
        ValueError,
        match=r"operands of `add` could not be broadcast together: "
        r"DNDarray\(shape=\(3, 4\), split=0\), ndarray\(shape=\(5,\)\)",
    ):
        a + np.zeros(5)
    with pytest.raises(ValueError, match="operands of `add` must share a comm"):
        a + ht.zeros((3, 4), split=0, comm=comm_of(3))
    with pytest.raises(TypeError):
        a + "text"


@pytest.mark.parametrize(("shape", "split", "n"), layouts([(7, 4, 3)], rank_counts=RANK_COUNTS))
def test_reductions(comm_of, shape, split, n):
    comm = comm_of(n)
    g = np.random.default_rng(0).standard_normal(shape)
    a = ht.array(g, split=split, comm=comm)
    results, expected = [], []
    for name in ("sum", "mean", "min", "max"):
        for axis in (None, 0, 1, -1, (0, 2)):
            for keepdims in (False, True):
                got = getattr(a, name)(axis=axis, keepdims=keepdims)
                axes = range(3) if axis is None else np.atleast_1d(axis) % 3
                if split is None or split in axes:
                    want = None
                else:
                    want = split if keepdims else split - sum(1 for x in axes if x < split)
                assert got.split == want
                assert got.comm == comm
                results.append(got)
                expected.append(getattr(np, name)(g, axis=axis, keepdims=keepdims))
    for values, exp in zip(values_of(results), expected, strict=True):  # one round trip
        np.testing.assert_allclose(values, exp, rtol=1e-12, atol=1e-12)
    assert float(a.sum()) == pytest.approx(g.sum())
    assert a.sum(dtype=ht.float32).dtype == ht.float32
    with pytest.raises(ValueError, match=r"`axis` must be in \[-3, 2\]"):
        a.sum(axis=3)
    with pytest.raises(TypeError, match="`keepdims` must be a bool"):
        a.sum(keepdims=1)


def test_scalar_conversions(comm_of):
    comm = comm_of(2)
    s = ht.arange(5, split=0, comm=comm).sum()
    assert int(s) == 10 and float(s) == 10.0 and s.item() == 10 and bool(s)
    assert [0, 1, 2][ht.array(1, comm=comm)] == 1
    assert len(ht.zeros((4, 2), split=1, comm=comm)) == 4
    with pytest.raises(TypeError, match="only size-1 arrays convert to Python scalars, got size 4"):
        float(ht.zeros(4, comm=comm))
    with pytest.raises(ValueError, match="`item` needs an array of size 1, got size 3"):
        ht.zeros(3, comm=comm).item()
    with pytest.raises(TypeError, match="len"):
        len(ht.zeros((), comm=comm))
    assert ht.zeros(3, comm=comm).astype(torch.int32).dtype == ht.int32


def test_constructor_checks_the_invariant(comm_of):
    comm = comm_of(2)
    x = da.zeros((4, 4), chunks=(2, 2))
    with pytest.raises(ValueError, match="chunks along axis 1 must be a single chunk, got 2"):
        ht.DNDarray(x, 0, comm)
    with pytest.raises(ValueError, match="chunks along split axis 0 must number 2, got 4"):
        ht.DNDarray(da.zeros((4, 4), chunks=(1, 4)), 0, comm)
    with pytest.raises(TypeError, match=r"`array` must be a dask\.array\.Array, got ndarray"):
        ht.DNDarray(np.zeros(2), 0, comm)
    with pytest.raises(TypeError, match=r"`comm` must be a dndask\.Comm, got int"):
        ht.DNDarray(x, 0, 3)


def test_slices_are_copies(comm_of):
    """As in Heat (and unlike numpy's views): documented in docs/heat-differences.md."""
    a = ht.arange(6, split=0, comm=comm_of(2))
    v = a[1:3]
    v += 100
    assert a.numpy().tolist() == list(range(6)) and v.numpy().tolist() == [101, 102]
    a[1:3] += 100
    assert a.numpy().tolist() == [0, 101, 102, 3, 4, 5]


def test_print_options_change_what_repr_shows(comm_of):
    a = ht.arange(10, dtype=ht.float64, split=0, comm=comm_of(3)) / 3
    before = ht.get_printoptions()
    try:
        ht.set_printoptions(threshold=5, edgeitems=1, precision=1)
        assert str(a) == "DNDarray([0., ..., 3.], dtype=ht.float64, device=cpu:0, split=0)"
        ht.set_printoptions(threshold=float("inf"), precision=3, sci_mode=True)
        assert str(a).startswith("DNDarray([0.000e+00, 3.333e-01,")
        ht.set_printoptions(linewidth=30, sci_mode=False)
        lines = str(a).split("\n")
        assert len(lines) > 1 and all(len(line) <= 30 for line in lines[:-1])  # rows wrap
    finally:
        ht.set_printoptions(**before)
    assert ht.get_printoptions() == before
    with pytest.raises(TypeError, match=r"`threshold` must be an int, got str"):
        ht.set_printoptions(threshold="all")
    assert ht.get_printoptions() == before
