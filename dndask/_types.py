"""Data types: numpy dtypes inside, with Heat's names and torch dtypes accepted at the edges."""

from __future__ import annotations

import builtins
import numbers

import numpy as np
import torch

bool_ = np.dtype("bool")
uint8 = np.dtype("uint8")
int8 = np.dtype("int8")
int16 = np.dtype("int16")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
float16 = np.dtype("float16")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
complex64 = np.dtype("complex64")
complex128 = np.dtype("complex128")

_TORCH_TO_NUMPY = {
    torch.bool: bool_,
    torch.uint8: uint8,
    torch.int8: int8,
    torch.int16: int16,
    torch.int32: int32,
    torch.int64: int64,
    torch.float16: float16,
    torch.float32: float32,
    torch.float64: float64,
    torch.complex64: complex64,
    torch.complex128: complex128,
}
_NUMPY_TO_TORCH = {v: k for k, v in _TORCH_TO_NUMPY.items()}

# Heat's defaults for Python's own types: floats are single precision.
_PYTHON_TYPES = {
    builtins.bool: bool_,
    builtins.int: int64,
    builtins.float: float32,
    builtins.complex: complex64,
}


def canonical_dtype(dtype: object, name: str = "dtype") -> np.dtype:
    """Return the numpy dtype for a numpy, torch or Python type (or a dtype name).

    Python's ``float`` maps to float32 and ``int`` to int64, as in Heat.

    >>> canonical_dtype(float)
    dtype('float32')
    >>> canonical_dtype(torch.int32)
    dtype('int32')
    """
    if isinstance(dtype, torch.dtype):
        try:
            return _TORCH_TO_NUMPY[dtype]
        except KeyError:
            raise TypeError(f"`{name}` {dtype} has no numpy equivalent") from None
    if isinstance(dtype, type) and dtype in _PYTHON_TYPES:
        return _PYTHON_TYPES[dtype]
    try:
        out = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"`{name}` must be a numpy, torch or Python type, got {dtype!r}") from None
    if out.kind not in "biufc":
        raise TypeError(f"`{name}` must be a boolean or numeric type, got {out}")
    return out


def to_torch_dtype(dtype: np.dtype) -> torch.dtype:
    """The torch dtype of a numpy dtype.

    >>> to_torch_dtype(float32)
    torch.float32
    """
    try:
        return _NUMPY_TO_TORCH[np.dtype(dtype)]
    except KeyError:
        raise TypeError(f"`dtype` {dtype} has no torch equivalent") from None


def heat_name(dtype: np.dtype) -> str:
    """The name a repr shows, e.g. ``ht.float32``.

    >>> heat_name(float32)
    'ht.float32'
    """
    return f"ht.{np.dtype(dtype).name}"


def is_scalar(value: object) -> bool:
    """Whether ``value`` is a Python, numpy or 0-d torch scalar.

    >>> is_scalar(2.5), is_scalar(np.int8(1)), is_scalar(torch.tensor(1)), is_scalar([1])
    (True, True, True, False)
    """
    if isinstance(value, torch.Tensor):
        return value.ndim == 0
    return isinstance(value, (numbers.Number, np.generic))
