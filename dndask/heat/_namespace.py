"""How the face's public namespace is assembled: the core's names, then Heat's overrides.

The face is declared in layers (see :mod:`dndask.heat`):

1. the base (:mod:`._base`): every core name, its results as face arrays, and the
   elementwise functions generated from the operation table (Heat's dtype rule);
2. the override table: each Heat submodule of the face (:mod:`.factories`,
   :mod:`.manipulations`, ...) defines the names whose Heat semantics differ from the
   core's, each once. :func:`assemble` refuses a name two layers define.

The namespace is the base updated by the overrides, so it does not depend on the order
the layers are listed in. Each face submodule resolves the names it does not define
itself through :func:`resolve` (``ht.manipulations.resplit`` is ``ht.resplit``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["NAMESPACE", "OWNER", "assemble", "layer", "resolve"]

# the assembled namespace and, per override, the module that defines it; filled once by
# dndask.heat (the face's submodules read them at attribute access, after the import)
NAMESPACE: dict = {}
OWNER: dict = {}


def layer(module, names: Sequence[str] | None = None) -> tuple[str, dict]:
    """``(module name, {name: object})`` for the names ``module`` overrides (its ``__all__``).

    >>> from dndask.heat import stride_tricks
    >>> layer(stride_tricks)[1].keys() == {"broadcast_shape"}
    True
    """
    names = module.__all__ if names is None else names
    return module.__name__, {name: getattr(module, name) for name in names}


def assemble(base: Mapping, layers: Sequence[tuple[str, Mapping]]) -> tuple[dict, dict]:
    """The namespace ``base`` updated by every layer, and each override's owner.

    A name defined by two layers is a ValueError naming both (the face declares every
    name once); a layer may replace a base name (that is what an override is).

    >>> ns, owner = assemble({"a": 1, "b": 2}, [("m", {"b": 3}), ("n", {"c": 4})])
    >>> ns, owner
    ({'a': 1, 'b': 3, 'c': 4}, {'b': 'm', 'c': 'n'})
    >>> assemble({}, [("m", {"b": 3}), ("n", {"b": 4})])
    Traceback (most recent call last):
    ValueError: `b` is defined twice in the Heat face: by m and by n
    """
    owner: dict = {}
    overrides: dict = {}
    for label, names in layers:
        for name, obj in names.items():
            if name in owner:
                raise ValueError(
                    f"`{name}` is defined twice in the Heat face: by {owner[name]} and by {label}"
                )
            owner[name] = label
            overrides[name] = obj
    return {**base, **overrides}, owner


def resolve(module: str, name: str) -> object:
    """``name`` in the face's namespace, for a face submodule that does not define it."""
    if name.startswith("__") or name not in NAMESPACE:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    return NAMESPACE[name]
