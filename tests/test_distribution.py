"""redistribute_, resplit_, balance_: values, maps, errors, placement and bytes moved."""

from __future__ import annotations

import time

import dask.array as da
import numpy as np
import pytest
import torch
from conftest import (
    NEEDS_P2P,
    RANK_COUNTS,
    assert_layout,
    holders,
    layouts,
    received_bytes,
    skewed,
    splits_of,
    values_of,
)

import dndask as ht
from dndask import _compat, _distribution, _layout
from dndask._distribution import relayout
from dndask._layout import Distribution

SHAPES = [(7, 4, 3), (5,), (0, 3), (2, 6)]


def global_data(shape, dtype=np.float64):
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


def random_counts(rng, n: int, size: int) -> list[int]:
    """A random split of ``n`` rows over ``size`` ranks, zeros allowed."""
    cuts = np.sort(rng.integers(0, n + 1, size=size - 1))
    return np.diff(np.concatenate([[0], cuts, [n]])).astype(int).tolist()


def snapshot(a: ht.DNDarray):
    return a.lshape_map.tolist(), a.split, a.to_dask().name, a.numpy()


def assert_unchanged(a: ht.DNDarray, before) -> None:
    lmap, split, name, values = before
    assert a.lshape_map.tolist() == lmap
    assert a.split == split
    assert a.to_dask().name == name
    np.testing.assert_array_equal(a.numpy(), values)


@pytest.mark.parametrize(
    ("shape", "split", "n"), [p for p in layouts(SHAPES) if p.values[1] is not None]
)
def test_redistribute_to_random_maps(comm_of, shape, split, n):
    comm = comm_of(n)
    g = global_data(shape)
    rng = np.random.default_rng(sum(shape) * 10 + n)
    for _ in range(3):
        a = ht.array(g, split=split, comm=comm)
        target = a.lshape_map
        counts = random_counts(rng, shape[split], n)
        target[:, split] = torch.tensor(counts)
        b = ht.redistribute(a, target_map=target)
        assert a.lshape_map[:, split].tolist() == list(_layout.balanced_counts(shape[split], n))
        assert b.lshape_map.tolist() == target.tolist()
        assert_layout(b, g, split, comm)
        assert b.balanced == (tuple(counts) == _layout.balanced_counts(shape[split], n))
        assert a.redistribute_(target_map=target) is a
        assert_layout(a, g, split, comm)
        # and back to balanced without a map
        a.redistribute_()
        assert a.balanced
        assert_layout(a, g, split, comm)


@pytest.mark.parametrize("n", RANK_COUNTS)
@pytest.mark.parametrize("shape", [(7, 4, 3), (3, 0, 2), (1, 5)])
def test_resplit_every_pair_of_splits(comm_of, shape, n):
    comm = comm_of(n)
    g = global_data(shape, np.float32)
    rng = np.random.default_rng(n)
    for src in splits_of(len(shape)):
        for dst in splits_of(len(shape)):
            a = ht.array(g, split=src, comm=comm)
            if src is not None:  # start from an unbalanced layout
                target = a.lshape_map
                target[:, src] = torch.tensor(random_counts(rng, shape[src], n))
                a.redistribute_(target_map=target)
            b = ht.resplit(a, dst)
            assert_layout(b, g, dst, comm)
            assert b.balanced or src == dst  # same axis: nothing moves
            assert a.resplit_(dst) is a
            assert_layout(a, g, dst, comm)


@pytest.mark.parametrize("axis", [-1, -2])
def test_resplit_negative_axis(comm_of, axis):
    a = ht.zeros((4, 6), split=0, comm=comm_of(3))
    assert a.resplit_(axis).split == axis % 2


def test_resplit_same_axis_and_default_none(comm_of):
    a = ht.ones((6, 2), split=0, comm=comm_of(3))
    name = a.to_dask().name
    assert a.resplit_(0) is a and a.to_dask().name == name
    assert a.resplit_().split is None  # the default axis gathers, as in Heat


@pytest.mark.parametrize("method", ["tasks", "p2p"])
def test_resplit_methods_agree(comm_of, method):
    comm = comm_of(4)
    g = global_data((9, 10))
    a = ht.array(g, split=0, comm=comm)
    if method == "p2p" and not _compat.p2p_rechunk():  # query planning on
        with pytest.raises(ValueError, match="`method` 'p2p' needs dask's p2p rechunk"):
            a.resplit(1, method=method)
        return
    assert_layout(a.resplit(1, method=method), g, 1, comm)


def test_without_dasks_p2p_rechunk_resplit_moves_by_tasks(comm_of, monkeypatch):
    """Where dask builds no p2p rechunk (its expression arrays), none is chosen: asked for,
    a ValueError that says why, and nothing changes; above the threshold, tasks."""
    comm = comm_of(3)
    g = global_data((6, 6))
    a = ht.array(g, split=0, comm=comm)
    name = a.to_dask().name
    monkeypatch.setattr(_distribution, "p2p_rechunk", lambda: False)
    monkeypatch.setenv("DNDASK_SHM_RESERVE", str(2**62))  # no room in shared memory
    monkeypatch.setenv("DNDASK_P2P_THRESHOLD", "4")
    with pytest.raises(ValueError, match="`method` 'p2p' needs dask's p2p rechunk, which dask"):
        a.resplit_(1, method="p2p")
    assert a.split == 0 and a.to_dask().name == name
    b = a.resplit(1)
    assert not any("p2p" in str(key) for key in b.to_dask().__dask_graph__())
    assert_layout(b, g, 1, comm)
    assert a.resplit(0, method="p2p").split == 0  # nothing to move between axes: no p2p asked


@NEEDS_P2P
def test_resplit_picks_p2p_above_threshold(comm_of, monkeypatch):
    """Where shared memory cannot carry it (no room here), Dask's p2p above the threshold."""
    comm = comm_of(3)
    a = ht.array(global_data((6, 6)), split=0, comm=comm)
    monkeypatch.setenv("DNDASK_SHM_RESERVE", str(2**62))
    monkeypatch.setenv("DNDASK_P2P_THRESHOLD", "4")
    b = a.resplit(1)
    assert "rechunk-p2p" in b.to_dask().name or "p2p" in str(b.to_dask().dask.layers)
    assert_layout(b, global_data((6, 6)), 1, comm)
    monkeypatch.setenv("DNDASK_P2P_THRESHOLD", "100")
    assert b.to_dask().name != a.resplit(1).to_dask().name
    monkeypatch.setenv("DNDASK_P2P_THRESHOLD", "-1")
    with pytest.raises(ValueError, match="`DNDASK_P2P_THRESHOLD` must be a non-negative int"):
        a.resplit(1)


@NEEDS_P2P
def test_a_p2p_resplit_builds_no_piece_plan(monkeypatch):
    """Above the threshold Dask's rechunk plans the move: dndask's P² pieces are never built.

    Planning them first cost 1.6 s of driver time at 1024 ranks and 22 s at 4096
    (bench.scaling) for a graph Dask builds in hundredths of a second.
    """
    comm = ht.Comm([f"tcp://rank-{r}:1" for r in range(128)])  # plain data until it computes
    counts = _layout.balanced_counts(256, 128)
    x = da.zeros((256, 256), chunks=(counts, 256), dtype=np.float32)
    src = _layout.Distribution(0, counts, comm)
    dst = _layout.Distribution.balanced(x.shape, 1, comm)

    def refuse(*args):
        raise AssertionError("the p2p path planned every piece")

    monkeypatch.setattr(_layout, "plan_relayout", refuse)
    y, task_ranks = _distribution.relayout_graph(x, src, dst)  # 128² pieces > 4096: p2p
    assert task_ranks == {} and y.chunks == dst.chunks(x.shape)
    with pytest.raises(AssertionError, match="planned every piece"):
        _distribution.relayout_graph(x, src, dst, "tasks")
    other = _layout.Distribution.balanced(x.shape, 1, ht.Comm(["tcp://elsewhere:1"]))
    with pytest.raises(ValueError, match="`dst` must be on the array's comm"):
        _distribution.relayout_graph(x, src, other)  # still checked before the p2p path


@pytest.mark.parametrize("n", RANK_COUNTS)
def test_balance(comm_of, n):
    comm = comm_of(n)
    g = global_data((9, 2))
    a = ht.array(g, split=0, comm=comm)
    target = a.lshape_map
    target[:, 0] = 0
    target[-1, 0] = 9
    a.redistribute_(target_map=target)
    assert a.balanced == (n == 1)
    b = ht.balance(a, copy=True)
    assert b is not a and b.balanced and a.balanced == (n == 1)
    assert_layout(b, g, 0, comm)
    assert a.balance_() is a and a.balanced
    assert ht.balance(a) is a
    assert_layout(a, g, 0, comm)
    assert a.is_balanced(force_check=True)


def test_seed_tour_maps(comm_of):
    comm = comm_of(4)
    a = ht.random.randn(7, 4, 3, split=0, comm=comm)
    g = a.numpy()
    assert a.lshape_map.tolist() == [[2, 4, 3]] * 3 + [[1, 4, 3]]
    target = a.lshape_map
    target[:, a.split] = torch.tensor([1, 2, 2, 2])
    a.redistribute_(target_map=target)
    assert a.lshape_map.tolist() == [[1, 4, 3]] + [[2, 4, 3]] * 3
    assert a.larray.shape == (1, 4, 3)
    np.testing.assert_array_equal(a.larray.numpy(), g[:1])
    a.resplit_(axis=1)
    assert a.lshape_map.tolist() == [[7, 1, 3]] * 4
    a.resplit_(axis=None)
    assert a.split is None and a.lshape_map.tolist() == [[7, 4, 3]] * 4
    a = ht.array(a, split=0)
    assert a.lshape_map.tolist() == [[2, 4, 3]] * 3 + [[1, 4, 3]]
    np.testing.assert_array_equal(a.numpy(), g)


def test_lshape_map_is_a_fresh_int64_tensor(comm_of):
    a = ht.zeros((7, 4), split=0, comm=comm_of(4))
    m = a.lshape_map
    assert isinstance(m, torch.Tensor) and m.dtype == torch.int64 and tuple(m.shape) == (4, 2)
    c = m.copy()
    c[:, 0] = 99
    m[0, 0] = 42
    assert a.lshape_map.tolist() == [[2, 4], [2, 4], [2, 4], [1, 4]]
    assert repr(a.lshape_map).startswith("tensor(")
    assert ht.zeros((), comm=comm_of(3)).lshape_map.shape == (3, 0)


# ------------------------------------------------------------------ bad input
def _bad_target(a, change):
    target = a.lshape_map
    return change(target)


BAD_TARGETS = [
    ("a list", lambda t: t.tolist(), TypeError, "`target_map` must be a torch.Tensor or numpy"),
    ("a string", lambda t: "abc", TypeError, "`target_map` must be a torch.Tensor"),
    ("float dtype", lambda t: t.float(), TypeError, "`target_map` must have an integer dtype"),
    ("wrong rows", lambda t: t[:-1], ValueError, r"`target_map` must have shape \(4, 3\)"),
    ("wrong cols", lambda t: t[:, :2], ValueError, r"`target_map` must have shape \(4, 3\)"),
    (
        "wrong sum",
        lambda t: torch.tensor([[2, 4, 3], [2, 4, 3], [2, 4, 3], [2, 4, 3]]),
        ValueError,
        "`target_map` must sum to 7 along axis 0, got 8",
    ),
    (
        "negative",
        lambda t: torch.tensor([[-1, 4, 3], [4, 4, 3], [2, 4, 3], [2, 4, 3]]),
        ValueError,
        "`target_map` must hold non-negative entries",
    ),
    (
        "non-split column",
        lambda t: torch.tensor([[1, 4, 3], [2, 0, 3], [2, 4, 3], [2, 4, 3]]),
        ValueError,
        "`target_map` column 1 must equal the global shape 4 on every rank, got 0 for rank 1",
    ),
]


@pytest.mark.parametrize(
    ("label", "change", "exc", "match"), BAD_TARGETS, ids=[b[0] for b in BAD_TARGETS]
)
def test_bad_target_map_leaves_array_unchanged(comm_of, label, change, exc, match):
    a = ht.random.rand(7, 4, 3, split=0, comm=comm_of(4))
    before = snapshot(a)
    with pytest.raises(exc, match=match):
        a.redistribute_(target_map=_bad_target(a, change))
    assert_unchanged(a, before)
    with pytest.raises(exc, match=match):
        ht.redistribute(a, target_map=_bad_target(a, change))
    assert_unchanged(a, before)


def test_bad_lshape_map(comm_of):
    a = ht.arange(7, split=0, comm=comm_of(4))
    before = snapshot(a)
    with pytest.raises(TypeError, match=r"`lshape_map` must be a torch\.Tensor"):
        a.redistribute_(lshape_map=[[2], [2], [2], [1]])
    with pytest.raises(ValueError, match=r"`lshape_map` must match the current distribution"):
        a.redistribute_(lshape_map=torch.tensor([[1], [2], [2], [2]]))
    assert_unchanged(a, before)
    assert a.redistribute_(lshape_map=a.lshape_map) is a


def test_redistribute_unsplit_raises(comm_of):
    a = ht.zeros((4, 2), comm=comm_of(2))
    before = snapshot(a)
    with pytest.raises(ValueError, match="`redistribute_` needs a split array, got split=None"):
        a.redistribute_(target_map=torch.tensor([[4, 2], [0, 2]]))
    assert_unchanged(a, before)


@pytest.mark.parametrize(
    ("axis", "exc", "match"),
    [
        (2, ValueError, r"`axis` must be in \[-2, 1\] for a 2-dimensional array, got 2"),
        (-3, ValueError, r"`axis` must be in \[-2, 1\] for a 2-dimensional array, got -3"),
        (1.0, TypeError, "`axis` must be None or an int, got float"),
        ("0", TypeError, "`axis` must be None or an int, got str"),
        ((0,), TypeError, "`axis` must be None or an int, got tuple"),
        (True, TypeError, "`axis` must be None or an int, got bool"),
    ],
)
def test_bad_resplit_axis(comm_of, axis, exc, match):
    a = ht.zeros((4, 2), split=0, comm=comm_of(2))
    before = snapshot(a)
    with pytest.raises(exc, match=match):
        a.resplit_(axis)
    with pytest.raises(exc, match=match):
        ht.resplit(a, axis)
    assert_unchanged(a, before)


def test_bad_method_and_arguments(comm_of):
    a = ht.zeros((4, 2), split=0, comm=comm_of(2))
    with pytest.raises(
        ValueError, match="`method` must be None, 'mpi', 'shm', 'tasks' or 'p2p', got 'x'"
    ):
        a.resplit_(1, method="x")
    with pytest.raises(
        ValueError, match="`method` must be None, 'mpi', 'shm', 'tasks' or 'p2p', got 'x'"
    ):
        a.resplit_(0, method="x")  # checked even when nothing would move
    assert a.split == 0
    with pytest.raises(TypeError, match="`arr` must be a DNDarray, got ndarray"):
        ht.resplit(np.zeros(3), 0)
    with pytest.raises(TypeError, match="`copy` must be a bool, got int"):
        a.balance(copy=1)


# ------------------------------------------------- placement and bytes moved
@pytest.mark.parametrize("n", [3, 5])
@pytest.mark.parametrize("split", [None, 0, 1, 2])
def test_persist_places_chunk_r_on_worker_r(client, comm_of, n, split):
    comm = comm_of(n)
    a = ht.random.randn(11, 6, 4, split=split, comm=comm).persist(wait=True)
    expected = [(w,) for w in comm.workers] if split is not None else [(comm.workers[0],)]
    assert holders(client, a) == expected
    b = a.resplit(None if split == 0 else 0).persist(wait=True)
    if b.split is not None:
        assert holders(client, b) == [(w,) for w in comm.workers]


MADE = {
    "arange": lambda comm: ht.arange(6, split=0, comm=comm),
    "zeros": lambda comm: ht.zeros((6, 2), split=1, comm=comm),
    "full": lambda comm: ht.full((6,), 2.5, split=0, comm=comm),
    "eye": lambda comm: ht.eye(4, split=0, comm=comm),
    "rand": lambda comm: ht.random.rand(6, split=0, comm=comm),
    "unsplit": lambda comm: ht.ones((3, 2), comm=comm),
    "derived": lambda comm: (ht.arange(6, split=0, comm=comm) * 2).resplit(None),
}


@pytest.mark.parametrize("made", MADE)
def test_the_same_values_made_for_two_comms_live_on_each_comms_workers(client, comm, made):
    """Equal arrays on two comms of one size are two sets of keys, each on its comm's workers.

    Creation keys once ignored the comm, so the second array's chunks were the
    first one's, held by the first comm's workers.
    """
    first, second = comm.subcomm([0, 1]), comm.subcomm([3, 2])
    ht.random.seed(7)
    a = MADE[made](first).persist(wait=True)
    ht.random.seed(7)
    b = MADE[made](second).persist(wait=True)
    assert set(a._chunk_keys()).isdisjoint(b._chunk_keys())
    for x, c in ((a, first), (b, second)):
        want = [(w,) for w in c.workers] if x.split is not None else [(c.workers[0],)]
        assert holders(client, x) == want
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize(
    "counts",
    [
        (1, 2, 2, 2),
        (7, 0, 0, 0),
        (0, 0, 0, 7),
        (2, 2, 2, 1),
        (0, 7, 0, 0),
        (0, 1, 4, 2),
        (1, 1, 1, 4),
    ],
)
def test_redistribute_moves_only_rows_that_change_owner(client, comm_of, counts):
    comm = comm_of(4)
    row = 2000  # float64 values per row: 16000 bytes
    a = ht.random.rand(7, row, dtype=ht.float64, split=0, comm=comm).persist(wait=True)
    g = a.numpy()
    since = time.time()
    target = a.lshape_map
    target[:, 0] = torch.tensor(counts)
    b = a.redistribute(target_map=target).persist(wait=True)
    moved = received_bytes(client, since)
    expected = _layout.moved_rows((2, 2, 2, 1), counts) * row * 8
    assert moved == expected
    assert holders(client, b) == [(w,) for w in comm.workers]
    np.testing.assert_array_equal(b.numpy(), g)


@pytest.mark.parametrize("n", [2, 3, 5])
def test_resplit_moves_only_what_changes_rank(client, comm_of, n):
    comm = comm_of(n)
    shape = (13, 3000)
    a = ht.random.rand(*shape, dtype=ht.float64, split=0, comm=comm).persist(wait=True)
    g = a.numpy()
    since = time.time()
    b = a.resplit(1).persist(wait=True)
    moved = received_bytes(client, since)
    rows = _layout.balanced_counts(shape[0], n)
    cols = _layout.balanced_counts(shape[1], n)
    kept = sum(r * c for r, c in zip(rows, cols, strict=True))  # block (r, r) stays on rank r
    assert moved == (shape[0] * shape[1] - kept) * 8
    assert holders(client, b) == [(w,) for w in comm.workers]
    np.testing.assert_array_equal(b.numpy(), g)


# ------------------------------------------------------- relayout: one entry point
def distributions(shape, comm, rng):
    """Every split of ``shape`` with random counts (empty ranks included), and split=None."""
    out = [Distribution(None, (), comm)]
    for split in range(len(shape)):
        out.append(Distribution(split, random_counts(rng, shape[split], comm.size), comm))
    return out


@pytest.mark.parametrize(("shape", "split", "n"), layouts([(7, 4, 3), (5,), (0, 3), (2, 6)]))
def test_relayout_to_every_distribution(comm_of, shape, split, n):
    comm = comm_of(n)
    g = global_data(shape)
    rng = np.random.default_rng(sum(shape) * 10 + n + (split or 0))
    a = ht.array(g, split=split, comm=comm)
    if split is not None:
        a = skewed(a)
    before = a.distribution
    targets = distributions(shape, comm, rng)
    results = [relayout(a, dst) for dst in targets]
    assert a.distribution == before  # out of place
    for dst, b, values in zip(targets, results, values_of(results), strict=True):
        assert b.distribution == dst
        assert b.split == dst.split
        if dst.split is not None:
            assert b.counts_displs()[0] == dst.counts
            assert b.lshape_map[:, dst.split].tolist() == list(dst.counts)
        np.testing.assert_array_equal(values, g)
    assert relayout(a, a.distribution) is a
    assert_layout(results[-1], g, targets[-1].split, comm)


def test_relayout_checks_its_target(comm_of):
    a = ht.zeros((4, 2), split=0, comm=comm_of(2))
    before = snapshot(a)
    with pytest.raises(ValueError, match="`counts` must sum to 2 along axis 1, got 3"):
        relayout(a, Distribution(1, (1, 2), a.comm))
    with pytest.raises(ValueError, match="`dst` must be on the array's comm"):
        relayout(a, Distribution(0, (1, 1, 2), comm_of(3)))
    assert_unchanged(a, before)


def test_distribution_is_read_off_the_chunks(comm_of):
    comm = comm_of(3)
    a = ht.arange(7, split=0, comm=comm)
    assert a.distribution == Distribution(0, (3, 2, 2), comm)
    a.redistribute_(target_map=torch.tensor([[0], [7], [0]]))
    assert a.distribution == Distribution(0, (0, 7, 0), comm)
    assert a.counts_displs() == ((0, 7, 0), (0, 0, 7))
    assert not a.balanced
    a.resplit_(None)
    assert a.distribution == Distribution(None, (), comm)
    bad = da.ones((6,), chunks=(3, 3))
    with pytest.raises(ValueError, match="chunks along split axis 0 must number 3, got 2"):
        ht.DNDarray(bad, 0, comm)


UNEVEN = (0, 1, 4, 2)  # rows of the reference per rank


def test_aligning_to_an_unbalanced_reference_moves_the_data_once(client, comm_of):
    """Issue 14 entry 18: ``b`` goes from split 1 straight into ``a``'s counts along 0."""
    comm = comm_of(4)
    shape = (7, 3000)
    a = ht.random.rand(*shape, dtype=ht.float64, split=0, comm=comm)
    a = a.redistribute(target_map=torch.tensor([[c, shape[1]] for c in UNEVEN])).persist(wait=True)
    b = ht.random.rand(*shape, dtype=ht.float64, split=1, comm=comm).persist(wait=True)
    ga, gb = a.numpy(), b.numpy()
    since = time.time()
    c = (a + b).persist(wait=True)
    moved = received_bytes(client, since)
    plan = _layout.plan_relayout(shape, b.distribution, a.distribution)
    assert moved == plan.moved * 8
    # the former resplit to balanced, then redistribute, moved more
    balanced = Distribution.balanced(shape, 0, comm)
    twice = (
        _layout.plan_relayout(shape, b.distribution, balanced).moved
        + _layout.plan_relayout(shape, balanced, a.distribution).moved
    )
    assert plan.moved < twice
    assert c.distribution == a.distribution
    assert holders(client, c) == [(w,) for w in comm.workers]
    np.testing.assert_array_equal(c.numpy(), ga + gb)


def test_relayout_into_unbalanced_counts_of_another_axis_moves_the_minimum(client, comm_of):
    comm = comm_of(4)
    shape = (13, 2000)
    a = ht.random.rand(*shape, dtype=ht.float64, split=0, comm=comm).persist(wait=True)
    g = a.numpy()
    dst = Distribution(1, (0, 500, 1200, 300), comm)
    since = time.time()
    b = relayout(a, dst).persist(wait=True)
    moved = received_bytes(client, since)
    plan = _layout.plan_relayout(shape, a.distribution, dst)
    kept = sum(r * c for r, c in zip(a.distribution.counts, dst.counts, strict=True))
    assert plan.moved == shape[0] * shape[1] - kept
    assert moved == plan.moved * 8
    assert holders(client, b) == [(w,) for w in comm.workers]
    np.testing.assert_array_equal(b.numpy(), g)


# ------------------------------------------- operand alignment (Heat's split rule)
@pytest.mark.parametrize("n", RANK_COUNTS)
def test_a_split_operand_broadcast_along_its_split_does_not_set_the_layout(comm_of, n):
    """Issue 14 entry 4: ``zeros((1, 4), split=0) + ones((6, 4), split=0)`` raised Dask's
    "Chunks do not add up to shape"; the operand that is not broadcast is the reference."""
    comm = comm_of(n)
    row = np.arange(4.0).reshape(1, 4)
    g = np.arange(24.0).reshape(6, 4)
    g3 = np.arange(48.0).reshape(2, 6, 4)
    r0 = ht.array(row, split=0, comm=comm)
    full = skewed(ht.array(g, split=0, comm=comm))
    cases = [
        (r0 + full, row + g, full.distribution),
        (full + r0, g + row, full.distribution),
        (r0 * full, row * g, full.distribution),
        # every split operand broadcast: the first one's split, balanced
        (r0 + ht.array(g, comm=comm), row + g, Distribution.balanced((6, 4), 0, comm)),
        (r0 - g, row - g, Distribution.balanced((6, 4), 0, comm)),
        # a row split along its last axis is not broadcast there: it is the reference
        (
            ht.array(row, split=1, comm=comm) + full,
            row + g,
            Distribution.balanced(g.shape, 1, comm),
        ),
        # split 0 of (1, 4) is axis 1 of the (2, 6, 4) result, where it is broadcast
        (r0 + ht.array(g3, split=1, comm=comm), row + g3, Distribution.balanced(g3.shape, 1, comm)),
    ]
    for (out, expected, dst), values in zip(cases, values_of(c[0] for c in cases), strict=True):
        assert out.distribution == dst
        np.testing.assert_array_equal(values, expected)
    assert_layout(cases[0][0], row + g, 0, comm)
    assert r0.distribution == Distribution.balanced((1, 4), 0, comm)  # operands untouched


def test_out_receives_a_result_with_one_relayout(client, comm_of):
    """``out=`` with another split and unbalanced counts: the result moves once, into them."""
    comm = comm_of(3)
    shape = (9, 2000)
    a = ht.random.rand(*shape, dtype=ht.float64, split=1, comm=comm).persist(wait=True)
    out = ht.zeros(shape, dtype=ht.float64, split=0, comm=comm)
    out.redistribute_(target_map=torch.tensor([[5, shape[1]], [0, shape[1]], [4, shape[1]]]))
    out = out.persist(wait=True)
    g = a.numpy()
    since = time.time()
    ht.negative(a, out=out)
    out.persist_(wait=True)
    moved = received_bytes(client, since)
    assert out.distribution == Distribution(0, (5, 0, 4), comm)
    assert moved == _layout.plan_relayout(shape, a.distribution, out.distribution).moved * 8
    np.testing.assert_array_equal(out.numpy(), -g)
