"""dndask.heat, the Heat-compatible face: Heat 1.8's semantics (facts from Heat's docs and
behaviour) over the same DNDarray, on every split, 1-5 ranks, with empty ranks."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from conftest import RANK_COUNTS, skewed, splits_of, values_of

import dndask as dd
import dndask.heat as ht


def test_types_are_classes_that_build_arrays(comm_of):
    comm = comm_of(2)
    x = ht.float32([1, 2, 3], comm=comm)
    assert isinstance(x, ht.DNDarray) and isinstance(x, dd.DNDarray)
    assert x.dtype is ht.float32 and x.dtype == np.float32 and x.dtype == torch.float32
    assert np.dtype("float32") == ht.float32 and ht.float32 != ht.float64
    assert ht.float is ht.float32 and ht.int is ht.int32 and ht.double is ht.float64
    assert issubclass(ht.int32, ht.signedinteger) and issubclass(ht.float64, ht.floating)
    assert ht.issubdtype(ht.uint8, ht.unsignedinteger) and not ht.issubdtype(ht.int8, ht.floating)
    assert ht.float32.torch_type() is torch.float32 and ht.int64.char() == "i8"
    assert ht.types.canonical_heat_type(float) is ht.float32
    assert ht.types.canonical_heat_type(int) is ht.int32
    assert ht.heat_type_of(ht.zeros(2, dtype=ht.int16, comm=comm)) is ht.int16
    assert ht.int64(x).dtype is ht.int64  # a cast copy of a DNDarray
    assert ht.zeros((2,), dtype=int, comm=comm).dtype is ht.int32  # Heat's int
    assert dd.zeros((2,), dtype=ht.int8, comm=comm).dtype == np.int8  # the core takes Heat types
    assert ht.finfo(ht.float32).eps == np.finfo(np.float32).eps
    assert ht.iinfo(ht.int16).max == 32767


def test_promotion_follows_heat():
    # Heat 1.8's documented promotions (types.promote_types / result_type docstrings)
    assert ht.promote_types(ht.int32, ht.float32) is ht.float32
    assert ht.promote_types(ht.int8, ht.uint8) is ht.int16
    assert ht.promote_types("i8", "f4") is ht.float64
    assert ht.promote_types(ht.uint8, ht.uint8) is ht.uint8
    assert ht.result_type(ht.float32, ht.array(1, dtype=ht.int8)) is ht.float32
    assert ht.result_type(ht.array([1], dtype=ht.int32), 1) is ht.int32
    assert ht.result_type("i8", "f4") is ht.float64
    assert ht.result_type(ht.array([1], dtype=ht.int32), 2.5) is ht.float32


@pytest.mark.parametrize("n", RANK_COUNTS)
def test_elementwise_dtypes_and_values(comm_of, n):
    comm = comm_of(n)
    xi = np.arange(-3, 4, dtype=np.int32)
    xf = np.linspace(-1, 1, 7).astype(np.float32)
    results, expected = [], []
    for split in splits_of(1):
        i = skewed(ht.array(xi, split=split, comm=comm))
        f = skewed(ht.array(xf, split=split, comm=comm))
        i64 = i.astype(ht.int64)
        cases = [
            (i + f, xi + xf, ht.float32),
            (ht.exp(i), np.exp(xi.astype(np.float32)), ht.float32),
            (ht.sin(i64), np.sin(xi.astype(np.float64)), ht.float64),
            (i + 2.5, (xi + 2.5).astype(np.float32), ht.float32),
            (i * 2, xi * 2, ht.int32),
            (i64 / i64.abs().clip(1, None), xi / np.clip(np.abs(xi), 1, None), ht.float32),
            (ht.eq(i, f), xi == xf, ht.bool),
            (ht.floordiv(i, 2), xi // 2, ht.int32),
            (ht.atan2(f, 1.0), np.arctan2(xf, 1.0), ht.float32),
            (ht.degrees(f), np.degrees(xf), ht.float32),
            (ht.gcd(i, 4), np.gcd(xi, 4), ht.int32),
            (ht.pos(i), xi, ht.int32),
        ]
        for got, want, dtype in cases:
            assert isinstance(got, ht.DNDarray)
            assert got.dtype is dtype, (got.dtype, dtype)
            assert got.split == split
            results.append(got)
            expected.append(want)
    for got, want in zip(values_of(results), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("n", RANK_COUNTS)
def test_inplace_methods_share_the_state(comm_of, n):
    comm = comm_of(n)
    x = np.arange(6, dtype=np.float64).reshape(3, 2) + 1
    results, expected = [], []
    for split in splits_of(2):
        core = skewed(dd.array(x, split=split, comm=comm))
        a = ht.asarray(core)  # a face view: in-place calls show through the core array
        assert a.add_(1) is a
        assert a.mul_(2.0) is a and a.sub_(1) is a and a.div_(2) is a and a.pow_(2) is a
        results += [core, a]
        expected += [((x + 1) * 2 - 1) / 2] * 0 + [(((x + 1) * 2 - 1) / 2) ** 2] * 2
        b = ht.array(x.astype(np.int64), split=split, comm=comm)
        assert b.bitwise_and_(6) is b and b.left_shift_(1) is b and b.lcm_(3) is b
        results.append(b)
        expected.append(np.lcm((x.astype(np.int64) & 6) << 1, 3))
        c = ht.array(x, split=split, comm=comm)
        c += 1
        c.cumsum_(0)
        results.append(c)
        expected.append(np.cumsum(x + 1, 0))
    for got, want in zip(values_of(results), expected, strict=True):
        np.testing.assert_allclose(got, want)


def test_equal_is_one_bool(comm_of):
    comm = comm_of(3)
    a = ht.arange(7, split=0, comm=comm)
    assert ht.equal(a, a.resplit(None)) is True
    assert ht.equal(a, a + 1) is False
    assert ht.equal(a, ht.arange(6, comm=comm)) is False  # different shapes
    assert ht.equal(ht.zeros((2, 3), comm=comm), 0) is False  # torch.equal: shapes must match
    assert ht.equal(ht.zeros((), comm=comm), 0) is True
    assert (a == a).dtype is ht.bool  # the operator stays elementwise


def test_rng_states_are_heats_and_layout_invariant(comm_of):
    ht.random.set_state(("Threefry", 42, 0))
    assert ht.random.get_state()[:3] == ("Threefry", 42, 0)
    ref = ht.random.rand(5, 4, split=None, comm=comm_of(1)).numpy()
    for n in (2, 5):
        for split in splits_of(2):
            ht.random.set_state(("Threefry", 42, 0))
            got = ht.random.rand(5, 4, split=split, comm=comm_of(n))
            np.testing.assert_array_equal(got.numpy(), ref)
    ht.random.set_state(("Batchparallel", 7, 0, 0, 0.0))
    assert ht.random.get_state()[0] == "Batchparallel"
    assert ht.random.randint(0, 10, (3,), comm=comm_of(2)).dtype is ht.int32


def test_larray_scalars_and_lists(comm_of):
    comm = comm_of(3)
    assert ht.array(5.0, comm=comm).larray.item() == 5.0
    assert ht.sum(ht.arange(4, split=0, comm=comm)).larray.item() == 6
    assert ht.zeros_like(3).shape == (1,) and ht.zeros_like(3).dtype is ht.int32
    # Heat's __factory_like: a.shape, else (len(a),), else (1,); the type of a, of a[0], or float32
    assert ht.ones_like([[1, 2]]).shape == (1,) and ht.ones_like([[1, 2]]).dtype is ht.float32
    like = ht.empty_like("abc")
    assert like.shape == (3,) and like.dtype is ht.float32 and like.split is None
    assert ht.zeros_like([1, 2, 3]).dtype is ht.int32
    assert ht.full_like(3, 4).dtype is ht.float32 and ht.full_like(3, 4).tolist() == [4.0]
    assert ht.full_like(ht.zeros((2, 3), dtype=ht.uint8), 7).dtype is ht.float32
    assert ht.repeat(42, 2).tolist() == [42, 42]
    assert ht.tile(10, (2, 2)).tolist() == [[10, 10], [10, 10]]
    assert ht.trace([[1, 2], [3, 4]]) == 5
    assert ht.add(1, 2).item() == 3  # two scalars make a 0-d array, as in Heat
    with pytest.raises(TypeError, match=r"operand 0 of `ceil` must be a DNDarray, got list"):
        ht.ceil([1.5])
    with pytest.raises(TypeError, match=r"operand 0 of `neg` must be a DNDarray, got int"):
        ht.neg(1)
    with pytest.raises(TypeError, match=r"`hypot` does not support operands of int32, int32"):
        ht.hypot(ht.int32([3]), ht.int32([4]))


def test_heat_signatures(comm_of):
    comm = comm_of(4)
    a = ht.arange(10, split=0, comm=comm)
    assert a.dtype is ht.int32  # Heat's arange of ints
    assert ht.argmax(a).shape == (1,)
    assert a.gshape == (10,) and a.lnbytes == 12 and a.stride() == (1,)
    assert ht.array([1, 2], ndmin=3).shape == (2, 1, 1)  # Heat appends axes
    assert ht.array([1, 2], ndmin=-3).shape == (1, 1, 2)  # and prepends for a negative ndmin
    assert ht.zeros((2, 2), device="cpu", order="F").shape == (2, 2)
    assert round(ht.array(2.26), 1) == 2.3
    assert ht.broadcast_shape((5, 1, 3), (4, 1)) == (5, 4, 3)
    assert ht.manipulations.resplit is ht.resplit and ht.factories.arange is ht.arange
    q, r = ht.divmod(ht.array([7, -7], comm=comm), 3)
    assert q.tolist() == [2, -3] and r.tolist() == [1, 2]
    out = ht.zeros(3, comm=comm)
    ht.ptp(ht.array([[1.0, 4.0, 2.0]] * 2, comm=comm), axis=0, out=out)
    assert out.tolist() == [0.0, 0.0, 0.0]
    mask = ht.array([True, False, True], comm=comm)
    ht.add(ht.ones(3, comm=comm), 1, out=out, where=mask)
    assert out.tolist() == [2.0, 0.0, 2.0]
    with pytest.raises(NotImplementedError, match=r"`cumsum` along `axis=None`"):
        ht.cumsum(a, None)
    b = ht.zeros((3, 3), split=1, comm=comm)
    b.fill_diagonal(1.0)
    assert b.tolist() == np.eye(3).tolist()
    assert isinstance(np.multiply(a, 2), ht.DNDarray)
    assert isinstance(a[1:3], ht.DNDarray) and isinstance(a.sum(), ht.DNDarray)


def test_heat_out_rules_and_rounding(comm_of):
    comm = comm_of(3)
    x = ht.array([1.5, -2.5, 0.25], comm=comm)
    frac, whole = ht.empty(3, comm=comm), ht.empty(3, comm=comm)
    assert ht.modf(x, (frac, whole)) == (frac, whole)
    assert frac.tolist() == [0.5, -0.5, 0.25] and whole.tolist() == [1.0, -2.0, 0.0]
    with pytest.raises(ValueError, match=r"`out` of `modf` must be a tuple of two, got 3 items"):
        ht.modf(x, (frac, whole, whole))
    with pytest.raises(TypeError, match=r"`out` of `modf` must be a DNDarray, got int"):
        ht.modf(x, (frac, 2))
    assert frac.tolist() == [0.5, -0.5, 0.25]  # a refused call wrote nothing
    assert ht.round(x, dtype=ht.int32).tolist() == [2, -2, 0]  # half to even, as torch
    with pytest.raises(TypeError, match=r"`dtype` of `round` must be a Heat type"):
        ht.round(x, dtype=np.int_)
    with pytest.raises(TypeError, match=r"`out` of `round` must be a DNDarray, got int"):
        ht.round(x, 1, 1)
    # Heat's sanitize_out: the buffer must have the result's split
    a = ht.ones((2, 2), split=0, comm=comm)
    with pytest.raises(ValueError, match=r"`out` of `div` must have the result's split 0"):
        ht.div(a, ht.ones((2, 2), comm=comm), out=ht.empty((2, 2), comm=comm))
    with pytest.raises(ValueError, match=r"`out` of `cumsum` must have the result's split 2"):
        ht.cumsum(ht.ones((2, 2, 2), split=2, comm=comm), 2, out=ht.empty((2, 2, 2), split=0))
    with pytest.raises(ValueError, match=r"`out` of `divmod` must be a tuple of two, got 3"):
        ht.divmod(a, a, out=(1, 2, 3))
    # Heat's complex sign: x / sqrt(x**2), so +-1 (the real part's sign, else the imaginary's)
    z = ht.array([[1 - 2j, -0.5 + 1j], [0, 3j]], split=0, comm=comm)
    assert ht.sign(z).numpy().tolist() == [[1 + 0j, -1 + 0j], [0j, 1 + 0j]]
    assert z.sign().dtype is ht.complex64


def test_array_of_a_tensor_without_copy_shares_it(comm_of):
    t = torch.tensor([6, 5, 4, 3, 2, 1])
    c = ht.array(t, copy=False, comm=comm_of(2))
    assert c.larray is t and c.dtype is ht.int64
    t[0] = 100  # Heat: the tensor is the array's local data
    assert c.tolist() == [100, 5, 4, 3, 2, 1]
    assert ht.array(t, comm=comm_of(2)).tolist()[0] == 100


def test_equal_follows_heat(comm_of):
    comm = comm_of(3)
    a = ht.array([[1.0, 2.0], [3.0, 4.0]], comm=comm)
    assert ht.equal(a, a) and not ht.equal(a[1:], a) and not ht.equal(a, 2.0)
    assert ht.equal(ht.array([2.0], comm=comm), 2) and ht.equal(2, ht.array(2, comm=comm))
    assert ht.equal(ht.array([[5]], comm=comm), ht.array(5.0, comm=comm))  # one element each
    assert not ht.equal(ht.ones(2, comm=comm), 1.0) and ht.equal(3, 3.0)
    with pytest.raises(NotImplementedError, match=r"different comms"):
        ht.equal(a, ht.array([[1.0, 2.0], [3.0, 4.0]], comm=comm_of(1)))
    s = ht.array([[1.0, 2.0], [3.0, 4.0]], split=0, comm=comm)
    with pytest.raises(ValueError, match=r"the same split, got 0 and 1"):
        ht.equal(s, s.resplit(1))
    assert ht.equal(s, a) and ht.equal(a, s)


def test_randperm_and_permutation_use_torch_generator(comm_of):
    comm = comm_of(3)
    state = torch.random.get_rng_state()
    p = ht.random.randperm(10, split=0, comm=comm)
    x = ht.arange(16, comm=comm).reshape((4, 4)).resplit(1)
    q = ht.random.permutation(x)
    torch.random.set_rng_state(state)
    assert p.tolist() == torch.randperm(10).tolist() and p.dtype is ht.int64 and p.split == 0
    np.testing.assert_array_equal(q.numpy(), np.arange(16).reshape(4, 4)[torch.randperm(4)])
    assert q.split == 1
    ht.random.set_state(("Batchparallel", 321, 10))
    assert ht.random.get_state() == ("Batchparallel", 321, 321, 0, 0.0)
    ht.random.set_state(("Batchparallel", None, 5))
    assert ht.random.get_state() == ("Batchparallel", None, 5, 0, 0.0)
    ht.random.seed(1)
    assert ht.random.get_state()[1] == 1


def test_inplace_rules_follow_heat(comm_of):
    comm = comm_of(3)
    f = ht.array([[1.0, 2.0], [3.0, 4.0]], comm=comm)
    i = ht.array([[1, 2], [3, 4]], comm=comm)  # int64
    assert ht.can_cast(ht.int32, ht.float32) and not ht.can_cast(ht.int64, ht.float32)
    with pytest.raises(TypeError, match=r"in-place `hypot_` cannot cast int64 to float32"):
        f.hypot_(i)
    with pytest.raises(TypeError, match=r"operand 0 of `copysign_` must be real floating"):
        i.copysign_(f)
    a = ht.ones(10, comm=comm)
    with pytest.raises(ValueError, match=r"`out` of `add` must have the result's split 0"):
        a += ht.ones(10, split=0, comm=comm)
    assert a.tolist() == [1.0] * 10
    with pytest.raises(NotImplementedError):
        f.cumsum_(None)
    with pytest.raises(ValueError, match=r"`axis` of `cumprod` must be one axis"):
        f.cumprod_((2, 2))
    assert f.cumsum_(0).tolist() == [[1.0, 2.0], [4.0, 6.0]]
    buf = ht.zeros((3, 4), comm=comm)  # a unary out= larger than x: x repeated (Heat)
    assert ht.sqrt(ht.array([0.0, 1.0, 4.0, 9.0], comm=comm), out=buf) is buf
    assert buf.tolist() == [[0.0, 1.0, 2.0, 3.0]] * 3
    assert ht.isclose(2.0, 2.00005) is False and ht.allclose(2, 2.0) is True
    with pytest.raises(TypeError, match=r"`y` of `allclose` must be a DNDarray or a numeric"):
        ht.allclose(f, (2, 2))


def test_manipulation_adapters(comm_of):
    comm = comm_of(3)
    b = ht.zeros((4, 5, 6), split=0, comm=comm)
    assert b.reshape(ht.array([4, 5, 6], dtype=ht.int, comm=comm)).shape == (4, 5, 6)
    assert b.reshape(np.asarray([20, 6], dtype=np.int32)).shape == (20, 6)
    assert ht.arange(20, comm=comm).reshape((4, 5), dtype=ht.int16, new_split=0).dtype is ht.int16
    with pytest.raises(TypeError, match=r"a shape must hold ints, got float64"):
        b.reshape(np.asarray([20.0, 6.0]))
    ones = [ht.ones(4, split=0, comm=comm) for _ in range(3)]
    out = ht.empty((3, 4), split=1, comm=comm)  # Heat: out has the result's split
    assert ht.stack(ones, axis=0, out=out) is out and out.tolist() == [[1.0] * 4] * 3
    with pytest.raises(ValueError, match=r"`out` of `stack` must have the result's split 1"):
        ht.stack(ones, axis=0, out=ht.empty((3, 4), split=0, comm=comm))
    a = ht.random.rand(5, 6, 3, split=1, comm=comm)
    np.testing.assert_array_equal(ht.diag(a).numpy(), np.diagonal(a.numpy()))
    with pytest.raises(ValueError, match=r"`offset` of `diagonal` must be an int, got NoneType"):
        ht.diagonal(a, offset=None)
    with pytest.raises(RuntimeError, match=r"must share one comm"):
        ht.concatenate([ht.zeros(10, comm=comm), ht.zeros(10, comm=comm_of(1))])


def test_inplace_refuses_operands_split_along_different_axes(comm_of):
    comm = comm_of(3)
    a = ht.ones(9, comm=comm).reshape((3, 3), new_split=0)
    with pytest.raises(ValueError, match=r"distributed along different axes"):
        a += ht.ones(9, comm=comm).reshape((3, 3), new_split=1)
    b = ht.ones(12, comm=comm).reshape((4, 3), new_split=1)
    b.hypot_(ht.ones(3, split=0, comm=comm) * 2)  # broadcast: the same axis, allowed
    np.testing.assert_allclose(b.pow_(2).numpy(), np.full((4, 3), 5.0), rtol=1e-6)


def test_one_local_piece_is_every_ranks_piece(comm_of):
    comm = comm_of(3)
    local = np.arange(10.0).reshape(2, 5)
    a = ht.array(local, is_split=0, comm=comm)  # SPMD: every rank passes `local`
    assert a.shape == (6, 5) and a.split == 0 and a.lshape_map[:, 0].tolist() == [2, 2, 2]
    np.testing.assert_array_equal(a.numpy(), np.concatenate([local] * 3))
    t = ht.array(torch.ones(3, 2, dtype=torch.float64), is_split=1, comm=comm)
    assert t.shape == (3, 6) and t.dtype is ht.float64
    pieces = [np.full((1, 2), r) for r in range(3)]  # a list of comm.size arrays: per rank
    assert ht.array(pieces, is_split=0, comm=comm).numpy()[:, 0].tolist() == [0, 1, 2]


def test_heat_split_and_axis_checks(comm_of):
    comm = comm_of(3)
    v = ht.ones((6, 3), split=0, comm=comm)
    with pytest.raises(NotImplementedError, match=r"`maximum` of operands distributed along"):
        ht.maximum(v, ht.ones((6, 3), split=1, comm=comm))
    assert ht.minimum(v, ht.zeros(3, comm=comm)).tolist() == [[0.0] * 3] * 6


def test_linalg_checks_follow_heat(comm_of):
    comm = comm_of(3)
    x = ht.arange(9, dtype=ht.float32, comm=comm).reshape((3, 3))
    assert ht.linalg.det(ht.eye(3, comm=comm)).item() == 1.0
    assert ht.zeros((2, 3, 4), comm=comm).transpose(axes=(2, 0, 1)).shape == (4, 2, 3)
    assert ht.transpose(x).tolist() == np.arange(9.0).reshape(3, 3).T.tolist()
    with pytest.raises(RuntimeError, match=r"`a` of `det` must be square"):
        ht.linalg.det(ht.array([1.0, 2.0, 3.0], split=0, comm=comm))
    with pytest.raises(RuntimeError, match=r"`a` of `inv` must be floating, got int32"):
        ht.linalg.inv(ht.zeros((2, 2), dtype=ht.int, comm=comm))
    with pytest.raises(ValueError, match=r"`dtype` of `trace` must be a type"):
        ht.trace(x, dtype="ht.int64")
    with pytest.raises(TypeError, match=r"`out` of `trace` must be a DNDarray, got list"):
        ht.trace(x, out=[])
    with pytest.raises(ValueError, match=r"`axes` must be a tuple of ints, got 1.0"):
        ht.transpose(x, axes=1.0)
    with pytest.raises(TypeError, match=r"`axes` must hold ints, got 1.0"):
        x.transpose(axes=(0, 1.0))
    with pytest.raises(ValueError, match=r"`axes` must name all 2 axes"):
        ht.transpose(x, axes=(-1,))


def test_split_warns_for_distributed_indices_and_diag_checks(comm_of):
    comm = comm_of(3)
    x = ht.arange(24, comm=comm).reshape((4, 6))
    with pytest.warns(UserWarning, match=r"`indices_or_sections` of `hsplit` is distributed"):
        parts = ht.hsplit(x, ht.array([2, 4], split=0, comm=comm))
    assert [p.shape for p in parts] == [(4, 2), (4, 2), (4, 2)]
    with pytest.raises(ValueError, match=r"`offset` of `diag` must be an int, got str"):
        ht.diag(ht.arange(3, comm=comm), offset="3")
    with pytest.raises(ValueError, match=r"`a` of `diag` must have at least one dimension"):
        ht.diag(ht.array(1.0, comm=comm))
    with pytest.raises(TypeError, match=r"`a` of `diag` must be a DNDarray, got Tensor"):
        ht.diag(torch.ones(3))
    with pytest.raises(ValueError, match=r"`a` of `diagonal` must be a DNDarray, got Tensor"):
        ht.diagonal(torch.ones(3, 3))


def test_meshgrid_follows_heat(comm_of):
    comm = comm_of(3)
    assert ht.meshgrid() == []
    (g,) = ht.meshgrid(ht.array(1, comm=comm))
    assert g.shape == (1,) and g.tolist() == [1]
    x, y = ht.arange(4, split=0, comm=comm), ht.arange(3, comm=comm)
    xx, _ = ht.meshgrid(x, y, indexing="ij")
    np.testing.assert_array_equal(
        xx.numpy(), np.meshgrid(np.arange(4), np.arange(3), indexing="ij")[0]
    )
    assert xx.split == 0
    with pytest.raises(ValueError, match=r"only one array of `meshgrid` may be distributed"):
        ht.meshgrid(x, ht.arange(3, split=0, comm=comm))


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_meshgrid_splits_every_grid_like_heat(comm_of, n):
    comm = comm_of(n)
    xs, ys = np.arange(4.0), np.arange(3.0) * 10
    for indexing in ("xy", "ij"):
        want = np.meshgrid(xs, ys, indexing=indexing)
        for first in (True, False):
            x = ht.array(xs, split=0 if first else None, comm=comm)
            y = ht.array(ys, split=None if first else 0, comm=comm)
            grids = ht.meshgrid(x, y, indexing=indexing)
            axis = (0 if first else 1) if indexing == "ij" else (1 if first else 0)
            for g, w in zip(grids, want, strict=True):
                assert g.split == axis
                np.testing.assert_array_equal(g.numpy(), w)


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_sort_returns_values_and_int32_indices(comm_of, n):
    comm = comm_of(n)
    x = np.array([[3, 1, 3, 2], [0, 0, 5, 1], [2, 2, 2, 2]], dtype=np.int64)
    for split in splits_of(2):
        a = ht.array(x, split=split, comm=comm)
        for axis in (0, 1, -1):
            for descending in (False, True):
                values, indices = ht.sort(a, axis, descending=descending)
                key = -x if descending else x
                order = np.argsort(key, axis=axis, kind="stable")
                assert indices.dtype is ht.int32
                np.testing.assert_array_equal(indices.numpy(), order)
                np.testing.assert_array_equal(
                    values.numpy(), np.take_along_axis(x, order, axis=axis)
                )
        out = ht.empty_like(a)
        idx = ht.sort(a, 0, out=out)
        np.testing.assert_array_equal(out.numpy(), np.sort(x, axis=0))
        np.testing.assert_array_equal(idx.numpy(), np.argsort(x, axis=0, kind="stable"))


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_nonzero_where_and_coordinate_keys(comm_of, n):
    comm = comm_of(n)
    x = np.array([[0, 2, 0], [4, 0, 6], [7, 8, 0], [0, 0, 1]])
    coords = np.stack(np.nonzero(x), axis=1)
    results, expected = [], []  # their values in one round trip, below
    for split in splits_of(2):
        base = ht.array(x, split=split, comm=comm)
        for a in (base, skewed(base)):
            nz = ht.nonzero(a)
            assert nz.dtype is ht.int64 and nz.split == (None if split is None else 0)
            results += [nz, ht.where(a > 0), a[nz]]
            expected += [coords, coords, x[tuple(coords.T)]]
            b = a.copy()
            b[nz] = 10.0  # an integral float into an int array, as Heat allows
            results += [b, ht.where(a > 1, a, -1)]
            expected += [np.where(x != 0, 10, 0), np.where(x > 1, x, -1)]
    one_d = ht.array(np.array([0, 3, 0, 4]), split=0, comm=comm)
    results.append(ht.nonzero(one_d))
    expected.append([1, 3])
    for got, want in zip(values_of(results), expected, strict=True):
        np.testing.assert_array_equal(got, want)
    b[0, 0] = 1.5  # a fraction is truncated, as Heat's torch assignment does
    assert b[0, 0].item() == 1


@pytest.mark.parametrize("n", [1, 3, 5])
def test_assignment_casts_as_torch(comm_of, n):
    """Heat assigns through ``torch.Tensor.__setitem__``: any numeric value is cast to the
    array's dtype (floats truncated toward zero into ints, nonzero to True in bools)."""
    torch = pytest.importorskip("torch")
    comm = comm_of(n)
    results, expected = [], []
    for split in (None, 0):
        a = ht.arange(4, split=split, comm=comm)  # int32, an empty rank at n = 5
        t = torch.arange(4, dtype=torch.int32)
        for key, value, tvalue in (
            (-1, 1e-12, 1e-12),
            (0, 2.7, 2.7),
            (1, np.float64(-1.5), -1.5),
            (slice(2, 3), np.array([3.9]), torch.tensor([3.9])),
            (slice(0, 2), ht.array([7.8, -0.5], comm=comm), torch.tensor([7.8, -0.5])),
            (2, torch.tensor(-9.99, dtype=torch.float64), torch.tensor(-9.99)),
        ):
            a[key] = value
            t[key] = tvalue
        results.append(a)
        expected.append(t.numpy())
        assert a.dtype is ht.int32
        b = ht.zeros(3, dtype=ht.bool, split=split, comm=comm)
        tb = torch.zeros(3, dtype=torch.bool)
        b[1] = 0.5
        tb[1] = 0.5
        results.append(b)
        expected.append(tb.numpy())
    for got, want in zip(values_of(results), expected, strict=True):
        np.testing.assert_array_equal(got, want)
    a = ht.arange(3, split=0, comm=comm)
    with pytest.raises(TypeError, match="numeric or boolean"):
        a[0] = "x"  # not a number: refused, and the array is unchanged
    np.testing.assert_array_equal(a.numpy(), [0, 1, 2])


@pytest.mark.parametrize("n", [1, 3, 5])
def test_joins_follow_heat(comm_of, n):
    comm = comm_of(n)
    d = ht.array(np.arange(10.0, dtype=np.float32), split=0, comm=comm)
    e = ht.array(np.arange(10), split=0, comm=comm)
    for fn, axis in ((ht.column_stack, 1), (ht.row_stack, 0)):
        r = fn((d, e))
        assert r.dtype is ht.float32  # torch.stack's type of float32 and int64
        assert r.split == (0 if axis == 1 else 1)
        np.testing.assert_array_equal(r.numpy(), np.stack([np.arange(10.0)] * 2, axis=axis))
    c = ht.concatenate((d, e))
    assert c.dtype is ht.float64  # Heat's promote_types
    m = ht.array(np.arange(10.0).reshape(2, 5), split=0, comm=comm)
    r = ht.row_stack((m, ht.array(np.arange(5.0), split=0, comm=comm)))
    assert r.split == 0
    np.testing.assert_array_equal(
        r.numpy(), np.vstack([np.arange(10.0).reshape(2, 5), np.arange(5.0)])
    )
    a, b = ht.broadcast_arrays(
        ht.ones((4, 1), split=0, comm=comm), ht.arange(3, comm=comm).reshape((1, 3))
    )
    assert a.shape == b.shape == (4, 3) and a.split == 0


@pytest.mark.parametrize("n", [1, 3, 5])
def test_pad_topk_unique_follow_heat(comm_of, n):
    comm = comm_of(n)
    x = np.arange(60.0).reshape(3, 4, 5)
    for split in splits_of(3):
        a = ht.array(x, split=split, comm=comm)
        p = ht.pad(a, ((2, 1), (1, 0)), constant_values=((0, 3), (1, 4)))
        want = np.pad(x, ((0, 0), (2, 1), (1, 0)), constant_values=((0, 0), (0, 3), (1, 4)))
        np.testing.assert_array_equal(p.numpy(), want)
    t = np.tile(np.arange(4, dtype=np.int32), (4, 1))
    for split in (0, 1):
        a = ht.array(t, split=split, comm=comm)
        values, indices = ht.topk(a, 2)
        assert values.split == split and indices.dtype is ht.int64
        np.testing.assert_array_equal(values.numpy(), np.tile([3, 2], (4, 1)))
        np.testing.assert_array_equal(indices.numpy(), np.tile([3, 2], (4, 1)))
        u = a.unique(sorted=True)
        assert u.split == (0 if split == 0 else None)
        np.testing.assert_array_equal(u.numpy(), np.arange(4))
        rows, inverse = ht.unique(a, return_inverse=True, axis=0)
        np.testing.assert_array_equal(rows.numpy(), [np.arange(4)])
        np.testing.assert_array_equal(inverse.numpy().reshape(-1), [0, 0, 0, 0])


@pytest.mark.parametrize("n", [1, 3, 5])
def test_statistics_follow_heat(comm_of, n):
    comm = comm_of(n)
    x = np.arange(1, 13, dtype=np.int32).reshape(4, 3)
    for split in splits_of(2):
        a = ht.array(x, split=split, comm=comm)
        v = a.var(ddof=1)
        assert v.dtype is ht.float32  # Heat computes int32 in float32
        np.testing.assert_allclose(v.numpy(), np.var(x, ddof=1), rtol=1e-6)
        assert ht.std(a, axis=0).dtype is ht.float32
        p = ht.percentile(a, [25, 50], axis=0)
        assert p.dtype is ht.float32 and p.split == (1 if split == 1 else None)
        np.testing.assert_allclose(p.numpy(), np.percentile(x, [25, 50], axis=0), rtol=1e-6)
        for kw in ({"method": "lower"}, {"interpolation": "lower"}):
            low = ht.percentile(a, 30, **kw)
            assert low.dtype is ht.float32 and low.item() == np.percentile(x, 30, method="lower")
        assert ht.any(a[:, 0], axis=0).shape == (1,) and ht.all(a).shape == ()
        h = ht.histogram(a.astype(ht.float32), bins=4)
        np.testing.assert_array_equal(h.numpy(), np.histogram(x, bins=4)[0].astype(np.float32))
        out = ht.empty((3,), dtype=ht.int64, comm=comm)
        ht.argmax(a, axis=0, out=out)
        np.testing.assert_array_equal(out.numpy(), [3, 3, 3])


def test_numpy_protocols_follow_heat(comm_of):
    arr = ht.array([1, 2, 3, 4], comm=comm_of(3))
    assert isinstance(np.sin(arr), ht.DNDarray) and np.add(arr, 3).tolist() == [4, 5, 6, 7]
    with pytest.raises(TypeError):
        np.multiply.reduce(arr)
    with pytest.raises(TypeError):
        np.heaviside(arr, 5)
    with pytest.raises(TypeError):
        np.array_equiv(arr, arr)
    assert isinstance(np.concatenate([arr, arr]), ht.DNDarray)


def test_qr_and_svd_follow_heat(comm_of):
    comm = comm_of(3)
    A = np.random.default_rng(5).standard_normal((12, 4))
    a = ht.array(A, split=0, comm=comm)
    for procs_to_merge in (0, 2, 3):
        q, r = ht.linalg.qr(a, procs_to_merge=procs_to_merge)
        assert isinstance(q, ht.DNDarray) and isinstance(r, ht.DNDarray)
        np.testing.assert_allclose(q.numpy() @ r.numpy(), A, atol=1e-10)
    assert ht.linalg.qr(a, mode="r").Q is None
    # Heat 1.8 returns numpy's Vh: U @ diag(S) @ Vh == A
    u, s, vh = ht.linalg.svd(a, qr_procs_to_merge=0)
    assert (u.split, s.split, vh.split) == (0, None, None) and vh.shape == (4, 4)
    np.testing.assert_allclose((u.numpy() * s.numpy()) @ vh.numpy(), A, atol=1e-10)
    w = ht.array(A.T.copy(), split=1, comm=comm)  # short-fat, columns split: Vh split 1
    u, s, vh = ht.linalg.svd(w)
    assert (u.split, s.split, vh.split) == (None, None, 1) and vh.shape == (4, 12)
    np.testing.assert_allclose((u.numpy() * s.numpy()) @ vh.numpy(), A.T, atol=1e-10)
    assert isinstance(ht.linalg.svd(a, compute_uv=False), ht.DNDarray)
    # neither tall-skinny nor short-fat on several ranks: Heat warns (its Zolo-PD path)
    square = ht.array(np.eye(6) + 0.1, split=0, comm=comm)
    with pytest.warns(UserWarning, match="neither tall-skinny nor short-fat"):
        u, s, vh = ht.linalg.svd(square)
    np.testing.assert_allclose((u.numpy() * s.numpy()) @ vh.numpy(), np.eye(6) + 0.1, atol=1e-10)
    with (
        pytest.warns(UserWarning, match="neither tall-skinny"),
        pytest.raises(ValueError, match="`r_max_zolopd` must be in"),
    ):
        ht.linalg.svd(square, r_max_zolopd=0)
    ht.linalg.svd(a, r_max_zolopd=0)  # tall-skinny: Heat does not check it there


def test_qr_and_svd_bad_input_follow_heat(comm_of):
    comm = comm_of(2)
    a = ht.zeros((10, 10), comm=comm)
    with pytest.raises(TypeError, match="`a` must be a DNDarray, got list"):
        ht.linalg.qr([1, 2, 3])
    with pytest.raises(NotImplementedError, match="mode='complete' is not supported"):
        ht.linalg.qr(a, mode="complete")
    with pytest.raises(NotImplementedError, match="mode='raw' is not supported"):
        ht.linalg.qr(a, mode="raw")
    with pytest.raises(ValueError, match="`mode` must be 'reduced' or 'r', got 'full'"):
        ht.linalg.qr(a, mode="full")
    with pytest.raises(TypeError, match="`procs_to_merge` must be an int, got str"):
        ht.linalg.qr(a, procs_to_merge="abc")
    with pytest.raises(ValueError, match=r"`procs_to_merge` must be 0 \(all ranks at once\)"):
        ht.linalg.qr(a, procs_to_merge=1)
    with pytest.raises(TypeError, match="`a` of `qr` must be float32, float64 or complex"):
        ht.linalg.qr(ht.zeros((10, 10), dtype=ht.int32, comm=comm))
    with pytest.raises(NotImplementedError, match="full_matrices=True"):
        ht.linalg.svd(a, full_matrices=True)
    with pytest.raises(TypeError, match="`a` must be a DNDarray, got str"):
        ht.linalg.svd("abc")
    with pytest.raises(TypeError, match="`qr_procs_to_merge` must be an int"):
        ht.linalg.svd(a, qr_procs_to_merge="def")
    with pytest.raises(ValueError, match="`qr_procs_to_merge` must be 0"):
        ht.linalg.svd(a, qr_procs_to_merge=1)
    with pytest.raises(ValueError, match="`r_max_zolopd` must be an int in"):
        ht.linalg.svd(a, r_max_zolopd=9)
    with pytest.raises(ValueError, match="`a` of `svd` must be 2-D, got 3"):
        ht.linalg.svd(ht.zeros((2, 2, 2), comm=comm))
    with pytest.raises(TypeError, match="`a` of `svd` must be float32 or float64, got int32"):
        ht.linalg.svd(ht.ones((4, 2), dtype=ht.int32, split=0, comm=comm))


@pytest.mark.parametrize("n", [1, 3])
def test_norms_keep_heats_dtypes(comm_of, n):
    comm = comm_of(n)
    a = ht.arange(9, dtype=ht.float32, split=0, comm=comm) - 4
    b0 = ht.reshape(a, (3, 3), new_split=0)
    assert ht.vector_norm(a, ord=ht.inf).dtype is ht.float32
    assert ht.vector_norm(b0, axis=1, ord=2).split == 0
    assert ht.linalg.matrix_norm(b0, ord=1).item() == 7.0
    m = ht.arange(8, split=0, comm=comm).reshape((2, 2, 2))  # int32
    mn = ht.linalg.matrix_norm(m, axis=(2, 1), ord=ht.inf)
    assert mn.dtype is ht.int64 and mn.tolist() == [4, 12]
    assert ht.vector_norm(m, ord=ht.inf).dtype is ht.int32
    assert ht.vector_norm(m, ord=1).dtype is ht.int64
    assert ht.vector_norm(m, ord=3).dtype is ht.float32
    gn = ht.linalg.norm(ht.ones((3, 3, 3), dtype=ht.int, comm=comm), axis=(-2, -1))
    assert gn.dtype is ht.float32 and gn.tolist() == [3.0, 3.0, 3.0]
    z = ht.array([1 + 1j, 2 - 2j, 1j, 2 + 1j], dtype=ht.complex64, split=0, comm=comm)
    gz = ht.linalg.norm(z, keepdims=True)
    assert gz.dtype is ht.float32 and gz.shape == (1,) and gz.item() == 4.0
    assert ht.linalg.norm(b0, ord="fro").item() == pytest.approx(np.sqrt(60.0))
    assert ht.linalg.norm(b0, ord=ht.inf).item() == 9.0
    full = ht.full((4, 4), 1 + 1j, dtype=ht.int, comm=comm)  # Heat: complex fill -> complex64
    assert full.dtype is ht.complex64
    assert ht.linalg.vector_norm(full, axis=0, ord=4).tolist() == [2.0] * 4
    with pytest.raises(NotImplementedError, match="ord=2 is not supported"):
        ht.linalg.matrix_norm(b0, ord=2)
    with pytest.raises(ValueError, match="cannot be inferred for 3-D"):
        ht.linalg.matrix_norm(ht.ones((2, 2, 2), comm=comm))
    with pytest.raises(TypeError, match="must be a 2-tuple, got 1"):
        ht.linalg.matrix_norm(b0, axis=1)
    with pytest.raises(TypeError, match="an int or a 1-tuple, got 'r'"):
        ht.vector_norm(a, axis="r")
    with pytest.raises(ValueError, match="`axis` of `norm` must be an int or 1 or 2 axes"):
        ht.linalg.norm(ht.ones(2, comm=comm), axis=(0, 1, 2))


def test_products_follow_heats_types_and_rules(comm_of):
    comm = comm_of(3)
    eye = ht.eye(3, comm=comm)  # float32
    perm = ht.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], comm=comm)  # int64
    cross = ht.cross(eye, perm)
    assert cross.dtype is ht.float32  # torch's promotion, where numpy gives float64
    np.testing.assert_array_equal(cross.numpy(), np.cross(np.eye(3), perm.numpy()))
    i8 = ht.eye(3, dtype=ht.int8, split=1, comm=comm)
    assert (
        ht.cross(i8, ht.array(perm.numpy(), dtype=ht.int8, split=1, comm=comm), axis=0).dtype
        is ht.int8
    )
    np_a = np.random.default_rng(1).standard_normal((6, 3, 5)).astype(np.float32)
    np_b = np.random.default_rng(2).standard_normal((3, 6, 5)).astype(np.float32)
    got = ht.cross(
        ht.array(np_a, split=0, comm=comm), ht.array(np_b, split=1, comm=comm), axisa=1, axisb=0
    )
    np.testing.assert_allclose(got.numpy(), np.cross(np_a, np_b, axisa=1, axisb=0), rtol=1e-6)
    with pytest.raises(ValueError, match="same split once the vector axes are aligned"):
        ht.cross(
            ht.array(np_a[:, :2], split=2, comm=comm),
            ht.array(np_b, split=1, comm=comm),
            axisa=1,
            axisb=0,
        )
    with pytest.raises(ValueError, match="vectors along the split axis"):
        ht.cross(ht.eye(3, split=0, comm=comm), ht.eye(3, split=0, comm=comm), axis=0)
    with pytest.raises(TypeError, match="`axis` of `cross` must be an int, got str"):
        ht.cross(eye, eye, axis="wasd")
    c = ht.linalg.vecdot(
        ht.full((4, 4), 2, split=0, comm=comm), ht.ones(4, comm=comm), axis=0, keepdims=True
    )
    assert c.dtype is ht.float32 and c.tolist() == [[8.0] * 4]
    assert (
        ht.linalg.vecdot(ht.array([1, 1, 1], comm=comm), ht.array([1, 2, 3], comm=comm)).item() == 6
    )
    i32 = ht.arange(3, dtype=ht.int32, comm=comm)
    f32 = ht.arange(8, dtype=ht.float32, split=0, comm=comm)
    out = ht.empty((3, 8), dtype=ht.float32, split=1, comm=comm)
    ht.outer(i32, f32, out=out, split=1)
    assert ht.outer(i32, f32).dtype is ht.float32
    np.testing.assert_array_equal(out.numpy(), np.outer(np.arange(3), np.arange(8)))
    with pytest.raises(TypeError, match="`b` of `outer` must be a DNDarray, got ndarray"):
        ht.outer(i32, np.arange(8))
    with pytest.raises(RuntimeError, match="`a` of `outer` must have at least one dimension"):
        ht.outer(ht.array(2.3, comm=comm), f32)
    with pytest.raises(ValueError, match="`out` of `outer` must have the result's split 1"):
        ht.outer(i32, f32, out=ht.empty((3, 8), dtype=ht.float32, split=0, comm=comm), split=1)
    # dot: out= ignored for vectors and scalars (Heat), replaced for matrices
    v = ht.arange(10, dtype=ht.float32, split=0, comm=comm)
    assert ht.dot(v, v, out=[]).item() == 285.0
    assert ht.dot(6, 5) == 30
    m = ht.ones((4, 4), split=1, comm=comm)
    ret = ht.zeros((4, 4), split=0, comm=comm)
    assert ht.dot(m, m, out=ret) is ret
    assert ret.tolist() == [[4.0] * 4] * 4
    with pytest.raises(NotImplementedError, match="more than 2 dimensions"):
        ht.dot(ht.ones((2, 2, 2), comm=comm), ht.ones(2, comm=comm))
    # projection
    e2 = ht.array([0, 1, 0], dtype=ht.float32, split=0, comm=comm)
    p = ht.linalg.projection(ht.arange(1, 4, dtype=ht.float32, split=0, comm=comm), e2)
    assert p.tolist() == [0.0, 2.0, 0.0]
    with pytest.raises(RuntimeError, match="`a` of `projection` must be 1-D"):
        ht.linalg.projection(ht.ones((3, 1), comm=comm), e2)


def test_matmul_inv_and_matrix_exp_follow_heat(comm_of):
    comm = comm_of(3)
    a, b = ht.ones((6, 4), comm=comm), ht.ones((4, 5), comm=comm)
    c = ht.matmul(a, b, allow_resplit=True)
    assert c.split is None and a.split == 0  # Heat resplits a in place, the result stays None
    assert c.tolist() == [[4.0] * 5] * 6
    with pytest.raises(ValueError, match="same number of axes"):
        ht.matmul(ht.zeros((3, 3, 3), comm=comm), ht.zeros((3,), comm=comm))
    with pytest.raises(ValueError, match="same batch shape"):
        ht.matmul(ht.zeros((3, 3, 3), split=0, comm=comm), ht.zeros((4, 3, 3), split=0, comm=comm))
    with pytest.raises(NotImplementedError, match="split along different axes"):
        ht.matmul(
            ht.zeros((4, 3, 3, 3), split=0, comm=comm), ht.zeros((4, 3, 3, 3), split=1, comm=comm)
        )
    with pytest.raises(NotImplementedError, match="a stack of matrices and a vector"):
        ht.matmul(ht.zeros((3, 3, 3), split=0, comm=comm), ht.zeros((3, 3), split=0, comm=comm))
    with pytest.raises(RuntimeError, match="singular"):
        ht.linalg.inv(ht.ones((3, 3), split=1, comm=comm))
    x = ht.array([[5.0, -3, 2], [-3, 2, -1], [-3, 2, -2]], split=0, comm=comm)
    np.testing.assert_allclose(ht.linalg.inv(x).numpy(), np.linalg.inv(x.numpy()), rtol=1e-5)
    z = ht.random.randn(2, 3, 3, dtype=ht.complex64, split=0, comm=comm)
    assert z.dtype is ht.complex64
    got = ht.linalg.expm(z)
    assert got.dtype is ht.complex64 and got.split == 0
    expect = torch.linalg.matrix_exp(torch.from_numpy(z.numpy())).numpy()
    np.testing.assert_allclose(got.numpy(), expect, rtol=1e-4, atol=1e-5)
    with pytest.raises(RuntimeError, match="must be square"):
        ht.linalg.matrix_exp(ht.ones((4, 3), comm=comm))
    with pytest.raises(TypeError, match="must be a DNDarray, got Tensor"):
        ht.linalg.matrix_exp(torch.ones(3, 3))
    with pytest.raises(ValueError, match="must not be split along a matrix axis"):
        ht.linalg.matrix_exp(ht.ones((3, 3), split=1, comm=comm))


def test_condest_bounds_the_condition_number(comm_of):
    comm = comm_of(3)
    ht.random.seed(11)
    for shape, split in (((20, 60), 1), ((50, 31), 1), ((40, 12), 0), ((12, 12), None)):
        x = ht.random.randn(*shape, split=split, dtype=ht.float64, comm=comm)
        s = np.linalg.svd(x.numpy(), compute_uv=False)
        est = ht.linalg.condest(x, params={"nsamples": 15})
        assert isinstance(est, ht.DNDarray) and est.shape == () and est.dtype is ht.float64
        assert est.item() >= s.max() / s.min()
    est = ht.linalg._estimate_largest_singularvalue(x)
    assert est.shape == () and est.dtype is ht.float64 and est.item() >= s.max()
    with pytest.raises(NotImplementedError, match="only 'fro'"):
        ht.linalg._estimate_largest_singularvalue(x, algorithm="invalid")
    with pytest.raises(TypeError, match="`algorithm` must be a str, got int"):
        ht.linalg._estimate_largest_singularvalue(x, algorithm=1)
    with pytest.raises(NotImplementedError, match="algorithm='invalid'"):
        ht.linalg.condest(x, algorithm="invalid")
    with pytest.raises(TypeError, match="`algorithm` of `condest` must be a str"):
        ht.linalg.condest(x, algorithm=3.14)
    with pytest.raises(ValueError, match="`nsamples` of `condest` must be a positive int, got 0"):
        ht.linalg.condest(x, params={"nsamples": 0})
    with pytest.raises(TypeError, match="`params` of `condest` must be a dict"):
        ht.linalg.condest(x, params=10)
    with pytest.raises(ValueError, match="`p` of `condest` must be 2"):
        ht.linalg.condest(x, p=3)


# the domain of each function computed by torch's kernel, and a map of [0, 1) onto it
_TORCH_DOMAIN = {"arccosh": lambda v: 1.0 + 9.0 * v, "arcsin": lambda v: 2 * v - 1}
_TORCH_DOMAIN["arccos"] = _TORCH_DOMAIN["arctanh"] = _TORCH_DOMAIN["arcsin"]


def _per_chunk(fn, values: np.ndarray, a) -> np.ndarray:
    """``fn`` of each rank's piece of ``values`` (laid out as ``a``), joined: torch's values
    on Heat's local tensors (some of torch's kernels round an element by its place in a
    vector, so only the same pieces give the same bits)."""
    t = torch.from_numpy(values)
    if a.split is None:
        return fn(t).numpy()
    counts = a.lshape_map[:, a.split].tolist()
    # each piece contiguous, as a rank's chunk is: on a strided view torch's kernels take
    # another path, whose last bits differ on some CPUs (AVX2 without AVX-512)
    pieces = [fn(p.contiguous()) for p in torch.split(t, counts, dim=a.split)]
    return torch.cat(pieces, a.split).numpy()


@pytest.mark.parametrize("n", RANK_COUNTS)
def test_transcendental_values_are_torchs_to_the_last_bit(comm_of, n):
    from dndask.heat._optable import TORCH, TORCH_KERNEL

    comm = comm_of(n)
    # arange(10) in float32: numpy's exp rounds some of these the other way than torch's
    base = {
        np.float32: np.concatenate([np.arange(10), np.linspace(0, 0.999, 14)]).astype(np.float32),
        np.float64: np.linspace(0, 0.999, 24).reshape(4, 6),
        np.int32: np.arange(12, dtype=np.int32).reshape(2, 6),
    }
    results, expected, fused, fused_expected = [], [], [], []
    for dtype, x in base.items():
        for split in splits_of(x.ndim):
            for name in sorted(TORCH_KERNEL):
                v = x if dtype is np.int32 else _TORCH_DOMAIN.get(name, lambda v: v)(x)
                if dtype is np.int32 and name in ("arcsin", "arccos", "arctanh", "arccosh"):
                    continue  # out of the domain: NaN
                v = v.astype(dtype)
                a = skewed(ht.array(v, split=split, comm=comm))
                got = getattr(ht, name)(a)
                want = _per_chunk(getattr(torch, TORCH[name]), v, a)
                assert got.dtype == want.dtype and got.split == split, (name, got.dtype)
                results.append(got)
                expected.append(want)
        # fused into a reduction (the kernel is recorded as the chunks' producer)
        f = skewed(ht.array(x.astype(np.float32), split=0, comm=comm))
        fused.append(ht.exp(f).sum(axis=0))
        fused_expected.append(torch.from_numpy(x.astype(np.float32)).exp().sum(dim=0).numpy())
    got_values = values_of(results + fused)
    for got, want in zip(got_values[: len(results)], expected, strict=True):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(got_values[len(results) :], fused_expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    # the core keeps numpy's kernels
    core = dd.exp(dd.array(base[np.float32], split=0, comm=comm)).numpy()
    np.testing.assert_array_equal(core, np.exp(base[np.float32]))


def test_torch_kernel_chunks():
    from dndask import _ops, _torch

    kernel = _ops.TorchKernel("exp", np.dtype(np.float64))
    x = np.arange(6.0)[::-1]  # negative strides: torch gets a copy
    want = torch.exp(torch.arange(6.0, dtype=torch.float64).flip(0)).numpy()
    np.testing.assert_array_equal(kernel(x), want)
    assert _torch.to_torch(x).tolist() == x.tolist()
    assert _ops._per_chunk(kernel) and not _ops._per_chunk(np.add.outer)
    from dndask.heat import _adapt

    with pytest.raises(ValueError, match="`torch_kernel` needs a unary function"):
        _adapt.promoted(dd.add, "add", "add", 2, torch_kernel=True)


def test_repeat_warns_where_heat_copies(comm_of):
    import warnings

    comm = comm_of(3)
    a0 = ht.arange(12, split=0, comm=comm).reshape((2, 2, 3), new_split=0)
    a1 = ht.arange(12, split=0, comm=comm).reshape((2, 2, 3), new_split=1)
    a_none = ht.arange(12, comm=comm).reshape((2, 2, 3))
    r_split = ht.array([1, 2, 0], split=0, comm=comm)
    r_none = ht.array([1, 2, 0], comm=comm)
    flat = [1, 0, 2] * 4
    cases_warn = [
        (a1, 2, None, "`a` of `repeat` is split along axis 1"),
        (a1, flat, None, "`a` of `repeat` is split along axis 1"),
        (
            a0,
            ht.array(flat, comm=comm),
            None,
            "`repeats` of `repeat` is not split, .* needs it split along axis 0",
        ),
        (a_none, r_split, 2, "`repeats` of `repeat` is split along axis 0, .* needs it not split"),
        (a0, r_split, 2, "`repeats` of `repeat` is split along axis 0, .* needs it not split"),
        (
            a1,
            ht.array([1, 2], comm=comm),
            1,
            "is not split, but `a` \\(split 1\\) with `axis=1` needs it split along axis 0",
        ),
        (a_none, ht.array([3], split=0, comm=comm), None, "split along axis 0, .* not split"),
    ]
    assert (a0.split, a1.split, a_none.split) == (0, 1, None)
    for a, repeats, axis, match in cases_warn:
        # Heat may warn twice (it copies `a`, then `repeats`): the expected one must be there
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = ht.repeat(a, repeats, axis)
        assert caught and all(w.category is UserWarning for w in caught)
        assert any(re.search(match, str(w.message)) for w in caught), [
            str(w.message) for w in caught
        ]
        reps = repeats.numpy() if isinstance(repeats, dd.DNDarray) else repeats
        np.testing.assert_array_equal(got.numpy(), np.repeat(a.numpy(), reps, axis))
    quiet = [
        (a0, 2, None),
        (a0, 2, 1),
        (a_none, flat, None),
        (a_none, r_none, 2),
        (a0, r_none, 2),
        (a1, r_split[:2], 1),
        (ht.zeros((0, 3), split=1, comm=comm), 2, None),  # empty: Heat returns `a` as it is
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for a, repeats, axis in quiet:
            got = ht.repeat(a, repeats, axis)
            reps = repeats.numpy() if isinstance(repeats, dd.DNDarray) else repeats
            np.testing.assert_array_equal(got.numpy(), np.repeat(a.numpy(), reps, axis))
    with pytest.raises(
        ValueError, match=r"`axis` of `repeat` must be in \[0, 3\) \(as in Heat\), got -1"
    ):
        ht.repeat(a0, 2, -1)
    # a failed call warns nothing
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="repeats"):
            ht.repeat(a1, [1, 2, 3], None)


def test_face_relayouts_move_the_data_at_once(comm_of):
    comm = comm_of(3)
    x = np.arange(60.0).reshape(5, 4, 3)
    a = ht.array(x, split=0, comm=comm) + 1
    core = dd.array(x, split=0, comm=comm) + 1
    assert a.resplit_(2) is a and core.resplit_(2) is core
    # the face's array is persisted (its graph is its chunks); the core's stays a lazy graph
    assert len(dict(a.to_dask().__dask_graph__())) == a.to_dask().npartitions == 3
    assert len(dict(core.to_dask().__dask_graph__())) > 3
    a.resplit_(1)
    a.redistribute_(target_map=torch.tensor([[5, 4, 3], [5, 0, 3], [5, 0, 3]]))
    np.testing.assert_array_equal(a.numpy(), x + 1)
    assert a.split == 1 and a.lshape_map[:, 1].tolist() == [4, 0, 0]
    assert len(dict(a.to_dask().__dask_graph__())) == 3
    a.resplit_(1)  # no move: nothing submitted, the graph stays as it is
    assert len(dict(a.to_dask().__dask_graph__())) == 3
    np.testing.assert_array_equal(core.numpy(), x + 1)


def test_comm_is_heats_comm_world_for_a_driver():
    comm = ht.comm
    assert comm.size == dd.get_comm().size and comm.workers == dd.get_comm().workers
    values = np.random.default_rng(0).normal(size=(4, 3))
    assert comm.bcast(values, root=0) is values  # one driver: every rank holds this object
    assert comm.bcast("x", root=comm.size - 1) == "x"
    with pytest.raises(ValueError, match=r"`root` of `bcast` must be in \[0, \d+\), got -1"):
        comm.bcast(values, root=-1)
    with pytest.raises(TypeError, match="`root` of `bcast` must be an int, got str"):
        comm.bcast(values, root="0")
    with pytest.raises(AttributeError):
        comm.Allreduce  # noqa: B018  (raw MPI on buffers: not there)


# ---------------------------------------------------------------------------- printing
def test_print_options_profiles_and_local_printing(comm_of, capsys):
    comm = comm_of(3)
    x = ht.arange(12, dtype=ht.float, split=0, comm=comm).reshape((6, 2)) / 3
    before = ht.get_printoptions()
    try:
        ht.set_printoptions(precision=2)
        assert "0.33" in str(x) and "0.3333" not in str(x)
        ht.set_printoptions(profile="short")
        assert ht.get_printoptions()["edgeitems"] == 2 and ht.get_printoptions()["precision"] == 2
        ht.set_printoptions(profile="full", linewidth=50)
        opts = ht.get_printoptions()
        assert opts["threshold"] == float("inf") and opts["linewidth"] == 50
        ht.set_printoptions(profile="default", sci_mode=True)
        assert "3.3333e-01" in str(x)
        ht.set_printoptions(sci_mode=False)
        ht.local_printing()
        lines = str(x).split("\n")
        # every rank's chunk, each line tagged with its rank
        assert [line[:5] for line in lines] == [f"[{r}/2]" for r in (0, 0, 1, 1, 2, 2)]
        assert lines[1].endswith("device: cpu:0, split: 0")
        ht.print0(x)  # rank 0's chunk only
        ht.global_printing()
        ht.global_printing()  # already global: says nothing
        ht.print0(x[:1])
    finally:
        ht.global_printing()
        ht.set_printoptions(**{k: v for k, v in before.items()})
    out = capsys.readouterr().out.split("\n")
    assert out[0] == "Printing options set to LOCAL. DNDarrays will print the local PyTorch Tensors"
    assert out[1].startswith("[[0.0000, 0.3333]") and out[2].endswith("device: cpu:0, split: 0")
    assert out[3].startswith("Printing options set to GLOBAL")
    assert out[4].startswith("DNDarray([[0.0000, 0.3333]]")
    assert ht.get_printoptions() == before
    assert ht.printing.print0 is ht.print0 and ht.core.types.float32 is ht.float32


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: ht.set_printoptions(profile="long"), ValueError,
         r"`profile` must be one of \['default', 'full', 'short'\], got 'long'"),
        (lambda: ht.set_printoptions(precision=-1), ValueError, r"`precision` must be at least 0"),
        (lambda: ht.set_printoptions(edgeitems=1.5), TypeError, r"`edgeitems` must be an int"),
        (lambda: ht.set_printoptions(sci_mode="yes"), TypeError,
         r"`sci_mode` must be a bool or None, got str"),
    ],
    ids=["profile", "precision", "edgeitems", "sci-mode"],
)  # fmt: skip
def test_print_options_bad_input_changes_nothing(call, error, match):
    before = ht.get_printoptions()
    with pytest.raises(error, match=match):
        call()
    assert ht.get_printoptions() == before


def test_heat_types_without_a_value_are_one_zero(comm_of):
    for t in (ht.float32, ht.int, ht.bool, ht.complex64, ht.uint8):
        a = t()
        assert a.shape == (1,) and a.dtype == t
        assert not a.numpy().any()


def test_angle_iscomplex_isreal_in_the_face(comm_of):
    z = np.array([1j, -1.0 + 0j, 1 + 1j, 2.0 + 0j], dtype=np.complex64)
    a = ht.array(z, split=0, comm=comm_of(3))
    np.testing.assert_allclose(ht.angle(a).numpy(), np.angle(z), rtol=1e-6)
    np.testing.assert_allclose(ht.angle(a, deg=True).numpy(), np.angle(z, deg=True), rtol=1e-6)
    assert ht.iscomplex(a).tolist() == [True, False, True, False]
    assert ht.isreal(a).tolist() == [False, True, False, True]
    assert ht.isreal(ht.arange(3, split=0, comm=comm_of(2))).dtype == ht.bool


def test_can_cast_and_result_type_take_heats_codes_and_scalars():
    int16s = np.zeros(3, dtype=np.int16)
    assert ht.can_cast(1.0, ht.float32, casting="no")  # a Python float is float32
    assert ht.can_cast(ht.float16, "f2", casting="no")
    assert not ht.can_cast(int16s, ht.float32, casting="no")
    assert ht.can_cast(int16s, ht.float32, casting="safe")
    # Heat's same_kind: one family only (numpy's also allows safe casts across families)
    assert ht.can_cast(ht.uint8, ht.int8, casting="same_kind")
    assert not ht.can_cast(int16s, ht.float32, casting="same_kind")
    assert not ht.can_cast(ht.float64, ht.bool, casting="same_kind")
    assert ht.can_cast(ht.float64, ht.bool, casting="unsafe")
    assert ht.canonical_heat_type("u") is ht.uint8  # Heat's code (numpy reads uint32)
    assert ht.result_type("b", "f4") is ht.float32
    assert ht.result_type(ht.float64, 1, ht.bool, "u", torch.uint8, np.complex128) is ht.complex128
    assert ht.heat_type_of([3, "text"]) is ht.int32  # Heat's last resort: the first element
    with pytest.raises(TypeError, match=r"`casting` must be a str, got int"):
        ht.can_cast(ht.uint8, ht.uint8, casting=1)
    with pytest.raises(ValueError, match=r"`casting` must be one of \['no', 'safe', .*'hello'"):
        ht.can_cast(ht.uint8, ht.uint8, casting="hello")
    with pytest.raises(TypeError, match=r"data type of dict is not understood"):
        ht.can_cast({}, ht.uint8, casting="unsafe")
