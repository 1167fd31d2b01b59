"""Pure tests of :mod:`dndask._layout` (no Dask, no cluster, no fixtures).

Expected values come from Heat 1.8's rules (``MPICommunication.chunk`` and
``counts_displs_shape``) written out by hand, or from brute-force reference
implementations defined here. They are never taken from the functions under test.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
import torch
from conftest import naive_pieces
from hypothesis import given, settings
from hypothesis import strategies as st

from dndask import _layout as lay
from dndask._layout import Piece

PROPS = settings(derandomize=True, max_examples=200, deadline=None)


# ---------------------------------------------------------------------------
# Independent reference implementations
# ---------------------------------------------------------------------------


def heat_chunk_bounds(n: int, size: int, rank: int) -> tuple[int, int]:
    """Heat's ``MPICommunication.chunk`` formula for (start, count)."""
    q, rem = divmod(n, size)
    if rank < rem:
        return rank * (q + 1), q + 1
    return rank * q + rem, q


def owners(counts) -> list[int]:
    """Owner rank of every global row, one entry per row."""
    out = []
    for rank, c in enumerate(counts):
        out.extend([rank] * c)
    return out


def brute_moved(src, dst) -> int:
    return sum(a != b for a, b in zip(owners(src), owners(dst), strict=True))


def assemble(src, dst, data):
    """Use a plan to build the target chunks from ``data`` split by ``src``."""
    bounds = np.cumsum([0, *src])
    src_chunks = [data[bounds[i] : bounds[i + 1]] for i in range(len(src))]
    plan = lay.plan_redistribution(src, dst)
    out = []
    for pieces in plan:
        parts = [
            src_chunks[p.src] if p.whole else src_chunks[p.src][p.start : p.stop] for p in pieces
        ]
        out.append(np.concatenate(parts) if parts else data[:0])
    return plan, out


# ---------------------------------------------------------------------------
# normalize_axis
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("axis", "ndim", "expected"),
    [
        (0, 1, 0),
        (0, 3, 0),
        (2, 3, 2),
        (-1, 3, 2),
        (-3, 3, 0),
        (-2, 2, 0),
        (np.int64(-1), 4, 3),
        (np.int32(1), 2, 1),
    ],
)
def test_normalize_axis_values(axis, ndim, expected):
    out = lay.normalize_axis(axis, ndim)
    assert out == expected
    assert type(out) is int


def test_normalize_axis_none():
    assert lay.normalize_axis(None, 3) is None
    assert lay.normalize_axis(None, 0) is None


@pytest.mark.parametrize(
    ("axis", "tname"),
    [(True, "bool"), (False, "bool"), (1.0, "float"), ("0", "str"), ((0,), "tuple"), ([0], "list")],
)
def test_normalize_axis_type_error(axis, tname):
    with pytest.raises(TypeError, match=rf"^`axis` must be None or an int, got {tname}$"):
        lay.normalize_axis(axis, 3)


def test_normalize_axis_numpy_bool_rejected():
    with pytest.raises(TypeError, match="must be None or an int"):
        lay.normalize_axis(np.bool_(True), 3)


def test_normalize_axis_type_error_uses_name():
    with pytest.raises(TypeError, match=r"^`split` must be None or an int, got float$"):
        lay.normalize_axis(0.5, 2, "split")


@pytest.mark.parametrize(("axis", "ndim"), [(2, 2), (3, 2), (-3, 2), (1, 1), (-2, 1), (5, 3)])
def test_normalize_axis_out_of_range(axis, ndim):
    msg = f"`axis` must be in [{-ndim}, {ndim - 1}] for a {ndim}-dimensional array, got {axis}"
    with pytest.raises(ValueError, match=f"^{re.escape(msg)}$"):
        lay.normalize_axis(axis, ndim)


def test_normalize_axis_out_of_range_uses_name():
    msg = "`split` must be in [-2, 1] for a 2-dimensional array, got 2"
    with pytest.raises(ValueError, match=re.escape(msg)):
        lay.normalize_axis(2, 2, "split")


@pytest.mark.parametrize("axis", [0, -1, 1])
def test_normalize_axis_zero_dim(axis):
    msg = f"`split` must be None for a 0-dimensional array, got {axis}"
    with pytest.raises(ValueError, match=f"^{re.escape(msg)}$"):
        lay.normalize_axis(axis, 0, "split")


# ---------------------------------------------------------------------------
# normalize_axes
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("axis", "ndim", "expected"),
    [
        (None, 0, ()),
        (None, 1, (0,)),
        (None, 3, (0, 1, 2)),
        (0, 3, (0,)),
        (-1, 3, (2,)),
        ((0, -1), 3, (0, 2)),
        ((-1, 0), 3, (0, 2)),
        ((2, 1, 0), 3, (0, 1, 2)),
        ((), 3, ()),
        ((np.int64(1),), 2, (1,)),
    ],
)
def test_normalize_axes_values(axis, ndim, expected):
    out = lay.normalize_axes(axis, ndim)
    assert out == expected
    assert all(type(a) is int for a in out)


@pytest.mark.parametrize(
    ("axis", "tname"),
    [(True, "bool"), (1.0, "float"), ((0, 1.5), "float"), ((0, False), "bool"), ([0, 1], "list")],
)
def test_normalize_axes_type_error(axis, tname):
    msg = f"`axis` must be None, an int or a tuple of ints, got {tname}"
    with pytest.raises(TypeError, match=f"^{re.escape(msg)}$"):
        lay.normalize_axes(axis, 3)


@pytest.mark.parametrize(("axis", "bad"), [(3, 3), (-4, -4), ((0, 3), 3), ((-4, 1), -4)])
def test_normalize_axes_out_of_range(axis, bad):
    msg = f"`axis` must be in [-3, 2] for a 3-dimensional array, got {bad}"
    with pytest.raises(ValueError, match=f"^{re.escape(msg)}$"):
        lay.normalize_axes(axis, 3)


@pytest.mark.parametrize("axis", [(0, 0), (1, -2), (0, 2, -1)])
def test_normalize_axes_repeat(axis):
    msg = f"`dims` must not repeat an axis, got {axis}"
    with pytest.raises(ValueError, match=f"^{re.escape(msg)}$"):
        lay.normalize_axes(axis, 3, "dims")


# ---------------------------------------------------------------------------
# normalize_shape
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "expected"),
    [
        (3, (3,)),
        (0, (0,)),
        (np.int64(5), (5,)),
        ((), ()),
        ([], ()),
        ((2, 0), (2, 0)),
        ([4, 5, 6], (4, 5, 6)),
        ((np.int32(2), np.uint8(3)), (2, 3)),
    ],
)
def test_normalize_shape_values(shape, expected):
    out = lay.normalize_shape(shape)
    assert out == expected
    assert type(out) is tuple
    assert all(type(s) is int for s in out)


@pytest.mark.parametrize(
    ("shape", "tname"),
    [(True, "bool"), ((2, True), "bool"), (2.0, "float"), ((2, 3.0), "float"), ("3", "str")],
)
def test_normalize_shape_type_error(shape, tname):
    with pytest.raises(TypeError, match=rf"^`shape` must hold ints, got {tname}$"):
        lay.normalize_shape(shape)


@pytest.mark.parametrize(
    ("shape", "shown"), [(-1, "(-1,)"), ((2, -3), "(2, -3)"), ([4, -1], "(4, -1)")]
)
def test_normalize_shape_negative(shape, shown):
    msg = f"`size` must hold non-negative ints, got {shown}"
    with pytest.raises(ValueError, match=f"^{re.escape(msg)}$"):
        lay.normalize_shape(shape, "size")


# ---------------------------------------------------------------------------
# balanced_counts / displacements
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "size", "expected"),
    [
        (7, 1, (7,)),
        (7, 3, (3, 2, 2)),
        (7, 4, (2, 2, 2, 1)),
        (7, 5, (2, 2, 1, 1, 1)),
        (7, 7, (1,) * 7),
        (7, 9, (1,) * 7 + (0, 0)),
        (10, 3, (4, 3, 3)),
        (2, 3, (1, 1, 0)),
        (1, 3, (1, 0, 0)),
        (0, 1, (0,)),
        (0, 3, (0, 0, 0)),
        (12, 4, (3, 3, 3, 3)),
    ],
)
def test_balanced_counts_heat_examples(n, size, expected):
    out = lay.balanced_counts(n, size)
    assert out == expected
    assert all(type(c) is int for c in out)


@pytest.mark.parametrize("size", [0, -1])
def test_balanced_counts_bad_size(size):
    with pytest.raises(ValueError, match=f"^`size` must be at least 1, got {size}$"):
        lay.balanced_counts(5, size)


@PROPS
@given(n=st.integers(0, 10_000), size=st.integers(1, 64))
def test_balanced_counts_properties(n, size):
    counts = lay.balanced_counts(n, size)
    assert len(counts) == size
    assert sum(counts) == n
    assert all(a >= b for a, b in itertools.pairwise(counts))
    assert max(counts) - min(counts) <= 1
    assert all(c >= 0 for c in counts)
    # exactly n % size ranks (the lowest) hold the extra row
    q, rem = divmod(n, size)
    assert counts == tuple([q + 1] * rem + [q] * (size - rem))


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        ((), ()),
        ((5,), (0,)),
        ((2, 2, 2, 1), (0, 2, 4, 6)),
        ((3, 2, 2), (0, 3, 5)),
        ((1, 1, 0), (0, 1, 2)),
        ((1, 0, 0), (0, 1, 1)),
        ((0, 0, 0), (0, 0, 0)),
        ((0, 4, 0, 1), (0, 0, 4, 4)),
        ([np.int64(2), np.int64(3)], (0, 2)),
    ],
)
def test_displacements(counts, expected):
    out = lay.displacements(counts)
    assert out == expected
    assert all(type(d) is int for d in out)


# ---------------------------------------------------------------------------
# chunk
# ---------------------------------------------------------------------------


def test_chunk_docstring_example():
    assert lay.chunk((7, 4), 0, 4, 3) == (6, (1, 4), (slice(6, 7), slice(0, 4)))


@pytest.mark.parametrize(
    ("n", "size", "offsets", "counts"),
    [
        (7, 3, (0, 3, 5), (3, 2, 2)),
        (7, 4, (0, 2, 4, 6), (2, 2, 2, 1)),
        (10, 3, (0, 4, 7), (4, 3, 3)),
        (2, 3, (0, 1, 2), (1, 1, 0)),
        (1, 3, (0, 1, 1), (1, 0, 0)),
        (0, 3, (0, 0, 0), (0, 0, 0)),
        (3, 6, (0, 1, 2, 3, 3, 3), (1, 1, 1, 0, 0, 0)),
    ],
)
def test_chunk_offsets_split0(n, size, offsets, counts):
    for rank in range(size):
        off, lshape, slices = lay.chunk((n, 3), 0, size, rank)
        assert off == offsets[rank]
        assert lshape == (counts[rank], 3)
        assert slices == (slice(offsets[rank], offsets[rank] + counts[rank]), slice(0, 3))


def test_chunk_empty_ranks_offset_is_n():
    n, size = 2, 5
    for rank in range(n, size):
        off, lshape, slices = lay.chunk((4, n, 3), 1, size, rank)
        assert off == n
        assert lshape == (4, 0, 3)
        assert slices == (slice(0, 4), slice(n, n), slice(0, 3))


@PROPS
@given(
    shape=st.lists(st.integers(0, 30), min_size=1, max_size=4).map(tuple),
    data=st.data(),
)
def test_chunk_matches_heat_formula(shape, data):
    split = data.draw(st.integers(0, len(shape) - 1))
    size = data.draw(st.integers(1, 8))
    rank = data.draw(st.integers(0, size - 1))
    start, count = heat_chunk_bounds(shape[split], size, rank)
    expected_lshape = tuple(count if i == split else s for i, s in enumerate(shape))
    expected_slices = tuple(
        slice(start, start + count) if i == split else slice(0, s) for i, s in enumerate(shape)
    )
    assert lay.chunk(shape, split, size, rank) == (start, expected_lshape, expected_slices)


@PROPS
@given(
    shape=st.lists(st.integers(0, 30), min_size=1, max_size=3).map(tuple),
    size=st.integers(1, 8),
    data=st.data(),
)
def test_chunk_slices_tile_the_axis(shape, size, data):
    split = data.draw(st.integers(0, len(shape) - 1))
    covered = []
    for rank in range(size):
        _, _, slices = lay.chunk(shape, split, size, rank)
        covered.extend(range(shape[split])[slices[split]])
    assert covered == list(range(shape[split]))


@pytest.mark.parametrize("shape", [(), (5,), (7, 4), (0, 3, 2)])
@pytest.mark.parametrize("rank", [0, 2])
def test_chunk_split_none(shape, rank):
    off, lshape, slices = lay.chunk(shape, None, 3, rank)
    assert off == 0
    assert lshape == shape
    assert type(lshape) is tuple
    assert slices == tuple(slice(0, s) for s in shape)


def test_chunk_split_none_list_shape_becomes_tuple():
    assert lay.chunk([2, 3], None, 2, 1) == (0, (2, 3), (slice(0, 2), slice(0, 3)))


@pytest.mark.parametrize(
    ("rank", "tname"), [(True, "bool"), (0.0, "float"), ("1", "str"), (None, "NoneType")]
)
def test_chunk_bad_rank_type(rank, tname):
    with pytest.raises(TypeError, match=rf"^`rank` must be an int, got {tname}$"):
        lay.chunk((7, 4), 0, 4, rank)


@pytest.mark.parametrize("rank", [-1, 4, 10])
def test_chunk_bad_rank_range(rank):
    msg = f"`rank` must be in [0, 3], got {rank}"
    with pytest.raises(ValueError, match=f"^{re.escape(msg)}$"):
        lay.chunk((7, 4), 0, 4, rank)


def test_chunk_rank_range_checked_for_split_none():
    with pytest.raises(ValueError, match=re.escape("`rank` must be in [0, 1], got 2")):
        lay.chunk((7, 4), None, 2, 2)


def test_chunk_numpy_rank_accepted():
    assert lay.chunk((7,), 0, 3, np.int64(2)) == (5, (2,), (slice(5, 7),))


# ---------------------------------------------------------------------------
# counts_displs_shape
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "axis", "size", "rank", "expected"),
    [
        ((7, 3), 0, 3, 0, ((3, 2, 2), (0, 3, 5), (9, 3))),
        ((7, 3), 0, 3, 1, ((3, 2, 2), (0, 3, 5), (6, 3))),
        ((7, 3), 0, 3, 2, ((3, 2, 2), (0, 3, 5), (6, 3))),
        ((3, 7), 1, 4, 3, ((2, 2, 2, 1), (0, 2, 4, 6), (3, 4))),
        ((2, 5), 0, 3, 2, ((1, 1, 0), (0, 1, 2), (0, 5))),
        ((4, 10, 2), 1, 3, 0, ((4, 3, 3), (0, 4, 7), (4, 12, 2))),
        ((0,), 0, 2, 1, ((0, 0), (0, 0), (0,))),
    ],
)
def test_counts_displs_shape(shape, axis, size, rank, expected):
    assert lay.counts_displs_shape(shape, axis, size, rank) == expected


# ---------------------------------------------------------------------------
# chunks_for
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "split", "counts", "expected"),
    [
        ((7, 4), 0, (2, 2, 2, 1), ((2, 2, 2, 1), (4,))),
        ((7, 4), 1, (1, 3), ((7,), (1, 3))),
        ((3, 0), None, None, ((3,), (0,))),
        ((0, 5), 0, (0, 0, 0), ((0, 0, 0), (5,))),
        ((2, 3, 4), 2, (0, 4, 0), ((2,), (3,), (0, 4, 0))),
        ((), None, None, ()),
        ((5,), 0, [np.int64(3), np.int64(2)], ((3, 2),)),
    ],
)
def test_chunks_for(shape, split, counts, expected):
    out = lay.chunks_for(shape, split, counts)
    assert out == expected
    assert all(type(v) is int for dim in out for v in dim)


# ---------------------------------------------------------------------------
# lshape_map_from_counts
# ---------------------------------------------------------------------------


def test_lshape_map_split0():
    m = lay.lshape_map_from_counts((7, 4), 0, (2, 2, 2, 1), 4)
    assert m.dtype == np.int64
    assert m.shape == (4, 2)
    np.testing.assert_array_equal(m, [[2, 4], [2, 4], [2, 4], [1, 4]])


def test_lshape_map_split_last():
    m = lay.lshape_map_from_counts((5, 6, 3), 2, (0, 3, 0), 3)
    assert m.dtype == np.int64
    np.testing.assert_array_equal(m, [[5, 6, 0], [5, 6, 3], [5, 6, 0]])


def test_lshape_map_split_none():
    m = lay.lshape_map_from_counts((5, 6), None, (), 3)
    assert m.dtype == np.int64
    np.testing.assert_array_equal(m, [[5, 6]] * 3)


@pytest.mark.parametrize("size", [1, 4])
def test_lshape_map_zero_dim(size):
    m = lay.lshape_map_from_counts((), None, (), size)
    assert m.dtype == np.int64
    assert m.shape == (size, 0)


def test_lshape_map_rows_are_independent():
    m = lay.lshape_map_from_counts((7, 4), 0, (4, 3), 2)
    m[0, 1] = 99
    assert m[1, 1] == 4


# ---------------------------------------------------------------------------
# counts_from_chunks / conforms
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("chunks", "split", "size", "expected"),
    [
        (((2, 2, 2, 1), (4,)), 0, 4, (2, 2, 2, 1)),
        (((7,), (1, 3)), 1, 2, (1, 3)),
        (((7,), (4,)), None, 3, ()),
        (((0, 0, 0), (5,)), 0, 3, (0, 0, 0)),
        ((), None, 2, ()),
        (((np.int64(3), np.int64(4)),), 0, 2, (3, 4)),
    ],
)
def test_counts_from_chunks_ok(chunks, split, size, expected):
    out = lay.counts_from_chunks(chunks, split, size)
    assert out == expected
    assert all(type(v) is int for v in out)
    assert lay.conforms(chunks, split, size) is True


@pytest.mark.parametrize(
    ("chunks", "split", "size", "msg"),
    [
        (((3, 4), (2,)), 0, 3, "chunks along split axis 0 must number 3, got 2"),
        (((7,), (1, 1, 1)), 1, 2, "chunks along split axis 1 must number 2, got 3"),
        (((3, 4), (1, 1)), 0, 2, "chunks along axis 1 must be a single chunk, got 2"),
        (((3, 4), (2,)), None, 2, "chunks along axis 0 must be a single chunk, got 2"),
        (((7,), (2,), (1, 1, 1)), 1, 1, "chunks along axis 2 must be a single chunk, got 3"),
    ],
)
def test_counts_from_chunks_invariant_violations(chunks, split, size, msg):
    with pytest.raises(ValueError, match=f"^{re.escape(msg)}$"):
        lay.counts_from_chunks(chunks, split, size)
    assert lay.conforms(chunks, split, size) is False


@pytest.mark.parametrize(
    ("chunks", "split"),
    [
        (((np.nan, np.nan), (4,)), 0),
        (((3, 4), (np.nan,)), 0),
        (((np.nan,), (4,)), None),
    ],
)
def test_conforms_unknown_chunk_sizes(chunks, split):
    assert lay.conforms(chunks, split, 2 if split == 0 else 1) is False


# ---------------------------------------------------------------------------
# validate_map
# ---------------------------------------------------------------------------


def _np_int_dtypes():
    return [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


@pytest.mark.parametrize("dtype", _np_int_dtypes())
def test_validate_map_numpy_ok(dtype):
    table = np.array([[1, 4], [3, 4]], dtype=dtype)
    out = lay.validate_map(table, (4, 4), 0, 2, "target_map")
    assert out == (1, 3)
    assert all(type(v) is int for v in out)


@pytest.mark.parametrize("dtype", [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8])
def test_validate_map_torch_ok(dtype):
    table = torch.tensor([[7, 0, 3], [7, 4, 3], [7, 0, 3]], dtype=dtype)
    assert lay.validate_map(table, (7, 4, 3), 1, 3, "lshape_map") == (0, 4, 0)


def test_validate_map_does_not_modify_input():
    table = torch.tensor([[2, 5], [5, 5]])
    before = table.clone()
    assert lay.validate_map(table, (7, 5), 0, 2, "target_map") == (2, 5)
    assert torch.equal(table, before)
    arr = np.array([[2, 5], [5, 5]])
    lay.validate_map(arr, (7, 5), 0, 2, "target_map")
    np.testing.assert_array_equal(arr, [[2, 5], [5, 5]])


def test_validate_map_torch_requires_grad_not_needed():
    # a non-leaf view of a tensor works too
    base = torch.tensor([[9, 1, 4], [9, 2, 4], [9, 3, 4], [9, 1, 4]])
    assert lay.validate_map(base[:, :], (9, 7, 4), 1, 4, "target_map") == (1, 2, 3, 1)


@pytest.mark.parametrize(
    ("value", "tname"),
    [
        ([[1, 4], [3, 4]], "list"),
        ("1,4;3,4", "str"),
        (((1, 4), (3, 4)), "tuple"),
        (None, "NoneType"),
        (3, "int"),
    ],
)
def test_validate_map_wrong_type(value, tname):
    msg = f"`target_map` must be a torch.Tensor or numpy.ndarray, got {tname}"
    with pytest.raises(TypeError, match=f"^{re.escape(msg)}$"):
        lay.validate_map(value, (4, 4), 0, 2, "target_map")


@pytest.mark.parametrize(
    ("value", "dname"),
    [
        (np.array([[1.0, 4.0], [3.0, 4.0]]), "float64"),
        (np.array([[1, 4], [3, 4]], dtype=np.float32), "float32"),
        (np.array([[True, False], [True, True]]), "bool"),
        (np.array([[1, 4], [3, 4]], dtype=np.complex64), "complex64"),
        (torch.tensor([[1.0, 4.0], [3.0, 4.0]]), "torch.float32"),
        (torch.tensor([[1, 4], [3, 4]], dtype=torch.float64), "torch.float64"),
        (torch.tensor([[True, True], [False, True]]), "torch.bool"),
        (torch.tensor([[1, 4], [3, 4]], dtype=torch.complex64), "torch.complex64"),
    ],
)
def test_validate_map_non_integer_dtype(value, dname):
    msg = f"`lshape_map` must have an integer dtype, got {dname}"
    with pytest.raises(TypeError, match=f"^{re.escape(msg)}$"):
        lay.validate_map(value, (4, 4), 0, 2, "lshape_map")


@pytest.mark.parametrize(
    ("value", "got"),
    [
        (np.array([1, 3]), "(2,)"),
        (np.array([[1, 4], [3, 4], [0, 4]]), "(3, 2)"),
        (np.array([[1, 4, 1], [3, 4, 1]]), "(2, 3)"),
        (torch.tensor([[[1, 4]], [[3, 4]]]), "(2, 1, 2)"),
        (np.zeros((0, 2), dtype=np.int64), "(0, 2)"),
    ],
)
def test_validate_map_wrong_shape(value, got):
    msg = f"`target_map` must have shape (2, 2), got {got}"
    with pytest.raises(ValueError, match=f"^{re.escape(msg)}$"):
        lay.validate_map(value, (4, 4), 0, 2, "target_map")


@pytest.mark.parametrize("make", [np.array, torch.tensor])
def test_validate_map_negative_entry_split_column(make):
    value = make([[5, 4], [-1, 4]])
    msg = "`target_map` must hold non-negative entries, got [-1, 4] for rank 1"
    with pytest.raises(ValueError, match=f"^{re.escape(msg)}$"):
        lay.validate_map(value, (4, 4), 0, 2, "target_map")


def test_validate_map_negative_reports_first_bad_rank():
    value = np.array([[2, 4], [3, -4], [-1, 4]])
    msg = "`target_map` must hold non-negative entries, got [3, -4] for rank 1"
    with pytest.raises(ValueError, match=f"^{re.escape(msg)}$"):
        lay.validate_map(value, (4, 4), 0, 3, "target_map")


def test_validate_map_negative_checked_before_sum():
    # sums correctly (4) despite a negative entry; must still be rejected
    value = np.array([[6, 4], [-2, 4]])
    with pytest.raises(ValueError, match="must hold non-negative entries"):
        lay.validate_map(value, (4, 4), 0, 2, "target_map")


@pytest.mark.parametrize("make", [np.array, torch.tensor])
def test_validate_map_non_split_column_mismatch(make):
    value = make([[1, 4, 3], [3, 4, 3], [0, 5, 3]])
    msg = "`target_map` column 1 must equal the global shape 4 on every rank, got 5 for rank 2"
    with pytest.raises(ValueError, match=f"^{re.escape(msg)}$"):
        lay.validate_map(value, (4, 4, 3), 0, 3, "target_map")


def test_validate_map_non_split_column_first_bad_axis():
    # shape (7, 4, 3), split=1: column 0 must be 7 and column 2 must be 3
    value = np.array([[7, 2, 3], [7, 2, 2], [6, 0, 3]])
    msg = "`target_map` column 0 must equal the global shape 7 on every rank, got 6 for rank 2"
    with pytest.raises(ValueError, match=f"^{re.escape(msg)}$"):
        lay.validate_map(value, (7, 4, 3), 1, 3, "target_map")


@pytest.mark.parametrize(
    ("make", "rows", "got"),
    [
        (torch.tensor, [[2, 4], [2, 4], [2, 4], [2, 4]], 8),
        (np.array, [[2, 4], [2, 4], [2, 4], [0, 4]], 6),
        (np.array, [[0, 4], [0, 4], [0, 4], [0, 4]], 0),
    ],
)
def test_validate_map_wrong_sum(make, rows, got):
    msg = f"`target_map` must sum to 7 along axis 0, got {got}"
    with pytest.raises(ValueError, match=f"^{re.escape(msg)}$"):
        lay.validate_map(make(rows), (7, 4), 0, 4, "target_map")


def test_validate_map_wrong_sum_exact_example():
    with pytest.raises(
        ValueError, match=re.escape("`target_map` must sum to 7 along axis 0, got 8")
    ):
        lay.validate_map(torch.tensor([[3, 4], [3, 4], [2, 4]]), (7, 4), 0, 3, "target_map")


def test_validate_map_wrong_sum_split1():
    value = np.array([[7, 1, 3], [7, 2, 3]])
    msg = "`target_map` must sum to 4 along axis 1, got 3"
    with pytest.raises(ValueError, match=f"^{re.escape(msg)}$"):
        lay.validate_map(value, (7, 4, 3), 1, 2, "target_map")


def test_validate_map_1d():
    assert lay.validate_map(np.array([[0], [5], [2]]), (7,), 0, 3, "target_map") == (0, 5, 2)


# ---------------------------------------------------------------------------
# plan_redistribution
# ---------------------------------------------------------------------------


def test_plan_docstring_example():
    assert lay.plan_redistribution((2, 2), (1, 3)) == (
        (Piece(0, 0, 1, False),),
        (Piece(0, 1, 2, False), Piece(1, 0, 2, True)),
    )


def test_plan_identity_is_all_whole():
    assert lay.plan_redistribution((3, 2, 2), (3, 2, 2)) == (
        (Piece(0, 0, 3, True),),
        (Piece(1, 0, 2, True),),
        (Piece(2, 0, 2, True),),
    )


def test_plan_balanced_to_shifted():
    # (2, 2, 2, 1) -> (1, 2, 2, 2): every boundary moves by one row
    assert lay.plan_redistribution((2, 2, 2, 1), (1, 2, 2, 2)) == (
        (Piece(0, 0, 1, False),),
        (Piece(0, 1, 2, False), Piece(1, 0, 1, False)),
        (Piece(1, 1, 2, False), Piece(2, 0, 1, False)),
        (Piece(2, 1, 2, False), Piece(3, 0, 1, True)),
    )


def test_plan_zero_count_sources():
    assert lay.plan_redistribution((0, 3, 0, 4, 0), (2, 5)) == (
        (Piece(1, 0, 2, False),),
        (Piece(1, 2, 3, False), Piece(3, 0, 4, True)),
    )


def test_plan_zero_count_targets():
    assert lay.plan_redistribution((4, 3), (0, 5, 0, 0, 2, 0)) == (
        (),
        (Piece(0, 0, 4, True), Piece(1, 0, 1, False)),
        (),
        (),
        (Piece(1, 1, 3, False),),
        (),
    )


def test_plan_gather_to_one_rank():
    assert lay.plan_redistribution((2, 0, 3), (0, 0, 5)) == (
        (),
        (),
        (Piece(0, 0, 2, True), Piece(2, 0, 3, True)),
    )


def test_plan_scatter_from_one_rank():
    assert lay.plan_redistribution((0, 6, 0), (2, 2, 2)) == (
        (Piece(1, 0, 2, False),),
        (Piece(1, 2, 4, False),),
        (Piece(1, 4, 6, False),),
    )


def test_plan_all_empty():
    assert lay.plan_redistribution((0, 0), (0, 0, 0)) == ((), (), ())


def test_plan_different_rank_counts():
    assert lay.plan_redistribution((7,), (3, 2, 2)) == (
        (Piece(0, 0, 3, False),),
        (Piece(0, 3, 5, False),),
        (Piece(0, 5, 7, False),),
    )
    assert lay.plan_redistribution((3, 2, 2), (7,)) == (
        (Piece(0, 0, 3, True), Piece(1, 0, 2, True), Piece(2, 0, 2, True)),
    )


@pytest.mark.parametrize(
    ("src", "dst", "a", "b"), [((2, 2), (1, 2), 4, 3), ((3,), (1, 1, 2), 3, 4)]
)
def test_plan_sum_mismatch(src, dst, a, b):
    with pytest.raises(ValueError, match=f"^`dst` must sum to {a}, got {b}$"):
        lay.plan_redistribution(src, dst)


counts_st = st.lists(st.integers(0, 20), min_size=1, max_size=6)


@st.composite
def src_dst(draw):
    src = draw(counts_st)
    total = sum(src)
    k = draw(st.integers(1, 6))
    cuts = sorted(draw(st.lists(st.integers(0, total), min_size=k - 1, max_size=k - 1)))
    bounds = [0, *cuts, total]
    dst = [bounds[i + 1] - bounds[i] for i in range(k)]
    return tuple(src), tuple(dst)


@PROPS
@given(src_dst())
def test_plan_reproduces_target_chunks(pair):
    src, dst = pair
    total = sum(src)
    data = np.arange(total) * 10 + 3
    plan, out = assemble(src, dst, data)
    assert len(plan) == len(dst)
    bounds = np.cumsum([0, *dst])
    for r in range(len(dst)):
        np.testing.assert_array_equal(out[r], data[bounds[r] : bounds[r + 1]])


@PROPS
@given(src_dst())
def test_plan_pieces_keep_global_order_and_are_valid(pair):
    src, dst = pair
    plan = lay.plan_redistribution(src, dst)
    src_off = np.cumsum([0, *src])
    rows = []
    n_pieces = 0
    for r, pieces in enumerate(plan):
        got = 0
        for p in pieces:
            assert isinstance(p, Piece)
            assert 0 <= p.src < len(src)
            assert 0 <= p.start < p.stop <= src[p.src]  # non-empty, inside its source
            assert p.whole == (p.start == 0 and p.stop == src[p.src])
            rows.extend(range(src_off[p.src] + p.start, src_off[p.src] + p.stop))
            got += p.stop - p.start
            n_pieces += 1
        assert got == dst[r]
        srcs = [p.src for p in pieces]
        assert srcs == sorted(set(srcs))  # strictly increasing within a target
    assert rows == list(range(sum(src)))
    assert n_pieces <= len(src) + len(dst) - 1
    if sum(src):
        nz = sum(c > 0 for c in src) + sum(c > 0 for c in dst)
        assert n_pieces <= nz - 1


@PROPS
@given(src_dst())
def test_moved_rows_matches_brute_force(pair):
    src, dst = pair
    assert lay.moved_rows(src, dst) == brute_moved(src, dst)


@PROPS
@given(counts_st)
def test_moved_rows_identity_is_zero(src):
    assert lay.moved_rows(src, src) == 0


@pytest.mark.parametrize(
    ("src", "dst", "expected"),
    [
        ((2, 2, 2, 1), (1, 2, 2, 2), 3),
        ((2, 2), (1, 3), 1),
        ((7,), (3, 2, 2), 4),
        ((3, 2, 2), (7,), 4),
        ((0, 0, 5), (5, 0, 0), 5),
        ((0, 6, 0), (2, 2, 2), 4),
        ((4, 3), (0, 5, 0, 0, 2, 0), 6),
        ((0, 0), (0, 0), 0),
    ],
)
def test_moved_rows_examples(src, dst, expected):
    assert lay.moved_rows(src, dst) == expected
    assert brute_moved(src, dst) == expected


def test_moved_rows_sum_mismatch():
    with pytest.raises(ValueError, match=r"^`dst` must sum to 3, got 4$"):
        lay.moved_rows((1, 2), (2, 2))


# ---------------------------------------------------------------------------
# reduced_split
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("split", "axes", "keepdims", "expected"),
    [
        (None, (0,), False, None),
        (None, (), True, None),
        (0, (0,), False, None),
        (0, (0,), True, None),
        (1, (0, 1, 2), False, None),
        (2, (0,), False, 1),
        (2, (0,), True, 2),
        (2, (0, 1), False, 0),
        (2, (0, 1), True, 2),
        (1, (2,), False, 1),
        (1, (2, 3), False, 1),
        (3, (0, 2), False, 1),
        (3, (0, 2), True, 3),
        (0, (), False, 0),
        (1, (1,), True, None),
    ],
)
def test_reduced_split(split, axes, keepdims, expected):
    assert lay.reduced_split(split, axes, keepdims) == expected


@PROPS
@given(ndim=st.integers(1, 6), data=st.data())
def test_reduced_split_tracks_the_axis(ndim, data):
    split = data.draw(st.integers(0, ndim - 1))
    axes = tuple(sorted(data.draw(st.sets(st.integers(0, ndim - 1)))))
    keepdims = data.draw(st.booleans())
    # follow the split axis through the reduction by labelling the axes
    labels = list(range(ndim))
    kept = [a for a in labels if a not in axes] if not keepdims else labels
    expected = None if split in axes else kept.index(split)
    assert lay.reduced_split(split, axes, keepdims) == expected


# ---------------------------------------------------------------------------
# Distribution and plan_relayout
# ---------------------------------------------------------------------------
# A Comm is plain data (worker addresses) until it computes, so these stay pure.


def comm_of_size(size: int):
    from dndask._comm import Comm

    return Comm([f"tcp://10.0.0.{r}:1" for r in range(size)])


def test_distribution_is_a_frozen_value():
    import dataclasses

    comm = comm_of_size(3)
    d = lay.Distribution(0, [3, np.int64(2), 2], comm)
    assert d.counts == (3, 2, 2) and all(type(c) is int for c in d.counts)
    assert d == lay.Distribution(0, (3, 2, 2), comm)
    assert hash(d) == hash(lay.Distribution(0, (3, 2, 2), comm))
    assert d != lay.Distribution(0, (3, 2, 2), comm_of_size(3).subcomm([0, 2, 1]))
    assert d != lay.Distribution(1, (3, 2, 2), comm)
    assert d.size == 3 and d.displs == (0, 3, 5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.split = 1


@pytest.mark.parametrize(
    ("split", "counts", "exc", "match"),
    [
        (0, (1, 2), ValueError, r"`counts` must have one entry per rank \(3\), got \(1, 2\)"),
        (0, (1, -2, 1), ValueError, "`counts` must be non-negative, got -2 for rank 1"),
        (None, (1, 1, 1), ValueError, r"`counts` must be \(\) for split=None, got \(1, 1, 1\)"),
        (True, (1, 1, 1), TypeError, "`split` must be None or an int, got bool"),
        (0, (1.0, 1, 1), TypeError, "`counts` must hold ints, got float"),
    ],
)
def test_distribution_rejects_bad_values(split, counts, exc, match):
    with pytest.raises(exc, match=match):
        lay.Distribution(split, counts, comm_of_size(3))


def test_distribution_checks_a_shape():
    comm = comm_of_size(2)
    assert lay.Distribution(1, (1, 2), comm).check((4, 3)).counts == (1, 2)
    with pytest.raises(ValueError, match="`counts` must sum to 4 along axis 0, got 3"):
        lay.Distribution(0, (1, 2), comm).check((4, 3))
    with pytest.raises(ValueError, match=r"`split` must be in \[0, 1\] for a 2-dimensional"):
        lay.Distribution(2, (1, 2), comm).check((4, 3))


def test_distribution_balanced_and_of_chunks():
    comm = comm_of_size(4)
    assert lay.Distribution.balanced((7, 4), 0, comm).counts == (2, 2, 2, 1)
    assert lay.Distribution.balanced((7, 4), None, comm).counts == ()
    d = lay.Distribution.of_chunks(((7,), (1, 0, 3, 0)), 1, comm)
    assert d == lay.Distribution(1, (1, 0, 3, 0), comm)
    assert not d.is_balanced((7, 4))
    assert lay.Distribution(1, (1, 1, 1, 1), comm).is_balanced((7, 4))
    assert d.lshape_map((7, 4)).tolist() == [[7, 1], [7, 0], [7, 3], [7, 0]]
    with pytest.raises(ValueError, match="chunks along split axis 1 must number 4, got 2"):
        lay.Distribution.of_chunks(((7,), (2, 2)), 1, comm)
    with pytest.raises(ValueError, match="`array` must have known chunk sizes"):
        lay.Distribution.of_chunks(((float("nan"),), (4,)), None, comm)


def split_by(g: np.ndarray, d) -> list[np.ndarray]:
    """``g``'s chunks under ``d`` (one chunk for split=None)."""
    return [g] if d.split is None else np.split(g, np.cumsum(d.counts)[:-1], axis=d.split)


def run_plan(plan, g: np.ndarray) -> list[np.ndarray]:
    """What the relayout graph does, on numpy chunks: every target chunk from its moves."""
    chunks = split_by(g, plan.src)
    out = []
    for moves in plan.pieces:
        parts = [chunks[m.src] if m.index is None else chunks[m.src][m.index] for m in moves]
        for m, part in zip(moves, parts, strict=True):
            assert part.size == m.elements
        out.append(np.concatenate(parts, axis=plan.axis) if parts else None)
    return out


def owner_of_every_element(shape, d) -> np.ndarray:
    """Brute force: the rank holding each element under ``d`` (rank 0 for split=None)."""
    if d.split is None:
        return np.zeros(shape, dtype=int)
    rows = np.repeat(np.arange(d.size), d.counts)
    index = [1] * len(shape)
    index[d.split] = shape[d.split]
    return np.broadcast_to(rows.reshape(index), shape)


@st.composite
def relayout_cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=ndim, max_size=ndim)))
    size = draw(st.integers(1, 5))
    comm = comm_of_size(size)

    def distribution():
        split = draw(st.sampled_from([None, *range(ndim)]))
        if split is None:
            return lay.Distribution(None, (), comm)
        cuts = sorted(
            draw(st.lists(st.integers(0, shape[split]), min_size=size - 1, max_size=size - 1))
        )
        counts = np.diff([0, *cuts, shape[split]]).tolist()
        return lay.Distribution(split, counts, comm)

    return shape, distribution(), distribution()


@PROPS
@given(relayout_cases())
def test_plan_relayout_builds_every_target_chunk(case):
    shape, src, dst = case
    g = np.arange(int(np.prod(shape))).reshape(shape)
    plan = lay.plan_relayout(shape, src, dst)
    got = run_plan(plan, g)
    expected = split_by(g, dst)
    assert len(got) == len(expected)
    for r, (chunk, want) in enumerate(zip(got, expected, strict=True)):
        if chunk is None:
            assert want.size == 0, r
        else:
            np.testing.assert_array_equal(chunk, want)


@PROPS
@given(relayout_cases())
def test_plan_relayout_moves_exactly_the_elements_that_change_rank(case):
    shape, src, dst = case
    plan = lay.plan_relayout(shape, src, dst)
    changed = owner_of_every_element(shape, src) != owner_of_every_element(shape, dst)
    assert plan.moved == int(changed.sum())
    # one rank: every split is one chunk per axis; more ranks: only the same distribution
    assert plan.is_identity == (src == dst or src.size == 1)


def test_plan_relayout_goes_straight_into_unbalanced_counts():
    # (4, 6) split 0 balanced on 2 ranks -> split 1 with counts (1, 5): rank 1 sends its
    # two rows' first column, rank 0 its two rows' last five columns
    comm = comm_of_size(2)
    plan = lay.plan_relayout(
        (4, 6), lay.Distribution(0, (2, 2), comm), lay.Distribution(1, (1, 5), comm)
    )
    assert plan.moved == 2 * 1 + 2 * 5
    via_balanced = (
        lay.plan_relayout(
            (4, 6), lay.Distribution(0, (2, 2), comm), lay.Distribution(1, (3, 3), comm)
        ).moved
        + lay.plan_relayout(
            (4, 6), lay.Distribution(1, (3, 3), comm), lay.Distribution(1, (1, 5), comm)
        ).moved
    )
    assert via_balanced == 2 * 3 + 2 * 3 + 2 * 4  # what resplit-then-redistribute moved
    assert plan.axis == 0
    assert [[m.src for m in moves] for moves in plan.pieces] == [[0, 1], [0, 1]]


def test_plan_relayout_needs_one_comm():
    with pytest.raises(ValueError, match="`dst` must be on the array's comm"):
        lay.plan_relayout(
            (4,),
            lay.Distribution(0, (2, 2), comm_of_size(2)),
            lay.Distribution(0, (2, 2), comm_of_size(3).subcomm([2, 1])),
        )
    with pytest.raises(ValueError, match="`counts` must sum to 4 along axis 0, got 5"):
        lay.plan_relayout(
            (4,),
            lay.Distribution(0, (2, 2), comm_of_size(2)),
            lay.Distribution(0, (2, 3), comm_of_size(2)),
        )


def counts_patterns(total: int, size: int) -> list[tuple[int, ...]]:
    """Counts of ``total`` rows on ``size`` ranks: balanced, all on the last rank, rank 0 empty."""
    last = (0,) * (size - 1) + (total,)
    skip_first = (0, *lay.balanced_counts(total, size - 1)) if size > 1 else (total,)
    return sorted({lay.balanced_counts(total, size), last, skip_first})


def distributions_of(shape, size: int) -> list:
    comm = comm_of_size(size)
    out = [lay.Distribution(None, (), comm)]
    for split in range(len(shape)):
        out += [lay.Distribution(split, c, comm) for c in counts_patterns(shape[split], size)]
    return out


def assert_naive_pieces(shape, src, dst, plan) -> None:
    """``plan`` holds exactly the pieces of the naive interval intersection (conftest)."""
    naive = naive_pieces(shape, src, dst)
    t = plan.table
    assert len(plan.pieces) == len(naive)
    assert t.dst.tolist() == [r for r, pieces in enumerate(naive) for _ in pieces]
    assert t.bounds.tolist() == np.cumsum([0] + [len(p) for p in naive]).tolist()
    row = 0
    for moves, pieces in zip(plan.pieces, naive, strict=True):
        assert [m.src for m in moves] == [s for s, _ in pieces]
        for m, (s, box) in zip(moves, pieces, strict=True):
            lshape = [src.counts[s] if ax == src.split else n for ax, n in enumerate(shape)]
            chunk = np.arange(int(np.prod(lshape))).reshape(lshape)
            want = chunk[tuple(slice(lo, hi) for lo, hi in box)]
            got = chunk if m.index is None else chunk[m.index]
            np.testing.assert_array_equal(got, want)
            assert got.shape == want.shape
            assert (m.index is None) == (want.shape == chunk.shape)
            assert m.elements == want.size
            row += 1
    assert row == len(t.src)


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("shape", [(6,), (5, 4, 3), (4, 0), (0, 3)])
def test_plan_relayout_is_the_naive_interval_intersection(shape, size):
    # every pair of distributions: each split and None, with and without empty ranks
    dists = distributions_of(shape, size)
    for src, dst in itertools.product(dists, dists):
        assert_naive_pieces(shape, src, dst, lay.plan_relayout(shape, src, dst))


@PROPS
@given(relayout_cases())
def test_plan_relayout_is_the_naive_interval_intersection_on_random_counts(case):
    shape, src, dst = case
    assert_naive_pieces(shape, src, dst, lay.plan_relayout(shape, src, dst))


def test_plan_pieces_regrids_chunk_counts_of_different_lengths():
    # Dask's chunks (3 of them, one empty) onto 5 chunks (two empty): no comm check
    src = lay.Distribution(0, (3, 0, 4), comm_of_size(3))
    dst = lay.Distribution(0, (2, 2, 0, 3, 0), comm_of_size(5))
    plan = lay.plan_pieces((7, 2), src, dst)
    assert_naive_pieces((7, 2), src, dst, plan)
    assert [[(m.src, m.index) for m in ms] for ms in plan.pieces] == [
        [(0, (slice(0, 2), slice(None)))],
        [(0, (slice(2, 3), slice(None))), (2, (slice(0, 1), slice(None)))],
        [],
        [(2, (slice(1, 4), slice(None)))],
        [],
    ]
    with pytest.raises(ValueError, match="`dst` must sum to 7, got 8"):
        lay.plan_pieces((7, 2), src, dst.with_counts((2, 2, 1, 3, 0)))


def test_plan_pieces_are_a_sequence_of_target_chunks():
    comm = comm_of_size(3)
    plan = lay.plan_relayout(
        (3, 4), lay.Distribution(0, (1, 1, 1), comm), lay.Distribution(1, (2, 0, 2), comm)
    )
    pieces = plan.pieces
    assert len(pieces) == 3 and pieces[1] == () and pieces[-1] == pieces[2]
    assert pieces[0] == tuple(lay.Move(s, (slice(None), slice(0, 2)), 2) for s in range(3))
    assert pieces[0:3:2] == (pieces[0], pieces[2]) and list(pieces) == [pieces[i] for i in range(3)]
    with pytest.raises(IndexError, match="target chunk 3 out of range for 3 target chunks"):
        pieces[3]


def test_a_resplit_plan_at_1024_ranks_is_columns_not_objects():
    # 0 -> 1 on 1024 ranks: every rank sends to every rank, P**2 pieces in a few arrays
    p = 1024
    comm = comm_of_size(p)
    shape = (4 * p + 3, 2 * p + 1)
    src, dst = lay.Distribution.balanced(shape, 0, comm), lay.Distribution.balanced(shape, 1, comm)
    plan = lay.plan_relayout(shape, src, dst)
    t = plan.table
    assert len(t.src) == p * p and t.src.dtype == np.int64
    rows, cols = np.asarray(src.counts), np.asarray(dst.counts)
    assert plan.moved == shape[0] * shape[1] - int(rows @ cols)  # all but the diagonal
    assert [m.src for m in plan.pieces[p - 1]] == list(range(p))
    # target 5 takes columns 11:13 (rank 0 holds 3 columns, the rest 2); rank 7 holds 4 rows
    assert plan.pieces[5][7] == lay.Move(7, (slice(None), slice(11, 13)), 4 * 2)


@pytest.mark.parametrize(
    ("dims", "ndim", "strings", "match"),
    [
        (("a",), 2, False, r"`dims` must name 2 dimensions, got 1: \('a',\)"),
        (("a", "a"), 2, False, r"`dims` must not repeat a name, got \('a', 'a'\)"),
        (("a",), 2, True, r"`dims` must be 2 dimension names, got \('a',\)"),
        (("a", ""), 2, True, r"`dims` must be 2 dimension names, got \('a', ''\)"),
        (("a", 3), 2, True, r"`dims` must be 2 dimension names, got \('a', 3\)"),
    ],
)
def test_normalize_dims_errors(dims, ndim, strings, match):
    with pytest.raises(ValueError, match=match):
        lay.normalize_dims(dims, ndim, strings=strings)


def test_normalize_dims_values():
    assert lay.normalize_dims(None, 3) == ("dim_0", "dim_1", "dim_2")
    assert lay.normalize_dims(("t", 3), 2) == ("t", 3)  # xarray takes any hashable
    assert lay.normalize_dims("t", 1, strings=True) == ("t",)


def test_plan_moves_takes_given_pieces_and_checks_them():
    comm = comm_of_size(3)
    src, dst = lay.Distribution(0, (3, 0, 4), comm), lay.Distribution(0, (2, 5, 0), comm)
    moves = np.array([[0, 2, 0, 2], [1, 0, 0, 3], [1, 2, 2, 4]])
    plan = lay.plan_moves(src, dst, moves)
    t = plan.table
    assert t.bounds.tolist() == [0, 1, 3, 3] and t.dst.tolist() == [0, 1, 1]
    assert t.src.tolist() == [2, 0, 2] and t.whole.tolist() == [False, True, False]
    assert t.elements.tolist() == [2, 3, 2] and plan.moved == 7 and plan.shape == (7,)
    # the pieces need not follow the global order: target 0 may take source 2's rows
    plan = lay.plan_moves(src, dst, np.array([[0, 2, 2, 4], [1, 0, 0, 3], [1, 2, 0, 2]]))
    assert plan.table.start.tolist() == [2, 0, 0]
    bad = [
        (lay.Distribution(1, (3, 0, 4), comm), dst, moves, "must be split 0, got 1 and 0"),
        (src, dst, moves[::-1], "must list targets 0 to 2 in order"),
        (src, dst, np.array([[0, 1, 0, 2], [1, 0, 0, 5]]), "must lie inside their source"),
        (src, dst, moves[:2], r"must give the targets \[2, 5, 0\] rows, got \[2, 3, 0\]"),
        (
            src,
            dst,
            np.array([[0, 2, 0, 2], [1, 2, 2, 4], [1, 2, 0, 0], [1, 0, 0, 3]]),
            "at most one",
        ),
    ]
    for s_, d_, m, match in bad:
        with pytest.raises(ValueError, match=match):
            lay.plan_moves(s_, d_, m)
