"""Heat's ``heat.core.relational`` on the face: ``equal`` is one bool, ``eq``/``ne`` compare
anything (operands that cannot be compared give one bool), as in Heat.

The other comparisons (``lt``, ``greater``, ...) are the base layer's, generated from the
operation table; every other name resolves through the face's namespace.
"""

from __future__ import annotations

import builtins as _builtins
import numbers as _numbers

import numpy as _np

import dndask as _core

from .. import _dndarray
from . import _base, _namespace

__all__ = ["eq", "equal", "ne"]


def equal(x, y) -> _builtins.bool:
    """Whether ``x`` and ``y`` are equal as one bool (Heat's rule, after ``torch.equal``).

    A one-element array counts as its element: it equals a scalar or another
    one-element array of the same value; an array of more elements never equals a
    scalar. Two arrays must have the same shape and equal elements. Arrays on
    different comms are a ``NotImplementedError`` and different splits (both set)
    a ``ValueError``, as in Heat.

    >>> import dndask.heat as ht
    >>> ht.equal(ht.arange(3), ht.arange(3)), ht.equal(ht.arange(3), ht.arange(4))
    (True, False)
    >>> ht.equal(ht.array([2.0]), 2), ht.equal(ht.ones(2), 1.0)
    (True, False)
    """
    for v, what in ((x, "x"), (y, "y")):
        if not isinstance(v, (_dndarray.DNDarray, _numbers.Number, _np.generic)):
            raise TypeError(
                f"`{what}` of `equal` must be a DNDarray or a scalar, got {type(v).__name__}"
            )
    x_arr, y_arr = isinstance(x, _dndarray.DNDarray), isinstance(y, _dndarray.DNDarray)
    if x_arr and x.size == 1:
        return equal(x.item(), y)
    if y_arr and y.size == 1:
        return equal(x, y.item())
    if not (x_arr and y_arr):
        return x_arr == y_arr and _builtins.bool(x == y)  # two scalars, or never equal
    if x.comm != y.comm:
        raise NotImplementedError("`equal` of arrays on different comms is not implemented")
    if x.shape != y.shape:
        return False
    if x.split is not None and y.split is not None and x.split != y.split:
        raise ValueError(f"`equal` needs arrays of the same split, got {x.split} and {y.split}")
    return _builtins.bool(_core.all(_core.equal(x, y)))


def _comparison(elementwise, name: str, mismatch: _builtins.bool):
    def compare(x, y, out=None):
        try:
            return elementwise(x, y, out=out)
        except (TypeError, ValueError):
            # Heat answers a comparison it cannot do elementwise (shapes that do not
            # broadcast, a non-numeric operand) with one bool
            if out is not None:
                raise
            return mismatch

    compare.__name__ = compare.__qualname__ = name
    compare.__doc__ = (
        f"Heat's ``{name}``: elementwise, or ``{mismatch}`` for operands that cannot be compared."
    )
    return compare


eq = _comparison(_base.BASE["eq"], "eq", False)
ne = _comparison(_base.BASE["ne"], "ne", True)


def __getattr__(name: str) -> object:
    return _namespace.resolve(__name__, name)
