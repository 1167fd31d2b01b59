"""The public FFT functions, generated from one table (:data:`TRANSFORMS`).

Each entry names a transform, the local kind it runs (:mod:`._plan`), and whether
it conjugates its input or output and swaps the normalization: the Hermitian
transforms are the real ones in disguise, ``hfft(x) = irfft(conj(x))`` and
``ihfft(x) = conj(rfft(x))`` with ``"backward"`` and ``"forward"`` swapped.
Every name comes in three shapes: 1-D (``n``, ``axis``), 2-D (``s``, ``axes=(-2, -1)``)
and n-D (``s``, ``axes=None``: all axes, or the last ``len(s)``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from .. import _dndarray, _layout
from ._transforms import axes_and_lengths, check_array, check_length, frequencies, shift, transform


class Transform(NamedTuple):
    kind: str
    conj_in: bool
    conj_out: bool
    swap: bool
    summary: str


TRANSFORMS = {
    "fft": Transform("fft", False, False, False, "discrete Fourier transform"),
    "ifft": Transform("ifft", False, False, False, "inverse discrete Fourier transform"),
    "rfft": Transform("rfft", False, False, False, "discrete Fourier transform of a real input"),
    "irfft": Transform("irfft", False, False, False, "inverse of ``rfft`` (a real output)"),
    "hfft": Transform(
        "irfft", True, False, True, "FFT of a Hermitian-symmetric input (real output)"
    ),
    "ihfft": Transform("rfft", False, True, True, "inverse of ``hfft`` (a real input)"),
}

_DOC = """The {dims} {summary}, over {over}.

{layout}

Parameters
----------
x : DNDarray
    The input; integers, booleans and float16 are transformed as float32 (Heat's
    rule), float32 and complex64 give single precision results.
{args}
norm : {{None, "backward", "ortho", "forward"}}
    numpy's normalization modes (None is ``"backward"``).

Returns
-------
DNDarray
    Split like ``x``; balanced along the split axis when that axis is transformed,
    else with ``x``'s counts.

Examples
--------
>>> import numpy as np, scipy.fft, dndask as ht
>>> values = np.arange(12.0).reshape(3, 4)
>>> y = ht.fft.{name}(ht.array(values, split=0))
>>> y.split, bool(np.allclose(y.numpy(), scipy.fft.{name}(values)))
(0, True)
"""

_LAYOUT = (
    "Along axes other than the split axis every rank transforms its own chunk. A "
    "transform along the split axis re-lays the array out along another axis, "
    "transforms, and lays it out back (each element changes rank at most twice; a 1-D "
    "array is gathered on rank 0)."
)

_ARGS = {
    "1": (
        "n : int, optional\n    Length of the transformed axis of the output (the input "
        "is cropped or zero-padded).\naxis : int\n    The transformed axis (default -1)."
    ),
    "2": (
        "s : sequence of 2 ints, optional\n    Output lengths along ``axes``.\n"
        "axes : sequence of 2 ints\n    The transformed axes (default ``(-2, -1)``)."
    ),
    "n": (
        "s : sequence of ints, optional\n    Output lengths along ``axes``.\n"
        "axes : sequence of ints, optional\n    The transformed axes (default: the last "
        "``len(s)``, or all)."
    ),
}


def _make(name: str, spec: Transform, dims: str) -> Callable:
    fname = name + ("" if dims == "1" else dims)

    def run(x, s, axes, default_axes, norm):
        x = check_array(x, fname)
        axes, s = axes_and_lengths(x, s, axes, default_axes, fname)
        return transform(x, fname, spec.kind, axes, s, norm, spec.conj_in, spec.conj_out, spec.swap)

    if dims == "1":

        def function(x, n=None, axis=-1, norm=None) -> _dndarray.DNDarray:
            check_array(x, fname)
            axis = _layout.normalize_axis(axis, x.ndim, "axis")
            return run(x, None if n is None else (check_length(n, "n"),), (axis,), (axis,), norm)

    elif dims == "2":

        def function(x, s=None, axes=(-2, -1), norm=None) -> _dndarray.DNDarray:
            return run(x, s, axes, (-2, -1), norm)

    else:

        def function(x, s=None, axes=None, norm=None) -> _dndarray.DNDarray:
            check_array(x, fname)
            return run(x, s, axes, tuple(range(x.ndim)), norm)

    over = {"1": "one axis", "2": "two axes", "n": "any number of axes"}[dims]
    label = {"1": "1-D", "2": "2-D", "n": "N-D"}[dims]
    function.__name__ = function.__qualname__ = fname
    function.__module__ = "dndask.fft"
    function.__doc__ = _DOC.format(
        dims=label, summary=spec.summary, over=over, layout=_LAYOUT, args=_ARGS[dims], name=fname
    )
    return function


def generated() -> dict[str, Callable]:
    """Every transform of :data:`TRANSFORMS` in its three shapes, by name."""
    out = {}
    for name, spec in TRANSFORMS.items():
        for dims in ("1", "2", "n"):
            function = _make(name, spec, dims)
            out[function.__name__] = function
    return out


def fftshift(x, axes=None) -> _dndarray.DNDarray:
    """Shift the zero frequency to the middle of the spectrum over ``axes`` (None: all).

    A shift along the split axis re-lays the array out along another axis and
    back, as the transforms do.

    Examples
    --------
    >>> import dndask as ht
    >>> ht.fft.fftshift(ht.fft.fftfreq(5, split=0)).numpy().tolist()
    [-0.4000000059604645, -0.20000000298023224, 0.0, 0.20000000298023224, 0.4000000059604645]
    """
    return shift(x, axes, "fftshift", "fftshift")


def ifftshift(x, axes=None) -> _dndarray.DNDarray:
    """The inverse of :func:`fftshift` (they differ for odd lengths).

    Examples
    --------
    >>> import dndask as ht
    >>> ht.fft.ifftshift(ht.arange(5, split=0)).numpy().tolist()
    [2, 3, 4, 0, 1]
    """
    return shift(x, axes, "ifftshift", "ifftshift")


def fftfreq(n: int, d: float = 1.0, dtype=None, split=None, comm=None, device=None):
    """The sample frequencies of an ``n``-point FFT with sample spacing ``d``.

    float32 by default (Heat's rule); ``split`` is None or 0.

    Examples
    --------
    >>> import dndask as ht
    >>> ht.fft.fftfreq(4, d=0.5, split=0).numpy().tolist()
    [0.0, 0.5, -1.0, -0.5]
    """
    return frequencies(n, d, dtype, split, comm, device, False, "fftfreq")


def rfftfreq(n: int, d: float = 1.0, dtype=None, split=None, comm=None, device=None):
    """The sample frequencies of :func:`rfft`: the ``n // 2 + 1`` non-negative ones.

    Examples
    --------
    >>> import dndask as ht
    >>> ht.fft.rfftfreq(5, d=0.5, split=0).numpy().tolist()
    [0.0, 0.4000000059604645, 0.800000011920929]
    """
    return frequencies(n, d, dtype, split, comm, device, True, "rfftfreq")
