"""The face's functions whose Heat semantics need more than an argument adapter.

Each is a composition of the core's functions (nothing computes here); the face's
namespace (:mod:`dndask.heat`) registers them over the generated ones.
"""

from __future__ import annotations

import dndask as _core

from .. import _dndarray
from . import _adapt, types

__all__ = ["floats_only", "heat_sign"]


def heat_sign(promoted_sign):
    """Heat's ``sign``: for complex input ``x / sqrt(x**2)``, so ``±1 + 0j`` (or 0).

    That is the sign of the real part, or of the imaginary part where the real part
    is 0, as a complex number (numpy 1's convention; numpy 2 gives ``x / |x|``).
    Real input: the generated function (torch's dtype rule).
    """

    def sign(x, out=None):
        if not (isinstance(x, _dndarray.DNDarray) and x.to_dask().dtype.kind == "c"):
            return promoted_sign(x, out=out)
        re, im = _core.real(x), _core.imag(x)
        result = _core.where(re != 0, _core.sign(re), _core.sign(im)).astype(x.to_dask().dtype)
        if out is None:
            return _adapt.face(result)
        return _adapt.face(_adapt.into(out, result, "sign"))

    sign.__name__ = sign.__qualname__ = "sign"
    sign.__doc__ = heat_sign.__doc__
    return sign


def floats_only(fn, name: str):
    """``fn`` for real floating operands only (Heat's ``copysign_``: ints and complex refused)."""

    def checked(x1, x2, *args, **kwargs):
        for i, v in enumerate((x1, x2)):
            if isinstance(v, _dndarray.DNDarray) or _adapt._is_scalar(v):
                t = types.heat_type_of(v)
                if t.dtype.kind != "f":
                    raise TypeError(
                        f"operand {i} of `{name}` must be real floating, got {t.__name__}"
                    )
        return fn(x1, x2, *args, **kwargs)

    checked.__name__ = checked.__qualname__ = name
    checked.__doc__ = floats_only.__doc__
    return checked
