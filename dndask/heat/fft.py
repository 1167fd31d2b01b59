"""Heat's ``ht.fft``: the core's transforms (:mod:`dndask.fft`) with Heat's errors.

Heat raises IndexError for an axis out of range and for a ``split`` other than
None or 0 of ``fftfreq``, and takes only Heat's float and complex type classes
as ``dtype`` of ``fftfreq``/``rfftfreq``.
"""

from __future__ import annotations

import functools
import numbers

from .. import _dndarray
from .. import fft as _core_fft
from . import _adapt, types

__all__ = list(_core_fft.__all__)


def _check_axes(x, axes, name: str) -> None:
    """IndexError (Heat's) for an axis of ``x`` out of range."""
    if not isinstance(x, _dndarray.DNDarray) or axes is None:
        return
    items = axes if isinstance(axes, (tuple, list)) else (axes,)
    for axis in items:
        if isinstance(axis, numbers.Integral) and not -x.ndim <= axis < x.ndim:
            raise IndexError(
                f"`{name}` must be in [{-x.ndim}, {x.ndim - 1}] for a {x.ndim}-dimensional "
                f"array, got {axis}"
            )


def _transform(fn):
    key = "axes" if fn.__name__[-1] in "2n" else "axis"  # (x, n, axis, norm) or (x, s, axes, norm)
    default = (-2, -1) if fn.__name__[-1] == "2" else None

    @functools.wraps(fn)
    def adapter(x, *args, **kwargs):
        _check_axes(x, kwargs.get(key, args[1] if len(args) > 1 else default), key)
        if isinstance(kwargs.get("axes"), list):
            kwargs["axes"] = tuple(kwargs["axes"])
        return _adapt.face(fn(x, *args, **kwargs))

    return adapter


def _frequencies(fn):
    @functools.wraps(fn)
    def adapter(n, d=1.0, dtype=None, split=None, device=None, comm=None):
        if dtype is not None:
            if not (isinstance(dtype, type) and issubclass(dtype, types.datatype)):
                raise TypeError(f"`dtype` must be a Heat type, got {dtype!r}")
            if types.heat_type_is_exact(dtype):
                raise TypeError(f"`dtype` must be a float or complex type, got {dtype.__name__}")
        if split not in (None, 0):
            raise IndexError(f"`split` of `{fn.__name__}` must be 0 or None (1-D), got {split}")
        device = _adapt.check_device(device)
        return _adapt.face(fn(n, d=d, dtype=dtype, split=split, comm=comm, device=device))

    return adapter


def _shift(fn):
    @functools.wraps(fn)
    def adapter(x, axes=None):
        _check_axes(x, axes, "axes")
        return _adapt.face(fn(x, tuple(axes) if isinstance(axes, list) else axes))

    return adapter


_WRAPPERS = {"fftfreq": _frequencies, "rfftfreq": _frequencies}
_WRAPPERS.update(fftshift=_shift, ifftshift=_shift)
globals().update(
    {name: _WRAPPERS.get(name, _transform)(getattr(_core_fft, name)) for name in __all__}
)
