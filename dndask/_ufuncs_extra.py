"""More elementwise functions (numpy's ``logaddexp2``, ``gcd``, ``lcm``, ``isposinf``,
``angle``, ``iscomplex``, ...).

They run through the same operand alignment as :mod:`dndask._elementwise`: the
result has the split of the first split operand, and no data moves otherwise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import _ops

if TYPE_CHECKING:
    from ._dndarray import DNDarray

__all__ = [
    "angle",
    "gcd",
    "iscomplex",
    "isneginf",
    "isposinf",
    "isreal",
    "lcm",
    "logaddexp2",
    "modf",
    "sgn",
]


def logaddexp2(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """``log2(2**x1 + 2**x2)``, elementwise.

    >>> import dndask as ht
    >>> ht.logaddexp2(ht.array([1.0, 3.0], split=0), 1.0).numpy().tolist()
    [2.0, 3.321928024291992]
    """
    return _ops.elementwise(np.logaddexp2, x1, x2, name="logaddexp2", out=out)


def gcd(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Greatest common divisor of integers, elementwise.

    >>> import dndask as ht
    >>> ht.gcd(ht.array([12, 20], split=0), 8).numpy().tolist()
    [4, 4]
    """
    return _ops.elementwise(np.gcd, x1, x2, name="gcd", out=out)


def lcm(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
    """Least common multiple of integers, elementwise.

    >>> import dndask as ht
    >>> ht.lcm(ht.array([4, 6], split=0), 3).numpy().tolist()
    [12, 6]
    """
    return _ops.elementwise(np.lcm, x1, x2, name="lcm", out=out)


def isposinf(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Whether each element is positive infinity.

    >>> import dndask as ht
    >>> ht.isposinf(ht.array([1.0, float("inf"), -float("inf")], split=0)).numpy().tolist()
    [False, True, False]
    """
    return _ops.elementwise(lambda v: v == np.inf, x, name="isposinf", out=out)


def isneginf(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """Whether each element is negative infinity.

    >>> import dndask as ht
    >>> ht.isneginf(ht.array([1.0, float("inf"), -float("inf")], split=0)).numpy().tolist()
    [False, False, True]
    """
    return _ops.elementwise(lambda v: v == -np.inf, x, name="isneginf", out=out)


def sgn(x, /, *, out: DNDarray | None = None) -> DNDarray:
    """The sign of real numbers; ``x / |x|`` (0 at 0) for complex ones.

    >>> import dndask as ht
    >>> ht.sgn(ht.array([-2 + 0j, 4j, 0j], dtype=ht.complex128, split=0)).numpy().tolist()
    [(-1+0j), 1j, 0j]
    """

    def local(v):
        if np.issubdtype(v.dtype, np.complexfloating):
            mag = abs(v)
            return (v / (mag + (mag == 0))).astype(v.dtype)
        return np.sign(v)

    return _ops.elementwise(local, x, name="sgn", out=out)


def modf(x, /) -> tuple[DNDarray, DNDarray]:
    """Fractional and integral parts, both with the sign of ``x`` (numpy's order).

    >>> import dndask as ht
    >>> frac, whole = ht.modf(ht.array([1.5, -2.25], split=0))
    >>> frac.numpy().tolist(), whole.numpy().tolist()
    ([0.5, -0.25], [1.0, -2.0])
    """
    whole = _ops.elementwise(np.trunc, x, name="modf")
    return _ops.elementwise(np.subtract, x, whole, name="modf"), whole


def _angle_in_degrees(z):
    return np.angle(z, deg=True)


def angle(z, deg: bool = False, out: DNDarray | None = None) -> DNDarray:
    """The counterclockwise angle of each complex element from the positive real axis.

    In radians, or in degrees with ``deg=True``; real elements have angle 0 or pi.

    >>> import dndask as ht
    >>> ht.angle(ht.array([1.0, 1j, -1.0], split=0), deg=True).numpy().tolist()
    [0.0, 90.0, 180.0]
    """
    if not isinstance(deg, bool):
        raise TypeError(f"`deg` must be a bool, got {type(deg).__name__}")
    return _ops.elementwise(_angle_in_degrees if deg else np.angle, z, name="angle", out=out)


def iscomplex(x, /) -> DNDarray:
    """Whether each element has a nonzero imaginary part (False for every real dtype).

    >>> import dndask as ht
    >>> ht.iscomplex(ht.array([1 + 1j, 2 + 0j], split=0)).numpy().tolist()
    [True, False]
    """
    return _ops.elementwise(np.iscomplex, x, name="iscomplex")


def isreal(x, /) -> DNDarray:
    """Whether each element has a zero imaginary part (True for every real dtype).

    >>> import dndask as ht
    >>> ht.isreal(ht.array([1 + 1j, 2 + 0j], split=0)).numpy().tolist()
    [False, True]
    """
    return _ops.elementwise(np.isreal, x, name="isreal")
