"""Heat's data types: classes that compare equal to numpy dtypes and build arrays when called.

Each Heat type is a class with a ``dtype`` attribute (its numpy dtype), so
``np.dtype(ht.float32)`` is ``float32`` and the core accepts a Heat type
wherever it takes a dtype. Calling one, ``ht.float32([1, 2])``, builds a
DNDarray of that type, as in Heat. The hierarchy (``number`` > ``integer`` >
``signedinteger`` > ``int32``, ...) follows Heat's, so ``issubclass`` checks work.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING

import numpy as np

from .. import _torch
from .. import _types as _core_types

if TYPE_CHECKING:
    import torch

__all__ = [
    "bool",
    "bool_",
    "byte",
    "can_cast",
    "canonical_heat_type",
    "cdouble",
    "cfloat",
    "complex",
    "complex64",
    "complex128",
    "csingle",
    "datatype",
    "double",
    "finfo",
    "flexible",
    "float",
    "float16",
    "float32",
    "float64",
    "float_",
    "floating",
    "half",
    "heat_type_is_complexfloating",
    "heat_type_is_exact",
    "heat_type_is_inexact",
    "heat_type_is_realfloating",
    "heat_type_of",
    "iinfo",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "int_",
    "integer",
    "issubdtype",
    "long",
    "number",
    "promote_types",
    "result_type",
    "short",
    "signedinteger",
    "ubyte",
    "uint8",
    "unsignedinteger",
]

# set by dndask.heat when it is imported: builds a face array (avoids an import cycle)
_BUILD = {}


class _HeatType(type):
    """Metaclass: a Heat type equals its numpy dtype, its torch dtype and its own class."""

    def __eq__(cls, other):
        if isinstance(other, _HeatType):
            return cls is other
        mine = cls.__dict__.get("dtype")
        if mine is None:
            return False
        if _torch.is_dtype(other):
            try:
                return _core_types.canonical_dtype(other) == mine
            except TypeError:  # a torch dtype numpy lacks (bfloat16)
                return False
        if isinstance(other, (np.dtype, str)) or (
            isinstance(other, type) and issubclass(other, np.generic)
        ):
            try:
                return np.dtype(other) == mine
            except TypeError:
                return False
        return False

    def __ne__(cls, other):
        return not _HeatType.__eq__(cls, other)

    def __hash__(cls):
        mine = cls.__dict__.get("dtype")
        return hash(cls.__name__) if mine is None else hash(mine)

    def __getattr__(cls, name):
        # numpy dtype attributes (kind, itemsize, ...) of a concrete type, so that code
        # written for numpy dtypes (the core's) reads a Heat type as well
        mine = cls.__dict__.get("dtype")
        if mine is None or name.startswith("__"):
            raise AttributeError(name)
        return getattr(mine, name)

    def __repr__(cls):
        return f"<class 'dndask.heat.{cls.__name__}'>"

    __str__ = __repr__


class datatype(metaclass=_HeatType):  # noqa: N801 (Heat's name)
    """The root of Heat's type hierarchy; concrete types build DNDarrays when called."""

    def __new__(cls, *value, device=None, comm=None):
        if "dtype" not in cls.__dict__:
            raise TypeError(f"cannot create '{cls.__name__}' instances")
        if len(value) > 1:
            raise TypeError(f"`{cls.__name__}` takes at most 1 argument ({len(value)} given)")
        # no value: Heat's one zero element, shape (1,)
        return _BUILD["array"](value[0] if value else [0], cls, device, comm)

    @classmethod
    def torch_type(cls) -> torch.dtype:
        """The torch dtype of this type."""
        if "dtype" not in cls.__dict__:
            return NotImplemented
        return _core_types.to_torch_dtype(cls.dtype)

    @classmethod
    def char(cls) -> str:
        """Heat's short name (``"f4"``, ``"i8"``, ``"u1"``, ``"b1"``, ...)."""
        if "dtype" not in cls.__dict__:
            return NotImplemented
        return cls.dtype.str.lstrip("<>|=")


class bool(datatype):  # noqa: N801
    """Boolean."""

    dtype = np.dtype("bool")


class number(datatype):  # noqa: N801
    """Numbers."""


class integer(number):  # noqa: N801
    """Integers."""


class signedinteger(integer):  # noqa: N801
    """Signed integers."""


class unsignedinteger(integer):  # noqa: N801
    """Unsigned integers."""


class floating(number):  # noqa: N801
    """Real floating point numbers."""


class complex(number):  # noqa: N801
    """Complex floating point numbers."""


class flexible(datatype):  # noqa: N801
    """Placeholder for non-numeric types (unused, as in Heat)."""


def _concrete(name: str, base: type) -> type:
    return _HeatType(name, (base,), {"dtype": np.dtype(name), "__doc__": f"{name}."})


int8 = _concrete("int8", signedinteger)
int16 = _concrete("int16", signedinteger)
int32 = _concrete("int32", signedinteger)
int64 = _concrete("int64", signedinteger)
uint8 = _concrete("uint8", unsignedinteger)
float16 = _concrete("float16", floating)
float32 = _concrete("float32", floating)
float64 = _concrete("float64", floating)
complex64 = _concrete("complex64", complex)
complex128 = _concrete("complex128", complex)

# Heat's aliases (note: ``int`` is int32 and ``float`` is float32 in Heat)
bool_ = bool
ubyte, byte, short, int, int_, long = uint8, int8, int16, int32, int32, int64
half, float, float_, double = float16, float32, float32, float64
cfloat = csingle = complex64
cdouble = complex128

_CONCRETE = (
    bool,
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
_BY_DTYPE = {t.dtype: t for t in _CONCRETE}
# Python's own types as Heat reads them
_PYTHON = {
    builtins.bool: bool,
    builtins.int: int32,
    builtins.float: float32,
    builtins.complex: complex64,
}


def canonical_heat_type(a_type) -> type:
    """The Heat type of a Heat, numpy, torch or Python type or a type name.

    >>> canonical_heat_type("float32") is float32
    True
    >>> canonical_heat_type(int) is int32
    True
    """
    if isinstance(a_type, _HeatType):
        if "dtype" not in a_type.__dict__:
            raise TypeError(f"`a_type` must be a concrete type, got the abstract {a_type.__name__}")
        return a_type
    if isinstance(a_type, type) and a_type in _PYTHON:
        return _PYTHON[a_type]
    if isinstance(a_type, str) and a_type in _PYTHON_NAMES:
        return _PYTHON_NAMES[a_type]
    if isinstance(a_type, str) and a_type in _HEAT_CODES:
        return _HEAT_CODES[a_type]
    try:
        return _BY_DTYPE[_core_types.canonical_dtype(a_type, "a_type")]
    except KeyError:
        raise TypeError(f"data type {a_type!r} is not understood") from None


_PYTHON_NAMES = {"int": int32, "float": float32, "bool": bool, "complex": complex64}
# Heat's own type codes where numpy reads them otherwise ("u" is uint32 to numpy)
_HEAT_CODES = {"u": uint8, "bool_": bool}


def heat_type_of(obj) -> type:
    """The Heat type of an array, tensor or scalar.

    >>> heat_type_of(3.0) is float32
    True
    """
    dtype = getattr(obj, "dtype", None)
    if dtype is not None:
        return canonical_heat_type(dtype)
    if isinstance(obj, (builtins.bool, builtins.int, builtins.float, builtins.complex)):
        return _PYTHON[type(obj)]
    if isinstance(obj, (list, tuple)):
        try:
            return canonical_heat_type(_torch.torch().tensor(obj).dtype)
        except (TypeError, ValueError, RuntimeError):
            if obj and type(obj[0]) in _PYTHON:  # Heat's last resort: the first element's type
                return _PYTHON[type(obj[0])]
    raise TypeError(f"data type of {type(obj).__name__} is not understood")


def heat_type_is_exact(ht_dtype) -> builtins.bool:
    """Whether ``ht_dtype`` is an integer type (bool included)."""
    return canonical_heat_type(ht_dtype).dtype.kind in "biu"


def heat_type_is_inexact(ht_dtype) -> builtins.bool:
    """Whether ``ht_dtype`` is a floating or complex type."""
    return canonical_heat_type(ht_dtype).dtype.kind in "fc"


def heat_type_is_realfloating(ht_dtype) -> builtins.bool:
    """Whether ``ht_dtype`` is a real floating type."""
    return canonical_heat_type(ht_dtype).dtype.kind == "f"


def heat_type_is_complexfloating(ht_dtype) -> builtins.bool:
    """Whether ``ht_dtype`` is a complex type."""
    return canonical_heat_type(ht_dtype).dtype.kind == "c"


def issubdtype(arg1, arg2) -> builtins.bool:
    """Whether ``arg1`` is below ``arg2`` in Heat's hierarchy.

    >>> issubdtype(float32, floating)
    True
    """
    one = arg1 if isinstance(arg1, _HeatType) else canonical_heat_type(arg1)
    two = arg2 if isinstance(arg2, _HeatType) else canonical_heat_type(arg2)
    return issubclass(one, two)


# Heat's "intuitive" casts beyond numpy's safe ones: same bit length, integer to float
_INTUITIVE = {("int16", "float16"), ("int32", "float32"), ("int32", "complex64")}
_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def _bits(t) -> builtins.int:
    return 1 if t.dtype.kind == "b" else t.dtype.itemsize * 8


def _casts_intuitively(a, b) -> builtins.bool:
    return builtins.bool(np.can_cast(a.dtype, b.dtype, "safe")) or (a.__name__, b.__name__) in (
        _INTUITIVE
    )


def promote_types(type1, type2) -> type:
    """The smallest type both cast to "intuitively" (Heat's rule, not numpy's or torch's).

    Intuitive casts are numpy's safe ones plus int16 -> float16 and int32 -> float32 /
    complex64, so ``int32`` and ``float32`` promote to float32, ``int64`` and ``float32``
    to float64, ``int8`` and ``uint8`` to int16.

    >>> promote_types(int32, float32) is float32, promote_types(int64, float32) is float64
    (True, True)
    """
    a, b = canonical_heat_type(type1), canonical_heat_type(type2)
    shared = [t for t in _CONCRETE if _casts_intuitively(a, t) and _casts_intuitively(b, t)]
    return builtins.min(
        shared,
        key=lambda t: (_bits(t), 0 if np.can_cast(a.dtype, t.dtype, "safe") else 1,
                       _KIND_ORDER[t.dtype.kind]),
    )  # fmt: skip


def _family(t) -> builtins.int:
    return _KIND_ORDER[t.dtype.kind]


def _typed(value) -> tuple:
    """(Heat type, precedence): arrays 0, types 1, 0-d arrays 2, Python scalars 3 (Heat's)."""
    if (
        isinstance(value, (_HeatType, np.dtype, str))
        or _torch.is_dtype(value)
        or (isinstance(value, type) and value not in _PYTHON)
    ):
        return canonical_heat_type(value), 1
    if isinstance(value, type):
        return _PYTHON[value], 1
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        return canonical_heat_type(dtype), 0 if len(getattr(value, "shape", ())) else 2
    if isinstance(value, np.generic):
        return canonical_heat_type(value.dtype), 2
    return heat_type_of(value), 3


def result_type(*arrays_and_types) -> type:
    """The type an operation on these operands returns, by Heat's rule.

    Types of one family (bool, integer, float, complex) promote by
    :func:`promote_types` at equal precedence; otherwise arrays rank above types,
    types above 0-d arrays, those above Python scalars, and across families the
    higher family wins with its own type (``int32`` array + ``2.5`` is float32).

    >>> result_type(int32, 1.0) is float32
    True
    """
    if not arrays_and_types:
        raise TypeError("`result_type` needs at least one operand")
    t2, p2 = _typed(arrays_and_types[-1])
    for value in reversed(arrays_and_types[:-1]):
        t1, p1 = _typed(value)
        if t1 is t2:
            p2 = builtins.min(p1, p2)
        elif p1 == p2:
            t2 = promote_types(t1, t2)
        elif _family(t1) == _family(t2):
            t2, p2 = (t1 if p1 < p2 else t2), builtins.min(p1, p2)
        else:
            t2, p2 = (t2 if _family(t1) < _family(t2) else t1), builtins.min(p1, p2)
    return t2


class finfo:  # noqa: N801
    """Machine limits of a floating type (``bits``, ``eps``, ``max``, ``min``, ``tiny``)."""

    def __new__(cls, dtype):
        t = canonical_heat_type(dtype)
        if t.dtype.kind not in "fc":
            raise TypeError(f"`dtype` must be a floating type, got {t.__name__}")
        info = _torch.torch().finfo(t.torch_type())
        obj = object.__new__(cls)
        obj.bits, obj.eps, obj.max, obj.min = info.bits, info.eps, info.max, info.min
        obj.tiny, obj.dtype = info.tiny, t
        return obj


class iinfo:  # noqa: N801
    """Machine limits of an integer type (``bits``, ``max``, ``min``)."""

    def __new__(cls, dtype):
        t = canonical_heat_type(dtype)
        if t.dtype.kind not in "iu":
            raise TypeError(f"`dtype` must be an integer type, got {t.__name__}")
        info = _torch.torch().iinfo(t.torch_type())
        obj = object.__new__(cls)
        obj.bits, obj.max, obj.min, obj.dtype = info.bits, info.max, info.min, t
        return obj


def can_cast(from_, to, casting: str = "intuitive") -> builtins.bool:
    """Whether ``from_`` casts to ``to``: numpy's rules, and Heat's "intuitive" one.

    "intuitive" (the default) is a safe cast or one of Heat's intuitive extras
    (int16 -> float16, int32 -> float32 / complex64), as :func:`promote_types` uses.

    "same_kind" is Heat's: the two types are of one family (bool, integer, floating, complex).
    A value (``1.0``, an array) stands for its Heat type.

    >>> can_cast(int32, float32), can_cast(int64, float32), can_cast(int64, int8, "same_kind")
    (True, False, True)
    """
    if not isinstance(casting, str):
        raise TypeError(f"`casting` must be a str, got {type(casting).__name__}")
    if casting not in _CASTINGS:
        raise ValueError(f"`casting` must be one of {list(_CASTINGS)}, got {casting!r}")
    a, b = _type_or_type_of(from_), _type_or_type_of(to)
    if casting == "intuitive":
        return _casts_intuitively(a, b)
    if casting == "same_kind":  # Heat's: one family (bool, integer, floating, complex)
        return _FAMILY[a.dtype.kind] == _FAMILY[b.dtype.kind]
    return builtins.bool(np.can_cast(a.dtype, b.dtype, casting))


_CASTINGS = ("no", "safe", "same_kind", "unsafe", "intuitive")
_FAMILY = {"b": "bool", "i": "integer", "u": "integer", "f": "floating", "c": "complex"}


def _type_or_type_of(value) -> type:
    """A type (Heat, numpy, torch, Python, or a code) as a Heat type, else the Heat type of a
    value (an array's, a scalar's: ``1.0`` is float32)."""
    if isinstance(value, (_HeatType, np.dtype, str, type)) or _torch.is_dtype(value):
        return canonical_heat_type(value)
    return heat_type_of(value)
