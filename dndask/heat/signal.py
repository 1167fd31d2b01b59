"""Heat's ``heat.core.signal`` on the face: ``convolve`` with Heat's arguments (:mod:`._signal`).

Every other name resolves through the face's namespace.
"""

from __future__ import annotations

from . import _namespace, _signal

__all__ = ["convolve"]

convolve = _signal.convolve


def __getattr__(name: str) -> object:
    return _namespace.resolve(__name__, name)
