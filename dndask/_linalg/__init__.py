"""Linear algebra on DNDarrays: products, norms, TSQR and the SVD built on it.

What lives where:

- :mod:`._plan`: pure planning of the products (axis labels, split rules, the
  choice between an ``"outer"`` and an ``"inner"`` plan, byte estimates);
  no scheduler, no DNDarray.
- :mod:`._build`: task-graph builders: a product's blocks from its plan, and
  the layer helpers TSQR shares.
- :mod:`._checks`: checks and conversions of the operands.
- :mod:`._products`: ``matmul``, ``dot``, ``tensordot``, ``vecdot``, ``outer``.
- :mod:`._square`: ``inv``, ``det``, ``solve``, ``matrix_exp``, ``trace``, ``cross``, ``vdot``.
- :mod:`._norms`: ``vector_norm``, ``matrix_norm``, ``norm``.
- :mod:`._tsqr`: ``qr`` and ``svd`` (TSQR), and their ``QR``/``SVD`` tuples.
- :mod:`._triangular`: ``solve_triangular`` (blocked substitution over the ranks).
- :mod:`._krylov`: ``cg`` and ``lanczos``.
- :mod:`._hierarchical`: ``hsvd``, ``hsvd_rank`` and ``hsvd_rtol``.
- :mod:`._randomized`: ``rsvd`` and ``reigh``.
- :mod:`._spectral`: ``polar`` (QDWH) and ``eigh`` (spectral divide and conquer).
"""

from __future__ import annotations

from ._hierarchical import hsvd, hsvd_rank, hsvd_rtol, isvd
from ._krylov import cg, lanczos
from ._norms import matrix_norm, norm, vector_norm
from ._products import dot, matmul, outer, tensordot, vecdot
from ._randomized import reigh, rsvd
from ._spectral import eigh, polar
from ._square import cross, det, inv, matrix_exp, solve, trace, vdot
from ._triangular import solve_triangular
from ._tsqr import QR, SVD, qr, svd

__all__ = [
    "QR",
    "SVD",
    "cg",
    "cross",
    "det",
    "dot",
    "eigh",
    "hsvd",
    "hsvd_rank",
    "hsvd_rtol",
    "inv",
    "isvd",
    "lanczos",
    "matmul",
    "matrix_exp",
    "matrix_norm",
    "norm",
    "outer",
    "polar",
    "qr",
    "reigh",
    "rsvd",
    "solve",
    "solve_triangular",
    "svd",
    "tensordot",
    "trace",
    "vdot",
    "vecdot",
    "vector_norm",
]
