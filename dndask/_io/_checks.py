"""Argument checks on the driver, and the optional packages each format needs.

Everything here is pure: a bad call raises before any file or cluster is
touched. :func:`require` also runs on the workers, which import the format
packages themselves.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

import numpy as np

from .. import _dndarray, _layout


def require(module: str, caller: str):
    """Import an optional dependency, or say which extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"`{caller}` needs the {module} package: pip install 'dndask[io]'"
        ) from exc


def check_name(value: object, name: str, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str) or not value:
        kind = "None or a non-empty str" if optional else "a non-empty str"
        raise TypeError(f"`{name}` must be {kind}, got {value!r}")


def check_split_type(split: object, names: bool) -> None:
    """Reject a ``split`` of the wrong type before any file or cluster is touched."""
    if split is None or (isinstance(split, int) and not isinstance(split, bool)):
        return
    if names and isinstance(split, str):
        return
    kinds = "None, an int or a dimension name" if names else "None or an int"
    raise TypeError(f"`split` must be {kinds}, got {type(split).__name__}")


def split_axis(split, shape: tuple[int, ...], dims: Sequence[str] | None, what: str):
    """``split`` (an axis or a dimension name) as an axis of ``shape``."""
    if isinstance(split, str):
        if not dims or split not in dims:
            raise ValueError(
                f"`split` must be None, an axis or a dimension of {what} "
                f"{tuple(dims or ())}, got {split!r}"
            )
        return list(dims).index(split)
    return _layout.normalize_axis(split, len(shape), "split")


def check_dndarray(a: object) -> None:
    if not isinstance(a, _dndarray.DNDarray):
        raise TypeError(f"`a` must be a DNDarray, got {type(a).__name__}")


def check_loadable(dtype: str, what: str) -> np.dtype:
    """The dtype data loads as: the file's, in native byte order (big-endian files are common)."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "biufc":
        raise TypeError(f"{what} has dtype {dtype}; only boolean and numeric data loads")
    return dtype.newbyteorder("=")
