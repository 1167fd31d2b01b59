"""Reductions over the split axis: one partial task per rank, one aggregate (issue 19).

``(a + 1).sum()`` fuses the elementwise step into the per-rank partials when the graph is
built, under names of its own, so it is ``P + 1`` tasks and a key still always means one
task. Values are checked against numpy on every split and rank count, with empty ranks.
"""

from __future__ import annotations

import os
import sys

import dask
import distributed
import numpy as np
import pytest
from conftest import _run_spec_watch, skewed, values_of

import dndask as ht
from dndask import _compute, _ops

# imported before the session cluster starts (at collection), as tests/test_device_ops.py
# does: the workers then know the driver's pid (see tests/_standin.py)
sys.path.insert(0, os.path.dirname(__file__))
from _standin import StrictArray

FLAT = ["sum", "prod", "min", "max", "any", "all", "nansum", "nanprod", "nanmin", "nanmax"]
# per dtype: the reductions checked, and an elementwise step that keeps values small
DTYPES = {
    np.float32: (FLAT, lambda x: x * 2),
    np.int32: (["sum", "prod", "min", "max", "nansum"], lambda x: x + 1),
    np.bool_: (["sum", "any", "all", "min", "max"], lambda x: ~x),
}
# (split, ranks): every rank count on split 0, and the last axis split
LAYOUTS = [(0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (1, 3), (1, 5)]


def data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) < 0.7
    values = rng.integers(1, 3, size=shape) if dtype == np.int32 else rng.uniform(0.5, 1.5, shape)
    return values.astype(dtype)


def _function(name):
    """dndask's reduction ``name`` (the nan-forms are reached through numpy's, as xarray does)."""
    return getattr(ht, name, None) or (lambda a, axis, **kw: getattr(np, name)(a, axis=axis, **kw))


def reduce_(name, x, axis, keepdims):
    return getattr(np, name)(x, axis=axis, keepdims=keepdims)


def tasks_submitted(s: ht.DNDarray, *inputs: ht.DNDarray) -> list:
    """The keys of the graph dndask submits for ``s``, less the persisted ``inputs``' chunks."""
    graph, _ = _compute._graph_of(s.to_dask())
    held = {key for a in inputs for key in a._chunk_keys()}
    return [key for key in dict(graph) if key not in held]


def layer_names(s: ht.DNDarray) -> set[str]:
    graph, _ = _compute._graph_of(s.to_dask())
    return {key[0] if isinstance(key, tuple) else key for key in dict(graph)}


@pytest.mark.parametrize(("split", "n"), LAYOUTS)
@pytest.mark.parametrize("dtype", list(DTYPES), ids=lambda d: np.dtype(d).name)
def test_values_against_numpy(comm_of, split, n, dtype):
    names, step = DTYPES[dtype]
    g = data((7, 4), dtype)
    if dtype == np.float32:
        g[2, 1] = np.nan  # the nan-forms skip it, the others propagate it
    a = ht.array(g, split=split, comm=comm_of(n))
    cases = []
    for source in [a, skewed(a)] if n > 1 else [a]:
        for operand, want_of in ((source, g), (step(source), step(g))):
            for name in names:
                for axis, keepdims in (
                    (None, False),
                    (split, True),
                    (split, False),
                    ((0, 1), True),
                ):
                    got = _function(name)(operand, axis, keepdims=keepdims)
                    assert got.split is None
                    cases.append((got, reduce_(name, want_of, axis, keepdims), name))
    with np.errstate(all="ignore"):
        for (_, want, name), values in zip(cases, values_of(c[0] for c in cases), strict=True):
            assert values.dtype == want.dtype, name
            rtol = 1e-6 if dtype == np.float32 else 0
            np.testing.assert_allclose(values, want, rtol=rtol, err_msg=name)


@pytest.mark.parametrize("n", [3, 5])
def test_fewer_rows_than_ranks_and_a_nan_made_in_a_chunk(comm_of, n):
    g = np.array([[1.0, np.inf], [2.0, -np.inf]])
    a = ht.array(g, split=0, comm=comm_of(n))  # ranks 2.. hold no rows
    with np.errstate(invalid="ignore"):
        np.testing.assert_equal(np.nansum(a + 0.0).numpy(), np.nansum(g))  # inf + -inf
        assert np.nanmax(a - 1.0).numpy() == np.inf
        np.testing.assert_array_equal(ht.min(a * 2, axis=0).numpy(), (g * 2).min(0))
        # rank 0 holds inf and -inf: its partial is NaN, which the aggregate must keep
        h = np.array([[np.inf], [-np.inf], [5.0]])
        b = ht.array(h, split=0, comm=comm_of(2))
        assert b.lshape_map[:, 0].tolist() == [2, 1]
        assert np.isnan(np.nansum(h)) and np.isnan(np.nansum(b * 1.0).numpy())
        z = np.array([[0.0], [np.inf], [5.0]])  # rank 0's nanprod is 0 * inf
        assert np.isnan(np.nanprod(z))
        assert np.isnan(np.nanprod(ht.array(z, split=0, comm=comm_of(2)) + 0.0).numpy())


def test_dtype_and_out(comm_of):
    comm = comm_of(4)
    g = data((9, 3), np.int32)
    a = ht.array(g, split=0, comm=comm)
    s = ht.sum(a + 1, dtype=ht.float32)
    assert s.dtype == np.float32 and s.numpy().dtype == np.float32
    assert s.numpy() == (g + 1).sum(dtype=np.float32)
    s = ht.prod(a, axis=0, dtype=ht.float64, keepdims=True)
    np.testing.assert_array_equal(s.numpy(), g.prod(0, dtype=np.float64, keepdims=True))
    flags = ht.array(g > 1, split=0, comm=comm)
    assert ht.sum(flags).dtype == np.int64 and int(ht.sum(~flags)) == int((g <= 1).sum())
    for split in (None, 0):
        out = ht.zeros((3,), dtype=ht.float64, split=split, comm=comm)
        before = out.to_dask().name
        assert ht.sum(a + 1, axis=0, out=out) is out
        assert out.split == split and out.dtype == np.float64 and out.to_dask().name != before
        np.testing.assert_array_equal(out.numpy(), (g + 1).sum(0).astype(np.float64))
    out = ht.zeros((), dtype=ht.int32, comm=comm)
    with pytest.raises(TypeError, match="cannot cast float64 to int32"):
        ht.sum(a * 0.5, out=out)
    assert out.numpy() == 0  # unchanged


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_task_counts(comm_of, n):
    a = ht.array(data((12, 5), np.float32), split=0, comm=comm_of(n)).persist_(wait=True)
    b = a + 1
    s = b.sum()
    assert len(tasks_submitted(s, a)) == n + 1  # one partial per rank, one aggregate
    assert b.to_dask().name not in layer_names(s)  # the elementwise layer is culled away
    assert len(tasks_submitted(a.sum(axis=0), a)) == n + 1
    assert len(tasks_submitted(ht.max(ht.sqrt(a), axis=(0, 1), keepdims=True), a)) == n + 1
    assert len(tasks_submitted(np.exp(a).sum(axis=0), a)) == n + 1  # through __array_ufunc__
    assert len(tasks_submitted(np.add(a, 1, dtype=np.float64).sum(), a)) == 2 * n + 1  # kwargs
    c = skewed(a).persist_(wait=True)  # rows on ranks 1 and P-1 only
    nonempty = sum(1 for r in c.lshape_map[:, 0].tolist() if r)
    assert len(tasks_submitted((c * 3).min(), c)) == nonempty + 1
    np.testing.assert_allclose(float(s), (a.numpy() + 1).sum(), rtol=1e-6)


def test_a_tree_above_the_fan_in(comm_of, monkeypatch):
    monkeypatch.setattr(_ops, "_FAN_IN", 2)
    a = ht.array(data((10, 3), np.float32), split=0, comm=comm_of(5)).persist_(wait=True)
    s = ht.sum(a + 1, axis=0, keepdims=True)
    assert len(tasks_submitted(s, a)) == 5 + 3 + 2 + 1  # partials, two levels of 2, aggregate
    np.testing.assert_allclose(s.numpy(), (a.numpy() + 1).sum(0, keepdims=True), rtol=1e-6)
    assert float(ht.min(a - 1)) == float((a.numpy() - 1).min())


def test_what_is_not_fused(comm_of):
    comm = comm_of(3)
    g = data((6, 4), np.float64)
    a = ht.array(g, split=0, comm=comm)
    b = a + 1
    b.persist_(wait=True)  # in memory: the partials read its chunks
    assert b._producer is None
    assert len(tasks_submitted(b.sum(), b)) == 4 and not any(
        n.startswith("add-sum") for n in layer_names(b.sum())
    )
    # a numpy operand (dask chunks it), a callable that is not a ufunc: not fused, right values
    for c, want in (
        (a + np.ones((6, 4)), g + 1),
        (ht.round(a * 10, 1), np.round(g * 10, 1)),
        (ht.clip(a, 0.7, 1.2), np.clip(g, 0.7, 1.2)),
    ):
        assert c._producer is None
        np.testing.assert_allclose(c.sum().numpy(), want.sum())
    # broadcast operands (length 1 along the split axis, or without it) are fused
    row = ht.array(g[:1], split=0, comm=comm)
    col = ht.array(g[0], split=None, comm=comm)
    for c, want in (
        (a - row, g - g[:1]),
        (a * col, g * g[0]),
        (ht.maximum(a, 1.0), np.maximum(g, 1)),
    ):
        assert c._producer is not None
        np.testing.assert_allclose(ht.sum(c, axis=0).numpy(), want.sum(0))


@pytest.mark.parametrize("n", [2, 4])
def test_one_key_one_task_with_the_producer_computed_too(client, comm_of, n):
    """The fused layer's names are its own: no key gets a second task (the conftest guard)."""
    g = data((8, 3), np.float64)
    a = ht.array(g, split=0, comm=comm_of(n)).persist_(wait=True)
    b = a + 1
    s = b.sum()
    got_b, got_s = dask.compute(b, s)  # together
    np.testing.assert_allclose(got_b, g + 1)
    np.testing.assert_allclose(got_s, (g + 1).sum())
    np.testing.assert_allclose(s.numpy(), (g + 1).sum())  # alone
    kept = s.persist(wait=True)  # its aggregate key stays in the scheduler's memory
    held = b.persist(wait=True)  # same keys as b, now in memory: not fused
    t = held.sum()
    assert t.to_dask().name != s.to_dask().name  # same input name, other tasks, other keys
    np.testing.assert_allclose(t.numpy(), (g + 1).sum())
    np.testing.assert_allclose(dask.compute(held, t, s)[1], (g + 1).sum())
    np.testing.assert_allclose(kept.numpy(), (g + 1).sum())
    assert _run_spec_watch.seen == []


def test_partials_run_on_their_ranks(client, comm_of):
    comm = comm_of(4)
    a = ht.array(data((12, 3), np.float64), split=0, comm=comm).persist_(wait=True)
    for x in (a, skewed(a).persist_(wait=True)):
        s = (x + 2).sum()
        partials = [key for key in tasks_submitted(s, x) if "-partial-" in key[0]]
        nonempty = [r for r, rows in enumerate(x.lshape_map[:, 0].tolist()) if rows]
        assert sorted(key[1] for key in partials) == nonempty
        with distributed.get_task_stream(client) as stream:
            s.persist(wait=True)  # a persist runs the graph's own keys
        ran = {str(t["key"]): t["worker"] for t in stream.data}
        assert {str(k): ran.get(str(k)) for k in partials} == {
            str(k): comm.workers[k[1]] for k in partials
        }
        # a compute renames them for the call (the one on the aggregate's rank runs in it)
        with distributed.get_task_stream(client) as stream:
            s.numpy()
        ran = {t["key"][1]: t["worker"] for t in stream.data if "-partial-" in t["key"][0]}
        assert ran == {r: comm.workers[r] for r in nonempty if r != 0}


def test_device_chunks_stay_on_the_device(standin, comm_of):
    g = data((7, 4), np.float64)
    a = ht.array(g, split=0, comm=comm_of(3), device="gpu").persist_(wait=True)
    for s, want in (((a + 1).sum(), (g + 1).sum()), (ht.max(a * 2, axis=0), (g * 2).max(0))):
        assert isinstance(s.to_dask()._meta, StrictArray)
        assert len(tasks_submitted(s, a)) == 4
        got = s.numpy()
        assert type(got) is np.ndarray
        np.testing.assert_allclose(got, want)
