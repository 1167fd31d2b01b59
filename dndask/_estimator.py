"""scikit-learn's parameter protocol, the one the core's and the algorithm layer's estimators share.

The constructor's arguments are the parameters: ``get_params`` reads the attributes of
the same names, ``set_params`` sets them (a name the constructor lacks is a ValueError;
``outer__inner`` sets a parameter of a nested estimator). The core's estimators
(:mod:`dndask.decomposition`) and the algorithm layer (:class:`dndask.base.BaseEstimator`,
which is this class) both build on it, so it imports nothing of dndask.
"""

from __future__ import annotations

import inspect

__all__ = ["BaseEstimator"]


class BaseEstimator:
    """scikit-learn's parameter protocol: the constructor's arguments are the parameters.

    Examples
    --------
    >>> class Model(BaseEstimator):
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
        """The estimator's parameters, by name (``deep`` expands nested estimators)."""
        out = {}
        for name in self._param_names():
            value = getattr(self, name)
            if deep and isinstance(value, BaseEstimator):
                out.update({f"{name}__{k}": v for k, v in value.get_params().items()})
            out[name] = value
        return out

    def set_params(self, **params) -> BaseEstimator:
        """Set parameters by name; returns ``self``.

        A name the estimator does not have is a ValueError, and so is ``outer__inner``
        where ``outer`` is not an estimator.
        """
        valid = self._param_names()
        for key in params:
            outer, nested, _ = key.partition("__")
            if outer not in valid or (nested and not hasattr(getattr(self, outer), "set_params")):
                raise ValueError(
                    f"`{key}` is not a parameter of {type(self).__name__}; "
                    f"valid parameters are {valid}"
                )
        for key, value in params.items():
            if "__" in key:
                outer, inner = key.split("__", 1)
                getattr(self, outer).set_params(**{inner: value})
            else:
                setattr(self, key, value)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params(deep=False).items())
        return f"{type(self).__name__}({args})"
