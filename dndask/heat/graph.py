"""Heat's ``ht.graph``: :class:`dndask.graph.Laplacian`, its ``construct`` returning face arrays.

>>> import dndask.heat as ht
>>> L = ht.graph.Laplacian(lambda x: ht.spatial.rbf(x), definition="simple")
>>> L.construct(ht.array([[0.0], [50.0]], split=0)).split
0
"""

from __future__ import annotations

from .. import graph as _core
from . import _adapt

__all__ = ["Laplacian"]


class Laplacian(_core.Laplacian):
    """Heat's ``Laplacian`` (see :class:`dndask.graph.Laplacian`)."""

    def construct(self, X):
        """The Laplacian of the samples ``X`` (a face array split along its rows)."""
        return _adapt.face(super().construct(X))
