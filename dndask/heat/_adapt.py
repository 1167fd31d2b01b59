"""Adapters from the core's numpy semantics to Heat's: arguments in, face arrays out.

Every adapter calls the core function and only converts what goes in (Heat types,
Python ``int`` as a dtype, ``device=``, scalars where Heat takes them) and what comes
out (core arrays become face arrays, dtypes follow torch's promotion rule). What comes
out is started (:func:`face`, :mod:`._eager`): Heat computes at the call.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import numbers
from collections.abc import Callable

import numpy as np

from .. import _dndarray, _elementwise, _factories, _manipulation, _ops, _torch, _xp
from . import _eager, _optable, types

__all__ = ["check_device", "check_out", "face", "into", "plain", "promoted", "to_array", "wrap"]


# set by _array.py: the face's array class
FACE: dict = {}


def face(value, start: bool = True):
    """Core arrays (also inside tuples and lists) as face arrays sharing their state.

    With ``start`` (every face result) each array starts computing now, as Heat's
    results do (:func:`._eager.start`: persisted without waiting, unless the mode of
    :func:`dndask.heat.lazy` or :func:`dndask.heat.blocking` says otherwise).
    """
    cls = FACE["DNDarray"]
    if isinstance(value, _dndarray.DNDarray):
        if isinstance(value, cls):
            out = value
        else:
            out = object.__new__(cls)
            out.__dict__ = value.__dict__  # one state: in-place changes show through both
        return _eager.start(out) if start else out
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(face(v, start) for v in value)
    if isinstance(value, list):
        return [face(v, start) for v in value]
    return value


def check_device(device):
    """Heat's ``device=`` as a :class:`dndask.Device` to forward (``None``: the default device).

    ``"cpu"``, ``"gpu"``, ``"gpu:<n>"`` or a Device; ValueError for another value, and
    RuntimeError (now, before any task) for a device that cannot be used here.

    >>> check_device("cpu")
    device(cpu:0)
    """
    return None if device is None else _xp.sanitize_device(device)


def check_no_device(device, name: str) -> None:
    """``device=`` of a function that makes no new chunks: only the CPU or None."""
    if device is not None and str(device).strip().lower() not in ("cpu", "cpu:0"):
        raise ValueError(
            f"`device` of `{name}` must be None or 'cpu' (move arrays with .gpu()), got {device!r}"
        )


def into(out, result, name: str):
    """Heat's ``out=``: the buffer must have the result's split too (Heat's ``sanitize_out``).

    Then the core writes the result into it (shape and cast checked there).
    """
    check_out(out, result, name)
    return _ops.into(out, result, name)


def check_out(out, result, name: str) -> None:
    """Every check of :func:`into`, writing nothing (for functions with several outputs)."""
    if not isinstance(out, _dndarray.DNDarray):
        raise TypeError(f"`out` of `{name}` must be a DNDarray, got {type(out).__name__}")
    if out.shape != result.shape:
        raise ValueError(f"`out` of `{name}` must have shape {result.shape}, got {out.shape}")
    if out.split != result.split:
        raise ValueError(
            f"`out` of `{name}` must have the result's split {result.split}, got {out.split}"
        )
    if out.comm != result.comm:
        raise NotImplementedError(
            f"`out` of `{name}` on another comm than the result is not implemented (as in Heat)"
        )
    if not np.can_cast(result.to_dask().dtype, out.to_dask().dtype, "same_kind"):
        raise TypeError(
            f"`out` of `{name}` cannot hold the result: cannot cast "
            f"{result.to_dask().dtype} to {out.to_dask().dtype}"
        )


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


@functools.cache
def _positional(fn: Callable) -> tuple:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return ()
    return tuple(p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def _kwargs(fn: Callable, kwargs: dict) -> dict:
    if "device" in kwargs and "device" not in _parameters(fn):
        check_no_device(kwargs.pop("device"), getattr(fn, "__name__", "function"))
    if "dtype" in kwargs:
        kwargs["dtype"] = _dtype_arg(kwargs["dtype"])
    if isinstance(kwargs.get("axis"), list):  # Heat takes a list of axes where numpy a tuple
        kwargs["axis"] = tuple(kwargs["axis"])
    return kwargs


def wrap(fn: Callable, name: str | None = None) -> Callable:
    """``fn`` with Heat's arguments accepted and face arrays returned.

    ``out=`` is accepted by every function (Heat has it on most): where the core
    function has no ``out``, its result is written into ``out`` after every check.
    """
    label = name or getattr(fn, "__name__", "function")

    axis_second = _positional(fn)[1:2] == ("axis",)

    @functools.wraps(fn)
    def adapter(*args, **kwargs):
        if axis_second and len(args) > 1 and isinstance(args[1], list):
            args = (args[0], tuple(args[1]), *args[2:])
        if "bessel" in kwargs and "ddof" in _parameters(fn):  # Heat's std/var keyword
            bessel = kwargs.pop("bessel")
            if not isinstance(bessel, builtins.bool):
                raise TypeError(f"`bessel` must be a bool, got {type(bessel).__name__}")
            kwargs.setdefault("ddof", 1 if bessel else 0)
        out = kwargs.pop("out", None) if "out" not in _parameters(fn) else None
        result = fn(*args, **_kwargs(fn, kwargs))
        if out is not None:
            return face(_ops.into(out, result, label))
        return face(result)

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
        return face(_factories.array(value, dtype=types.heat_type_of(_py(value))), start=False)
    raise TypeError(
        f"`{what}` of `{name}` must be a DNDarray or a numeric scalar, got {type(value).__name__}"
    )


def _py(value):
    return value.item() if isinstance(value, np.generic) else value


@functools.lru_cache(maxsize=4096)
def _torch_out(torch_fn: str | Callable, probes: tuple):
    """The dtype torch's function (a :data:`~._optable.TORCH` entry) returns for these
    operand kinds, or None if it refuses."""
    torch = _torch.torch()
    values = [torch.ones(1, dtype=p[0]) if len(p) == 1 else p[1] for p in probes]
    try:
        out = _optable.torch_function(torch_fn)(*values)
    except (RuntimeError, TypeError, NotImplementedError):
        return None
    out = out[0] if isinstance(out, tuple) else out
    return out.dtype


def promoted(
    core_fn: Callable,
    torch_fn: str | Callable | None,
    name: str,
    arity: int,
    *,
    torch_kernel: bool = False,
) -> Callable:
    """An elementwise core function whose dtypes follow Heat's rule.

    Operands are DNDarrays or numeric scalars (Heat refuses lists and tensors with a
    TypeError; unary functions refuse scalars too); two scalars make a 0-d array.
    The operands are cast to Heat's :func:`~dndask.heat.types.result_type` (integer
    operands of a unary function torch computes in floating point, like ``exp``, to
    ``promote_types(t, float32)``), and the result gets the type the torch function
    gives for operands of that type (``true_divide`` of ints is float32, comparisons
    are bool). Types torch refuses (``hypot`` of ints on the CPU) raise TypeError, as
    in Heat. ``where=`` keeps ``out``'s values (zeros without ``out``) where it is False.

    With ``torch_kernel`` (a unary function named in :data:`~._optable.TORCH_KERNEL`)
    every chunk is computed by the torch function itself (:class:`dndask._ops.TorchKernel`
    over the same elementwise graph code), so the values are torch's to the last bit, as
    Heat's local operations give them; otherwise the core's numpy kernel runs.
    """
    if torch_kernel and (arity != 1 or not isinstance(torch_fn, str)):
        raise ValueError(f"`torch_kernel` needs a unary function with a torch name, got `{name}`")

    @functools.wraps(core_fn)
    def adapter(*args, out=None, where=True, dtype=None, **kwargs):
        if (
            arity == 1
            and len(args) == 2
            and out is None
            and isinstance(args[1], _dndarray.DNDarray)
        ):
            args, out = args[:1], args[1]  # Heat's unary functions take `out` second
        operands = list(args[:arity])
        for i, v in enumerate(operands):
            if not isinstance(v, _dndarray.DNDarray) and (arity == 1 or not _is_scalar(v)):
                kind = "a DNDarray" if arity == 1 else "a DNDarray or a numeric scalar"
                raise TypeError(f"operand {i} of `{name}` must be {kind}, got {type(v).__name__}")
        if operands and not any(isinstance(v, _dndarray.DNDarray) for v in operands):
            operands[0] = to_array(operands[0], name)
        want = None
        if torch_fn is not None:
            common = types.result_type(*operands)
            if arity == 1 and common.dtype.kind in "biu":
                probe = _torch_out(torch_fn, ((common.torch_type(),),))
                if probe is not None and (probe.is_floating_point or probe.is_complex):
                    common = types.promote_types(common, types.float32)  # Heat's local ops
            out_dtype = _torch_out(torch_fn, _signature(operands, common))
            if out_dtype is None:
                raise TypeError(
                    f"`{name}` does not support operands of "
                    + ", ".join(_describe(v) for v in operands)
                    + " (torch's rule, which Heat follows)"
                )
            operands = _cast_operands(operands, np.dtype(common.dtype))
            want = np.dtype(types.canonical_heat_type(out_dtype).dtype)
        fn = core_fn
        if torch_kernel and want is not None and not args[arity:] and not kwargs:
            fn = _torch_chunks(torch_fn, want, name)
        if where is not True:
            return face(_masked(fn, operands, args[arity:], kwargs, out, where, want, name))
        if dtype is not None:  # Heat's `dtype=` (abs, round, ...): the result's type
            want = np.dtype(types.canonical_heat_type(_dtype_arg(dtype)).dtype)
        result = fn(*operands, *args[arity:], **kwargs)
        if want is not None and np.dtype(result.to_dask().dtype) != want:
            result = result.astype(want)
        if out is None:
            return face(result)
        if arity == 1:
            return face(_ops.into(out, _broadcast_into(result, out), name))
        return face(into(out, result, name))  # in place too (``x.add_(y)``, ``x += y``)

    adapter.__name__ = adapter.__qualname__ = name
    return adapter


def _torch_chunks(torch_name: str, dtype: np.dtype, name: str) -> Callable:
    """The core's elementwise function of one operand with torch computing every chunk."""
    kernel = _ops.TorchKernel(torch_name, dtype)

    def function(x):
        return _ops.elementwise(kernel, x, name=name)

    return function


def _broadcast_into(result, out):
    """Heat's unary ``out=``: a larger buffer gets the result repeated to its shape.

    Heat's local operations write ``x`` broadcast to ``out``'s shape (its split is not
    checked); a shape that does not broadcast is left to the core's check.
    """
    if not isinstance(out, _dndarray.DNDarray) or out.shape == result.shape:
        return result
    try:
        target = np.broadcast_shapes(result.shape, out.shape)
    except ValueError:
        return result
    if tuple(target) != out.shape:
        return result
    return _manipulation.broadcast_to(result, out.shape)


def _signature(operands, common) -> tuple:
    """Probes for torch: every operand as a tensor of the common type, as Heat calls torch."""
    return ((common.torch_type(),),) * len(operands)


def _describe(value) -> str:
    if isinstance(value, _dndarray.DNDarray):
        return str(np.dtype(value.to_dask().dtype))
    return type(_py(value)).__name__


def _masked(core_fn, operands, rest, kwargs, out, where, want, name):
    """Heat's ``where=``: the result where ``where`` holds, ``out`` (or zeros) elsewhere."""
    if not isinstance(where, _dndarray.DNDarray):
        raise TypeError(
            f"`where` of `{name}` must be a DNDarray of bools, got {type(where).__name__}"
        )
    result = core_fn(*operands, *rest, **kwargs)
    if (
        where.split is not None
        and result.split is not None
        and where.split != result.split  # Heat compares the split numbers as they are
    ):
        raise NotImplementedError(
            f"`where` of `{name}` split along another axis than the result "
            f"(split {where.split} and {result.split}) is not implemented (as in Heat)"
        )
    if want is not None and np.dtype(result.to_dask().dtype) != want:
        result = result.astype(want)
    base = out if out is not None else _factories.zeros_like(result)
    return _ops.into(out, _elementwise.where(where, result, base), name)


def _cast_operands(operands, want: np.dtype) -> list:
    """Array operands cast to the common type (lazily; no cast where it already holds)."""
    return [
        v.astype(want)
        if isinstance(v, _dndarray.DNDarray) and np.dtype(v.to_dask().dtype) != want
        else v
        for v in operands
    ]
