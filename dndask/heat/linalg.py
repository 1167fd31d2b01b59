"""Heat's ``ht.linalg``: the core's linear algebra, returning face arrays."""

from __future__ import annotations

from .. import linalg as _core_linalg
from . import _adapt

__all__ = list(_core_linalg.__all__)

globals().update({name: _adapt.wrap(getattr(_core_linalg, name)) for name in __all__})
