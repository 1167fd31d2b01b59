"""Heat's ``ht.utils.data.matrixgallery`` over :mod:`dndask.utils.data.matrixgallery`
(Heat's argument order, ``device=``, face arrays)."""

from __future__ import annotations

import numpy as np

from dndask.heat import _adapt, types
from dndask.utils.data import matrixgallery as _core

__all__ = [
    "hermitian",
    "parter",
    "random_known_rank",
    "random_known_singularvalues",
    "random_orthogonal",
]


def _faces(result):
    if isinstance(result, tuple):
        return tuple(_faces(r) for r in result)
    return _adapt.face(result)


def hermitian(
    n, dtype=types.complex64, split=None, device=None, comm=None, positive_definite=False
):
    """Heat's ``hermitian`` (see :func:`dndask.utils.data.matrixgallery.hermitian`)."""
    _adapt.check_device(device)
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise ValueError(f"`dtype` must be a floating or complex type, got {dtype!r}") from None
    return _faces(_core.hermitian(n, dtype, split, comm, positive_definite))


def parter(n, split=None, device=None, comm=None, dtype=types.float32):
    """Heat's ``parter`` (see :func:`dndask.utils.data.matrixgallery.parter`)."""
    _adapt.check_device(device)
    return _faces(_core.parter(n, split, comm, np.dtype(dtype)))


def random_orthogonal(m, n, split=None, device=None, comm=None, dtype=types.float32):
    """Heat's ``random_orthogonal`` (see :mod:`dndask.utils.data.matrixgallery`)."""
    _adapt.check_device(device)
    return _faces(_core.random_orthogonal(m, n, split, comm, np.dtype(dtype)))


def random_known_singularvalues(
    m, n, singular_values, split=None, device=None, comm=None, dtype=types.float32
):
    """Heat's ``random_known_singularvalues`` (``(A, (U, s, V))``)."""
    _adapt.check_device(device)
    return _faces(
        _core.random_known_singularvalues(m, n, singular_values, split, comm, np.dtype(dtype))
    )


def random_known_rank(
    m, n, r, quantile_function=None, split=None, device=None, comm=None, dtype=types.float32
):
    """Heat's ``random_known_rank`` (``(A, (U, s, V))``)."""
    _adapt.check_device(device)
    kwargs = {} if quantile_function is None else {"quantile_function": quantile_function}
    return _faces(
        _core.random_known_rank(m, n, r, split=split, comm=comm, dtype=np.dtype(dtype), **kwargs)
    )
