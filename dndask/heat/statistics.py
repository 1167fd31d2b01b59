"""Heat's ``heat.core.statistics`` on the face: the reductions whose Heat semantics differ.

``argmax``/``argmin``, ``mean``/``var``/``std`` (Heat's axes and ``bessel``), ``average``,
``bincount``, ``percentile``, ``histogram`` (:mod:`._stats`), and ``maximum``/``minimum``
with Heat's split check. Every other name resolves through the face's namespace.
"""

from __future__ import annotations

import dndask as _core

from . import _base, _extras, _namespace, _stats

__all__ = [
    "argmax",
    "argmin",
    "average",
    "bincount",
    "histogram",
    "maximum",
    "mean",
    "minimum",
    "percentile",
    "std",
    "var",
]

argmax = _stats.arg_reduction(_core.argmax, "argmax")
argmin = _stats.arg_reduction(_core.argmin, "argmin")
mean = _stats.moment(_base.BASE["mean"], "mean")
var = _stats.moment(_base.BASE["var"], "var")
std = _stats.moment(_base.BASE["std"], "std")
average = _stats.average
bincount = _stats.bincount
percentile = _stats.percentile
histogram = _stats.histogram
maximum = _extras.same_split_axes(_base.BASE["maximum"])
minimum = _extras.same_split_axes(_base.BASE["minimum"])


def __getattr__(name: str) -> object:
    return _namespace.resolve(__name__, name)
