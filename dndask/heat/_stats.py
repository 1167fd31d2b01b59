"""Heat's statistics where its argument rules differ from numpy's; each function checks
Heat's arguments and calls the core's.

- ``argmax``/``argmin``: shape ``(1,)`` over all axes; ``out`` must be int64;
- ``average``: DNDarray weights only, a 1-D weight vector for one axis, weights split
  like ``a``;
- ``bincount``: ``weights`` split like ``x``;
- ``mean``/``var``/``std``: a tuple axis of non-ints or an array as ``axis`` is a
  ValueError; ``ddof`` above 1 is not implemented in Heat;
- ``percentile``: ``out`` of exactly the result's type and split;
- ``histogram``: Heat's alias of ``histc``.
"""

from __future__ import annotations

import builtins
import numbers

import numpy as np

import dndask as _core

from .. import _dndarray, _ops, _torch
from . import _adapt, types

__all__ = [
    "arg_reduction",
    "average",
    "bincount",
    "histogram",
    "moment",
    "percentile",
]


def arg_reduction(core_fn, name: str):
    """Heat's ``argmax``/``argmin``: shape ``(1,)`` over all axes, an int64 ``out``."""

    def arg_reduction(x, axis=None, out=None, keepdims=False, **kwargs):
        result = core_fn(x, axis, keepdims=keepdims, **kwargs)
        if axis is None and not keepdims:
            result = result.reshape((1,))  # Heat gives a 1-element array for axis=None
        if out is None:
            return _adapt.face(result)
        if not isinstance(out, _dndarray.DNDarray):
            raise TypeError(f"`out` of `{name}` must be a DNDarray, got {type(out).__name__}")
        if out.to_dask().dtype != np.int64:
            raise TypeError(
                f"`out` of `{name}` must be int64 (Heat's indices), got {out.to_dask().dtype}"
            )
        return _adapt.face(_ops.into(out, result, name))

    arg_reduction.__name__ = arg_reduction.__qualname__ = name
    arg_reduction.__doc__ = f"Heat's ``{name}``: shape ``(1,)`` for ``axis=None``, int64 ``out``."
    return arg_reduction


def average(a, axis=None, weights=None, returned: bool = False):
    """Heat's ``average``: Heat's checks of ``weights``, then :func:`dndask.average`.

    ``weights`` must be a DNDarray (TypeError); with a tuple ``axis`` it is not
    implemented; a weight array of another shape than ``a`` must be 1-D
    (TypeError) and as long as ``axis`` (ValueError); one of ``a``'s shape must be
    split like ``a`` (NotImplementedError), as in Heat.

    >>> import dndask.heat as ht
    >>> float(ht.average(ht.array([1.0, 3.0]), weights=ht.array([1.0, 3.0])))
    2.5
    """
    if weights is not None:
        if not isinstance(weights, _dndarray.DNDarray):
            raise TypeError(
                f"`weights` of `average` must be a DNDarray, got {type(weights).__name__}"
            )
        if isinstance(a, _dndarray.DNDarray):
            if isinstance(axis, (tuple, list)) and weights.shape != a.shape:
                raise NotImplementedError(
                    "`weights` of `average` with a tuple `axis` is not implemented (as in Heat)"
                )
            if weights.shape != a.shape and axis is not None and weights.ndim != 1:
                raise TypeError(
                    f"`weights` of `average` must be 1-D when its shape differs from `a`'s, "
                    f"got shape {weights.shape}"
                )
            if (
                weights.shape == a.shape
                and a.split is not None
                and weights.split is not None
                and weights.split != a.split
            ):
                raise NotImplementedError(
                    f"`weights` of `average` split along {weights.split}, `a` along {a.split}, "
                    "is not implemented (as in Heat)"
                )
    if isinstance(axis, list):
        axis = tuple(axis)
    return _adapt.face(_core.average(a, axis=axis, weights=weights, returned=returned))


def bincount(x, weights=None, minlength: int = 0):
    """Heat's ``bincount``: ``weights`` must be split like ``x`` (ValueError).

    >>> import dndask.heat as ht
    >>> ht.bincount(ht.array([0, 2, 2], split=0)).tolist()
    [1, 0, 2]
    """
    if (
        isinstance(x, _dndarray.DNDarray)
        and isinstance(weights, _dndarray.DNDarray)
        and weights.split != x.split
    ):
        raise ValueError(
            f"`weights` of `bincount` must be split like `x` ({x.split}), got {weights.split}"
        )
    return _adapt.face(_core.bincount(x, weights=weights, minlength=minlength))


def _heat_axis(axis, name: str):
    """Heat's axis rules: a list is a tuple; non-int tuple entries or an array a ValueError."""
    if isinstance(axis, list):
        axis = tuple(axis)
    if _torch.is_tensor(axis) or isinstance(axis, (np.ndarray, _dndarray.DNDarray)):
        raise ValueError(f"`axis` of `{name}` must be None, an int or ints, not an array")
    if isinstance(axis, tuple):
        for v in axis:
            if isinstance(v, builtins.bool) or not isinstance(v, numbers.Integral):
                raise ValueError(
                    f"`axis` of `{name}` must hold ints, got {type(v).__name__} (as in Heat)"
                )
    return axis


def moment(fn, name: str):
    """Heat's ``mean``/``var``/``std``: Heat's axis rules; ``ddof`` above 1 not implemented."""

    def reduction(x, axis=None, *args, **kwargs):
        axis = _heat_axis(axis, name)
        ddof = kwargs.get("ddof", 0)
        if isinstance(ddof, numbers.Integral) and not isinstance(ddof, builtins.bool) and ddof > 1:
            raise NotImplementedError(f"`ddof` of `{name}` above 1 is not implemented (as in Heat)")
        result = fn(x, axis, *args, **kwargs)
        if (
            name != "mean"
            and kwargs.get("dtype") is None
            and kwargs.get("out") is None
            and isinstance(x, _dndarray.DNDarray)
            and x.to_dask().dtype.kind in "biu"
        ):  # Heat computes in its float type of the input (int32: float32)
            want = types.promote_types(types.heat_type_of(x), types.float32)
            if result.dtype != want:
                result = _adapt.face(result.astype(want))
        return result

    reduction.__name__ = reduction.__qualname__ = name
    reduction.__doc__ = moment.__doc__
    return reduction


def percentile(x, q, axis=None, out=None, interpolation=None, keepdims=False, **kw):
    """Heat's ``percentile``: float32 for 4-byte input, else float64; ``out`` must match.

    ``out`` must have the result's type, shape and split (a sketched result is
    ``split=None``).

    See :func:`dndask.percentile` (every numpy method; ``interpolation``, Heat's name,
    or ``method`` names it; linear by default).

    >>> import dndask.heat as ht
    >>> ht.percentile(ht.arange(5.0, split=0), 50).item()
    2.0
    """
    result = _core.percentile(x, q, axis=axis, keepdims=keepdims, interpolation=interpolation, **kw)
    if isinstance(x, _dndarray.DNDarray):
        # Heat's result is float32 for 4-byte input, else float64; a sketch is not split
        want = np.float32 if x.to_dask().dtype.itemsize == 4 else np.float64
        if result.to_dask().dtype != want:
            result = result.astype(want)
        axes = (axis,) if isinstance(axis, numbers.Integral) else axis
        reduced = axes is None or x.split in {int(ax) % builtins.max(x.ndim, 1) for ax in axes}
        if (kw.get("sketched") or reduced) and result.split is not None:
            result = result.resplit(None)  # Heat: reduced over the split axis is not split
    if out is None:
        return _adapt.face(result)
    if not isinstance(out, _dndarray.DNDarray):
        raise TypeError(f"`out` of `percentile` must be a DNDarray, got {type(out).__name__}")
    if out.to_dask().dtype != result.to_dask().dtype:
        raise TypeError(
            f"`out` of `percentile` must have type {result.to_dask().dtype}, "
            f"got {out.to_dask().dtype}"
        )
    return _adapt.face(_adapt.into(out, result, "percentile"))


def histogram(a, bins: int = 10, range=(0.0, 0.0), normed=None, weights=None, density=None):
    """Heat's ``histogram``: an alias of ``histc(a, bins, *range)`` (one array).

    ``normed``, ``weights``, ``density`` and non-int ``bins`` are not implemented,
    as in Heat.

    >>> import dndask.heat as ht
    >>> ht.histogram(ht.arange(4.0), bins=2).tolist()
    [2.0, 2.0]
    """
    for value, what in ((normed, "normed"), (weights, "weights"), (density, "density")):
        if value is not None:
            raise NotImplementedError(f"`{what}` of `histogram` is not supported (as in Heat)")
    if isinstance(bins, builtins.bool) or not isinstance(bins, numbers.Integral):
        raise NotImplementedError("`bins` of `histogram` must be an int (as in Heat)")
    return _adapt.face(_core.histc(a, bins, range[0], range[1]))
