"""Utilities for the algorithm packages: synthetic data sets (:mod:`dndask.utils.data`)."""

from . import data

__all__ = ["data"]
