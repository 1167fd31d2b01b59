"""Heat's ``ht.linalg``: the core's linear algebra, returning face arrays."""

from __future__ import annotations

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
__all__ = sorted({*__all__, "expm"})
