"""Splitting an array into pieces: ``split``, ``hsplit``, ``vsplit``, ``dsplit``.

Every piece is a slice of the input (see :mod:`dndask._indexing`): a piece cut
along a non-split axis keeps each rank's rows where they are; a piece cut along
the split axis keeps that split and is rebalanced over the ranks.
"""

from __future__ import annotations

import itertools

import numpy as np

from .. import _dndarray, _layout
from . import _checks


def split(x: _dndarray.DNDarray, indices_or_sections, axis: int = 0) -> list:
    """Split ``x`` into pieces along ``axis``, as :func:`numpy.split`.

    ``indices_or_sections`` is a number of equal sections or the sorted indices
    to cut at (a list, tuple, 1-D numpy array or DNDarray of ints).

    >>> import dndask as ht
    >>> [p.numpy().tolist() for p in ht.split(ht.arange(6, split=0), 3)]
    [[0, 1], [2, 3], [4, 5]]
    """
    _checks.check_dndarray(x, "x")
    if x.ndim == 0:
        raise ValueError("`x` of `split` must have at least one dimension")
    ax = _layout.normalize_axis(axis, x.ndim)
    n = x.shape[ax]
    if _checks.is_int(indices_or_sections):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError(f"`indices_or_sections` must be positive, got {sections}")
        if n % sections:
            raise ValueError(
                f"`indices_or_sections` {sections} does not divide axis {ax} of length {n} equally"
            )
        cuts = [i * (n // sections) for i in range(1, sections)]
    else:
        cuts = _cut_points(indices_or_sections)
    bounds = [0, *[min(max(c, 0), n) for c in cuts], n]
    pieces = []
    for start, stop in itertools.pairwise(bounds):
        key = [slice(None)] * x.ndim
        key[ax] = slice(start, max(start, stop))
        pieces.append(x[tuple(key)])
    return pieces


def _cut_points(value) -> list[int]:
    if isinstance(value, _dndarray.DNDarray):
        value = value.numpy()
    if isinstance(value, (list, tuple, np.ndarray)):
        arr = np.asarray(value)
        if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
            raise TypeError(
                f"`indices_or_sections` must be an int or a 1-D sequence of ints, got {value!r}"
            )
        return [int(v) for v in arr]
    raise TypeError(
        "`indices_or_sections` must be an int or a 1-D sequence of ints, "
        f"got {type(value).__name__}"
    )


def hsplit(x: _dndarray.DNDarray, indices_or_sections) -> list:
    """Split along axis 1 (axis 0 for 1-D arrays), as :func:`numpy.hsplit`.

    >>> import dndask as ht
    >>> [p.shape for p in ht.hsplit(ht.zeros((2, 4), split=0), 2)]
    [(2, 2), (2, 2)]
    """
    _checks.check_dndarray(x, "x")
    if x.ndim == 0:
        raise ValueError("`x` of `hsplit` must have at least one dimension")
    return split(x, indices_or_sections, axis=1 if x.ndim > 1 else 0)


def vsplit(x: _dndarray.DNDarray, indices_or_sections) -> list:
    """Split along axis 0 of an array of at least 2 dimensions, as :func:`numpy.vsplit`.

    >>> import dndask as ht
    >>> [p.shape for p in ht.vsplit(ht.zeros((4, 2), split=1), [1])]
    [(1, 2), (3, 2)]
    """
    _checks.check_dndarray(x, "x")
    if x.ndim < 2:
        raise ValueError(f"`x` of `vsplit` must have at least 2 dimensions, got {x.ndim}")
    return split(x, indices_or_sections, axis=0)


def dsplit(x: _dndarray.DNDarray, indices_or_sections) -> list:
    """Split along axis 2 of an array of at least 3 dimensions, as :func:`numpy.dsplit`.

    >>> import dndask as ht
    >>> [p.shape for p in ht.dsplit(ht.zeros((1, 2, 4), split=0), 2)]
    [(1, 2, 2), (1, 2, 2)]
    """
    _checks.check_dndarray(x, "x")
    if x.ndim < 3:
        raise ValueError(f"`x` of `dsplit` must have at least 3 dimensions, got {x.ndim}")
    return split(x, indices_or_sections, axis=2)
