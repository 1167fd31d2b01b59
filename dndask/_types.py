"""Data types: numpy dtypes inside, with Heat's names and torch dtypes accepted at the edges."""

from __future__ import annotations

import builtins
import numbers
from typing import TYPE_CHECKING

import numpy as np

from . import _torch

if TYPE_CHECKING:
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

# torch's dtypes by name (``str(torch.int32)`` is "torch.int32"): torch is not imported here
_TORCH_TO_NUMPY = {
    dtype.name: dtype
    for dtype in (
        bool_,
        uint8,
        int8,
        int16,
        int32,
        int64,
        float16,
        float32,
        float64,
        complex64,
        complex128,
    )
}

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
    >>> canonical_dtype(_torch.torch().int32)
    dtype('int32')
    """
    if _torch.is_dtype(dtype):
        try:
            return _TORCH_TO_NUMPY[str(dtype).removeprefix("torch.")]
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
    """The torch dtype of a numpy dtype (imports torch).

    >>> to_torch_dtype(float32)
    torch.float32
    """
    name = np.dtype(dtype).name
    if name not in _TORCH_TO_NUMPY:
        raise TypeError(f"`dtype` {dtype} has no torch equivalent")
    return getattr(_torch.torch(), name)


def heat_name(dtype: np.dtype) -> str:
    """The name a repr shows, e.g. ``ht.float32``.

    >>> heat_name(float32)
    'ht.float32'
    """
    return f"ht.{np.dtype(dtype).name}"


def is_scalar(value: object) -> bool:
    """Whether ``value`` is a Python, numpy or 0-d torch scalar.

    >>> is_scalar(2.5), is_scalar(np.int8(1)), is_scalar(_torch.torch().tensor(1)), is_scalar([1])
    (True, True, True, False)
    """
    if _torch.is_tensor(value):
        return value.ndim == 0
    return isinstance(value, (numbers.Number, np.generic))
