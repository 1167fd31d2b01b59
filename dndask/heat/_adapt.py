"""Adapters from the core's numpy semantics to Heat's: arguments in, face arrays out.

Nothing here computes: every adapter calls the core function and only converts
what goes in (Heat types, Python ``int`` as a dtype, ``device=``, scalars where
Heat takes them) and what comes out (core arrays become face arrays, dtypes follow
torch's promotion rule).
"""

from __future__ import annotations

import builtins
import functools
import inspect
import numbers
from collections.abc import Callable

import numpy as np
import torch

from .. import _dndarray, _factories
from .. import _types as _core_types
from . import types

__all__ = ["check_device", "face", "plain", "promoted", "to_array", "wrap"]

# set by _array.py: the face's array class
FACE: dict = {}


def face(value):
    """Core arrays (also inside tuples and lists) as face arrays sharing their state."""
    cls = FACE["DNDarray"]
    if isinstance(value, _dndarray.DNDarray):
        if isinstance(value, cls):
            return value
        out = object.__new__(cls)
        out.__dict__ = value.__dict__  # one state: in-place changes show through both
        return out
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(face(v) for v in value)
    if isinstance(value, list):
        return [face(v) for v in value]
    return value


def check_device(device) -> None:
    """Heat's ``device=``: dndask has only the CPU."""
    if device is None or str(device) in ("cpu", "cpu:0"):
        return
    raise ValueError(f"`device` must be 'cpu' (dndask has only the cpu device), got {device!r}")


def _dtype_arg(dtype):
    """Heat reads Python's ``int`` as int32 (the core, like numpy, as int64)."""
    if dtype is builtins.int:
        return types.int32
    return dtype


@functools.cache
def _parameters(fn: Callable) -> frozenset:
    try:
        return frozenset(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return frozenset()


def _kwargs(fn: Callable, kwargs: dict) -> dict:
    if "device" in kwargs and "device" not in _parameters(fn):
        check_device(kwargs.pop("device"))
    if "dtype" in kwargs:
        kwargs["dtype"] = _dtype_arg(kwargs["dtype"])
    return kwargs


def wrap(fn: Callable, name: str | None = None) -> Callable:
    """``fn`` with Heat's arguments accepted and face arrays returned."""

    @functools.wraps(fn)
    def adapter(*args, **kwargs):
        return face(fn(*args, **_kwargs(fn, kwargs)))

    if name is not None:
        adapter.__name__ = adapter.__qualname__ = name
    return adapter


def plain(fn: Callable, name: str | None = None) -> Callable:
    """``fn`` re-exported with only its results converted (no argument adapters)."""

    @functools.wraps(fn)
    def adapter(*args, **kwargs):
        return face(fn(*args, **kwargs))

    if name is not None:
        adapter.__name__ = adapter.__qualname__ = name
    return adapter


def _is_scalar(value) -> bool:
    return isinstance(value, (numbers.Number, np.generic)) and not isinstance(value, np.ndarray)


def to_array(value, name: str, what: str = "x"):
    """A scalar as a 0-d array, a DNDarray as is; anything else a TypeError (Heat's rule)."""
    if isinstance(value, _dndarray.DNDarray):
        return value
    if _is_scalar(value):
        return face(_factories.array(value, dtype=types.heat_type_of(_py(value))))
    raise TypeError(
        f"`{what}` of `{name}` must be a DNDarray or a numeric scalar, got {type(value).__name__}"
    )


def _py(value):
    return value.item() if isinstance(value, np.generic) else value


@functools.lru_cache(maxsize=4096)
def _torch_dtypes(torch_fn: Callable, probes: tuple):
    """(common input dtype, output dtype) torch gives for these operand kinds, or None."""
    values = [torch.ones(1, dtype=p) if isinstance(p, torch.dtype) else p[1] for p in probes]
    try:
        out = torch_fn(*values)
        common = torch.result_type(*values) if len(values) > 1 else values[0].dtype
    except (RuntimeError, TypeError):
        return None
    out = out[0] if isinstance(out, tuple) else out
    return common, out.dtype


def promoted(core_fn: Callable, torch_fn: Callable | None, name: str, arity: int) -> Callable:
    """An elementwise core function whose dtypes follow torch's promotion, as Heat's do.

    Operands are DNDarrays or numeric scalars (Heat refuses lists and tensors with a
    TypeError); two scalars make a 0-d array. Integer operands of a function torch
    computes in floating point (``exp``, ``true_divide``, ...) are cast to torch's
    float type first, operands of different types to torch's common type, and the
    result is cast to torch's output type when numpy's differs.
    """

    @functools.wraps(core_fn)
    def adapter(*args, out=None, **kwargs):
        operands = list(args[:arity])
        for i, v in enumerate(operands):
            if not isinstance(v, _dndarray.DNDarray) and not _is_scalar(v):
                raise TypeError(
                    f"operand {i} of `{name}` must be a DNDarray or a numeric scalar, "
                    f"got {type(v).__name__}"
                )
        if operands and not any(isinstance(v, _dndarray.DNDarray) for v in operands):
            operands[0] = to_array(operands[0], name)
        if torch_fn is not None:
            operands = _cast_operands(operands, torch_fn)
        result = core_fn(*operands, *args[arity:], out=out, **kwargs)
        if out is None and torch_fn is not None:
            want = _want(operands, torch_fn)
            if want is not None and result.dtype != want:
                result = result.astype(want)
        return face(result)

    adapter.__name__ = adapter.__qualname__ = name
    return adapter


def _signature(operands) -> tuple:
    sig = []
    for v in operands:
        if isinstance(v, _dndarray.DNDarray):
            sig.append(_torch_dtype(v))
        else:
            v = _py(v)
            sig.append((type(v).__name__, v if isinstance(v, builtins.bool) else type(v)(1)))
    return tuple(sig)


def _torch_dtype(x) -> torch.dtype:
    return _core_types.to_torch_dtype(np.dtype(x.to_dask().dtype))


def _want(operands, torch_fn):
    dts = _torch_dtypes(torch_fn, _signature(operands))
    return None if dts is None else np.dtype(types.canonical_heat_type(dts[1]).dtype)


def _cast_operands(operands, torch_fn):
    dts = _torch_dtypes(torch_fn, _signature(operands))
    if dts is None:
        return operands
    common, out = dts
    target = (
        out
        if (out.is_floating_point or out.is_complex)
        and not (common.is_floating_point or common.is_complex)
        else common
    )
    if target == torch.bool and out != torch.bool:
        return operands
    want = np.dtype(types.canonical_heat_type(target).dtype)
    return [
        v.astype(want)
        if isinstance(v, _dndarray.DNDarray) and np.dtype(v.to_dask().dtype) != want
        else v
        for v in operands
    ]
