"""Statistics an analyst expects: averages, histograms, percentiles."""

from __future__ import annotations


def average(a, axis=None, weights=None, returned=False):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`average` is not implemented yet")


def bincount(x, weights=None, minlength=0):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`bincount` is not implemented yet")


def histc(a, bins=100, min=0, max=0):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`histc` is not implemented yet")


def histogram(a, bins=10, range=None, weights=None, density=False):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`histogram` is not implemented yet")


def percentile(a, q, axis=None, method="linear", keepdims=False):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`percentile` is not implemented yet")


def median(a, axis=None, keepdims=False):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`median` is not implemented yet")
