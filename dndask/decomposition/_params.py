"""scikit-learn's parameter protocol for the core's estimators.

The constructor's arguments are the parameters: ``get_params`` reads the attributes of
the same names, ``set_params`` sets them (a name the constructor lacks is a ValueError).
The algorithm layer's :class:`dndask.base.BaseEstimator` is the same protocol; the core
cannot import it (that layer sits above the core).
"""

from __future__ import annotations

import inspect

__all__ = ["Params"]


class Params:
    """``get_params``/``set_params`` from the constructor's signature.

    Examples
    --------
    >>> class Model(Params):
    ...     def __init__(self, rank=None, tol=None):
    ...         self.rank, self.tol = rank, tol
    >>> Model(rank=3).set_params(tol=0.5).get_params()
    {'rank': 3, 'tol': 0.5}
    """

    @classmethod
    def _param_names(cls) -> list[str]:
        signature = inspect.signature(cls.__init__)
        return sorted(
            name
            for name, p in signature.parameters.items()
            if name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        )

    def get_params(self, deep: bool = True) -> dict:
        """The estimator's parameters, by name."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Set parameters by name; returns ``self``. ValueError for an unknown name."""
        valid = self._param_names()
        for key in params:
            if key not in valid:
                raise ValueError(
                    f"`{key}` is not a parameter of {type(self).__name__}; "
                    f"valid parameters are {valid}"
                )
        for key, value in params.items():
            setattr(self, key, value)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"
