"""Heat's ``heat.core.arithmetics`` on the face: the functions whose Heat semantics differ.

``divmod`` with Heat's ``out`` pair, ``cumsum``/``cumprod`` with a required ``axis``, and
``diff`` (:mod:`._manip`). The elementwise functions (``add``, ``pow``, ...) are the
base layer's, generated from the operation table; every other name resolves through
the face's namespace.
"""

from __future__ import annotations

import builtins as _builtins
import numbers as _numbers

import dndask as _core

from . import _adapt, _base, _manip, _namespace

__all__ = ["cumprod", "cumproduct", "cumsum", "diff", "divmod"]

diff = _manip.diff


def divmod(x1, x2, out1=None, out2=None, /, out=(None, None), *, where=True):
    """Heat's ``divmod``: ``(floor_divide(x1, x2), remainder(x1, x2))``, torch's promotion.

    >>> import dndask.heat as ht
    >>> q, r = ht.divmod(ht.array([7, -7]), 3)
    >>> q.tolist(), r.tolist()
    ([2, -3], [1, 2])
    """
    if not isinstance(out, tuple):
        raise TypeError(f"`out` of `divmod` must be a tuple of two, got {type(out).__name__}")
    if len(out) != 2:
        raise ValueError(f"`out` of `divmod` must be a tuple of two, got {len(out)} items")
    for i, (given, item) in enumerate(((out1, out[0]), (out2, out[1]))):
        if given is not None and item is not None:
            raise TypeError(f"`out[{i}]` and `out{i + 1}` of `divmod` cannot both be given")
    out1 = out[0] if out1 is None else out1
    out2 = out[1] if out2 is None else out2
    return (
        _base.BASE["floor_divide"](x1, x2, out=out1, where=where),
        _base.BASE["remainder"](x1, x2, out=out2, where=where),
    )


def _cumulative(core_fn, name):
    def cumulative(a, axis, dtype=None, out=None):
        if axis is None:
            raise NotImplementedError(f"`{name}` along `axis=None` is not supported (as in Heat)")
        if isinstance(axis, tuple):  # Heat: a tuple is an invalid axis, not a type error
            raise ValueError(f"`axis` of `{name}` must be one axis, got {axis!r}")
        if isinstance(axis, _builtins.bool) or not isinstance(axis, _numbers.Integral):
            raise TypeError(f"`axis` of `{name}` must be an int, got {type(axis).__name__}")
        result = core_fn(a, axis, dtype=_adapt._dtype_arg(dtype))
        if out is None:
            return _adapt.face(result)
        return _adapt.face(_adapt.into(out, result, name))

    cumulative.__name__ = cumulative.__qualname__ = name
    cumulative.__doc__ = f"Heat's ``{name}``: ``axis`` is required; see :func:`dndask.{name}`."
    return cumulative


cumsum = _cumulative(_core.cumsum, "cumsum")
cumprod = cumproduct = _cumulative(_core.cumprod, "cumprod")


def __getattr__(name: str) -> object:
    return _namespace.resolve(__name__, name)
