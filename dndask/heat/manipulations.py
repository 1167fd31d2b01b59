"""Heat's ``heat.core.manipulations`` on the face: the functions whose Heat semantics differ.

Joins and splits with Heat's split rules and warnings, ``repeat``/``tile`` of scalars
and lists, ``diag``/``diagonal``/``flip``/``reshape`` with Heat's arguments, ``pad``,
``sort``, ``topk`` and ``unique`` (:mod:`._manip`). ``trace`` (Heat's
``linalg.basics``) lives here so that :mod:`.linalg` holds only the core's linalg names.
The face's other names resolve through the face's namespace.
"""

from __future__ import annotations

import builtins as _builtins
import numbers as _numbers

import numpy as _np

import dndask as _core

from .. import _dndarray, _ops, _torch
from . import _adapt, _base, _extras, _manip, _namespace, types
from ._array import DNDarray
from .factories import as_array

__all__ = [
    "broadcast_arrays",
    "column_stack",
    "concatenate",
    "diag",
    "diagonal",
    "dsplit",
    "flip",
    "hsplit",
    "hstack",
    "pad",
    "repeat",
    "reshape",
    "row_stack",
    "sort",
    "split",
    "stack",
    "tile",
    "topk",
    "trace",
    "unique",
    "vsplit",
    "vstack",
]

concatenate = _manip.joined(_core.concatenate, "concatenate")
stack = _manip.joined(_core.stack, "stack")
vstack = _manip.joined(_core.vstack, "vstack")
hstack = _manip.joined(_core.hstack, "hstack")
column_stack = _manip.joined(_core.column_stack, "column_stack")
row_stack = _manip.joined(_core.row_stack, "row_stack")
broadcast_arrays = _manip.broadcast_arrays
pad = _manip.pad
sort = _manip.sort
topk = _manip.topk
unique = _manip.unique

# Heat's split: its axis check, then a warning for distributed indices
split = _extras.gathered_indices(_manip.split_axis_checked(_base.BASE["split"]), "split")
hsplit = _extras.gathered_indices(_base.BASE["hsplit"], "hsplit")
vsplit = _extras.gathered_indices(_base.BASE["vsplit"], "vsplit")
dsplit = _extras.gathered_indices(_base.BASE["dsplit"], "dsplit")


def repeat(a, repeats, axis=None) -> DNDarray:
    """Heat's ``repeat``: a scalar or list ``a`` is made an array first, a negative ``axis`` is
    a ValueError, and the call warns where Heat copies ``a`` or ``repeats`` to another split
    (:func:`._manip.repeat_warnings`).

    >>> import warnings, dndask.heat as ht
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     ht.repeat(ht.arange(3, split=0), [1, 0, 2]).tolist(), len(caught)
    ([0, 2, 2], 1)
    """
    a = as_array(a, "repeat")
    if isinstance(axis, _numbers.Integral) and not isinstance(axis, _builtins.bool) and axis < 0:
        raise ValueError(f"`axis` of `repeat` must be in [0, {a.ndim}) (as in Heat), got {axis}")
    out = _adapt.face(_core.repeat(a, repeats, axis))
    _manip.repeat_warnings(a, repeats, axis)
    return out


def tile(x, reps) -> DNDarray:
    """Heat's ``tile``: a scalar or list ``x`` becomes an array; ``reps`` may be a DNDarray."""
    if isinstance(reps, _dndarray.DNDarray):
        reps = tuple(_builtins.int(v) for v in reps.numpy().reshape(-1).tolist())
    return _adapt.face(_core.tile(as_array(x, "tile"), reps))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Heat's ``trace``: a Python scalar for 2-D input, lists accepted; see :func:`dndask.trace`.

    >>> import dndask.heat as ht
    >>> ht.trace([[1, 2], [3, 4]])
    5
    """
    if not isinstance(a, _dndarray.DNDarray):
        a = as_array(a, "trace")
    if dtype is not None:
        try:
            dtype = types.canonical_heat_type(_adapt._dtype_arg(dtype))
        except TypeError:
            raise ValueError(f"`dtype` of `trace` must be a type, got {dtype!r}") from None
    if out is not None and not isinstance(out, _dndarray.DNDarray):
        raise TypeError(f"`out` of `trace` must be a DNDarray, got {type(out).__name__}")
    result = _core.trace(a, offset, axis1, axis2, dtype=dtype)
    if out is not None:
        return _adapt.face(_ops.into(out, result, "trace"))
    if result.ndim == 0:
        return result.item()
    return _adapt.face(result)


def _check_offset(offset, name: str) -> None:
    if isinstance(offset, _builtins.bool) or not isinstance(offset, _numbers.Integral):
        raise ValueError(f"`offset` of `{name}` must be an int, got {type(offset).__name__}")


def diagonal(a, offset=0, dim1=0, dim2=1):
    """Heat's ``diagonal`` (``dim1``/``dim2`` for numpy's ``axis1``/``axis2``).

    ``offset`` must be an int: anything else is a ``ValueError``, as in Heat.
    """
    if not isinstance(a, _dndarray.DNDarray):
        raise ValueError(f"`a` of `diagonal` must be a DNDarray, got {type(a).__name__}")
    _check_offset(offset, "diagonal")
    return _adapt.face(_core.diagonal(a, offset, dim1, dim2))


def diag(a, offset=0):
    """Heat's ``diag``: for input of more than two dimensions, its :func:`diagonal`.

    A non-int ``offset`` and a 0-d ``a`` are ``ValueError``s, as in Heat.
    """
    if not isinstance(a, _dndarray.DNDarray):
        raise TypeError(f"`a` of `diag` must be a DNDarray, got {type(a).__name__}")
    _check_offset(offset, "diag")
    if a.ndim == 0:
        raise ValueError("`a` of `diag` must have at least one dimension, got a 0-d array")
    if a.ndim > 2:
        return diagonal(a, offset)
    return _adapt.face(_core.diag(a, offset))


def _shape_like(value):
    """A DNDarray, array or tensor used as a shape or a list of axes (Heat) as a tuple of ints."""
    if isinstance(value, _dndarray.DNDarray):
        value = value.numpy()
    if isinstance(value, _np.ndarray) or _torch.is_tensor(value):
        if (
            value.dtype.is_floating_point
            if _torch.is_tensor(value)
            else (value.dtype.kind not in "iu")
        ):
            raise TypeError(f"a shape must hold ints, got {value.dtype}")
        return tuple(_builtins.int(v) for v in value.reshape(-1).tolist())
    if isinstance(value, list):
        return tuple(value)
    return value


def flip(a, axis=None):
    """Heat's ``flip``: ``axis`` may be a list."""
    return _adapt.face(_core.flip(a, _shape_like(axis)))


def reshape(a, *shape, new_split=None, dtype=None, **kwargs):
    """Heat's ``reshape``: the shape may be a DNDarray, an array or a list.

    ``dtype=`` (which Heat's method accepts and ignores) casts the result.
    """
    if len(shape) == 1:
        shape = (_shape_like(shape[0]),)
    if "shape" in kwargs:
        shape = (_shape_like(kwargs.pop("shape")),)
    if kwargs:
        raise TypeError(f"`reshape` got unexpected keywords {sorted(kwargs)}")
    result = _core.reshape(a, *shape, new_split=new_split)
    if dtype is not None:
        result = result.astype(_adapt._dtype_arg(dtype))
    return _adapt.face(result)


def __getattr__(name: str) -> object:
    return _namespace.resolve(__name__, name)
