"""Heat's ``convolve``: scalars and sequences as operands, Heat's result type, ``stride`` and
batches along the last axis, composed of :mod:`dndask._signal`'s graphs.

Heat's own limits on the layout (a kernel whose chunks are longer than the signal's, an
unbalanced kernel) are not copied: any layout is convolved.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import _dndarray, _factories, _signal
from . import _adapt, types

__all__ = ["convolve"]


def _operand(value, what: str, comm):
    """A DNDarray for Heat's signal or filter: a scalar is one element, a sequence an array,
    each of the Heat type ``ht.array`` gives it (Python floats are float32)."""
    if isinstance(value, _dndarray.DNDarray):
        return value
    if isinstance(value, numbers.Number):
        value = [value]
    try:
        heat_type = types.heat_type_of(value)
        host = np.asarray(value, dtype=heat_type.dtype)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"non-supported type for {what}: {type(value).__name__}") from None
    return _adapt.face(_factories.array(host, comm=comm))


def convolve(a, v, mode: str = "full", stride: int = 1):
    """Heat's ``convolve``: the discrete linear convolution of ``a`` and ``v``.

    As :func:`dndask.convolve` (the longer operand is the signal), plus Heat's rules:
    scalars and sequences are operands, both are cast to Heat's ``promote_types`` of
    their types, ``stride`` keeps every ``stride``-th output, and a signal of more than
    one axis is a batch of signals along its last axis (split along a batch axis),
    convolved with ``v`` or with ``v``'s matching row. ``"same"`` needs an odd-sized
    kernel and ``stride=1``.

    Examples
    --------
    >>> import dndask.heat as ht
    >>> ht.convolve(ht.ones(5, split=0), ht.arange(3).astype(ht.float), stride=2).tolist()
    [0.0, 3.0, 3.0, 2.0]
    """
    comm = next((x.comm for x in (a, v) if isinstance(x, _dndarray.DNDarray)), None)
    a = _operand(a, "signal", comm)
    v = _operand(v, "filter", a.comm)
    promoted = types.promote_types(types.heat_type_of(a), types.heat_type_of(v))
    a, v = a.astype(promoted), v.astype(promoted)
    if v.shape[-1] > a.shape[-1]:
        a, v = v, a
    if a.ndim > 1:
        if v.ndim > 1 and v.shape[:-1] != a.shape[:-1]:
            raise ValueError(
                f"the batch shapes of the signal and the filter must match, got {a.shape} "
                f"and {v.shape}"
            )
        if a.split is not None and a.split == a.ndim - 1:
            raise ValueError(
                "the signal must be distributed along a batch axis, not along the signal "
                f"axis (split={a.split}); resplit it with `resplit_(axis=0)`"
            )
    elif v.ndim > 1:
        raise ValueError(f"a 1-D signal needs a 1-D filter, got shapes {a.shape} and {v.shape}")
    _signal.check_mode(mode)
    stride = _signal.check_stride(stride)
    if mode == "same" and stride > 1:
        raise ValueError(f"`stride` must be 1 for mode 'same', got {stride}")
    if mode == "same" and v.shape[-1] % 2 == 0:
        raise ValueError(f"mode 'same' needs an odd-sized filter, got size {v.shape[-1]}")
    if a.ndim > 1:
        return _adapt.face(_signal.convolve_batched(a, v, mode, stride))
    return _adapt.face(_signal.convolve_strided(a, v, mode, stride))
