"""Pure tests of the manipulation plans in :mod:`dndask._manipulation._plan` (no Dask, no cluster).

Every plan is checked by replaying it on row numbers and comparing with
numpy (``roll``, ``tile``, ``concatenate``, ``repeat``, ``reshape``), never
with the function under test.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dndask import _layout as lay
from dndask._layout import Piece
from dndask._manipulation import _plan
from dndask._manipulation._plan import OperandPiece

PROPS = settings(derandomize=True, max_examples=200, deadline=None)

counts_st = st.lists(st.integers(0, 6), min_size=1, max_size=6)


def chunks_of(counts, rows=None) -> list[np.ndarray]:
    """Global rows (default ``0..n-1``) cut into per-rank chunks."""
    rows = np.arange(sum(counts)) if rows is None else rows
    return np.split(rows, np.cumsum(counts)[:-1]) if counts else []


def replay(plan, chunks_by_operand) -> list[np.ndarray]:
    """The rows every target rank assembles from its pieces."""
    out = []
    for pieces in plan:
        parts = []
        for p in pieces:
            operand = p.operand if isinstance(p, OperandPiece) else 0
            chunk = chunks_by_operand[operand][p.src]
            assert 0 <= p.start < p.stop <= len(chunk)  # no empty pieces
            assert p.whole == (p.start == 0 and p.stop == len(chunk))
            parts.append(chunk[p.start : p.stop])
        out.append(np.concatenate(parts) if parts else np.array([], dtype=np.int64))
    return out


def assert_rows(got: list[np.ndarray], expected: np.ndarray, counts) -> None:
    assert [len(g) for g in got] == list(counts)
    for g, e in zip(got, chunks_of(list(counts), expected), strict=True):
        np.testing.assert_array_equal(g, e)


# ------------------------------------------------------------------ reshape
def brute_local_axes(shape, split, new_shape) -> tuple[int, ...]:
    """Axes ``k`` for which every block of split rows reshapes onto the same rows of axis ``k``."""
    g = np.arange(int(np.prod(shape))).reshape(shape)
    h = g.reshape(new_shape)
    n = shape[split]
    out = []
    for k in range(len(new_shape)):
        if new_shape[k] != n:
            continue
        ok = True
        for lo, hi in itertools.combinations(range(n + 1), 2):
            block = np.take(g, range(lo, hi), axis=split)
            lshape = tuple(hi - lo if i == k else s for i, s in enumerate(new_shape))
            if not np.array_equal(block.reshape(lshape), np.take(h, range(lo, hi), axis=k)):
                ok = False
                break
        if ok:
            out.append(k)
    return tuple(out)


def shapes_of(size: int, max_ndim: int = 3):
    """Every shape of ``size`` elements with 1..max_ndim axes (entries > 1, plus 1-padded)."""
    out = set()
    for ndim in range(1, max_ndim + 1):
        for dims in itertools.product(range(1, size + 1), repeat=ndim):
            if int(np.prod(dims)) == size:
                out.add(dims)
    return sorted(out)


@pytest.mark.parametrize("size", [6, 8, 12])
def test_local_reshape_axes_match_brute_force(size):
    shapes = shapes_of(size)
    for shape in shapes:
        for split in range(len(shape)):
            for new_shape in shapes:
                assert _plan.local_reshape_axes(shape, split, new_shape) == brute_local_axes(
                    shape, split, new_shape
                ), (shape, split, new_shape)


def test_local_reshape_axes_of_empty_arrays_match_brute_force():
    shapes = [(3, 0), (0, 3), (3, 0, 1), (1, 0, 3), (0,), (2, 0, 2)]
    for shape in shapes:
        for split in range(len(shape)):
            for new_shape in shapes:
                if int(np.prod(new_shape)) == 0:
                    assert _plan.local_reshape_axes(shape, split, new_shape) == brute_local_axes(
                        shape, split, new_shape
                    ), (shape, split, new_shape)


def test_local_reshape_axes_examples():
    assert _plan.local_reshape_axes((2, 3, 4), 1, (2, 3, 2, 2)) == (1,)
    assert _plan.local_reshape_axes((6, 4), 1, (24,)) == ()
    assert _plan.local_reshape_axes((2, 1, 3), 1, (2, 1, 1, 3)) == (1, 2)
    assert _plan.local_reshape_axes((1, 1, 12), 0, (1, 12, 1)) == (0, 2)
    assert _plan.local_reshape_axes((3, 0), 0, (3, 0, 1)) == (0,)


# --------------------------------------------------------------- wrapping
@given(start=st.integers(-30, 30), count=st.integers(0, 25), n=st.integers(1, 7))
@PROPS
def test_wrapped_ranges_cover_rows_modulo_n(start, count, n):
    ranges = _plan.wrapped_ranges(start, count, n)
    rows = [r for lo, hi in ranges for r in range(lo, hi)]
    assert rows == [(start + i) % n for i in range(count)]
    assert all(0 <= lo < hi <= n for lo, hi in ranges)
    assert len(ranges) <= (count + n - 1) // n + 1


def test_wrapped_ranges_edges():
    assert _plan.wrapped_ranges(3, 0, 0) == ()
    with pytest.raises(ValueError, match="`n` must be positive to take 2 rows, got 0"):
        _plan.wrapped_ranges(0, 2, 0)
    with pytest.raises(ValueError, match="`count` must be non-negative, got -1"):
        _plan.wrapped_ranges(0, -1, 3)


@given(counts=counts_st, data=st.data())
@PROPS
def test_plan_ranges_picks_the_rows(counts, data):
    n = sum(counts)
    ranges = data.draw(
        st.lists(st.tuples(st.integers(0, n), st.integers(0, n)).map(sorted), max_size=3)
    )
    pieces = _plan.plan_ranges(counts, ranges)
    got = replay([pieces], [chunks_of(counts)])[0]
    expected = [r for lo, hi in ranges for r in range(lo, hi)]
    np.testing.assert_array_equal(got, np.array(expected, dtype=np.int64))


def test_plan_ranges_rejects_rows_outside():
    with pytest.raises(ValueError, match=r"`ranges` must lie in \[0, 3\], got \(2, 5\)"):
        _plan.plan_ranges((1, 2), [(2, 5)])


# ------------------------------------------------------------- roll and tile
@given(counts=counts_st, shift=st.integers(-20, 20))
@PROPS
def test_plan_roll_replays_numpy_roll(counts, shift):
    n = sum(counts)
    plan = _plan.plan_roll(counts, shift)
    assert_rows(replay(plan, [chunks_of(counts)]), np.roll(np.arange(n), shift), counts)
    for pieces in plan:  # at most two wrapped ranges, each over contiguous ranks
        assert len(pieces) <= len(counts) + 1


def test_plan_roll_example_keeps_counts():
    plan = _plan.plan_roll((2, 2, 2, 1), 2)
    assert [[(p.src, p.start, p.stop) for p in ps] for ps in plan] == [
        [(2, 1, 2), (3, 0, 1)],
        [(0, 0, 2)],
        [(1, 0, 2)],
        [(2, 0, 1)],
    ]
    assert plan[1][0] == Piece(0, 0, 2, True)


@given(counts=counts_st, reps=st.integers(0, 4), size=st.integers(1, 6))
@PROPS
def test_plan_tile_replays_numpy_tile_and_balances(counts, reps, size):
    n = sum(counts)
    dst, plan = _plan.plan_tile(counts, reps, size)
    assert dst == lay.balanced_counts(n * reps, size)
    assert_rows(replay(plan, [chunks_of(counts)]), np.tile(np.arange(n), reps), dst)


# -------------------------------------------------------------- concatenate
@given(
    operands=st.lists(counts_st, min_size=1, max_size=4),
    size=st.integers(1, 6),
)
@PROPS
def test_plan_concatenation_replays_numpy_and_moves_only_what_changes_owner(operands, size):
    offsets = np.cumsum([0, *[sum(c) for c in operands]])
    chunks = [chunks_of(c, np.arange(offsets[i], offsets[i + 1])) for i, c in enumerate(operands)]
    dst, plan = _plan.plan_concatenation(operands, size)
    assert dst == lay.balanced_counts(int(offsets[-1]), size)
    assert_rows(replay(plan, chunks), np.arange(offsets[-1]), dst)
    # each source chunk is read by contiguous targets, in order: at most one cut per target
    for i, c in enumerate(operands):
        for s in range(len(c)):
            readers = [r for r, ps in enumerate(plan) for p in ps if (p.operand, p.src) == (i, s)]
            assert readers == sorted(readers)
            assert len(readers) == len(set(readers))


def test_plan_concatenation_example():
    dst, plan = _plan.plan_concatenation([(2, 2, 2, 1), (5,)], 4)
    assert dst == (3, 3, 3, 3)
    assert plan[0] == (OperandPiece(0, 0, 0, 2, True), OperandPiece(0, 1, 0, 1, False))
    assert plan[3] == (OperandPiece(1, 0, 2, 5, False),)


# --------------------------------------------------------------- repeat, pad
@given(counts=counts_st, data=st.data())
@PROPS
def test_repeated_counts_match_numpy(counts, data):
    n = sum(counts)
    reps = data.draw(
        st.one_of(st.integers(0, 3), st.lists(st.integers(0, 3), min_size=n, max_size=n))
    )
    rows = np.repeat(np.arange(n), reps)
    owner = np.repeat(np.repeat(np.arange(len(counts)), counts), reps)
    expected = tuple(int((owner == r).sum()) for r in range(len(counts)))
    assert _plan.repeated_counts(counts, reps) == expected
    assert sum(expected) == len(rows)


def test_repeated_counts_rejects_wrong_length():
    with pytest.raises(ValueError, match="`repeats` must have 3 entries, got 2"):
        _plan.repeated_counts((1, 2), [1, 1])


def test_padded_counts():
    assert _plan.padded_counts((2, 2, 1), 1, 3) == (3, 2, 4)
    assert _plan.padded_counts((4,), 2, 1) == (7,)
    assert _plan.padded_counts((0, 0, 3), 2, 0) == (2, 0, 3)
