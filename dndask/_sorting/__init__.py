"""Distributed sorting and set operations: sort, argsort, unique, topk, searchsorted, ...

Values follow numpy; Heat's spellings (``descending=``, ``topk``) are kept.
The machinery is a sample sort (see :mod:`._exchange`): each rank sorts its
chunk, a few regular samples choose the splitters, one all-to-all exchange
of ranges follows, and each rank merges what it receives.

What lives where:

- ``_plan``: pure planning: samples, splitters, cut positions, exchange plans.
- ``_checks``: argument checks (pure).
- ``_tasks``: the chunk functions the graphs run.
- ``_exchange``: local runs, the two small rounds, the all-to-all graph.
- ``_sort``: :func:`sort`, :func:`argsort`, :func:`partition`, :func:`argpartition`.
- ``_unique``: :func:`unique` and the array API's ``unique_*``.
- ``_search``: :func:`topk`, :func:`searchsorted`, :func:`nonzero`, :func:`where`,
  :func:`isin`, :func:`take`, :func:`take_along_axis`.
"""

from __future__ import annotations

from ._search import isin, nonzero, searchsorted, take, take_along_axis, topk, where
from ._sort import argpartition, argsort, partition, sort
from ._unique import (
    UniqueAllResult,
    UniqueCountsResult,
    UniqueInverseResult,
    unique,
    unique_all,
    unique_counts,
    unique_inverse,
    unique_values,
)

__all__ = [
    "UniqueAllResult",
    "UniqueCountsResult",
    "UniqueInverseResult",
    "argpartition",
    "argsort",
    "isin",
    "nonzero",
    "partition",
    "searchsorted",
    "sort",
    "take",
    "take_along_axis",
    "topk",
    "unique",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
    "where",
]
