"""The discrete Fourier transforms on DNDarrays.

- :mod:`._plan`: pure planning (the stages, the relayouts between them, the bytes moved).
- :mod:`._transforms`: runs a plan on a DNDarray, checks the arguments, the frequencies.
- :mod:`._api`: the public functions, generated from one table.
"""

from __future__ import annotations

from ._api import fftfreq, fftshift, generated, ifftshift, rfftfreq
from ._plan import FFTPlan, plan_fft

__all__ = ["FFTPlan", "fftfreq", "fftshift", "generated", "ifftshift", "plan_fft", "rfftfreq"]
