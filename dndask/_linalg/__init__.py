"""Linear algebra on DNDarrays: products, norms, TSQR and the SVD built on it.

What lives where:

- :mod:`._plan`: pure planning of the products (axis labels, split rules, the
  choice between an ``"outer"`` and an ``"inner"`` plan, byte estimates);
  no scheduler, no DNDarray.
- :mod:`._build`: task-graph builders: a product's blocks from its plan, and
  the layer helpers TSQR shares.
- :mod:`._checks`: checks and conversions of the operands.
- :mod:`._products`: ``matmul``, ``dot``, ``tensordot``, ``vecdot``, ``outer``.
- :mod:`._norms`: ``vector_norm``, ``matrix_norm``, ``norm``.
- :mod:`._tsqr`: ``qr`` and ``svd`` (TSQR), and their ``QR``/``SVD`` tuples.
"""

from __future__ import annotations

from ._norms import matrix_norm, norm, vector_norm
from ._products import dot, matmul, outer, tensordot, vecdot
from ._tsqr import QR, SVD, qr, svd

__all__ = [
    "QR",
    "SVD",
    "dot",
    "matmul",
    "matrix_norm",
    "norm",
    "outer",
    "qr",
    "svd",
    "tensordot",
    "vecdot",
    "vector_norm",
]
