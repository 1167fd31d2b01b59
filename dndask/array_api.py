"""The array API standard's namespace for DNDarrays (``a.__array_namespace__()``).

Array-API-generic code (``xp = a.__array_namespace__()``) runs on DNDarrays
through this module. It holds the standard's core creation, elementwise,
statistical, searching, manipulation and linear-algebra functions, under the
standard's names, built on dndask's own functions (so every result keeps its
distribution). Functions of the standard that dndask does not implement yet
(sorting, set functions, ``take``, ``searchsorted``, ...) raise an error that is
both a NotImplementedError and an AttributeError, so ``hasattr`` answers False.
A few names are not the standard's, for xarray, which calls them on any array
namespace: ``pad`` (:func:`dndask.pad`, numpy's signature; xarray's ``shift``,
``pad``, ``rolling``), ``lib.stride_tricks.sliding_window_view`` (numpy's
signature, a copy; xarray's ``rolling`` names it), and ``median`` and
``quantile`` (:func:`dndask.median`, :func:`dndask.quantile`, numpy's
signatures; xarray's ``median`` and ``quantile`` with ``skipna=False``).

>>> import dndask as ht
>>> a = ht.arange(6, split=0)
>>> xp = a.__array_namespace__()
>>> xp.sum(xp.pow(a, 2)).item()
55
"""

# ruff: noqa: F822 (the table's names in __all__ are defined by globals().update)

from __future__ import annotations

import builtins
import math
import types

import numpy as np

from . import _factories, _manipulation, _reductions, _sorting, _types
from ._dndarray import DNDarray
from ._elementwise import FUNCTIONS as _FUNCTIONS
from ._elementwise import clip, round, where
from ._factories import (
    arange,
    empty,
    empty_like,
    eye,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from ._linalg import matmul, tensordot, vecdot
from ._manipulation import (
    broadcast_to,
    concatenate,
    expand_dims,
    flatten,
    flip,
    moveaxis,
    pad,
    repeat,
    reshape,
    roll,
    sliding_window_view,
    squeeze,
    stack,
    swapaxes,
    tile,
    transpose,
)
from ._optable import OPS
from ._reductions import all, any, argmax, argmin, max, mean, min, prod, sum
from ._sorting import nonzero, unique_all, unique_counts, unique_inverse, unique_values
from ._statistics import median, quantile
from ._types import (
    bool_ as bool,  # the standard's name; shadows the builtin only inside this namespace
)
from ._types import (
    complex64,
    complex128,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
)

__array_api_version__ = "2023.12"
SUPPORTED_VERSIONS = ("2022.12", "2023.12")

e = math.e
pi = math.pi
inf = math.inf
nan = math.nan
newaxis = None

uint16 = np.dtype("uint16")
uint32 = np.dtype("uint32")
uint64 = np.dtype("uint64")


# the elementwise functions of the operation table, under the standard's names
globals().update({row.array_api: _FUNCTIONS[row.name] for row in OPS if row.array_api})

# not the standard's: numpy's ``lib.stride_tricks`` (xarray's rolling reads it off any namespace)
lib = types.SimpleNamespace(
    stride_tricks=types.SimpleNamespace(sliding_window_view=sliding_window_view)
)


# ------------------------------------------------------------- renamed ones
def concat(arrays, /, *, axis: int | None = 0) -> DNDarray:
    """Join arrays along an existing axis (``axis=None`` flattens them first)."""
    if axis is None:
        return concatenate([flatten(a) for a in arrays], axis=0)
    return concatenate(arrays, axis=axis)


def permute_dims(x: DNDarray, /, axes: tuple[int, ...]) -> DNDarray:
    """Permute the axes; the split follows its axis."""
    return transpose(x, axes)


def matrix_transpose(x: DNDarray, /) -> DNDarray:
    """Swap the last two axes."""
    if x.ndim < 2:
        raise ValueError(f"`x` of `matrix_transpose` must have at least 2 axes, got {x.ndim}")
    return swapaxes(x, -1, -2)


def _ddof(correction) -> int:
    if float(correction) != int(correction):
        raise NotImplementedError(
            f"`correction` must be a whole number in dndask, got {correction!r}"
        )
    return int(correction)


def var(x: DNDarray, /, *, axis=None, correction=0.0, keepdims: bool = False) -> DNDarray:
    """Variance with the standard's ``correction`` (numpy's ``ddof``)."""
    return _reductions.var(x, axis, ddof=_ddof(correction), keepdims=keepdims)


def std(x: DNDarray, /, *, axis=None, correction=0.0, keepdims: bool = False) -> DNDarray:
    """Standard deviation with the standard's ``correction``."""
    return _reductions.std(x, axis, ddof=_ddof(correction), keepdims=keepdims)


def cumulative_sum(
    x: DNDarray, /, *, axis: int | None = None, dtype=None, include_initial: bool = False
) -> DNDarray:
    """Cumulative sum; ``axis`` may be omitted only for 1-D arrays."""
    if include_initial:
        raise NotImplementedError("`cumulative_sum` with `include_initial=True` is not supported")
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"`axis` of `cumulative_sum` is required for {x.ndim}-D arrays")
        axis = 0
    return _reductions.cumsum(x, axis, dtype=dtype)


# ----------------------------------------------------------- data types
def asarray(obj, /, *, dtype=None, device=None, copy: bool | None = None) -> DNDarray:
    """A DNDarray from ``obj`` (a DNDarray is returned as is unless a copy or cast is asked)."""
    if isinstance(obj, DNDarray):
        if dtype is not None and _types.canonical_dtype(dtype) != obj.dtype:
            return obj.astype(dtype)
        return obj.copy() if copy else obj
    return _factories.array(obj, dtype=dtype)


def astype(x: DNDarray, dtype, /, *, copy: bool = True) -> DNDarray:
    """``x`` cast to ``dtype``."""
    return x.astype(dtype, copy=copy)


def can_cast(from_, to, /) -> bool:
    """Whether numpy's safe casting allows ``from_`` to ``to``."""
    source = from_.dtype if isinstance(from_, DNDarray) else from_
    return builtins.bool(np.can_cast(source, to, "safe"))


def result_type(*arrays_and_dtypes):
    """The dtype numpy's promotion gives these arrays and dtypes."""
    values = [a.dtype if isinstance(a, DNDarray) else a for a in arrays_and_dtypes]
    return np.result_type(*values)


def finfo(type, /):
    """Machine limits of a floating type (numpy's ``finfo``)."""
    return np.finfo(type.dtype if isinstance(type, DNDarray) else type)


def iinfo(type, /):
    """Machine limits of an integer type (numpy's ``iinfo``)."""
    return np.iinfo(type.dtype if isinstance(type, DNDarray) else type)


_KINDS = {
    "bool": "b",
    "signed integer": "i",
    "unsigned integer": "u",
    "integral": "iu",
    "real floating": "f",
    "complex floating": "c",
    "numeric": "iufc",
}


def isdtype(dtype, kind) -> bool:
    """Whether ``dtype`` is of ``kind`` (a dtype, a kind name, or a tuple of them)."""
    if isinstance(kind, tuple):
        return _any_true(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"`kind` must be one of {sorted(_KINDS)}, got {kind!r}")
        return np.dtype(dtype).kind in _KINDS[kind]
    return np.dtype(dtype) == np.dtype(kind)


def sort(x, /, *, axis: int = -1, descending: builtins.bool = False, stable: builtins.bool = True):
    """The standard's ``sort`` (see :func:`dndask.sort`)."""
    return _sorting.sort(x, axis, descending, stable=stable)


def argsort(
    x, /, *, axis: int = -1, descending: builtins.bool = False, stable: builtins.bool = True
):
    """The standard's ``argsort`` (see :func:`dndask.argsort`)."""
    return _sorting.argsort(x, axis, descending, stable=stable)


def searchsorted(x1, x2, /, *, side: str = "left", sorter=None):
    """The standard's ``searchsorted`` (see :func:`dndask.searchsorted`)."""
    return _sorting.searchsorted(x1, x2, side=side, sorter=sorter)


def take(x, indices, /, *, axis: int | None = None):
    """The standard's ``take`` (see :func:`dndask.take`)."""
    if axis is None and x.ndim != 1:
        raise ValueError(f"`axis` must be given for a {x.ndim}-dimensional `x`")
    return _sorting.take(x, indices, axis=axis)


def broadcast_arrays(*arrays: DNDarray) -> list[DNDarray]:
    """The standard's ``broadcast_arrays`` (see :func:`dndask.broadcast_arrays`)."""
    return _manipulation.broadcast_arrays(*arrays)


def _any_true(values) -> builtins.bool:
    return builtins.any(values)


_NOT_YET = {
    "meshgrid",
    "tril",
    "triu",
    "unstack",
}


class _NotInNamespaceError(NotImplementedError, AttributeError):
    """A function of the standard that dndask does not implement yet."""


def __getattr__(name: str):
    if name in _NOT_YET:
        raise _NotInNamespaceError(f"`{name}` of the array API is not implemented by dndask yet")
    raise AttributeError(f"module 'dndask.array_api' has no attribute {name!r}")


# written out (a test checks it against the table, whose names are generated above)
__all__ = [
    "abs",
    "acos",
    "acosh",
    "add",
    "all",
    "any",
    "arange",
    "argmax",
    "argmin",
    "argsort",
    "asarray",
    "asin",
    "asinh",
    "astype",
    "atan",
    "atan2",
    "atanh",
    "bitwise_and",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "bool",
    "broadcast_arrays",
    "broadcast_to",
    "can_cast",
    "ceil",
    "clip",
    "complex128",
    "complex64",
    "concat",
    "conj",
    "copysign",
    "cos",
    "cosh",
    "cumulative_sum",
    "divide",
    "e",
    "empty",
    "empty_like",
    "equal",
    "exp",
    "expand_dims",
    "expm1",
    "eye",
    "finfo",
    "flip",
    "float32",
    "float64",
    "floor",
    "floor_divide",
    "full",
    "full_like",
    "greater",
    "greater_equal",
    "hypot",
    "iinfo",
    "imag",
    "inf",
    "int16",
    "int32",
    "int64",
    "int8",
    "isdtype",
    "isfinite",
    "isinf",
    "isnan",
    "less",
    "less_equal",
    "lib",
    "linspace",
    "log",
    "log10",
    "log1p",
    "log2",
    "logaddexp",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "matmul",
    "matrix_transpose",
    "max",
    "maximum",
    "mean",
    "median",
    "min",
    "minimum",
    "moveaxis",
    "multiply",
    "nan",
    "negative",
    "newaxis",
    "nonzero",
    "not_equal",
    "ones",
    "ones_like",
    "pad",
    "permute_dims",
    "pi",
    "positive",
    "pow",
    "prod",
    "quantile",
    "real",
    "remainder",
    "repeat",
    "reshape",
    "result_type",
    "roll",
    "round",
    "searchsorted",
    "sign",
    "signbit",
    "sin",
    "sinh",
    "sort",
    "sqrt",
    "square",
    "squeeze",
    "stack",
    "std",
    "subtract",
    "sum",
    "take",
    "tan",
    "tanh",
    "tensordot",
    "tile",
    "trunc",
    "uint16",
    "uint32",
    "uint64",
    "uint8",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
    "var",
    "vecdot",
    "where",
    "zeros",
    "zeros_like",
]
