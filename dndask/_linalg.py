"""Linear algebra on DNDarrays: products, norms, TSQR and the SVD built on it."""

from __future__ import annotations


def matmul(a, b):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`matmul` is not implemented yet")


def dot(a, b):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`dot` is not implemented yet")


def tensordot(a, b, axes=2):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`tensordot` is not implemented yet")


def vecdot(a, b, axis=-1):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`vecdot` is not implemented yet")


def outer(a, b):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`outer` is not implemented yet")


def norm(x, ord=None, axis=None, keepdims=False):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`norm` is not implemented yet")


def vector_norm(x, ord=2, axis=None, keepdims=False):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`vector_norm` is not implemented yet")


def matrix_norm(x, ord="fro", axis=(-2, -1), keepdims=False):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`matrix_norm` is not implemented yet")


def qr(a, mode="reduced"):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`qr` is not implemented yet")


def svd(a, full_matrices=False, compute_uv=True):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`svd` is not implemented yet")
