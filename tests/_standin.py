"""A strict CPU stand-in for CuPy chunks (test-only).

``StrictArray`` wraps a numpy array but is as strict as CuPy where CuPy is strict:

- ``np.asarray(x)`` (``__array__``) raises TypeError: no implicit host conversion;
- ufuncs and numpy functions refuse numpy-array operands (python and numpy scalars pass);
- ``.get()`` is the explicit copy to host, ``__dlpack__`` the zero-copy exchange;
- ``__array_ufunc__``/``__array_function__`` make numpy functions dispatch to it (NEP-13/18);
- unpickling a non-empty one in the driver process raises: chunks never reach the driver
  unless copied to host first (CuPy's deserializer needs a GPU in the driver). The driver
  is the process that first imported this module; its pid travels in the environment to
  the worker processes it starts, where unpickling (worker to worker transfers) is fine.

Importing the module registers it with Dask (``register_chunk_type`` and the same dispatch
entries dask/array/backends.py registers for CuPy) and as the ``"gpu"`` backend of
:mod:`dndask._xp`, the same registry CuPy goes through.

Where CuPy is lenient the stand-in is too: a numpy array as an index (``x[np_index]``) is
copied to the device, as CuPy does.
"""

from __future__ import annotations

import os
import sys

import dask.array as da
import numpy as np
from dask.array import dispatch
from dask.array.backends import _nannumel, _numel_arraylike  # what dask registers for CuPy
from dask.sizeof import sizeof
from numpy.lib.mixins import NDArrayOperatorsMixin

from dndask import _xp


class HostTransferError(TypeError):
    """An implicit device-to-host conversion, which CuPy refuses."""


def _unwrap(value, where: str):
    if isinstance(value, StrictArray):
        return value._a
    if isinstance(value, np.ndarray) and value.ndim > 0:
        raise TypeError(f"{where}: numpy-array operand refused (a StrictArray chunk is on device)")
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v, where) for v in value)
    if isinstance(value, dict):
        return {k: _unwrap(v, where) for k, v in value.items()}
    return value


def _index(index):
    """An index as CuPy reads it: numpy index arrays pass (CuPy copies them to the device)."""
    if isinstance(index, tuple):
        return tuple(_index(k) for k in index)
    if isinstance(index, list):
        return [_index(k) for k in index]
    return index._a if isinstance(index, StrictArray) else index


def _wrap(value):
    if isinstance(value, np.ndarray):
        return StrictArray(value)
    if isinstance(value, np.generic):  # CuPy's reductions give 0-d arrays, not scalars
        return StrictArray(np.asarray(value))
    if isinstance(value, tuple):
        return tuple(_wrap(v) for v in value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


_DRIVER_PID = "DNDASK_STANDIN_DRIVER_PID"
os.environ.setdefault(_DRIVER_PID, str(os.getpid()))  # inherited by the workers started here


def _rebuild(array: np.ndarray) -> StrictArray:
    if array.size and os.getpid() == int(os.environ[_DRIVER_PID]):
        raise HostTransferError(
            "a StrictArray chunk was deserialized outside a worker (in the driver): "
            "device data must be copied to host (to_host) before it leaves a worker"
        )
    return StrictArray(array)


class StrictArray(NDArrayOperatorsMixin):
    """A numpy array pretending to live on a device."""

    __array_priority__ = 100

    def __init__(self, array):
        self._a = np.asarray(array) if not isinstance(array, np.ndarray) else array

    # explicit transfers
    def get(self) -> np.ndarray:
        return self._a.copy()

    def __dlpack__(self, *args, **kwargs):
        return self._a.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()

    def __array__(self, dtype=None, copy=None):
        raise HostTransferError(
            "implicit conversion of a StrictArray to numpy; use .get() or dndask._xp.to_host"
        )

    def __reduce__(self):
        return _rebuild, (self._a,)

    def __dask_tokenize__(self):
        return ("StrictArray", self._a.dtype.str, self._a.shape, self._a.tobytes())

    # NEP-13/18 dispatch
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        where = f"np.{ufunc.__name__}.{method}"
        args = _unwrap(inputs, where)
        kwargs = _unwrap(kwargs, where)
        return _wrap(getattr(ufunc, method)(*args, **kwargs))

    def __array_function__(self, func, types, args, kwargs):
        where = f"np.{func.__name__}"
        if "like" in kwargs:
            kwargs = {**kwargs, "like": None}
        return _wrap(func(*_unwrap(args, where), **_unwrap(kwargs, where)))

    # the ndarray surface Dask and dndask use
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    nbytes = property(lambda self: self._a.nbytes)
    itemsize = property(lambda self: self._a.itemsize)
    strides = property(lambda self: self._a.strides)
    T = property(lambda self: StrictArray(self._a.T))
    real = property(lambda self: StrictArray(self._a.real))
    imag = property(lambda self: StrictArray(self._a.imag))
    flags = property(lambda self: self._a.flags)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        attr = getattr(self._a, name)
        if not callable(attr):
            return _wrap(attr)

        def method(*args, **kwargs):
            return _wrap(attr(*_unwrap(args, name), **_unwrap(kwargs, name)))

        return method

    def __getitem__(self, index):
        return _wrap(self._a[_index(index)])

    def __setitem__(self, index, value):
        self._a[_unwrap(index, "__setitem__")] = _unwrap(value, "__setitem__")

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (_wrap(v) for v in self._a)

    def __bool__(self):
        return bool(self._a)

    def __float__(self):
        return float(self._a)

    def __int__(self):
        return int(self._a)

    def __index__(self):
        return self._a.__index__()

    def __repr__(self):
        return f"StrictArray({self._a!r})"


class _Namespace:
    """The stand-in's array module: numpy's functions, answering StrictArrays."""

    __name__ = "standin"
    ndarray = StrictArray

    def __getattr__(self, name):
        func = getattr(np, name)
        if not callable(func) or isinstance(func, type):
            return func

        def call(*args, **kwargs):
            return _wrap(func(*_unwrap(args, name), **_unwrap(kwargs, name)))

        call.__name__ = name
        return call

    def asarray(self, value, dtype=None):  # the explicit host-to-device copy
        if isinstance(value, StrictArray):
            return value if dtype is None else StrictArray(value._a.astype(dtype))
        return StrictArray(np.array(value, dtype=dtype))

    def __reduce__(self):
        return "standin"


standin = _Namespace()

BACKEND = _xp.Backend(
    "gpu",
    standin,
    StrictArray,
    lambda a: a.get(),
    lambda a: StrictArray(np.array(a)),
    from_dlpack=lambda v: StrictArray(np.from_dlpack(v)),
    dlpack_device=1,  # the stand-in lives in host memory: its torch tensors are CPU tensors
)

REPLACED = _xp._BACKENDS.get("gpu")  # CuPy's backend where CuPy imports, else None


def activate() -> None:
    """Make the stand-in the ``"gpu"`` backend of this process (importing does it)."""
    _xp.register_backend(BACKEND)


def deactivate() -> None:
    """Give the ``"gpu"`` device back to the backend the stand-in replaced (CuPy, or none)."""
    if REPLACED is None:
        _xp._BACKENDS.pop("gpu", None)
    else:
        _xp.register_backend(REPLACED)


da.register_chunk_type(StrictArray)
# dask's sizeof reports CuPy arrays by their nbytes; transfer logs and memory accounting rely on it
sizeof.register(StrictArray)(lambda x: int(x.nbytes))
dispatch.concatenate_lookup.register(StrictArray, standin.concatenate)
dispatch.take_lookup.register(StrictArray, standin.take)
dispatch.tensordot_lookup.register(StrictArray, standin.tensordot)
dispatch.numel_lookup.register(StrictArray, _numel_arraylike)
dispatch.nannumel_lookup.register(StrictArray, _nannumel)
dispatch.empty_lookup.register(StrictArray, standin.empty)
dispatch.to_numpy_dispatch.register(StrictArray, lambda data, **kwargs: data.get())
activate()


def _import_here(path: str, driver_pid: str) -> None:
    # a worker started before the driver imported this file did not inherit the driver's
    # pid; without it, the worker would take itself for the driver and refuse every chunk
    # another worker sends it
    os.environ[_DRIVER_PID] = driver_pid
    if path not in sys.path:
        sys.path.insert(0, path)
    import _standin  # noqa: F401  (registers the backend in this process)


def install(client) -> None:
    """Register the stand-in on ``client``'s workers too (each imports this file), and tell
    them which process is the driver."""
    client.run(_import_here, os.path.dirname(os.path.abspath(__file__)), os.environ[_DRIVER_PID])
