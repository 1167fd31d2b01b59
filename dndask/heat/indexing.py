"""Heat's ``heat.core.indexing`` on the face: ``nonzero`` (one row of coordinates per
element) and ``where`` with Heat's rules (:mod:`._manip`).

Every other name resolves through the face's namespace.
"""

from __future__ import annotations

from . import _manip, _namespace

__all__ = ["nonzero", "where"]

nonzero = _manip.nonzero
where = _manip.where


def __getattr__(name: str) -> object:
    return _namespace.resolve(__name__, name)
