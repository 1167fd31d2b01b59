"""NumPy's protocols for DNDarrays: ``np.exp(a)``, ``np.sum(a)``, ``np.concatenate([a, b])``.

``__array_ufunc__`` runs any elementwise ufunc on every rank's chunk, so the result is a
DNDarray and the data stays on the workers. ``__array_function__`` dispatches through an
explicit registry of the numpy functions dndask implements, as dask's ``implements`` does:
a numpy function that is not registered raises NotImplementedError naming it, never a
silent gather to the driver (use ``a.numpy()`` for that, explicitly) and never a call to
a dndask function that merely shares its name (``np.save(file, a)`` is not
``ht.save(a, path)``).

Registering
-----------
One line, where the dndask function is defined or in the table of
:mod:`dndask._numpy_functions`::

    @implements(np.sort)
    def sort(a, axis=-1, ...): ...

    implements(np.amax, np.max)(max)          # one handler for several numpy names

The handler is called with numpy's arguments; positional arguments whose names differ
from the handler's are passed by numpy's parameter names (see :func:`call`). A ufunc's
methods other than the elementwise call (``np.add.reduce``, ``np.matmul``) register with
``implements_ufunc(np.add, "reduce")``. This module imports only the array core and the
operation machinery, so any module above them may register.

>>> import numpy as np
>>> np.sum in handled_functions() and np.save not in handled_functions()
True
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import numpy as np

from . import _ops
from ._dndarray import DNDarray

_HANDLED: dict[Callable, Callable] = {}
_UFUNC_HANDLED: dict[tuple[np.ufunc, str], Callable] = {}


def implements(*numpy_functions: Callable) -> Callable[[Callable], Callable]:
    """Register the decorated function as the DNDarray version of ``numpy_functions``.

    Parameters
    ----------
    *numpy_functions : callable
        Public numpy functions (``np.sum``, ``np.linalg.norm``); each may be registered once.

    Returns
    -------
    callable
        A decorator that registers its function and returns it unchanged.

    Examples
    --------
    >>> import numpy as np
    >>> handler(np.mean).__name__
    'mean'
    """
    for f in numpy_functions:
        if not callable(f) or isinstance(f, np.ufunc):
            raise TypeError(
                f"`numpy_functions` must be numpy functions (ufuncs dispatch on their own), "
                f"got {f!r}"
            )

    def register(function: Callable) -> Callable:
        for f in numpy_functions:
            if f in _HANDLED:
                raise ValueError(
                    f"`{_public_name(f)}` is already implemented by {_HANDLED[f].__qualname__}"
                )
            _HANDLED[f] = function
        return function

    return register


def implements_ufunc(ufunc: np.ufunc, method: str) -> Callable[[Callable], Callable]:
    """Register the decorated function as ``ufunc``'s ``method`` for DNDarrays.

    ``method`` is numpy's name (``"__call__"``, ``"reduce"``, ``"accumulate"``...). The
    handler is called as ``handler(*inputs, **kwargs)``.

    >>> import numpy as np
    >>> (np.add, "reduce") in handled_ufunc_methods()
    True
    """
    if not isinstance(ufunc, np.ufunc):
        raise TypeError(f"`ufunc` must be a numpy ufunc, got {type(ufunc).__name__}")

    def register(function: Callable) -> Callable:
        if (ufunc, method) in _UFUNC_HANDLED:
            raise ValueError(f"`numpy.{ufunc.__name__}.{method}` is already implemented")
        _UFUNC_HANDLED[(ufunc, method)] = function
        return function

    return register


def handled_functions() -> frozenset:
    """The numpy functions registered with :func:`implements`."""
    return frozenset(_HANDLED)


def handled_ufunc_methods() -> frozenset:
    """The ``(ufunc, method)`` pairs registered with :func:`implements_ufunc`."""
    return frozenset(_UFUNC_HANDLED)


def handler(numpy_function: Callable) -> Callable | None:
    """The DNDarray version of ``numpy_function``, or None if dndask does not implement it."""
    return _HANDLED.get(numpy_function)


def unsupported(what: str) -> NotImplementedError:
    """The error for a numpy function or argument dndask does not implement."""
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
    if not kwargs:  # the ufunc itself: a reduction over the split axis can then fuse it
        return ufunc

    def apply(*values):
        return ufunc(*values, **kwargs)

    apply.__name__ = ufunc.__name__
    return apply


def outputs(kwargs: dict, nout: int) -> tuple:
    """``out=`` popped from ``kwargs``, as ``nout`` DNDarrays or Nones (checked)."""
    out = kwargs.pop("out", None)
    if out is None:
        return (None,) * nout
    out = out if isinstance(out, tuple) else (out,)
    for o in out:
        if o is not None and not isinstance(o, DNDarray):
            raise TypeError(f"`out` must hold DNDarrays, got {type(o).__name__}")
    return out


def array_ufunc(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict):
    """``DNDarray.__array_ufunc__``: elementwise ufuncs, and the registered ufunc methods."""
    kwargs = dict(kwargs)
    name = ufunc.__name__
    registered = _UFUNC_HANDLED.get((ufunc, method))
    if registered is not None:
        return registered(*inputs, **kwargs)
    if method != "__call__":
        raise unsupported(f"numpy.{name}.{method}")
    if ufunc.signature is not None:
        raise unsupported(f"numpy.{name}")
    outs = outputs(kwargs, ufunc.nout)
    if ufunc.nout == 1:
        return _ops.elementwise(_apply(ufunc, kwargs), *inputs, name=name, out=outs[0])
    return tuple(
        _ops.elementwise(_select(ufunc, i, kwargs), *inputs, name=name, out=o)
        for i, o in enumerate(outs)
    )


def _public_name(func: Callable) -> str:
    """``numpy.sort``, ``numpy.fft.fft``: the name a user typed."""
    module = getattr(func, "__module__", None) or "numpy"
    if module.startswith(("numpy._core", "numpy.core")):
        module = "numpy"
    return f"{module}.{getattr(func, '__name__', func)}"


def call(target: Callable, func: Callable, args: tuple, kwargs: dict):
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
        raise unsupported(f"numpy.{func.__name__} with these arguments") from None
    params = target_sig.parameters
    positional, keywords = [], {}
    for i, (name, value) in enumerate(bound.arguments.items()):
        param = params.get(name)
        if param is not None and param.kind is not inspect.Parameter.POSITIONAL_ONLY:
            keywords[name] = value
        elif i == len(positional):
            positional.append(value)
        else:
            raise unsupported(f"numpy.{func.__name__} with `{name}=`")
    return target(*positional, **keywords)


def array_function(func: Callable, types: tuple, args: tuple, kwargs: dict):
    """``DNDarray.__array_function__``: the registered DNDarray version of ``func``."""
    for t in types:
        if not issubclass(t, (DNDarray, np.ndarray)):
            return NotImplemented
    target = _HANDLED.get(func)
    if target is None:
        raise unsupported(_public_name(func))
    return call(target, func, args, kwargs)


__all__ = [
    "array_function",
    "array_ufunc",
    "call",
    "handled_functions",
    "handled_ufunc_methods",
    "handler",
    "implements",
    "implements_ufunc",
    "outputs",
    "unsupported",
]
