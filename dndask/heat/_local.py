"""Heat's local tensor as a live object: ``larray`` keeps its identity and writes back.

In Heat, ``a.larray`` *is* the process's tensor: in-place methods change it, and
changing it (``a.larray.copy_(t)``, ``a.lloc[0, 0] = 1``, ``a.larray = t``) changes
the array. The face gives the driver's rank, rank 0, the same contract:

- the first ``a.larray`` fetches rank 0's chunk and keeps the tensor;
- when the array's graph changes (an in-place method, ``out=a``), the new chunk is
  copied *into* that tensor, so it stays the same object (a new tensor only where
  the chunk's shape or dtype changed);
- when the tensor was changed in place (torch counts that in ``tensor._version``),
  the next use of the array first replaces rank 0's chunk by the tensor's values.

Only arrays whose ``larray`` was read carry a live tensor; nothing else pays.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import dask.array as da
import numpy as np

from .. import _dndarray, _torch, _types
from . import types

if TYPE_CHECKING:
    import torch

__all__ = ["LIVE", "adopt", "fetch", "refresh", "set_local", "write_back"]

# the key of the live tensor in an array's state: (tensor, its _version when synced)
LIVE = "_heat_live"
_SYNCING = "_heat_syncing"


def fetch(arr) -> torch.Tensor:
    """Rank 0's chunk as the array's live tensor (see the module docstring)."""
    state = arr.__dict__
    live = state.get(LIVE)
    if live is not None and live[0]._version == live[1] and live[2] == arr._array.name:
        return live[0]
    fresh = _dndarray.DNDarray.larray.fget(arr)
    return _keep(arr, fresh, live[0] if live is not None else None)


def _keep(arr, fresh: torch.Tensor, old: torch.Tensor | None) -> torch.Tensor:
    if old is not None and old.shape == fresh.shape and old.dtype == fresh.dtype:
        with _torch.torch().no_grad():
            old.copy_(fresh)
        tensor = old
    else:
        tensor = fresh if fresh.is_contiguous() else fresh.contiguous()
    arr.__dict__[LIVE] = (tensor, tensor._version, arr.__dict__["_array"].name)
    return tensor


def adopt(arr, tensor: torch.Tensor) -> None:
    """``tensor`` (the array's whole data, as given to ``ht.array(..., copy=False)``) is live."""
    if (
        tensor.device.type == "cpu"
        and tuple(tensor.shape) == arr.shape
        and _types.canonical_dtype(tensor.dtype) == arr.__dict__["_array"].dtype
    ):
        arr.__dict__[LIVE] = (tensor, tensor._version, arr.__dict__["_array"].name)


def refresh(arr) -> None:
    """After the graph changed: copy the new chunk into the live tensor, if there is one."""
    state = arr.__dict__
    if state.get(LIVE) is None or state.get(_SYNCING):
        return
    old = state[LIVE][0]
    _keep(arr, _dndarray.DNDarray.larray.fget(arr), old)


def write_back(arr) -> None:
    """If the live tensor was changed in place, make its values rank 0's chunk."""
    state = arr.__dict__
    live = state.get(LIVE)
    if live is None or live[0]._version == live[1] or state.get(_SYNCING):
        return
    _replace_rank0(arr, live[0])


def set_local(arr, tensor) -> None:
    """Heat's ``larray`` setter: ``tensor`` becomes rank 0's chunk (and the live tensor).

    It must be a torch tensor with the array's number of dimensions and its global
    extent on every axis but ``split`` (on ``split`` rank 0's row count may change,
    and the global shape with it). Its dtype and the array's promote to a common one (Heat's rule).
    """
    if not _torch.is_tensor(tensor):
        raise TypeError(f"`larray` must be a torch.Tensor, got {type(tensor).__name__}")
    shape, split = arr.shape, arr.split
    if tensor.ndim != len(shape) or any(
        int(n) != shape[i] for i, n in enumerate(tensor.shape) if i != split
    ):
        raise ValueError(
            f"`larray` must have shape {arr.lshape} (any length along split={split}), "
            f"got {tuple(tensor.shape)}"
        )
    _replace_rank0(arr, tensor)


def _replace_rank0(arr, tensor: torch.Tensor) -> None:
    state = arr.__dict__
    x, split = state["_array"], arr.split
    want = np.dtype(types.promote_types(x.dtype, tensor.dtype).dtype)  # Heat's promotion
    values = tensor.detach().cpu().numpy().astype(want, copy=True)
    if split is None:
        new = da.from_array(values, chunks=values.shape)
    else:
        rest = [slice(None)] * x.ndim
        rest[split] = slice(int(x.chunks[split][0]), None)
        others = x[tuple(rest)].astype(want)
        new = da.concatenate([da.from_array(values, chunks=values.shape), others], axis=split)
        counts = (int(values.shape[split]), *(int(c) for c in x.chunks[split][1:]))
        new = new.rechunk({split: counts})
    out = _dndarray.from_dask(new, split, arr.comm)
    state[_SYNCING] = True
    try:
        arr._set(out.to_dask(), split, out._task_ranks)
    finally:
        state[_SYNCING] = False
    if want != _types.canonical_dtype(tensor.dtype):
        tensor = _torch.torch().from_numpy(values)
    state[LIVE] = (tensor, tensor._version, state["_array"].name)
