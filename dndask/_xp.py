"""The chunk namespace: which array module a chunk lives in (numpy on CPU, CuPy on GPU).

Every place that builds or touches chunks asks this module, never ``numpy`` directly:

- :func:`namespace_of` gives the array module of a chunk or a meta;
- :func:`meta` gives the empty array standing for a chunk type on a device;
- :func:`empty_like_meta` allocates a chunk like a meta;
- :func:`to_host` and :func:`to_device` are the only explicit copies between host and device.

The backends form a registry keyed by device type. ``"cpu"`` is numpy; ``"gpu"`` is CuPy,
registered only when CuPy imports. :func:`register_backend` adds another chunk type under a
device type (the test-suite registers its strict CPU stand-in for CuPy this way); it is the
same code path that CuPy takes, with no switch in the code that uses it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _torch

try:  # CuPy is optional: without it there is no "gpu" backend
    import cupy
except ImportError:  # pragma: no cover - depends on the machine
    cupy = None

__all__ = [
    "Backend",
    "Device",
    "backend",
    "concatenate",
    "cpu",
    "device_of",
    "empty_like_meta",
    "from_dlpack",
    "get_device",
    "meta",
    "namespace_of",
    "register_backend",
    "sanitize_device",
    "to_device",
    "to_host",
    "torch_device",
    "use_device",
]

DEVICE_TYPES = ("cpu", "gpu")


class Device:
    """Where chunks live; ``str(device)`` is Heat's ``cpu:0`` form.

    >>> Device("cpu")
    device(cpu:0)
    """

    def __init__(self, device_type: str = "cpu", device_id: int = 0):
        if device_type not in DEVICE_TYPES:
            raise ValueError(f"`device_type` must be 'cpu' or 'gpu', got {device_type!r}")
        self.device_type = device_type
        self.device_id = device_id

    @property
    def torch_device(self) -> str:
        """The torch device string of local tensors."""
        return "cpu" if self.device_type == "cpu" else f"cuda:{self.device_id}"

    def __str__(self) -> str:
        return f"{self.device_type}:{self.device_id}"

    def __repr__(self) -> str:
        return f"device({self})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return other in (str(self), self.device_type)
        return isinstance(other, Device) and str(other) == str(self)

    def __hash__(self) -> int:
        return hash(str(self))


cpu = Device("cpu")
gpu = Device("gpu")


@dataclass(frozen=True)
class Backend:
    """One chunk type: its array module, its array class and its host copies.

    ``available()`` returns ``None`` when the backend can be used from here, or a sentence
    saying what is missing (checked in the driver, before any task is built).
    ``from_dlpack`` adopts, without a copy, an object whose ``__dlpack_device__`` type is
    ``dlpack_device`` (1: host memory, 2: CUDA); ``torch_device`` is where torch tensors of
    its chunks live (``"cpu"`` or ``"cuda"``).
    """

    device_type: str
    module: Any
    array_type: type
    to_host: Callable[[Any], np.ndarray]
    from_host: Callable[[np.ndarray], Any]
    available: Callable[[], str | None] = lambda: None
    from_dlpack: Callable[[Any], Any] | None = None
    dlpack_device: int = 1
    torch_device: str = "cpu"


_BACKENDS: dict[str, Backend] = {}


def register_backend(backend_: Backend) -> None:
    """Make ``backend_`` the chunk type of its device type (``"cpu"`` stays numpy).

    >>> len(_BACKENDS) >= 1
    True
    """
    if backend_.device_type not in DEVICE_TYPES:
        raise ValueError(
            f"`device_type` must be one of {DEVICE_TYPES}, got {backend_.device_type!r}"
        )
    if backend_.device_type == "cpu" and "cpu" in _BACKENDS:
        raise ValueError("the 'cpu' backend is numpy and cannot be replaced")
    _BACKENDS[backend_.device_type] = backend_


register_backend(Backend("cpu", np, np.ndarray, lambda a: a, lambda a: a))


def _cupy_available() -> str | None:
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # CUDA driver or runtime missing
        return f"CuPy is installed but CUDA is not usable ({type(error).__name__}: {error})"
    return None if count > 0 else "CuPy is installed but no CUDA device is visible"


if cupy is not None:  # pragma: no cover - needs CuPy
    register_backend(
        Backend(
            "gpu",
            cupy,
            cupy.ndarray,
            cupy.asnumpy,
            cupy.asarray,
            _cupy_available,
            from_dlpack=cupy.from_dlpack,
            dlpack_device=2,
            torch_device="cuda",
        )
    )


_current = [cpu]


def sanitize_device(device: Device | str | None) -> Device:
    """The :class:`Device` meant by ``device``; ``None`` is the current default device.

    Raises ValueError for an unknown device and RuntimeError (from the driver, before any
    task) when the device's backend cannot run here, naming what is missing.

    >>> sanitize_device("cpu:0")
    device(cpu:0)
    """
    if device is None:
        return _current[0]
    if isinstance(device, Device):
        result = device
    elif isinstance(device, str):
        kind, _, index = device.strip().lower().partition(":")
        if kind == "cuda":
            kind = "gpu"
        if kind not in DEVICE_TYPES or (index and not index.isdigit()):
            raise ValueError(f"`device` must be 'cpu', 'gpu' or 'gpu:<n>', got {device!r}")
        result = Device(kind, int(index or 0))
    else:
        raise TypeError(f"`device` must be a Device or a str, got {type(device).__name__}")
    backend(result)  # raises if it cannot be used
    return result


def backend(device: Device | str) -> Backend:
    """The backend of ``device``; RuntimeError, naming what is missing, if there is none."""
    kind = device.device_type if isinstance(device, Device) else str(device)
    found = _BACKENDS.get(kind)
    if found is None:
        raise RuntimeError(
            f"device {str(device)!r} needs CuPy and a CUDA GPU: CuPy is not installed"
        )
    missing = found.available()
    if missing is not None:
        raise RuntimeError(f"device {str(device)!r} cannot be used: {missing}")
    return found


def _backend_of(chunk) -> Backend:
    for found in reversed(_BACKENDS.values()):
        if isinstance(chunk, found.array_type):
            return found
    return _BACKENDS["cpu"]  # numpy scalars, python numbers, lists


def namespace_of(chunk_or_meta) -> Any:
    """The array module of a chunk or meta: ``numpy``, or the GPU backend's (CuPy).

    >>> namespace_of(np.zeros(2)).__name__
    'numpy'
    """
    return _backend_of(chunk_or_meta).module


def concatenate(parts: Sequence, axis: int | None):
    """Chunks joined along ``axis`` in their own namespace; a single one as it is.

    >>> concatenate([np.zeros(1), np.ones(2)], 0)
    array([0., 1., 1.])
    """
    return parts[0] if len(parts) == 1 else namespace_of(parts[0]).concatenate(parts, axis=axis)


def device_of(chunk_or_meta) -> Device:
    """The :class:`Device` type a chunk or meta lives on (device id 0).

    >>> device_of(np.zeros(2))
    device(cpu:0)
    """
    return cpu if _backend_of(chunk_or_meta).device_type == "cpu" else gpu


def meta(dtype, ndim: int, device: Device | str | None = "cpu"):
    """The empty array of ``ndim`` dimensions standing for a chunk type on ``device``.

    >>> meta(np.float32, 2)
    array([], shape=(0, 0), dtype=float32)
    """
    xp = backend(sanitize_device(device)).module
    return xp.empty((0,) * ndim, dtype=dtype)


def empty_like_meta(meta_, shape, dtype=None):
    """An uninitialised chunk of ``shape`` in ``meta_``'s namespace (a task function).

    >>> empty_like_meta(meta(np.int8, 1), (3,)).shape
    (3,)
    """
    xp = namespace_of(meta_)
    return xp.empty(tuple(shape), dtype=meta_.dtype if dtype is None else dtype)


def to_host(chunk) -> np.ndarray:
    """``chunk`` as a numpy array: an explicit device-to-host copy (none for numpy).

    >>> to_host(np.arange(3))
    array([0, 1, 2])
    """
    return _backend_of(chunk).to_host(chunk)


def to_device(chunk, device: Device | str):
    """``chunk`` copied to ``device`` (through host memory; none if already there).

    >>> to_device(np.arange(2), "cpu")
    array([0, 1])
    """
    target = backend(sanitize_device(device))
    if isinstance(chunk, target.array_type):
        return chunk
    return target.from_host(to_host(chunk))


def from_dlpack(value, device: Device | str):
    """``value`` as a chunk on ``device`` without a copy (DLPack), or ``None`` if it cannot be.

    A chunk of ``device`` is returned as it is; an object living in the memory ``device``'s
    backend reads (a CUDA torch tensor for CuPy) is adopted zero-copy; anything else is
    ``None``, and the caller copies it explicitly (:func:`to_device`).

    >>> from_dlpack(np.arange(2), "cpu")
    array([0, 1])
    """
    target = backend(device)
    if isinstance(value, target.array_type):
        return value
    if target.from_dlpack is None or not hasattr(value, "__dlpack_device__"):
        return None
    if value.__dlpack_device__()[0] != target.dlpack_device:
        return None
    return target.from_dlpack(value)


def from_torch(tensor, like):
    """The torch result ``tensor``, computed from the chunk ``like``, as a chunk of its device.

    On the host a numpy view; on a device the tensor is adopted through DLPack
    without a copy (a CUDA tensor for CuPy), or copied there explicitly when it
    lives elsewhere. Nothing goes through host memory implicitly.

    >>> from_torch(_torch.torch().ones(2), np.empty(0)).tolist()
    [1.0, 1.0]
    """
    device = device_of(like)
    if device.device_type == "cpu":
        return _torch.from_torch(tensor)
    adopted = from_dlpack(tensor, device)
    return adopted if adopted is not None else to_device(_torch.from_torch(tensor), device)


def torch_device(device: Device | str) -> str:
    """The torch device of ``device``'s chunks: ``"cpu"``, or ``"cuda:<id>"`` for CuPy.

    >>> torch_device("cpu")
    'cpu'
    """
    device = sanitize_device(device)
    kind = backend(device).torch_device
    return "cpu" if kind == "cpu" else f"{kind}:{device.device_id}"


def use_device(device: Device | str | None = None) -> None:
    """Make ``device`` the default of factories called without ``device=``.

    >>> use_device("cpu"); get_device()
    device(cpu:0)
    """
    _current[0] = cpu if device is None else sanitize_device(device)


def get_device() -> Device:
    """The default device of factories (``cpu`` unless :func:`use_device` changed it)."""
    return _current[0]
