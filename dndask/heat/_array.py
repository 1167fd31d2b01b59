"""The face's array class: a core DNDarray whose methods follow Heat.

``dndask.heat.DNDarray`` subclasses ``dndask.DNDarray``: same state, same graph
code, and every core function takes it. What changes is what Heat code sees:
methods and operators return face arrays and follow torch's dtype promotion,
``dtype`` is a Heat type, and Heat's in-place methods (``add_``, ``pow_``, ...) and
aliases exist. A core array becomes a face array with :func:`dndask.heat.array`
(or :func:`_adapt.face`), sharing its state; a face array *is* a core array.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np

from .. import _dndarray, _torch
from . import _adapt, _eager, _local, _manip, _printing, types
from ._optable import OPERATORS

if TYPE_CHECKING:
    import torch

__all__ = ["DNDarray", "install_methods"]

# core methods kept as they are (no DNDarray results or Heat has the same)
_UNWRAPPED = frozenset(
    {
        "shape",
        "ndim",
        "size",
        "nbytes",
        "split",
        "comm",
        "device",
        "lshape_map",
        "lshape",
        "lnumel",
        "counts_displs",
        "balanced",
        "is_balanced",
        "is_distributed",
        "larray",
        "compute",
        "numpy",
        "to_dask",
        "item",
        "to_xarray",
        "dtype",
    }
)


class DNDarray(_dndarray.DNDarray):
    """A DNDarray with Heat's method semantics (see :mod:`dndask.heat`).

    >>> import dndask.heat as ht
    >>> x = ht.arange(4, dtype=ht.int32, split=0)
    >>> (x + 1.5).dtype is ht.float32, x.add_(1).tolist()
    (True, [1, 2, 3, 4])
    """

    @property
    def _array(self):
        """The dask array, after writing back in-place changes of the live ``larray``."""
        _local.write_back(self)
        return self.__dict__["_array"]

    @_array.setter
    def _array(self, value) -> None:
        self.__dict__["_array"] = value

    def _set(self, array, split, task_ranks=None) -> DNDarray:
        _dndarray.DNDarray._set(self, array, split, task_ranks)
        _local.refresh(self)  # the live ``larray`` gets the new chunk, keeping its identity
        return self

    @property
    def larray(self) -> torch.Tensor:
        """Rank 0's chunk, one live tensor: in-place changes flow both ways (Heat's)."""
        return _local.fetch(self)

    @larray.setter
    def larray(self, tensor) -> None:
        _local.set_local(self, tensor)

    @property
    def dtype(self):
        """The Heat type of the elements (compares equal to the numpy dtype)."""
        return types.canonical_heat_type(self._array.dtype)

    @property
    def gshape(self) -> tuple[int, ...]:
        """Heat's name of the global shape."""
        return self.shape

    @property
    def gnumel(self) -> int:
        """Heat's name of the number of elements."""
        return self.size

    @property
    def numdims(self) -> int:
        """Heat's name of ``ndim``."""
        return self.ndim

    @property
    def lnbytes(self) -> int:
        """Bytes of rank 0's chunk."""
        return self.lnumel * self._array.dtype.itemsize

    @property
    def gnbytes(self) -> int:
        """Bytes of the whole array."""
        return self.nbytes

    def stride(self) -> tuple[int, ...]:
        """Rank 0's chunk's strides in elements (C order), as torch reports them.

        torch counts an empty axis as length 1: ``(2, 0, 3)`` has strides ``(3, 3, 1)``.
        """
        strides, step = [], 1
        for n in reversed(self.lshape):
            strides.append(step)
            step *= max(n, 1)
        return tuple(reversed(strides))

    @property
    def strides(self) -> tuple[int, ...]:
        """Rank 0's chunk's strides in bytes."""
        return tuple(s * self._array.dtype.itemsize for s in self.stride())

    @property
    def lloc(self):
        """Rank 0's chunk, to index and assign (``a.lloc[0, 0] = 1``), as ``larray``."""
        return self.larray

    def tolist(self, keepsplit: bool = False) -> list:
        """The values as nested Python lists; with ``keepsplit`` the local chunk's (Heat's).

        In the driver the local chunk is rank 0's (as ``larray``).
        """
        if not isinstance(keepsplit, (bool, np.bool_)):
            raise TypeError(f"`keepsplit` must be a bool, got {type(keepsplit).__name__}")
        if keepsplit and self.is_distributed():
            return self.larray.tolist()
        return self.numpy().tolist()

    # Heat's in-place relayouts move the data when they are called; the core's only change
    # the graph, so every later use of the array would repeat the move (and a chain of
    # resplits would grow). The face starts the array after a move (:mod:`._eager`: persisted
    # without waiting, unless in ``ht.lazy()``), so the moved chunks are made once and kept.
    def resplit_(self, axis: int | None = None, *, method: str | None = None) -> DNDarray:
        """Change the split axis in place and start moving the data now (Heat's eager
        ``resplit_``); see :meth:`dndask.DNDarray.resplit_`.

        >>> import dndask.heat as ht
        >>> ht.arange(6, split=0).reshape((2, 3)).resplit_(1).lshape_map[:, 1].tolist()[:2]
        [1, 1]
        """
        return self._moved(_dndarray.DNDarray.resplit_, axis, method=method)

    def redistribute_(self, lshape_map=None, target_map=None, *, method=None) -> DNDarray:
        """Move rows along ``split`` in place, starting now (Heat's eager ``redistribute_``);
        see :meth:`dndask.DNDarray.redistribute_`."""
        return self._moved(_dndarray.DNDarray.redistribute_, lshape_map, target_map, method=method)

    def _moved(self, core_method, *args, **kwargs) -> DNDarray:
        before = self.to_dask().name
        core_method(self, *args, **kwargs)
        if self.to_dask().name != before:
            _eager.start(self)
        return self

    def create_lshape_map(self, force_check: bool = False):
        """Heat's name of :attr:`lshape_map`."""
        return self.lshape_map

    def is_balanced(self, force_check: bool = False) -> bool:
        """Whether every rank holds the balanced number of rows."""
        return _dndarray.DNDarray.is_balanced(self, force_check)

    def collect_(self, target_rank: int = 0) -> DNDarray:
        """Gather the whole array onto ``target_rank`` (split 0, other ranks empty)."""
        if not isinstance(target_rank, int) or isinstance(target_rank, bool):
            raise TypeError(f"`target_rank` must be an int, got {type(target_rank).__name__}")
        if not 0 <= target_rank < self.comm.size:
            raise ValueError(f"`target_rank` must be in [0, {self.comm.size}), got {target_rank}")
        if self.split is None:
            return self
        target = self.lshape_map
        target[:, self.split] = 0
        target[target_rank, self.split] = self.shape[self.split]
        return self.redistribute_(target_map=target)

    def cumsum_(self, axis: int) -> DNDarray:
        """In-place cumulative sum along ``axis`` (Heat's ``cumsum`` with ``out=self``)."""
        return _FUNCS["cumsum"](self, axis, out=self)

    def cumprod_(self, axis: int) -> DNDarray:
        """In-place cumulative product along ``axis`` (Heat's ``cumprod`` with ``out=self``)."""
        return _FUNCS["cumprod"](self, axis, out=self)

    cumproduct_ = cumprod_

    def astype(self, dtype, copy: bool = True) -> DNDarray:
        """The array cast to ``dtype``; with ``copy=False`` the cast happens in place (Heat)."""
        out = _dndarray.DNDarray.astype(self, _adapt._dtype_arg(dtype), copy=True)
        if copy:
            return _adapt.face(out)
        return self._set(out.to_dask(), self.split, out._task_ranks)

    def __eq__(self, other):  # type: ignore[override]
        return _FUNCS["eq"](self, other)

    def __ne__(self, other):  # type: ignore[override]
        return _FUNCS["ne"](self, other)

    def __lt__(self, other):
        return _FUNCS["lt"](self, other)

    def __le__(self, other):
        return _FUNCS["le"](self, other)

    def __gt__(self, other):
        return _FUNCS["gt"](self, other)

    def __ge__(self, other):
        return _FUNCS["ge"](self, other)

    def __neg__(self):
        return _FUNCS["negative"](self)

    def __pos__(self):
        return _FUNCS["positive"](self)

    def __abs__(self):
        return _FUNCS["abs"](self)

    def __invert__(self):
        return _FUNCS["invert"](self)

    def __getitem__(self, key):
        """numpy's indexing, but an int DNDarray of ``ndim`` columns is one row of
        coordinates per element (Heat's: the result of ``nonzero``)."""
        _check_ellipses(key)
        return _adapt.face(_dndarray.DNDarray.__getitem__(self, _manip.coordinate_key(self, key)))

    def __setitem__(self, key, value) -> None:
        """Assignment with Heat's coordinate keys and Heat's (torch's) casting: a value of any
        numeric dtype is cast to the array's, so a float goes into an int array truncated
        toward zero (``a[k] = 1.5`` stores 1, ``a[k] = 1e-12`` stores 0), as Heat's local
        ``torch.Tensor.__setitem__`` does. The core (:mod:`dndask`) keeps numpy's
        ``same_kind`` rule."""
        value = _torch_cast(value, np.dtype(self._array.dtype))
        _check_ellipses(key)
        if (
            isinstance(value, _dndarray.DNDarray)
            and value.ndim == self.ndim
            and self.is_distributed()
            and value.is_distributed()
            and value.split != self.split
        ):
            raise ValueError(
                f"a value split along {value.split} cannot be assigned into an array split "
                f"along {self.split} (as in Heat)"
            )
        _dndarray.DNDarray.__setitem__(self, _manip.coordinate_key(self, key), value)
        _eager.start(self)  # Heat writes at the call

    def __str__(self) -> str:
        """The global array (as ``repr``), or every rank's chunk under ``local_printing()``."""
        if _printing.is_local():
            return _printing.local_text(self)
        return super().__str__()

    def __round__(self, ndigits=None):
        """``round(x)``: a Python number for one element, else an elementwise round (Heat)."""
        if self.size == 1:
            return round(self.item(), ndigits)
        return _FUNCS["round"](self, 0 if ndigits is None else ndigits)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """Heat's rule: a plain call of a ufunc the face has runs the face's function;
        ufunc methods (``np.add.reduce``) and ufuncs it lacks are numpy's TypeError."""
        fn = _FUNCS.get(ufunc.__name__)
        if method != "__call__" or fn is None:
            return NotImplemented
        return fn(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        """numpy functions dndask implements; the others are numpy's TypeError (Heat's)."""
        try:
            result = _dndarray.DNDarray.__array_function__(self, func, types, args, kwargs)
        except NotImplementedError:
            return NotImplemented
        return _adapt.face(result)

    __hash__ = None  # type: ignore[assignment]


_SCALARS = (bool, int, float, complex, np.generic)


def _torch_cast(value, dtype: np.dtype):
    """``value`` cast to ``dtype`` as torch's assignment casts it, where numpy's ``same_kind``
    rule would refuse it (a float into an int array: truncated toward zero); other values as
    they are. Non-numeric values are left for the assignment to refuse."""
    if isinstance(value, _dndarray.DNDarray):
        if np.can_cast(value.to_dask().dtype, dtype, "same_kind"):
            return value
        return value.astype(dtype)
    if _torch.is_tensor(value):
        value = _torch.from_torch(value)
    elif isinstance(value, _SCALARS):
        value = np.asarray(value)
        if np.can_cast(np.result_type(dtype, value.item()), dtype, "same_kind"):
            return value.item()  # a weak Python scalar, as numpy reads it
    elif not isinstance(value, np.ndarray):
        try:
            value = np.asarray(value)
        except (TypeError, ValueError):
            return value
    if value.dtype.kind not in "biufc" or np.can_cast(value.dtype, dtype, "same_kind"):
        return value
    return value.real.astype(dtype) if value.dtype.kind == "c" else value.astype(dtype)


def _check_ellipses(key) -> None:
    """Heat refuses a key with more than one ``...`` with a ValueError (numpy: IndexError)."""
    if isinstance(key, tuple) and sum(k is Ellipsis for k in key) > 1:
        raise ValueError("an index can only have a single ellipsis ('...')")


_adapt.FACE["DNDarray"] = DNDarray
# the face's functions by name, filled by dndask.heat (methods call them)
_FUNCS: dict = {}


def _method(fn):
    adapted = _adapt.wrap(fn)  # Heat's arguments (list axes, out=, bessel=, device=)

    @functools.wraps(fn)
    def method(self, *args, **kwargs):
        return adapted(self, *args, **kwargs)

    return method


def _wrap_core_methods() -> None:
    """Every core method that returns arrays returns face arrays on the face class."""
    for name, attr in vars(_dndarray.DNDarray).items():
        if name in _UNWRAPPED or name in vars(DNDarray) or name.startswith("__"):
            continue
        if isinstance(attr, property):
            setattr(DNDarray, name, property(_method(attr.fget), attr.fset))
        elif callable(attr) and not isinstance(attr, (staticmethod, classmethod)):
            setattr(DNDarray, name, _method(attr))
    for name in ("__matmul__", "__rmatmul__", "__divmod__", "__rdivmod__"):
        setattr(DNDarray, name, _method(getattr(_dndarray.DNDarray, name)))


def _operator(fn, reflected: bool):
    if reflected:
        return lambda self, other: fn(other, self)
    return lambda self, other: fn(self, other)


def _check_inplace_cast(self, other, name: str) -> None:
    """Heat's in-place rules: ``other``'s type must cast "intuitively" to the array's, and
    two distributed operands must be split along the same axis (after broadcasting)."""
    if not isinstance(other, _dndarray.DNDarray) and not _adapt._is_scalar(other):
        return  # the function names the wrong operand
    if (
        isinstance(other, _dndarray.DNDarray)
        and self.is_distributed()
        and other.is_distributed()
        and other.split + self.ndim - other.ndim != self.split
    ):
        raise ValueError(
            f"in-place `{name}` of operands distributed along different axes "
            f"(split {self.split} and {other.split}) is not allowed (as in Heat)"
        )
    src = types.heat_type_of(other)
    if not types.can_cast(src, self.dtype):
        raise TypeError(
            f"in-place `{name}` cannot cast {src.__name__} to {self.dtype.__name__} "
            "(Heat's intuitive casting)"
        )


def _inplace(fn, name: str):
    def inplace(self, other):
        _check_inplace_cast(self, other, name)
        return fn(self, other, out=self)

    inplace.__name__ = inplace.__qualname__ = name
    return inplace


# Heat's DNDarray methods that are the face's functions with the array first
METHODS = (
    "all",
    "allclose",
    "any",
    "argmax",
    "argmin",
    "average",
    "diagonal",
    "fill_diagonal",
    "isclose",
    "kurtosis",
    "mean",
    "median",
    "modf",
    "nan_to_num",
    "nonzero",
    "percentile",
    "ptp",
    "reshape",
    "rot90",
    "round",
    "skew",
    "std",
    "tril",
    "triu",
    "trace",
    "unique",
    "transpose",
    "var",
)


def install_methods(funcs: dict, table) -> None:
    """Methods, operators and Heat's in-place methods from the face's op table."""
    _FUNCS.update(funcs)
    for name in METHODS:
        if name in funcs:
            setattr(DNDarray, name, _method_of(funcs[name]))
    if "nan_to_num" in funcs:
        DNDarray.nan_to_num_ = _nan_to_num_inplace(funcs["nan_to_num"])
    if "matmul" in funcs:  # Heat's ``a @ b`` is its ``matmul``, with Heat's checks
        matmul = funcs["matmul"]
        DNDarray.__matmul__ = lambda self, other: matmul(self, other)
        DNDarray.__rmatmul__ = lambda self, other: matmul(other, self)
    for _core, arity, _torch_fn, names, inplace_names, _kernel in table:
        fn = funcs[names[0]]
        for name in names:
            if name not in ("real", "imag"):  # properties, as in Heat
                setattr(DNDarray, name, _method_of(funcs[name]))
        for name in inplace_names:
            setattr(DNDarray, name, _inplace_of(fn, arity, name))
    for op, fname in OPERATORS:
        fn = funcs[fname]
        setattr(DNDarray, f"__{op}__", _operator(fn, False))
        setattr(DNDarray, f"__r{op}__", _operator(fn, True))
        setattr(DNDarray, f"__i{op}__", _inplace(fn, f"__i{op}__"))


def _method_of(fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


def _inplace_of(fn, arity: int, name: str):
    if arity == 1:

        def inplace(self):
            return fn(self, out=self)

    else:

        def inplace(self, other):
            _check_inplace_cast(self, other, name)
            return fn(self, other, out=self)

    inplace.__name__ = inplace.__qualname__ = name
    inplace.__doc__ = f"In place: ``x.{name}(...)`` is ``{fn.__name__}(x, ..., out=x)``."
    return inplace


_wrap_core_methods()


def _nan_to_num_inplace(fn):
    def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
        """In place: NaN and infinities replaced (see :func:`dndask.nan_to_num`)."""
        result = fn(self, nan=nan, posinf=posinf, neginf=neginf)
        return _eager.start(self._set(result.to_dask(), self.split, result._task_ranks))

    return nan_to_num_
