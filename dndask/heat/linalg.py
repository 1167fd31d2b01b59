"""Heat's ``ht.linalg``: the core's linear algebra, returning face arrays."""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from .. import _dndarray, _manipulation
from .. import linalg as _core_linalg
from . import _adapt

__all__ = list(_core_linalg.__all__)

globals().update({name: _adapt.wrap(getattr(_core_linalg, name)) for name in __all__})


def matmul(a, b, allow_resplit: bool = False):
    """Heat's ``matmul``: ``allow_resplit`` is accepted (dndask plans every split pair)."""
    if not isinstance(allow_resplit, bool):
        raise TypeError(f"`allow_resplit` must be a bool, got {type(allow_resplit).__name__}")
    return _adapt.face(_core_linalg.matmul(a, b))


def _face_tuple(result):
    """A core named tuple (``QR``, ``SVD``) with face arrays in it."""
    if isinstance(result, tuple) and hasattr(result, "_fields"):
        return type(result)._make(_adapt.face(v) for v in result)
    return _adapt.face(result)


def qr(a, mode: str = "reduced", procs_to_merge: int = 2):
    """Heat's ``qr``: modes ``"reduced"`` and ``"r"`` only ("complete" and "raw" are a
    ``NotImplementedError``), float and complex inputs only (others are a ``TypeError``);
    ``procs_to_merge`` is the TSQR's merge width (0: all ranks at once)."""
    if not isinstance(a, _dndarray.DNDarray):
        raise TypeError(f"`a` must be a DNDarray, got {type(a).__name__}")
    if not isinstance(mode, str):
        raise TypeError(f"`mode` must be a str, got {type(mode).__name__}")
    if mode in ("complete", "raw"):
        raise NotImplementedError(f"`qr` with mode={mode!r} is not supported (as in Heat)")
    if mode not in ("reduced", "r"):
        raise ValueError(f"`mode` must be 'reduced' or 'r', got {mode!r}")
    _check_merge(procs_to_merge, "procs_to_merge")
    if a.dtype.kind not in "fc":
        raise TypeError(f"`a` of `qr` must be float32, float64 or complex, got {a.dtype}")
    return _face_tuple(_core_linalg.qr(a, mode=mode, procs_to_merge=procs_to_merge))


def _check_merge(value, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an int, got {type(value).__name__}")
    if value < 0 or value == 1:
        raise ValueError(f"`{name}` must be 0 (all ranks at once) or >= 2, got {value}")


def _tall_skinny_or_short_fat(a) -> bool:
    """Heat's TSQR cases: rows split and a chunk with at least ``n`` rows, or columns split
    and a chunk with at least ``m`` columns."""
    counts = a.distribution.counts
    if a.split == 0:
        return max(counts) >= a.shape[1]
    return a.split == 1 and max(counts) >= a.shape[0]


def svd(
    a,
    full_matrices: bool = False,
    compute_uv: bool = True,
    qr_procs_to_merge: int = 2,
    r_max_zolopd: int = 8,
):
    """Heat's ``svd``: ``(U, S, Vh)`` of a 2-D float32/float64 matrix.

    Heat's checks: ``full_matrices=True`` is a ``NotImplementedError``, a non-2-D
    ``a`` a ``ValueError``, a non-float ``a`` a ``TypeError``. ``qr_procs_to_merge``
    is the TSQR's merge width. Where Heat would switch to its Zolotarev polar
    decomposition (a distributed matrix that is neither tall-skinny nor short-fat,
    see :func:`_tall_skinny_or_short_fat`) dndask runs the same TSQR-based SVD, and
    warns with a ``UserWarning`` as Heat does; ``r_max_zolopd`` (0 to 8) is checked as
    Heat checks it there (0 is a ``ValueError``) and changes nothing else.
    """
    if full_matrices:
        raise NotImplementedError("`svd` with full_matrices=True is not supported (as in Heat)")
    if not isinstance(a, _dndarray.DNDarray):
        raise TypeError(f"`a` must be a DNDarray, got {type(a).__name__}")
    _check_merge(qr_procs_to_merge, "qr_procs_to_merge")
    if (
        isinstance(r_max_zolopd, bool)
        or not isinstance(r_max_zolopd, numbers.Integral)
        or not 0 <= r_max_zolopd <= 8
    ):
        raise ValueError(f"`r_max_zolopd` must be an int in [0, 8], got {r_max_zolopd!r}")
    if a.ndim != 2:
        raise ValueError(f"`a` of `svd` must be 2-D, got {a.ndim} dimensions")
    if a.dtype not in (np.float32, np.float64):
        raise TypeError(f"`a` of `svd` must be float32 or float64, got {a.dtype}")
    if a.is_distributed() and not _tall_skinny_or_short_fat(a):
        warnings.warn(
            f"`svd` of a distributed matrix that is neither tall-skinny nor short-fat "
            f"(shape {a.shape}, split {a.split}): Heat uses its costly Zolotarev path here; "
            "dndask runs its TSQR-based SVD, which gathers the R factor (n x n) on one rank",
            UserWarning,
            stacklevel=2,
        )
        if r_max_zolopd < 1:
            raise ValueError(f"`r_max_zolopd` must be in [1, 8] here, got {r_max_zolopd}")
    result = _core_linalg.svd(a, compute_uv=compute_uv, procs_to_merge=qr_procs_to_merge)
    return _face_tuple(result)


expm = globals()["matrix_exp"]  # Heat's alias
__all__ = sorted({*__all__, "expm", "transpose"})


def _square_floats(a, name: str) -> None:
    """Heat's ``det``/``inv`` checks: float, square in the last two axes, else RuntimeError."""
    if not isinstance(a, _dndarray.DNDarray):
        raise TypeError(f"`a` of `{name}` must be a DNDarray, got {type(a).__name__}")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"`a` of `{name}` must be square in its last two axes, got {a.shape}")
    if a.to_dask().dtype.kind not in "fc":
        raise RuntimeError(f"`a` of `{name}` must be floating, got {a.to_dask().dtype}")


def det(a):
    """Heat's ``det``: a non-square or integer ``a`` is a ``RuntimeError`` (Heat's)."""
    _square_floats(a, "det")
    return _adapt.face(_core_linalg.det(a))


def inv(a):
    """Heat's ``inv``: a non-square or integer ``a`` is a ``RuntimeError`` (Heat's)."""
    _square_floats(a, "inv")
    return _adapt.face(_core_linalg.inv(a))


def transpose(a, axes=None):
    """Heat's ``transpose``: a non-int axis in a tuple is a TypeError, any other a ValueError."""
    if axes is not None:
        if isinstance(axes, list):
            axes = tuple(axes)
        if isinstance(axes, str):
            raise TypeError(f"`axes` must be a tuple of ints, got {axes!r}")
        if not isinstance(axes, tuple):
            raise ValueError(f"`axes` must be a tuple of ints, got {axes!r}")
        for v in axes:
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError(f"`axes` must hold ints, got {v!r}")
        if isinstance(a, _dndarray.DNDarray) and len(axes) != a.ndim:
            raise ValueError(f"`axes` must name all {a.ndim} axes, got {axes}")
    return _adapt.face(_manipulation.transpose(a, axes))
