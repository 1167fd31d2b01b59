"""Heat's ``heat.core.printing`` on the face: print options, local printing and ``print0``
(:mod:`._printing`).

Every other name resolves through the face's namespace.
"""

from __future__ import annotations

from . import _namespace
from ._printing import get_printoptions, global_printing, local_printing, print0, set_printoptions

__all__ = ["get_printoptions", "global_printing", "local_printing", "print0", "set_printoptions"]


def __getattr__(name: str) -> object:
    return _namespace.resolve(__name__, name)
