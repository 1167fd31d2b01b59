"""Heat's manipulation functions where its rules differ from numpy's: argument checks,
result types and result tuples. Each is a composition of the core's functions.

- joins (``concatenate``, ``stack``, ``column_stack``, ``row_stack``): DNDarrays only,
  operands split along one axis, Heat's result type (``stack`` follows ``torch.stack``);
- ``broadcast_arrays``: operands distributed along one (aligned) axis;
- ``pad``: fewer ``(before, after)`` pairs than axes pad the last axes;
- ``sort``: ``(values, int32 indices)``;
- ``split``: ``axis`` in ``[0, ndim)``;
- ``nonzero`` (and one-argument ``where``): one ``(n, ndim)`` array, which indexes as
  coordinates (:func:`coordinate_key`);
- ``any``/``all`` along the axis of 1-D input: shape ``(1,)``;
- ``repeat``: Heat's warnings where Heat resplits ``a`` or ``repeats`` (:func:`repeat_warnings`).
"""

from __future__ import annotations

import builtins
import numbers
import warnings

import numpy as np

import dndask as _core

from .. import _dndarray, _ops, _torch
from . import _adapt, types

__all__ = [
    "axis_reduction_1d",
    "broadcast_arrays",
    "coordinate_key",
    "diff",
    "joined",
    "nonzero",
    "pad",
    "repeat_warnings",
    "sort",
    "split_axis_checked",
    "topk",
    "unique",
    "where",
]


def _aligned_split(a, ndim: int):
    """``a``'s split counted from the front of an ``ndim``-D broadcast shape."""
    return None if a.split is None else a.split + ndim - a.ndim


def _torch_result_type(arrays):
    """The type ``torch.stack`` gives these arrays (float32 + int64 is float32)."""
    torch = _torch.torch()
    tensors = [torch.empty(0, dtype=types.heat_type_of(a).torch_type()) for a in arrays]
    return types.canonical_heat_type(torch.stack(tensors).dtype) if tensors else None


def _check_dndarrays(arrays, name: str) -> list:
    if not isinstance(arrays, (list, tuple)):
        raise TypeError(
            f"`arrays` of `{name}` must be a list or tuple, got {type(arrays).__name__}"
        )
    for i, a in enumerate(arrays):
        if not isinstance(a, _dndarray.DNDarray):
            raise TypeError(f"`arrays[{i}]` of `{name}` must be a DNDarray, got {type(a).__name__}")
    return list(arrays)


def _check_splits(arrays, name: str, error: type) -> None:
    """Heat's rule: every operand split along an axis is split along the first such axis.

    ``row_stack``/``vstack``/``hstack`` first make a split 1-D operand of 2-D ones a row
    or column split along 0; ``column_stack`` a column split along 1 (Heat transposes a row).
    """
    ndim = builtins.max(a.ndim for a in arrays)
    if name in ("row_stack", "column_stack", "vstack", "hstack") and ndim == 2:
        one_d = 1 if name == "column_stack" else 0
        splits = {
            (one_d if a.split is not None else None) if a.ndim == 1 else a.split for a in arrays
        } - {None}
    else:
        splits = {_aligned_split(a, ndim) for a in arrays} - {None}
    if len(splits) > 1:
        raise error(
            f"`arrays` of `{name}` must be split along one axis, got splits "
            f"{[a.split for a in arrays]} (as in Heat)"
        )


def joined(core_fn, name: str):
    """A Heat join: DNDarrays only on one comm, one split axis, Heat's result type.

    ``concatenate`` (and the joins built on it) casts to Heat's
    :func:`~dndask.heat.types.result_type` and refuses two split axes with a
    ``RuntimeError``; ``stack`` gives ``torch.stack``'s type and a ``ValueError``.
    """
    stack_like = name == "stack"

    def join(arrays, *args, out=None, **kwargs):
        if name in ("column_stack", "row_stack") and isinstance(arrays, (list, tuple)):
            for i, a in enumerate(arrays):
                if getattr(a, "ndim", 1) > 2:
                    raise ValueError(
                        f"`arrays[{i}]` of `{name}` must be 1-D or 2-D, got {a.ndim}-D"
                    )
        arrays = _check_dndarrays(arrays, name)
        if stack_like and len(arrays) < 2:
            raise ValueError(
                f"`arrays` of `stack` must hold at least 2 DNDarrays, got {len(arrays)}"
            )
        if builtins.any(a.comm != arrays[0].comm for a in arrays):
            raise RuntimeError(f"`arrays` of `{name}` must share one comm (as in Heat)")
        if arrays:
            _check_splits(arrays, name, ValueError if stack_like else RuntimeError)
            all_1d = builtins.all(a.ndim == 1 for a in arrays)
            if stack_like or (name in ("column_stack", "row_stack") and all_1d):
                common = _torch_result_type(arrays)  # Heat stacks with torch.stack
            else:
                common = types.result_type(*arrays)
            arrays = [a.astype(common) if a.dtype != common else a for a in arrays]
            if name == "hstack" and builtins.any(a.ndim > 1 for a in arrays):
                # Heat joins a 1-D array to 2-D ones as a column
                arrays = [_core.expand_dims(a, 1) if a.ndim == 1 else a for a in arrays]
        result = core_fn(arrays, *args, **kwargs)
        if out is None:
            return _adapt.face(result)
        if stack_like:
            return _adapt.face(_adapt.into(out, result, name))
        return _adapt.face(_ops.into(out, result, name))  # relaid out into out's split

    join.__name__ = join.__qualname__ = name
    join.__doc__ = (
        f"Heat's ``{name}``: DNDarrays on one comm, split along one axis, Heat's result "
        f"type; see :func:`dndask.{name}`."
    )
    return join


def broadcast_arrays(*arrays):
    """Heat's ``broadcast_arrays``: operands split along different axes are a ValueError.

    The axes are compared after broadcasting aligns the trailing dimensions; see
    :func:`dndask.broadcast_arrays`.

    >>> import dndask.heat as ht
    >>> [a.shape for a in ht.broadcast_arrays(ht.ones((2, 1)), ht.ones((3,)))]
    [(2, 3), (2, 3)]
    """
    for i, a in enumerate(arrays):
        if not isinstance(a, _dndarray.DNDarray):
            raise TypeError(f"`arrays[{i}]` must be a DNDarray, got {type(a).__name__}")
    if len(arrays) > 1:
        _check_splits(arrays, "broadcast_arrays", ValueError)
    return _adapt.face(_core.broadcast_arrays(*arrays))


def _pairs_last(value, ndim: int):
    """Heat's reading of a sequence of ``k < ndim`` pairs: they belong to the last ``k`` axes."""
    if (
        isinstance(value, (list, tuple))
        and 1 < len(value) < ndim
        and builtins.all(isinstance(v, (list, tuple)) for v in value)
    ):
        return ((0, 0),) * (ndim - len(value)) + tuple(tuple(v) for v in value)
    return value


def _check_pairs(value, name: str) -> None:
    """Heat's checks of a pad argument's structure: numbers, or sequences of two numbers."""
    if not isinstance(value, (list, tuple)):
        return
    for item in value:
        if isinstance(item, (list, tuple)):
            if len(item) != 2:
                raise ValueError(f"`{name}` of `pad` must hold (before, after) pairs, got {item!r}")
            item_values = item
        else:
            item_values = (item,)
        for v in item_values:
            if isinstance(v, bool) or not isinstance(v, (numbers.Number, np.generic)):
                raise TypeError(f"`{name}` of `pad` must hold numbers, got {v!r}")


def pad(array, pad_width, mode: str = "constant", constant_values=0):
    """Heat's ``pad``: ``k`` pairs in ``pad_width`` or ``constant_values`` pad the last k axes.

    The shortcuts are numpy's (an int, one pair for every axis); see :func:`dndask.pad`.

    >>> import dndask.heat as ht
    >>> ht.pad(ht.zeros((1, 2, 2)), ((1, 0), (0, 1))).shape
    (1, 3, 3)
    """
    if not isinstance(array, _dndarray.DNDarray):
        raise TypeError(f"`array` of `pad` must be a DNDarray, got {type(array).__name__}")
    if not isinstance(mode, str):
        raise TypeError(f"`mode` of `pad` must be a str, got {type(mode).__name__}")
    if not isinstance(pad_width, (numbers.Integral, list, tuple)):
        raise TypeError(
            f"`pad_width` of `pad` must be an int or a sequence, got {type(pad_width).__name__}"
        )
    if isinstance(pad_width, (list, tuple)) and len(pad_width) > array.ndim:
        raise ValueError(
            f"`pad_width` of `pad` has {len(pad_width)} pairs for a {array.ndim}-D array"
        )
    _check_pairs(pad_width, "pad_width")
    _check_pairs(constant_values, "constant_values")
    widths = _pairs_last(pad_width, array.ndim)
    values = _pairs_last(constant_values, array.ndim)
    return _adapt.face(_core.pad(array, widths, mode=mode, constant_values=values))


def sort(a, axis: int = -1, descending: bool = False, out=None):
    """Heat's ``sort``: ``(values, indices)``, the indices int32; with ``out`` only the indices.

    Ties keep their order (also descending); along the split axis the result is
    balanced. See :func:`dndask.sort` and :func:`dndask.argsort`.

    >>> import dndask.heat as ht
    >>> v, i = ht.sort(ht.array([3, 1, 2], split=0), descending=True)
    >>> v.tolist(), i.tolist(), i.dtype is ht.int32
    ([3, 2, 1], [0, 2, 1], True)
    """
    if not isinstance(a, _dndarray.DNDarray):
        raise TypeError(f"`a` of `sort` must be a DNDarray, got {type(a).__name__}")
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"`axis` of `sort` must be an int, got {type(axis).__name__}")
    indices = _core.argsort(a, axis, descending=descending, balanced=True)
    values = _core.sort(a, axis, descending=descending, balanced=True)
    indices = _adapt.face(indices.astype(np.int32))
    if out is not None:
        _adapt.into(out, values, "sort")
        return indices
    return _adapt.face(values), indices


def split_axis_checked(fn):
    """Heat's ``split``: ``axis`` an int in ``[0, ndim)`` (a negative one is a ValueError)."""

    def split(x, indices_or_sections, axis=0):
        if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
            raise TypeError(f"`axis` of `split` must be an int, got {type(axis).__name__}")
        if isinstance(x, _dndarray.DNDarray) and not 0 <= axis < x.ndim:
            raise ValueError(f"`axis` of `split` must be in [0, {x.ndim}), got {axis} (as in Heat)")
        if isinstance(indices_or_sections, (list, tuple)) and np.ndim(indices_or_sections) > 1:
            raise ValueError(
                "`indices_or_sections` of `split` must be an int or a 1-D sequence, got "
                f"{np.ndim(indices_or_sections)}-D (as in Heat)"
            )
        return fn(x, indices_or_sections, axis)

    split.__name__ = split.__qualname__ = "split"
    split.__doc__ = split_axis_checked.__doc__
    return split


def _resplit_like(result, split):
    """``result`` split along ``split`` (balanced), where it has that axis; else ``None``."""
    split = split if split is not None and split < result.ndim else None
    return result if result.split == split else result.resplit(split)


def topk(a, k, dim: int = -1, largest: bool = True, sorted: bool = True, out=None):
    """Heat's ``topk``: the results keep ``a``'s split (balanced), ``out`` types must match.

    ``out`` is a pair whose types must be the values' type and int64, else a
    ``RuntimeError`` (torch's rule). See :func:`dndask.topk`.

    >>> import dndask.heat as ht
    >>> v, i = ht.topk(ht.array([[1, 5, 3]], split=1), 2)
    >>> v.tolist(), i.tolist(), v.split
    ([[5, 3]], [[1, 2]], 1)
    """
    values, indices = _core.topk(a, k, dim, largest, sorted)
    values, indices = _resplit_like(values, a.split), _resplit_like(indices, a.split)
    if out is None:
        return _adapt.face(values), _adapt.face(indices)
    if not isinstance(out, tuple) or len(out) != 2:
        raise TypeError(f"`out` of `topk` must be a tuple of two DNDarrays, got {out!r}")
    for buffer, result, what in ((out[0], values, "values"), (out[1], indices, "indices")):
        if not isinstance(buffer, _dndarray.DNDarray):
            raise TypeError(f"`out` of `topk` must hold DNDarrays, got {type(buffer).__name__}")
        if buffer.to_dask().dtype != result.to_dask().dtype:
            raise RuntimeError(
                f"`out` {what} of `topk` must have type {result.to_dask().dtype}, "
                f"got {buffer.to_dask().dtype} (torch's rule, as in Heat)"
            )
    _ops.into(out[0], values, "topk")
    _ops.into(out[1], indices, "topk")
    return out


def unique(a, sorted: bool = False, return_inverse: bool = False, axis=None):
    """Heat's ``unique(a, sorted, return_inverse, axis)``: ``[values, inverse]`` with the inverse.

    The values keep ``a``'s split where they have that axis (balanced), as Heat's
    do; the inverse of a ``split=None`` array has ``a``'s type, as in Heat. The
    values are always sorted. See :func:`dndask.unique`.

    >>> import dndask.heat as ht
    >>> ht.unique(ht.array([3, 1, 3], split=0), sorted=True).tolist()
    [1, 3]
    """
    if not isinstance(a, _dndarray.DNDarray):
        raise TypeError(f"`a` of `unique` must be a DNDarray, got {type(a).__name__}")
    result = _core.unique(a, return_inverse=return_inverse, axis=axis)
    values = result[0] if return_inverse else result
    values = _adapt.face(_resplit_like(values, a.split))
    if not return_inverse:
        return values
    inverse = result[1]
    if a.split is None:
        inverse = inverse.astype(a.to_dask().dtype)
    return [values, _adapt.face(inverse)]


def nonzero(x):
    """Heat's ``nonzero``: one int64 array of shape ``(n, ndim)`` (``(n,)`` for 1-D input).

    Row ``i`` holds the coordinates of the ``i``-th nonzero element in C order; the
    result is split 0 when ``x`` is split, as in Heat. See :func:`dndask.nonzero`.

    >>> import dndask.heat as ht
    >>> ht.nonzero(ht.array([[0, 3], [4, 0]], split=1)).tolist()
    [[0, 1], [1, 0]]
    """
    coords = _core.nonzero(x)
    if len(coords) == 1:
        return _adapt.face(coords[0])
    return _adapt.face(_core.stack(list(coords), axis=1))


def where(cond, x=None, y=None):
    """Heat's ``where``: with ``cond`` only, its :func:`nonzero`; ``x`` and ``y`` both or neither.

    Operands split along an axis other than ``cond``'s are a ``NotImplementedError``,
    as in Heat. See :func:`dndask.where`.

    >>> import dndask.heat as ht
    >>> ht.where(ht.array([0, 2, 3]) > 1).tolist()
    [1, 2]
    """
    if x is None and y is None:
        return nonzero(cond)
    if x is None or y is None:
        raise TypeError("`where` takes either both `x` and `y` or neither")
    if isinstance(cond, _dndarray.DNDarray) and cond.split is not None:
        for v in (x, y):
            if isinstance(v, _dndarray.DNDarray) and v.split not in (None, cond.split):
                raise NotImplementedError(
                    f"`where` of operands split along different axes ({cond.split} and "
                    f"{v.split}) is not implemented (as in Heat)"
                )
    return _adapt.face(_core.where(cond, x, y))


def axis_reduction_1d(fn, name: str):
    """Heat's ``any``/``all``: a reduction along an axis to a 0-d result has shape ``(1,)``."""

    def reduction(x, axis=None, out=None, keepdims: bool = False):
        result = fn(x, axis=axis, keepdims=keepdims)
        if axis is not None and not keepdims and result.ndim == 0:
            result = result.reshape((1,))
        if out is not None:
            return _adapt.face(_ops.into(out, result, name))
        return _adapt.face(result)

    reduction.__name__ = reduction.__qualname__ = name
    reduction.__doc__ = f"Heat's ``{name}``: shape ``(1,)`` along an axis of 1-D input."
    return reduction


def coordinate_key(array, key):
    """Heat's indexing key: an int DNDarray of ``array.ndim`` columns (``ndim > 1``) holds
    one element's coordinates per row (``nonzero``'s result), so it becomes a tuple of
    its columns; any other key is returned as it is."""
    if (
        isinstance(key, _dndarray.DNDarray)
        and array.ndim > 1
        and key.ndim == array.ndim
        and key.to_dask().dtype.kind in "iu"
        and key.shape[-1] == array.ndim
    ):
        return tuple(key[:, i] for i in range(array.ndim))
    return key


def diff(a, n: int = 1, axis: int = -1, prepend=None, append=None):
    """Heat's ``diff``: a DNDarray ``prepend``/``append`` must have length 1 along ``axis``.

    Heat takes scalars or such one-row DNDarrays (any other shape is a ValueError,
    other types a TypeError); numpy's longer blocks are refused. See
    :func:`dndask.diff`.

    >>> import dndask.heat as ht
    >>> ht.diff(ht.array([1, 4, 9], split=0), append=ht.array([16])).tolist()
    [3, 5, 7]
    """
    if isinstance(a, _dndarray.DNDarray) and a.ndim > 0:
        if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
            raise TypeError(f"`axis` of `diff` must be an int, got {type(axis).__name__}")
        ax = int(axis) % a.ndim if -a.ndim <= axis < a.ndim else None
        for value, what in ((prepend, "prepend"), (append, "append")):
            if value is None or _adapt._is_scalar(value):
                continue
            if not isinstance(value, _dndarray.DNDarray):
                raise TypeError(
                    f"`{what}` of `diff` must be a scalar or a DNDarray, got {type(value).__name__}"
                )
            if ax is not None:
                want = (*a.shape[:ax], 1, *a.shape[ax + 1 :])
                if value.shape != want:
                    raise ValueError(
                        f"`{what}` of `diff` must have shape {want}, got {value.shape} (as in Heat)"
                    )
    return _adapt.face(_core.diff(a, n, axis, prepend=prepend, append=append))


def repeat_warnings(a, repeats, axis) -> None:
    """Heat's warnings for a ``repeat(a, repeats, axis)`` that succeeded.

    Heat runs ``torch.repeat_interleave`` on each process's tensor, so it first
    resplits ``a`` along axis 0 when ``axis`` is None (a flattened result), and
    gathers or splits ``repeats`` to match ``a``'s layout; each such copy is a
    ``UserWarning``. dndask's ``repeat`` needs none of these copies (it plans the result
    from the global ``repeats``), so the face only reports where Heat would have made
    them: the conditions are Heat 1.8's, read from the splits. A list, tuple or numpy
    ``repeats`` counts as not split, an int as a broadcast (as does one element).

    >>> import warnings, dndask.heat as ht
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     repeat_warnings(ht.zeros((2, 3), split=1), 2, None)
    >>> str(caught[0].message).split(":")[0]
    '`a` of `repeat` is split along axis 1'
    """
    if 0 in a.shape:
        return
    a_split = a.split
    if axis is not None and axis < 0:
        axis += a.ndim
    r_split = repeats.split if isinstance(repeats, _dndarray.DNDarray) else None
    broadcast = isinstance(repeats, numbers.Integral) or _size(repeats) == 1

    def warn_a() -> None:
        warnings.warn(
            f"`a` of `repeat` is split along axis {a_split}: with `axis=None` Heat copies it "
            "with split 0 first",
            UserWarning,
            stacklevel=4,
        )

    def warn_repeats(target) -> None:
        has = "not split" if r_split is None else f"split along axis {r_split}"
        needs = "not split" if target is None else f"split along axis {target}"
        warnings.warn(
            f"`repeats` of `repeat` is {has}, but `a` (split {a_split}) with `axis={axis}` "
            f"needs it {needs}: Heat copies it first",
            UserWarning,
            stacklevel=4,
        )

    if broadcast:
        if axis is None and a_split not in (None, 0):
            warn_a()
        if isinstance(repeats, _dndarray.DNDarray) and r_split is not None:
            warn_repeats(None)
        return
    if a_split is None or (axis is not None and a_split != axis):
        if r_split is not None:
            warn_repeats(None)
        return
    if axis is None and a_split != 0:
        warn_a()
    if r_split != 0:  # Heat splits `repeats` along axis 0 like `a`
        warn_repeats(0)


def _size(repeats) -> int:
    return repeats.size if isinstance(repeats, _dndarray.DNDarray) else int(np.size(repeats))
