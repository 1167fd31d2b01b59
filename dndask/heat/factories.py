"""Heat's ``heat.core.factories`` on the face: the factories whose Heat semantics differ.

Heat's keyword order and defaults (``ndmin``, ``order``, ``device``), ``arange``'s int32,
the ``*_like`` factories of scalars and sequences, ``full``'s complex fill value and
``meshgrid``'s split. The face's other names resolve through the face's namespace
(``ht.factories.<name>`` is ``ht.<name>``).
"""

from __future__ import annotations

import builtins as _builtins
import numbers as _numbers

import numpy as _np

import dndask as _core

from .. import _dndarray, _torch
from . import _adapt, _extras, _local, _namespace, types
from ._array import DNDarray

__all__ = [
    "arange",
    "array",
    "asarray",
    "empty",
    "empty_like",
    "eye",
    "full",
    "full_like",
    "linspace",
    "meshgrid",
    "ones",
    "ones_like",
    "zeros",
    "zeros_like",
]


def check_order(order) -> None:
    """Heat's ``order=``: ``"C"`` or ``"F"`` (a chunk's memory layout is the worker's)."""
    if order not in ("C", "F"):
        raise ValueError(f"`order` must be 'C' or 'F', got {order!r}")


def array(
    obj,
    dtype=None,
    copy=None,
    ndmin: _builtins.int = 0,
    order: str = "C",
    split=None,
    is_split=None,
    device=None,
    comm=None,
) -> DNDarray:
    """Heat's ``ht.array`` (its keyword order, ``ndmin``, ``device``); see :func:`dndask.array`.

    ``order="F"`` is accepted and changes nothing: a chunk's memory layout is the worker's.

    >>> import dndask.heat as ht
    >>> ht.array([1, 2], ndmin=3).shape, ht.array([1, 2], ndmin=-3).shape
    ((2, 1, 1), (1, 1, 2))
    """
    device = _adapt.check_device(device)
    check_order(order)
    if isinstance(ndmin, _builtins.bool) or not isinstance(ndmin, _numbers.Integral):
        raise TypeError(f"`ndmin` must be an int, got {type(ndmin).__name__}")
    if is_split is not None:
        obj = _extras.spmd_pieces(obj, is_split, comm)
    out = _core.array(
        obj,
        dtype=_adapt._dtype_arg(dtype),
        split=split,
        is_split=is_split,
        copy=copy,
        comm=comm,
        device=device,
    )
    # Heat's ndmin: a positive one appends axes of length 1, a negative one prepends them
    while out.ndim < _builtins.abs(ndmin):
        out = out.expand_dims(-1 if ndmin > 0 else 0)
    out = _adapt.face(out, start=False)
    if copy is not True and out.split is None and _torch.is_tensor(obj):
        _local.adopt(out, obj)  # Heat: the tensor itself is the local data
    return _adapt.face(out)


def asarray(obj, dtype=None, copy=None, order: str = "C", is_split=None, device=None):
    """Heat's ``asarray``: :func:`array` without a copy where none is needed.

    A DNDarray of the right type comes back as a face array sharing its state (a
    core array is not started by it: it stays as lazy as it was).

    >>> import dndask as dd, dndask.heat as ht
    >>> core = dd.arange(3, split=0)
    >>> face = ht.asarray(core)
    >>> face.add_(1).tolist(), core.numpy().tolist()
    ([1, 2, 3], [1, 2, 3])
    """
    if isinstance(obj, _dndarray.DNDarray) and is_split is None and copy is not True:
        target = _adapt.check_device(device)
        check_order(order)
        same_device = target is None or obj.device == target
        if same_device and (
            dtype is None or types.canonical_heat_type(_adapt._dtype_arg(dtype)) == obj.dtype
        ):
            return _adapt.face(obj, start=False)
    return array(obj, dtype=dtype, copy=copy, order=order, is_split=is_split, device=device)


def as_array(a, name: str):
    """Heat's scalar/list inputs of the *_like factories and of repeat/tile."""
    if isinstance(a, _dndarray.DNDarray):
        return a
    if isinstance(a, (_numbers.Number, _np.generic, list, tuple, _np.ndarray)) or _torch.is_tensor(
        a
    ):
        return array(a)
    raise TypeError(f"`a` of `{name}` must be array-like, got {type(a).__name__}")


def _like_of(a, name: str) -> tuple:
    """Heat's shape and type of a non-array ``a``: its ``shape``, else ``(len(a),)``, else ``(1,)``.

    The type is ``a.dtype``, the type of ``a``, of ``a[0]``, else float32 (Heat's
    ``__factory_like``); ``ht.zeros_like("abc")`` has shape ``(3,)``.
    """
    kinds = (_numbers.Number, _np.generic, str, list, tuple, _np.ndarray)
    if not isinstance(a, kinds) and not _torch.is_tensor(a):
        raise TypeError(f"`a` of `{name}` must be array-like, got {type(a).__name__}")
    if hasattr(a, "shape"):
        shape = tuple(a.shape)
    else:
        shape = (len(a),) if isinstance(a, (str, list, tuple)) else (1,)
    for probe in (lambda: a.dtype, lambda: type(a), lambda: type(a[0])):
        try:
            return shape, types.canonical_heat_type(probe())
        except (AttributeError, TypeError, IndexError):
            continue
    return shape, types.float32


def _like(name: str, default_dtype=None):
    core_fn, factory = getattr(_core, name), getattr(_core, name[: -len("_like")])

    def like(a, *args, dtype=default_dtype, split=None, device=None, comm=None, order="C"):
        device = _adapt.check_device(device)
        check_order(order)
        dtype = _adapt._dtype_arg(dtype)
        if not isinstance(a, _dndarray.DNDarray):
            shape, own = _like_of(a, name)
            dtype = own if dtype is None else dtype
            out = factory(shape, *args, dtype=dtype, split=split, comm=comm, device=device)
            return _adapt.face(out)
        split = "same" if split is None else split
        return _adapt.face(core_fn(a, *args, dtype=dtype, split=split, comm=comm, device=device))

    like.__name__ = like.__qualname__ = name
    like.__doc__ = (
        f"Heat's ``{name}``: scalars, strings and sequences accepted (shape ``(len(a),)``, "
        f"as Heat's); see :func:`dndask.{name}`."
    )
    return like


zeros_like = _like("zeros_like")
ones_like = _like("ones_like")
empty_like = _like("empty_like")
full_like = _like("full_like", types.float32)  # Heat's full_like is float32 unless told


def _factory(name: str):
    core_fn = getattr(_core, name)

    def factory(*args, device=None, order="C", **kwargs):
        device = _adapt.check_device(device)
        check_order(order)
        if "dtype" in kwargs:
            kwargs["dtype"] = _adapt._dtype_arg(kwargs["dtype"])
        return _adapt.face(core_fn(*args, device=device, **kwargs))

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = (
        f"Heat's ``{name}`` (``device=``, ``order=`` accepted); see :func:`dndask.{name}`."
    )
    return factory


zeros = _factory("zeros")
ones = _factory("ones")
empty = _factory("empty")
linspace = _factory("linspace")
eye = _factory("eye")
_full = _factory("full")


def full(*args, **kwargs) -> DNDarray:
    """Heat's ``full`` (``device=``, ``order=`` accepted); see :func:`dndask.full`.

    A complex ``fill_value`` gives complex64 (Heat's rule).

    >>> import dndask.heat as ht
    >>> ht.full((2,), 1j).dtype is ht.complex64
    True
    """
    fill = args[1] if len(args) > 1 else kwargs.get("fill_value")
    if isinstance(fill, _builtins.complex):  # Heat: a complex fill value makes complex64
        if len(args) > 2:
            args = (*args[:2], types.complex64, *args[3:])
        else:
            kwargs["dtype"] = types.complex64
    return _full(*args, **kwargs)


def arange(*args, dtype=None, split=None, device=None, comm=None) -> DNDarray:
    """Heat's ``arange``: int32 when every argument is an int (the core's default is int64).

    >>> import dndask.heat as ht
    >>> ht.arange(3).dtype is ht.int32, ht.arange(0.0, 1.0, 0.5).dtype is ht.float32
    (True, True)
    """
    device = _adapt.check_device(device)
    if dtype is None:
        ints = _builtins.all(isinstance(v, _numbers.Integral) for v in args)
        dtype = types.int32 if ints else types.float32
    dtype = _adapt._dtype_arg(dtype)
    return _adapt.face(_core.arange(*args, dtype=dtype, split=split, comm=comm, device=device))


def _build(value, heat_type, device, comm) -> DNDarray:
    """``ht.float32(value)``: a DNDarray of that type (a cast copy of a DNDarray)."""
    if isinstance(value, _dndarray.DNDarray):
        device = _adapt.check_device(device)
        out = value.astype(heat_type)
        return _adapt.face(out if device is None else out._on_device(device))
    return array(value, dtype=heat_type, device=device, comm=comm)


types._BUILD["array"] = _build


def meshgrid(*arrays, indexing="xy"):
    """Heat's ``meshgrid``: 0-d inputs count as one element (torch's rule), and every grid
    is split along the axis of the one distributed input.

    >>> import dndask.heat as ht
    >>> [g.shape for g in ht.meshgrid(ht.array(1), ht.arange(3))]
    [(3, 1), (3, 1)]
    """
    if len(arrays) == 1 and isinstance(arrays[0], (list, tuple)):
        arrays = tuple(arrays[0])
    arrays = tuple(
        a.reshape((1,)) if isinstance(a, _dndarray.DNDarray) and a.ndim == 0 else a for a in arrays
    )
    split_inputs = [
        i for i, a in enumerate(arrays) if isinstance(a, _dndarray.DNDarray) and a.split is not None
    ]
    if len(split_inputs) > 1:
        raise ValueError("only one array of `meshgrid` may be distributed (as in Heat)")
    grids = _core.meshgrid(*arrays, indexing=indexing)
    if split_inputs:  # Heat: every grid is split along the distributed input's axis
        axis = split_inputs[0]
        if indexing == "xy" and len(arrays) > 1 and axis < 2:
            axis = 1 - axis
        grids = [g if g.split == axis else g.resplit(axis) for g in grids]
    return _adapt.face(grids)


def __getattr__(name: str) -> object:
    return _namespace.resolve(__name__, name)
