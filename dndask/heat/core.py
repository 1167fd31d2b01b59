"""Heat's ``heat.core``: the face's core submodules, and every face name (``ht.core.<name>``).

Heat scripts reach its core modules as ``ht.core.factories``, ``ht.core.types`` or
``ht.core.linalg``; here they are the face's modules of those names.

>>> import dndask.heat as ht
>>> ht.core.factories is ht.factories, ht.core.arange is ht.arange
(True, True)
"""

from __future__ import annotations

from . import (
    _namespace,
    arithmetics,
    complex_math,
    constants,
    exponential,
    factories,
    indexing,
    linalg,
    logical,
    manipulations,
    printing,
    random,
    relational,
    rounding,
    signal,
    statistics,
    stride_tricks,
    trigonometrics,
    types,
)

__all__ = [
    "arithmetics",
    "complex_math",
    "constants",
    "exponential",
    "factories",
    "indexing",
    "linalg",
    "logical",
    "manipulations",
    "printing",
    "random",
    "relational",
    "rounding",
    "signal",
    "statistics",
    "stride_tricks",
    "trigonometrics",
    "types",
]


def __getattr__(name: str) -> object:
    return _namespace.resolve(__name__, name)
