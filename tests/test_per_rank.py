"""per_rank, is_split joins and map_local: data stays where it was made."""

from __future__ import annotations

import time

import dask.array as da
import distributed
import numpy as np
import pytest
import torch
from conftest import RANK_COUNTS, assert_layout, holders, received_bytes

import dndask as ht
from dndask import _compat, _compute, _per_rank


def piece(rank: int, rows: int = 3, cols: int = 4) -> np.ndarray:
    return np.full((rows + rank % 2, cols), float(rank))


@pytest.mark.parametrize("n", RANK_COUNTS)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_per_rank_join_keeps_pieces_in_place(client, comm_of, n, axis):
    comm = comm_of(n)

    def make(rank):
        return np.full((2, 3), rank, dtype=np.int32) + np.arange(3, dtype=np.int32)

    pieces = ht.per_rank(make, comm=comm)
    assert len(pieces) == n and pieces.comm == comm
    a = ht.array(pieces, is_split=axis)
    expected = np.concatenate([make(r) for r in range(n)], axis=axis)
    assert_layout(a, expected, axis % 2, comm)
    # each chunk is still held by the worker that made it: persisting moves nothing
    since = time.time()
    b = a.persist(wait=True)
    assert holders(client, b) == [(w,) for w in comm.workers]
    assert received_bytes(client, since) == 0


@pytest.mark.parametrize("n", [1, 3])
def test_is_split_join_holds_its_chunk_keys_so_later_graphs_start_from_them(client, comm_of, n):
    """The join persists at once: its chunk keys are held, each by its rank's worker, and a
    computation on the array runs one task per chunk, not an alias of each piece first."""
    comm = comm_of(n)
    pieces = ht.per_rank(lambda rank: np.full((rank + 1, 2), rank, dtype=np.float64), comm=comm)
    a = ht.array(pieces, is_split=0)
    assert holders(client, a) == [(w,) for w in comm.workers]  # no persist called
    with distributed.get_task_stream(client) as stream:
        got = (a + 1).numpy()
    expected = np.concatenate([np.full((r + 1, 2), r + 1.0) for r in range(n)])
    np.testing.assert_array_equal(got, expected)
    ran = [t["key"] for t in stream.data]
    assert not any(k[0] == a.to_dask().name for k in ran if isinstance(k, tuple)), ran


@pytest.mark.parametrize("n", [1, 3])
@pytest.mark.parametrize("axis", [0, 1])
def test_is_split_join_and_its_persist_run_no_task(client, comm_of, n, axis):
    """The chunks are the per-rank results under their own keys: no task renames them."""
    comm = comm_of(n)
    shape = (2, 3)

    def make(rank):
        return np.full(tuple(s + rank if a == axis else s for a, s in enumerate(shape)), rank)

    pieces = ht.per_rank(make, comm=comm)
    with distributed.get_task_stream(client) as stream:
        a = ht.array(pieces, is_split=axis).persist_(wait=True)
        b = a.persist(wait=True)
    assert stream.data == []
    assert [f.key for f in a._chunk_futures()] == [f.key for f in pieces.futures]
    assert holders(client, b) == [(w,) for w in comm.workers]
    assert (b.to_dask().name, b.split) == (a.to_dask().name, axis)


def test_graphs_on_a_join_read_the_results_directly(client, comm_of):
    """Every graph on the join (dndask's ops, Dask's own, hand-built legacy tasks) reads the
    per-rank results' keys: one task per chunk and operation, none named after the join."""
    comm = comm_of(3)
    parts = [np.arange(6.0).reshape(3, 2) * (r + 1) for r in range(3)]
    pieces = ht.per_rank(lambda rank: parts[rank], comm=comm)
    a = ht.array(pieces, is_split=0)
    g = np.concatenate(parts)
    with distributed.get_task_stream(client) as stream:
        b = (a * 2 + 1).persist(wait=True)
    ran = [t["key"] for t in stream.data]
    assert len(ran) == 3 and all(k[0] == b.to_dask().name for k in ran), ran
    with distributed.get_task_stream(client) as stream:
        assert_layout(b, g * 2 + 1, 0, comm)
        ones = ht.array(np.ones((2, 4)), comm=comm)
        np.testing.assert_allclose((a @ ones).numpy(), g @ np.ones((2, 4)))
        np.testing.assert_array_equal(ht.sort(a, axis=0).numpy(), np.sort(g, axis=0))
        top = ht.topk(a, 2, dim=0)[0].numpy()  # legacy tuple tasks on the join's keys
        np.testing.assert_array_equal(top, -np.sort(-g, axis=0)[:2])
        for got, expected in zip(ht.nonzero(a), np.nonzero(g), strict=True):
            np.testing.assert_array_equal(got.numpy(), expected)
        assert float(a.sum()) == g.sum()
        # Dask's own compute and dndask's submit the same task under each key (the suite's
        # "one key one task" fixture checks it). Dask's expression arrays consult no
        # optimization of dndask's: there an alias task renames each result (below).
        if not _compat.query_planning():
            np.testing.assert_array_equal(da.compute((a + 1).to_dask())[0], g + 1)
        np.testing.assert_array_equal((a + 1).numpy(), g + 1)
        shifted = a.map_local(lambda t, rank: t + rank).numpy()
        np.testing.assert_array_equal(shifted, np.concatenate([p + r for r, p in enumerate(parts)]))
    name = a.to_dask().name
    assert not [t["key"] for t in stream.data if t["key"][0] == name]
    # the join's own chunk keys asked of Dask: an alias makes each, as for any requested key
    np.testing.assert_array_equal(da.compute(a.to_dask())[0], g)
    np.testing.assert_array_equal(da.compute((a + 1).to_dask())[0], g + 1)


def test_a_flat_graph_on_a_join_reads_the_results_directly(client, comm_of):
    """A graph without layers (what a dask expression lowers to) gets the same rewrite as a
    layered one: the tasks read the per-rank results' keys, and no join key is left unless
    it is asked for."""
    comm = comm_of(3)
    parts = [np.arange(4.0).reshape(2, 2) + 10 * r for r in range(3)]
    a = ht.array(ht.per_rank(lambda rank: parts[rank], comm=comm), is_split=0)
    b = (a * 3).to_dask()
    keys = list(_compat.flatten(b.__dask_keys__()))
    flat = dict(b.__dask_graph__())
    assert any(isinstance(k, tuple) and k[0] == a.to_dask().name for k in flat)
    graph = _compute.optimize(flat, keys)
    assert not [k for k in graph if isinstance(k, tuple) and k[0] == a.to_dask().name]
    got = client.get(graph, keys, sync=True)
    np.testing.assert_array_equal(np.concatenate(got), np.concatenate(parts) * 3)
    # a join key asked for stays, as the result it stands for
    first = (a.to_dask().name, 0, 0)
    kept = _compute.optimize(flat | {first: dict(a.to_dask().__dask_graph__())[first]}, [first])
    np.testing.assert_array_equal(client.get(kept, first, sync=True), parts[0])


def test_is_split_join_asks_the_workers_nothing(comm_of, monkeypatch):
    """Shapes and dtypes came with per_rank's results: the join is no round trip."""
    comm = comm_of(3)
    numpy_pieces = ht.per_rank(piece, comm=comm)
    torch_pieces = ht.per_rank(lambda rank: torch.full((rank, 2), rank), comm=comm)

    def refuse(*args, **kwargs):
        raise AssertionError("the join waited for the workers")

    client_type = type(comm.client)
    monkeypatch.setattr(client_type, "gather", refuse)
    monkeypatch.setattr(client_type, "submit", refuse)
    a = ht.array(numpy_pieces, is_split=0)  # numpy results are the chunks: no task at all
    monkeypatch.undo()
    monkeypatch.setattr(client_type, "gather", refuse)
    b = ht.array(torch_pieces, is_split=0)  # converted by tasks submitted, not waited for
    monkeypatch.undo()
    assert_layout(a, np.concatenate([piece(r) for r in range(3)]), 0, comm)
    assert b.lshape_map.tolist() == [[0, 2], [1, 2], [2, 2]]
    np.testing.assert_array_equal(b.numpy(), [[1, 1], [2, 2], [2, 2]])


def test_per_rank_sees_its_rank_and_arguments(comm_of):
    comm = comm_of(3)

    def report(rank, scale, *, offset):
        return (rank, comm.rank, scale * rank + offset)

    assert comm.rank == 0
    got = ht.per_rank(report, 10, offset=1, comm=comm).gather()
    assert got == [(0, 0, 1), (1, 1, 11), (2, 2, 21)]


def test_is_split_uneven_and_empty_pieces(comm_of):
    comm = comm_of(4)
    sizes = [0, 3, 1, 0]
    pieces = ht.per_rank(lambda rank: torch.arange(sizes[rank] * 2).reshape(-1, 2), comm=comm)
    a = ht.array(pieces, is_split=0)
    assert a.lshape_map.tolist() == [[0, 2], [3, 2], [1, 2], [0, 2]]
    assert not a.balanced
    expected = np.concatenate([np.arange(s * 2).reshape(-1, 2) for s in sizes])
    assert_layout(a, expected, 0, comm)
    assert a.balance_().lshape_map[:, 0].tolist() == [1, 1, 1, 1]
    assert_layout(a, expected, 0, comm)


@pytest.mark.parametrize("kind", ["numpy", "torch", "dask", "dndarray"])
def test_is_split_from_a_sequence_of_pieces(comm_of, kind):
    comm = comm_of(3)
    raw = [piece(r) for r in range(3)]
    convert = {
        "numpy": lambda p: p,
        "torch": torch.from_numpy,
        "dask": lambda p: da.from_array(p, chunks=1),
        "dndarray": lambda p: ht.array(p, comm=comm),
    }[kind]
    a = ht.array([convert(p) for p in raw], is_split=0, comm=comm)
    assert_layout(a, np.concatenate(raw), 0, comm)
    assert a.lshape_map[:, 0].tolist() == [3, 4, 3]
    # empty pieces keep their (empty) rank
    raw[0], raw[2] = np.zeros((0, 4)), np.zeros((0, 4))
    b = ht.array([convert(p) for p in raw], is_split=0, comm=comm)
    assert b.lshape_map[:, 0].tolist() == [0, 4, 0]
    assert_layout(b, np.concatenate(raw), 0, comm)


def test_seed_is_split_example(comm_of):
    comm = comm_of(4)
    local = ht.per_rank(lambda rank: np.random.default_rng(rank).random((3, 4)), comm=comm)
    assert ht.array(local, is_split=0).shape == (12, 4)
    assert ht.array(local, is_split=1).shape == (3, 16)
    assert ht.array(local, is_split=1, dtype=ht.float32).dtype == ht.float32


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda r: np.zeros((2, 3)) if r != 2 else np.zeros((2, 3, 1)),
         "`is_split` pieces must have the same ndim: rank 0 has 2, rank 2 has 3"),
        (lambda r: np.zeros((2, 3)) if r != 1 else np.zeros((2, 4)),
         r"`is_split` pieces must agree off axis 0: rank 0 has shape \(2, 3\), rank 1 has \(2, 4\)"),
        (lambda r: np.zeros((2, 3), np.float32 if r == 2 else np.float64),
         "`is_split` pieces must share a dtype: rank 0 has float64, rank 2 has float32"),
    ],
)  # fmt: skip
def test_inconsistent_pieces_name_the_rank(comm_of, make, match):
    comm = comm_of(3)
    with pytest.raises(ValueError, match=match):
        ht.array(ht.per_rank(make, comm=comm), is_split=0)
    with pytest.raises(ValueError, match=match):
        ht.array([make(r) for r in range(3)], is_split=0, comm=comm)


def test_bad_is_split_inputs(comm_of):
    comm = comm_of(3)
    with pytest.raises(ValueError, match="`is_split` needs one piece per rank: 3, got 2"):
        ht.array([np.zeros(2), np.zeros(2)], is_split=0, comm=comm)
    with pytest.raises(TypeError, match="`is_split` needs one piece per rank: a PerRank"):
        ht.array(np.zeros((3, 4)), is_split=0, comm=comm)
    with pytest.raises(TypeError, match="`is_split` needs one piece per rank"):
        ht.array([1, 2, 3], is_split=0, comm=comm)
    pr = ht.per_rank(lambda r: np.zeros(2), comm=comm)
    with pytest.raises(ValueError, match="`is_split` must name the axis to join a PerRank"):
        ht.array(pr)
    with pytest.raises(ValueError, match=r"`is_split` must be in \[-1, 0\]"):
        ht.array(pr, is_split=1)
    with pytest.raises(ValueError, match="`comm` must be the PerRank's comm"):
        ht.array(pr, is_split=0, comm=comm_of(2))
    notarrays = ht.per_rank(lambda r: {"rank": r} if r == 1 else np.zeros(2), comm=comm)
    with pytest.raises(TypeError, match="the piece of rank 1 must be"):
        ht.array(notarrays, is_split=0)


def test_failing_rank_is_reraised_in_the_driver(comm_of):
    comm = comm_of(4)

    def boom(rank):
        if rank == 2:
            raise KeyError("missing input")
        return rank

    with pytest.raises(KeyError, match="per_rank function 'boom' failed on rank 2"):
        ht.per_rank(boom, comm=comm)

    def bad_value(rank):
        if rank == 3:
            raise ValueError("negative")
        return rank

    with pytest.raises(ValueError, match="failed on rank 3: ValueError: negative"):
        ht.per_rank(bad_value, comm=comm)
    with pytest.raises(TypeError, match="`fn` must be callable, got int"):
        ht.per_rank(3, comm=comm)


@pytest.mark.parametrize("split", [None, 0, 1])
def test_map_local(comm_of, split):
    comm = comm_of(3)
    g = np.arange(35, dtype=np.float64).reshape(7, 5)
    a = ht.array(g, split=split, comm=comm)
    b = a.map_local(lambda t, rank: t * 2 + rank)
    if split is None:
        expected = g * 2
    else:
        parts = np.array_split(g, 3, axis=split)
        expected = np.concatenate([p * 2 + r for r, p in enumerate(parts)], axis=split)
    assert_layout(b, expected, split, comm)
    # results may change size along the split axis
    if split is not None:
        c = a.map_local(lambda t, rank: t.narrow(split, 0, min(1, t.shape[split])))
        assert c.lshape_map[:, split].tolist() == [1, 1, 1]
    with pytest.raises(ZeroDivisionError, match="map_local function failed on rank 0"):
        a.map_local(lambda t, rank: 1 / 0)


@pytest.mark.parametrize("n", [1, 4])
def test_driver_pieces_go_to_their_ranks_at_once(client, comm_of, n):
    """ht.array scatters every rank's piece in one turn of the client's loop; a piece whose
    worker is gone comes back as the KeyError naming it (``_scatter_to_ranks`` then asks
    which address serves the rank and sends that piece again)."""
    comm = comm_of(n)
    g = np.arange(7 * 3, dtype=np.float32).reshape(7, 3)
    a = ht.array(g, split=0, comm=comm)
    assert holders(client, a) == [(w,) for w in comm.workers]
    np.testing.assert_array_equal(a.numpy(), g)
    gone = "tcp://127.0.0.1:1"
    sent = _per_rank._scatter_each(client, [g[:2], g[2:]], [comm.workers[0], gone])
    assert isinstance(sent[0], distributed.Future) and sent[0].result().shape == (2, 3)
    assert isinstance(sent[1], KeyError) and sent[1].args == (gone,)
