"""Elementwise functions and operators against numpy, on every split, rank count and skew."""

from __future__ import annotations

import inspect
import operator
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import assert_layout, layouts, skewed, values_of

import dndask as ht
from dndask import array_api
from dndask._elementwise import FUNCTIONS
from dndask._optable import DTYPE_RULES, OPS
from dndask._optable import op as row_of

# The lists come from the operation table: a new row is tested without editing this file.
UNARY = [name for row in OPS if row.arity == 1 and row.dtypes != "integer" for name in row.names]
BINARY = [row.name for row in OPS if row.export and row.arity == 2 and row.dtypes != "integer"]
INTEGER_BINARY = [
    row.name for row in OPS if row.export and row.arity == 2 and row.dtypes == "integer"
]
ALIASES = {alias: row.name for row in OPS if row.arity == 2 for alias in row.aliases}
WRITTEN = ["allclose", "clip", "isclose", "nan_to_num", "round", "where"]  # not from the table

# Heat's operator-style names that numpy lacks, from Python's own operator module.
OPERATOR_NAMES = {"neg": operator.neg, "sub": operator.sub, "mul": operator.mul}
OPERATOR_NAMES["div"] = operator.truediv


def oracle(name: str):
    """The reference for ``ht.<name>``: numpy's function of that name, looked up here.

    Independent of the operation table's ``ufunc`` column, so a row that wires a name to
    the wrong function fails the tests.
    """
    fn = OPERATOR_NAMES.get(name) or getattr(np, name, None)
    if fn is None:
        raise LookupError(f"no numpy reference for {name!r}: add it to OPERATOR_NAMES")
    return fn


SHAPES = [(5, 4), (3,), (2, 3, 4)]


def _data(shape, seed=0):
    """Values in (0.05, 0.95) with a NaN: valid for every function in UNARY."""
    g = np.random.default_rng(seed).uniform(0.05, 0.95, size=shape)
    if g.size:
        g.flat[g.size // 2] = np.nan
    return g


def _check(got, expected, split, comm, pending=None):
    """Layout checks now; values now, or in one batch later if ``pending`` collects them."""
    assert isinstance(got, ht.DNDarray)
    assert got.split == split and got.comm == comm
    assert got.lshape_map.shape[0] == comm.size
    expected = np.asarray(expected)
    if pending is None:
        _compare(got.numpy(), expected)
    else:
        pending.append((got, expected))


def _compare(values, expected):
    assert values.dtype == expected.dtype
    np.testing.assert_allclose(values, expected, rtol=1e-12, equal_nan=True)


def _check_all(pending):
    for (_, expected), values in zip(pending, values_of(p[0] for p in pending), strict=True):
        _compare(values, expected)


@pytest.mark.parametrize(("shape", "split", "n"), layouts(SHAPES, rank_counts=(1, 4)))
def test_unary_functions(comm_of, shape, split, n):
    comm = comm_of(n)
    g = _data(shape)
    arrays = [ht.array(g, split=split, comm=comm)]
    if split is not None and n > 1:
        arrays.append(skewed(arrays[0]))
    pending = []
    with np.errstate(all="ignore"):
        for a in arrays:
            for name in UNARY:
                expected = oracle(name)(g)
                _check(getattr(ht, name)(a), expected, split, comm, pending)
                if a is arrays[-1] and len(arrays) > 1:
                    # elementwise work never moves rows: the skew is kept
                    assert getattr(ht, name)(a).lshape_map.tolist() == a.lshape_map.tolist()
        _check_all(pending)


@pytest.mark.parametrize(("shape", "split", "n"), layouts(SHAPES, rank_counts=(1, 5)))
def test_binary_functions(comm_of, shape, split, n):
    comm = comm_of(n)
    g, h = _data(shape, 1), _data(shape, 2)
    a = ht.array(g, split=split, comm=comm)
    other_split = None if split is None else (split + 1) % len(shape)
    b = ht.array(h, split=other_split, comm=comm)
    pending = []
    with np.errstate(all="ignore"):
        for name in BINARY:
            fn = oracle(name)
            _check(getattr(ht, name)(a, b), fn(g, h), split, comm, pending)
            _check(getattr(ht, name)(a, 0.5), fn(g, 0.5), split, comm, pending)
            _check(getattr(ht, name)(h, a), fn(h, g), split, comm, pending)  # numpy first
        for alias in ALIASES:
            _check(getattr(ht, alias)(a, b), oracle(alias)(g, h), split, comm, pending)
        _check_all(pending)


@pytest.mark.parametrize(("shape", "split", "n"), layouts([(6, 3)], rank_counts=(1, 4)))
def test_integer_functions(comm_of, shape, split, n):
    comm = comm_of(n)
    g = np.arange(18, dtype=np.int64).reshape(shape)
    h = (np.arange(18, dtype=np.int64).reshape(shape) % 3) + 1
    a = skewed(ht.array(g, split=split, comm=comm))
    b = ht.array(h, split=split, comm=comm)
    for name in INTEGER_BINARY:
        assert_layout(getattr(ht, name)(a, b), oracle(name)(g, h), split, comm)
    assert_layout(ht.invert(a), np.invert(g), split, comm)
    assert_layout(ht.bitwise_not(a), np.invert(g), split, comm)
    assert_layout(ht.neg(a), -g, split, comm)
    assert_layout(ht.logical_not(a > 4), g <= 4, split, comm)
    assert_layout(ht.mod(a, 4), g % 4, split, comm)
    assert_layout(ht.true_divide(a, 4), g / 4, split, comm)


OPERATORS = [
    row.operator
    for row in OPS
    if row.arity == 2 and row.operator and row.nout == 1 and row.dtypes != "integer"
]
BIT_OPERATORS = [row.operator for row in OPS if row.arity == 2 and row.dtypes == "integer"]
IN_PLACE = [
    getattr(operator, row.inplace.strip("_"))
    for row in OPS
    if row.inplace and row.dtypes != "integer"
]


@pytest.mark.parametrize(("shape", "split", "n"), layouts([(4, 5)], rank_counts=(1, 3, 5)))
def test_operators_and_reflected(comm_of, shape, split, n):
    comm = comm_of(n)
    g = np.arange(1.0, 21.0).reshape(shape)
    a = skewed(ht.array(g, split=split, comm=comm))
    pending = []
    for op in OPERATORS:
        _check(op(a, 3.0), op(g, 3.0), split, comm, pending)
        _check(op(3.0, a), op(3.0, g), split, comm, pending)
        _check(op(a, g[::-1]), op(g, g[::-1]), split, comm, pending)
        _check(op(a, torch.tensor(2.0)), op(g, 2.0), split, comm, pending)
    i = ht.array(g.astype(np.int64), split=split, comm=comm)
    for op in BIT_OPERATORS:
        _check(op(i, 2), op(g.astype(np.int64), 2), split, comm, pending)
        _check(op(2, i), op(2, g.astype(np.int64)), split, comm, pending)
    _check_all(pending)
    assert_layout(-a, -g, split, comm)
    assert_layout(+a, g, split, comm)
    assert_layout(abs(-a), g, split, comm)
    assert_layout(~(a > 3), ~(g > 3), split, comm)
    for got, expected in zip(divmod(a, 3.0), divmod(g, 3.0), strict=True):
        assert_layout(got, expected, split, comm)
    for got, expected in zip(divmod(7.0, a), divmod(7.0, g), strict=True):
        assert_layout(got, expected, split, comm)


@pytest.mark.parametrize(("shape", "split", "n"), layouts([(4, 5)], rank_counts=(2, 5)))
def test_in_place_operators_keep_the_distribution(comm_of, shape, split, n):
    comm = comm_of(n)
    g = np.arange(1.0, 21.0).reshape(shape)
    for op in IN_PLACE:
        a = skewed(ht.array(g, split=split, comm=comm))
        before = a.lshape_map.tolist()
        other = ht.array(g, split=None if split is None else 1 - split, comm=comm)
        result = op(a, other)
        assert result is a
        assert a.lshape_map.tolist() == before
        assert_layout(a, op(g.copy(), g), split, comm)
    i = ht.array(g.astype(np.int64), split=split, comm=comm)
    i //= 3
    i %= 4
    i <<= 1
    i |= 1
    i ^= 2
    i &= 7
    i >>= 1
    expected = ((((((g.astype(np.int64) // 3) % 4) << 1) | 1) ^ 2) & 7) >> 1
    assert_layout(i, expected, split, comm)


@pytest.mark.parametrize(("shape", "split", "n"), layouts([(5, 3)], rank_counts=(1, 3, 5)))
def test_clip_where_round_isclose(comm_of, shape, split, n):
    comm = comm_of(n)
    g = np.linspace(-2.0, 2.0, 15).reshape(shape)
    a = skewed(ht.array(g, split=split, comm=comm))
    assert_layout(ht.clip(a, -1.0, 0.5), np.clip(g, -1.0, 0.5), split, comm)
    assert_layout(ht.clip(a, None, 0.5), np.clip(g, None, 0.5), split, comm)
    assert_layout(ht.clip(a, -0.5, None), np.clip(g, -0.5, None), split, comm)
    assert_layout(a.clip(-1.0, 1.0), np.clip(g, -1.0, 1.0), split, comm)
    lo = ht.array(np.full(3, -0.25), comm=comm)
    assert_layout(ht.clip(a, lo, 1.0), np.clip(g, -0.25, 1.0), split, comm)
    assert_layout(ht.where(a > 0, a, 0.0), np.where(g > 0, g, 0.0), split, comm)
    assert_layout(ht.where(g > 0, -1.0, a), np.where(g > 0, -1.0, g), split, comm)
    assert_layout(ht.round(a, 1), np.round(g, 1), split, comm)
    assert_layout(a.round(), np.round(g), split, comm)
    assert_layout(ht.isclose(a, g + 1e-9), np.isclose(g, g + 1e-9), split, comm)
    assert ht.allclose(a, g + 1e-9)
    assert not ht.allclose(a, g + 1e-3)
    nan = ht.array(np.array([np.nan, np.inf, -np.inf, 1.0]), split=0, comm=comm)
    assert_layout(
        ht.nan_to_num(nan), np.nan_to_num(np.array([np.nan, np.inf, -np.inf, 1.0])), 0, comm
    )
    kwargs = {"nan": np.float32(5), "posinf": 1000, "neginf": -7.5}
    assert_layout(
        ht.nan_to_num(nan, **kwargs),
        np.nan_to_num(np.array([np.nan, np.inf, -np.inf, 1.0]), **kwargs),
        0,
        comm,
    )


def test_methods(comm_of):
    comm = comm_of(3)
    g = np.linspace(0.1, 0.9, 6)
    a = ht.array(g, split=0, comm=comm)
    for name in ("abs", "absolute", "sqrt", "exp", "log", "sin", "cos", "floor", "ceil", "conj"):
        expected = getattr(np, "conjugate" if name == "conj" else name)(g)
        assert_layout(getattr(a, name)(), expected, 0, comm)
    z = ht.array(np.array([1 + 2j, 3 - 1j]), split=0, comm=comm)
    assert_layout(z.real, np.array([1.0, 3.0]), 0, comm)
    assert_layout(z.imag, np.array([2.0, -1.0]), 0, comm)


@pytest.mark.parametrize("n", [1, 3, 5])
def test_dtype_promotion_follows_numpy(comm_of, n):
    comm = comm_of(n)
    for left, right in [
        (np.int32, np.float32),
        (np.int8, np.int64),
        (np.uint8, np.int8),
        (np.bool_, np.int16),
        (np.float32, np.float64),
        (np.float32, np.complex64),
    ]:
        g = np.arange(4).astype(left)
        h = np.arange(1, 5).astype(right)
        got = ht.array(g, split=0, comm=comm) + ht.array(h, split=0, comm=comm)
        assert got.dtype == (g + h).dtype
    f = ht.ones(3, dtype=ht.float32, split=0, comm=comm)
    assert (f * 2).dtype == ht.float32  # Python scalars are weak, as in numpy 2
    assert (f * np.float64(2)).dtype == (np.ones(3, np.float32) * np.float64(2)).dtype
    assert ht.exp(ht.arange(3, split=0, comm=comm)).dtype == np.exp(np.arange(3)).dtype
    assert (ht.arange(3, split=0, comm=comm) / 2).dtype == ht.float64


def test_out_argument(comm_of):
    comm = comm_of(4)
    g = np.arange(8.0)
    a = ht.array(g, split=0, comm=comm)
    out = skewed(ht.zeros(8, dtype=ht.float64, split=0, comm=comm))
    layout = out.lshape_map.tolist()
    assert ht.exp(a, out=out) is out
    assert out.lshape_map.tolist() == layout  # out keeps its own distribution
    assert_layout(out, np.exp(g), 0, comm)
    ht.add(a, 1, out=out)
    assert_layout(out, g + 1, 0, comm)
    ints = ht.zeros(8, dtype=ht.int64, split=0, comm=comm)
    with pytest.raises(TypeError, match="`out` of `exp` cannot hold the result: cannot cast"):
        ht.exp(a, out=ints)
    with pytest.raises(ValueError, match=r"`out` of `add` must have shape \(8,\), got \(3,\)"):
        ht.add(a, 1, out=ht.zeros(3, split=0, comm=comm))
    with pytest.raises(TypeError, match="`out` of `add` must be a DNDarray, got ndarray"):
        ht.add(a, 1, out=np.zeros(8))
    assert_layout(ints, np.zeros(8, dtype=np.int64), 0, comm)


def test_bad_operands_name_the_operands(comm_of):
    comm = comm_of(2)
    a = ht.zeros((3, 4), split=0, comm=comm)
    with pytest.raises(
        ValueError,
        match=r"operands of `maximum` could not be broadcast together: "
        r"DNDarray\(shape=\(3, 4\), split=0\), DNDarray\(shape=\(3, 5\), split=1\)",
    ):
        ht.maximum(a, ht.zeros((3, 5), split=1, comm=comm))
    with pytest.raises(
        TypeError, match=r"`bitwise_and` does not support the operands DNDarray\(shape=\(3, 4\)"
    ):
        ht.bitwise_and(a, a)
    with pytest.raises(ValueError, match="operands of `add` must share a comm"):
        ht.add(a, ht.zeros((3, 4), split=0, comm=comm_of(3)))
    with pytest.raises(ValueError, match="`a_min` and `a_max` of `clip` must not both be None"):
        ht.clip(a)
    with pytest.raises(ValueError, match="`where` needs both `x` and `y`, or neither"):
        ht.where(a > 0, a)
    with pytest.raises(TypeError, match="`decimals` must be an int, got float"):
        ht.round(a, 1.5)
    assert_layout(a, np.zeros((3, 4), dtype=np.float32), 0, comm)


@pytest.mark.parametrize("n", [2, 5])
def test_one_row_on_many_ranks(comm_of, n):
    # Dask alone would broadcast the single row into every empty chunk
    comm = comm_of(n)
    g = np.array([[3.0, 4.0]])
    for split in (0, 1):
        a = ht.array(g if split == 0 else g.T, split=split, comm=comm)
        h = g if split == 0 else g.T
        assert_layout(a + 4.0, h + 4.0, split, comm)
        assert_layout(ht.hypot(a, 4.0), np.hypot(h, 4.0), split, comm)
        assert_layout(a * a, h * h, split, comm)
        assert_layout(ht.where(a > 3, a, 0.0), np.where(h > 3, h, 0.0), split, comm)
    one = skewed(ht.array(np.array([2.0]), split=0, comm=comm))
    assert_layout(one - 1.0, np.array([1.0]), 0, comm)
    assert (one - 1.0).lshape_map.tolist() == one.lshape_map.tolist()


# ------------------------------------------------------------- the operation table
def test_the_table_generates_the_public_names():
    names = [name for row in OPS for name in row.names]
    assert len(names) == len(set(names)), "a name on two rows"
    assert set(names) <= set(ht.__all__), "every table name is exported"
    assert sorted(ht.__all__) == ht.__all__
    assert all(callable(getattr(ht, name)) for name in (*names, *WRITTEN))
    for row in OPS:
        assert row.dtypes in DTYPE_RULES
        for name in row.names:
            fn = getattr(ht, name)
            assert fn is FUNCTIONS[name] and fn.__name__ == name
            assert f">>> ht.{name}(" in fn.__doc__ and "Parameters\n----------" in fn.__doc__
            params = list(inspect.signature(fn).parameters)
            assert params == (["x", "out"] if row.arity == 1 else ["x1", "x2", "out"])
        if row.array_api:
            assert row.array_api in array_api.__all__
            assert getattr(array_api, row.array_api) is FUNCTIONS[row.name]
        for alias in (*row.aliases, *row.heat, *((row.array_api,) if row.array_api else ())):
            assert row_of(alias) is row
    assert all(hasattr(array_api, name) for name in array_api.__all__)
    with pytest.raises(KeyError, match="`name` must name an elementwise operation, got 'nope'"):
        row_of("nope")


def test_the_table_generates_the_operators():
    for row in OPS:
        for dunder in (row.dunder, row.reflected, row.inplace):
            if dunder:
                method = getattr(ht.DNDarray, dunder)
                assert method.__qualname__ == f"DNDarray.{dunder}" and method.__doc__
        for name in row.methods:
            assert getattr(ht.DNDarray, name).__qualname__ == f"DNDarray.{name}"
    assert ht.DNDarray.__hash__ is None  # comparisons give arrays


def test_heat_columns_name_heat_functions():
    # the names the Heat face reads; Heat's own elementwise names for comparisons
    assert row_of("eq").name == "equal" and row_of("floordiv").name == "floor_divide"
    assert row_of("acos").name == "arccos" and row_of("atan2").name == "arctan2"
    assert row_of("add").heat_inplace == ("add_",)
    assert row_of("subtract").heat_inplace == ("sub_", "subtract_")
    assert all(name.endswith("_") for row in OPS for name in row.heat_inplace)


def test_the_docs_list_the_table():
    text = (Path(__file__).resolve().parent.parent / "docs" / "operations.md").read_text()
    section = text.split("## Elementwise", 1)[1].split("\n## ", 1)[0]
    listed = section.split("All operators", 1)[0]
    words = set(re.findall(r"[a-z_0-9]+", " ".join(re.findall(r"`([^`]+)`", listed))))
    assert words == {name for row in OPS for name in row.names} | set(WRITTEN)
