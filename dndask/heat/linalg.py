"""Heat's ``ht.linalg``: the core's linear algebra, returning face arrays."""

from __future__ import annotations

import numbers

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


def svd(a, full_matrices: bool = False, compute_uv: bool = True, **tuning):
    """Heat's ``svd``: Heat's tuning keywords (``qr_procs_to_merge``, ``r_max_zolopd``, ...)
    are accepted and change nothing (dndask runs one TSQR-based SVD)."""
    unknown = set(tuning) - _HEAT_SVD_TUNING
    if unknown:
        raise TypeError(f"`svd` got unexpected keywords {sorted(unknown)}")
    return _adapt.face(_core_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv))


_HEAT_SVD_TUNING = frozenset({"qr_procs_to_merge", "r_max_zolopd", "r", "rtol", "safetyshift"})
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
