"""Heat's ``heat.core.complex_math`` on the face: its complex functions are the base layer's.

They are generated from the operation table with Heat's names and torch's dtype rule
(:mod:`._base`); the face overrides none of them. Every name resolves through the
face's namespace (``ht.complex_math.<name>`` is ``ht.<name>``).
"""

from __future__ import annotations

from . import _namespace

__all__: list[str] = []


def __getattr__(name: str) -> object:
    return _namespace.resolve(__name__, name)
