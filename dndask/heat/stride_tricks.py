"""Heat's ``heat.core.stride_tricks`` on the face: ``broadcast_shape`` of two shapes.

Every other name resolves through the face's namespace.
"""

from __future__ import annotations

import builtins as _builtins

import numpy as _np

from . import _namespace

__all__ = ["broadcast_shape"]


def broadcast_shape(shape_a, shape_b) -> tuple:
    """Heat's ``broadcast_shape`` of two shapes (ValueError if they do not broadcast).

    >>> import dndask.heat as ht
    >>> ht.broadcast_shape((5, 1, 3), (4, 1))
    (5, 4, 3)
    """
    try:
        return tuple(_builtins.int(n) for n in _np.broadcast_shapes(tuple(shape_a), tuple(shape_b)))
    except ValueError:
        raise ValueError(f"shapes {shape_a} and {shape_b} cannot be broadcast together") from None


def __getattr__(name: str) -> object:
    return _namespace.resolve(__name__, name)
