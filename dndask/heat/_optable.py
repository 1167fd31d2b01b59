"""The face's table of elementwise operations: Heat's names, aliases, in-place names and
the torch function whose dtype rule Heat follows.

One row per operation: ``(core name, arity, torch function, Heat aliases, in-place)``.
The face's functions, array methods, operators and in-place methods are all generated
from it (see ``dndask/heat/__init__.py`` and ``_array.py``). ``in-place`` says whether
Heat has ``name_`` methods for the operation (for the core name and every alias).
"""

from __future__ import annotations

import torch

__all__ = ["OPERATORS", "TABLE"]

TABLE = (
    # unary
    ("abs", 1, torch.abs, ("absolute",), True),
    (
        "fabs",
        1,
        lambda x: torch.abs(x).float() if not x.is_floating_point() else torch.abs(x),
        (),
        False,
    ),
    ("negative", 1, torch.neg, ("neg",), True),
    ("positive", 1, torch.positive, ("pos",), False),
    ("sign", 1, torch.sign, (), False),
    ("sgn", 1, torch.sgn, (), False),
    ("signbit", 1, torch.signbit, (), False),
    ("sqrt", 1, torch.sqrt, (), False),
    (
        "square",
        1,
        lambda x: torch.square(x.to(torch.promote_types(x.dtype, torch.float32))),
        (),
        False,
    ),
    ("exp", 1, torch.exp, (), False),
    ("exp2", 1, torch.exp2, (), False),
    ("expm1", 1, torch.expm1, (), False),
    ("log", 1, torch.log, (), False),
    ("log2", 1, torch.log2, (), False),
    ("log10", 1, torch.log10, (), False),
    ("log1p", 1, torch.log1p, (), False),
    ("sin", 1, torch.sin, (), False),
    ("cos", 1, torch.cos, (), False),
    ("tan", 1, torch.tan, (), False),
    ("arcsin", 1, torch.asin, ("asin",), False),
    ("arccos", 1, torch.acos, ("acos",), False),
    ("arctan", 1, torch.atan, ("atan",), False),
    ("sinh", 1, torch.sinh, (), False),
    ("cosh", 1, torch.cosh, (), False),
    ("tanh", 1, torch.tanh, (), False),
    ("arcsinh", 1, torch.asinh, ("asinh",), False),
    ("arccosh", 1, torch.acosh, ("acosh",), False),
    ("arctanh", 1, torch.atanh, ("atanh",), False),
    ("deg2rad", 1, torch.deg2rad, ("radians",), False),
    ("rad2deg", 1, torch.rad2deg, ("degrees",), False),
    ("floor", 1, torch.floor, (), False),
    ("ceil", 1, torch.ceil, (), False),
    ("trunc", 1, torch.trunc, ("fix",), False),
    ("rint", 1, torch.round, (), False),
    ("isnan", 1, torch.isnan, (), False),
    ("isinf", 1, torch.isinf, (), False),
    ("isfinite", 1, torch.isfinite, (), False),
    ("isposinf", 1, torch.isposinf, (), False),
    ("isneginf", 1, torch.isneginf, (), False),
    ("logical_not", 1, torch.logical_not, (), False),
    ("invert", 1, torch.bitwise_not, ("bitwise_not",), True),
    ("conj", 1, torch.conj, ("conjugate",), False),
    # binary
    ("add", 2, torch.add, (), True),
    ("subtract", 2, torch.sub, ("sub",), True),
    ("multiply", 2, torch.mul, ("mul",), True),
    ("divide", 2, torch.true_divide, ("div", "true_divide"), True),
    ("floor_divide", 2, torch.floor_divide, ("floordiv",), True),
    ("remainder", 2, torch.remainder, ("mod",), True),
    ("fmod", 2, torch.fmod, (), True),
    ("power", 2, torch.pow, ("pow",), True),
    ("maximum", 2, torch.maximum, (), False),
    ("minimum", 2, torch.minimum, (), False),
    ("fmax", 2, torch.fmax, (), False),
    ("fmin", 2, torch.fmin, (), False),
    ("arctan2", 2, torch.atan2, ("atan2",), True),
    ("hypot", 2, torch.hypot, (), True),
    ("copysign", 2, torch.copysign, (), True),
    ("logaddexp", 2, torch.logaddexp, (), False),
    ("logaddexp2", 2, torch.logaddexp2, (), False),
    ("gcd", 2, torch.gcd, (), True),
    ("lcm", 2, torch.lcm, (), True),
    ("not_equal", 2, torch.ne, ("ne",), False),
    ("less", 2, torch.lt, ("lt",), False),
    ("less_equal", 2, torch.le, ("le",), False),
    ("greater", 2, torch.gt, ("gt",), False),
    ("greater_equal", 2, torch.ge, ("ge",), False),
    ("logical_and", 2, torch.logical_and, (), False),
    ("logical_or", 2, torch.logical_or, (), False),
    ("logical_xor", 2, torch.logical_xor, (), False),
    ("bitwise_and", 2, torch.bitwise_and, (), True),
    ("bitwise_or", 2, torch.bitwise_or, (), True),
    ("bitwise_xor", 2, torch.bitwise_xor, (), True),
    ("left_shift", 2, torch.bitwise_left_shift, (), True),
    ("right_shift", 2, torch.bitwise_right_shift, (), True),
)

# Python operators: (dunder, face function, reflected, in-place)
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
