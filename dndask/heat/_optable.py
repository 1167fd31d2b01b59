"""The face's view of dndask's operation table (:mod:`dndask._optable`).

The core table's rows give every elementwise function's names: dndask's, numpy's
aliases, Heat's names (``heat``) and Heat's in-place methods (``heat_inplace``). The
face generates its functions, methods, operators and in-place methods from them
(``dndask/heat/__init__.py``, ``_array.py``). What the face adds per operation is
the torch function whose dtype behaviour Heat follows (:data:`TORCH`), and a few rows
for functions the core table does not hold yet (:data:`EXTRA`: dndask's
``_ufuncs_extra``).
"""

from __future__ import annotations

import torch

from .._optable import OPS

__all__ = ["EXTRA", "OPERATORS", "TORCH", "rows"]


def _promoted_square(x):
    return torch.square(x.to(torch.promote_types(x.dtype, torch.float32)))


def _fabs(x):
    return torch.abs(x) if x.is_floating_point() else torch.abs(x).float()


# the torch function each operation's dtype follows in Heat (rows without one: no rule)
TORCH = {
    "abs": torch.abs,
    "fabs": _fabs,
    "square": _promoted_square,
    "negative": torch.neg,
    "positive": torch.positive,
    "sign": lambda x: torch.sgn(x) if x.is_complex() else torch.sign(x),
    "sgn": torch.sgn,
    "signbit": torch.signbit,
    "sqrt": torch.sqrt,
    "exp": torch.exp,
    "exp2": torch.exp2,
    "expm1": torch.expm1,
    "log": torch.log,
    "log2": torch.log2,
    "log10": torch.log10,
    "log1p": torch.log1p,
    "sin": torch.sin,
    "cos": torch.cos,
    "tan": torch.tan,
    "arcsin": torch.asin,
    "arccos": torch.acos,
    "arctan": torch.atan,
    "sinh": torch.sinh,
    "cosh": torch.cosh,
    "tanh": torch.tanh,
    "arcsinh": torch.asinh,
    "arccosh": torch.acosh,
    "arctanh": torch.atanh,
    "deg2rad": torch.deg2rad,
    "rad2deg": torch.rad2deg,
    "floor": torch.floor,
    "ceil": torch.ceil,
    "trunc": torch.trunc,
    "rint": torch.round,
    "isnan": torch.isnan,
    "isinf": torch.isinf,
    "isfinite": torch.isfinite,
    "isposinf": torch.isposinf,
    "isneginf": torch.isneginf,
    "logical_not": torch.logical_not,
    "invert": torch.bitwise_not,
    "conj": torch.conj,
    "add": torch.add,
    "subtract": torch.sub,
    "multiply": torch.mul,
    "divide": torch.true_divide,
    "floor_divide": torch.floor_divide,
    "remainder": torch.remainder,
    "fmod": torch.fmod,
    "power": torch.pow,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
    "fmax": torch.fmax,
    "fmin": torch.fmin,
    "arctan2": torch.atan2,
    "hypot": torch.hypot,
    "copysign": torch.copysign,
    "logaddexp": torch.logaddexp,
    "logaddexp2": torch.logaddexp2,
    "gcd": torch.gcd,
    "lcm": torch.lcm,
    "not_equal": torch.ne,
    "less": torch.lt,
    "less_equal": torch.le,
    "greater": torch.gt,
    "greater_equal": torch.ge,
    "logical_and": torch.logical_and,
    "logical_or": torch.logical_or,
    "logical_xor": torch.logical_xor,
    "bitwise_and": torch.bitwise_and,
    "bitwise_or": torch.bitwise_or,
    "bitwise_xor": torch.bitwise_xor,
    "left_shift": torch.bitwise_left_shift,
    "right_shift": torch.bitwise_right_shift,
    "equal": torch.eq,
}

# (core name, arity, Heat names, Heat in-place names) of functions outside the core table
EXTRA = (
    ("sgn", 1, ("sgn",), ()),
    ("isposinf", 1, ("isposinf",), ()),
    ("isneginf", 1, ("isneginf",), ()),
    ("logaddexp2", 2, ("logaddexp2",), ()),
    ("gcd", 2, ("gcd",), ("gcd_",)),
    ("lcm", 2, ("lcm",), ("lcm_",)),
)


def rows() -> list[tuple]:
    """``(core name, arity, torch function, face names, in-place names)`` per operation.

    The face names are dndask's name, its aliases and Heat's names (no duplicates);
    rows the core does not export (``divmod``) are left to the face's own function.
    """
    out = []
    for op in OPS:
        if not op.export:
            continue
        names = tuple(dict.fromkeys((op.name, *op.aliases, *op.heat)))
        out.append((op.name, op.arity, TORCH.get(op.name), names, op.heat_inplace))
    for name, arity, names, inplace in EXTRA:
        out.append((name, arity, TORCH.get(name), names, inplace))
    return out


# Python operators: (operator name, the face function it calls)
OPERATORS = (
    ("add", "add"),
    ("sub", "subtract"),
    ("mul", "multiply"),
    ("truediv", "divide"),
    ("floordiv", "floor_divide"),
    ("mod", "remainder"),
    ("pow", "power"),
    ("and", "bitwise_and"),
    ("or", "bitwise_or"),
    ("xor", "bitwise_xor"),
    ("lshift", "left_shift"),
    ("rshift", "right_shift"),
)
