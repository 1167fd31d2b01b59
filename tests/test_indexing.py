"""Indexing: ``a[key]`` and ``a[key] = value`` against numpy, on every split and rank count.

The first half tests the pure planning of :mod:`dndask._indexing` without a
cluster: plans are executed on numpy chunks and compared with numpy over many
keys, splits and distributions (empty ranks included). The second half runs
the same keys on the cluster and checks values, splits, per-rank counts, what
moves between workers, and the errors.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch
from conftest import LayoutBatch, layouts, received_bytes, splits_of

import dndask as ht
from dndask import _layout
from dndask._indexing._keys import Key, covers, local_key, normalize_key, the_mask
from dndask._indexing._plan import GetPlan, plan_fetch, plan_getitem, positions_in, result_layout
from dndask._indexing._setplan import (
    ALL,
    Region,
    check_value_shape,
    mask_positions,
    plan_setitem,
    value_key,
)
from dndask._indexing._tasks import assign, run_fetch

SHAPE = (7, 4, 3)
G = np.arange(np.prod(SHAPE), dtype=np.float64).reshape(SHAPE)
EVEN = G % 2 == 0

# Basic keys: ints, slices of every step, Ellipsis, None.
BASIC_KEYS = [
    0,
    -1,
    6,
    (slice(None), 1),
    (slice(None), -4, 2),
    (slice(1, 6, 2),),
    (slice(None, None, -1),),
    (slice(6, 0, -3), None, 2),
    (slice(-2, None), slice(None, None, -2)),
    (slice(5, 1, -1), slice(1, 3), slice(None, None, 2)),
    (Ellipsis, 1),
    (Ellipsis, slice(None, None, -1)),
    (None, Ellipsis, None),
    (2, Ellipsis, None, 0),
    (slice(2, 2),),
    (slice(10, 20),),
    (None, slice(None), None, 3),
    (),
    Ellipsis,
    (3, 2, 1),
]

# Integer arrays (numpy, lists, torch) and 1-D masks next to other indices.
ADVANCED_KEYS = [
    ([0, 3, 6, 3],),
    (np.array([[1, 2], [5, 0]]),),
    (slice(None), [0, 3], [1, 2]),
    ([0, 6], slice(None), [2, 0]),
    (1, [0, 2]),
    (slice(None), 0, [1, 2]),
    ([6, 5, 4], 1),
    ([],),
    (torch.tensor([4, -1, 0]),),
    (slice(None, None, 2), [[0], [3]], [1, 2]),
    (Ellipsis, [2, 2, 0]),
    (None, [1, 1], None, slice(None), 0),
    (np.array([False, True, False, False, False, True, False]), [1, 2]),
    (slice(1, None), np.array([True, False, True, True]), 0),
]

# One boolean mask as the only advanced index.
MASK_KEYS = [
    EVEN,
    (np.array([True, False, True, True, False, False, True]),),
    (slice(None), np.array([True, False, True, True])),
    (Ellipsis, np.array([False, True, True])),
    ((G % 3 == 0)[:, :, 0],),
    (slice(None), (G % 3 == 0)[0]),
    (slice(None, None, -1), (G % 5 == 0)[0], None),
    (None, np.zeros((7, 4), dtype=bool)),
    (torch.from_numpy(G % 4 == 1),),
]

KEYS = BASIC_KEYS + ADVANCED_KEYS + MASK_KEYS


def random_keys(rng: np.random.Generator, shape: tuple[int, ...], n: int) -> list:
    """Keys numpy accepts, mixing every kind of entry."""
    keys = []
    while len(keys) < n:
        entries, axis, ellipsis = [], 0, False
        while axis < len(shape) and rng.random() < 0.85:
            size = shape[axis]
            kind = rng.choice(["int", "slice", "slice", "new", "array", "mask", "ellipsis"])
            if kind == "int":
                entries.append(int(rng.integers(-size, size)))
            elif kind == "slice":
                bounds = [None, *range(-size - 1, size + 2)]
                start, stop = (bounds[int(rng.integers(len(bounds)))] for _ in range(2))
                entries.append(slice(start, stop, int(rng.choice([-3, -2, -1, 1, 2, 3]))))
            elif kind == "new":
                entries.append(None)
                continue
            elif kind == "array":
                entries.append(rng.integers(-size, size, size=int(rng.integers(1, 3))))
            elif kind == "mask":
                entries.append(rng.random(size) < 0.5)
            elif not ellipsis:
                entries.append(Ellipsis)
                ellipsis = True
                axis = len(shape) - sum(1 for e in entries if e is not None and e is not Ellipsis)
                continue
            axis += 1
        key = tuple(entries)
        try:
            np.empty(shape)[key]
        except IndexError:  # arrays that do not broadcast together
            continue
        keys.append(key)
    return keys


RANDOM_KEYS = random_keys(np.random.default_rng(0), SHAPE, 150)


def distributions(n: int, size: int) -> list[tuple[int, ...]]:
    """Balanced counts, and an unbalanced distribution with empty ranks (if ``size > 1``)."""
    out = [_layout.balanced_counts(n, size)]
    if size > 1:
        skewed = [0] * size
        skewed[1:] = reversed(_layout.balanced_counts(n, size - 1))
        out.append(tuple(skewed))
    return out


# ------------------------------------------------------------ pure planning
def chunks_of(g: np.ndarray, split, counts) -> list[np.ndarray]:
    if split is None:
        return [g]
    return np.split(g, np.cumsum(counts)[:-1], axis=split)


def mask_setup(norm: Key, split, counts):
    """What the driver computes for a mask key: each rank's mask argument and the counts table."""
    _, it = the_mask(norm)
    mask = np.asarray(it.value)
    if not covers(it, split):
        return [mask] * max(len(counts), 1), np.array([mask.sum()])
    axis = split - it.axis
    pieces = np.split(mask, np.cumsum(counts)[:-1], axis=axis)
    table = np.stack([p.sum(axis=tuple(range(axis, mask.ndim))) for p in pieces])
    return pieces, table


def simulate_get(g: np.ndarray, key, split, counts) -> tuple[np.ndarray, GetPlan]:
    """Run the plan of ``g[key]`` on numpy chunks, as the tasks would."""
    norm = normalize_key(key, g.shape)
    chunks = chunks_of(g, split, counts)
    masks, table = None, None
    if norm.mode == "mask":
        masks, table = mask_setup(norm, split, counts)
    plan = plan_getitem(norm, split, counts, table)
    parts = [run_fetch(f, chunks, g.dtype, masks) for f in plan.fetches]
    for part, fetch in zip(parts, plan.fetches, strict=True):
        assert part.shape == fetch.shape
    if plan.split is None:
        assert len(parts) == 1
        return parts[0], plan
    assert [p.shape[plan.split] for p in parts] == list(plan.counts)
    return np.concatenate(parts, axis=plan.split), plan


def simulate_set(g: np.ndarray, key, value: np.ndarray, split, counts) -> np.ndarray:
    """Run the plan of ``g[key] = value`` on numpy chunks, as the tasks would."""
    norm = normalize_key(key, g.shape)
    chunks = [c.copy() for c in chunks_of(g, split, counts)]
    masks, table = [None] * len(chunks), None
    if norm.mode == "mask":
        masks, table = mask_setup(norm, split, counts)
    plan = plan_setitem(norm, split, counts, table)
    check_value_shape(value.shape, plan.shape)
    for r, target in enumerate(plan.targets):
        if target is None:
            continue
        local, region = target
        vkey = value_key(value.shape, plan.shape, region)
        fetched = run_fetch(plan_fetch(vkey, None, ()), [value], value.dtype)
        chunks[r] = assign(chunks[r], local, fetched, masks[r])
    return chunks[0] if split is None else np.concatenate(chunks, axis=split)


def mask_needs_resplit(key, split) -> bool:
    norm = normalize_key(key, SHAPE)
    if norm.mode != "mask":
        return False
    _, it = the_mask(norm)
    return covers(it, split) and split != it.axis


@pytest.mark.parametrize("key", KEYS + RANDOM_KEYS, ids=repr)
def test_result_layout_has_numpys_shape(key):
    norm = normalize_key(key, SHAPE)
    if norm.mode == "mask":
        _, it = the_mask(norm)
        norm = norm._replace(bshape=(int(np.count_nonzero(it.value)),))
    assert result_layout(norm).shape == G[key].shape


@pytest.mark.parametrize("split", splits_of(3))
@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_get_plans_reproduce_numpy(split, size):
    for counts in distributions(SHAPE[split], size) if split is not None else [()]:
        for key in KEYS + RANDOM_KEYS:
            if mask_needs_resplit(key, split):
                continue  # getitem resplits first; covered on the cluster
            got, _ = simulate_get(G, key, split, counts)
            np.testing.assert_array_equal(got, G[key], err_msg=f"{key} {split} {counts}")


@pytest.mark.parametrize("split", splits_of(3))
@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_set_plans_reproduce_numpy(split, size):
    rng = np.random.default_rng(1)
    for counts in distributions(SHAPE[split], size) if split is not None else [()]:
        for key in KEYS + RANDOM_KEYS[:60]:
            shape = G[key].shape
            values = [rng.random(shape), np.array(-1.0)]
            if shape:  # numpy takes no sequence for a single element
                values.append(rng.random((1, *shape[1:])))
            for value in values:
                expected = G.copy()
                expected[key] = value
                got = simulate_set(G, key, value, split, counts)
                np.testing.assert_array_equal(got, expected, err_msg=f"{key} {split} {counts}")


def test_slice_plans_stay_local_and_negative_steps_mirror():
    plan = plan_getitem(normalize_key(slice(1, 6), (7,)), 0, (2, 2, 2, 1))
    assert plan.counts == (1, 2, 2, 0)
    assert [[s for s, _ in f.pieces] for f in plan.fetches] == [[0], [1], [2], []]
    plan = plan_getitem(normalize_key(slice(None, None, -1), (7,)), 0, (2, 2, 2, 1))
    assert plan.counts == (1, 2, 2, 2)
    assert [[s for s, _ in f.pieces] for f in plan.fetches] == [[3], [2], [1], [0]]
    plan = plan_getitem(normalize_key((slice(None), 2), (7, 4)), 0, (0, 7))
    assert plan.split == 0 and plan.counts == (0, 7)


def test_array_plans_fetch_one_piece_per_source_and_reorder():
    plan = plan_getitem(normalize_key([6, 0, 5, 1], (7,)), 0, (2, 2, 2, 1))
    assert plan.split == 0 and plan.counts == (1, 1, 1, 1)
    assert [[s for s, _ in f.pieces] for f in plan.fetches] == [[3], [0], [2], [0]]
    fetch = plan_fetch(normalize_key([6, 0, 5, 1, 6], (7,)), 0, (2, 2, 2, 1))
    assert [s for s, _ in fetch.pieces] == [0, 2, 3]
    assert fetch.order.tolist() == [3, 0, 2, 1, 4]  # pieces hold positions [1, 3], [2], [0, 4]
    mask = np.array([True, False, True, True, False, False, True])
    plan = plan_getitem(normalize_key((mask, 0), (7, 2)), 0, (2, 2, 2, 1))
    assert plan.counts == (1, 2, 0, 1)  # a mask keeps each rank's rows where they are


def test_positions_in_matches_brute_force():
    for start in range(-1, 9):
        for stop in range(-2, 10):
            for step in (-3, -2, -1, 1, 2, 3):
                r = range(*slice(start, stop, step).indices(7))
                for lo in range(8):
                    for hi in range(lo, 9):
                        inside = [i for i, v in enumerate(r) if lo <= v < hi]
                        i0, i1 = positions_in(r, lo, hi)
                        assert list(range(i0, i1)) == inside


def test_mask_positions_follow_c_order():
    rng = np.random.default_rng(2)
    for _ in range(20):
        mask = rng.random((3, 5, 2)) < 0.5
        counts = (2, 0, 3)
        pieces = np.split(mask, np.cumsum(counts)[:-1], axis=1)
        table = np.stack([p.sum(axis=(1, 2)) for p in pieces])
        owner = np.repeat(np.arange(3), counts)[np.nonzero(mask)[1]]
        for r, positions in enumerate(mask_positions(table)):
            assert positions.tolist() == np.flatnonzero(owner == r).tolist()


def test_value_key_cuts_only_the_needed_part():
    rows = Region("rows", 1, 2, 4)
    assert local_key(value_key((5, 6), (5, 6), rows).items) == (
        slice(0, 5, 1),
        slice(2, 4, 1),
    )
    take = Region("take", 0, ndims=2, positions=np.array([5, 0]))
    vkey = value_key((2, 3), (2, 3), take)
    assert [k.tolist() for k in local_key(vkey.items)] == [[1, 0], [2, 0]]
    vkey = value_key((1, 3), (2, 3), take)  # broadcast along the first axis
    assert [k.tolist() for k in local_key(vkey.items)] == [[0, 0], [2, 0]]
    assert local_key(value_key((1, 1, 3), (5, 3), ALL).items) == (
        0,
        slice(0, 1, 1),
        slice(0, 3, 1),
    )


def test_normalize_key_errors_are_numpys():
    with pytest.raises(IndexError, match="`key` index 9 is out of bounds for axis 0 with size 7"):
        normalize_key(9, SHAPE)
    with pytest.raises(IndexError, match="`key` index -5 is out of bounds for axis 1 with size 4"):
        normalize_key((slice(None), [0, -5]), SHAPE)
    with pytest.raises(IndexError, match="array is 3-dimensional, but 4 were indexed"):
        normalize_key((0, 0, 0, 0), SHAPE)
    with pytest.raises(IndexError, match="single ellipsis"):
        normalize_key((Ellipsis, Ellipsis), SHAPE)
    with pytest.raises(IndexError, match="size of axis is 4 but size of the boolean axis is 3"):
        normalize_key((slice(None), np.ones(3, bool)), SHAPE)
    with pytest.raises(IndexError, match="only integers, slices"):
        normalize_key(1.5, SHAPE)
    with pytest.raises(IndexError, match="integer \\(or boolean\\) type, got float64"):
        normalize_key(np.array([1.0]), SHAPE)
    with pytest.raises(TypeError, match="`key` slice indices must be integers or None, got float"):
        normalize_key(slice(0, 1.5), SHAPE)
    with pytest.raises(ValueError, match="`key` slice step cannot be zero"):
        normalize_key(slice(None, None, 0), SHAPE)
    with pytest.raises(
        IndexError, match=r"could not be broadcast together with shapes \(2,\) \(3,\)"
    ):
        normalize_key(([0, 1], [0, 1, 2]), SHAPE)
    with pytest.raises(NotImplementedError, match="scalar booleans"):
        normalize_key(True, SHAPE)


# ------------------------------------------------------------------ cluster
def check(result, expected: np.ndarray, split, comm, counts=None, batch=None) -> None:
    """Values, dtype, split, chunk invariant (and counts) of ``result``, with one compute.

    With a :class:`LayoutBatch` ``batch``, the values are compared when it checks (one round
    trip for many results); the rest now.
    """
    assert isinstance(result, ht.DNDarray)
    assert result.shape == expected.shape and result.split == split and result.comm == comm
    chunks = result.to_dask().chunks
    for axis, c in enumerate(chunks):
        assert len(c) == (comm.size if axis == split else 1)
    if counts is not None:
        assert result.lshape_map[:, split].tolist() == list(counts)
    assert result.balanced == (
        split is None or chunks[split] == _layout.balanced_counts(expected.shape[split], comm.size)
    )
    if batch is not None:
        batch.expect(result, expected)
        return
    values = result.numpy()
    assert values.dtype == expected.dtype
    np.testing.assert_array_equal(values, expected)


def arrays_over(comm, g: np.ndarray, split):
    """``g`` as a balanced DNDarray and, on several ranks, as an unbalanced one with empty ranks."""
    a = ht.array(g, split=split, comm=comm)
    yield a
    if split is not None and comm.size > 1:
        target = a.lshape_map
        target[:, split] = torch.tensor(distributions(g.shape[split], comm.size)[1])
        yield a.copy().redistribute_(target_map=target)


def expected_split_and_counts(key, shape, split, counts):
    """An independent oracle for basic keys: where the split lands and how many rows each rank keeps."""
    if split is None:
        return None, None
    entries = list(key) if isinstance(key, tuple) else [key]
    if Ellipsis in entries:
        i = entries.index(Ellipsis)
        used = sum(1 for e in entries if e is not None and e is not Ellipsis)
        entries[i : i + 1] = [slice(None)] * (len(shape) - used)
    entries += [slice(None)] * (len(shape) - sum(1 for e in entries if e is not None))
    out_pos, axis = 0, 0
    for e in entries:
        if e is None:
            out_pos += 1
            continue
        if axis == split:
            if isinstance(e, int):
                return None, None
            rows = list(range(*e.indices(shape[axis])))
            displs = _layout.displacements(counts)
            kept = [sum(d <= i < d + c for i in rows) for d, c in zip(displs, counts, strict=True)]
            return out_pos, kept if e.indices(shape[axis])[2] > 0 else kept[::-1]
        out_pos += isinstance(e, slice)
        axis += 1
    raise AssertionError("unreachable")


@pytest.mark.parametrize(("shape", "split", "n"), layouts([SHAPE]))
def test_basic_keys_on_every_layout(comm_of, shape, split, n):
    comm = comm_of(n)
    with LayoutBatch() as batch:  # the values of every key's result in one round trip
        for a in arrays_over(comm, G, split):
            name, before = a.to_dask().name, a.lshape_map.tolist()
            counts = a.counts_displs()[0] if split is not None else ()
            for key in BASIC_KEYS:
                out_split, kept = expected_split_and_counts(key, SHAPE, split, counts)
                check(a[key], G[key], out_split, comm, kept, batch)
            assert a.to_dask().name == name and a.lshape_map.tolist() == before


@pytest.mark.parametrize(("shape", "split", "n"), layouts([SHAPE], rank_counts=(1, 3, 5)))
def test_advanced_and_mask_keys_on_every_layout(comm_of, shape, split, n):
    comm = comm_of(n)
    with LayoutBatch() as batch:  # the values of every key's result in one round trip
        for a in arrays_over(comm, G, split):
            for key in ADVANCED_KEYS + MASK_KEYS:
                b = a[key]
                check(b, G[key], b.split, comm, batch=batch)


def test_an_int_on_the_split_axis_gives_split_none_from_its_owner(comm_of):
    comm = comm_of(2)
    g = np.arange(25).reshape(5, 5)
    a = ht.array(g, split=0, comm=comm)
    check(a[:, 2], g[:, 2], 0, comm, [3, 2])  # Heat's example on two ranks
    check(a[4], g[4], None, comm)
    check(a[-1, -1], g[-1, -1], None, comm)
    b = ht.array(g, split=1, comm=comm)
    check(b[1], g[1], 0, comm, [3, 2])
    check(b[:, 3], g[:, 3], None, comm)
    check(b[None, 1:, 4:], g[None, 1:, 4:], 2, comm, [0, 1])


def test_slices_keep_the_split_and_report_balanced_truthfully(comm_of):
    comm = comm_of(4)
    a = ht.arange(10, split=0, comm=comm)  # counts (3, 3, 2, 2)
    check(a[3:9], np.arange(3, 9), 0, comm, [0, 3, 2, 1])
    check(a[::3], np.arange(10)[::3], 0, comm, [1, 1, 1, 1])
    check(a[:], np.arange(10), 0, comm, [3, 3, 2, 2])
    assert a[:].balanced and not a[3:9].balanced
    # a negative step mirrors the ranks, as flip does
    check(a[::-1], np.arange(10)[::-1], 0, comm, [2, 2, 3, 3])
    check(a[8:0:-3], np.arange(10)[8:0:-3], 0, comm, [1, 0, 1, 1])  # rows 8, 5, 2
    assert a[::-1].balanced is False


def test_integer_arrays_on_the_split_axis_give_a_balanced_result(comm_of):
    comm = comm_of(3)
    g = np.arange(28.0).reshape(7, 4)
    a = ht.array(g, split=0, comm=comm)
    idx = [6, 0, 3, 3, 5]
    for index in (idx, np.array(idx), torch.tensor(idx), ht.array(idx, split=0, comm=comm)):
        check(a[index], g[idx], 0, comm, [2, 2, 1])
    check(a[[[1, 2], [6, 0]]], g[[[1, 2], [6, 0]]], 0, comm, [1, 1, 0])
    check(a[[1, 2, 6], [0, 0, 3]], g[[1, 2, 6], [0, 0, 3]], 0, comm, [1, 1, 1])
    check(a[:, [3, 0]], g[:, [3, 0]], 0, comm, [3, 2, 2])  # off the split axis: local
    b = ht.array(g, split=1, comm=comm)
    check(b[[1, 2, 6], [0, 0, 3]], g[[1, 2, 6], [0, 0, 3]], 0, comm, [1, 1, 1])
    check(b[[4, 0]], g[[4, 0]], 1, comm, [2, 1, 1])
    check(b[[4, 0], 1:], g[[4, 0], 1:], 1, comm, [1, 1, 1])


def test_masks_give_each_rank_its_true_elements(comm_of):
    comm = comm_of(4)
    g = np.arange(28.0).reshape(7, 4)
    mask = (g % 3 == 0) | (g > 20)
    a = ht.array(g, split=0, comm=comm)  # counts (2, 2, 2, 1)
    per_rank = [int(p.sum()) for p in np.split(mask, [2, 4, 6])]
    for m in (mask, torch.from_numpy(mask), ht.array(mask, split=0, comm=comm)):
        check(a[m], g[mask], 0, comm, per_rank)
    check(a[ht.array(mask, split=1, comm=comm)], g[mask], 0, comm, per_rank)
    check(a[a > 20], g[g > 20], 0, comm, [0, 0, 3, 4])  # rows 5 and 6
    rows = np.array([True, False, False, True, True, False, True])
    check(a[rows], g[rows], 0, comm, [1, 1, 1, 1])
    check(a[ht.array(rows, split=0, comm=comm), 1:], g[rows, 1:], 0, comm, [1, 1, 1, 1])
    columns = np.array([True, False, True, True])
    check(a[:, columns], g[:, columns], 0, comm, [2, 2, 2, 1])
    # split 1: C order interleaves the ranks, so the operands are resplit to axis 0 first
    b = ht.array(g, split=1, comm=comm)
    for m in (mask, ht.array(mask, split=1, comm=comm)):
        check(b[m], g[mask], 0, comm, per_rank)
    check(b[b > 20], g[g > 20], 0, comm, [0, 0, 3, 4])  # rows 5 and 6
    check(b[:, columns], g[:, columns], 1, comm, [1, 0, 1, 1])
    c = ht.array(g, comm=comm)
    check(c[ht.array(mask, split=0, comm=comm)], g[mask], None, comm)


def test_masks_on_three_dimensions_and_empty_ranks(comm_of):
    comm = comm_of(5)
    g = np.arange(3 * 4 * 2).reshape(3, 4, 2)  # 3 rows on 5 ranks: two empty ranks
    mask = g % 3 != 1
    for split in splits_of(3):
        a = ht.array(g, split=split, comm=comm)
        lazy = ht.array(mask, split=split, comm=comm)
        keys = [mask, lazy, (mask[:, :, 0],), (slice(None), mask[0]), (lazy[:, :, 0], None)]
        for key in keys:
            expected = (
                g[mask[:, :, 0], None] if key is keys[-1] else g[key if key is not lazy else mask]
            )
            out = a[key]
            check(out, expected, out.split, comm)
            if split is not None:
                assert out.split is not None


def test_getitem_on_zero_size_and_zero_d_arrays(comm_of):
    comm = comm_of(3)
    e = np.zeros((0, 3))
    a = ht.array(e, split=0, comm=comm)
    check(a[:, 1], e[:, 1], 0, comm, [0, 0, 0])
    check(a[::-1, None], e[::-1, None], 0, comm, [0, 0, 0])
    check(a[e > 0], e[e > 0], 0, comm, [0, 0, 0])
    with pytest.raises(IndexError, match="`key` index 0 is out of bounds for axis 0 with size 0"):
        a[0]
    s = ht.array(np.array(2.5), comm=comm)
    check(s[()], np.array(2.5), None, comm)
    check(s[None], np.array([2.5]), None, comm)
    check(s[...], np.array(2.5), None, comm)


def test_slicing_moves_nothing_and_mirroring_moves_only_the_selection(comm_of, client):
    comm = comm_of(4)
    a = ht.random.rand(400, 50, split=0, comm=comm).astype(ht.float64).persist(wait=True)
    since = time.time()
    b = a[10:390:3, 5:].persist(wait=True)
    assert received_bytes(client, since) == 0
    np.testing.assert_array_equal(b.numpy(), a.numpy()[10:390:3, 5:])
    since = time.time()
    c = a[::-2, :10].persist(wait=True)
    moved = received_bytes(client, since)
    selection = 200 * 10 * 8
    assert selection <= moved < 1.25 * selection  # every row crosses to its mirror rank
    np.testing.assert_array_equal(c.numpy(), a.numpy()[::-2, :10])
    since = time.time()
    d = a[a[:, 0] > 0.5, :10].persist(wait=True)
    assert received_bytes(client, since) < 2000  # only the mask's small pieces
    np.testing.assert_array_equal(d.numpy(), a.numpy()[a.numpy()[:, 0] > 0.5, :10])


# ------------------------------------------------------------------ setitem
def value_kinds(expected_shape, comm, rng):
    """The same value as a scalar, numpy, torch, list and DNDarray of every split."""
    v = rng.integers(-50, 50, size=expected_shape).astype(np.float64)
    yield v, v
    yield torch.from_numpy(v), v
    yield v.tolist(), v
    for split in splits_of(v.ndim):
        yield ht.array(v, split=split, comm=comm), v
    yield 7, np.array(7.0)
    yield np.float32(-2.5), np.array(-2.5)


def assert_assigned(a, key, value, expected_values, before_name=None, batch=None):
    """``a[key] = value``, then ``a``'s layout and values (those at ``batch``'s check if given:
    ``a`` must not change again before it)."""
    lmap = a.lshape_map.tolist()
    split = a.split
    a[key] = value
    assert a.split == split and a.lshape_map.tolist() == lmap  # chunks exactly as they were
    if batch is not None:
        batch.expect(a, expected_values)
        return
    np.testing.assert_array_equal(a.numpy(), expected_values)


SET_KEYS = [
    0,
    (slice(1, 6, 2), 1),
    (slice(None, None, -1),),
    (Ellipsis, slice(None, None, -2)),
    (None, 3, slice(1, 3)),
    ([6, 0, 3],),
    (slice(None), [3, 0]),
    ([1, 5], [0, 3], 2),
    (EVEN,),
    ((G % 3 == 0)[:, :, 0],),
    (slice(None), (G % 3 == 0)[0]),
]


@pytest.mark.parametrize(("shape", "split", "n"), layouts([SHAPE], rank_counts=(1, 2, 5)))
def test_setitem_on_every_layout(comm_of, shape, split, n):
    comm = comm_of(n)
    rng = np.random.default_rng(n)
    with LayoutBatch() as batch:  # every assigned copy's values in one round trip
        for i, key in enumerate(SET_KEYS):
            sel = G[key].shape
            # (value, its numpy values): a DNDarray value is made from the numpy one
            plain, first = rng.random(sel), rng.random(sel)
            last = rng.random((1, *sel[1:])) if sel else None
            values = [
                (plain, None),
                (ht.array(first, split=0 if sel else None, comm=comm), first),
                (np.float32(3.0), None),
                (ht.array(last, split=len(sel) - 1, comm=comm), last) if sel else (1, None),
            ]
            for a in arrays_over(comm, G, split):
                # each key meets a numpy and a DNDarray value
                for value, as_numpy in values[i % 2 :: 2]:
                    b = a.copy()  # each assignment on its own copy: checked after all of them
                    expected = G.copy()
                    expected[key] = value if as_numpy is None else as_numpy
                    assert_assigned(b, key, value, expected, batch=batch)


def test_setitem_with_every_kind_of_value(comm_of):
    comm = comm_of(3)
    rng = np.random.default_rng(4)
    for split in splits_of(3):
        for key in [(slice(1, None), 2), ([0, 6, 0],), (slice(None), slice(None), 1)]:
            for value, as_numpy in value_kinds(G[key].shape, comm, rng):
                a = ht.array(G, split=split, comm=comm)
                expected = G.copy()
                expected[key] = as_numpy
                assert_assigned(a, key, value, expected)


def test_setitem_with_masks(comm_of):
    comm = comm_of(4)
    g = np.arange(28.0).reshape(7, 4)
    mask = (g % 3 == 0) | (g > 20)
    for split in splits_of(2):
        for m in (mask, torch.from_numpy(mask), ht.array(mask, split=0, comm=comm),
                  ht.array(mask, split=1, comm=comm)):  # fmt: skip
            for value in (-1.0, np.arange(mask.sum(), dtype=np.float64),
                          ht.array(np.arange(mask.sum(), dtype=np.float64), split=0, comm=comm),
                          ht.array(np.array([4.0]), comm=comm)):  # fmt: skip
                a = ht.array(g, split=split, comm=comm)
                expected = g.copy()
                expected[mask] = value.numpy() if isinstance(value, ht.DNDarray) else value
                assert_assigned(a, m, value, expected)
        a = ht.array(g, split=split, comm=comm)
        expected = g.copy()
        expected[expected > 10] = 0
        assert_assigned(a, a > 10, 0, expected)
        columns = np.array([True, False, False, True])
        a = ht.array(g, split=split, comm=comm)
        expected = g.copy()
        expected[:, columns] = np.array([[1.0, 2.0]])
        assert_assigned(a, (slice(None), columns), ht.array([[1.0, 2.0]], comm=comm), expected)


def test_setitem_repeated_indices_last_one_wins(comm_of):
    comm = comm_of(3)
    for split in splits_of(1):
        a = ht.arange(7, split=split, comm=comm)
        a[[6, 0, 6, 6]] = np.array([1, 2, 3, 4])
        expected = np.arange(7)
        expected[[6, 0, 6, 6]] = np.array([1, 2, 3, 4])
        np.testing.assert_array_equal(a.numpy(), expected)


def test_setitem_moves_only_the_rows_that_must_move(comm_of, client):
    comm = comm_of(4)
    a = ht.random.rand(400, 50, split=0, comm=comm).astype(ht.float64).persist(wait=True)
    expected = a.numpy()
    same_layout = (a[1:] * 2).persist(wait=True)  # laid out like the selection: nothing travels
    since = time.time()
    a[1:] = same_layout
    a.persist_(wait=True)
    assert received_bytes(client, since) == 0
    expected[1:] *= 2
    np.testing.assert_array_equal(a.numpy(), expected)
    balanced = ht.random.rand(100, 50, split=0, comm=comm).astype(ht.float64).persist(wait=True)
    since = time.time()
    # rank 1 takes value rows 0..49 (25 of them from rank 0), rank 2 rows 50..99 (25 from rank 3)
    a[150:250] = balanced
    a.persist_(wait=True)
    moved = received_bytes(client, since)
    assert 50 * 50 * 8 <= moved < 1.25 * 50 * 50 * 8  # the minimum: 50 rows change rank
    expected[150:250] = balanced.numpy()
    np.testing.assert_array_equal(a.numpy(), expected)


def test_setitem_leaves_untouched_chunks_as_they_were(comm_of):
    comm = comm_of(4)
    a = ht.zeros((8, 2), split=0, comm=comm)
    old = a.to_dask().name
    a[0:2] = 1
    x = a.to_dask()
    for rank in (1, 2, 3):  # untouched ranks alias their old chunk
        task = x.dask[(x.name, rank, 0)]
        assert next(iter(task.dependencies)) == (old, rank, 0)


# ---------------------------------------------------------------- bad input
def unchanged(a, name: str, lmap: list, values: np.ndarray) -> None:
    assert a.to_dask().name == name
    assert a.lshape_map.tolist() == lmap
    np.testing.assert_array_equal(a.numpy(), values)


BAD_KEYS = [
    (9, IndexError, "`key` index 9 is out of bounds for axis 0 with size 7"),
    ((slice(None), -5), IndexError, "`key` index -5 is out of bounds for axis 1 with size 4"),
    ([0, 7], IndexError, "`key` index 7 is out of bounds for axis 0 with size 7"),
    ((0, 0, 0), IndexError, "array is 2-dimensional, but 3 were indexed"),
    (np.ones(3, bool), IndexError, "size of axis is 7 but size of the boolean axis is 3"),
    (np.ones((7, 3), bool), IndexError, "axis 1: size of axis is 4 but size of the boolean"),
    (1.5, IndexError, "only integers, slices"),
    ([0.5, 1.0], IndexError, "integer \\(or boolean\\) type, got float64"),
    (slice(0, 2.0), TypeError, "`key` slice indices must be integers or None, got float"),
    (slice(None, None, 0), ValueError, "`key` slice step cannot be zero"),
    (([0, 1], [0, 1, 2]), IndexError, "could not be broadcast together"),
    ((Ellipsis, 0, Ellipsis), IndexError, "single ellipsis"),
    (True, NotImplementedError, "scalar booleans"),
    ("a", IndexError, "only integers, slices .* got str"),
]


@pytest.mark.parametrize(("key", "error", "match"), BAD_KEYS, ids=repr)
def test_bad_keys_raise_like_numpy_and_change_nothing(comm_of, key, error, match):
    comm = comm_of(3)
    g = np.arange(28.0).reshape(7, 4)
    a = ht.array(g, split=0, comm=comm)
    name, lmap = a.to_dask().name, a.lshape_map.tolist()
    with pytest.raises(error, match=match):
        a[key]
    with pytest.raises(error, match=match):
        a[key] = 1.0
    unchanged(a, name, lmap, g)


def test_bad_values_raise_and_change_nothing(comm_of):
    comm = comm_of(3)
    g = np.arange(28.0).reshape(7, 4)
    a = ht.array(g, split=1, comm=comm)
    i = ht.arange(6, split=0, comm=comm)
    u = ht.array(np.zeros(4, np.uint8), split=0, comm=comm)
    other = ht.get_comm().subcomm([0, 1])
    cases = [
        (a, (slice(None), 0), np.ones(3), ValueError,
         r"`value` of shape \(3,\) could not be broadcast to the indexed shape \(7,\)"),
        (a, slice(1, 3), np.ones((3, 4)), ValueError, r"indexed shape \(2, 4\)"),
        (a, a > 5, np.ones(3), ValueError, r"`value` of shape \(3,\) could not be broadcast"),
        (a, ht.array(g > 5, split=0, comm=comm), np.ones(3), ValueError, "could not be broadcast"),
        (a, 0, ht.ones((2, 4), split=0, comm=comm), ValueError, "could not be broadcast"),
        (i, 0, 1.5, TypeError, "`value` of dtype float64 cannot be cast to the array's dtype int64"),
        (i, slice(None), np.ones(6), TypeError, "cannot be cast to the array's dtype int64"),
        (a, 0, 1j, TypeError, "dtype complex128 cannot be cast to the array's dtype float64"),
        (u, 0, 300, ValueError, "`value` 300 is out of bounds for uint8"),
        (a, 0, "abc", TypeError, "`value` must be numeric or boolean"),
        (a, 0, ht.ones(4, comm=other), ValueError, "`value` must share the array's comm"),
        (a, ht.array(g > 5, comm=other), 0.0, ValueError, "`key` mask must share the array's comm"),
        (a, (ht.array(g > 5, comm=comm), 0), 0.0, NotImplementedError,
         "multi-dimensional DNDarray mask next to other integer or array indices"),
        (a, ht.array([1.5], comm=comm), 0.0, IndexError, "integer \\(or boolean\\) type"),
    ]  # fmt: skip
    for target, key, value, error, match in cases:
        name, lmap, values = target.to_dask().name, target.lshape_map.tolist(), target.numpy()
        with pytest.raises(error, match=match):
            target[key] = value
        unchanged(target, name, lmap, values)
    with pytest.raises(ValueError, match="`key` mask must share the array's comm"):
        a[ht.array(g > 5, comm=other)]
    with pytest.raises(NotImplementedError, match="multi-dimensional DNDarray mask"):
        a[ht.array(g > 5, comm=comm), 0]
