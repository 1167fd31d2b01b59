"""Naive Bayes classifiers on DNDarrays: :class:`GaussianNB`."""

from .gaussian import GaussianNB

__all__ = ["GaussianNB"]
