"""Heat's ``heat.core.logical`` on the face: ``any``/``all`` (Heat's one-axis rules) and
``isclose``/``allclose`` of DNDarrays and numeric scalars (two scalars give a bool).

The elementwise logical functions are the base layer's; every other name resolves
through the face's namespace.
"""

from __future__ import annotations

import builtins as _builtins

import dndask as _core

from .. import _dndarray
from . import _adapt, _manip, _namespace
from .factories import array

__all__ = ["all", "allclose", "any", "isclose"]

any = _manip.axis_reduction_1d(_core.any, "any")
all = _manip.axis_reduction_1d(_core.all, "all")


def _closeness(core_fn, name):
    def close(x, y, rtol=1e-05, atol=1e-08, equal_nan=False):
        operands = []
        for v, what in ((x, "x"), (y, "y")):
            if not isinstance(v, _dndarray.DNDarray) and (
                not _adapt._is_scalar(v) or isinstance(v, _builtins.bool)
            ):
                raise TypeError(
                    f"`{what}` of `{name}` must be a DNDarray or a numeric scalar, "
                    f"got {type(v).__name__}"
                )
            operands.append(v)
        if not _builtins.any(isinstance(v, _dndarray.DNDarray) for v in operands):
            operands[0] = array(operands[0])  # two scalars: one bool (Heat)
            return _builtins.bool(core_fn(*operands, rtol=rtol, atol=atol, equal_nan=equal_nan))
        return _adapt.face(core_fn(*operands, rtol=rtol, atol=atol, equal_nan=equal_nan))

    close.__name__ = close.__qualname__ = name
    close.__doc__ = (
        f"Heat's ``{name}``: DNDarrays and numeric scalars (two scalars give a bool); "
        f"see ``dndask.{name}``."
    )
    return close


isclose = _closeness(_core.isclose, "isclose")
allclose = _closeness(_core.allclose, "allclose")


def __getattr__(name: str) -> object:
    return _namespace.resolve(__name__, name)
