"""Argument checks and operand conversions shared by every statistics function.

Nothing here builds a graph, except :func:`distributed_like`, which sends an
in-memory operand to the ranks.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import _dndarray, _factories, _torch, _types


def check_array(a, fn: str, name: str = "a") -> _dndarray.DNDarray:
    if not isinstance(a, _dndarray.DNDarray):
        raise TypeError(f"`{name}` of `{fn}` must be a DNDarray, got {type(a).__name__}")
    return a


def check_kind(dtype: np.dtype, kinds: str, fn: str, name: str, what: str) -> None:
    if np.dtype(dtype).kind not in kinds:
        raise TypeError(f"`{name}` of `{fn}` must have {what} dtype, got {np.dtype(dtype)}")


def check_bool(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"`{name}` must be a bool, got {type(value).__name__}")
    return bool(value)


def check_int(value, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an int, got {type(value).__name__}")
    return int(value)


def check_real(value, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a real number, got {type(value).__name__}")
    return value


def to_numpy(value, name: str) -> np.ndarray:
    """A small operand (``q``, bin edges, in-memory weights) as a numpy array."""
    if isinstance(value, _dndarray.DNDarray):
        return value.numpy()
    if _torch.is_tensor(value):
        return value.detach().cpu().numpy()
    try:
        out = np.asarray(value)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be array-like, got {type(value).__name__}") from None
    if out.dtype.kind not in "biufc":
        raise TypeError(f"`{name}` must hold numbers, got {out.dtype}")
    return out


def shape_of(value) -> tuple[int, ...]:
    if isinstance(value, _dndarray.DNDarray) or _torch.is_tensor(value):
        return tuple(value.shape)
    return np.shape(value)


def dtype_of(value) -> np.dtype:
    if isinstance(value, _dndarray.DNDarray):
        return value.dtype
    if _torch.is_tensor(value):
        return _types.canonical_dtype(value.dtype, "weights")
    return np.asarray(value).dtype


def distributed_like(value, like: _dndarray.DNDarray, name: str) -> _dndarray.DNDarray:
    """``value`` (same shape as ``like``) as a DNDarray on ``like``'s comm.

    In-memory data is sent to the ranks split like ``like`` (it is in the
    driver already); :func:`dndask._ops.align` then matches the counts.
    """
    if isinstance(value, _dndarray.DNDarray):
        return value
    data = to_numpy(value, name)
    split = like.split
    if split is not None and data.shape[split] != like.shape[split]:
        split = None
    return _factories.array(data, split=split, comm=like.comm, device=like.device)


def same_shape_weights(weights, like: _dndarray.DNDarray, fn: str, name: str):
    """Real ``weights`` of ``like``'s shape (``like`` is argument ``name`` of ``fn``), distributed.

    The checks of :func:`dndask.bincount` and :func:`dndask.histogram`.
    """
    check_kind(dtype_of(weights), "biuf", fn, "weights", "a real numeric")
    if shape_of(weights) != like.shape:
        raise ValueError(
            f"`weights` must have the shape of `{name}` {like.shape}, got {shape_of(weights)}"
        )
    return distributed_like(weights, like, "weights")
