"""Statistics an analyst expects: averages, histograms, percentiles.

Values and argument names follow numpy; keyword spellings of Heat are accepted
where they are cheap (``interpolation=``, ``sketched=``, ``sketch_size=``). The
split of every result:

- ``average``: like a reduction (see :func:`dndask._ops.reduce`): reducing the
  split axis gives ``split=None``, otherwise the split is kept (shifted left by
  the reduced axes before it). ``sum_of_weights`` has the same layout.
- ``bincount``, ``histc``, ``histogram``: one histogram per rank with shared
  bins, then Dask's tree sum; the result is small and ``split=None``.
- ``percentile``, ``quantile``, ``median`` and their ``nan`` versions: a
  reduction with the ``q`` axis in front; local on each rank, after a resplit
  if the split axis is reduced and another axis survives, or an exact
  distributed selection over all axes (``split=None``).

What lives where:

- ``_checks``: argument checks and conversions of operands, shared by all.
- ``_rows``: graph pieces, one small row per rank, tree-summed or fetched.
- ``_average``: :func:`average` and the layout of its weights.
- ``_histograms``: :func:`bincount`, :func:`histc`, :func:`histogram`.
- ``_quantiles``: pure planning, numpy's sorted positions and interpolation.
- ``_selection``: the exact distributed selection (pure rounds and their driver).
- ``_moments``: :func:`ptp`, :func:`skew`, :func:`kurtosis`, :func:`cov` (from reductions).
- ``_bins``: :func:`digitize`, :func:`bucketize` (each rank looks up its own elements).
- ``_percentile``: :func:`percentile`, :func:`quantile`, :func:`median`, their ``nan``
  versions and their layouts.
"""

from __future__ import annotations

from ._average import average
from ._bins import bucketize, digitize
from ._histograms import bincount, histc, histogram
from ._moments import cov, kurtosis, ptp, skew
from ._percentile import (
    median,
    nanmedian,
    nanpercentile,
    nanquantile,
    percentile,
    quantile,
)
from ._quantiles import combine_quantiles, plan_quantiles
from ._selection import last_selection, probe, select

__all__ = [
    "average",
    "bincount",
    "bucketize",
    "combine_quantiles",
    "cov",
    "digitize",
    "histc",
    "histogram",
    "kurtosis",
    "last_selection",
    "median",
    "nanmedian",
    "nanpercentile",
    "nanquantile",
    "percentile",
    "plan_quantiles",
    "probe",
    "ptp",
    "quantile",
    "select",
    "skew",
]
