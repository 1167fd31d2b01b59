"""The core functions added for Heat code: diagonals, splits, broadcasting, grids, small linalg,
moments and bins. Values against numpy (and scipy's formulas) on every split, 1-5 ranks, with
empty ranks where the layout allows them."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import RANK_COUNTS, skewed, splits_of, values_of

import dndask as ht


def _data(shape, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(-9, 10, size=shape).astype(dtype)


def _check_layout(a: ht.DNDarray, split) -> None:
    assert a.split == split
    chunks = a.to_dask().chunks
    for axis, c in enumerate(chunks):
        assert len(c) == (a.comm.size if axis == split else 1)


@pytest.mark.parametrize("n", RANK_COUNTS)
def test_triangles_diagonals_fill(comm_of, n):
    comm = comm_of(n)
    x = _data((5, 4))
    results, expected = [], []
    for split in splits_of(2):
        a = skewed(ht.array(x, split=split, comm=comm))
        for k in (-2, 0, 1):
            results += [ht.triu(a, k), ht.tril(a, k), ht.diagonal(a, k)]
            expected += [np.triu(x, k), np.tril(x, k), np.diagonal(x, k)]
            _check_layout(results[-3], split)
            _check_layout(results[-1], None if split is None else 0)
        results.append(ht.trace(a, 1))
        expected.append(np.asarray(np.trace(x, 1)))
        f = a.copy()
        assert ht.fill_diagonal(f, 7.0) is f
        g = x.copy()
        np.fill_diagonal(g, 7.0)
        results.append(f)
        expected.append(g)
        _check_layout(f, split)
    v = _data((4,))
    for split in splits_of(1):
        d = ht.diag(ht.array(v, split=split, comm=comm), 1)
        results.append(d)
        expected.append(np.diag(v, 1))
        _check_layout(d, split)
    for got, want in zip(values_of(results), expected, strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", RANK_COUNTS)
def test_splits_and_flips(comm_of, n):
    comm = comm_of(n)
    x = _data((4, 6, 2))
    results, expected = [], []
    for split in splits_of(3):
        a = skewed(ht.array(x, split=split, comm=comm))
        for got, want in (
            (ht.split(a, 2, axis=0), np.split(x, 2, axis=0)),
            (ht.split(a, [1, 4, 9], axis=1), np.split(x, [1, 4, 9], axis=1)),
            (ht.hsplit(a, 3), np.hsplit(x, 3)),
            (ht.vsplit(a, [3]), np.vsplit(x, [3])),
            (ht.dsplit(a, 2), np.dsplit(x, 2)),
        ):
            assert len(got) == len(want)
            for piece in got:
                _check_layout(piece, split)
            results += got
            expected += want
        results += [ht.fliplr(a), ht.flipud(a)]
        expected += [np.fliplr(x), np.flipud(x)]
    for got, want in zip(values_of(results), expected, strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", RANK_COUNTS)
def test_broadcast_stack_grids(comm_of, n):
    comm = comm_of(n)
    x, y = _data((3, 1)), _data((4,), seed=1)
    results, expected = [], []
    for split in splits_of(1):
        b = ht.array(y, split=split, comm=comm)
        got = ht.broadcast_to(b, (2, 3, 4))
        _check_layout(got, None if split is None else 2)
        results.append(got)
        expected.append(np.broadcast_to(y, (2, 3, 4)))
        pair = ht.broadcast_arrays(ht.array(x, comm=comm), b)
        results += pair
        expected += list(np.broadcast_arrays(x, y))
        results.append(ht.column_stack([b, b]))
        expected.append(np.column_stack([y, y]))
        results.append(ht.row_stack([b, b]))
        expected.append(np.vstack([y, y]))
        for indexing in ("xy", "ij"):
            grids = ht.meshgrid(b, ht.arange(3, comm=comm), indexing=indexing)
            results += grids
            expected += np.meshgrid(y, np.arange(3), indexing=indexing)
    results.append(ht.logspace(0, 3, 7, base=2.0, split=0, comm=comm))
    expected.append(np.logspace(0, 3, 7, base=2.0).astype(np.float32))
    for got, want in zip(values_of(results), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)
        assert got.shape == want.shape
    assert ht.shape(ht.zeros((2, 5), comm=comm)) == (2, 5)
    a = ht.arange(3, comm=comm)
    assert ht.asarray(a) is a


@pytest.mark.parametrize("n", RANK_COUNTS)
def test_square_linalg(comm_of, n):
    comm = comm_of(n)
    rng = np.random.default_rng(3)
    m = rng.normal(size=(3, 4, 4)) + 4 * np.eye(4)
    rhs = rng.normal(size=(4, 2))
    results, expected = [], []
    for split in splits_of(3):
        a = skewed(ht.array(m, split=split, comm=comm))
        inv, det = ht.linalg.inv(a), ht.linalg.det(a)
        _check_layout(inv, split)
        _check_layout(det, split if split == 0 else None)
        results += [inv, det, ht.linalg.matrix_exp(a)]
        expected += [np.linalg.inv(m), np.linalg.det(m), _expm(m)]
    for split in splits_of(2):
        a = ht.array(m[0], split=split, comm=comm)
        b = ht.array(rhs, split=split, comm=comm)
        results.append(ht.linalg.solve(a, b))
        expected.append(np.linalg.solve(m[0], rhs))
        u = ht.array(m[0, :, :3], split=split, comm=comm)
        results += [ht.cross(u, u[::-1]), ht.vdot(a, a)]
        expected += [np.cross(m[0, :, :3], m[0, ::-1, :3]), np.vdot(m[0], m[0])]
        c = ht.zeros((4, 4), dtype=ht.float64, split=split, comm=comm)
        assert ht.dot(a, a, out=c) is c
        results.append(c)
        expected.append(m[0] @ m[0])
        kept = ht.vecdot(a, a, axis=0, keepdims=True)
        results.append(kept)
        expected.append(np.sum(m[0] * m[0], axis=0, keepdims=True))
    for got, want in zip(values_of(results), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


def _expm(m):
    out = np.zeros_like(m)
    term = np.broadcast_to(np.eye(m.shape[-1]), m.shape).copy()
    for k in range(1, 40):
        out += term
        term = term @ m / k
    return out


@pytest.mark.parametrize("n", RANK_COUNTS)
def test_moments_and_bins(comm_of, n):
    comm = comm_of(n)
    x = np.random.default_rng(5).normal(size=(6, 5))
    results, expected = [], []
    for split in splits_of(2):
        a = skewed(ht.array(x, split=split, comm=comm))
        for axis in (None, 0, 1):
            results.append(ht.ptp(a, axis))
            expected.append(np.ptp(x, axis))
            results += [ht.skew(a, axis, unbiased=False), ht.kurtosis(a, axis, unbiased=False)]
            expected += [_skew(x, axis), _kurt(x, axis)]
        results += [ht.cov(a), ht.cov(a, rowvar=False, ddof=0)]
        expected += [np.cov(x), np.cov(x, rowvar=False, ddof=0)]
        edges = [-1.0, 0.0, 0.5]
        results += [ht.digitize(a, edges), ht.digitize(a, edges, right=True)]
        expected += [np.digitize(x, edges), np.digitize(x, edges, right=True)]
        results.append(ht.bucketize(a, edges))
        expected.append(np.searchsorted(edges, x, side="left"))
    for got, want in zip(values_of(results), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-12)


def _skew(x, axis):
    d = x - x.mean(axis=axis, keepdims=True)
    return (d**3).mean(axis=axis) / (d**2).mean(axis=axis) ** 1.5


def _kurt(x, axis):
    d = x - x.mean(axis=axis, keepdims=True)
    return (d**4).mean(axis=axis) / (d**2).mean(axis=axis) ** 2 - 3


def test_unbiased_moments_match_scipys_formulas(comm_of):
    x = np.random.default_rng(6).normal(size=40)
    a = ht.array(x, split=0, comm=comm_of(3))
    n = x.size
    g1, g2 = _skew(x, None), _kurt(x, None)
    assert float(ht.skew(a)) == pytest.approx(g1 * np.sqrt(n * (n - 1)) / (n - 2))
    want = ((n + 1) * (g2 + 3) - 3 * (n - 1)) * (n - 1) / ((n - 2) * (n - 3))
    assert float(ht.kurtosis(a)) == pytest.approx(want)


@pytest.mark.parametrize("n", RANK_COUNTS)
def test_new_elementwise(comm_of, n):
    comm = comm_of(n)
    x = np.array([-3.5, -1.0, 0.0, 2.25, np.inf, -np.inf])
    i = np.array([12, 18, -4, 7, 0, 9])
    z = np.array([1 + 1j, -2.0 + 0j, 3j, 0j, -1 - 1e-9j, 4.5 + 0j])
    results, expected = [], []
    for split in splits_of(1):
        a = skewed(ht.array(x, split=split, comm=comm))
        b = skewed(ht.array(i, split=split, comm=comm))
        results += [ht.isposinf(a), ht.isneginf(a), ht.sgn(a), *ht.modf(a[:4])]
        expected += [np.isposinf(x), np.isneginf(x), np.sign(x), *np.modf(x[:4])]
        results += [ht.gcd(b, 6), ht.lcm(b, 4), ht.logaddexp2(a[:4], 1.0)]
        expected += [np.gcd(i, 6), np.lcm(i, 4), np.logaddexp2(x[:4], 1.0)]
        c = skewed(ht.array(z, split=split, comm=comm))
        results += [ht.angle(c), ht.angle(c, deg=True), ht.angle(a[:4]), ht.angle(b)]
        expected += [np.angle(z), np.angle(z, deg=True), np.angle(x[:4]), np.angle(i)]
        results += [ht.iscomplex(c), ht.isreal(c), ht.iscomplex(a), ht.isreal(b)]
        expected += [np.iscomplex(z), np.isreal(z), np.iscomplex(x), np.isreal(i)]
    for got, want in zip(values_of(results), expected, strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want)
    with pytest.raises(TypeError, match=r"`deg` must be a bool, got int"):
        ht.angle(ht.array(z, split=0, comm=comm), deg=1)


@pytest.mark.parametrize("n", RANK_COUNTS)
def test_randperm_is_layout_invariant(comm_of, n):
    comm = comm_of(n)
    ht.random.seed(11)
    ref = ht.random.randperm(9, split=0, comm=comm_of(1)).numpy()
    assert sorted(ref.tolist()) == list(range(9))
    results = []
    for split in splits_of(1):
        ht.random.seed(11)
        p = ht.random.randperm(9, split=split, comm=comm)
        _check_layout(p, split)
        results.append(p)
    for got in values_of(results):
        np.testing.assert_array_equal(got, ref)
    ht.random.seed(11)
    a = ht.arange(9, split=0, comm=comm) * 10
    np.testing.assert_array_equal(ht.random.permutation(a).numpy(), ref * 10)
    assert ht.random.standard_normal((3, 2), split=1, comm=comm).shape == (3, 2)
    assert ht.random.random_sample((4,), comm=comm).dtype == np.float64


def test_zero_d_larray_and_lists_in_elementwise(comm_of):
    comm = comm_of(3)
    assert ht.array(5.0, comm=comm).larray.item() == 5.0
    assert ht.sum(ht.arange(4, split=0, comm=comm)).larray.item() == 6
    with pytest.raises(TypeError, match=r"`ceil` needs a DNDarray operand, got list"):
        ht.ceil([1.5, 2.5])
    with pytest.raises(TypeError, match=r"`logaddexp` needs a DNDarray operand, got list, list"):
        ht.logaddexp([1.0], [2.0])


@pytest.mark.parametrize("n", RANK_COUNTS)
def test_rot90_matches_numpy(comm_of, n):
    comm = comm_of(n)
    x = _data((4, 3, 5))
    cases = [(k, axes) for k in (-1, 0, 1, 2, 3, 5) for axes in ((0, 1), (1, 0), (2, 0), (-1, 1))]
    results, expected = [], []
    for split in splits_of(3):
        base = ht.array(x, split=split, comm=comm)
        for a in (base, skewed(base)):
            for k, axes in cases:
                r = ht.rot90(a, k, axes)
                first, second = (ax % 3 for ax in axes)
                want_split = split
                if k % 2 and split in (first, second):
                    want_split = second if split == first else first
                _check_layout(r, want_split)
                results.append(r)
                expected.append(np.rot90(x, k, axes))
    assert np.rot90(ht.array(x, split=1, comm=comm), 1).split == 0  # numpy dispatch
    for got, want in zip(values_of(results), expected, strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", RANK_COUNTS)
def test_collect_gathers_onto_one_rank(comm_of, n):
    comm = comm_of(n)
    x = _data((5, 4, 3))
    results = []
    for split in splits_of(3):
        base = ht.array(x, split=split, comm=comm)
        for a in (base, skewed(base)):
            before = a.lshape_map.tolist()
            for target in range(n):
                c = ht.collect(a, target)
                assert a.lshape_map.tolist() == before  # the source is unchanged
                if split is None:
                    assert c.split is None
                else:
                    counts = c.lshape_map[:, split].tolist()
                    assert counts == [x.shape[split] if r == target else 0 for r in range(n)]
                results.append(c)
    for got in values_of(results):
        np.testing.assert_array_equal(got, x)


def _expected_halos(x, counts, axis, h, prev=True, next=True):
    """Every rank's (prev, next, with halos) from numpy, Heat's populated-rank rule."""
    displs = np.concatenate([[0], np.cumsum(counts)])
    populated = [r for r, c in enumerate(counts) if c]

    def rows(start, stop):
        return np.take(x, range(start, stop), axis=axis)

    out = []
    for r, c in enumerate(counts):
        p = q = rows(0, 0)
        if c and h:
            i = populated.index(r)
            if prev and i > 0:
                src = populated[i - 1]
                p = rows(displs[src + 1] - h, displs[src + 1])
            if next and i + 1 < len(populated):
                src = populated[i + 1]
                q = rows(displs[src], displs[src] + h)
        out.append((p, q, np.concatenate([p, rows(displs[r], displs[r + 1]), q], axis=axis)))
    return out


@pytest.mark.parametrize("n", RANK_COUNTS)
def test_halos_exchange_neighbour_rows(comm_of, n):
    comm = comm_of(n)
    x = _data((8, 6))
    results, wanted = [], []  # every part's values in one round trip, below
    for split in (0, 1):
        base = ht.array(x, split=split, comm=comm)
        for a in (base, skewed(base)):
            counts = a.lshape_map[:, split].tolist()
            largest = min([c for c in counts if c] or [0])
            for h in range(largest + 1):
                for prev, nxt in ((True, True), (True, False), (False, True)):
                    parts = ht.halos(a, h, prev=prev, next=nxt)
                    expected = _expected_halos(x, counts, split, h, prev, nxt)
                    for part, array in enumerate(parts):
                        _check_layout(array, split)
                        sizes = array.lshape_map[:, split].tolist()
                        assert sizes == [e[part].shape[split] for e in expected]
                        results.append(array)
                        wanted.append(np.concatenate([e[part] for e in expected], axis=split))
            if largest:  # the halos kept on the array: fetched by get_halo's properties
                a.get_halo(1)
                first = _expected_halos(x, counts, split, 1)[0]
                assert (a.halo_prev is None) == (first[0].shape[split] == 0)
                assert (a.halo_next is None) == (first[1].shape[split] == 0)
                np.testing.assert_array_equal(a.array_with_halos.numpy(), first[2])
    for got, want in zip(values_of(results), wanted, strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", [1, 3, 5])
def test_partitioned_describes_every_chunk(comm_of, n):
    comm = comm_of(n)
    x = _data((7, 3))
    for split in splits_of(2):
        base = ht.array(x, split=split, comm=comm)
        for a in (base, skewed(base)):
            parted = a.__partitioned__
            assert a.__partitions_dict__ is parted
            assert parted["shape"] == x.shape
            size = 1 if split is None else n
            assert parted["partition_tiling"] == tuple(
                size if ax == split else 1 for ax in range(2)
            )
            pieces = []
            for _, part in sorted(parted["partitions"].items()):
                start, shape = part["start"], part["shape"]
                chunk = parted["get"](part["data"]).numpy()
                assert chunk.shape == shape
                np.testing.assert_array_equal(
                    chunk, x[start[0] : start[0] + shape[0], start[1] : start[1] + shape[1]]
                )
                pieces.append(chunk)
            np.testing.assert_array_equal(np.concatenate(pieces, axis=split or 0), x)
            a += 1  # a new graph: the kept dict is stale
            assert a.__partitions_dict__ is None


def _torch_unfold(x, axis, size, step):
    """torch.Tensor.unfold's result, from numpy (window axis last)."""
    view = np.lib.stride_tricks.sliding_window_view(x, size, axis=axis)
    index = [slice(None)] * view.ndim
    index[axis] = slice(None, None, step)
    return view[tuple(index)]


@pytest.mark.parametrize("n", RANK_COUNTS)
def test_unfold_matches_torch(comm_of, n):
    comm = comm_of(n)
    x = _data((11, 6))
    results, expected = [], []
    for split in splits_of(2):
        base = ht.array(x, split=split, comm=comm)
        for a in (base, skewed(base)):
            counts = a.lshape_map[:, split].tolist() if split is not None else [11]
            smallest = min(c for c in counts if c)
            for axis in (0, 1, -1):
                length = x.shape[axis]
                for size in range(2, length + 1):
                    for step in (1, 2, 5):
                        if split == axis % 2 and size - 1 > smallest and n > 1:
                            with pytest.raises(RuntimeError, match=r"`size` - 1 = "):
                                ht.unfold(a, axis, size, step)
                            continue
                        u = ht.unfold(a, axis, size, step)
                        _check_layout(u, split)
                        results.append(u)
                        expected.append(_torch_unfold(x, axis % 2, size, step))
    for got, want in zip(values_of(results), expected, strict=True):
        np.testing.assert_array_equal(got, want)
