"""Zero-copy conversion between the numpy chunks Dask holds and torch tensors."""

from __future__ import annotations

import numpy as np
import torch


def to_torch(array: np.ndarray) -> torch.Tensor:
    """A torch view of a chunk (a copy if it is read-only or not in native byte order).

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
        return torch.from_dlpack(array)  # a device chunk (CuPy): zero-copy, on its device
    array = np.asarray(array)
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    elif not array.flags.writeable:
        array = array.copy()
    return torch.from_numpy(array)


def from_torch(tensor: torch.Tensor) -> np.ndarray:
    """A numpy view of a CPU tensor (CUDA tensors are copied to the host).

    >>> from_torch(torch.ones(2)).tolist()
    [1.0, 1.0]
    """
    tensor = tensor.detach()
    if tensor.device.type != "cpu":
        tensor = tensor.cpu()
    if tensor.is_conj():
        tensor = tensor.resolve_conj()
    if tensor.is_neg():
        tensor = tensor.resolve_neg()
    if tensor.dtype == torch.bfloat16:
        raise TypeError("torch.bfloat16 has no numpy equivalent; cast it to float32 first")
    return tensor.numpy()


def as_numpy_chunk(obj: object) -> np.ndarray:
    """Any local piece (numpy, torch, array-like) as a numpy array."""
    if isinstance(obj, torch.Tensor):
        return from_torch(obj)
    return np.asarray(obj)
