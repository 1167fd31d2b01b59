"""NumPy's protocols for DNDarrays: ``np.exp(a)``, ``np.sum(a)``, ``np.concatenate([a, b])``.

``__array_ufunc__`` and ``__array_function__`` route numpy calls to the
dndask function of the same name, so the result is a DNDarray and the data
stays on the workers. A numpy function dndask does not implement raises
NotImplementedError naming it: never a silent gather to the driver (use
``a.numpy()`` for that, explicitly).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import numpy as np

from . import _dndarray, _linalg, _ops, _reductions

# numpy names that dndask spells differently
_RENAMED = {
    "amax": "max",
    "amin": "min",
    "around": "round",
    "round_": "round",
    "cumulative_sum": "cumsum",
    "cumulative_prod": "cumprod",
    "true_divide": "divide",
    "conjugate": "conj",
    "permute_dims": "transpose",
    "concat": "concatenate",
}

# ``ufunc.reduce`` / ``ufunc.accumulate`` that have a dndask reduction
_REDUCE = {
    "add": _reductions.sum,
    "multiply": _reductions.prod,
    "minimum": _reductions.min,
    "maximum": _reductions.max,
    "logical_and": _reductions.all,
    "logical_or": _reductions.any,
}
_ACCUMULATE = {"add": _reductions.cumsum, "multiply": _reductions.cumprod}


def _unsupported(what: str) -> NotImplementedError:
    return NotImplementedError(
        f"`{what}` is not supported by dndask for DNDarrays; "
        "call `.numpy()` first if the data fits in the driver"
    )


def _select(ufunc: np.ufunc, index: int, kwargs: dict) -> Callable:
    """Output ``index`` of a multi-output ufunc, as a one-output function."""

    def one_output(*values):
        return ufunc(*values, **kwargs)[index]

    one_output.__name__ = ufunc.__name__
    return one_output


def _apply(ufunc: np.ufunc, kwargs: dict) -> Callable:
    def apply(*values):
        return ufunc(*values, **kwargs)

    apply.__name__ = ufunc.__name__
    return apply


def _outputs(kwargs: dict, nout: int) -> tuple:
    out = kwargs.pop("out", None)
    if out is None:
        return (None,) * nout
    out = out if isinstance(out, tuple) else (out,)
    for o in out:
        if o is not None and not isinstance(o, _dndarray.DNDarray):
            raise TypeError(f"`out` must hold DNDarrays, got {type(o).__name__}")
    return out


def array_ufunc(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict):
    """``DNDarray.__array_ufunc__``: elementwise ufuncs, reductions and accumulations."""
    kwargs = dict(kwargs)
    name = ufunc.__name__
    if name == "matmul" and method == "__call__":
        (out,) = _outputs(kwargs, 1)
        if kwargs or out is not None:
            raise _unsupported("numpy.matmul with keyword arguments")
        return _linalg.matmul(*inputs)
    if name == "vecdot" and method == "__call__":
        _outputs(kwargs, 1)
        axis = kwargs.pop("axis", -1)
        if kwargs:
            raise _unsupported(f"numpy.vecdot with {sorted(kwargs)}")
        return _linalg.vecdot(*inputs, axis=axis)
    if ufunc.signature is not None:
        raise _unsupported(f"numpy.{name}")
    if method == "__call__":
        outs = _outputs(kwargs, ufunc.nout)
        if ufunc.nout == 1:
            return _ops.elementwise(_apply(ufunc, kwargs), *inputs, name=name, out=outs[0])
        return tuple(
            _ops.elementwise(_select(ufunc, i, kwargs), *inputs, name=name, out=o)
            for i, o in enumerate(outs)
        )
    table = {"reduce": _REDUCE, "accumulate": _ACCUMULATE}.get(method, {})
    if name not in table or len(inputs) != 1:
        raise _unsupported(f"numpy.{name}.{method}")
    kwargs.setdefault("axis", 0)  # numpy's default for ufunc.reduce and .accumulate
    return table[name](*inputs, **kwargs)


def _target(func: Callable) -> Callable | None:
    """The dndask function standing for the numpy function ``func``, if any."""
    import dndask
    from dndask import linalg

    name = _RENAMED.get(func.__name__, func.__name__)
    module = getattr(func, "__module__", "") or ""
    if module.startswith("numpy.linalg"):
        if name in _NUMPY_LINALG:
            return _NUMPY_LINALG[name]
        return getattr(linalg, name, None) if name in linalg.__all__ else None
    if module != "numpy" and not module.startswith("numpy._core") and module != "numpy.core":
        return None
    if name in _META:
        return _META[name]
    if name in dndask.__all__:
        target = getattr(dndask, name, None)
        return target if callable(target) and not isinstance(target, type) else None
    return None


def _public_name(func: Callable) -> str:
    """``numpy.sort``, ``numpy.fft.fft``: the name a user typed."""
    module = getattr(func, "__module__", None) or "numpy"
    if module.startswith(("numpy._core", "numpy.core")):
        module = "numpy"
    return f"{module}.{func.__name__}"


def _call(target: Callable, func: Callable, args: tuple, kwargs: dict):
    """Call ``target`` with numpy's arguments (keyword order differs between numpy and dndask)."""
    try:
        target_sig = inspect.signature(target)
        target_sig.bind(*args, **kwargs)
    except TypeError:
        pass
    else:
        return target(*args, **kwargs)
    try:
        bound = inspect.signature(func).bind(*args, **kwargs)
    except (TypeError, ValueError):
        raise _unsupported(f"numpy.{func.__name__} with these arguments") from None
    params = target_sig.parameters
    positional, keywords = [], {}
    for i, (name, value) in enumerate(bound.arguments.items()):
        param = params.get(name)
        if param is not None and param.kind is not inspect.Parameter.POSITIONAL_ONLY:
            keywords[name] = value
        elif i == len(positional):
            positional.append(value)
        else:
            raise _unsupported(f"numpy.{func.__name__} with `{name}=`")
    return target(*positional, **keywords)


def array_function(func: Callable, types: tuple, args: tuple, kwargs: dict):
    """``DNDarray.__array_function__``: the numpy function's dndask counterpart."""
    for t in types:
        if not issubclass(t, (_dndarray.DNDarray, np.ndarray)):
            return NotImplemented
    target = _target(func)
    if target is None:
        raise _unsupported(_public_name(func))
    return _call(target, func, args, kwargs)


def _shape(a, *args, **kwargs):
    return a.shape if isinstance(a, _dndarray.DNDarray) else np.shape(a)


def _ndim(a, *args, **kwargs):
    return a.ndim if isinstance(a, _dndarray.DNDarray) else np.ndim(a)


def _size(a, axis=None):
    if not isinstance(a, _dndarray.DNDarray):
        return np.size(a, axis)
    return a.size if axis is None else a.shape[axis]


def _numpy_qr(a, mode="reduced"):
    """``numpy.linalg.qr``: numpy's return convention (``R`` alone for ``mode="r"``)."""
    q, r = _linalg.qr(a, mode=mode)
    return r if mode == "r" else (q, r)


def _numpy_svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """``numpy.linalg.svd``: numpy's convention, ``(U, S, Vh)`` with ``Vh = V^H``."""
    if hermitian:
        raise _unsupported("numpy.linalg.svd with `hermitian=True`")
    if not compute_uv:
        return _linalg.svd(a, full_matrices=False, compute_uv=False)  # S is the same either way
    u, s, v = _linalg.svd(a, full_matrices=full_matrices)
    return u, s, v.conj().T


_NUMPY_LINALG = {"qr": _numpy_qr, "svd": _numpy_svd}

# numpy functions that only read metadata: answered without touching the data
_META = {"shape": _shape, "ndim": _ndim, "size": _size}


def array_namespace(api_version: str | None):
    """``DNDarray.__array_namespace__``: the :mod:`dndask.array_api` module."""
    from dndask import array_api

    if api_version is not None and api_version not in array_api.SUPPORTED_VERSIONS:
        raise ValueError(
            f"`api_version` must be one of {array_api.SUPPORTED_VERSIONS}, got {api_version!r}"
        )
    return array_api
