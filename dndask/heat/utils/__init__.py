"""Heat's ``ht.utils``: the synthetic data sets of :mod:`dndask.utils.data` as face arrays."""

from dndask.heat.utils import data

__all__ = ["data"]
