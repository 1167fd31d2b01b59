"""Shape manipulation against numpy: values, split, chunk invariant, and what moves.

"What moves" is read off the task graph: for every rank of a result, the
ranks of the source whose chunks its chunk depends on. A local operation
reads only its own rank; the planned ones read exactly the ranks whose rows
they need.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch
from conftest import LayoutBatch, assert_layout, holders, layouts, received_bytes
from dask.core import get_dependencies

import dndask as ht
from dndask import _layout, _transport
from dndask._manipulation import _plan


# --------------------------------------------------------------------- helpers
def data(shape, dtype=np.int64) -> np.ndarray:
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


def skewed(n: int, size: int) -> list[int]:
    """Rank 0 empty, the rows balanced over the other ranks (all of them on one rank if P=2)."""
    if size == 1:
        return [n]
    return [0, *_layout.balanced_counts(n, size - 1)]


def make(g: np.ndarray, split, comm, uneven: bool = False) -> ht.DNDarray:
    a = ht.array(g, split=split, comm=comm)
    if uneven and split is not None:
        target = a.lshape_map
        target[:, split] = torch.tensor(skewed(g.shape[split], comm.size))
        a.redistribute_(target_map=target)
    return a


def counts(a: ht.DNDarray) -> list[int]:
    return a.lshape_map[:, a.split].tolist()


def source_ranks(out: ht.DNDarray, src: ht.DNDarray) -> list[set[int]]:
    """For every rank of ``out``, the ranks of ``src`` whose chunks its chunk reads."""
    dsk = dict(out.to_dask().__dask_graph__())
    owner = {key: r for r, key in enumerate(src._chunk_keys())}
    result = []
    for key in out._chunk_keys():
        ranks, seen, stack = set(), set(), [key]
        while stack:
            k = stack.pop()
            if k in owner:
                ranks.add(owner[k])
            elif k not in seen and k in dsk:
                seen.add(k)
                stack.extend(reads(dsk, k))
        result.append(ranks)
    return result


def reads(dsk, key) -> list:
    """The keys whose data the task ``key`` reads.

    Its dependencies, but for a shared-memory collect: it depends on every post through
    the barrier (metadata), and reads the files of the posts its spec names.
    """
    deps = list(get_dependencies(dsk, key))
    files = _transport.file_sources(dsk[key])
    if not files:
        return deps
    barrier = [d for d in deps if _transport.is_control(d)]
    posts = [p for b in barrier for p in get_dependencies(dsk, b) if p[1] in files]
    return [d for d in deps if d not in barrier] + posts


def remote_reads(out: ht.DNDarray, src: ht.DNDarray) -> list[set[int]]:
    """For every rank of ``out``, the other ranks of ``src`` that send it data."""
    return [ranks - {r} for r, ranks in enumerate(source_ranks(out, src))]


def own_rank_only(out: ht.DNDarray, src: ht.DNDarray) -> bool:
    """Every chunk of ``out`` reads at most its own rank's chunk of ``src``: nothing moves."""
    return all(ranks <= {r} for r, ranks in enumerate(source_ranks(out, src)))


def overlapping_all(src_counts, dst_counts, src_scale=1, dst_scale=1) -> list[set[int]]:
    """Source chunks whose (scaled) row ranges overlap each target rank's range."""
    src_off = np.cumsum([0, *src_counts]) * src_scale
    dst_off = np.cumsum([0, *dst_counts]) * dst_scale
    out = []
    for r in range(len(dst_counts)):
        lo, hi = dst_off[r], dst_off[r + 1]
        out.append(
            {s for s in range(len(src_counts)) if max(lo, src_off[s]) < min(hi, src_off[s + 1])}
        )
    return out


def overlapping(src_counts, dst_counts, src_scale=1, dst_scale=1) -> list[set[int]]:
    """Other source ranks whose rows each target rank needs (what must travel)."""
    full = overlapping_all(src_counts, dst_counts, src_scale, dst_scale)
    return [ranks - {r} for r, ranks in enumerate(full)]


def snapshot(a: ht.DNDarray):
    return a.lshape_map.tolist(), a.split, a.to_dask().name


def assert_unchanged(a: ht.DNDarray, before, values: np.ndarray, batch=None) -> None:
    assert snapshot(a) == before
    if batch is None:
        np.testing.assert_array_equal(a.numpy(), values)
    else:
        batch.expect(a, values)


def local_axis(shape, split, new_shape, k) -> bool:
    """Independent check that axis ``k`` of ``new_shape`` keeps ``split``'s rows on their rank."""
    if shape[split] <= 1 or 0 in shape:  # one rank holds everything, or nobody anything
        return new_shape[k] == shape[split]
    return (
        new_shape[k] == shape[split]
        and int(np.prod(new_shape[:k])) == int(np.prod(shape[:split]))
        and int(np.prod(new_shape[k + 1 :])) == int(np.prod(shape[split + 1 :]))
    )


# --------------------------------------------------------------------- reshape
RESHAPES = {
    (6, 4): [(4, 6), (2, 3, 4), (6, 2, 2)],
    (3, 2, 4): [(6, 4), (3, 8), (3, 2, 2, 2)],
    (5,): [(5, 1), (1, 5)],
    (3, 0): [(0, 3), (3, 0, 1)],
}
FEW_RANKS = (1, 3, 5)  # one rank, uneven shares, and more ranks than rows


def check_reshape(a: ht.DNDarray, g: np.ndarray, target, new_split, batch=None) -> None:
    """``a.reshape(target)`` against numpy and what moved (its values at ``batch``'s check)."""
    expected = g.reshape(target)
    b = a.reshape(target, new_split=new_split)
    if new_split is not None:
        split = new_split
    elif a.split is None:
        split = None
    else:
        split = a.split if a.split < expected.ndim else b.split
    if batch is None:
        assert_layout(b, expected, split, a.comm)
    else:
        batch.add(b, expected, split, a.comm)
    if a.split is None:
        if new_split is None:
            assert own_rank_only(b, a)
        else:  # sliced off the single chunk on rank 0
            assert all(ranks <= {0} for ranks in source_ranks(b, a))
        return
    if local_axis(g.shape, a.split, expected.shape, split):
        assert counts(b) == counts(a)  # counts kept: each rank reshaped its own chunk
        assert own_rank_only(b, a)
    elif g.size and a.split == 0 and split == 0:
        # flat ranges moved with minimal movement: each rank reads the ranks it overlaps
        inner_in, inner_out = g.size // g.shape[0], g.size // expected.shape[0]
        assert b.balanced
        assert remote_reads(b, a) == overlapping(counts(a), counts(b), inner_in, inner_out)
    else:
        assert b.balanced


@pytest.mark.parametrize(("shape", "split", "n"), layouts(list(RESHAPES), FEW_RANKS))
def test_reshape_matches_numpy_on_every_split(comm_of, shape, split, n):
    comm = comm_of(n)
    g = data(shape)
    a = make(g, split, comm, uneven=True)
    before = snapshot(a)
    with LayoutBatch() as batch:  # the values of every reshape (and of ``a``) in one round trip
        for target in RESHAPES[shape]:
            for new_split in {None, 0, len(target) - 1}:
                check_reshape(a, g, target, new_split, batch)
        assert_unchanged(a, before, g, batch)


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("split", [None, 0, 1])
def test_reshape_balanced_inputs(comm_of, n, split):
    comm = comm_of(n)
    g = data((6, 4))
    a = make(g, split, comm)
    for target in [(24,), (-1, 8), (6, 4, 1), (2, 3, 4)]:
        check_reshape(a, g, target, None)


def test_reshape_argument_forms_and_default_split(comm_of):
    comm = comm_of(3)
    g = data((2, 3, 4))
    a = ht.array(g, split=2, comm=comm)
    assert_layout(a.reshape(6, 4), g.reshape(6, 4), 1, comm)  # split 2 gone: the local axis
    assert counts(a.reshape(6, 4)) == counts(a)
    assert_layout(ht.reshape(a, [24]), g.reshape(24), 0, comm)  # no local axis: the last one
    assert_layout(a.reshape(torch.Size((4, 6))), g.reshape(4, 6), 1, comm)
    assert_layout(a.reshape(np.int64(24)), g.reshape(24), 0, comm)
    one = ht.array(np.array([[7]]), split=1, comm=comm)
    assert_layout(one.reshape(()), np.array(7), None, comm)
    plain = ht.array(g, comm=comm)  # split=None: stays None unless new_split is given
    assert_layout(plain.reshape(4, 6), g.reshape(4, 6), None, comm)
    b = plain.reshape(4, 6, new_split=1)
    assert_layout(b, g.reshape(4, 6), 1, comm)
    assert b.balanced


def test_reshape_bad_input_leaves_array_unchanged(comm_of):
    comm = comm_of(3)
    g = data((3, 6))
    a = ht.array(g, split=0, comm=comm)
    before = snapshot(a)
    with pytest.raises(ValueError, match=r"^`shape` \(4, 5\) must have 18 elements, got 20$"):
        a.reshape(4, 5)
    with pytest.raises(ValueError, match=r"`shape` must hold at most one -1, got \(-1, -1\)"):
        a.reshape(-1, -1)
    with pytest.raises(ValueError, match=r"`shape` \(4, -1\) cannot hold 18 elements"):
        a.reshape(4, -1)
    with pytest.raises(ValueError, match=r"`shape` must hold non-negative ints"):
        a.reshape(-3, -6)
    with pytest.raises(TypeError, match="`shape` must hold ints, got float"):
        a.reshape(3.0, 6)
    with pytest.raises(TypeError, match="`shape` is required"):
        a.reshape()
    with pytest.raises(ValueError, match=r"`new_split` must be in \[-2, 1\]"):
        a.reshape(6, 3, new_split=2)
    with pytest.raises(TypeError, match="`new_split` must be None or an int, got float"):
        a.reshape(6, 3, new_split=1.0)
    with pytest.raises(TypeError, match="`a` must be a DNDarray, got ndarray"):
        ht.reshape(g, 18)
    assert_unchanged(a, before, g)


@pytest.mark.parametrize(("shape", "split", "n"), layouts([(3, 4), (2, 0, 3), (5,)], FEW_RANKS))
def test_flatten_and_ravel(comm_of, shape, split, n):
    comm = comm_of(n)
    g = data(shape)
    a = make(g, split, comm, uneven=True)
    expected_split = None if split is None else 0
    for fn in (ht.flatten, lambda x: x.ravel()):
        b = fn(a)
        assert_layout(b, g.ravel(), expected_split, comm)
    if split == 0 and g.size:
        inner = g.size // shape[0]
        assert remote_reads(b, a) == overlapping(counts(a), counts(b), inner, 1)


# ------------------------------------------------------------ axis permutations
@pytest.mark.parametrize(("shape", "split", "n"), layouts([(2, 3, 4)]) + layouts([(3, 0, 2)], (5,)))
def test_transpose_swapaxes_moveaxis_are_local(comm_of, shape, split, n):
    comm = comm_of(n)
    g = data(shape)
    a = make(g, split, comm, uneven=True)
    cases = [
        (ht.transpose(a), g.transpose(), None),
        (a.T, g.T, None),
        (a.transpose(1, 2, 0), g.transpose(1, 2, 0), (1, 2, 0)),
        (ht.transpose(a, [-1, 0, 1]), g.transpose(2, 0, 1), (2, 0, 1)),
        (a.swapaxes(0, -1), g.swapaxes(0, 2), (2, 1, 0)),
        (ht.moveaxis(a, [0, 1], [2, 0]), np.moveaxis(g, [0, 1], [2, 0]), (1, 2, 0)),
    ]
    for b, expected, perm in cases:
        perm = perm if perm is not None else (2, 1, 0)
        new_split = None if split is None else perm.index(split)
        assert_layout(b, expected, new_split, comm)
        if split is not None:
            assert counts(b) == counts(a)
        assert own_rank_only(b, a)


def test_transpose_family_bad_input(comm_of):
    comm = comm_of(2)
    g = data((2, 3, 4))
    a = ht.array(g, split=1, comm=comm)
    before = snapshot(a)
    with pytest.raises(
        ValueError, match="`axes` must hold 3 axes for a 3-dimensional array, got 2"
    ):
        a.transpose(1, 0)
    with pytest.raises(ValueError, match=r"`axes` must not repeat an axis, got \(0, 0, 1\)"):
        a.transpose(0, 0, 1)
    with pytest.raises(ValueError, match=r"`axes` must be in \[-3, 2\] .* got 3"):
        a.transpose(0, 1, 3)
    with pytest.raises(TypeError, match="`axes` must be an int or a tuple of ints, got str"):
        ht.transpose(a, "ab")
    with pytest.raises(ValueError, match=r"`axis2` must be in \[-3, 2\]"):
        a.swapaxes(0, 5)
    with pytest.raises(ValueError, match="`source` and `destination` must hold as many axes"):
        ht.moveaxis(a, (0, 1), 2)
    with pytest.raises(ValueError, match="`destination` must not repeat an axis"):
        ht.moveaxis(a, (0, 1), (2, 2))
    assert_unchanged(a, before, g)


# -------------------------------------------------------------- length-one axes
@pytest.mark.parametrize(("shape", "split", "n"), layouts([(3, 1, 4), (1, 5)], FEW_RANKS))
def test_expand_dims_and_squeeze(comm_of, shape, split, n):
    comm = comm_of(n)
    g = data(shape)
    a = make(g, split, comm, uneven=True)
    for axis in (-1, (0, 2)):
        b = ht.expand_dims(a, axis)
        expected = np.expand_dims(g, axis)
        ndim = expected.ndim
        new_axes = {x % ndim for x in (axis if isinstance(axis, tuple) else (axis,))}
        kept = [i for i in range(ndim) if i not in new_axes]
        assert_layout(b, expected, None if split is None else kept[split], comm)
        assert own_rank_only(b, a)
    assert_layout(
        a.expand_dims(1),
        np.expand_dims(g, 1),
        None if split is None else split + (split >= 1),
        comm,
    )
    ones = tuple(i for i, s in enumerate(shape) if s == 1)
    for axis in (None, ones[0], ones):
        b = a.squeeze(axis)
        expected = np.squeeze(g, axis)
        squeezed = ones if axis is None else (axis if isinstance(axis, tuple) else (axis,))
        if split is None or split in squeezed:
            assert_layout(b, expected, None, comm)
        else:
            assert_layout(b, expected, split - sum(1 for i in squeezed if i < split), comm)
            assert counts(b) == counts(a)
            assert own_rank_only(b, a)
        if split is not None and split in squeezed:
            holder = counts(a).index(1)
            assert source_ranks(b, a) == [{holder}]  # only the rank holding the row sends


def test_expand_dims_squeeze_bad_input(comm_of):
    comm = comm_of(3)
    g = data((3, 1, 4))
    a = ht.array(g, split=0, comm=comm)
    before = snapshot(a)
    with pytest.raises(
        ValueError, match="`axis` must name axes of length 1, got axis 0 of length 3"
    ):
        a.squeeze(0)
    with pytest.raises(
        ValueError, match="`axis` must name axes of length 1, got axis 2 of length 4"
    ):
        ht.squeeze(a, (1, 2))
    with pytest.raises(ValueError, match=r"`axis` must be in \[-3, 2\]"):
        a.squeeze(3)
    with pytest.raises(ValueError, match=r"`axis` must not repeat an axis"):
        ht.expand_dims(a, (0, 0))
    with pytest.raises(ValueError, match=r"`axis` must be in \[-5, 4\]"):
        ht.expand_dims(a, (0, 5))
    with pytest.raises(TypeError, match="`axis` must be an int or a tuple of ints, got NoneType"):
        ht.expand_dims(a, None)
    with pytest.raises(TypeError, match="`axis` must be an int or a tuple of ints, got float"):
        ht.expand_dims(a, 1.0)
    assert_unchanged(a, before, g)


# --------------------------------------------------------------------- joining
SPLIT_PAIRS = [(s, t) for s in (None, 0, 1) for t in (None, 0, 1)]


@pytest.mark.parametrize("n", FEW_RANKS)
@pytest.mark.parametrize(("s", "t"), SPLIT_PAIRS)
def test_concatenate_two_operands_on_every_split(comm_of, n, s, t):
    comm = comm_of(n)
    g, h = data((5, 3)), data((2, 3), np.float32) + 100
    for axis, (g2, h2) in ((0, (g, h)), (1, (g.T[:3], h.T))):
        a, b = make(g2, s, comm, uneven=True), make(h2, t, comm)
        before = snapshot(a), snapshot(b)
        c = ht.concatenate([a, b], axis=axis)
        split = s if s is not None else t
        assert_layout(c, np.concatenate([g2, h2], axis=axis), split, comm)
        if split is None:
            continue
        ref = a if s is not None else b
        if axis == split:
            assert c.balanced
            if {s, t} <= {None, split}:  # no resplit: each rank reads only rows it needs
                sizes = [counts(x) if x.split is not None else [x.shape[split]] for x in (a, b)]
                reads = overlapping_all([c for cs in sizes for c in cs], counts(c))
                offset = len(sizes[0])
                assert source_ranks(c, a) == [{i for i in e if i < offset} for e in reads]
                assert source_ranks(c, b) == [{i - offset for i in e if i >= offset} for e in reads]
        else:
            assert counts(c) == counts(ref)  # the reference's counts, no rebalance
            assert own_rank_only(c, ref)
        assert (snapshot(a), snapshot(b)) == before


@pytest.mark.parametrize("n", [1, 3, 5])
def test_concatenate_many_mixed_operands(comm_of, n):
    comm = comm_of(n)
    g = data((3, 2, 4))
    a = make(g, 1, comm, uneven=True)
    b = ht.array(g + 1, split=0, comm=comm)
    c = ht.array(g.astype(np.float32), comm=comm)
    arrays = [a, g + 2, b, torch.from_numpy(g + 3), c]
    expected = [g, g + 2, g + 1, g + 3, g.astype(np.float32)]
    for axis in (0, 1, 2, -1):
        out = ht.concatenate(arrays, axis=axis)
        assert_layout(out, np.concatenate(expected, axis=axis), 1, comm)
    out = ht.concatenate(arrays, axis=None)
    assert_layout(out, np.concatenate(expected, axis=None), 0, comm)
    assert_layout(ht.concatenate([g, c]), np.concatenate([g, g.astype(np.float32)]), None, comm)
    single = ht.concatenate((a,), axis=0)
    assert_layout(single, g, 1, comm)
    assert counts(single) == counts(a)  # along a non-split axis the counts stay
    assert ht.concatenate((a,), axis=1).balanced  # along the split axis: balanced
    empty = ht.zeros((0, 2, 4), split=0, comm=comm)
    assert_layout(
        ht.concatenate([empty, a, empty]), np.concatenate([g[:0], g]).astype(np.float64), 0, comm
    )


@pytest.mark.parametrize("n", FEW_RANKS)
@pytest.mark.parametrize("split", [None, 0, 1])
def test_stack_vstack_hstack(comm_of, n, split):
    comm = comm_of(n)
    g = data((4, 3))
    a = make(g, split, comm, uneven=True)
    b = ht.array(g * 2, comm=comm)
    for axis in (0, -1):
        out = ht.stack([a, b, g * 3], axis=axis)
        new_split = None if split is None else split + (axis % 3 <= split)
        assert_layout(out, np.stack([g, g * 2, g * 3], axis=axis), new_split, comm)
        if split is not None:
            assert counts(out) == counts(a)
            assert own_rank_only(out, a)
    assert_layout(ht.vstack([a, b]), np.vstack([g, g * 2]), split, comm)
    assert_layout(ht.hstack([a, b]), np.hstack([g, g * 2]), split, comm)
    v = data((5,))
    c = make(v, None if split is None else 0, comm, uneven=True)
    one_d = None if split is None else 1
    assert_layout(ht.vstack([c, v]), np.vstack([v, v]), one_d, comm)
    assert_layout(ht.hstack([c, v]), np.hstack([v, v]), None if split is None else 0, comm)
    s = ht.array(np.array(7), comm=comm)
    assert_layout(
        ht.hstack([s, c]), np.hstack([np.array(7), v]), None if split is None else 0, comm
    )
    assert_layout(ht.vstack([s, s]), np.vstack([7, 7]), None, comm)


def test_joins_bad_input(comm_of):
    comm = comm_of(3)
    g = data((3, 4))
    a = ht.array(g, split=0, comm=comm)
    b = ht.array(data((3, 5)), comm=comm)
    before = snapshot(a)
    with pytest.raises(ValueError, match="`arrays` of `concatenate` must hold at least one array"):
        ht.concatenate([])
    with pytest.raises(
        ValueError,
        match=r"must have the same shape except along axis 0, got DNDarray\(shape=\(3, 4\), "
        r"split=0\) at 0 and DNDarray\(shape=\(3, 5\), split=None\) at 1",
    ):
        ht.concatenate([a, b])
    with pytest.raises(ValueError, match="must have the same number of dimensions"):
        ht.concatenate([a, data((12,))])
    with pytest.raises(ValueError, match="must be at least 1-dimensional"):
        ht.concatenate([a, np.array(1)])
    with pytest.raises(ValueError, match=r"`axis` must be in \[-2, 1\]"):
        ht.concatenate([a, a], axis=2)
    other = ht.array(g, split=0, comm=comm_of(2))
    with pytest.raises(
        ValueError, match=r"`arrays` of `concatenate` must share one comm, got .* at 0 and .* at 1"
    ):
        ht.concatenate([a, other])
    with pytest.raises(
        TypeError, match="must hold DNDarrays, numpy arrays or torch tensors, got list at 1"
    ):
        ht.concatenate([a, [1, 2]])
    with pytest.raises(TypeError, match="must hold at least one DNDarray"):
        ht.concatenate([g, g])
    with pytest.raises(TypeError, match="`arrays` must be a list or tuple of arrays, got DNDarray"):
        ht.concatenate(a)
    with pytest.raises(
        ValueError, match=r"`stack` must all have the same shape, got .* at 0 and .*\(3, 5\).* at 1"
    ):
        ht.stack([a, b])
    with pytest.raises(ValueError, match=r"`axis` must be in \[-3, 2\]"):
        ht.stack([a, a], axis=3)
    with pytest.raises(
        ValueError, match="`arrays` of `vstack` must have the same shape except along axis 0"
    ):
        ht.vstack([a, b])
    with pytest.raises(
        ValueError, match="`arrays` of `hstack` must have the same shape except along axis 1"
    ):
        ht.hstack([a, data((2, 4))])
    assert_unchanged(a, before, g)


# ---------------------------------------------------------------- reordering
@pytest.mark.parametrize(("shape", "split", "n"), layouts([(7, 3), (3,), (2, 0)], FEW_RANKS))
def test_flip_mirrors_ranks_along_split(comm_of, shape, split, n):
    comm = comm_of(n)
    g = data(shape)
    a = make(g, split, comm, uneven=True)
    axes_list = [None, 0, (-1,)] if len(shape) == 2 else [0]
    for axis in axes_list:
        b = ht.flip(a, axis)
        assert_layout(b, np.flip(g, axis), split, comm)
        if split is None:
            continue
        flipped = set(_layout.normalize_axes(axis, len(shape)))
        if split in flipped:
            assert counts(b) == counts(a)[::-1]
            assert all(ranks <= {n - 1 - r} for r, ranks in enumerate(source_ranks(b, a)))
        else:
            assert counts(b) == counts(a)
            assert own_rank_only(b, a)


@pytest.mark.parametrize(
    ("shape", "split", "n"), layouts([(7, 3), (4,)], FEW_RANKS) + layouts([(0, 2)], (5,))
)
def test_roll_keeps_counts_along_split(comm_of, shape, split, n):
    comm = comm_of(n)
    g = data(shape)
    a = make(g, split, comm, uneven=True)
    cases = [(2, 0), (-5, -1), ((1, 2), None)]
    if len(shape) == 2:
        cases += [((1, 2), (0, 1)), ((2, 3), (0, 0)), (4, 1)]
    for shift, axis in cases:
        b = ht.roll(a, shift, axis)
        assert_layout(b, np.roll(g, shift, axis), split, comm)
        if split is None:
            continue
        if axis is None:
            assert b.balanced or (split == 0 and len(shape) == 1 and counts(b) == counts(a))
        else:
            assert counts(b) == counts(a)
            rolls_split = split in {x % len(shape) for x in np.atleast_1d(axis)}
            if not rolls_split:
                assert own_rank_only(b, a)


def test_roll_bad_input(comm_of):
    comm = comm_of(2)
    g = data((3, 4))
    a = ht.array(g, split=1, comm=comm)
    before = snapshot(a)
    with pytest.raises(
        ValueError, match="`shift` and `axis` must have matching lengths, got 2 and 3"
    ):
        ht.roll(a, (1, 2), (0, 1, 1))
    with pytest.raises(TypeError, match="`shift` must be an int or a tuple of ints, got float"):
        ht.roll(a, 1.5, 0)
    with pytest.raises(ValueError, match=r"`axis` must be in \[-2, 1\]"):
        ht.roll(a, 1, 2)
    assert_unchanged(a, before, g)


# --------------------------------------------------------------------------- pad
PAD_CASES = [
    ("constant", {}),
    ("constant", {"constant_values": ((1, 2), (3, 4))}),
    ("edge", {}),
    ("linear_ramp", {"end_values": (5, -5)}),
    ("maximum", {}),
    ("mean", {}),
    ("minimum", {"stat_length": 2}),
    ("mean", {"stat_length": ((1, 3), (2, 1))}),
    ("reflect", {}),
    ("reflect", {"reflect_type": "odd"}),
    ("symmetric", {}),
    ("wrap", {}),
]
PAD_WIDTHS = [((2, 1), (1, 0)), ((0, 3), (2, 2))]
WIDE = ((7, 5), (0, 1))  # wider than the axis: reflections repeat, numpy's sides interact


@pytest.mark.parametrize(("shape", "split", "n"), layouts([(5, 3)], FEW_RANKS))
def test_pad_puts_split_padding_on_first_and_last_rank(comm_of, shape, split, n):
    comm = comm_of(n)
    g = data(shape) * 3 % 7
    a = make(g, split, comm, uneven=True)
    before = snapshot(a)
    for i, (mode, kwargs) in enumerate(PAD_CASES):
        width = PAD_WIDTHS[i % 2]
        b = ht.pad(a, width, mode=mode, **kwargs)
        assert_layout(b, np.pad(g, width, mode=mode, **kwargs), split, comm)
        if split is not None:
            w = np.broadcast_to(width, (2, 2))[split]
            assert counts(b) == list(_plan.padded_counts(counts(a), *w))
    e = ht.pad(a, 2, mode="empty")
    assert e.shape == np.pad(g, 2, mode="empty").shape and e.split == split
    assert_unchanged(a, before, g)


@pytest.mark.parametrize(("shape", "split", "n"), layouts([(2, 4)], (2, 5)))
def test_pad_wider_than_the_axis(comm_of, shape, split, n):
    comm = comm_of(n)
    g = data(shape) * 3 % 7
    a = make(g, split, comm, uneven=True)
    for mode in ("reflect", "symmetric", "wrap", "linear_ramp", "mean"):
        assert_layout(ht.pad(a, WIDE, mode=mode), np.pad(g, WIDE, mode=mode), split, comm)
    b = ht.pad(a, WIDE, mode="reflect", reflect_type="odd")
    assert_layout(b, np.pad(g, WIDE, mode="reflect", reflect_type="odd"), split, comm)


@pytest.mark.parametrize("split", [None, 0, 1])
def test_pad_local_cases_move_nothing(comm_of, split):
    comm = comm_of(4)
    g = data((6, 3)).astype(np.float32)
    a = make(g, split, comm, uneven=True)
    other = 1 - split if split is not None else 0
    width = [(0, 0), (0, 0)]
    width[other] = (2, 1)
    for mode in ("constant", "edge", "mean", "reflect"):
        b = ht.pad(a, width, mode=mode)
        assert_layout(b, np.pad(g, width, mode=mode), split, comm)
        assert own_rank_only(b, a)
    if split is not None:
        width = [(0, 0), (0, 0)]
        width[split] = (2, 1)
        b = ht.pad(a, width, constant_values=9)
        assert_layout(b, np.pad(g, width, constant_values=9), split, comm)
        assert own_rank_only(b, a)  # constant rows are made where they go


def test_pad_bad_input(comm_of):
    comm = comm_of(3)
    g = data((3, 4))
    a = ht.array(g, split=0, comm=comm)
    before = snapshot(a)
    with pytest.raises(ValueError, match=r"`pad_width` must hold non-negative ints, got \[-1, 2\]"):
        ht.pad(a, (-1, 2))
    with pytest.raises(TypeError, match="`pad_width` must hold ints, got float64"):
        ht.pad(a, 1.5)
    with pytest.raises(ValueError, match=r"`pad_width` must broadcast to \(2, 2\)"):
        ht.pad(a, (1, 2, 3))
    with pytest.raises(ValueError, match="`mode` must be one of constant, edge"):
        ht.pad(a, 1, mode="nearest")
    with pytest.raises(TypeError, match="`mode` must be a str, got int"):
        ht.pad(a, 1, mode=3)
    with pytest.raises(NotImplementedError, match="`pad` does not support mode 'median'"):
        ht.pad(a, 1, mode="median")
    with pytest.raises(ValueError, match="`stat_length` must hold positive ints"):
        ht.pad(a, 1, mode="mean", stat_length=0)
    with pytest.raises(ValueError, match="`reflect_type` must be 'even' or 'odd', got 'up'"):
        ht.pad(a, 1, mode="reflect", reflect_type="up")
    empty = ht.zeros((0, 4), split=0, comm=comm)
    with pytest.raises(ValueError, match="`mode` 'edge' cannot pad the empty axis 0"):
        ht.pad(empty, 1, mode="edge")
    assert_layout(ht.pad(empty, 1), np.pad(np.zeros((0, 4), np.float32), 1), 0, comm)
    assert_unchanged(a, before, g)


# ------------------------------------------------------------------- repetition
@pytest.mark.parametrize(
    ("shape", "split", "n"), layouts([(5, 3), (2,)], FEW_RANKS) + layouts([(0, 2)], (5,))
)
def test_repeat_scales_counts_locally(comm_of, shape, split, n):
    comm = comm_of(n)
    g = data(shape)
    a = make(g, split, comm, uneven=True)
    rng = np.random.default_rng(len(shape) * 10 + n)
    with LayoutBatch() as batch:  # the values of every result in one round trip
        for axis in range(len(shape)):
            length = shape[axis]
            every_reps = (
                2,
                [3],
                rng.integers(0, 4, length),
                torch.tensor(rng.integers(0, 3, length)),
            )
            for reps in every_reps:
                b = ht.repeat(a, reps, axis=axis)
                np_reps = reps.numpy() if isinstance(reps, torch.Tensor) else reps
                batch.add(b, np.repeat(g, np_reps, axis=axis), split, comm)
                if split == axis:
                    per_row = np.broadcast_to(np.asarray(np_reps).reshape(-1), (length,))
                    displs = a.counts_displs()[1]
                    assert counts(b) == [
                        int(per_row[d : d + c].sum())
                        for d, c in zip(displs, counts(a), strict=True)
                    ]
                elif split is not None:
                    assert counts(b) == counts(a)
                assert own_rank_only(b, a)
        b = a.repeat(2)
        batch.add(b, np.repeat(g, 2), None if split is None else 0, comm)
        r = ht.array(np.arange(g.size) % 3, split=0, comm=comm)
        batch.add(
            ht.repeat(a, r), np.repeat(g, np.arange(g.size) % 3), None if split is None else 0, comm
        )


def test_repeat_bad_input(comm_of):
    comm = comm_of(2)
    g = data((3, 2))
    a = ht.array(g, split=0, comm=comm)
    before = snapshot(a)
    with pytest.raises(ValueError, match="`repeats` must be non-negative, got -1"):
        a.repeat(-1, axis=0)
    with pytest.raises(ValueError, match=r"`repeats` must be non-negative, got \[1, -2, 0\]"):
        a.repeat([1, -2, 0], axis=0)
    with pytest.raises(TypeError, match="`repeats` must hold ints, got float64"):
        a.repeat([1.5, 2.0, 1.0], axis=0)
    with pytest.raises(
        TypeError, match="`repeats` must be an int or a 1-D array of ints, got float"
    ):
        a.repeat(1.5)
    with pytest.raises(ValueError, match="`repeats` must have 1 or 3 entries for axis 0, got 2"):
        a.repeat([1, 2], axis=0)
    with pytest.raises(ValueError, match="`repeats` must be an int or 1-D, got 2 dimensions"):
        a.repeat(np.ones((3, 1), int), axis=0)
    with pytest.raises(ValueError, match=r"`axis` must be in \[-2, 1\]"):
        a.repeat(2, axis=2)
    assert_unchanged(a, before, g)


@pytest.mark.parametrize(
    ("shape", "split", "n"), layouts([(3, 2), (4,)], FEW_RANKS) + layouts([(0, 3)], (5,))
)
def test_tile_balances_along_split(comm_of, shape, split, n):
    comm = comm_of(n)
    g = data(shape)
    a = make(g, split, comm, uneven=True)
    for reps in (2, (2, 3), (2, 1, 2), (3, 0), np.array([1, 2])):
        b = ht.tile(a, reps)
        expected = np.tile(g, reps)
        shift = expected.ndim - g.ndim
        new_split = None if split is None else split + shift
        assert_layout(b, expected, new_split, comm)
        if split is not None:
            assert b.balanced


def test_tile_bad_input(comm_of):
    comm = comm_of(2)
    g = data((3, 2))
    a = ht.array(g, split=0, comm=comm)
    before = snapshot(a)
    with pytest.raises(ValueError, match=r"`reps` must hold non-negative ints, got \(2, -1\)"):
        ht.tile(a, (2, -1))
    with pytest.raises(TypeError, match="`reps` must be an int or a tuple of ints, got float"):
        ht.tile(a, 1.5)
    assert_unchanged(a, before, g)


def test_results_are_new_arrays(comm_of):
    comm = comm_of(2)
    g = data((4,))
    a = ht.array(g, split=0, comm=comm)
    for b in (a.reshape(4), a.flatten(), ht.roll(a, 0), ht.pad(a, 0), a.squeeze(), ht.tile(a, 1)):
        assert b is not a
        b += 1
    np.testing.assert_array_equal(a.numpy(), g)


# ------------------------------------------------------- bytes on the network
def moved_bytes(client, build, *args) -> tuple[ht.DNDarray, int]:
    """``build(*args)`` persisted, and the bytes the workers fetched from each other for it."""
    since = time.time()
    out = build(*args).persist(wait=True)
    return out, received_bytes(client, since)


def remote_rows(plan) -> int:
    """Rows a plan takes from another rank than the one it builds."""
    return sum(p.stop - p.start for r, ps in enumerate(plan) for p in ps if p.src != r)


@pytest.mark.parametrize("n", [3, 4])
def test_network_traffic_is_what_the_plans_say(client, comm_of, n):
    comm = comm_of(n)
    cols = 500
    row = cols * 8
    g = data((12, cols), np.float64)

    def fresh(values=g, uneven=False) -> ht.DNDarray:
        # a new persisted source: no replica of its chunks left by an earlier move
        return make(values * 1.0, 0, comm, uneven).persist(wait=True)

    src = list(_layout.balanced_counts(12, n))
    # local operations: nothing crosses the network
    for build in (
        lambda a: a.T,
        lambda a: a.expand_dims(0),
        lambda a: a.repeat(2, axis=0),
        lambda a: ht.pad(a, ((2, 3), (1, 1))),
        lambda a: a.reshape(12, 2, cols // 2),
        lambda a: ht.concatenate([a, a * 2], axis=1),
        lambda a: ht.roll(a, 7, 1),
    ):
        a = fresh()
        out, moved = moved_bytes(client, build, a)
        assert moved == 0
        assert holders(client, out) == [(w,) for w in comm.workers]
    # reshape split 0 -> 0: the flat ranges that change owner, nothing else
    a = fresh()
    out, moved = moved_bytes(client, lambda: a.reshape(6, 2 * cols))
    flat_dst = [c * 2 * cols for c in counts(out)]
    assert moved == _layout.moved_rows([c * cols for c in src], flat_dst) * 8
    np.testing.assert_array_equal(out.numpy(), g.reshape(6, 2 * cols))
    # flip: mirrored ranks swap their chunks; a middle rank keeps its own
    a = fresh()
    out, moved = moved_bytes(client, lambda: a.flip(0))
    assert moved == sum(c for r, c in enumerate(src) if r != n - 1 - r) * row
    # roll along split: only the rows each plan takes from another rank
    a = fresh()
    out, moved = moved_bytes(client, lambda: ht.roll(a, 5, 0))
    assert moved == remote_rows(_plan.plan_roll(src, 5)) * row
    # concatenate along split: only the rows whose balanced owner differs
    a, b = fresh(), fresh(g[:5])
    out, moved = moved_bytes(client, lambda: ht.concatenate([a, b]))
    _, plan = _plan.plan_concatenation([src, counts(b)], n)
    assert moved == remote_rows(plan) * row
    assert holders(client, out) == [(w,) for w in comm.workers]
    np.testing.assert_array_equal(out.numpy(), np.concatenate([g, g[:5]]))
    # edge padding along split: one row travels to rank 0 when rank 0 is empty
    c = fresh(uneven=True)
    out, moved = moved_bytes(client, lambda: ht.pad(c, ((2, 1), (0, 0)), mode="edge"))
    assert moved == row
    np.testing.assert_array_equal(out.numpy(), np.pad(g, ((2, 1), (0, 0)), mode="edge"))


def test_zero_dimensional_inputs(comm_of):
    comm = comm_of(3)
    g = np.array(5)
    a = ht.array(g, comm=comm)
    assert_layout(a.reshape(1, 1), g.reshape(1, 1), None, comm)
    assert_layout(a.reshape((1,), new_split=0), g.reshape(1), 0, comm)
    assert_layout(a.flatten(), g.ravel(), None, comm)
    assert_layout(a.T, g.T, None, comm)
    assert_layout(a.expand_dims((0, 1)), np.expand_dims(g, (0, 1)), None, comm)
    assert_layout(a.squeeze(), np.squeeze(g), None, comm)
    assert_layout(a.flip(), np.flip(g), None, comm)
    assert_layout(ht.roll(a, 3), np.roll(g, 3), None, comm)
    assert_layout(a.repeat(3), np.repeat(g, 3), None, comm)
    assert_layout(ht.tile(a, (2, 2)), np.tile(g, (2, 2)), None, comm)
    assert_layout(ht.pad(a, 2), np.pad(g, 2), None, comm)
    with pytest.raises(ValueError, match="`new_split` must be None for a 0-dimensional array"):
        a.reshape((), new_split=0)
    with pytest.raises(ValueError, match="`axis` must be None for a 0-dimensional array"):
        a.repeat(2, axis=0)
