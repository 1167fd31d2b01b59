"""The face's base layer: the core's namespace with face arrays as results.

:data:`BASE` holds, once each, every public core function (its arguments adapted to
Heat's and its results face arrays, :func:`._adapt.wrap`), the core names kept as they
are (:data:`KEEP`, classes and modules), and the elementwise functions generated from
the operation table with Heat's names and torch's dtype rule (:data:`ROWS`,
:func:`._adapt.promoted`). Heat's semantics where they differ are the override layer
(the face's submodules, :mod:`._namespace`).
"""

from __future__ import annotations

import types as _pytypes

import dndask as _core

from .. import _ufuncs_extra
from . import _adapt, _optable, types

__all__ = ["BASE", "KEEP", "LAZY", "ROWS"]

# core names re-exported as they are (no array results, or Heat has the same)
KEEP = frozenset(
    {
        "Comm",
        "Device",
        "PerRank",
        "cpu",
        "gpu",
        "use_device",
        "get_device",
        "init",
        "shutdown",
        "current_client",
        "get_comm",
        "use_comm",
        "per_rank",
        "from_xarray",
        "allclose",
        "array_api",
    }
)
# made on first access by dndask.heat's __getattr__ (imports torch)
LAZY = frozenset({"LshapeMap"})
# core names the face never takes from the core (its own class and modules)
# the core's names the face defines itself: its array class and the core's subpackages the
# face has a module of its own for (``ht.fft`` is :mod:`dndask.heat.fft`, not ``dndask.fft``)
_NOT_BASE = frozenset({"DNDarray", "decomposition", "fft", "linalg", "random", "types"})


def _rows() -> list[tuple]:
    """The operation table's rows; ``equal`` gives only ``eq`` (Heat's ``equal`` is one bool)."""
    out = [row for row in _optable.rows() if row[0] != "equal"]
    return [*out, ("equal", 2, _optable.TORCH["equal"], ("eq",), (), False)]


ROWS = _rows()


def _base() -> dict:
    generated = {}
    extra = {name: getattr(_ufuncs_extra, name) for name in _ufuncs_extra.__all__}
    for core_name, arity, torch_fn, names, _inplace, kernel in ROWS:
        fn = getattr(_core, core_name, None) or extra[core_name]
        for name in names:
            generated[name] = _adapt.promoted(fn, torch_fn, name, arity, torch_kernel=kernel)
    skip = _NOT_BASE | LAZY | set(types.__all__) | set(generated)
    base = {}
    for name in _core.__all__:
        if name in skip:
            continue
        obj = getattr(_core, name)
        if name in KEEP or isinstance(obj, (_pytypes.ModuleType, type)):
            base[name] = obj
        elif callable(obj):
            base[name] = _adapt.wrap(obj)
    return {**base, **generated}  # disjoint: the generated names were skipped above


BASE = _base()
