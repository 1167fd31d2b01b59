"""Heat's ``heat.core.rounding`` on the face: ``modf`` and ``round`` with Heat's ``out``
and ``dtype``, ``sign`` of complex numbers as Heat gives it.

The other rounding functions (``floor``, ``clip``, ...) are the base layer's; every other
name resolves through the face's namespace.
"""

from __future__ import annotations

import dndask as _core

from .. import _dndarray, _ufuncs_extra
from . import _adapt, _base, _extras, _namespace, types

__all__ = ["modf", "round", "sign"]

sign = _extras.heat_sign(_base.BASE["sign"])


def modf(x, out=None):
    """Heat's ``modf``: ``(fractional, integral)``, into the pair ``out`` if given."""
    if not isinstance(x, _dndarray.DNDarray):
        raise TypeError(f"`x` of `modf` must be a DNDarray, got {type(x).__name__}")
    frac, whole = _ufuncs_extra.modf(x)
    if out is None:
        return _adapt.face(frac), _adapt.face(whole)
    if not isinstance(out, tuple):
        raise TypeError(f"`out` of `modf` must be a tuple of two, got {type(out).__name__}")
    if len(out) != 2:
        raise ValueError(f"`out` of `modf` must be a tuple of two, got {len(out)} items")
    _adapt.check_out(out[0], frac, "modf")  # both checked before either is written
    _adapt.check_out(out[1], whole, "modf")
    _adapt.into(out[0], frac, "modf")
    _adapt.into(out[1], whole, "modf")
    _adapt.face(out)  # started; Heat returns the pair itself
    return out


def round(x, decimals=0, out=None, dtype=None):
    """Heat's ``round``: ``dtype=`` casts the result; see :func:`dndask.round`."""
    if dtype is not None and not (isinstance(dtype, type) and issubclass(dtype, types.datatype)):
        raise TypeError(f"`dtype` of `round` must be a Heat type, got {dtype!r}")
    if out is not None and not isinstance(out, _dndarray.DNDarray):
        raise TypeError(f"`out` of `round` must be a DNDarray, got {type(out).__name__}")
    result = _core.round(x, decimals)
    if dtype is not None:
        result = result.astype(dtype)
    if out is not None:
        return _adapt.face(_adapt.into(out, result, "round"))
    return _adapt.face(result)


def __getattr__(name: str) -> object:
    return _namespace.resolve(__name__, name)
