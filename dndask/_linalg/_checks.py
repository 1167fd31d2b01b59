"""Checks and conversions of the operands, shared by products, norms and factorizations.

Errors name the operand (``a``, ``b``, ``x``) and describe its shape and split.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import _dndarray, _per_rank, _torch


def _describe(x) -> str:
    return f"shape {tuple(x.shape)} (split {x.split})"


def _check_numeric(value, name: str) -> None:
    kind = value.dtype.kind
    if kind not in "biufc":
        raise TypeError(f"`{name}` must have a boolean or numeric dtype, got {value.dtype}")


def _comm_of(values: Sequence, names: Sequence[str], fname: str):
    """The common comm of the DNDarray operands; checks types first."""
    dnds = []
    for value, name in zip(values, names, strict=True):
        if isinstance(value, _dndarray.DNDarray):
            dnds.append(value)
        elif _torch.is_tensor(value):
            _check_numeric(_torch.from_torch(value), name)
        elif isinstance(value, np.ndarray):
            _check_numeric(value, name)
        else:
            raise TypeError(
                f"`{name}` must be a DNDarray, numpy array or torch tensor, "
                f"got {type(value).__name__}"
            )
    if not dnds:
        raise TypeError(f"`{fname}` needs at least one DNDarray operand, got none")
    comm = dnds[0].comm
    for value in dnds[1:]:
        if value.comm != comm:
            raise ValueError(
                f"operands of `{fname}` must share a comm, got {comm!r} and {value.comm!r}"
            )
    return comm


def _as_dndarray(value, comm) -> _dndarray.DNDarray:
    """A numpy/torch operand sent from the driver to rank 0 (an unsplit DNDarray)."""
    if isinstance(value, _dndarray.DNDarray):
        return value
    if _torch.is_tensor(value):
        value = _torch.from_torch(value)
    return _per_rank.scatter(np.asarray(value), None, comm)


def _operands(a, b, fname: str):
    """``a`` and ``b`` checked and as DNDarrays on their common comm."""
    comm = _comm_of((a, b), ("a", "b"), fname)
    return _as_dndarray(a, comm), _as_dndarray(b, comm)


def _check_array(x, name: str = "x") -> None:
    if not isinstance(x, _dndarray.DNDarray):
        raise TypeError(f"`{name}` must be a DNDarray, got {type(x).__name__}")


def _check_bool(value, name: str) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"`{name}` must be a bool, got {type(value).__name__}")


def _real_float(x: _dndarray.DNDarray) -> _dndarray.DNDarray:
    """``x`` as numpy's linalg sees it: integers and booleans become float64."""
    if x.dtype.kind in "fc":
        return x
    return x.astype(np.float64)


def _norm_dtype(x: _dndarray.DNDarray) -> np.dtype:
    """The real dtype of ``x``'s norms and singular values."""
    return np.empty(0, dtype=x.dtype).real.dtype
