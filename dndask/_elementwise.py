"""Elementwise functions: numpy's ufuncs on DNDarrays, with Heat's short aliases.

Each function aligns its operands by Heat's rule (the result takes the split
of the first split operand; the other operands are resplit and redistributed
to match), runs the ufunc on every rank's chunk and keeps the distribution.
Operands may be DNDarrays, numpy arrays, torch tensors and scalars, broadcast
as numpy does; dtypes promote as numpy's. ``out``, a DNDarray, receives the
result in place (cast to its dtype when numpy's ``same_kind`` rule allows).

The one-ufunc functions (``sqrt``, ``add``, ``sub``...) and the DNDarray operators are
generated from the table in :mod:`dndask._optable`; the functions with more arguments
(``round``, ``clip``, ``where``, ``isclose``, ``allclose``, ``nan_to_num``) are written below.

>>> import dndask as ht
>>> ht.sub is not ht.subtract and ht.sub.__doc__.startswith("Difference")
True
"""

from __future__ import annotations

import numbers
from collections.abc import Callable

import dask.array as da
import numpy as np

from . import _ops
from ._dndarray import DNDarray
from ._optable import DTYPE_RULES, OPS, Op

_OPERANDS = {
    1: """x : DNDarray, numpy array, torch tensor or scalar
    The operand.""",
    2: """x1, x2 : DNDarray, numpy array, torch tensor or scalar
    The operands (at least one a DNDarray), broadcast together as numpy does.""",
}

_DOC = """{summary}
{alias}
Parameters
----------
{operands}
out : DNDarray, optional
    Receives the result in place; it keeps its split, distribution and dtype (the
    result is cast with numpy's ``same_kind`` rule).

Returns
-------
DNDarray
    Split like the first split operand (Heat's rule); data moves only to align the
    operands. Dtypes: {dtypes}.

See Also
--------
numpy.{ufunc} : the function each rank runs on its chunk.

Examples
--------
>>> import dndask as ht
>>> ht.{name}({example}).numpy().tolist()
{result}
"""


def _docstring(row: Op, name: str) -> str:
    if name == row.name:
        alias = ""
    else:
        whose = "Heat's name" if name in row.heat else "another name"
        alias = f"\nThe same function as :func:`{row.name}`, under {whose}.\n"
    return _DOC.format(
        summary=row.summary,
        alias=alias,
        operands=_OPERANDS[row.arity],
        dtypes=DTYPE_RULES[row.dtypes],
        ufunc=row.ufunc.__name__,
        name=name,
        example=row.example,
        result=row.result,
    )


def _function(row: Op, name: str) -> Callable:
    """The public function ``name`` of table row ``row``."""
    ufunc = row.ufunc
    if row.arity == 1:

        def function(x, /, *, out: DNDarray | None = None) -> DNDarray:
            return _ops.elementwise(ufunc, x, name=name, out=out)

    else:

        def function(x1, x2, /, *, out: DNDarray | None = None) -> DNDarray:
            return _ops.elementwise(ufunc, x1, x2, name=name, out=out)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = _docstring(row, name)
    return function


FUNCTIONS: dict[str, Callable] = {name: _function(row, name) for row in OPS for name in row.names}
globals().update(FUNCTIONS)


# ------------------------------------------------------------ DNDarray methods
def _binary_methods(row: Op) -> dict[str, Callable]:
    op = row.operator
    symbol = row.dunder

    if row.nout == 2:  # divmod: the floor division and the remainder operators

        def forward(self, other):
            return (self // other, self % other)

        def reflected(self, other):
            return (other // self, other % self)

    else:

        def forward(self, other):
            return _ops.binary(op, self, other)

        def reflected(self, other):
            return _ops.binary(op, other, self)

    def inplace(self, other):
        return _ops.inplace(op, self, other)

    out = {symbol: forward}
    forward.__doc__ = f"``{symbol}``: :func:`dndask.{row.name}` of ``self`` and ``other``."
    if row.reflected:
        out[row.reflected] = reflected
        reflected.__doc__ = f"``{row.reflected}``: ``other`` and ``self``, reflected."
    if row.inplace:
        out[row.inplace] = inplace
        inplace.__doc__ = (
            f"``{row.inplace}``: in place; keeps ``self``'s shape, dtype and distribution."
        )
    return out


def _unary_method(row: Op) -> Callable:
    op = row.operator

    def method(self):
        return _ops.elementwise(op, self, name=op.__name__)

    method.__doc__ = f"``{row.dunder}``: :func:`dndask.{row.name}`."
    return method


def _plain_method(row: Op, name: str) -> Callable:
    function = FUNCTIONS[row.name]

    def method(self) -> DNDarray:
        return function(self)

    method.__doc__ = f"{row.summary} (see :func:`dndask.{row.name}`)."
    return method


def dndarray_methods() -> dict[str, Callable]:
    """The DNDarray methods the table gives: operators, reflected, in-place, ``a.sqrt()``..."""
    out: dict[str, Callable] = {}
    for row in OPS:
        if row.dunder is not None:
            out.update(_binary_methods(row) if row.arity == 2 else {row.dunder: _unary_method(row)})
        for name in row.methods:
            out[name] = _plain_method(row, name)
    for name, method in out.items():
        method.__name__ = name
        method.__qualname__ = f"DNDarray.{name}"
    return out


# --------------------------------------------------- functions with arguments
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

    The one-argument form (``numpy.nonzero``) is :func:`dndask.where`'s.

    >>> import dndask as ht
    >>> a = ht.arange(5, split=0)
    >>> ht.where(a > 2, a, -1).numpy().tolist()
    [-1, -1, -1, 3, 4]
    """
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


__all__ = sorted(
    [*FUNCTIONS, "allclose", "clip", "dndarray_methods", "isclose", "nan_to_num", "round", "where"]
)
