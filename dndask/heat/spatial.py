"""Heat's ``ht.spatial``: :mod:`dndask.spatial` with Heat's splits, errors and dtypes.

Heat computes in the operands' promoted type, at least float32 (``int32`` data gives
float32), and refuses operands split along their features or with more than two axes
(NotImplementedError); the core resplits and returns numpy's float type instead.

>>> import dndask.heat as ht
>>> ht.spatial.cdist(ht.ones((2, 3), dtype=ht.int32, split=0), ht.zeros((1, 3))).dtype is ht.float32
True
"""

from __future__ import annotations

import sys

import numpy as np

from .. import spatial as _core
from . import _adapt, types

__all__ = ["cdist", "distance", "manhattan", "rbf"]


def _heat_checks(X, Y) -> np.dtype:
    """Heat's refusals (NotImplementedError) and its result type, before any work."""
    for name, a in (("X", X), ("Y", Y)):
        if a is None or not hasattr(a, "ndim"):
            continue
        if a.ndim > 2:
            raise NotImplementedError(
                f"`{name}` must be 2-D (as in Heat), got shape {tuple(a.shape)}"
            )
    if Y is None:
        if getattr(X, "split", None) not in (None, 0):
            raise NotImplementedError(
                f"`X` split along {X.split} is not supported (as in Heat): split 0 or None"
            )
    elif (
        hasattr(X, "split")
        and hasattr(Y, "split")
        and (X.split not in (None, 0) or (X.split is None and Y.split not in (None, 0)))
    ):
        raise NotImplementedError(
            f"splits X.split={X.split}, Y.split={Y.split} are not supported (as in Heat): "
            "split 0 or None"
        )
    if not hasattr(X, "dtype"):
        return None
    kind = types.promote_types(X.dtype, types.float32)
    if Y is not None and hasattr(Y, "dtype"):
        kind = types.promote_types(types.promote_types(X.dtype, Y.dtype), types.float32)
    return np.dtype(kind)


def cdist(X, Y=None, quadratic_expansion: bool = False):
    """Heat's ``cdist`` (see :func:`dndask.spatial.cdist`)."""
    dtype = _heat_checks(X, Y)
    return _adapt.face(_core.cdist(X, Y, quadratic_expansion, dtype=dtype))


def rbf(X, Y=None, sigma: float = 1.0, quadratic_expansion: bool = False):
    """Heat's ``rbf`` (see :func:`dndask.spatial.rbf`)."""
    dtype = _heat_checks(X, Y)
    return _adapt.face(_core.rbf(X, Y, sigma, quadratic_expansion, dtype=dtype))


def manhattan(X, Y=None, expand: bool = False):
    """Heat's ``manhattan`` (see :func:`dndask.spatial.manhattan`)."""
    dtype = _heat_checks(X, Y)
    return _adapt.face(_core.manhattan(X, Y, expand, dtype=dtype))


# Heat's ``ht.spatial.distance`` is the module holding these functions
distance = sys.modules[__name__]
