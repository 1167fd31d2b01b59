"""Regression on DNDarrays: :class:`Lasso` (coordinate descent, as Heat's)."""

from .lasso import Lasso

__all__ = ["Lasso"]
