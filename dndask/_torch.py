"""torch interop, and the one place dndask imports torch: lazily, on first use.

torch takes seconds to import and adds some 200 MiB to every process that loads it,
while most of dndask (the arrays, their distribution, the math) runs on numpy chunks.
So ``import dndask`` does not import torch, and neither does a worker that runs only
numpy tasks. Every other module reaches torch through this one:

- :func:`torch` returns the module, importing it on the first call: the code that
  needs torch (``lshape_map``, ``larray``, ``map_local``, ``per_rank`` pieces, TSQR,
  ``histc``) calls it when it runs;
- :func:`is_tensor` and :func:`is_dtype` answer without importing torch: no object can
  be a tensor (or a torch dtype) unless torch is already loaded;
- the ``LshapeMap`` class (a ``torch.Tensor`` subclass) is made on first access through
  the module's ``__getattr__``; ``pickle`` finds it the same way.

Type hints that name torch import it under ``TYPE_CHECKING`` only.
``tests/test_imports.py`` checks that no other module imports torch, and that this
one imports it only inside :func:`torch`.
"""

from __future__ import annotations

import functools
import sys
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import torch as torch_module

__all__ = [  # and ``LshapeMap``, made on first access (module ``__getattr__``)
    "as_numpy_chunk",
    "from_torch",
    "is_dtype",
    "is_tensor",
    "lshape_map",
    "to_torch",
    "torch",
]


def torch() -> ModuleType:
    """The ``torch`` module, imported on the first call (the one lazy import of dndask).

    >>> torch().float32
    torch.float32
    """
    import torch as module  # the documented exception: see the module docstring

    return module


def is_tensor(obj: object) -> bool:
    """Whether ``obj`` is a ``torch.Tensor``, without importing torch.

    >>> is_tensor(np.ones(2)), is_tensor(torch().ones(2))
    (False, True)
    """
    module = sys.modules.get("torch")
    return module is not None and isinstance(obj, module.Tensor)


def is_dtype(obj: object) -> bool:
    """Whether ``obj`` is a ``torch.dtype``, without importing torch.

    >>> is_dtype(np.float32), is_dtype(torch().float32)
    (False, True)
    """
    module = sys.modules.get("torch")
    return module is not None and isinstance(obj, module.dtype)


def to_torch(array: np.ndarray) -> torch_module.Tensor:
    """A torch view of a chunk (a copy if it is read-only, has negative strides or is not in
    native byte order).

    Device chunks (CuPy) go through DLPack: the tensor is on the chunk's device.

    torch holds native byte order only; big-endian data (common in HDF5 and
    netCDF files) is converted.

    >>> t = to_torch(np.arange(3))
    >>> t.dtype
    torch.int64
    >>> to_torch(np.arange(3, dtype=">i4")).tolist()
    [0, 1, 2]
    """
    if not isinstance(array, np.ndarray) and hasattr(array, "__dlpack__"):
        return torch().from_dlpack(array)  # a device chunk (CuPy): zero-copy, on its device
    array = np.asarray(array)
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    elif not array.flags.writeable or any(s < 0 for s in array.strides):
        array = array.copy()  # torch holds neither read-only memory nor negative strides
    return torch().from_numpy(array)


def from_torch(tensor: torch_module.Tensor) -> np.ndarray:
    """A numpy view of a CPU tensor (CUDA tensors are copied to the host).

    >>> from_torch(torch().ones(2)).tolist()
    [1.0, 1.0]
    """
    tensor = tensor.detach()
    if tensor.device.type != "cpu":
        tensor = tensor.cpu()
    if tensor.is_conj():
        tensor = tensor.resolve_conj()
    if tensor.is_neg():
        tensor = tensor.resolve_neg()
    if tensor.dtype == torch().bfloat16:
        raise TypeError("torch.bfloat16 has no numpy equivalent; cast it to float32 first")
    return tensor.numpy()


def as_numpy_chunk(obj: object) -> np.ndarray:
    """Any local piece (numpy, torch, array-like) as a numpy array."""
    if is_tensor(obj):
        return from_torch(obj)
    return np.asarray(obj)


def lshape_map(table: np.ndarray) -> torch_module.Tensor:
    """The ``LshapeMap`` tensor of a ``(size, ndim)`` table of local shapes.

    >>> m = lshape_map(np.array([[2, 4], [1, 4]]))
    >>> type(m).__name__, m.copy()[:, 0].tolist()
    ('LshapeMap', [2, 1])
    """
    return _lshape_map_class().of(table)


@functools.cache
def _lshape_map_class() -> type:
    """``LshapeMap``, a ``torch.Tensor`` subclass: made once, when torch is first needed."""
    module = torch()

    class LshapeMap(module.Tensor):
        """The ``(size, ndim)`` int64 table of local shapes: a torch tensor with ``copy()``.

        Heat users call torch methods on it; the seed notebook also calls ``.copy()``.
        """

        @staticmethod
        def of(table: np.ndarray) -> LshapeMap:
            """The map of a numpy table (any integer type; stored as int64)."""
            tensor = module.from_numpy(np.ascontiguousarray(table, dtype=np.int64))
            return tensor.as_subclass(LshapeMap)

        def copy(self) -> LshapeMap:
            """A copy that can be edited freely (same as ``clone()``)."""
            return self.clone()

        def __repr__(self, *, tensor_contents=None) -> str:
            return repr(self.as_subclass(module.Tensor))

    LshapeMap.__module__ = __name__
    LshapeMap.__qualname__ = "LshapeMap"
    return LshapeMap


def __getattr__(name: str) -> object:
    """``LshapeMap`` on first access (importing torch); pickle resolves it here too."""
    if name == "LshapeMap":
        return _lshape_map_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
