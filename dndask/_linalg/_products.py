"""The products: ``matmul``, ``dot``, ``tensordot``, ``vecdot`` and ``outer``.

Each checks its operands, names their axes (:mod:`._plan`), picks the result's
split by its documented rule and hands the rest to the shared engine
:func:`._build._product`.
"""

from __future__ import annotations

import functools
import math
import numbers
import operator

import numpy as np

from .. import _dndarray, _layout, _ops, _torch
from .._manipulation._axes import expand_dims as _expand_dims
from ._build import _product
from ._checks import _describe, _operands
from ._plan import (
    ProductSpec,
    _first_split_heir,
    matmul_spec,
    tensordot_spec,
    tensordot_split,
    vecdot_spec,
)


def matmul(a, b):
    """Matrix product ``a @ b`` with numpy's semantics; the result is split by Heat's rule.

    1-D operands are vectors (as in numpy, the vector axis is removed from the
    result), operands with more than two axes are stacks of matrices whose
    leading axes broadcast. numpy arrays and torch tensors are sent to rank 0
    and treated as unsplit.

    Result split (Heat's rule): ``a``'s split if ``a`` is split, otherwise
    ``b``'s, otherwise None. A split row, column or batch axis stays where it
    is; a split contraction axis of ``a`` (``a.split == 1`` for a matrix) makes
    the result split along its columns (1), a split contraction axis of ``b``
    (``b.split == 0``) along its rows (0). A 1-D result is split along axis 0 if
    either operand is split; the scalar of two vectors is never split.

    How the blocks are made (the planner takes whichever moves fewer bytes
    where two ways fit; ``|x|`` is the size of ``x``, ``P`` the number of ranks):

    ===========  ===========  ======  ============================================
    ``a.split``  ``b.split``  result  work and bytes moved
    ===========  ===========  ======  ============================================
    None         None         None    one task on rank 0; nothing moves
    0            None         0       rank ``r``: its rows of ``a`` @ ``b``;
                                      ``b`` goes to every other rank: ``(P-1)|b|``
    0            0 or 1       0       the same with ``b`` allgathered: ``(P-1)|b|``
    None or 1    1            1       rank ``r``: all of ``a`` @ its columns of ``b``:
                                      ``(P-1)|a|``
    1            0 or None    1       partial products over the split contraction,
                                      reduce-scattered: ``(P-1)|c|`` (plus ``b``
                                      lined up with ``a``'s column counts)
    None         0            0       ``a``'s rows scattered and ``b`` allgathered,
                                      or partial products reduce-scattered
    ===========  ===========  ======  ============================================

    Parameters
    ----------
    a, b : DNDarray, numpy.ndarray or torch.Tensor
        At least one is a DNDarray; both at least 1-D, of a boolean or numeric
        dtype, with ``a.shape[-1] == b.shape[-2]`` (``b.shape[0]`` for a vector).

    Returns
    -------
    DNDarray
        The product, dtype as numpy's.

    Raises
    ------
    TypeError
        For an operand that is not an array or not numeric.
    ValueError
        For 0-d operands, differing inner dimensions, batch axes that do not
        broadcast, or operands on different comms.

    Examples
    --------
    >>> import dndask as ht
    >>> a = ht.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], split=0)
    >>> b = ht.array([[1.0, 0.0], [0.0, 1.0]], split=1)
    >>> c = ht.matmul(a, b)
    >>> c.numpy().tolist(), c.split
    ([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], 0)
    >>> (a @ ht.ones(2, split=0)).numpy().tolist()
    [3.0, 7.0, 11.0]
    """
    a, b = _operands(a, b, "matmul")
    for x, name in ((a, "a"), (b, "b")):
        if x.ndim == 0:
            raise ValueError(f"`matmul` needs operands of at least one dimension, got `{name}` 0-d")
    try:
        spec = matmul_spec(a.shape, b.shape)
    except ValueError as exc:
        raise ValueError(
            f"`matmul` operands do not fit: `a` has {_describe(a)}, `b` has {_describe(b)}: {exc}"
        ) from None
    label = _first_split_heir(spec, a.split, b.split)
    return _product("matmul", np.matmul, a, b, spec, label)


def dot(a, b, out=None):
    """numpy's ``dot``: the product of the last axis of ``a`` with the second-to-last of ``b``.

    - a scalar (or 0-d) operand: ``a * b`` (split as in elementwise operations);
    - both at most 2-D, or ``b`` 1-D, or ``a`` 1-D: :func:`matmul` (same values
      as numpy's ``dot`` there, and Heat's split rule);
    - otherwise :func:`tensordot` over ``a``'s last and ``b``'s second-to-last axis.

    Parameters
    ----------
    a, b : DNDarray, numpy.ndarray, torch.Tensor or scalar
        At least one is a DNDarray.
    out : DNDarray, optional
        Receives the result (its split and dtype are kept).

    Returns
    -------
    DNDarray

    Examples
    --------
    >>> import dndask as ht
    >>> float(ht.dot(ht.arange(4, split=0), ht.arange(4, split=0)))
    14.0
    >>> ht.dot(ht.arange(3), 2).numpy().tolist()
    [0, 2, 4]
    """
    if _is_scalar_like(a) or _is_scalar_like(b):
        if not isinstance(a, _dndarray.DNDarray) and not isinstance(b, _dndarray.DNDarray):
            raise TypeError(
                f"`dot` needs at least one DNDarray operand, got {type(a).__name__} and "
                f"{type(b).__name__}"
            )
        return _ops.into(out, _ops.binary(operator.mul, a, b), "dot")
    a, b = _operands(a, b, "dot")
    if max(a.ndim, b.ndim) <= 2 or min(a.ndim, b.ndim) == 1:
        return _ops.into(out, matmul(a, b), "dot")
    return _ops.into(out, tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 2])), "dot")


def _is_scalar_like(value) -> bool:
    if isinstance(value, (_dndarray.DNDarray, np.ndarray)) or _torch.is_tensor(value):
        return value.ndim == 0
    return isinstance(value, (numbers.Number, np.generic))


def _tensordot_axes(axes, a, b) -> tuple[list[int], list[int]]:
    if isinstance(axes, numbers.Integral) and not isinstance(axes, bool):
        n = int(axes)
        if n < 0 or n > min(a.ndim, b.ndim):
            raise ValueError(
                f"`axes` must be in [0, {min(a.ndim, b.ndim)}] for operands of {a.ndim} and "
                f"{b.ndim} dimensions, got {n}"
            )
        return list(range(a.ndim - n, a.ndim)), list(range(n))
    if not isinstance(axes, (tuple, list)) or len(axes) != 2:
        raise TypeError(
            f"`axes` must be an int or a pair of axis sequences, got {type(axes).__name__}"
        )
    pairs = []
    for side, x, name in zip(axes, (a, b), ("a", "b"), strict=True):
        items = list(side) if isinstance(side, (tuple, list)) else [side]
        pairs.append([_layout.normalize_axis(i, x.ndim, f"axes for `{name}`") for i in items])
    if len(pairs[0]) != len(pairs[1]):
        raise ValueError(
            f"`axes` must name as many axes of `a` as of `b`, got {pairs[0]} and {pairs[1]}"
        )
    return pairs[0], pairs[1]


def tensordot(a, b, axes=2):
    """Sum products over the given axes, as numpy's ``tensordot``.

    The result's axes are ``a``'s remaining axes followed by ``b``'s.

    Result split: the axis ``a``'s split becomes if ``a`` is split along a
    remaining axis, else the one ``b``'s split becomes, else (every split axis
    is contracted) axis 0: the partial products of the ranks are then
    reduce-scattered so that every rank receives only its block. Unsplit
    operands and 0-d results give split None.

    Parameters
    ----------
    a, b : DNDarray, numpy.ndarray or torch.Tensor
        At least one is a DNDarray.
    axes : int or (sequence of int, sequence of int)
        ``N``: the last ``N`` axes of ``a`` with the first ``N`` of ``b``; a pair:
        those axes of ``a`` with those of ``b``, in order (lengths must match).

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        For a wrong ``axes`` type or a non-array operand.
    ValueError
        For an axis out of range or contracted axes of different lengths.

    Examples
    --------
    >>> import dndask as ht
    >>> x = ht.array([[1.0, 2.0], [3.0, 4.0]], split=0)
    >>> r = ht.tensordot(x, x, axes=([0], [0]))
    >>> r.numpy().tolist(), r.split
    ([[10.0, 14.0], [14.0, 20.0]], 0)
    """
    a, b = _operands(a, b, "tensordot")
    a_axes, b_axes = _tensordot_axes(axes, a, b)
    for i, j in zip(a_axes, b_axes, strict=True):
        if a.shape[i] != b.shape[j]:
            raise ValueError(
                f"`tensordot` contracts axis {i} of `a` ({_describe(a)}) with axis {j} of `b` "
                f"({_describe(b)}): lengths {a.shape[i]} and {b.shape[j]} differ"
            )
    if len(set(a_axes)) != len(a_axes) or len(set(b_axes)) != len(b_axes):
        raise ValueError(f"`axes` must not repeat an axis, got {a_axes} and {b_axes}")
    spec = tensordot_spec(a.shape, b.shape, a_axes, b_axes)
    split = tensordot_split(spec, a.split, b.split)
    label = None if split is None else spec.out_labels[split]
    fn = functools.partial(np.tensordot, axes=(a_axes, b_axes))
    return _product("tensordot", fn, a, b, spec, label)


def vecdot(a, b, axis=-1, keepdims: bool = False):
    """The dot product of vectors along ``axis`` (conjugating ``a``), as numpy's ``vecdot``.

    The other axes broadcast; ``axis`` counts in the broadcast shape and must be
    an axis of both operands, of the same length in both.

    Result split (Heat's rule for elementwise operations followed by a sum):
    the split of the first split operand, taken to the broadcast shape; if that
    is the contracted axis the per-rank partial sums are added in a tree and the
    result is split None.

    Parameters
    ----------
    a, b : DNDarray, numpy.ndarray or torch.Tensor
        At least one is a DNDarray; both at least 1-D.
    axis : int
        The axis of the vectors (default the last).
    keepdims : bool
        Keep the contracted axis with length 1 (Heat's keyword).

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        For a non-int ``axis`` or a non-array operand.
    ValueError
        For 0-d operands, shapes that do not broadcast, an ``axis`` out of range
        or vectors of different lengths.

    Examples
    --------
    >>> import dndask as ht
    >>> x = ht.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], split=0)
    >>> r = ht.vecdot(x, ht.array([1.0, 1.0]))
    >>> r.numpy().tolist(), r.split
    ([3.0, 7.0, 11.0], 0)
    """
    a, b = _operands(a, b, "vecdot")
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"`axis` must be an int, got {type(axis).__name__}")
    for x, name in ((a, "a"), (b, "b")):
        if x.ndim == 0:
            raise ValueError(f"`vecdot` needs operands of at least one dimension, got `{name}` 0-d")
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(
            f"`vecdot` operands do not broadcast: `a` has {_describe(a)}, `b` has {_describe(b)}"
        ) from None
    nd, low = len(shape), -min(a.ndim, b.ndim)
    neg = int(axis) - nd if int(axis) >= 0 else int(axis)
    if not low <= neg <= -1:
        raise ValueError(
            f"`axis` must be an axis of both operands, in [{nd + low}, {nd - 1}] or "
            f"[{low}, -1], got {axis}"
        )
    if a.shape[neg] != b.shape[neg]:
        raise ValueError(
            f"`vecdot` vectors must have the same length along `axis` {axis}: `a` has "
            f"{_describe(a)}, `b` has {_describe(b)}"
        )
    spec = vecdot_spec(a.shape, b.shape, neg)
    label = _first_split_heir(spec, a.split, b.split)
    if not isinstance(keepdims, (bool, np.bool_)):
        raise TypeError(f"`keepdims` must be a bool, got {type(keepdims).__name__}")
    result = _product("vecdot", functools.partial(np.vecdot, axis=neg), a, b, spec, label)
    if keepdims:
        result = _expand_dims(result, nd + neg)
    return result


def _flattened(x: _dndarray.DNDarray) -> _dndarray.DNDarray:
    """``x`` as 1-D in C order; a split other than 0 is first moved to axis 0."""
    if x.ndim == 1:
        return x
    if x.split is not None and x.split != 0:
        x = x.resplit(0)
    arr = x.to_dask()
    rest = math.prod(x.shape[1:])
    counts = (x.size,) if x.split is None else tuple(c * rest for c in x.distribution.counts)
    chunks = (counts,)
    flat = arr.map_blocks(np.ravel, chunks=chunks, drop_axis=list(range(1, x.ndim)), dtype=x.dtype)
    return _dndarray.from_dask(flat, x.split, x.comm, parents=(x,))


def outer(a, b, split=None):
    """The outer product ``out[i, j] = a[i] * b[j]`` of the flattened operands (numpy's ``outer``).

    Result split (Heat's): ``split`` if given (0: ``a``'s rows stay on their
    ranks and ``b`` travels; 1: the reverse), otherwise 0 when an operand is
    split and None when neither is. Operands of more than one dimension are
    flattened first (one split along an axis other than 0 is resplit to 0).

    Parameters
    ----------
    a, b : DNDarray, numpy.ndarray or torch.Tensor
        At least one is a DNDarray.
    split : {None, 0, 1}
        The result's split axis (None: the default rule above).

    Returns
    -------
    DNDarray
        Shape ``(a.size, b.size)``.

    Examples
    --------
    >>> import dndask as ht
    >>> r = ht.outer(ht.arange(3, split=0), ht.arange(2))
    >>> r.numpy().tolist(), r.split
    ([[0, 0], [0, 1], [0, 2]], 0)
    """
    if split is not None and (isinstance(split, bool) or not isinstance(split, numbers.Integral)):
        raise TypeError(f"`split` must be None, 0 or 1, got {type(split).__name__}")
    if split is not None and int(split) not in (0, 1):
        raise ValueError(f"`split` must be None, 0 or 1, got {split}")
    a, b = _operands(a, b, "outer")
    a, b = _flattened(a), _flattened(b)
    if split is None:
        split = 0 if a.split is not None or b.split is not None else None
    spec = ProductSpec(("i",), ("j",), ("i", "j"), {"i": a.size, "j": b.size}, (), ())
    label = None if split is None else ("i", "j")[int(split)]
    return _product("outer", np.multiply.outer, a, b, spec, label)
