"""The face's view of dndask's operation table (:mod:`dndask._optable`).

The core table's rows give every elementwise function's names: dndask's, numpy's
aliases, Heat's names (``heat``) and Heat's in-place methods (``heat_inplace``). The
face generates its functions, methods, operators and in-place methods from them
(``dndask/heat/__init__.py``, ``_array.py``). What the face adds per operation is
the torch function whose dtype behaviour Heat follows (:data:`TORCH`), the functions
whose chunks torch computes (:data:`TORCH_KERNEL`), and a few rows
for functions the core table does not hold yet (:data:`EXTRA`: dndask's
``_ufuncs_extra``).
"""

from __future__ import annotations

from collections.abc import Callable

from .. import _torch
from .._optable import OPS

__all__ = ["EXTRA", "OPERATORS", "TORCH", "TORCH_KERNEL", "rows", "torch_function"]


def _promoted_square(x):
    torch = _torch.torch()
    return torch.square(x.to(torch.promote_types(x.dtype, torch.float32)))


def _fabs(x):
    torch = _torch.torch()
    return torch.abs(x) if x.is_floating_point() else torch.abs(x).float()


def _sign(x):
    torch = _torch.torch()
    return torch.sgn(x) if x.is_complex() else torch.sign(x)


# the torch function each operation's dtype follows in Heat (rows without one: no rule): the
# name of a function of the torch module, or a function of tensors (torch is imported on use)
TORCH = {
    "abs": "abs",
    "fabs": _fabs,
    "square": _promoted_square,
    "negative": "neg",
    "positive": "positive",
    "sign": _sign,
    "sgn": "sgn",
    "signbit": "signbit",
    "sqrt": "sqrt",
    "exp": "exp",
    "exp2": "exp2",
    "expm1": "expm1",
    "log": "log",
    "log2": "log2",
    "log10": "log10",
    "log1p": "log1p",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "sinh": "sinh",
    "cosh": "cosh",
    "tanh": "tanh",
    "arcsinh": "asinh",
    "arccosh": "acosh",
    "arctanh": "atanh",
    "deg2rad": "deg2rad",
    "rad2deg": "rad2deg",
    "floor": "floor",
    "ceil": "ceil",
    "trunc": "trunc",
    "rint": "round",
    "isnan": "isnan",
    "isinf": "isinf",
    "isfinite": "isfinite",
    "isposinf": "isposinf",
    "isneginf": "isneginf",
    "logical_not": "logical_not",
    "invert": "bitwise_not",
    "conj": "conj",
    "add": "add",
    "subtract": "sub",
    "multiply": "mul",
    "divide": "true_divide",
    "floor_divide": "floor_divide",
    "remainder": "remainder",
    "fmod": "fmod",
    "power": "pow",
    "maximum": "maximum",
    "minimum": "minimum",
    "fmax": "fmax",
    "fmin": "fmin",
    "arctan2": "atan2",
    "hypot": "hypot",
    "copysign": "copysign",
    "logaddexp": "logaddexp",
    "logaddexp2": "logaddexp2",
    "gcd": "gcd",
    "lcm": "lcm",
    "not_equal": "ne",
    "less": "lt",
    "less_equal": "le",
    "greater": "gt",
    "greater_equal": "ge",
    "logical_and": "logical_and",
    "logical_or": "logical_or",
    "logical_xor": "logical_xor",
    "bitwise_and": "bitwise_and",
    "bitwise_or": "bitwise_or",
    "bitwise_xor": "bitwise_xor",
    "left_shift": "bitwise_left_shift",
    "right_shift": "bitwise_right_shift",
    "equal": "eq",
}


# the unary floating-point functions whose chunks the face computes with the TORCH function
# itself (:class:`dndask._ops.TorchKernel`), so the values are torch's to the last bit, as
# Heat's are (numpy's vectorised kernels round some results the other way); the other rows
# keep the core's numpy kernels, which agree with torch's exactly (arithmetic, comparisons,
# rounding, bit operations) or are not compared bit for bit by Heat
TORCH_KERNEL = frozenset(
    {
        "sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
        "sin", "cos", "tan", "arcsin", "arccos", "arctan",
        "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
    }
)  # fmt: skip


def torch_function(entry: str | Callable) -> Callable:
    """The torch function of a :data:`TORCH` entry (imports torch).

    >>> torch_function("sub").__name__, torch_function(_fabs).__name__
    ('sub', '_fabs')
    """
    return getattr(_torch.torch(), entry) if isinstance(entry, str) else entry


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
    """``(core name, arity, torch function, face names, in-place names, torch kernel)`` per
    operation.

    The face names are dndask's name, its aliases and Heat's names (no duplicates);
    rows the core does not export (``divmod``) are left to the face's own function.
    ``torch kernel`` is whether torch's function computes the chunks (:data:`TORCH_KERNEL`).

    >>> [row[5] for row in rows() if row[0] in ("exp", "add")]
    [True, False]
    """
    out = []
    for op in OPS:
        if not op.export:
            continue
        names = tuple(dict.fromkeys((op.name, *op.aliases, *op.heat)))
        kernel = op.name in TORCH_KERNEL
        out.append((op.name, op.arity, TORCH.get(op.name), names, op.heat_inplace, kernel))
    for name, arity, names, inplace in EXTRA:
        out.append((name, arity, TORCH.get(name), names, inplace, name in TORCH_KERNEL))
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
