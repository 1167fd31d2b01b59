"""Linear algebra: products, norms, the tall-skinny QR (TSQR) and the SVD built on it."""

from ._linalg import dot, matmul, matrix_norm, norm, outer, qr, svd, tensordot, vecdot, vector_norm

__all__ = [
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
