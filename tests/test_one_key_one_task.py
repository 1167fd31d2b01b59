"""One key always means one task: dndask submits its graphs unfused (issue 14, entry 16).

Dask's fusion gives a key a different task depending on what else is requested; the
scheduler then warns "different `run_spec`" and keeps the stale task. The conftest guard
fails any test during which it warns; these are the cases that used to make it warn.
"""

from __future__ import annotations

import dask
import dask.array as da
import numpy as np
import pytest
from conftest import _run_spec_watch
from dask.highlevelgraph import HighLevelGraph

import dndask as ht
from dndask import _compute


def test_optimize_culls_and_fuses_nothing():
    dsk = {("x", 0): 1, ("y", 0): (np.negative, ("x", 0)), ("z", 0): (np.abs, ("y", 0))}
    graph = HighLevelGraph.from_collections("z", dsk, ())
    out = dict(_compute.optimize(graph, [("y", 0)]))
    assert out == {("x", 0): 1, ("y", 0): dsk[("y", 0)]}  # culled, not fused
    assert dict(_compute.optimize(dsk, ("z", 0))) == dsk


@pytest.mark.parametrize("n", [1, 3, 4])
def test_a_mask_reused_after_its_expression_was_computed(comm_of, n):
    g = np.arange(-5, 7, dtype=np.float64).reshape(6, 2)
    a = ht.array(g, split=0, comm=comm_of(n))
    mask = a > 0
    np.testing.assert_array_equal(mask.numpy(), g > 0)
    np.testing.assert_array_equal(a[mask].numpy(), g[g > 0])
    np.testing.assert_array_equal(ht.where(mask, a, 0).numpy(), np.where(g > 0, g, 0))
    assert _run_spec_watch.seen == []


@pytest.mark.parametrize("n", [2, 4])
def test_an_intermediate_computed_alone_then_inside_a_chain(client, comm_of, n):
    g = np.arange(10.0)
    a = ht.array(g, split=0, comm=comm_of(n))
    b = a + 1
    c = ht.sqrt(b) * 2
    np.testing.assert_array_equal(b.numpy(), g + 1)  # b alone
    np.testing.assert_allclose(c.numpy(), np.sqrt(g + 1) * 2)  # b inside a chain
    both = client.gather(client.compute([b, c]))  # and both together, the Dask way
    np.testing.assert_allclose(both[1], np.sqrt(g + 1) * 2)
    (d,) = dask.compute(c)
    np.testing.assert_allclose(d, np.sqrt(g + 1) * 2)
    assert _run_spec_watch.seen == []


def test_dask_fuses_plain_graphs_but_not_one_built_on_a_dndarray(comm_of):
    """Dask's own optimization (xarray's, ``dask.compute``'s) culls a DNDarray's graph unfused."""
    plain = da.arange(6, chunks=3) + 1
    (fused,) = dask.optimize(plain * 2)
    assert plain.name not in {k[0] for k in dict(fused.__dask_graph__())}  # fused away
    a = ht.arange(6, split=0, comm=comm_of(2))
    on_a = (a.to_dask() + 1) * 2
    (kept,) = dask.optimize(on_a)
    names = {k[0] for k in dict(kept.__dask_graph__())}
    assert a.to_dask().name in names and (a.to_dask() + 1).name in names


@pytest.mark.parametrize("n", [1, 3])
def test_xarray_computes_a_graph_dndask_persisted_without_a_collision(comm_of, n):
    g = np.arange(12.0).reshape(6, 2)
    x = ht.array(g, split=0, comm=comm_of(n)).to_xarray(dims=("t", "c"))
    y = (x * 2 + 1).mean("c")
    b = y.dnd.to_dndarray().persist()  # y's keys, submitted by dndask
    np.testing.assert_allclose(y.values, (g * 2 + 1).mean(1))  # the same keys, by xarray
    np.testing.assert_allclose(b.numpy(), (g * 2 + 1).mean(1))
    assert _run_spec_watch.seen == []


@pytest.mark.parametrize("n", [3, 4])
def test_a_p2p_resplit_computed_in_part_then_whole(comm_of, n):
    """Dask's p2p rechunk layer builds a key differently when culled to one output chunk.

    (``P2PRechunkLayer`` makes a lone kept chunk with ``concatenate3``, several with the
    shuffle.) dndask materializes whole layers before culling, so the key keeps one task.
    """
    g = np.arange(48.0).reshape(6, 8)
    b = ht.array(g, split=0, comm=comm_of(n)).resplit(1, method="p2p")
    part = b[:, :2].persist(wait=True)  # needs only the first output chunk
    np.testing.assert_array_equal(b.numpy(), g)  # every output chunk
    np.testing.assert_array_equal(part.numpy(), g[:, :2])
    assert _run_spec_watch.seen == []
