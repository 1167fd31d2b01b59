"""Heat's ``heat.core.constants``: ``pi``, ``e``, ``inf``, ``nan`` and Heat's aliases of them.

>>> import dndask.heat as ht
>>> ht.constants.Infinity == ht.inf, ht.NINF
(True, -inf)
"""

from __future__ import annotations

import math as _math

__all__ = ["NAN", "NINF", "Inf", "Infinity", "NaN", "PINF", "e", "inf", "infty", "nan", "pi"]

inf = Inf = Infinity = infty = PINF = _math.inf
nan = NaN = NAN = _math.nan
NINF = -_math.inf
pi = _math.pi
e = _math.e
