"""Discrete Fourier transforms: ``fft``, ``rfft``, ``hfft``, their inverses, 2-D and N-D forms.

Along axes other than the split axis every rank transforms its own chunk; along
the split axis the array is re-laid out along another axis and back (see
docs/linalg-fft.md). The transforms are generated from one table
(:data:`dndask._fft._api.TRANSFORMS`).
"""

from ._fft import fftfreq, fftshift, generated, ifftshift, rfftfreq

globals().update(generated())

__all__ = [  # noqa: F822 (the transforms are generated above)
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "hfft2",
    "hfftn",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "ihfft2",
    "ihfftn",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]
