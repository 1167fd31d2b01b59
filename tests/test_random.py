"""Counter-based random numbers: one global array per seed, whatever the layout."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from conftest import RANK_COUNTS, splits_of

import dndask as ht
from dndask import _random


def draw(fn, shape, split, comm, **kwargs):
    ht.random.seed(1234)
    return fn(*shape, split=split, comm=comm, **kwargs) if fn in (
        ht.random.rand, ht.random.randn
    ) else fn(shape=shape, split=split, comm=comm, **kwargs)  # fmt: skip


@pytest.mark.parametrize("fn", [ht.random.rand, ht.random.randn])
@pytest.mark.parametrize("dtype", [ht.float32, ht.float64])
def test_same_seed_same_global_array_for_every_layout(comm_of, fn, dtype):
    shape = (7, 5, 3)
    reference = draw(fn, shape, None, comm_of(1), dtype=dtype).numpy()
    assert reference.dtype == dtype
    for n in RANK_COUNTS:
        for split in splits_of(3):
            a = draw(fn, shape, split, comm_of(n), dtype=dtype)
            assert a.split == split and a.balanced
            np.testing.assert_array_equal(a.numpy(), reference)


def test_randint_and_normal_are_layout_free(comm_of):
    ht.random.seed(5)
    ref = ht.random.randint(-3, 9, size=(6, 4), comm=comm_of(1)).numpy()
    ht.random.seed(5)
    got = ht.random.randint(-3, 9, size=(6, 4), split=1, comm=comm_of(4)).numpy()
    np.testing.assert_array_equal(got, ref)
    assert ref.dtype == np.int64 and ref.min() >= -3 and ref.max() < 9
    ht.random.seed(6)
    ref = ht.random.normal(2.0, 3.0, (5, 5), comm=comm_of(2), split=0).numpy()
    ht.random.seed(6)
    np.testing.assert_array_equal(ht.random.normal(2.0, 3.0, (5, 5), comm=comm_of(5)).numpy(), ref)


def test_distribution_statistics(comm_of):
    ht.random.seed(0)
    n = 200_000
    u = ht.random.rand(n, split=0, comm=comm_of(4)).numpy().astype(np.float64)
    assert u.min() >= 0.0 and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
    for dtype in (ht.float64, ht.float32):  # float32 has its own one-draw Box-Muller
        z = ht.random.randn(n, dtype=dtype, split=0, comm=comm_of(4)).numpy().astype(np.float64)
        assert abs(z.mean()) < 0.01 and abs(z.std() - 1.0) < 0.01
        # tails of a normal: about 4.55 % beyond two sigma, 0.27 % beyond three
        assert abs((np.abs(z) > 2).mean() - 0.0455) < 0.003
        assert abs((np.abs(z) > 3).mean() - 0.0027) < 0.0008
        assert abs(np.corrcoef(z[:-1], z[1:])[0, 1]) < 0.01
        assert abs(np.corrcoef(z[::2], z[1::2])[0, 1]) < 0.01
    k = ht.random.randint(0, 10, size=(n,), split=0, comm=comm_of(3)).numpy()
    counts = np.bincount(k, minlength=10)
    assert counts.min() > n / 10 * 0.95 and counts.max() < n / 10 * 1.05


def test_chunks_larger_than_one_block_match_any_layout(comm_of):
    """Chunks are generated box by box; box edges must not show in the values."""
    block = _random._BLOCK
    shapes = [
        (3 * block // 1000 + 7, 1000),  # slabs of whole rows, the last one short
        (6 * _random._PAIRS32 // 1000 + 7, 1000),  # more than one box of float32 normals
        (3, 3, block // 2 + 11),  # rows larger than a box: one row at a time
        (2 * block + 5,),  # one axis cut into boxes
    ]
    for shape in shapes:
        for kind in ("rand", "randn"):
            for dtype in (ht.float32, ht.float64):
                fn = getattr(ht.random, kind)
                ht.random.seed(21)
                ref = fn(*shape, dtype=dtype, comm=comm_of(1)).numpy()
                for n, split in ((3, 0), (4, len(shape) - 1)):
                    ht.random.seed(21)
                    got = fn(*shape, dtype=dtype, split=split, comm=comm_of(n)).numpy()
                    np.testing.assert_array_equal(got, ref)
        assert len(np.unique(ref)) > 0.99 * ref.size  # no box repeats another
    shape = shapes[0]
    ht.random.seed(22)
    ref = ht.random.randint(-5, 7, size=shape, dtype=ht.int16, comm=comm_of(1)).numpy()
    ht.random.seed(22)
    got = ht.random.randint(-5, 7, size=shape, dtype=ht.int16, split=0, comm=comm_of(5)).numpy()
    np.testing.assert_array_equal(got, ref)
    assert got.dtype == np.int16 and got.min() == -5 and got.max() == 6


def test_successive_calls_differ_and_state_replays(comm_of):
    comm = comm_of(3)
    ht.random.seed(9)
    state = ht.random.get_state()
    assert state == ("splitmix64", 9, 0)
    a = ht.random.rand(10, comm=comm).numpy()
    b = ht.random.rand(10, comm=comm).numpy()
    assert not np.array_equal(a, b)
    assert ht.random.get_state() == ("splitmix64", 9, 2)
    ht.random.set_state(state)
    np.testing.assert_array_equal(ht.random.rand(10, split=0, comm=comm).numpy(), a)
    ht.random.seed()
    assert ht.random.get_state()[2] == 0


def test_random_defaults():
    ht.random.seed(1)
    assert ht.random.randn(3).dtype == ht.float32
    assert ht.random.random((2,)).dtype == ht.float64
    zero_d = ht.random.random()  # shape (): one element
    assert zero_d.shape == () and 0.0 <= float(zero_d) < 1.0
    assert ht.random.normal(3.0, 0.0).numpy() == 3.0
    assert ht.random.rand(2, 3).shape == (2, 3)
    assert ht.random.rand((2, 3)).shape == (2, 3)
    assert ht.random.randint(5, size=4).numpy().max() < 5


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (lambda: ht.random.seed(1.5), TypeError, "`seed` must be an int or None, got float"),
        (lambda: ht.random.set_state([1, 2]), TypeError, "`state` must be a 3-tuple"),
        (lambda: ht.random.set_state(("Threefry", 1, 0)), ValueError,
         "`state` algorithm must be 'splitmix64', got 'Threefry'"),
        (lambda: ht.random.set_state(("splitmix64", -1, 0)), ValueError,
         "`state` seed must be a non-negative int, got -1"),
        (lambda: ht.random.rand(2, -3), ValueError, "`shape` must hold non-negative ints"),
        (lambda: ht.random.rand(2.5), TypeError, "`shape` must hold ints, got float"),
        (lambda: ht.random.rand(2, dtype=ht.int32), ValueError,
         "`dtype` must be float32 or float64, got int32"),
        (lambda: ht.random.randint(5, 5), ValueError, r"`high` must be greater than `low` \(5\)"),
        (lambda: ht.random.randint(0, 300, dtype=ht.uint8), ValueError, "must fit in uint8"),
        (lambda: ht.random.randint(0, 3, dtype=ht.float32), ValueError,
         "`dtype` must be an integer type, got float32"),
        (lambda: ht.random.randint(0.5, 3), TypeError, "`low` must be an int, got float"),
        (lambda: ht.random.normal(0, -1.0, (2,)), ValueError, "`std` must be non-negative"),
        (lambda: ht.random.normal("0", 1.0, (2,)), TypeError, "`mean` must be a real number"),
    ],
)  # fmt: skip
def test_bad_random_calls(client, call, exc, match):
    state = ht.random.get_state()
    with pytest.raises(exc, match=match):
        call()
    assert ht.random.get_state() == state


def test_float32_normals_drawn_into_reused_buffers_are_the_fresh_ones():
    """The chunk path's buffers (``_Scratch``) give bit for bit the values of fresh temporaries,
    at every parity of start and length, and with the buffers reused across boxes."""
    key = _random._stream_key(5, 3)
    rng = np.random.default_rng(0)
    scratch = _random._Scratch(_random._PAIRS32 + 2)
    for _ in range(60):
        start, length = int(rng.integers(0, 2**40)), int(rng.integers(1, 2 * _random._PAIRS32 + 1))
        fresh, reused = np.empty(length, np.float32), np.empty(length, np.float32)
        _random._normal_into(fresh, key, start)
        _random._normal32_into(reused, key, start, scratch)
        np.testing.assert_array_equal(reused, fresh)


# The first 32 hex digits of SHA-256 of the little-endian bytes of arrays drawn with seed 2026,
# computed with the code of main at f8014dd (before issue 26's rework of the float32 normals).
PINNED_NORMALS = [  # (203, 1001): 6 float32 boxes of 32768 pairs and more, odd row starts
    ("randn", (203, 1001), "float32", "a77bae0b0c96e83ab6ddfde3a46f8097"),
    ("randn", (3, 5, 4099), "float32", "0287d9e772dc483b73028872a4f52897"),
    ("normal", (65543,), "float32", "03e77410d2d7650e150f6aff6608c357"),
    # float64: the digest of the values rounded to float32, since the last bits of numpy's
    # float64 log, cos and sin depend on the CPU (AVX-512 or not); the layouts must still
    # agree on every bit
    ("randn", (37, 41), "float64", "45dc00fd61558230353f86cc7a7cf252"),
]


def test_normal_stream_is_pinned(comm_of):
    """Digests of normal draws pinned to the values of main at f8014dd (float64: rounded).

    This guards the random stream (same seed, same numbers) against optimisation changes of
    the generator; that the numbers are normal is checked by the statistics tests. Shapes:
    several float32 boxes of whole rows with odd row starts, rows cut by split 1 and 2
    (partial rows), one axis with a shifted, scaled normal, and float64.
    """
    for kind, shape, dtype, digest in PINNED_NORMALS:
        exact = set()
        for n, split in ((1, None), (3, 0), (4, len(shape) - 1), (5, 0)):
            ht.random.seed(2026)
            comm = comm_of(n)
            if kind == "randn":
                a = ht.random.randn(*shape, dtype=getattr(ht, dtype), split=split, comm=comm)
            else:
                a = ht.random.normal(
                    0.5, 2.0, shape, dtype=getattr(ht, dtype), split=split, comm=comm
                )
            values = a.numpy()
            exact.add(
                hashlib.sha256(values.astype(values.dtype.newbyteorder("<")).tobytes()).digest()
            )
            got = hashlib.sha256(values.astype("<f4").tobytes())
            assert got.hexdigest()[:32] == digest, (kind, shape, dtype, n, split)
        assert len(exact) == 1, (kind, shape, dtype)  # the same bits on every layout
