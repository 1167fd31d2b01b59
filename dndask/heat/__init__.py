"""Heat code, unchanged: ``import dndask.heat as ht``.

A face of adapters over the same DNDarray and graph code as :mod:`dndask`. Where
Heat 1.8 and numpy differ, it gives Heat's semantics:

- :func:`equal` returns one bool (``torch.equal``), ``eq`` is elementwise;
- the types (``ht.float32``, ``ht.int``, ...) are classes that build arrays when
  called, compare equal to numpy dtypes and form Heat's hierarchy (:mod:`.types`);
- dtypes promote as torch's (``int32 + float32 -> float32``, ``exp(int32) -> float32``);
- ``ht.random`` takes Heat's state tuples;
- arrays are :class:`DNDarray` (a subclass of the core's) with Heat's in-place
  methods (``add_``, ``pow_``, ...), aliases, and ``dtype`` a Heat type;
- ``device=`` ("cpu", "gpu", a Device) is forwarded to the core's factories (``ht.use_device``
  sets the default), and scalars are accepted where Heat takes them (``zeros_like(3)``).

Everything else is the core's function, re-exported with face arrays as results.

>>> import dndask.heat as ht
>>> x = ht.int32([1, 2, 3])
>>> y = ht.exp(x)
>>> y.dtype is ht.float32, ht.equal(x, x)
(True, True)
"""

from __future__ import annotations

import builtins as _builtins
import math as _math
import numbers as _numbers
import sys as _sys
import types as _pytypes

import numpy as _np

import dndask as _core

from .. import _dndarray, _ops, _torch, _ufuncs_extra
from . import (  # noqa: F401  (ht.linalg, ht.random)
    _adapt,
    _extras,
    _local,
    _manip,
    _optable,
    _printing,
    _signal,
    _stats,
    decomposition,
    fft,
    linalg,
    random,
    types,
)
from ._array import DNDarray, install_methods
from ._optable import rows
from .types import (  # noqa: F401  (re-exported below through __all__)
    bool,
    bool_,
    byte,
    can_cast,
    canonical_heat_type,
    cdouble,
    cfloat,
    complex,
    complex64,
    complex128,
    csingle,
    datatype,
    double,
    finfo,
    flexible,
    float,
    float16,
    float32,
    float64,
    float_,
    floating,
    half,
    heat_type_of,
    iinfo,
    int,
    int8,
    int16,
    int32,
    int64,
    int_,
    integer,
    issubdtype,
    long,
    number,
    promote_types,
    result_type,
    short,
    signedinteger,
    ubyte,
    uint8,
    unsignedinteger,
)

inf = _math.inf
nan = _math.nan
pi = _math.pi
e = _math.e
Inf = Infinity = infty = PINF = inf
NaN = NAN = nan
NINF = -inf

_KEEP = {
    "Comm",
    "Device",
    "PerRank",
    "cpu",
    "gpu",
    "use_device",
    "get_device",
    "init",
    "shutdown",
    "current_client",
    "get_comm",
    "use_comm",
    "per_rank",
    "from_xarray",
    "allclose",
    "array_api",
}
_TYPE_NAMES = set(types.__all__)
_LAZY = {"LshapeMap"}  # made on first access (imports torch): the module's __getattr__
_OWN = {
    "DNDarray",
    "decomposition",
    "fft",
    "linalg",
    "random",
    "types",
    "equal",
    "array",
    "asarray",
}

_funcs: dict = {}

# 1. every core function, its results as face arrays
for _name in _core.__all__:
    if _name in _OWN or _name in _TYPE_NAMES or _name in _LAZY:
        continue
    _obj = getattr(_core, _name)
    if _name in _KEEP or isinstance(_obj, (_pytypes.ModuleType, type)):
        _funcs[_name] = _obj
    elif callable(_obj):
        _funcs[_name] = _adapt.wrap(_obj)

# 2. the elementwise functions, from the operation table: Heat's names, Heat's dtype rule
_EXTRA = {name: getattr(_ufuncs_extra, name) for name in _ufuncs_extra.__all__}
_ROWS = [row for row in rows() if row[0] != "equal"] + [
    ("equal", 2, _optable.TORCH["equal"], ("eq",), (), False)  # `equal` is one bool in Heat
]
for _core_name, _arity, _torch_fn, _names, _inplace, _kernel in _ROWS:
    _fn = getattr(_core, _core_name, None) or _EXTRA[_core_name]
    for _name in _names:
        _funcs[_name] = _adapt.promoted(_fn, _torch_fn, _name, _arity, torch_kernel=_kernel)


def equal(x, y) -> _builtins.bool:
    """Whether ``x`` and ``y`` are equal as one bool (Heat's rule, after ``torch.equal``).

    A one-element array counts as its element: it equals a scalar or another
    one-element array of the same value; an array of more elements never equals a
    scalar. Two arrays must have the same shape and equal elements. Arrays on
    different comms are a ``NotImplementedError`` and different splits (both set)
    a ``ValueError``, as in Heat.

    >>> import dndask.heat as ht
    >>> ht.equal(ht.arange(3), ht.arange(3)), ht.equal(ht.arange(3), ht.arange(4))
    (True, False)
    >>> ht.equal(ht.array([2.0]), 2), ht.equal(ht.ones(2), 1.0)
    (True, False)
    """
    for v, what in ((x, "x"), (y, "y")):
        if not isinstance(v, (_dndarray.DNDarray, _numbers.Number, _np.generic)):
            raise TypeError(
                f"`{what}` of `equal` must be a DNDarray or a scalar, got {type(v).__name__}"
            )
    x_arr, y_arr = isinstance(x, _dndarray.DNDarray), isinstance(y, _dndarray.DNDarray)
    if x_arr and x.size == 1:
        return equal(x.item(), y)
    if y_arr and y.size == 1:
        return equal(x, y.item())
    if not (x_arr and y_arr):
        return x_arr == y_arr and _builtins.bool(x == y)  # two scalars, or never equal
    if x.comm != y.comm:
        raise NotImplementedError("`equal` of arrays on different comms is not implemented")
    if x.shape != y.shape:
        return False
    if x.split is not None and y.split is not None and x.split != y.split:
        raise ValueError(f"`equal` needs arrays of the same split, got {x.split} and {y.split}")
    return _builtins.bool(_core.all(_core.equal(x, y)))


def _check_order(order) -> None:
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
    _check_order(order)
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
    out = _adapt.face(out)
    if copy is not True and out.split is None and _torch.is_tensor(obj):
        _local.adopt(out, obj)  # Heat: the tensor itself is the local data
    return out


def asarray(obj, dtype=None, copy=None, order: str = "C", is_split=None, device=None):
    """Heat's ``asarray``: :func:`array` without a copy where none is needed.

    A DNDarray of the right type comes back as a face array sharing its state.

    >>> import dndask as dd, dndask.heat as ht
    >>> core = dd.arange(3, split=0)
    >>> face = ht.asarray(core)
    >>> face.add_(1).tolist(), core.numpy().tolist()
    ([1, 2, 3], [1, 2, 3])
    """
    if isinstance(obj, _dndarray.DNDarray) and is_split is None and copy is not True:
        target = _adapt.check_device(device)
        _check_order(order)
        same_device = target is None or obj.device == target
        if same_device and (
            dtype is None or types.canonical_heat_type(_adapt._dtype_arg(dtype)) == obj.dtype
        ):
            return _adapt.face(obj)
    return array(obj, dtype=dtype, copy=copy, order=order, is_split=is_split, device=device)


def _as_array(a, name: str):
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


def _like(core_fn, factory, name, default_dtype=None):
    def like(a, *args, dtype=default_dtype, split=None, device=None, comm=None, order="C"):
        device = _adapt.check_device(device)
        _check_order(order)
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


for _name, _default in (
    ("zeros_like", None),
    ("ones_like", None),
    ("empty_like", None),
    ("full_like", types.float32),  # Heat's full_like is float32 unless told
):
    _funcs[_name] = _like(getattr(_core, _name), getattr(_core, _name[:-5]), _name, _default)


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
    a = _as_array(a, "repeat")
    if isinstance(axis, _numbers.Integral) and not isinstance(axis, _builtins.bool) and axis < 0:
        raise ValueError(f"`axis` of `repeat` must be in [0, {a.ndim}) (as in Heat), got {axis}")
    out = _adapt.face(_core.repeat(a, repeats, axis))
    _manip.repeat_warnings(a, repeats, axis)
    return out


def tile(x, reps) -> DNDarray:
    """Heat's ``tile``: a scalar or list ``x`` becomes an array; ``reps`` may be a DNDarray."""
    if isinstance(reps, _dndarray.DNDarray):
        reps = tuple(_builtins.int(v) for v in reps.numpy().reshape(-1).tolist())
    return _adapt.face(_core.tile(_as_array(x, "tile"), reps))


_funcs["repeat"], _funcs["tile"] = repeat, tile


def _factory(core_fn, name):
    def factory(*args, device=None, order="C", **kwargs):
        device = _adapt.check_device(device)
        _check_order(order)
        if "dtype" in kwargs:
            kwargs["dtype"] = _adapt._dtype_arg(kwargs["dtype"])
        return _adapt.face(core_fn(*args, device=device, **kwargs))

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = (
        f"Heat's ``{name}`` (``device=``, ``order=`` accepted); see :func:`dndask.{name}`."
    )
    return factory


for _name in ("zeros", "ones", "empty", "full", "linspace", "eye"):
    _funcs[_name] = _factory(getattr(_core, _name), _name)


def _complex_full(factory):
    def full(*args, **kwargs):
        fill = args[1] if len(args) > 1 else kwargs.get("fill_value")
        if isinstance(fill, _builtins.complex):  # Heat: a complex fill value makes complex64
            if len(args) > 2:
                args = (*args[:2], types.complex64, *args[3:])
            else:
                kwargs["dtype"] = types.complex64
        return factory(*args, **kwargs)

    full.__name__ = full.__qualname__ = "full"
    full.__doc__ = factory.__doc__ + " A complex ``fill_value`` gives complex64 (Heat's rule)."
    return full


_funcs["full"] = _complex_full(_funcs["full"])


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


_funcs["arange"] = arange


def _build(value, heat_type, device, comm) -> DNDarray:
    """``ht.float32(value)``: a DNDarray of that type (a cast copy of a DNDarray)."""
    if isinstance(value, _dndarray.DNDarray):
        device = _adapt.check_device(device)
        out = value.astype(heat_type)
        return _adapt.face(out if device is None else out._on_device(device))
    return array(value, dtype=heat_type, device=device, comm=comm)


types._BUILD["array"] = _build


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Heat's ``trace``: a Python scalar for 2-D input, lists accepted; see :func:`dndask.trace`.

    >>> import dndask.heat as ht
    >>> ht.trace([[1, 2], [3, 4]])
    5
    """
    if not isinstance(a, _dndarray.DNDarray):
        a = _as_array(a, "trace")
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


_funcs["trace"] = trace


def divmod(x1, x2, out1=None, out2=None, /, out=(None, None), *, where=True):
    """Heat's ``divmod``: ``(floor_divide(x1, x2), remainder(x1, x2))``, torch's promotion.

    >>> import dndask.heat as ht
    >>> q, r = ht.divmod(ht.array([7, -7]), 3)
    >>> q.tolist(), r.tolist()
    ([2, -3], [1, 2])
    """
    if not isinstance(out, tuple):
        raise TypeError(f"`out` of `divmod` must be a tuple of two, got {type(out).__name__}")
    if len(out) != 2:
        raise ValueError(f"`out` of `divmod` must be a tuple of two, got {len(out)} items")
    for i, (given, item) in enumerate(((out1, out[0]), (out2, out[1]))):
        if given is not None and item is not None:
            raise TypeError(f"`out[{i}]` and `out{i + 1}` of `divmod` cannot both be given")
    out1 = out[0] if out1 is None else out1
    out2 = out[1] if out2 is None else out2
    return (
        _funcs["floor_divide"](x1, x2, out=out1, where=where),
        _funcs["remainder"](x1, x2, out=out2, where=where),
    )


def _cumulative(core_fn, name):
    def cumulative(a, axis, dtype=None, out=None):
        if axis is None:
            raise NotImplementedError(f"`{name}` along `axis=None` is not supported (as in Heat)")
        if isinstance(axis, tuple):  # Heat: a tuple is an invalid axis, not a type error
            raise ValueError(f"`axis` of `{name}` must be one axis, got {axis!r}")
        if isinstance(axis, _builtins.bool) or not isinstance(axis, _numbers.Integral):
            raise TypeError(f"`axis` of `{name}` must be an int, got {type(axis).__name__}")
        result = core_fn(a, axis, dtype=_adapt._dtype_arg(dtype))
        if out is None:
            return _adapt.face(result)
        return _adapt.face(_adapt.into(out, result, name))

    cumulative.__name__ = cumulative.__qualname__ = name
    cumulative.__doc__ = f"Heat's ``{name}``: ``axis`` is required; see :func:`dndask.{name}`."
    return cumulative


def broadcast_shape(shape_a, shape_b) -> tuple:
    """Heat's ``broadcast_shape`` of two shapes (ValueError if they do not broadcast).

    >>> import dndask.heat as ht
    >>> ht.broadcast_shape((5, 1, 3), (4, 1))
    (5, 4, 3)
    """
    try:
        return tuple(_builtins.int(n) for n in _np.broadcast_shapes(tuple(shape_a), tuple(shape_b)))
    except ValueError:
        raise ValueError(f"shapes {shape_a} and {shape_b} cannot be broadcast together") from None


for _name in ("concatenate", "stack", "vstack", "hstack", "column_stack", "row_stack"):
    _funcs[_name] = _manip.joined(getattr(_core, _name), _name)
_funcs["broadcast_arrays"] = _manip.broadcast_arrays
_funcs["pad"] = _manip.pad
_funcs["sort"] = _manip.sort
_funcs["topk"] = _manip.topk
_funcs["unique"] = _manip.unique
_funcs["nonzero"] = _manip.nonzero
_funcs["where"] = _manip.where
_funcs["diff"] = _manip.diff
_funcs["any"] = _manip.axis_reduction_1d(_core.any, "any")
_funcs["convolve"] = _signal.convolve
for _name in _printing.__all__:
    if _name not in ("is_local", "local_text"):
        _funcs[_name] = getattr(_printing, _name)
_funcs["all"] = _manip.axis_reduction_1d(_core.all, "all")


def diagonal(a, offset=0, dim1=0, dim2=1):
    """Heat's ``diagonal`` (``dim1``/``dim2`` for numpy's ``axis1``/``axis2``).

    ``offset`` must be an int: anything else is a ``ValueError``, as in Heat.
    """
    if not isinstance(a, _dndarray.DNDarray):
        raise ValueError(f"`a` of `diagonal` must be a DNDarray, got {type(a).__name__}")
    _check_offset(offset, "diagonal")
    return _adapt.face(_core.diagonal(a, offset, dim1, dim2))


def _check_offset(offset, name: str) -> None:
    if isinstance(offset, _builtins.bool) or not isinstance(offset, _numbers.Integral):
        raise ValueError(f"`offset` of `{name}` must be an int, got {type(offset).__name__}")


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


_funcs["diag"] = diag


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


_funcs["meshgrid"] = meshgrid


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


_funcs["diagonal"], _funcs["flip"], _funcs["reshape"] = diagonal, flip, reshape


def _closeness(core_fn, name):
    def close(x, y, rtol=1e-05, atol=1e-08, equal_nan=False):
        operands = []
        for v, what in ((x, "x"), (y, "y")):
            if not isinstance(v, _dndarray.DNDarray) and (
                not _adapt._is_scalar(v) or isinstance(v, _builtins.bool)
            ):
                raise TypeError(
                    f"`{what}` of `{name}` must be a DNDarray or a numeric scalar, "
                    f"got {type(v).__name__}"
                )
            operands.append(v)
        if not _builtins.any(isinstance(v, _dndarray.DNDarray) for v in operands):
            operands[0] = array(operands[0])  # two scalars: one bool (Heat)
            return _builtins.bool(core_fn(*operands, rtol=rtol, atol=atol, equal_nan=equal_nan))
        return _adapt.face(core_fn(*operands, rtol=rtol, atol=atol, equal_nan=equal_nan))

    close.__name__ = close.__qualname__ = name
    close.__doc__ = (
        f"Heat's ``{name}``: DNDarrays and numeric scalars (two scalars give a bool); "
        f"see ``dndask.{name}``."
    )
    return close


def _comparison(elementwise, name: str, mismatch: _builtins.bool):
    def compare(x, y, out=None):
        try:
            return elementwise(x, y, out=out)
        except (TypeError, ValueError):
            # Heat answers a comparison it cannot do elementwise (shapes that do not
            # broadcast, a non-numeric operand) with one bool
            if out is not None:
                raise
            return mismatch

    compare.__name__ = compare.__qualname__ = name
    compare.__doc__ = (
        f"Heat's ``{name}``: elementwise, or ``{mismatch}`` for operands that cannot be compared."
    )
    return compare


_funcs["eq"] = _comparison(_funcs["eq"], "eq", False)
_funcs["ne"] = _comparison(_funcs["ne"], "ne", True)


def modf(x, out=None):
    """Heat's ``modf``: ``(fractional, integral)``, into the pair ``out`` if given."""
    if not isinstance(x, _dndarray.DNDarray):
        raise TypeError(f"`x` of `modf` must be a DNDarray, got {type(x).__name__}")
    frac, whole = _ufuncs_extra.modf(x)
    if out is None:
        return _adapt.face(frac), _adapt.face(whole)
    if not isinstance(out, tuple):
        raise TypeError(f"`out` of `modf` must be a tuple of two, got {type(out).__name__}")
    if len(out) != 2:
        raise ValueError(f"`out` of `modf` must be a tuple of two, got {len(out)} items")
    _adapt.check_out(out[0], frac, "modf")  # both checked before either is written
    _adapt.check_out(out[1], whole, "modf")
    _adapt.into(out[0], frac, "modf")
    _adapt.into(out[1], whole, "modf")
    return out


def round(x, decimals=0, out=None, dtype=None):
    """Heat's ``round``: ``dtype=`` casts the result; see :func:`dndask.round`."""
    if dtype is not None and not (isinstance(dtype, type) and issubclass(dtype, types.datatype)):
        raise TypeError(f"`dtype` of `round` must be a Heat type, got {dtype!r}")
    if out is not None and not isinstance(out, _dndarray.DNDarray):
        raise TypeError(f"`out` of `round` must be a DNDarray, got {type(out).__name__}")
    result = _core.round(x, decimals)
    if dtype is not None:
        result = result.astype(dtype)
    if out is not None:
        return _adapt.face(_adapt.into(out, result, "round"))
    return _adapt.face(result)


_funcs["modf"], _funcs["round"] = modf, round
_funcs["sign"] = _extras.heat_sign(_funcs["sign"])
_funcs["split"] = _manip.split_axis_checked(_funcs["split"])
for _name in ("split", "hsplit", "vsplit", "dsplit"):
    _funcs[_name] = _extras.gathered_indices(_funcs[_name], _name)
_funcs["maximum"] = _extras.same_split_axes(_funcs["maximum"])
_funcs["minimum"] = _extras.same_split_axes(_funcs["minimum"])
_funcs["isclose"] = _closeness(_core.isclose, "isclose")
_funcs["allclose"] = _closeness(_core.allclose, "allclose")
_funcs["broadcast_shape"] = broadcast_shape
for _name in ("vector_norm", "matrix_norm", "norm", "cross", "dot", "outer", "projection"):
    _funcs[_name] = getattr(linalg, _name)
_funcs["matmul"] = linalg.matmul
_funcs["lanczos"], _funcs["polar"] = linalg.lanczos, linalg.polar
_funcs["transpose"] = linalg.transpose
_funcs["argmax"] = _stats.arg_reduction(_core.argmax, "argmax")
_funcs["argmin"] = _stats.arg_reduction(_core.argmin, "argmin")
for _name in ("mean", "var", "std"):
    _funcs[_name] = _stats.moment(_funcs[_name], _name)
_funcs["average"] = _stats.average
_funcs["bincount"] = _stats.bincount
_funcs["percentile"] = _stats.percentile
_funcs["histogram"] = _stats.histogram
_funcs["divmod"] = divmod
_funcs["cumsum"] = _cumulative(_core.cumsum, "cumsum")
_funcs["cumprod"] = _funcs["cumproduct"] = _cumulative(_core.cumprod, "cumprod")


# the namespace: Heat's types, every adapted function, then the methods from the op table
globals().update({name: getattr(types, name) for name in types.__all__})
globals().update(_funcs)
install_methods(_funcs, _ROWS)
DNDarray.copysign_ = _extras.floats_only(DNDarray.copysign_, "copysign_")  # Heat's own check

# Heat's submodule names (ht.factories.array, ht.manipulations.resplit, ...): the face
# keeps every function in one namespace, and these names point at it
factories = manipulations = indexing = statistics = arithmetics = rounding = _sys.modules[__name__]
printing = signal = complex_math = core = _sys.modules[__name__]
exponential = trigonometrics = relational = logical = stride_tricks = _sys.modules[__name__]
_SUBMODULES = (
    "factories",
    "manipulations",
    "indexing",
    "statistics",
    "arithmetics",
    "rounding",
    "exponential",
    "trigonometrics",
    "relational",
    "logical",
    "stride_tricks",
    "printing",
    "signal",
    "complex_math",
    "core",
)

__all__ = sorted(
    {
        *_funcs,
        "DNDarray",
        *_LAZY,
        "array",
        "asarray",
        "equal",
        "linalg",
        "random",
        "types",
        *types.__all__,
        "inf",
        "nan",
        "pi",
        "e",
        "Inf",
        "Infinity",
        "infty",
        "PINF",
        "NaN",
        "NAN",
        "NINF",
        *_SUBMODULES,
    }
)


def __getattr__(name: str) -> object:
    """``ht.LshapeMap`` (the core's torch tensor class), made on first access; ``ht.comm``,
    Heat's ``COMM_WORLD`` for object collectives (:class:`._extras.ObjectComm` over the
    default comm, which starts the cluster on first use)."""
    if name in _LAZY:
        return getattr(_core, name)
    if name == "comm":
        return _extras.ObjectComm(_core.get_comm())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
