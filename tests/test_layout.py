"""Pure layout planning: no cluster, no Dask scheduler, only shapes and counts."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from dndask import _layout as layout

PROPERTY = settings(derandomize=True, max_examples=200, deadline=None)


# ------------------------------------------------------------------ axes
@pytest.mark.parametrize(
    ("axis", "ndim", "expected"), [(0, 1, 0), (-1, 3, 2), (-3, 3, 0), (None, 2, None)]
)
def test_normalize_axis(axis, ndim, expected):
    assert layout.normalize_axis(axis, ndim) == expected


@pytest.mark.parametrize(
    ("axis", "ndim", "exc", "match"),
    [
        (3, 3, ValueError, r"`axis` must be in \[-3, 2\] for a 3-dimensional array, got 3"),
        (-4, 3, ValueError, r"`axis` must be in \[-3, 2\] for a 3-dimensional array, got -4"),
        (0, 0, ValueError, "`axis` must be None for a 0-dimensional array, got 0"),
        (1.0, 2, TypeError, "`axis` must be None or an int, got float"),
        (True, 2, TypeError, "`axis` must be None or an int, got bool"),
        ("1", 2, TypeError, "`axis` must be None or an int, got str"),
    ],
)
def test_normalize_axis_errors(axis, ndim, exc, match):
    with pytest.raises(exc, match=match):
        layout.normalize_axis(axis, ndim)


def test_normalize_axis_names_the_argument():
    with pytest.raises(ValueError, match="`split` must be in"):
        layout.normalize_axis(5, 2, "split")
    assert layout.normalize_axis(np.int64(-1), 2) == 1


def test_normalize_axes():
    assert layout.normalize_axes(None, 3) == (0, 1, 2)
    assert layout.normalize_axes(-1, 3) == (2,)
    assert layout.normalize_axes((2, 0), 3) == (0, 2)
    with pytest.raises(ValueError, match=r"`axis` must not repeat an axis, got \(0, -3\)"):
        layout.normalize_axes((0, -3), 3)
    with pytest.raises(ValueError, match=r"`axis` must be in \[-2, 1\]"):
        layout.normalize_axes((0, 2), 2)
    with pytest.raises(
        TypeError, match="`axis` must be None, an int or a tuple of ints, got float"
    ):
        layout.normalize_axes((0, 1.0), 2)


def test_normalize_shape():
    assert layout.normalize_shape(4) == (4,)
    assert layout.normalize_shape([2, 0, np.int32(3)]) == (2, 0, 3)
    assert layout.normalize_shape(()) == ()
    with pytest.raises(ValueError, match=r"`shape` must hold non-negative ints, got \(2, -1\)"):
        layout.normalize_shape((2, -1))
    with pytest.raises(TypeError, match="`shape` must hold ints, got float"):
        layout.normalize_shape((2.5,))
    with pytest.raises(TypeError, match="`size` must hold ints, got bool"):
        layout.normalize_shape((True,), "size")


# ---------------------------------------------------------- balanced rule
@pytest.mark.parametrize(
    ("n", "size", "expected"),
    [
        (7, 3, (3, 2, 2)),
        (7, 4, (2, 2, 2, 1)),
        (7, 5, (2, 2, 1, 1, 1)),
        (10, 3, (4, 3, 3)),
        (2, 3, (1, 1, 0)),
        (1, 3, (1, 0, 0)),
        (0, 3, (0, 0, 0)),
        (5, 1, (5,)),
    ],
)
def test_balanced_counts_follow_heat(n, size, expected):
    assert layout.balanced_counts(n, size) == expected


def test_balanced_counts_needs_a_rank():
    with pytest.raises(ValueError, match="`size` must be at least 1, got 0"):
        layout.balanced_counts(3, 0)


@PROPERTY
@given(st.integers(0, 10_000), st.integers(1, 64))
def test_balanced_counts_properties(n, size):
    counts = layout.balanced_counts(n, size)
    assert len(counts) == size and sum(counts) == n
    assert max(counts) - min(counts) <= 1
    assert list(counts) == sorted(counts, reverse=True)  # the extra rows go to the low ranks


def test_displacements():
    assert layout.displacements((2, 2, 2, 1)) == (0, 2, 4, 6)
    assert layout.displacements((0, 3, 0)) == (0, 0, 3)
    assert layout.displacements(()) == ()


@pytest.mark.parametrize(
    ("shape", "split", "size", "rank", "offset", "lshape"),
    [
        ((7, 4, 3), 0, 4, 0, 0, (2, 4, 3)),
        ((7, 4, 3), 0, 4, 3, 6, (1, 4, 3)),
        ((7, 4, 3), 1, 4, 2, 2, (7, 1, 3)),
        ((2, 5), 0, 3, 2, 2, (0, 5)),  # an empty rank's offset is n
        ((1, 5), 0, 3, 1, 1, (0, 5)),
        ((0, 5), 0, 3, 2, 0, (0, 5)),
        ((7, 4), None, 4, 2, 0, (7, 4)),
    ],
)
def test_chunk(shape, split, size, rank, offset, lshape):
    got_offset, got_lshape, slices = layout.chunk(shape, split, size, rank)
    assert (got_offset, got_lshape) == (offset, lshape)
    expected = np.arange(int(np.prod(shape))).reshape(shape)
    if split is None:
        np.testing.assert_array_equal(expected[slices], expected)
    else:
        parts = np.split(
            expected, np.cumsum(layout.balanced_counts(shape[split], size))[:-1], axis=split
        )
        np.testing.assert_array_equal(expected[slices], parts[rank])


def test_chunk_errors():
    with pytest.raises(TypeError, match="`rank` must be an int, got float"):
        layout.chunk((4,), 0, 2, 1.0)
    with pytest.raises(ValueError, match=r"`rank` must be in \[0, 1\], got 2"):
        layout.chunk((4,), 0, 2, 2)


def test_counts_displs_shape():
    assert layout.counts_displs_shape((7, 3), 0, 3, 0) == ((3, 2, 2), (0, 3, 5), (9, 3))
    assert layout.counts_displs_shape((7, 3), 0, 3, 2) == ((3, 2, 2), (0, 3, 5), (6, 3))
    assert layout.counts_displs_shape((4, 5), 1, 2, 1) == ((3, 2), (0, 3), (4, 4))


def test_chunks_and_maps():
    assert layout.chunks_for((7, 4, 3), 1, (1, 1, 1, 1)) == ((7,), (1, 1, 1, 1), (3,))
    assert layout.chunks_for((0, 2), 0, (0, 0)) == ((0, 0), (2,))
    table = layout.lshape_map_from_counts((7, 4, 3), 0, (2, 2, 2, 1), 4)
    assert table.dtype == np.int64 and table.shape == (4, 3)
    assert table.tolist() == [[2, 4, 3], [2, 4, 3], [2, 4, 3], [1, 4, 3]]
    assert layout.lshape_map_from_counts((7, 4), None, (), 3).tolist() == [[7, 4]] * 3
    assert layout.lshape_map_from_counts((), None, (), 2).shape == (2, 0)


def test_counts_from_chunks_checks_the_invariant():
    assert layout.counts_from_chunks(((3,), (1, 0, 2)), 1, 3) == (1, 0, 2)
    assert layout.counts_from_chunks(((3,), (2,)), None, 3) == ()
    with pytest.raises(ValueError, match="chunks along split axis 1 must number 3, got 2"):
        layout.counts_from_chunks(((3,), (1, 2)), 1, 3)
    with pytest.raises(ValueError, match="chunks along axis 0 must be a single chunk, got 2"):
        layout.counts_from_chunks(((1, 2), (3,)), 1, 1)
    assert layout.conforms(((1, 2), (3,)), 0, 2)
    assert not layout.conforms(((1, 2), (3,)), 0, 3)
    assert not layout.conforms(((np.nan, np.nan), (3,)), 0, 2)


# ------------------------------------------------------------ validate_map
def test_validate_map_accepts_torch_and_numpy():
    assert layout.validate_map(torch.tensor([[1, 4], [3, 4]]), (4, 4), 0, 2, "target_map") == (1, 3)
    m = np.array([[4, 0], [4, 2], [4, 3]], dtype=np.int32)
    assert layout.validate_map(m, (4, 5), 1, 3, "target_map") == (0, 2, 3)


@pytest.mark.parametrize(
    ("value", "exc", "match"),
    [
        (
            [[2, 4], [2, 4]],
            TypeError,
            "`target_map` must be a torch.Tensor or numpy.ndarray, got list",
        ),
        ("abc", TypeError, "`target_map` must be a torch.Tensor or numpy.ndarray, got str"),
        (
            torch.tensor([[2.0, 4.0], [2.0, 4.0]]),
            TypeError,
            "`target_map` must have an integer dtype, got torch.float32",
        ),
        (
            np.array([[2.0, 4.0], [2.0, 4.0]]),
            TypeError,
            "`target_map` must have an integer dtype, got float64",
        ),
        (
            torch.tensor([[True, True], [True, True]]),
            TypeError,
            "`target_map` must have an integer dtype",
        ),
        (torch.tensor([4, 4]), ValueError, r"`target_map` must have shape \(2, 2\), got \(2,\)"),
        (
            torch.tensor([[4, 4], [0, 4], [0, 4]]),
            ValueError,
            r"`target_map` must have shape \(2, 2\), got \(3, 2\)",
        ),
        (
            torch.tensor([[5, 4], [-1, 4]]),
            ValueError,
            r"`target_map` must hold non-negative entries, got \[-1, 4\] for rank 1",
        ),
        (
            torch.tensor([[2, 4], [2, 3]]),
            ValueError,
            "`target_map` column 1 must equal the global shape 4 on every rank, got 3 for rank 1",
        ),
        (
            torch.tensor([[2, 4], [3, 4]]),
            ValueError,
            "`target_map` must sum to 4 along axis 0, got 5",
        ),
    ],
)
def test_validate_map_errors(value, exc, match):
    with pytest.raises(exc, match=match):
        layout.validate_map(value, (4, 4), 0, 2, "target_map")


def test_validate_map_does_not_touch_its_input():
    m = torch.tensor([[1, 4], [3, 4]])
    layout.validate_map(m, (4, 4), 0, 2, "target_map")
    assert m.tolist() == [[1, 4], [3, 4]]


# ---------------------------------------------------------------- planning
def owners(counts):
    """Owner rank of every global row, computed independently of the planner."""
    return np.repeat(np.arange(len(counts)), counts)


def apply_plan(src, dst):
    data = np.arange(sum(src))
    chunks = np.split(data, np.cumsum(src)[:-1]) if len(src) > 1 else [data]
    plan = layout.plan_redistribution(src, dst)
    out = []
    for pieces in plan:
        parts = [chunks[p.src][p.start : p.stop] for p in pieces]
        out.append(np.concatenate(parts) if parts else np.empty(0, dtype=data.dtype))
    return data, out, plan


def test_plan_redistribution_example():
    plan = layout.plan_redistribution((2, 2, 2, 1), (1, 2, 2, 2))
    assert [[(p.src, p.start, p.stop, p.whole) for p in ps] for ps in plan] == [
        [(0, 0, 1, False)],
        [(0, 1, 2, False), (1, 0, 1, False)],
        [(1, 1, 2, False), (2, 0, 1, False)],
        [(2, 1, 2, False), (3, 0, 1, True)],
    ]
    assert layout.moved_rows((2, 2, 2, 1), (1, 2, 2, 2)) == 3


def test_plan_with_empty_ranks_on_both_sides():
    data, out, plan = apply_plan((0, 3, 0, 4), (7, 0, 0, 0))
    np.testing.assert_array_equal(out[0], data)
    assert [len(o) for o in out] == [7, 0, 0, 0]
    assert all(p.whole for p in plan[0]) and [p.src for p in plan[0]] == [1, 3]
    assert layout.plan_redistribution((0, 0), (0, 0)) == ((), ())
    with pytest.raises(ValueError, match="`dst` must sum to 7, got 6"):
        layout.plan_redistribution((7,), (3, 3))


counts_strategy = st.integers(1, 6).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 20), min_size=n, max_size=n),
        st.lists(st.integers(0, 20), min_size=n, max_size=n),
    )
)


def rescale(target, total):
    """Adjust ``target`` to sum to ``total`` (keeping it non-negative)."""
    target = list(target)
    diff = total - sum(target)
    i = 0
    while diff:
        step = 1 if diff > 0 else -1
        if step > 0 or target[i % len(target)] > 0:
            target[i % len(target)] += step
            diff -= step
        i += 1
    return tuple(target)


@PROPERTY
@given(counts_strategy)
def test_plan_properties(pair):
    src, raw = pair
    src = tuple(src)
    dst = rescale(raw, sum(src))
    data, out, plan = apply_plan(src, dst)
    # the target chunks are exactly the global rows in order
    expected = np.split(data, np.cumsum(dst)[:-1]) if len(dst) > 1 else [data]
    for got, want in zip(out, expected, strict=True):
        np.testing.assert_array_equal(got, want)
    pieces = [p for ps in plan for p in ps]
    assert all(p.stop > p.start for p in pieces)
    assert len(pieces) <= len(src) + len(dst) - 1
    for p in pieces:
        assert p.whole == (p.start == 0 and p.stop == src[p.src])
    # moved rows equal the rows whose owner changes, by brute force
    assert layout.moved_rows(src, dst) == int((owners(src) != owners(dst)).sum())


# ------------------------------------------------------------- reductions
@pytest.mark.parametrize(
    ("split", "axes", "keepdims", "expected"),
    [
        (None, (0,), False, None),
        (0, (0,), False, None),
        (2, (0,), False, 1),
        (2, (0, 1), False, 0),
        (2, (0, 1), True, 2),
        (1, (2,), False, 1),
        (1, (1,), True, None),
    ],
)
def test_reduced_split(split, axes, keepdims, expected):
    assert layout.reduced_split(split, axes, keepdims) == expected
