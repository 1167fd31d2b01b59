"""Vector and matrix norms: ``vector_norm``, ``matrix_norm`` and numpy's ``norm``.

Norms over axes that leave the split alone run per chunk where it lives;
norms over the split axis are elementwise steps and tree reductions, or (for
``'nuc'``, 2 and -2) the singular values of the TSQR-based :func:`svd`.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Callable

import dask.array as da
import numpy as np

from .. import _dndarray, _graph, _layout, _manipulation, _ops, _xp
from ._checks import _check_array, _check_bool, _norm_dtype, _real_float
from ._tsqr import svd


def _chunk_norm(fname: str, block, **kwargs):
    """``<namespace>.linalg.<fname>`` of a chunk, in the chunk's own namespace (a task)."""
    return getattr(_xp.namespace_of(block).linalg, fname)(block, **kwargs)


def _local_blocks(x: _dndarray.DNDarray, fn: Callable, axes, keepdims: bool, dtype):
    """Apply a numpy reduction over ``axes`` (none of them ``x.split``) to every chunk in place."""
    arr = x.to_dask()
    chunks = tuple(
        ((1,) * len(c) if keepdims else None) if axis in axes else c
        for axis, c in enumerate(arr.chunks)
    )
    chunks = tuple(c for c in chunks if c is not None)
    out = arr.map_blocks(
        fn,
        chunks=chunks,
        drop_axis=[] if keepdims else list(axes),
        dtype=dtype,
        meta=_graph.meta_of(dtype, len(chunks), like=x),
    )
    split = _layout.reduced_split(x.split, axes, keepdims)
    return _dndarray.from_dask(out, split, x.comm, parents=(x,))


def _is_inf(value, sign: int) -> bool:
    real = isinstance(value, numbers.Real) and not isinstance(value, bool)
    return real and value == sign * np.inf


def _vector_norm_over_split(x, ord, axes, keepdims):
    """A vector norm whose axes include the split axis: elementwise steps and tree reductions."""
    mag = abs(x)
    if _is_inf(ord, 1):
        return mag.max(axis=axes, keepdims=keepdims)
    if _is_inf(ord, -1):
        return mag.min(axis=axes, keepdims=keepdims)
    if ord == 0:
        return (x != 0).astype(_norm_dtype(x)).sum(axis=axes, keepdims=keepdims)
    if ord == 1:
        return mag.sum(axis=axes, keepdims=keepdims)
    if ord == 2:
        # as numpy: the squares of the real and imaginary parts, not of the rounded modulus
        squares = x.real * x.real + x.imag * x.imag if x.dtype.kind == "c" else mag * mag
        total = squares.sum(axis=axes, keepdims=keepdims)
        return _ops.elementwise(da.sqrt, total, name="sqrt")
    total = (mag**ord).sum(axis=axes, keepdims=keepdims)
    return total ** (1.0 / ord)


def _check_vector_ord(ord) -> None:
    if isinstance(ord, str):
        raise ValueError(f"`ord` {ord!r} is a matrix norm; vector norms take numbers")
    if isinstance(ord, bool) or not isinstance(ord, numbers.Real):
        raise TypeError(f"`ord` must be a real number, got {type(ord).__name__}")


def vector_norm(x, ord=2, axis=None, keepdims=False):
    """The vector norm of ``x`` over ``axis`` (all axes by default), as the array API's.

    ``ord``: ``inf`` (max of absolute values), ``-inf`` (min), 0 (number of
    non-zeros), any other real ``p`` (``sum(abs(x)**p)**(1/p)``; 2 by default).
    Integer and boolean inputs are computed in float64; complex inputs give real
    results.

    Over axes that do not include ``x.split`` every rank reduces its own chunk and
    the result keeps the (shifted) split; over the split axis the per-rank values
    are combined by a tree reduction and the result is split None.

    Parameters
    ----------
    x : DNDarray
    ord : int, float, inf or -inf
    axis : None, int or tuple of int
    keepdims : bool

    Returns
    -------
    DNDarray

    Examples
    --------
    >>> import dndask as ht
    >>> float(ht.linalg.vector_norm(ht.array([3.0, 4.0], split=0)))
    5.0
    >>> m = ht.array([[1.0, -2.0], [3.0, 0.0]], split=0)
    >>> ht.linalg.vector_norm(m, ord=1, axis=1).numpy().tolist()
    [3.0, 3.0]
    """
    _check_array(x)
    _check_vector_ord(ord)
    _check_bool(keepdims, "keepdims")
    axes = _layout.normalize_axes(axis, x.ndim)
    x = _real_float(x)
    if x.split is None or x.split not in axes:
        fn = functools.partial(_chunk_norm, "vector_norm", ord=ord, axis=axes, keepdims=keepdims)
        return _local_blocks(x, fn, axes, keepdims, _norm_dtype(x))
    return _vector_norm_over_split(x, ord, axes, keepdims)


def _matrix_axes(axis, ndim: int) -> tuple[int, int]:
    if not isinstance(axis, (tuple, list)) or len(axis) != 2:
        raise TypeError(f"`axis` must be a pair of ints, got {axis!r}")
    if ndim < 2:
        raise ValueError(f"`matrix_norm` needs `x` with at least 2 dimensions, got {ndim}")
    rows = _layout.normalize_axis(axis[0], ndim, "axis")
    cols = _layout.normalize_axis(axis[1], ndim, "axis")
    if rows == cols:
        raise ValueError(f"`axis` must name two different axes, got {tuple(axis)}")
    return rows, cols


def _check_matrix_ord(ord) -> None:
    if isinstance(ord, str):
        valid = ord in ("fro", "nuc")
    elif isinstance(ord, numbers.Real) and not isinstance(ord, bool):
        valid = ord in (1, -1, 2, -2) or _is_inf(ord, 1) or _is_inf(ord, -1)
    else:
        raise TypeError(f"`ord` must be a number or a string, got {type(ord).__name__}")
    if not valid:
        raise ValueError(
            f"`ord` must be one of 'fro', 'nuc', 1, -1, 2, -2, inf, -inf for matrices, got {ord!r}"
        )


def _reshape_keep(x: _dndarray.DNDarray, ndim: int) -> _dndarray.DNDarray:
    """A 0-d, unsplit result as an array of ``ndim`` length-one axes."""
    arr = x.to_dask().reshape((1,) * ndim)
    return _dndarray.from_dask(arr, None, x.comm, parents=(x,))


def _singular_value_norm(x, ord, rows, cols, keepdims):
    """``'nuc'``, 2, -2 from the singular values (TSQR-based :func:`svd`; stacks too)."""
    shape, nd = x.shape, x.ndim
    if {rows, cols} != {nd - 2, nd - 1}:
        x = _manipulation.moveaxis(x, (rows, cols), (-2, -1))
    s = svd(x, compute_uv=False)
    axis = None if nd == 2 else -1
    reduce = {"nuc": s.sum, 2: s.max, -2: s.min}[ord]
    value = reduce(axis=axis)
    if not keepdims:
        return value
    if nd == 2:
        return _reshape_keep(value, 2)
    return value.reshape(tuple(1 if i in (rows, cols) else n for i, n in enumerate(shape)))


def _matrix_norm_over_split(x, ord, rows, cols, keepdims):
    if ord in ("nuc", 2, -2):
        return _singular_value_norm(x, ord, rows, cols, keepdims)
    mag = abs(x)
    if ord == "fro":
        total = (mag * mag).sum(axis=(rows, cols), keepdims=keepdims)
        return _ops.elementwise(da.sqrt, total, name="sqrt")
    # ord 1/-1 sum down the rows first; inf/-inf sum along the rows first
    inner, outer_axis = (rows, cols) if ord in (1, -1) else (cols, rows)
    sums = mag.sum(axis=inner, keepdims=keepdims)
    if not keepdims and outer_axis > inner:
        outer_axis -= 1
    if ord in (1, np.inf):
        return sums.max(axis=outer_axis, keepdims=keepdims)
    return sums.min(axis=outer_axis, keepdims=keepdims)


def matrix_norm(x, ord="fro", axis=(-2, -1), keepdims=False):
    """The matrix norm of ``x`` over the two axes ``axis``, as the array API's.

    ``ord``: ``'fro'`` (default), ``'nuc'`` (sum of singular values), 1 / -1
    (max / min column sum of absolute values), ``inf`` / ``-inf`` (max / min row
    sum), 2 / -2 (largest / smallest singular value).

    When ``x.split`` is not one of the two axes every rank computes the norms of
    its own matrices and the result keeps the (shifted) split. Otherwise
    ``'fro'``, 1, -1, ``inf`` and ``-inf`` use tree reductions (result split
    None), and ``'nuc'``, 2, -2 take the singular values from :func:`svd`
    (2-D only; a stack split along a matrix axis raises ``NotImplementedError``).

    Parameters
    ----------
    x : DNDarray
        At least 2-D.
    ord : {'fro', 'nuc', 1, -1, 2, -2, inf, -inf}
    axis : pair of int
    keepdims : bool

    Returns
    -------
    DNDarray

    Examples
    --------
    >>> import dndask as ht
    >>> m = ht.array([[1.0, -2.0], [3.0, 4.0]], split=0)
    >>> float(ht.linalg.matrix_norm(m, ord=1)), float(ht.linalg.matrix_norm(m, ord=float("inf")))
    (6.0, 7.0)
    """
    _check_array(x)
    _check_matrix_ord(ord)
    _check_bool(keepdims, "keepdims")
    rows, cols = _matrix_axes(axis, x.ndim)
    x = _real_float(x)
    if x.split is None or x.split not in (rows, cols):
        fn = functools.partial(_chunk_norm, "norm", ord=ord, axis=(rows, cols), keepdims=keepdims)
        return _local_blocks(x, fn, tuple(sorted((rows, cols))), keepdims, _norm_dtype(x))
    return _matrix_norm_over_split(x, ord, rows, cols, keepdims)


def norm(x, ord=None, axis=None, keepdims=False):
    """A vector or matrix norm, as ``numpy.linalg.norm``.

    - ``axis=None``: with ``ord=None`` the 2-norm of all elements (any ndim);
      otherwise a vector norm of a 1-D ``x`` or a matrix norm of a 2-D ``x``.
    - ``axis`` an int: :func:`vector_norm` along it (``ord=None`` is 2).
    - ``axis`` a pair: :func:`matrix_norm` over it (``ord=None`` is ``'fro'``).

    The result's split follows :func:`vector_norm` and :func:`matrix_norm`.

    Parameters
    ----------
    x : DNDarray
    ord : None, number, inf, -inf, 'fro' or 'nuc'
    axis : None, int or pair of int
    keepdims : bool

    Returns
    -------
    DNDarray

    Examples
    --------
    >>> import dndask as ht
    >>> a = ht.array([[3.0, 0.0], [0.0, 4.0]], split=1)
    >>> float(ht.linalg.norm(a)), float(ht.linalg.norm(a, ord="nuc"))
    (5.0, 7.0)
    """
    _check_array(x)
    _check_bool(keepdims, "keepdims")
    if axis is None:
        if ord is None:
            return vector_norm(x, 2, None, keepdims)
        if x.ndim == 1:
            return vector_norm(x, ord, 0, keepdims)
        if x.ndim == 2:
            return matrix_norm(x, ord, (0, 1), keepdims)
        raise ValueError(
            f"`norm` with an `ord` and axis=None needs a 1-D or 2-D `x`, got {x.ndim}-D"
        )
    if isinstance(axis, (tuple, list)) and len(axis) == 2:
        return matrix_norm(x, "fro" if ord is None else ord, tuple(axis), keepdims)
    if isinstance(axis, (tuple, list)):
        if len(axis) != 1:
            raise ValueError(f"`axis` must be an int or a pair of ints, got {tuple(axis)}")
        axis = axis[0]
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"`axis` must be None, an int or a pair of ints, got {type(axis).__name__}")
    return vector_norm(x, 2 if ord is None else ord, int(axis), keepdims)
