"""Elementwise functions: numpy's ufuncs on DNDarrays, with Heat's short aliases.

Each function aligns its operands by Heat's rule (the result takes the split
of the first split operand; the other operands are resplit and redistributed
to match), runs the ufunc on every rank's chunk and keeps the distribution.
Operands may be DNDarrays, numpy arrays, torch tensors and scalars, broadcast
as numpy does; dtypes promote as numpy's. ``out``, a DNDarray, receives the
result in place (cast to its dtype when numpy's ``same_kind`` rule allows).
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

import dask.array as da
import numpy as np

from . import _ops

if TYPE_CHECKING:
    from ._dndarray import DNDarray


def abs(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Absolute value, elementwise.

    >>> import dndask as ht
    >>> ht.abs(ht.array([-1.5, 0.0, 2.0], split=0)).numpy().tolist()
    [1.5, 0.0, 2.0]
    """
    return _ops.elementwise(np.absolute, x, name="abs", out=out)


def absolute(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Absolute value, elementwise (same as :func:`abs`).

    >>> import dndask as ht
    >>> ht.absolute(ht.array([-3, 4], split=0)).numpy().tolist()
    [3, 4]
    """
    return _ops.elementwise(np.absolute, x, name="absolute", out=out)


def fabs(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Absolute value as a float, elementwise.

    >>> import dndask as ht
    >>> ht.fabs(ht.array([-3, 4], split=0)).numpy().tolist()
    [3.0, 4.0]
    """
    return _ops.elementwise(np.fabs, x, name="fabs", out=out)


def negative(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Numerical negative, elementwise.

    >>> import dndask as ht
    >>> ht.negative(ht.array([1, -2], split=0)).numpy().tolist()
    [-1, 2]
    """
    return _ops.elementwise(np.negative, x, name="negative", out=out)


def positive(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Numerical positive (a copy), elementwise.

    >>> import dndask as ht
    >>> ht.positive(ht.array([1, -2], split=0)).numpy().tolist()
    [1, -2]
    """
    return _ops.elementwise(np.positive, x, name="positive", out=out)


def sign(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """The sign (-1, 0 or 1) of each element.

    >>> import dndask as ht
    >>> ht.sign(ht.array([-2.0, 0.0, 3.0], split=0)).numpy().tolist()
    [-1.0, 0.0, 1.0]
    """
    return _ops.elementwise(np.sign, x, name="sign", out=out)


def signbit(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Whether the sign bit of each element is set.

    >>> import dndask as ht
    >>> ht.signbit(ht.array([-2.0, 0.0, 3.0], split=0)).numpy().tolist()
    [True, False, False]
    """
    return _ops.elementwise(np.signbit, x, name="signbit", out=out)


def sqrt(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Non-negative square root, elementwise.

    >>> import dndask as ht
    >>> ht.sqrt(ht.array([1.0, 4.0, 9.0], split=0)).numpy().tolist()
    [1.0, 2.0, 3.0]
    """
    return _ops.elementwise(np.sqrt, x, name="sqrt", out=out)


def square(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Square, elementwise.

    >>> import dndask as ht
    >>> ht.square(ht.array([1, 2, 3], split=0)).numpy().tolist()
    [1, 4, 9]
    """
    return _ops.elementwise(np.square, x, name="square", out=out)


def exp(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Exponential ``e**x``, elementwise.

    >>> import dndask as ht
    >>> ht.exp(ht.array([0.0, 1.0], dtype=ht.float64, split=0)).numpy().tolist()
    [1.0, 2.718281828459045]
    """
    return _ops.elementwise(np.exp, x, name="exp", out=out)


def exp2(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """``2**x``, elementwise.

    >>> import dndask as ht
    >>> ht.exp2(ht.array([0.0, 3.0], split=0)).numpy().tolist()
    [1.0, 8.0]
    """
    return _ops.elementwise(np.exp2, x, name="exp2", out=out)


def expm1(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """``exp(x) - 1``, accurate for small ``x``.

    >>> import dndask as ht
    >>> ht.expm1(ht.array([0.0], split=0)).numpy().tolist()
    [0.0]
    """
    return _ops.elementwise(np.expm1, x, name="expm1", out=out)


def log(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Natural logarithm, elementwise.

    >>> import dndask as ht
    >>> ht.log(ht.array([1.0], split=0)).numpy().tolist()
    [0.0]
    """
    return _ops.elementwise(np.log, x, name="log", out=out)


def log2(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Base-2 logarithm, elementwise.

    >>> import dndask as ht
    >>> ht.log2(ht.array([1.0, 8.0], split=0)).numpy().tolist()
    [0.0, 3.0]
    """
    return _ops.elementwise(np.log2, x, name="log2", out=out)


def log10(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Base-10 logarithm, elementwise.

    >>> import dndask as ht
    >>> ht.log10(ht.array([1.0, 100.0], dtype=ht.float64, split=0)).numpy().tolist()
    [0.0, 2.0]
    """
    return _ops.elementwise(np.log10, x, name="log10", out=out)


def log1p(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """``log(1 + x)``, accurate for small ``x``.

    >>> import dndask as ht
    >>> ht.log1p(ht.array([0.0], split=0)).numpy().tolist()
    [0.0]
    """
    return _ops.elementwise(np.log1p, x, name="log1p", out=out)


def sin(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Sine (radians), elementwise.

    >>> import dndask as ht
    >>> ht.sin(ht.array([0.0], split=0)).numpy().tolist()
    [0.0]
    """
    return _ops.elementwise(np.sin, x, name="sin", out=out)


def cos(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Cosine (radians), elementwise.

    >>> import dndask as ht
    >>> ht.cos(ht.array([0.0], split=0)).numpy().tolist()
    [1.0]
    """
    return _ops.elementwise(np.cos, x, name="cos", out=out)


def tan(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Tangent (radians), elementwise.

    >>> import dndask as ht
    >>> ht.tan(ht.array([0.0], split=0)).numpy().tolist()
    [0.0]
    """
    return _ops.elementwise(np.tan, x, name="tan", out=out)


def arcsin(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Inverse sine, elementwise.

    >>> import dndask as ht
    >>> ht.arcsin(ht.array([0.0], split=0)).numpy().tolist()
    [0.0]
    """
    return _ops.elementwise(np.arcsin, x, name="arcsin", out=out)


def arccos(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Inverse cosine, elementwise.

    >>> import dndask as ht
    >>> ht.arccos(ht.array([1.0], split=0)).numpy().tolist()
    [0.0]
    """
    return _ops.elementwise(np.arccos, x, name="arccos", out=out)


def arctan(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Inverse tangent, elementwise.

    >>> import dndask as ht
    >>> ht.arctan(ht.array([0.0], split=0)).numpy().tolist()
    [0.0]
    """
    return _ops.elementwise(np.arctan, x, name="arctan", out=out)


def sinh(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Hyperbolic sine, elementwise.

    >>> import dndask as ht
    >>> ht.sinh(ht.array([0.0], split=0)).numpy().tolist()
    [0.0]
    """
    return _ops.elementwise(np.sinh, x, name="sinh", out=out)


def cosh(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Hyperbolic cosine, elementwise.

    >>> import dndask as ht
    >>> ht.cosh(ht.array([0.0], split=0)).numpy().tolist()
    [1.0]
    """
    return _ops.elementwise(np.cosh, x, name="cosh", out=out)


def tanh(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Hyperbolic tangent, elementwise.

    >>> import dndask as ht
    >>> ht.tanh(ht.array([0.0], split=0)).numpy().tolist()
    [0.0]
    """
    return _ops.elementwise(np.tanh, x, name="tanh", out=out)


def arcsinh(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Inverse hyperbolic sine, elementwise.

    >>> import dndask as ht
    >>> ht.arcsinh(ht.array([0.0], split=0)).numpy().tolist()
    [0.0]
    """
    return _ops.elementwise(np.arcsinh, x, name="arcsinh", out=out)


def arccosh(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Inverse hyperbolic cosine, elementwise.

    >>> import dndask as ht
    >>> ht.arccosh(ht.array([1.0], split=0)).numpy().tolist()
    [0.0]
    """
    return _ops.elementwise(np.arccosh, x, name="arccosh", out=out)


def arctanh(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Inverse hyperbolic tangent, elementwise.

    >>> import dndask as ht
    >>> ht.arctanh(ht.array([0.0], split=0)).numpy().tolist()
    [0.0]
    """
    return _ops.elementwise(np.arctanh, x, name="arctanh", out=out)


def deg2rad(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Degrees to radians, elementwise.

    >>> import dndask as ht
    >>> ht.deg2rad(ht.array([0.0], split=0)).numpy().tolist()
    [0.0]
    """
    return _ops.elementwise(np.deg2rad, x, name="deg2rad", out=out)


def rad2deg(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Radians to degrees, elementwise.

    >>> import dndask as ht
    >>> ht.rad2deg(ht.array([0.0], split=0)).numpy().tolist()
    [0.0]
    """
    return _ops.elementwise(np.rad2deg, x, name="rad2deg", out=out)


def floor(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """The largest integer not greater than each element.

    >>> import dndask as ht
    >>> ht.floor(ht.array([-1.5, 1.5], split=0)).numpy().tolist()
    [-2.0, 1.0]
    """
    return _ops.elementwise(np.floor, x, name="floor", out=out)


def ceil(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """The smallest integer not less than each element.

    >>> import dndask as ht
    >>> ht.ceil(ht.array([-1.5, 1.5], split=0)).numpy().tolist()
    [-1.0, 2.0]
    """
    return _ops.elementwise(np.ceil, x, name="ceil", out=out)


def trunc(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Each element rounded towards zero.

    >>> import dndask as ht
    >>> ht.trunc(ht.array([-1.5, 1.5], split=0)).numpy().tolist()
    [-1.0, 1.0]
    """
    return _ops.elementwise(np.trunc, x, name="trunc", out=out)


def rint(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Each element rounded to the nearest integer (halves to even).

    >>> import dndask as ht
    >>> ht.rint(ht.array([0.5, 1.5], split=0)).numpy().tolist()
    [0.0, 2.0]
    """
    return _ops.elementwise(np.rint, x, name="rint", out=out)


def isnan(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Whether each element is NaN.

    >>> import dndask as ht
    >>> ht.isnan(ht.array([0.0, float('nan')], split=0)).numpy().tolist()
    [False, True]
    """
    return _ops.elementwise(np.isnan, x, name="isnan", out=out)


def isinf(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Whether each element is positive or negative infinity.

    >>> import dndask as ht
    >>> ht.isinf(ht.array([0.0, float('inf')], split=0)).numpy().tolist()
    [False, True]
    """
    return _ops.elementwise(np.isinf, x, name="isinf", out=out)


def isfinite(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Whether each element is finite.

    >>> import dndask as ht
    >>> ht.isfinite(ht.array([0.0, float('inf')], split=0)).numpy().tolist()
    [True, False]
    """
    return _ops.elementwise(np.isfinite, x, name="isfinite", out=out)


def logical_not(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Logical NOT, elementwise.

    >>> import dndask as ht
    >>> ht.logical_not(ht.array([True, False], split=0)).numpy().tolist()
    [False, True]
    """
    return _ops.elementwise(np.logical_not, x, name="logical_not", out=out)


def invert(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Bitwise NOT (logical NOT for booleans), elementwise.

    >>> import dndask as ht
    >>> ht.invert(ht.array([True, False], split=0)).numpy().tolist()
    [False, True]
    """
    return _ops.elementwise(np.invert, x, name="invert", out=out)


def bitwise_not(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Bitwise NOT, elementwise (same as :func:`invert`).

    >>> import dndask as ht
    >>> ht.bitwise_not(ht.array([0, 1], split=0)).numpy().tolist()
    [-1, -2]
    """
    return _ops.elementwise(np.invert, x, name="bitwise_not", out=out)


def conj(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Complex conjugate, elementwise.

    >>> import dndask as ht
    >>> ht.conj(ht.array([1.0], split=0)).numpy().tolist()
    [1.0]
    """
    return _ops.elementwise(np.conjugate, x, name="conj", out=out)


def real(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Real part, elementwise.

    >>> import dndask as ht
    >>> ht.real(ht.array([1.0], split=0)).numpy().tolist()
    [1.0]
    """
    return _ops.elementwise(np.real, x, name="real", out=out)


def imag(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Imaginary part, elementwise.

    >>> import dndask as ht
    >>> ht.imag(ht.array([1.0], split=0)).numpy().tolist()
    [0.0]
    """
    return _ops.elementwise(np.imag, x, name="imag", out=out)


def add(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Sum of two operands, elementwise (broadcasting).

    >>> import dndask as ht
    >>> ht.add(ht.array([1, 2], split=0), 10).numpy().tolist()
    [11, 12]
    """
    return _ops.elementwise(np.add, x1, x2, name="add", out=out)


def subtract(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Difference of two operands, elementwise.

    >>> import dndask as ht
    >>> ht.subtract(ht.array([1, 2], split=0), 10).numpy().tolist()
    [-9, -8]
    """
    return _ops.elementwise(np.subtract, x1, x2, name="subtract", out=out)


def multiply(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Product of two operands, elementwise.

    >>> import dndask as ht
    >>> ht.multiply(ht.array([1, 2], split=0), 10).numpy().tolist()
    [10, 20]
    """
    return _ops.elementwise(np.multiply, x1, x2, name="multiply", out=out)


def divide(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """True division, elementwise.

    >>> import dndask as ht
    >>> ht.divide(ht.array([1, 2], split=0), 4).numpy().tolist()
    [0.25, 0.5]
    """
    return _ops.elementwise(np.divide, x1, x2, name="divide", out=out)


def floor_divide(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Floor division, elementwise.

    >>> import dndask as ht
    >>> ht.floor_divide(ht.array([7, -7], split=0), 2).numpy().tolist()
    [3, -4]
    """
    return _ops.elementwise(np.floor_divide, x1, x2, name="floor_divide", out=out)


def remainder(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Remainder of floor division (sign of the divisor), elementwise.

    >>> import dndask as ht
    >>> ht.remainder(ht.array([7, -7], split=0), 3).numpy().tolist()
    [1, 2]
    """
    return _ops.elementwise(np.remainder, x1, x2, name="remainder", out=out)


def mod(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Remainder of floor division (same as :func:`remainder`).

    >>> import dndask as ht
    >>> ht.mod(ht.array([7, -7], split=0), 3).numpy().tolist()
    [1, 2]
    """
    return _ops.elementwise(np.remainder, x1, x2, name="mod", out=out)


def fmod(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """C-style remainder (sign of the dividend), elementwise.

    >>> import dndask as ht
    >>> ht.fmod(ht.array([7, -7], split=0), 3).numpy().tolist()
    [1, -1]
    """
    return _ops.elementwise(np.fmod, x1, x2, name="fmod", out=out)


def power(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """First operand raised to the second, elementwise.

    >>> import dndask as ht
    >>> ht.power(ht.array([2, 3], split=0), 2).numpy().tolist()
    [4, 9]
    """
    return _ops.elementwise(np.power, x1, x2, name="power", out=out)


def maximum(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Elementwise maximum (NaN propagates).

    >>> import dndask as ht
    >>> ht.maximum(ht.array([1, 5], split=0), 3).numpy().tolist()
    [3, 5]
    """
    return _ops.elementwise(np.maximum, x1, x2, name="maximum", out=out)


def minimum(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Elementwise minimum (NaN propagates).

    >>> import dndask as ht
    >>> ht.minimum(ht.array([1, 5], split=0), 3).numpy().tolist()
    [1, 3]
    """
    return _ops.elementwise(np.minimum, x1, x2, name="minimum", out=out)


def fmax(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Elementwise maximum, ignoring NaN.

    >>> import dndask as ht
    >>> ht.fmax(ht.array([1.0, float('nan')], split=0), 0.5).numpy().tolist()
    [1.0, 0.5]
    """
    return _ops.elementwise(np.fmax, x1, x2, name="fmax", out=out)


def fmin(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Elementwise minimum, ignoring NaN.

    >>> import dndask as ht
    >>> ht.fmin(ht.array([1.0, float('nan')], split=0), 0.5).numpy().tolist()
    [0.5, 0.5]
    """
    return _ops.elementwise(np.fmin, x1, x2, name="fmin", out=out)


def arctan2(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Arc tangent of ``x1 / x2`` using the signs of both, elementwise.

    >>> import dndask as ht
    >>> ht.arctan2(ht.array([0.0], split=0), 1.0).numpy().tolist()
    [0.0]
    """
    return _ops.elementwise(np.arctan2, x1, x2, name="arctan2", out=out)


def hypot(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """``sqrt(x1**2 + x2**2)``, elementwise.

    >>> import dndask as ht
    >>> ht.hypot(ht.array([3.0], split=0), 4.0).numpy().tolist()
    [5.0]
    """
    return _ops.elementwise(np.hypot, x1, x2, name="hypot", out=out)


def copysign(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """``x1`` with the sign of ``x2``, elementwise.

    >>> import dndask as ht
    >>> ht.copysign(ht.array([1.0, 2.0], split=0), -1.0).numpy().tolist()
    [-1.0, -2.0]
    """
    return _ops.elementwise(np.copysign, x1, x2, name="copysign", out=out)


def logaddexp(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """``log(exp(x1) + exp(x2))``, elementwise.

    >>> import dndask as ht
    >>> ht.logaddexp(ht.array([0.0], dtype=ht.float64, split=0), 0.0).numpy().tolist()
    [0.6931471805599453]
    """
    return _ops.elementwise(np.logaddexp, x1, x2, name="logaddexp", out=out)


def equal(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """``x1 == x2``, elementwise.

    >>> import dndask as ht
    >>> ht.equal(ht.array([1, 2], split=0), 2).numpy().tolist()
    [False, True]
    """
    return _ops.elementwise(np.equal, x1, x2, name="equal", out=out)


def not_equal(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """``x1 != x2``, elementwise.

    >>> import dndask as ht
    >>> ht.not_equal(ht.array([1, 2], split=0), 2).numpy().tolist()
    [True, False]
    """
    return _ops.elementwise(np.not_equal, x1, x2, name="not_equal", out=out)


def less(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """``x1 < x2``, elementwise.

    >>> import dndask as ht
    >>> ht.less(ht.array([1, 2], split=0), 2).numpy().tolist()
    [True, False]
    """
    return _ops.elementwise(np.less, x1, x2, name="less", out=out)


def less_equal(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """``x1 <= x2``, elementwise.

    >>> import dndask as ht
    >>> ht.less_equal(ht.array([1, 2], split=0), 2).numpy().tolist()
    [True, True]
    """
    return _ops.elementwise(np.less_equal, x1, x2, name="less_equal", out=out)


def greater(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """``x1 > x2``, elementwise.

    >>> import dndask as ht
    >>> ht.greater(ht.array([1, 2], split=0), 1).numpy().tolist()
    [False, True]
    """
    return _ops.elementwise(np.greater, x1, x2, name="greater", out=out)


def greater_equal(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """``x1 >= x2``, elementwise.

    >>> import dndask as ht
    >>> ht.greater_equal(ht.array([1, 2], split=0), 2).numpy().tolist()
    [False, True]
    """
    return _ops.elementwise(np.greater_equal, x1, x2, name="greater_equal", out=out)


def logical_and(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Logical AND, elementwise.

    >>> import dndask as ht
    >>> ht.logical_and(ht.array([True, False], split=0), True).numpy().tolist()
    [True, False]
    """
    return _ops.elementwise(np.logical_and, x1, x2, name="logical_and", out=out)


def logical_or(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Logical OR, elementwise.

    >>> import dndask as ht
    >>> ht.logical_or(ht.array([True, False], split=0), False).numpy().tolist()
    [True, False]
    """
    return _ops.elementwise(np.logical_or, x1, x2, name="logical_or", out=out)


def logical_xor(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Logical XOR, elementwise.

    >>> import dndask as ht
    >>> ht.logical_xor(ht.array([True, False], split=0), True).numpy().tolist()
    [False, True]
    """
    return _ops.elementwise(np.logical_xor, x1, x2, name="logical_xor", out=out)


def bitwise_and(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Bitwise AND, elementwise.

    >>> import dndask as ht
    >>> ht.bitwise_and(ht.array([12, 10], split=0), 6).numpy().tolist()
    [4, 2]
    """
    return _ops.elementwise(np.bitwise_and, x1, x2, name="bitwise_and", out=out)


def bitwise_or(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Bitwise OR, elementwise.

    >>> import dndask as ht
    >>> ht.bitwise_or(ht.array([12, 10], split=0), 6).numpy().tolist()
    [14, 14]
    """
    return _ops.elementwise(np.bitwise_or, x1, x2, name="bitwise_or", out=out)


def bitwise_xor(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Bitwise XOR, elementwise.

    >>> import dndask as ht
    >>> ht.bitwise_xor(ht.array([12, 10], split=0), 6).numpy().tolist()
    [10, 12]
    """
    return _ops.elementwise(np.bitwise_xor, x1, x2, name="bitwise_xor", out=out)


def left_shift(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Shift the bits of ``x1`` left by ``x2``, elementwise.

    >>> import dndask as ht
    >>> ht.left_shift(ht.array([1, 2], split=0), 2).numpy().tolist()
    [4, 8]
    """
    return _ops.elementwise(np.left_shift, x1, x2, name="left_shift", out=out)


def right_shift(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Shift the bits of ``x1`` right by ``x2``, elementwise.

    >>> import dndask as ht
    >>> ht.right_shift(ht.array([8, 4], split=0), 1).numpy().tolist()
    [4, 2]
    """
    return _ops.elementwise(np.right_shift, x1, x2, name="right_shift", out=out)


def sub(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Heat's name for :func:`subtract`.

    >>> import dndask as ht
    >>> ht.sub(ht.array([4, 6], split=0), 2).numpy().tolist()
    [2, 4]
    """
    return subtract(x1, x2, out=out)


def mul(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Heat's name for :func:`multiply`.

    >>> import dndask as ht
    >>> ht.mul(ht.array([4, 6], split=0), 2).numpy().tolist()
    [8, 12]
    """
    return multiply(x1, x2, out=out)


def div(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Heat's name for :func:`divide`.

    >>> import dndask as ht
    >>> ht.div(ht.array([4, 6], split=0), 2).numpy().tolist()
    [2.0, 3.0]
    """
    return divide(x1, x2, out=out)


def pow(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Heat's name for :func:`power`.

    >>> import dndask as ht
    >>> ht.pow(ht.array([4, 6], split=0), 2).numpy().tolist()
    [16, 36]
    """
    return power(x1, x2, out=out)


def neg(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Heat's name for :func:`negative`.

    >>> import dndask as ht
    >>> ht.neg(ht.array([4, 6], split=0)).numpy().tolist()
    [-4, -6]
    """
    return negative(x, out=out)


def true_divide(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Heat's name for :func:`divide`.

    >>> import dndask as ht
    >>> ht.true_divide(ht.array([4, 6], split=0), 2).numpy().tolist()
    [2.0, 3.0]
    """
    return divide(x1, x2, out=out)


def round(x, decimals: int = 0, *, out: DNDarray | None = None) -> DNDarray:
    """Round to ``decimals`` decimal places (halves to even, as numpy).

    >>> import dndask as ht
    >>> ht.round(ht.array([1.25, 2.5, -0.5], dtype=ht.float64, split=0), 1).numpy().tolist()
    [1.2, 2.5, -0.5]
    """
    if isinstance(decimals, bool) or not isinstance(decimals, (int, np.integer)):
        raise TypeError(f"`decimals` must be an int, got {type(decimals).__name__}")
    return _ops.elementwise(lambda v: da.round(v, decimals=int(decimals)), x, name="round", out=out)


def clip(x, a_min=None, a_max=None, *, out: DNDarray | None = None) -> DNDarray:
    """Limit the values to ``[a_min, a_max]`` (either bound may be None, not both).

    The bounds may be scalars or arrays that broadcast against ``x``.

    >>> import dndask as ht
    >>> ht.clip(ht.arange(6, split=0), 1, 4).numpy().tolist()
    [1, 1, 2, 3, 4, 4]
    """
    if a_min is None and a_max is None:
        raise ValueError("`a_min` and `a_max` of `clip` must not both be None")
    if a_min is None:
        return _ops.elementwise(np.minimum, x, a_max, name="clip", out=out)
    if a_max is None:
        return _ops.elementwise(np.maximum, x, a_min, name="clip", out=out)
    return _ops.elementwise(np.clip, x, a_min, a_max, name="clip", out=out)


def where(cond, x=None, y=None, /) -> DNDarray:
    """Elements of ``x`` where ``cond`` is true, of ``y`` elsewhere (broadcasting).

    The one-argument form (``numpy.nonzero``) is not supported.

    >>> import dndask as ht
    >>> a = ht.arange(5, split=0)
    >>> ht.where(a > 2, a, -1).numpy().tolist()
    [-1, -1, -1, 3, 4]
    """
    if x is None and y is None:
        raise NotImplementedError("`where` with only `cond` (nonzero) is not supported by dndask")
    if x is None or y is None:
        raise ValueError("`where` needs both `x` and `y`, or neither")
    return _ops.elementwise(np.where, cond, x, y, name="where")


def isclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> DNDarray:
    """Whether ``a`` and ``b`` are equal within tolerances, elementwise (numpy's rule).

    >>> import dndask as ht
    >>> ht.isclose(ht.array([1.0, 2.0], split=0), [1.0, 2.1]).numpy().tolist()
    [True, False]
    """
    return _ops.elementwise(
        lambda u, v: da.isclose(u, v, rtol=rtol, atol=atol, equal_nan=equal_nan),
        a,
        b,
        name="isclose",
    )


def allclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """Whether every element of ``a`` and ``b`` is equal within tolerances.

    Each rank compares its own rows; only one boolean per rank travels.

    >>> import dndask as ht
    >>> ht.allclose(ht.ones(4, split=0), ht.ones(4, split=None) + 1e-9)
    True
    """
    return bool(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan).all())


def nan_to_num(x, nan: float = 0.0, posinf=None, neginf=None) -> DNDarray:
    """NaN and infinities replaced by finite numbers, as numpy does.

    >>> import dndask as ht
    >>> ht.nan_to_num(ht.array([float("nan"), 1.0], split=0)).numpy().tolist()
    [0.0, 1.0]
    """
    for name, value in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if name != "nan" and value is None:
            continue
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise TypeError(f"`{name}` must be a real number, got {type(value).__name__}")
    return _ops.elementwise(
        lambda v: v.map_blocks(np.nan_to_num, nan=nan, posinf=posinf, neginf=neginf),
        x,
        name="nan_to_num",
    )
