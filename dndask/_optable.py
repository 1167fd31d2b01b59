"""The table of elementwise operations: one row per operation, pure data (no Dask, no arrays).

Everything written per operation elsewhere is generated from this table:

- the public functions of :mod:`dndask._elementwise` (signature, numpydoc docstring with one
  doctest example) under the row's ``name`` and every name in ``aliases``;
- the DNDarray operators: ``dunder`` (``a + b``), ``reflected`` (``1 + a``), ``inplace``
  (``a += b``), and the plain methods listed in ``methods`` (``a.sqrt()``);
- the exports of :mod:`dndask` and the array API names of :mod:`dndask.array_api`;
- the lists of tests/test_elementwise.py and the check of docs/operations.md.

Columns that dndask's core does not use are kept for the Heat-compatible face: ``heat``
holds Heat's names for the function (``acos``, ``eq``, ``floordiv``...), ``heat_inplace``
Heat's in-place methods (``add_``, ``sub_``...). A row with ``export=False`` (``divmod``)
gives operators but no core function.

Look rows up with :func:`op` (by any of its names) or walk :data:`OPS`.

>>> from dndask._optable import OPS, op
>>> op("acos").name, op("subtract").dunder, op("subtract").heat_inplace
('arccos', '__sub__', ('sub_', 'subtract_'))
>>> len(OPS) > 60
True
"""

from __future__ import annotations

import operator as _operator
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# What each dtype rule means; a row's ``dtypes`` is one of these keys.
DTYPE_RULES = {
    "number": "any numeric dtype; the result has the operands' promoted dtype",
    "float": "computed in floating point: integer and bool operands give float64",
    "real": "real dtypes (no complex); the result has the operands' promoted dtype",
    "integer": "integer and bool dtypes only (bitwise); a float operand is a TypeError",
    "bool": "a bool result, whatever the operands' dtypes",
    "complex-parts": "any numeric dtype; complex operands give their real parts' dtype",
}


@dataclass(frozen=True)
class Op:
    """One elementwise operation (see the module docstring for what each column generates).

    Attributes
    ----------
    name : str
        dndask's (numpy's) name for it.
    ufunc : numpy.ufunc
        The function run on every rank's chunk (a plain numpy function for ``real``, ``imag``).
    summary : str
        The docstring's first line.
    example : str
        The operands of the doctest, ``ht.<name>(<example>).numpy().tolist()``.
    result : str
        What that doctest prints.
    dtypes : str
        One of :data:`DTYPE_RULES`.
    aliases : tuple of str
        Other names dndask exports for the same function.
    heat, heat_inplace : tuple of str
        Heat's function names and in-place method names for it.
    array_api : str or None
        The array API standard's name.
    operator : callable or None
        The Python operator the dunders apply (``operator.add``); its ``__name__`` names
        the operation in operator errors.
    dunder, reflected, inplace : str or None
        The DNDarray special methods it provides.
    methods : tuple of str
        Plain DNDarray methods (``a.sqrt()``) calling the function.
    export : bool
        Whether dndask's core exports a function for it.
    """

    name: str
    ufunc: np.ufunc | Callable
    summary: str
    example: str
    result: str
    dtypes: str = "number"
    aliases: tuple[str, ...] = ()
    heat: tuple[str, ...] = ()
    heat_inplace: tuple[str, ...] = ()
    array_api: str | None = None
    operator: Callable | None = None
    dunder: str | None = None
    reflected: str | None = None
    inplace: str | None = None
    methods: tuple[str, ...] = ()
    export: bool = True

    @property
    def arity(self) -> int:
        """The number of operands (1 or 2)."""
        return getattr(self.ufunc, "nin", 1)  # ``np.real``/``np.imag`` are plain functions

    @property
    def nout(self) -> int:
        """The number of results (2 for ``divmod``)."""
        return getattr(self.ufunc, "nout", 1)

    @property
    def names(self) -> tuple[str, ...]:
        """Every name dndask's core exports for it (``name`` first); empty if not exported."""
        return (self.name, *self.aliases) if self.export else ()


def _unary(name, ufunc, summary, example, result, dtypes="float", **more) -> Op:
    return Op(name, ufunc, summary, example, result, dtypes, **more)


def _binary(name, ufunc, summary, example, result, dtypes="number", **more) -> Op:
    return Op(name, ufunc, summary, example, result, dtypes, **more)


def _operators(fn: Callable, forward: str, reflected: bool = True, inplace: bool = True) -> dict:
    """The operator columns of a binary operation whose dunder is ``__{forward}__``."""
    return {
        "operator": fn,
        "dunder": f"__{forward}__",
        "reflected": f"__r{forward}__" if reflected else None,
        "inplace": f"__i{forward}__" if inplace else None,
    }


_A = "ht.array({}, split=0)"

# fmt: off
OPS: tuple[Op, ...] = (
    # ------------------------------------------------------------------ unary
    _unary(
        "abs", np.absolute, "Absolute value, elementwise.",
        _A.format("[-1.5, 0.0, 2.0]"), "[1.5, 0.0, 2.0]", "complex-parts", aliases=("absolute",),
        heat=("abs", "absolute"), array_api="abs", operator=_operator.abs, dunder="__abs__",
        methods=("abs", "absolute"),
    ),
    _unary("fabs", np.fabs, "Absolute value as a float, elementwise.",
           _A.format("[-3, 4]"), "[3.0, 4.0]", "float", heat=("fabs",)),
    _unary(
        "negative", np.negative, "Numerical negative, elementwise.",
        _A.format("[1, -2]"), "[-1, 2]", "number", aliases=("neg",), heat=("neg", "negative"),
        heat_inplace=("neg_", "negative_"), array_api="negative", operator=_operator.neg,
        dunder="__neg__",
    ),
    _unary(
        "positive", np.positive, "Numerical positive (a copy), elementwise.",
        _A.format("[1, -2]"), "[1, -2]", "number", heat=("pos", "positive"),
        array_api="positive", operator=_operator.pos, dunder="__pos__",
    ),
    _unary("sign", np.sign, "The sign (-1, 0 or 1) of each element.",
           _A.format("[-2.0, 0.0, 3.0]"), "[-1.0, 0.0, 1.0]", "number",
           heat=("sign",), array_api="sign"),
    _unary("signbit", np.signbit, "Whether the sign bit of each element is set.",
           _A.format("[-2.0, 0.0, 3.0]"), "[True, False, False]", "bool",
           heat=("signbit",), array_api="signbit"),
    _unary("sqrt", np.sqrt, "Non-negative square root, elementwise.",
           _A.format("[1.0, 4.0, 9.0]"), "[1.0, 2.0, 3.0]",
           heat=("sqrt",), array_api="sqrt", methods=("sqrt",)),
    _unary("square", np.square, "Square, elementwise.",
           _A.format("[1, 2, 3]"), "[1, 4, 9]", "number", heat=("square",), array_api="square"),
    _unary("exp", np.exp, "Exponential ``e**x``, elementwise.",
           "ht.array([0.0, 1.0], dtype=ht.float64, split=0)", "[1.0, 2.718281828459045]",
           heat=("exp",), array_api="exp", methods=("exp",)),
    _unary("exp2", np.exp2, "``2**x``, elementwise.",
           _A.format("[0.0, 3.0]"), "[1.0, 8.0]", heat=("exp2",)),
    _unary("expm1", np.expm1, "``exp(x) - 1``, accurate for small ``x``.",
           _A.format("[0.0]"), "[0.0]", heat=("expm1",), array_api="expm1"),
    _unary("log", np.log, "Natural logarithm, elementwise.",
           _A.format("[1.0]"), "[0.0]", heat=("log",), array_api="log", methods=("log",)),
    _unary("log2", np.log2, "Base-2 logarithm, elementwise.",
           _A.format("[1.0, 8.0]"), "[0.0, 3.0]", heat=("log2",), array_api="log2"),
    _unary("log10", np.log10, "Base-10 logarithm, elementwise.",
           "ht.array([1.0, 100.0], dtype=ht.float64, split=0)", "[0.0, 2.0]",
           heat=("log10",), array_api="log10"),
    _unary("log1p", np.log1p, "``log(1 + x)``, accurate for small ``x``.",
           _A.format("[0.0]"), "[0.0]", heat=("log1p",), array_api="log1p"),
    _unary("sin", np.sin, "Sine (radians), elementwise.",
           _A.format("[0.0]"), "[0.0]", heat=("sin",), array_api="sin", methods=("sin",)),
    _unary("cos", np.cos, "Cosine (radians), elementwise.",
           _A.format("[0.0]"), "[1.0]", heat=("cos",), array_api="cos", methods=("cos",)),
    _unary("tan", np.tan, "Tangent (radians), elementwise.",
           _A.format("[0.0]"), "[0.0]", heat=("tan",), array_api="tan"),
    _unary("arcsin", np.arcsin, "Inverse sine, elementwise.",
           _A.format("[0.0]"), "[0.0]", heat=("arcsin", "asin"), array_api="asin"),
    _unary("arccos", np.arccos, "Inverse cosine, elementwise.",
           _A.format("[1.0]"), "[0.0]", heat=("arccos", "acos"), array_api="acos"),
    _unary("arctan", np.arctan, "Inverse tangent, elementwise.",
           _A.format("[0.0]"), "[0.0]", heat=("arctan", "atan"), array_api="atan"),
    _unary("sinh", np.sinh, "Hyperbolic sine, elementwise.",
           _A.format("[0.0]"), "[0.0]", heat=("sinh",), array_api="sinh"),
    _unary("cosh", np.cosh, "Hyperbolic cosine, elementwise.",
           _A.format("[0.0]"), "[1.0]", heat=("cosh",), array_api="cosh"),
    _unary("tanh", np.tanh, "Hyperbolic tangent, elementwise.",
           _A.format("[0.0]"), "[0.0]", heat=("tanh",), array_api="tanh"),
    _unary("arcsinh", np.arcsinh, "Inverse hyperbolic sine, elementwise.",
           _A.format("[0.0]"), "[0.0]", heat=("arcsinh", "asinh"), array_api="asinh"),
    _unary("arccosh", np.arccosh, "Inverse hyperbolic cosine, elementwise.",
           _A.format("[1.0]"), "[0.0]", heat=("arccosh", "acosh"), array_api="acosh"),
    _unary("arctanh", np.arctanh, "Inverse hyperbolic tangent, elementwise.",
           _A.format("[0.0]"), "[0.0]", heat=("arctanh", "atanh"), array_api="atanh"),
    _unary("deg2rad", np.deg2rad, "Degrees to radians, elementwise.",
           _A.format("[0.0]"), "[0.0]", heat=("deg2rad", "radians")),
    _unary("rad2deg", np.rad2deg, "Radians to degrees, elementwise.",
           _A.format("[0.0]"), "[0.0]", heat=("rad2deg", "degrees")),
    _unary("floor", np.floor, "The largest integer not greater than each element.",
           _A.format("[-1.5, 1.5]"), "[-2.0, 1.0]", "real",
           heat=("floor",), array_api="floor", methods=("floor",)),
    _unary("ceil", np.ceil, "The smallest integer not less than each element.",
           _A.format("[-1.5, 1.5]"), "[-1.0, 2.0]", "real",
           heat=("ceil",), array_api="ceil", methods=("ceil",)),
    _unary("trunc", np.trunc, "Each element rounded towards zero.",
           _A.format("[-1.5, 1.5]"), "[-1.0, 1.0]", "real", heat=("trunc",), array_api="trunc"),
    _unary("rint", np.rint, "Each element rounded to the nearest integer (halves to even).",
           _A.format("[0.5, 1.5]"), "[0.0, 2.0]", "float"),
    _unary("isnan", np.isnan, "Whether each element is NaN.",
           _A.format("[0.0, float('nan')]"), "[False, True]", "bool",
           heat=("isnan",), array_api="isnan"),
    _unary("isinf", np.isinf, "Whether each element is positive or negative infinity.",
           _A.format("[0.0, float('inf')]"), "[False, True]", "bool",
           heat=("isinf",), array_api="isinf"),
    _unary("isfinite", np.isfinite, "Whether each element is finite.",
           _A.format("[0.0, float('inf')]"), "[True, False]", "bool",
           heat=("isfinite",), array_api="isfinite"),
    _unary("logical_not", np.logical_not, "Logical NOT, elementwise.",
           _A.format("[True, False]"), "[False, True]", "bool",
           heat=("logical_not",), array_api="logical_not"),
    _unary(
        "invert", np.invert, "Bitwise NOT (logical NOT for booleans), elementwise.",
        _A.format("[True, False]"), "[False, True]", "integer",
        aliases=("bitwise_not",), heat=("invert", "bitwise_not"),
        heat_inplace=("invert_", "bitwise_not_"),
        array_api="bitwise_invert", operator=_operator.invert, dunder="__invert__",
    ),
    _unary("conj", np.conjugate, "Complex conjugate, elementwise.",
           _A.format("[1.0]"), "[1.0]", "number",
           heat=("conj", "conjugate"), array_api="conj", methods=("conj",)),
    _unary("real", np.real, "Real part, elementwise.",
           _A.format("[1.0]"), "[1.0]", "complex-parts", heat=("real",), array_api="real"),
    _unary("imag", np.imag, "Imaginary part, elementwise.",
           _A.format("[1.0]"), "[0.0]", "complex-parts", heat=("imag",), array_api="imag"),
    # ----------------------------------------------------------------- binary
    _binary(
        "add", np.add, "Sum of two operands, elementwise (broadcasting).",
        "ht.array([1, 2], split=0), 10", "[11, 12]",
        heat=("add",), heat_inplace=("add_",), array_api="add",
        **_operators(_operator.add, "add"),
    ),
    _binary(
        "subtract", np.subtract, "Difference of two operands, elementwise.",
        "ht.array([1, 2], split=0), 10", "[-9, -8]", aliases=("sub",),
        heat=("sub", "subtract"), heat_inplace=("sub_", "subtract_"), array_api="subtract",
        **_operators(_operator.sub, "sub"),
    ),
    _binary(
        "multiply", np.multiply, "Product of two operands, elementwise.",
        "ht.array([1, 2], split=0), 10", "[10, 20]", aliases=("mul",),
        heat=("mul", "multiply"), heat_inplace=("mul_", "multiply_"), array_api="multiply",
        **_operators(_operator.mul, "mul"),
    ),
    _binary(
        "divide", np.divide, "True division, elementwise.",
        "ht.array([1, 2], split=0), 4", "[0.25, 0.5]", "float",
        aliases=("div", "true_divide"), heat=("div", "divide"),
        heat_inplace=("div_", "divide_"), array_api="divide",
        **_operators(_operator.truediv, "truediv"),
    ),
    _binary(
        "floor_divide", np.floor_divide, "Floor division, elementwise.",
        "ht.array([7, -7], split=0), 2", "[3, -4]", "real",
        heat=("floordiv", "floor_divide"), heat_inplace=("floordiv_", "floor_divide_"),
        array_api="floor_divide", **_operators(_operator.floordiv, "floordiv"),
    ),
    _binary(
        "remainder", np.remainder,
        "Remainder of floor division (sign of the divisor), elementwise.",
        "ht.array([7, -7], split=0), 3", "[1, 2]", "real", aliases=("mod",),
        heat=("mod", "remainder"), heat_inplace=("mod_", "remainder_"), array_api="remainder",
        **_operators(_operator.mod, "mod"),
    ),
    _binary(
        "divmod", np.divmod, "Floor division and remainder, elementwise.",
        "ht.array([7, -7], split=0), 3", "([3, -4], [1, 2])", "real", heat=("divmod",),
        export=False, **_operators(divmod, "divmod", inplace=False),
    ),
    _binary("fmod", np.fmod, "C-style remainder (sign of the dividend), elementwise.",
            "ht.array([7, -7], split=0), 3", "[1, -1]", "real",
            heat=("fmod",), heat_inplace=("fmod_",)),
    _binary(
        "power", np.power, "First operand raised to the second, elementwise.",
        "ht.array([2, 3], split=0), 2", "[4, 9]", aliases=("pow",),
        heat=("pow", "power"), heat_inplace=("pow_", "power_"), array_api="pow",
        **_operators(_operator.pow, "pow"),
    ),
    _binary("maximum", np.maximum, "Elementwise maximum (NaN propagates).",
            "ht.array([1, 5], split=0), 3", "[3, 5]", "real",
            heat=("maximum",), array_api="maximum"),
    _binary("minimum", np.minimum, "Elementwise minimum (NaN propagates).",
            "ht.array([1, 5], split=0), 3", "[1, 3]", "real",
            heat=("minimum",), array_api="minimum"),
    _binary("fmax", np.fmax, "Elementwise maximum, ignoring NaN.",
            "ht.array([1.0, float('nan')], split=0), 0.5", "[1.0, 0.5]", "real"),
    _binary("fmin", np.fmin, "Elementwise minimum, ignoring NaN.",
            "ht.array([1.0, float('nan')], split=0), 0.5", "[0.5, 0.5]", "real"),
    _binary("arctan2", np.arctan2,
            "Arc tangent of ``x1 / x2`` using the signs of both, elementwise.",
            "ht.array([0.0], split=0), 1.0", "[0.0]", "float",
            heat=("arctan2", "atan2"), array_api="atan2"),
    _binary("hypot", np.hypot, "``sqrt(x1**2 + x2**2)``, elementwise.",
            "ht.array([3.0], split=0), 4.0", "[5.0]", "float",
            heat=("hypot",), heat_inplace=("hypot_",), array_api="hypot"),
    _binary("copysign", np.copysign, "``x1`` with the sign of ``x2``, elementwise.",
            "ht.array([1.0, 2.0], split=0), -1.0", "[-1.0, -2.0]", "float",
            heat=("copysign",), heat_inplace=("copysign_",), array_api="copysign"),
    _binary("logaddexp", np.logaddexp, "``log(exp(x1) + exp(x2))``, elementwise.",
            "ht.array([0.0], dtype=ht.float64, split=0), 0.0",
            "[0.6931471805599453]", "float", heat=("logaddexp",), array_api="logaddexp"),
    # Heat's ``equal`` compares whole arrays (one bool); its elementwise name is ``eq``.
    _binary("equal", np.equal, "``x1 == x2``, elementwise.",
            "ht.array([1, 2], split=0), 2", "[False, True]", "bool",
            heat=("eq",), array_api="equal",
            **_operators(_operator.eq, "eq", reflected=False, inplace=False)),
    _binary("not_equal", np.not_equal, "``x1 != x2``, elementwise.",
            "ht.array([1, 2], split=0), 2", "[True, False]", "bool",
            heat=("ne", "not_equal"), array_api="not_equal",
            **_operators(_operator.ne, "ne", reflected=False, inplace=False)),
    _binary("less", np.less, "``x1 < x2``, elementwise.",
            "ht.array([1, 2], split=0), 2", "[True, False]", "bool",
            heat=("lt", "less"), array_api="less",
            **_operators(_operator.lt, "lt", reflected=False, inplace=False)),
    _binary("less_equal", np.less_equal, "``x1 <= x2``, elementwise.",
            "ht.array([1, 2], split=0), 2", "[True, True]", "bool",
            heat=("le", "less_equal"), array_api="less_equal",
            **_operators(_operator.le, "le", reflected=False, inplace=False)),
    _binary("greater", np.greater, "``x1 > x2``, elementwise.",
            "ht.array([1, 2], split=0), 1", "[False, True]", "bool",
            heat=("gt", "greater"), array_api="greater",
            **_operators(_operator.gt, "gt", reflected=False, inplace=False)),
    _binary("greater_equal", np.greater_equal, "``x1 >= x2``, elementwise.",
            "ht.array([1, 2], split=0), 2", "[False, True]", "bool",
            heat=("ge", "greater_equal"), array_api="greater_equal",
            **_operators(_operator.ge, "ge", reflected=False, inplace=False)),
    _binary("logical_and", np.logical_and, "Logical AND, elementwise.",
            "ht.array([True, False], split=0), True", "[True, False]", "bool",
            heat=("logical_and",), array_api="logical_and"),
    _binary("logical_or", np.logical_or, "Logical OR, elementwise.",
            "ht.array([True, False], split=0), False", "[True, False]", "bool",
            heat=("logical_or",), array_api="logical_or"),
    _binary("logical_xor", np.logical_xor, "Logical XOR, elementwise.",
            "ht.array([True, False], split=0), True", "[False, True]", "bool",
            heat=("logical_xor",), array_api="logical_xor"),
    _binary(
        "bitwise_and", np.bitwise_and, "Bitwise AND, elementwise.",
        "ht.array([12, 10], split=0), 6", "[4, 2]", "integer",
        heat=("bitwise_and",), heat_inplace=("bitwise_and_",), array_api="bitwise_and",
        **_operators(_operator.and_, "and"),
    ),
    _binary(
        "bitwise_or", np.bitwise_or, "Bitwise OR, elementwise.",
        "ht.array([12, 10], split=0), 6", "[14, 14]", "integer",
        heat=("bitwise_or",), heat_inplace=("bitwise_or_",), array_api="bitwise_or",
        **_operators(_operator.or_, "or"),
    ),
    _binary(
        "bitwise_xor", np.bitwise_xor, "Bitwise XOR, elementwise.",
        "ht.array([12, 10], split=0), 6", "[10, 12]", "integer",
        heat=("bitwise_xor",), heat_inplace=("bitwise_xor_",), array_api="bitwise_xor",
        **_operators(_operator.xor, "xor"),
    ),
    _binary(
        "left_shift", np.left_shift, "Shift the bits of ``x1`` left by ``x2``, elementwise.",
        "ht.array([1, 2], split=0), 2", "[4, 8]", "integer",
        heat=("left_shift",), heat_inplace=("left_shift_",), array_api="bitwise_left_shift",
        **_operators(_operator.lshift, "lshift"),
    ),
    _binary(
        "right_shift", np.right_shift, "Shift the bits of ``x1`` right by ``x2``, elementwise.",
        "ht.array([8, 4], split=0), 1", "[4, 2]", "integer",
        heat=("right_shift",), heat_inplace=("right_shift_",),
        array_api="bitwise_right_shift", **_operators(_operator.rshift, "rshift"),
    ),
)
# fmt: on

_BY_NAME: dict[str, Op] = {}
for _row in OPS:
    for _name in (_row.name, *_row.aliases, *_row.heat, _row.array_api):
        if _name is not None:
            _BY_NAME.setdefault(_name, _row)


def op(name: str) -> Op:
    """The row for ``name``: dndask's name, an alias, a Heat name or an array API name.

    >>> op("atan2").ufunc is np.arctan2
    True
    """
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"`name` must name an elementwise operation, got {name!r}") from None


def exported_names() -> tuple[str, ...]:
    """Every function name dndask's core exports from the table, sorted.

    >>> "sub" in exported_names() and "divmod" not in exported_names()
    True
    """
    return tuple(sorted(name for row in OPS for name in row.names))


__all__ = ["DTYPE_RULES", "OPS", "Op", "exported_names", "op"]
