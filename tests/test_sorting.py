"""Sorting and set operations against numpy: planning, every split, 1-5 ranks, skewed and empty ranks.

The values of many results are fetched in one round trip (``values_of``).
"""

from __future__ import annotations

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from conftest import received_bytes, skewed, values_of
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_profiles import profiled

import dndask as ht
from dndask._sorting import _plan

RANKS = (1, 2, 3, 4, 5)


def descending_order(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """numpy's reference of dndask's descending order: largest first, ties by index."""
    n = x.shape[axis]
    return np.flip(n - 1 - np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)


def cases_1d() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    nan = rng.standard_normal(23)
    nan[[0, 5, 6, 22]] = np.nan
    return {
        "duplicates": rng.integers(0, 4, 29),
        "all-equal": np.full(19, 2.5),
        "nan": nan,
        "sorted": np.arange(17, dtype=np.float32),
        "reversed": np.arange(17)[::-1].copy(),
        "floats": rng.standard_normal(31),
        "bool": rng.integers(0, 2, 13).astype(bool),
        "one": np.array([4]),
        "empty": np.array([], dtype=np.float64),
    }


# ----------------------------------------------------------------- planning (pure)
def test_sample_positions_are_regular_and_inside():
    assert _plan.sample_positions(100, 1).tolist() == []
    pos = _plan.sample_positions(1000, 4)
    assert pos.size == 4 * 3 and np.all(np.diff(pos) > 0) and pos[0] > 0 and pos[-1] < 1000
    assert _plan.sample_positions(5, 4).tolist() == [0, 1, 2, 3, 4]


def test_splitters_follow_the_weights_of_a_skewed_distribution():
    # rank 0 sends 4 samples of 4000 values, rank 1 4 samples of 4 values
    values = np.array([1.0, 2.0, 3.0, 4.0, 10.0, 11.0, 12.0, 13.0])
    weights = np.array([1000.0] * 4 + [1.0] * 4)
    v, k = _plan.choose_splitters(values, np.arange(8), weights, 2)
    assert v.tolist() == [3.0] and k.tolist() == [2]  # inside the heavy rank's values
    v, _ = _plan.choose_splitters(values, np.arange(8), np.ones(8), 2)
    assert v.tolist() == [4.0]  # unweighted: the middle of the samples


def test_cut_positions_split_ties_by_key():
    run = np.array([1, 2, 2, 2, 2, 3])
    # implicit keys 10..15: the tie block is keys 11..14
    assert _plan.cut_positions(run, None, 10, np.array([2]), np.array([13])).tolist() == [0, 3, 6]
    assert _plan.cut_positions(run, None, 10, np.array([2]), np.array([0])).tolist() == [0, 1, 6]
    assert _plan.cut_positions(run, None, 10, np.array([2]), np.array([99])).tolist() == [0, 5, 6]
    keys = np.array([0, 3, 8, 9, 20, 1])
    got = _plan.cut_positions(run, keys, 0, np.array([2, 2]), np.array([8, 10]))
    assert got.tolist() == [0, 2, 4, 6]
    nans = np.array([1.0, np.nan, np.nan])
    assert _plan.cut_positions(nans, None, 0, np.array([np.nan]), np.array([2])).tolist() == [
        0,
        2,
        3,
    ]


def test_plan_exchange_maps_blocks_to_ranks():
    cuts = np.array([[0, 1, 3, 3], [0, 0, 2, 5], [0, 0, 0, 0]])
    pieces, counts = _plan.plan_exchange(cuts)
    assert counts == (1, 4, 3)
    assert pieces[2] == [_plan.Piece(1, 2, 5)]
    pieces, counts = _plan.plan_exchange(cuts, descending=True)
    assert counts == (3, 4, 1) and pieces[0] == [_plan.Piece(1, 2, 5)]
    # sort, sample and cut per rank, P² slices, and each destination's own piece + 4 fill steps
    assert _plan.exchange_pieces(4096) == 4096**2 + 3 * 4096 + 4096 * 5
    assert _plan.exchange_pieces(4096, "two-level") < 3 * 4096**1.5


@pytest.mark.parametrize("descending", [False, True])
def test_exchange_moves_are_the_plan_of_every_destination_in_order(descending):
    rng = np.random.default_rng(5)
    for ranks in (1, 2, 3, 5):
        cuts = np.sort(rng.integers(0, 9, (ranks, ranks + 1)), axis=1)
        cuts[:, 0] = 0
        moves, counts = _plan.exchange_moves(cuts, descending)
        # the oracle: destination d takes block d (descending: P - 1 - d) of every source,
        # sources in order (descending: in reverse order)
        rows = [
            (d, r, cuts[r, b], cuts[r, b + 1])
            for d in range(ranks)
            for b in [ranks - 1 - d if descending else d]
            for r in (range(ranks)[::-1] if descending else range(ranks))
            if cuts[r, b + 1] > cuts[r, b]
        ]
        assert moves.tolist() == [list(map(int, row)) for row in rows]
        assert counts == tuple(
            sum(hi - lo for t, _, lo, hi in rows if t == d) for d in range(ranks)
        )


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.complex64])
def test_merged_runs_are_in_value_then_key_order(dtype):
    from dndask._sorting import _tasks

    rng = np.random.default_rng(7)
    for runs in (1, 2, 4, 7):
        pieces = []
        for _ in range(runs):
            n = int(rng.integers(0, 40))
            values = rng.integers(-3, 4, n).astype(dtype)  # many ties across runs
            if np.issubdtype(dtype, np.inexact):
                values[rng.random(n) < 0.2] = np.nan
            keys = rng.permutation(1000)[:n] - 500  # keys of any order, as split 1 gives
            order = np.lexsort((keys, values))  # each run sorted by (value, key)
            pieces.append(_tasks.records(values[order], keys[order]))
        out = np.concatenate(pieces)
        expected = out[np.lexsort((out[_tasks.RECORD_KEY], out[_tasks.RECORD_VALUE]))]
        _tasks.merge_runs(out)
        np.testing.assert_array_equal(out[_tasks.RECORD_KEY], expected[_tasks.RECORD_KEY])
        plain = np.concatenate([np.sort(p[_tasks.RECORD_VALUE]) for p in pieces])
        _tasks.merge_runs(plain)
        np.testing.assert_array_equal(plain, np.sort(plain))


def test_fill_steps_start_local_go_round_the_ring_and_balance():
    assert _plan.fill_steps([0, 1, 2, 3, 4, 5], [1, 2, 2, 2, 2, 2], 2, 6, steps=2) == [
        [2],
        [3, 4],
        [5, 0, 1],
    ]
    assert _plan.fill_steps([0, 1, 2, 3], [5, 5, 5, 5], 0, 4) == [[0], [1], [2], [3]]
    # empty inputs are left out; a destination with nothing local starts remote
    assert _plan.fill_steps([0, 1, 1], [3, 0, 4], 2, 3) == [[0], [2]]
    assert _plan.fill_steps([], [], 0, 1) == []
    steps = _plan.fill_steps(list(range(64)), [1] * 64, 10, 64)
    assert steps[0] == [10] and len(steps) == 1 + _plan.FILL_STEPS
    assert sorted(i for step in steps for i in step) == list(range(64))
    assert [len(step) for step in steps[1:]] == [16, 16, 15, 16]


def _one_hop_result(runs, plans, d):
    return np.concatenate([runs[p.src][p.start : p.stop] for p in plans[d]] + [runs[0][:0]])


def _two_hop_result(runs, plans, d, t=None):
    """Destination ``d``'s rows through :func:`_plan.plan_two_level`, with the task functions."""
    from dndask._sorting import _tasks

    t = _plan.plan_two_level(plans, len(runs)) if t is None else t
    bundles = [_tasks.join([runs[src]], [(0, lo, hi) for lo, hi in r]) for src, r in t.bundles]
    collects = [_tasks.collect([bundles[i] for i in keys]) for _, keys in t.collects]
    forwards = [_tasks.views(collects[c], parts) for _, c, parts in t.forwards]
    count = sum(p.stop - p.start for p in plans[d])
    inputs = t.inputs[d]
    return _tasks.fill(
        None,
        count,
        runs[0].dtype,
        [forwards[f] for f, _ in inputs],
        [segs for _, segs in inputs],
        (False, False),
    )


@pytest.mark.parametrize("ranks", [1, 2, 3, 4, 5, 9, 10, 17])
def test_two_level_plan_delivers_the_same_rows_as_one_hop(ranks):
    rng = np.random.default_rng(ranks)
    sizes = rng.integers(0, 12, ranks)
    sizes[rng.integers(0, ranks)] = 0  # an empty rank
    runs = [rng.integers(0, 1000, s) for s in sizes]
    cuts = np.array([np.sort(rng.integers(0, s + 1, ranks + 1)) for s in sizes])
    cuts[:, 0], cuts[:, -1] = 0, sizes
    for descending in (False, True):
        plans, counts = _plan.plan_exchange(cuts, descending)
        from_cuts, cut_counts = _plan.plan_two_level_cuts(cuts, descending)
        assert cut_counts == counts
        generic = _plan.plan_two_level(plans, ranks)
        assert from_cuts.bundles == generic.bundles and from_cuts.collects == generic.collects
        for d in range(ranks):
            expected = _one_hop_result(runs, plans, d)
            np.testing.assert_array_equal(_two_hop_result(runs, plans, d), expected)
            np.testing.assert_array_equal(_two_hop_result(runs, plans, d, from_cuts), expected)
    # a bucket exchange: a destination's pieces come from one source several times
    ordered = _plan.plan_ordered_exchange(np.stack([[s // 2, s - s // 2] for s in sizes]), counts)
    for d in range(ranks):
        np.testing.assert_array_equal(
            _two_hop_result(runs, ordered, d), _one_hop_result(runs, ordered, d)
        )
    t = _plan.plan_two_level(plans, ranks)
    g = _plan.group_size(ranks)
    for src, _ in t.bundles:  # every bundle goes to a rank of its source's group
        assert any(src // g == rank // g for rank, keys in t.collects)
    for rank, keys in t.collects:
        assert all(t.bundles[k][0] // g == rank // g for k in keys)


def test_plan_ordered_exchange_and_buckets():
    sizes = np.array([[2, 0, 1], [0, 3, 1]])
    plans = _plan.plan_ordered_exchange(sizes, (3, 0, 4))
    flat = [(p.src, p.start, p.stop) for d in plans for p in d]
    assert flat == [(0, 0, 2), (1, 0, 1), (1, 1, 3), (0, 2, 3), (1, 3, 4)]
    assert plans[1] == []
    assert _plan.bucket_of(np.array([0, 1, 2, 3, 4]), np.array([1, 3])).tolist() == [0, 1, 2, 3, 4]
    assert _plan.bucket_of(np.array([5]), np.array([])).tolist() == [0]


def test_plan_unique_joins_groups_across_ranks_and_empty_ranks():
    # values: rank0 [1, 2], rank1 [] , rank2 [2, 2], rank3 [2, 3]
    summaries = [(2, 1, 2, 1, 0), (0, None, None, 0, 0), (1, 2, 2, 2, 5), (2, 2, 3, 1, 9)]
    plan = _plan.plan_unique(summaries)
    assert plan.drop == (False, False, True, True)
    assert plan.extra_counts[0] == 3 and plan.extra_index[0] == 5
    assert plan.counts == (2, 0, 0, 1) and plan.offsets == (0, 2, 2, 2)
    nan = float("nan")
    assert _plan.plan_unique([(1, nan, nan, 2, 0), (1, nan, nan, 1, 3)]).drop == (False, True)


# ------------------------------------------------------------------ sort, argsort (1-D)
@pytest.mark.parametrize("method", [None, "tasks"])  # None: shared memory on this cluster
@pytest.mark.parametrize("n", RANKS)
def test_sort_and_argsort_1d_match_numpy(comm_of, n, method):
    comm = comm_of(n)
    results, expected = [], []
    for i, (name, data) in enumerate(cases_1d().items()):
        a = ht.array(data, split=0, comm=comm)
        a = skewed(a) if i % 2 else a  # every other case starts with empty and skewed ranks
        before = a.to_dask().name
        asc, didx = ht.sort(a, method=method), ht.argsort(a, descending=True, method=method)
        for r in (asc, didx):
            assert r.split == 0 and r.shape == data.shape and r.comm == comm, name
            counts = r.counts_displs()[0]
            assert sum(counts) == data.size
            assert r.balanced == (counts == tuple(_balanced(data.size, n))), name
        assert a.to_dask().name == before
        results += [asc, didx, a]
        expected += [np.sort(data), descending_order(data), data]
    for got, exp in zip(values_of(results), expected, strict=True):
        np.testing.assert_array_equal(got, exp)
        assert got.dtype == exp.dtype


def test_argsort_stable_balanced_and_descending_values(comm_of):
    comm = comm_of(4)
    data = cases_1d()["duplicates"]
    a = skewed(ht.array(data, split=0, comm=comm))
    idx, bal = ht.argsort(a), ht.sort(a, descending=True, balanced=True)
    assert bal.balanced and bal.lshape_map[:, 0].tolist() == _balanced(data.size, 4)
    got = values_of([idx, bal])
    np.testing.assert_array_equal(got[0], np.argsort(data, kind="stable"))
    np.testing.assert_array_equal(got[1], np.sort(data)[::-1])


def _balanced(size: int, n: int) -> list[int]:
    return [size // n + (r < size % n) for r in range(n)]


def test_stable_sort_keeps_signed_zeros_in_numpy_order(comm_of):
    data = np.array([0.0, -0.0, 1.0, -0.0, 0.0, -1.0, 0.0] * 3)
    a = ht.array(data, split=0, comm=comm_of(4))
    got = ht.sort(a, kind="stable").numpy()
    assert np.array_equal(np.signbit(got), np.signbit(np.sort(data, kind="stable")))


def test_result_counts_follow_the_data_and_balanced_reports_it(comm_of):
    comm = comm_of(4)
    data = np.concatenate([np.zeros(30), np.arange(10.0)])  # already sorted, skewed values
    a = ht.array(data, split=0, comm=comm)
    s = ht.sort(a)
    counts = s.counts_displs()[0]
    assert s.balanced == (counts == (10, 10, 10, 10))
    assert s.lshape_map[:, 0].tolist() == list(counts)
    np.testing.assert_array_equal(s.numpy(), data)


def test_sort_moves_about_the_array_once(client, comm_of):
    import time

    comm = comm_of(4)
    data = np.random.default_rng(3).standard_normal(200_000)
    a = ht.array(data, split=0, comm=comm).persist(wait=True)
    since = time.time()
    s = ht.sort(a).persist(wait=True)
    moved = received_bytes(client, since)
    assert moved <= 1.1 * data.nbytes
    assert moved >= 0.5 * data.nbytes  # the exchange did happen
    np.testing.assert_array_equal(s.numpy(), np.sort(data))


@pytest.mark.parametrize("n", RANKS)
def test_two_level_exchange_matches_numpy_with_empty_ranks(comm_of, monkeypatch, n):
    comm = comm_of(n)
    results, expected = [], []
    for i, data in enumerate(cases_1d().values()):
        a = ht.array(data, split=0, comm=comm)
        a = skewed(a) if i % 2 else a
        results += [
            ht.sort(a, method="two-level"),
            ht.sort(a, descending=True, kind="stable", method="two-level"),
            ht.argsort(a, method="two-level"),
            ht.argsort(a, descending=True, method="two-level"),
        ]
        expected += [
            np.sort(data),
            np.sort(data, kind="stable")[::-1],
            np.argsort(data, kind="stable"),
            descending_order(data),
        ]
    # Without shm or MPI, None picks the two-level exchange above the p2p threshold, as
    # resplit_ picks p2p
    data = cases_1d()["floats"]
    a = skewed(ht.array(data, split=0, comm=comm))
    monkeypatch.setenv("DNDASK_RELAYOUT", "tasks")
    monkeypatch.setenv("DNDASK_P2P_THRESHOLD", "0")
    auto = ht.sort(a)
    monkeypatch.setenv("DNDASK_P2P_THRESHOLD", "4096")
    tasks = ht.sort(a)
    layers = [set(x.to_dask().__dask_graph__().layers[x.to_dask().name]) for x in (auto, tasks)]
    if n > 1:
        assert any("-bundle" in str(k) for k in layers[0])
        assert not any("-bundle" in str(k) for k in layers[1])
    results += [auto, tasks]
    expected += [np.sort(data)] * 2
    for got, exp in zip(values_of(results), expected, strict=True):
        np.testing.assert_array_equal(got, exp)


@pytest.mark.parametrize("n", [2, 5])
def test_sort_exchange_goes_through_shared_memory_on_one_host(comm_of, n):
    comm = comm_of(n)
    data = np.random.default_rng(n).integers(-50, 50, 997)
    a = skewed(ht.array(data, split=0, comm=comm))
    results = [ht.sort(a), ht.sort(a, descending=True, method="shm"), ht.argsort(a)]
    for r in results:
        keys = {str(k) for k in dict(r.to_dask().__dask_graph__())}
        assert sum("relayout-post-" in k for k in keys) >= 1  # the transport's posts
        assert sum("relayout-barrier-" in k for k in keys) == 1
        assert not any("-piece" in k for k in keys)  # no slice task per pair of ranks
    expected = [np.sort(data), np.sort(data)[::-1], np.argsort(data, kind="stable")]
    for got, exp in zip(values_of(results), expected, strict=True):
        np.testing.assert_array_equal(got, exp)
    with pytest.raises(ValueError, match="`method` 'mpi' needs"):
        ht.sort(a, method="mpi")


@pytest.mark.parametrize("descending", [False, True])
def test_a_rank_that_keeps_its_whole_run_is_sorted_in_a_copy(comm_of, descending):
    from dndask._sorting import _exchange

    # every rank's run falls in the block of its own rank (descending: rank d takes block
    # P - 1 - d), so each keeps its whole run and gets nothing: its chunk of the exchange is
    # the run itself, which must stay as it is
    data = np.array([2, 0, 1, 5, 3, 4, 8, 6, 7])
    runs = ht.array(data, split=0, comm=comm_of(3)).persist(wait=True)
    runs_before = runs.numpy().copy()
    blocks = [[0, 3, 3, 3], [0, 0, 3, 3], [0, 0, 0, 3]]
    cuts = np.array(blocks[::-1] if descending else blocks)
    out = _exchange.carried_exchange(
        runs, cuts, descending=descending, prefix="sort-test", method="shm"
    )
    tasks = dict(out.to_dask().__dask_graph__()).values()
    assert sum(type(v).__name__ == "Alias" for v in tasks) == 3
    out.persist(wait=True)
    mine = [np.sort(chunk) for chunk in np.split(data, 3)]  # each rank sorts what it kept
    expected = np.concatenate([m[::-1] for m in mine] if descending else mine)
    np.testing.assert_array_equal(out.numpy(), expected)
    np.testing.assert_array_equal(runs.numpy(), runs_before)


def test_sort_method_is_checked(comm_of):
    a = ht.array(np.arange(5.0), split=0, comm=comm_of(2))
    with pytest.raises(
        ValueError, match="`method` must be None, 'tasks', 'two-level', 'shm' or 'mpi', got 'p2p'"
    ):
        ht.sort(a, method="p2p")
    with pytest.raises(ValueError, match="`method` must be None"):
        ht.argsort(a, method="x")


def test_two_level_sort_moves_the_array_at_most_twice(client, comm_of):
    import time

    comm = comm_of(5)
    data = np.random.default_rng(4).standard_normal(200_000)
    a = ht.array(data, split=0, comm=comm).persist(wait=True)
    since = time.time()
    s = ht.sort(a, method="two-level").persist(wait=True)
    moved = received_bytes(client, since)
    assert moved <= 2.0 * data.nbytes
    assert moved >= 0.5 * data.nbytes
    np.testing.assert_array_equal(s.numpy(), np.sort(data))


# -------------------------------------------------------------------- sort (N-D)
@pytest.mark.parametrize("n", RANKS)
def test_sort_and_argsort_nd_every_split_and_axis(comm_of, n):
    comm = comm_of(n)
    rng = np.random.default_rng(n)
    data = rng.integers(0, 3, (5, 4)).astype(np.float64)
    data[1, 2] = np.nan
    results, expected = [], []
    for split in (None, 0, 1):
        a = ht.array(data, split=split, comm=comm)
        for src in (a, skewed(a)) if split == n % 2 else (a,):
            for axis in (None, 0, 1, -1):
                results += [ht.sort(src, axis=axis), ht.argsort(src, axis=axis)]
                expected += [np.sort(data, axis=axis), np.argsort(data, axis=axis, kind="stable")]
                if axis is not None:
                    results.append(ht.sort(src, axis=axis, descending=True))
                    expected.append(np.take_along_axis(data, descending_order(data, axis), axis))
                    res = results[-3]
                    assert res.split == split
    for got, exp in zip(values_of(results), expected, strict=True):
        np.testing.assert_array_equal(got, exp)


def test_sort_3d_along_split_sorts_every_lane(comm_of):
    comm = comm_of(3)
    data = np.random.default_rng(0).integers(0, 5, (4, 7, 3))
    got, exp = [], []
    for split in (0, 1, 2):
        a = ht.array(data, split=split, comm=comm)
        for axis in range(3):
            got.append(ht.argsort(a, axis=axis))
            exp.append(np.argsort(data, axis=axis, kind="stable"))
    for g, e in zip(values_of(got), exp, strict=True):
        np.testing.assert_array_equal(g, e)


def test_zero_d_and_zero_size(comm_of):
    comm = comm_of(3)
    s = ht.full((), 3.0, comm=comm)
    assert ht.sort(s, axis=None).numpy().tolist() == [3.0]
    z = ht.zeros((0, 4), split=0, comm=comm)
    for axis in (None, 0, 1):
        r = ht.sort(z, axis=axis)
        assert r.shape == np.sort(np.zeros((0, 4)), axis=axis).shape
    z = ht.zeros((3, 0), split=1, comm=comm)
    assert ht.argsort(z, axis=1).shape == (3, 0)


# ---------------------------------------------------------------------- unique
@pytest.mark.parametrize("n", RANKS)
def test_unique_matches_numpy(comm_of, n):
    comm = comm_of(n)
    got, exp = [], []
    cases = {
        k: v for k, v in cases_1d().items() if k in ("duplicates", "all-equal", "nan", "empty")
    }
    cases["2-d"] = np.random.default_rng(1).integers(0, 4, (4, 5))
    for i, (name, data) in enumerate(cases.items()):
        for split in (None, *range(data.ndim)):
            a = ht.array(data, split=split, comm=comm)
            src = skewed(a) if (i + (split or 0)) % 2 else a
            res = ht.unique(src, return_index=True, return_inverse=True, return_counts=True)
            ref = np.unique(data, return_index=True, return_inverse=True, return_counts=True)
            assert res[2].shape == data.shape and res[2].split == src.split, name
            got += list(res)
            exp += list(ref)
    for g, e in zip(values_of(got), exp, strict=True):
        np.testing.assert_array_equal(g, e)


def test_unique_array_api_and_axis(comm_of):
    comm = comm_of(3)
    data = np.array([[1, 0], [2, 2], [1, 0], [0, 5]])
    a = ht.array(data, split=0, comm=comm)
    xp = a.__array_namespace__()
    everything = xp.unique_all(a)
    ref = np.unique_all(data)
    for field in ref._fields:
        np.testing.assert_array_equal(getattr(everything, field).numpy(), getattr(ref, field))
    np.testing.assert_array_equal(xp.unique_counts(a).counts.numpy(), np.unique_counts(data).counts)
    np.testing.assert_array_equal(
        xp.unique_inverse(a).inverse_indices.numpy(), np.unique_inverse(data).inverse_indices
    )
    # numpy 2.4's unique_values is unordered (the standard leaves the order open); dndask's is sorted
    np.testing.assert_array_equal(xp.unique_values(a).numpy(), np.unique(data))
    for split in (0, 1):
        b = ht.array(data, split=split, comm=comm)
        for axis in (0, 1):
            res = ht.unique(b, return_inverse=True, return_counts=True, axis=axis)
            ref = np.unique(data, return_inverse=True, return_counts=True, axis=axis)
            for g, e in zip(res, ref, strict=True):
                np.testing.assert_array_equal(g.numpy(), e)
    nan = np.array([np.nan, 1.0, np.nan])
    b = ht.array(nan, split=0, comm=comm)
    np.testing.assert_array_equal(
        ht.unique(b, equal_nan=False).numpy(), np.unique(nan, equal_nan=False)
    )
    s = ht.unique(ht.full((), 4, comm=comm), return_inverse=True)
    assert s[0].numpy().tolist() == [4] and s[1].shape == ()


# ------------------------------------------------------------------------ topk
@pytest.mark.parametrize("n", RANKS)
def test_topk_matches_a_sort(comm_of, n):
    comm = comm_of(n)
    data = np.random.default_rng(n).integers(0, 4, (6, 5)).astype(np.float32)
    data[2, 3] = np.nan
    got, exp = [], []
    for split in (None, 0, 1):
        a = ht.array(data, split=split, comm=comm)
        for src in (a, skewed(a)):
            for dim in (0, 1):
                for k in (0, 2, data.shape[dim]):
                    for largest in (True, False):
                        v, i = ht.topk(src, k, dim=dim, largest=largest)
                        assert v.split == (None if dim == split and n > 1 else split)
                        order = (
                            descending_order(data, dim)
                            if largest
                            else np.argsort(data, axis=dim, kind="stable")
                        )
                        order = np.take(order, np.arange(k), axis=dim)
                        got += [v, i]
                        exp += [np.take_along_axis(data, order, dim), order]
    for g, e in zip(values_of(got), exp, strict=True):
        np.testing.assert_array_equal(g, e)


def test_topk_out(comm_of):
    a = ht.array(np.array([4, 9, 1, 7]), split=0, comm=comm_of(2))
    out = (ht.zeros((2,), dtype=ht.int64, comm=a.comm), ht.zeros((2,), dtype=ht.int64, comm=a.comm))
    v, i = ht.topk(a, 2, out=out)
    assert v is out[0] and v.numpy().tolist() == [9, 7] and i.numpy().tolist() == [1, 3]


# ---------------------------------------------------------------- searchsorted
@pytest.mark.parametrize("n", RANKS)
def test_searchsorted_against_a_split_haystack(comm_of, n):
    comm = comm_of(n)
    rng = np.random.default_rng(n)
    hay = np.sort(np.concatenate([rng.integers(0, 9, 20), [3, 3, 3]]).astype(np.float64))
    hay_nan = np.append(hay, np.nan)
    needles = np.array([[-1.0, 3.0, 3.5], [8.0, 9.0, np.nan]])
    got, exp = [], []
    for h_data in (hay, hay_nan, np.array([], dtype=np.float64)):
        for split in (None, 0):
            h = ht.array(h_data, split=split, comm=comm)
            for hs in (h, skewed(h)):
                for side in ("left", "right"):
                    ref = np.searchsorted(h_data, needles, side=side)
                    got.append(ht.searchsorted(hs, needles, side=side))
                    exp.append(ref)
                    for vs in (None, 0, 1):
                        v = ht.array(needles, split=vs, comm=comm)
                        r = ht.searchsorted(hs, v, side=side)
                        assert r.split == vs
                        got.append(r)
                        exp.append(ref)
            got.append(ht.searchsorted(h, 3.0))
            exp.append(np.asarray(np.searchsorted(h_data, 3.0)))
    shuffled = rng.permutation(hay)
    s = ht.array(shuffled, split=0, comm=comm)
    got.append(ht.searchsorted(s, needles, sorter=ht.argsort(s)))
    exp.append(np.searchsorted(shuffled, needles, sorter=np.argsort(shuffled, kind="stable")))
    for g, e in zip(values_of(got), exp, strict=True):
        np.testing.assert_array_equal(g, e)


# ------------------------------------------------- nonzero, where, isin, take
@pytest.mark.parametrize("n", RANKS)
def test_nonzero_where_isin_take(comm_of, n):
    comm = comm_of(n)
    rng = np.random.default_rng(10 + n)
    data = rng.integers(0, 3, (5, 4))
    got, exp = [], []
    for j, d in enumerate((data, np.zeros_like(data), rng.integers(0, 3, 9))):
        for split in (None, *range(d.ndim)):
            a = ht.array(d, split=split, comm=comm)
            for src in (skewed(a) if (j + (split or 0)) % 2 else a,):
                nz = ht.nonzero(src)
                assert len(nz) == d.ndim
                got += list(nz) + list(ht.where(src > 1))
                exp += list(np.nonzero(d)) + list(np.where(d > 1))
                got += [ht.isin(src, [1, 7]), ht.isin(src, ht.array([2, 5, 2], split=0, comm=comm))]
                exp += [np.isin(d, [1, 7]), np.isin(d, [2, 5, 2])]
                got.append(ht.isin(src, [1], invert=True))
                exp.append(np.isin(d, [1], invert=True))
                got += [ht.take(src, [0, -1, 3]), ht.take(src, np.array([[1, 0]]), axis=0)]
                exp += [np.take(d, [0, -1, 3]), np.take(d, np.array([[1, 0]]), axis=0)]
                got.append(ht.take(src, [7, -9], mode="clip"))
                exp.append(np.take(d, [7, -9], mode="clip"))
                for axis in range(d.ndim):
                    idx = ht.argsort(src, axis=axis)
                    got.append(ht.take_along_axis(src, idx, axis))
                    exp.append(np.sort(d, axis=axis))
                got.append(ht.take_along_axis(src, np.zeros(1, dtype=int), None))
                exp.append(np.take_along_axis(d, np.zeros(1, dtype=int), None))
    for g, e in zip(values_of(got), exp, strict=True):
        np.testing.assert_array_equal(g, e)


# ---------------------------------------------------------- partition
def _check_partition(values: np.ndarray, data: np.ndarray, kth, axis) -> None:
    srt = np.sort(data, axis=axis)
    v = np.moveaxis(values, axis, -1)
    s = np.moveaxis(srt, axis, -1)
    for k in np.atleast_1d(kth):
        np.testing.assert_array_equal(v[..., k], s[..., k])
        assert np.all(v[..., :k] <= v[..., k : k + 1]) and np.all(v[..., k:] >= v[..., k : k + 1])
    np.testing.assert_array_equal(np.sort(v, axis=-1), s)


@pytest.mark.parametrize("n", RANKS)
def test_partition_and_argpartition(comm_of, n):
    comm = comm_of(n)
    rng = np.random.default_rng(20 + n)
    one = rng.integers(0, 6, 25)
    two = rng.standard_normal((6, 5))
    arrays, checks = [], []
    for data, kths in ((one, [0, -1, [3, 3, 20]]), (two, [1, [0, 4]])):
        for split in (None, *range(data.ndim)):
            a = ht.array(data, split=split, comm=comm)
            src = skewed(a) if (split or 0) % 2 == n % 2 else a
            for kth in kths:
                for axis in range(data.ndim):
                    arrays += [ht.partition(src, kth, axis=axis), ht.argpartition(src, kth, axis)]
                    local = split != axis or n == 1
                    checks.append((data, np.asarray(kth) % data.shape[axis], axis, local, kth))
    values = values_of(arrays)
    for (data, k, axis, local, kth), pv, iv in zip(checks, values[::2], values[1::2], strict=True):
        _check_partition(pv, data, k, axis)
        _check_partition(np.take_along_axis(data, iv, axis), data, k, axis)
        if local:  # numpy's own partition ran on the whole lanes
            np.testing.assert_array_equal(pv, np.partition(data, kth, axis=axis))
    nan = np.array([3.0, np.nan, 1.0, 2.0])
    p = ht.partition(ht.array(nan, split=0, comm=comm), 1).numpy()
    assert p[1] == 2.0 and np.isnan(p[-1])


# ------------------------------------------------------- numpy, array API, methods
def test_numpy_array_api_and_methods_reach_the_distributed_functions(comm_of):
    comm = comm_of(3)
    data = np.array([5, 3, 3, 9, 0, 1, 3])
    a = ht.array(data, split=0, comm=comm)
    xp = a.__array_namespace__()
    pairs = [
        (np.sort(a), np.sort(data)),
        (np.argsort(a, kind="stable"), np.argsort(data, kind="stable")),
        (np.unique(a, return_counts=True)[1], np.unique(data, return_counts=True)[1]),
        (np.nonzero(a)[0], np.nonzero(data)[0]),
        (np.where(a > 3)[0], np.where(data > 3)[0]),
        (np.isin(a, [3]), np.isin(data, [3])),
        (np.take(a, [1, 2]), np.take(data, [1, 2])),
        (np.searchsorted(np.sort(a), [3, 4]), np.searchsorted(np.sort(data), [3, 4])),
        (np.take_along_axis(a, np.argsort(a), 0), np.sort(data)),
        (xp.sort(a, descending=True), np.sort(data)[::-1]),
        (xp.argsort(a), np.argsort(data, kind="stable")),
        (xp.take(a, ht.array([0, 3], comm=comm)), data[[0, 3]]),
        (xp.searchsorted(xp.sort(a), ht.array([3], comm=comm)), np.array([2])),
        (xp.nonzero(a)[0], np.nonzero(data)[0]),
        (a.argsort(), np.argsort(data, kind="stable")),
        (a.nonzero()[0], np.nonzero(data)[0]),
    ]
    for (_, e), v in zip(pairs, values_of([g for g, _ in pairs]), strict=True):
        np.testing.assert_array_equal(v, e)
    assert isinstance(np.partition(a, 2), ht.DNDarray)
    b = a.copy()
    assert b.sort() is None
    np.testing.assert_array_equal(b.numpy(), np.sort(data))
    np.testing.assert_array_equal(a.numpy(), data)  # the copy is untouched


# --------------------------------------------------------------- property
@profiled(12)
@given(data=st.data())
def test_sort_property(comm_of, data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6))
    dtype = data.draw(st.sampled_from([np.int32, np.float64, np.bool_]))
    elements = st.floats(-3, 3) | st.just(np.nan) if dtype is np.float64 else None
    values = data.draw(hnp.arrays(dtype, shape, elements=elements))
    n = data.draw(st.integers(1, 5))
    split = data.draw(st.sampled_from([None, *range(len(shape))]))
    axis = data.draw(st.sampled_from([None, *range(len(shape))]))
    a = ht.array(values, split=split, comm=comm_of(n))
    if data.draw(st.booleans()):
        a = skewed(a)
    got, idx = values_of([ht.sort(a, axis=axis), ht.argsort(a, axis=axis)])
    np.testing.assert_array_equal(got, np.sort(values, axis=axis))
    np.testing.assert_array_equal(idx, np.argsort(values, axis=axis, kind="stable"))
