"""Linear algebra on DNDarrays: products, norms, TSQR and the SVD built on it.

Products
--------
:func:`matmul`, :func:`dot`, :func:`tensordot`, :func:`vecdot` and :func:`outer`
share one engine. Each names the axes of its operands with labels (a label
shared by both operands and the result is a batch axis, one shared by the
operands only is contracted), picks the result's split by its documented rule
(Heat's where Heat has one), and asks the pure planner :func:`plan_product` how
to build the result's blocks. The planner knows two ways:

- ``"outer"``: the result is split along an axis an operand carries (both, for a
  shared batch axis). Rank ``r`` computes block ``r`` from that operand's block
  ``r`` and the *whole* of the other operand, fetching the chunks it lacks once
  (an allgather). Ranks with an empty block fetch nothing.
- ``"inner"``: the contraction axis is split. Both operands are lined up along it
  (same counts), every rank holding a slice multiplies its two slices, and the
  partial results are summed: reduce-scattered when the result is split (rank
  ``c`` receives only the pieces of its own block), or summed in a tree when it
  is not (the result is then one chunk, e.g. a scalar).

It estimates the bytes each way moves between workers (re-laying out the
operands included) and takes the cheaper one, preferring ``"outer"`` on a tie.
The split of the result never depends on that choice. No plan gathers both
operands on one worker, except for an unsplit result computed from unsplit
operands (they already are on rank 0).

Factorizations
--------------
:func:`qr` is the tall-skinny QR (TSQR): one local QR per rank, a QR of the
stacked small ``R`` factors on rank 0, and ``Q_r = Q_local_r @ block_r`` on rank
``r``. Only the ``R`` factors and the blocks of the second-level ``Q`` travel.
:func:`svd` adds the SVD of the small ``R`` to the same graph.
"""

from __future__ import annotations

import functools
import math
import numbers
import operator
from collections.abc import Callable, Sequence
from typing import NamedTuple

import dask.array as da
import numpy as np
import torch
from dask._task_spec import List, Task, TaskRef
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from . import _distribution, _dndarray, _graph, _layout, _ops, _per_rank, _torch

# ============================================================ pure planning


class Layout(NamedTuple):
    """Where an operand's data lives: its shape, split axis, rows per rank, bytes per element."""

    shape: tuple[int, ...]
    split: int | None
    counts: tuple[int, ...]
    itemsize: int


class Need(NamedTuple):
    """How a plan needs an operand: ``axis=None`` whole on every active rank, else blocked.

    Blocked means split along ``axis`` with ``counts`` rows per rank.
    """

    axis: int | None
    counts: tuple[int, ...]


class ProductSpec(NamedTuple):
    """A product's axes as labels.

    ``a_labels``/``b_labels`` name each operand's axes, ``out_labels`` the
    result's; ``sizes`` maps labels to lengths. ``a_heirs``/``b_heirs`` list,
    for each operand axis, the result labels that inherit its split, in order
    of preference (used by the split rules).
    """

    a_labels: tuple[str, ...]
    b_labels: tuple[str, ...]
    out_labels: tuple[str, ...]
    sizes: dict
    a_heirs: tuple[tuple[str, ...], ...]
    b_heirs: tuple[tuple[str, ...], ...]


class ProductPlan(NamedTuple):
    """How to build a product: see the module docstring for ``kind``.

    ``split``/``counts`` describe the result, ``a``/``b`` what each operand must
    look like, ``contributors`` the ranks that compute a partial product
    (``"inner"`` only) and ``moved`` the estimated bytes sent between workers.
    """

    kind: str
    split: int | None
    counts: tuple[int, ...]
    a: Need
    b: Need
    contributors: tuple[int, ...]
    moved: int


def _nbytes(layout: Layout) -> int:
    return math.prod(layout.shape) * layout.itemsize


def _held(layout: Layout, rank: int) -> int:
    """Bytes of the operand that ``rank`` already holds."""
    total = _nbytes(layout)
    if layout.split is None:
        return total if rank == 0 else 0
    rows = layout.shape[layout.split]
    return total * layout.counts[rank] // rows if rows else 0


def whole_cost(layout: Layout, ranks: Sequence[int]) -> int:
    """Bytes moved so that every rank in ``ranks`` holds the whole operand.

    >>> whole_cost(Layout((4, 2), 0, (2, 2), 8), (0, 1))
    64
    """
    total = _nbytes(layout)
    return sum(total - _held(layout, r) for r in ranks)


def block_cost(layout: Layout, axis: int, counts: Sequence[int]) -> int:
    """Bytes moved to split the operand along ``axis`` with ``counts`` rows per rank.

    Rows already on their target rank stay (rank ``r`` keeps the overlap of its
    old and new blocks).

    >>> block_cost(Layout((4, 2), 0, (2, 2), 8), 0, (2, 2))
    0
    >>> block_cost(Layout((4, 2), None, (), 8), 0, (2, 2))
    32
    """
    total = _nbytes(layout)
    target_rows = layout.shape[axis]
    if total == 0:
        return 0
    if layout.split == axis:
        return _layout.moved_rows(layout.counts, counts) * total // target_rows
    if layout.split is None:
        return total - total * counts[0] // target_rows
    source_rows = layout.shape[layout.split]
    kept = sum(
        total * s * t // (source_rows * target_rows)
        for s, t in zip(layout.counts, counts, strict=True)
    )
    return total - kept


def _need_cost(layout: Layout, need: Need, active: Sequence[int]) -> int:
    if need.axis is None:
        return whole_cost(layout, active)
    return block_cost(layout, need.axis, need.counts)


def _split_label(labels: tuple[str, ...], layout: Layout) -> str | None:
    return None if layout.split is None else labels[layout.split]


def _result_counts(spec: ProductSpec, a: Layout, b: Layout, label: str, size: int):
    """Rows per rank of the result along ``label``: kept from an operand split along it."""
    if _split_label(spec.a_labels, a) == label:
        return a.counts
    if _split_label(spec.b_labels, b) == label:
        return b.counts
    return _layout.balanced_counts(spec.sizes[label], size)


def _outer_plan(spec, a: Layout, b: Layout, label: str | None, size: int) -> ProductPlan:
    if label is None:
        split, counts, active = None, (), (0,)
    else:
        split = spec.out_labels.index(label)
        counts = tuple(_result_counts(spec, a, b, label, size))
        active = tuple(r for r, c in enumerate(counts) if c)
    if math.prod(spec.sizes[lab] for lab in spec.out_labels) == 0:
        active = ()
    needs = [
        Need(labels.index(label), counts)
        if label is not None and label in labels
        else Need(None, ())
        for labels in (spec.a_labels, spec.b_labels)
    ]
    moved = _need_cost(a, needs[0], active) + _need_cost(b, needs[1], active)
    return ProductPlan("outer", split, counts, needs[0], needs[1], (), moved)


def _reduce_cost(out_bytes: int, counts: Sequence[int], contributors: Sequence[int]) -> int:
    """Bytes of a reduce-scatter (``counts``) or, with no counts, of a tree sum to rank 0."""
    if not counts:
        return max(len(contributors) - 1, 0) * out_bytes + (0 if 0 in contributors else out_bytes)
    rows = sum(counts)
    if rows == 0:
        return 0
    return sum(
        out_bytes * c // rows for r in contributors for dst, c in enumerate(counts) if dst != r
    )


def _inner_plan(spec, a, b, contracted: str, label, size: int, out_itemsize: int):
    a_axis, b_axis = spec.a_labels.index(contracted), spec.b_labels.index(contracted)
    k_counts = a.counts if a.split == a_axis else b.counts
    contributors = tuple(r for r, c in enumerate(k_counts) if c)
    if label is None:
        split, counts = None, ()
    else:
        split = spec.out_labels.index(label)
        counts = _layout.balanced_counts(spec.sizes[label], size)
    out_bytes = math.prod(spec.sizes[lab] for lab in spec.out_labels) * out_itemsize
    need_a, need_b = Need(a_axis, tuple(k_counts)), Need(b_axis, tuple(k_counts))
    moved = (
        block_cost(a, a_axis, k_counts)
        + block_cost(b, b_axis, k_counts)
        + _reduce_cost(out_bytes, counts, contributors)
    )
    return ProductPlan("inner", split, tuple(counts), need_a, need_b, contributors, moved)


def _split_contractions(spec: ProductSpec, a: Layout, b: Layout) -> list[str]:
    """Contracted labels along which an operand is split (candidates for an inner plan)."""
    contracted = set(spec.a_labels) & set(spec.b_labels) - set(spec.out_labels)
    found = []
    for labels, layout in ((spec.a_labels, a), (spec.b_labels, b)):
        label = _split_label(labels, layout)
        if label in contracted and label not in found:
            found.append(label)
    return found


def plan_product(
    spec: ProductSpec, a: Layout, b: Layout, label: str | None, size: int, out_itemsize: int
) -> ProductPlan:
    """Choose how to compute a product split along the result axis ``label``.

    Pure: it reads shapes and counts only. Inner plans are considered for
    every split contraction axis that has rows somewhere; the plan moving the
    fewest bytes wins, an outer plan on a tie.

    >>> spec = ProductSpec(("m", "k"), ("k", "n"), ("m", "n"), {"m": 4, "k": 6, "n": 2},
    ...                    (("m",), ("n", "m")), (("m", "n"), ("n",)))
    >>> a, b = Layout((4, 6), 1, (3, 3), 8), Layout((6, 2), 0, (3, 3), 8)
    >>> plan = plan_product(spec, a, b, "n", 2, 8)
    >>> plan.kind, plan.split, plan.counts, plan.moved
    ('inner', 1, (1, 1), 64)
    """
    candidates = [_outer_plan(spec, a, b, label, size)]
    for contracted in _split_contractions(spec, a, b):
        plan = _inner_plan(spec, a, b, contracted, label, size, out_itemsize)
        if plan.contributors:
            candidates.append(plan)
    return min(candidates, key=lambda p: p.moved)


def _first_split_heir(spec: ProductSpec, a_split, b_split) -> str | None:
    """The first split operand's heir in the result (None if its split axis disappears)."""
    for split, heirs in ((a_split, spec.a_heirs), (b_split, spec.b_heirs)):
        if split is not None:
            return next((lab for lab in heirs[split] if lab in spec.out_labels), None)
    return None


def _batch_labels(prefix: str, shape: tuple[int, ...], batch: tuple[int, ...]):
    """Labels of an operand's batch axes: shared with the result, or its own if broadcast."""
    offset = len(batch) - len(shape)
    labels, heirs, sizes = [], [], {}
    for i, s in enumerate(shape):
        j = i + offset
        label = f"batch{j}" if s == batch[j] else f"{prefix}-bcast{i}"
        labels.append(label)
        heirs.append((f"batch{j}",))
        sizes[label] = s
    return labels, heirs, sizes


def matmul_spec(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> ProductSpec:
    """The labels of ``a @ b`` (1-D operands are vectors, leading axes batch axes).

    ``ValueError`` if the inner dimensions differ or the batch axes do not broadcast.

    >>> matmul_spec((3, 4), (4,)).out_labels
    ('m',)
    """
    a_vec, b_vec = len(a_shape) == 1, len(b_shape) == 1
    pa = (1, *a_shape) if a_vec else tuple(a_shape)
    pb = (*b_shape, 1) if b_vec else tuple(b_shape)
    if pa[-1] != pb[-2]:
        raise ValueError(f"inner dimensions differ: {pa[-1]} != {pb[-2]}")
    batch = tuple(np.broadcast_shapes(pa[:-2], pb[:-2]))
    sizes = {"m": pa[-2], "k": pa[-1], "n": pb[-1]}
    sizes.update({f"batch{j}": s for j, s in enumerate(batch)})
    a_labels, a_heirs, a_sizes = _batch_labels("a", pa[:-2], batch)
    b_labels, b_heirs, b_sizes = _batch_labels("b", pb[:-2], batch)
    sizes.update(a_sizes)
    sizes.update(b_sizes)
    # Heat's index rule: a split contraction axis hands its split to the column
    # axis (a.split 1 -> result split 1), b's to the row axis (b.split 0 -> 0).
    if a_vec:
        a_labels, a_heirs = ["k"], [("n", "m")]
    else:
        a_labels += ["m", "k"]
        a_heirs += [("m",), ("n", "m")]
    if b_vec:
        b_labels, b_heirs = ["k"], [("m", "n")]
    else:
        b_labels += ["k", "n"]
        b_heirs += [("m", "n"), ("n",)]
    out = [f"batch{j}" for j in range(len(batch))]
    out += ([] if a_vec else ["m"]) + ([] if b_vec else ["n"])
    return ProductSpec(
        tuple(a_labels), tuple(b_labels), tuple(out), sizes, tuple(a_heirs), tuple(b_heirs)
    )


def matmul_split(spec: ProductSpec, a_split: int | None, b_split: int | None) -> int | None:
    """Heat's split of ``a @ b``: ``a``'s if ``a`` is split, else ``b``'s, else None.

    A split row or column axis stays where it is; a split contraction axis of
    ``a`` makes the result split along its columns and one of ``b`` along its
    rows (Heat's ``c.split = a.split``, or ``b.split`` when ``a`` is unsplit).
    A vector result is split along axis 0 when an operand is split, a scalar
    never.

    >>> matmul_split(matmul_spec((5, 4), (4, 3)), 1, 0)
    1
    >>> matmul_split(matmul_spec((4,), (4, 3)), 0, None)
    0
    """
    label = _first_split_heir(spec, a_split, b_split)
    return None if label is None else spec.out_labels.index(label)


def tensordot_spec(a_shape, b_shape, a_axes: Sequence[int], b_axes: Sequence[int]):
    """The labels of ``tensordot(a, b, (a_axes, b_axes))`` (axes already checked).

    >>> tensordot_spec((2, 3), (3, 4), [1], [0]).out_labels
    ('a0', 'b1')
    """
    a_labels = [f"a{i}" for i in range(len(a_shape))]
    b_labels = [f"b{j}" for j in range(len(b_shape))]
    for t, (i, j) in enumerate(zip(a_axes, b_axes, strict=True)):
        a_labels[i] = b_labels[j] = f"k{t}"
    sizes = dict(zip(a_labels, a_shape, strict=True))
    sizes.update(zip(b_labels, b_shape, strict=True))
    out = tuple(lab for lab in a_labels if lab[0] == "a") + tuple(
        lab for lab in b_labels if lab[0] == "b"
    )
    a_heirs = tuple((lab,) if lab[0] == "a" else () for lab in a_labels)
    b_heirs = tuple((lab,) if lab[0] == "b" else () for lab in b_labels)
    return ProductSpec(tuple(a_labels), tuple(b_labels), out, sizes, a_heirs, b_heirs)


def tensordot_split(spec: ProductSpec, a_split, b_split) -> int | None:
    """``a``'s split axis if it survives, else ``b``'s, else axis 0 (None for unsplit or 0-d).

    >>> tensordot_split(tensordot_spec((6, 2), (6, 3), [0], [0]), 0, 0)
    0
    """
    for split, heirs in ((a_split, spec.a_heirs), (b_split, spec.b_heirs)):
        if split is not None and heirs[split]:
            return spec.out_labels.index(heirs[split][0])
    if (a_split is not None or b_split is not None) and spec.out_labels:
        return 0
    return None


def vecdot_spec(a_shape, b_shape, axis: int) -> ProductSpec:
    """The labels of ``vecdot(a, b, axis)``; ``axis`` is negative, counted from the end.

    >>> vecdot_spec((2, 3), (3,), -1).out_labels
    ('d0',)
    """
    shape = tuple(np.broadcast_shapes(tuple(a_shape), tuple(b_shape)))
    nd = len(shape)
    contracted = f"d{nd + axis}"
    sizes: dict = {f"d{j}": s for j, s in enumerate(shape)}
    labels_heirs = []
    for prefix, own in (("a", a_shape), ("b", b_shape)):
        labels, heirs = [], []
        for i, s in enumerate(own):
            j = i + nd - len(own)
            label = f"d{j}" if s == shape[j] else f"{prefix}-bcast{i}"
            sizes.setdefault(label, s)
            labels.append(label)
            heirs.append(() if label == contracted else (f"d{j}",))
        labels_heirs.append((tuple(labels), tuple(heirs)))
    out = tuple(f"d{j}" for j in range(nd) if f"d{j}" != contracted)
    (a_labels, a_heirs), (b_labels, b_heirs) = labels_heirs
    return ProductSpec(a_labels, b_labels, out, sizes, a_heirs, b_heirs)


# ============================================================ operands


def _describe(x) -> str:
    return f"shape {tuple(x.shape)} (split {x.split})"


def _check_numeric(value, name: str) -> None:
    kind = value.dtype.kind
    if kind not in "biufc":
        raise TypeError(f"`{name}` must have a boolean or numeric dtype, got {value.dtype}")


def _comm_of(values: Sequence, names: Sequence[str], fname: str):
    """The common comm of the DNDarray operands; checks types first."""
    dnds = []
    for value, name in zip(values, names, strict=True):
        if isinstance(value, _dndarray.DNDarray):
            dnds.append(value)
        elif isinstance(value, torch.Tensor):
            _check_numeric(_torch.from_torch(value), name)
        elif isinstance(value, np.ndarray):
            _check_numeric(value, name)
        else:
            raise TypeError(
                f"`{name}` must be a DNDarray, numpy array or torch tensor, "
                f"got {type(value).__name__}"
            )
    if not dnds:
        raise TypeError(f"`{fname}` needs at least one DNDarray operand, got none")
    comm = dnds[0].comm
    for value in dnds[1:]:
        if value.comm != comm:
            raise ValueError(
                f"operands of `{fname}` must share a comm, got {comm!r} and {value.comm!r}"
            )
    return comm


def _as_dndarray(value, comm) -> _dndarray.DNDarray:
    """A numpy/torch operand sent from the driver to rank 0 (an unsplit DNDarray)."""
    if isinstance(value, _dndarray.DNDarray):
        return value
    if isinstance(value, torch.Tensor):
        value = _torch.from_torch(value)
    return _per_rank.scatter(np.asarray(value), None, comm)


def _operands(a, b, fname: str):
    comm = _comm_of((a, b), ("a", "b"), fname)
    return _as_dndarray(a, comm), _as_dndarray(b, comm), comm


def _layout_of(x: _dndarray.DNDarray) -> Layout:
    counts = x.counts_displs()[0] if x.split is not None else ()
    return Layout(x.shape, x.split, tuple(counts), x.dtype.itemsize)


def _relayout(x: _dndarray.DNDarray, need: Need) -> _dndarray.DNDarray:
    """``x`` split along ``need.axis`` with ``need.counts`` (unchanged for a whole need)."""
    if need.axis is None:
        return x
    if x.split != need.axis:
        x = x.resplit(need.axis)
    if list(need.counts) != x.lshape_map[:, need.axis].tolist():
        target = x.lshape_map
        target[:, need.axis] = torch.tensor(need.counts)
        x = x.redistribute(target_map=target)
    return x


# ============================================================ product graphs


def _joined(part, axis: int | None) -> np.ndarray:
    """A block, or the whole operand from the list of its chunks."""
    if not isinstance(part, list):
        return part
    return part[0] if len(part) == 1 else np.concatenate(part, axis=axis)


def _block_product(fn: Callable, a, a_axis, b, b_axis, dtype) -> np.ndarray:
    out = fn(_joined(a, a_axis), _joined(b, b_axis))
    return np.asarray(out).astype(dtype, copy=False)


def _zeros(shape: tuple[int, ...], dtype) -> np.ndarray:
    return np.zeros(shape, dtype=dtype)


def _sum_parts(parts: list, dtype) -> np.ndarray:
    out = np.array(parts[0], dtype=dtype, copy=True)
    for part in parts[1:]:
        out += part
    return out


def _chunk_key(x: da.Array, split: int | None, rank: int) -> tuple:
    return (x.name, *_graph.block_index(split, x.ndim, rank))


def _piece(x: _dndarray.DNDarray, need: Need, rank: int):
    """The task argument standing for what ``rank`` needs of ``x``, and its join axis."""
    arr = x.to_dask()
    if need.axis is not None:
        return TaskRef(_chunk_key(arr, need.axis, rank)), None
    if x.split is None:
        return List(TaskRef(_chunk_key(arr, None, 0))), None
    counts = x.lshape_map[:, x.split].tolist()
    ranks = [r for r, c in enumerate(counts) if c] or [0]
    return List(*(TaskRef(_chunk_key(arr, x.split, r)) for r in ranks)), x.split


def _block_shape(out_shape, split, counts, rank) -> tuple[int, ...]:
    return tuple(counts[rank] if axis == split else s for axis, s in enumerate(out_shape))


def _outer_graph(name, fn, a, b, plan, out_shape, dtype, size):
    dsk = {}
    for r in range(size if plan.split is not None else 1):
        key = (name, *_graph.block_index(plan.split, len(out_shape), r))
        shape = _block_shape(out_shape, plan.split, plan.counts, r)
        if math.prod(shape) == 0:
            dsk[key] = Task(key, _zeros, shape, dtype)
            continue
        a_arg, a_axis = _piece(a, plan.a, r)
        b_arg, b_axis = _piece(b, plan.b, r)
        dsk[key] = Task(key, _block_product, fn, a_arg, a_axis, b_arg, b_axis, dtype)
    return dsk, {}


def _tree_sum(dsk: dict, name: str, keys: list, out_key: tuple, dtype) -> None:
    """Sum the partials pairwise; the last sum is ``out_key`` (rank 0's chunk)."""
    level = 0
    while len(keys) > 2:
        paired = []
        for i in range(0, len(keys), 2):
            group = keys[i : i + 2]
            if len(group) == 1:
                paired.append(group[0])
                continue
            key = (f"{name}-sum", level, i // 2)
            dsk[key] = Task(key, _sum_parts, List(*(TaskRef(k) for k in group)), dtype)
            paired.append(key)
        keys, level = paired, level + 1
    dsk[out_key] = Task(out_key, _sum_parts, List(*(TaskRef(k) for k in keys)), dtype)


def _inner_graph(name, fn, a, b, plan, out_shape, dtype, size):
    dsk, hints, partials = {}, {}, {}
    for r in plan.contributors:
        key = (f"{name}-partial", r)
        a_arg, _ = _piece(a, plan.a, r)
        b_arg, _ = _piece(b, plan.b, r)
        dsk[key] = Task(key, _block_product, fn, a_arg, None, b_arg, None, dtype)
        hints[key] = r
        partials[r] = key
    ndim = len(out_shape)
    if plan.split is None:
        _tree_sum(dsk, name, list(partials.values()), (name, *(0,) * ndim), dtype)
        return dsk, hints
    starts = _layout.displacements(plan.counts)
    for c in range(size):
        key = (name, *_graph.block_index(plan.split, ndim, c))
        shape = _block_shape(out_shape, plan.split, plan.counts, c)
        if math.prod(shape) == 0:
            dsk[key] = Task(key, _zeros, shape, dtype)
            continue
        index = tuple(
            slice(starts[c], starts[c] + plan.counts[c]) if axis == plan.split else slice(None)
            for axis in range(ndim)
        )
        pieces = []
        for r, partial in partials.items():
            piece = (f"{name}-piece", r, c)
            # sliced where the partial is, so only this block travels to rank c
            dsk[piece] = _distribution.SliceTask(piece, operator.getitem, TaskRef(partial), index)
            hints[piece] = r
            pieces.append(TaskRef(piece))
        dsk[key] = Task(key, _sum_parts, List(*pieces), dtype)
    return dsk, hints


def _result_dtype(fn: Callable, a, b) -> np.dtype:
    dummy_a = np.ones((1,) * a.ndim, dtype=a.dtype)
    dummy_b = np.ones((1,) * b.ndim, dtype=b.dtype)
    return np.asarray(fn(dummy_a, dummy_b)).dtype


def _product(fname: str, fn: Callable, a, b, spec: ProductSpec, label, dtype=None):
    """Plan, re-lay out the operands and build the product's graph."""
    comm = a.comm
    dtype = _result_dtype(fn, a, b) if dtype is None else np.dtype(dtype)
    plan = plan_product(spec, _layout_of(a), _layout_of(b), label, comm.size, dtype.itemsize)
    a2, b2 = _relayout(a, plan.a), _relayout(b, plan.b)
    out_shape = tuple(spec.sizes[lab] for lab in spec.out_labels)
    name = f"{fname}-{tokenize(a2.to_dask().name, b2.to_dask().name, fn, plan, spec)}"
    build = _outer_graph if plan.kind == "outer" else _inner_graph
    dsk, hints = build(name, fn, a2, b2, plan, out_shape, dtype, comm.size)
    deps = [a2.to_dask()] if a2 is b2 else [a2.to_dask(), b2.to_dask()]
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=deps)
    chunks = _layout.chunks_for(out_shape, plan.split, plan.counts)
    x = da.Array(graph, name, chunks, meta=_graph.meta_of(dtype, len(out_shape)))
    out = _dndarray.from_dask(x, plan.split, comm, parents=(a2, b2))
    out._hints.update(hints)
    return out


# ============================================================ public products


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
    a, b, _ = _operands(a, b, "matmul")
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


def dot(a, b):
    """numpy's ``dot``: the product of the last axis of ``a`` with the second-to-last of ``b``.

    - a scalar (or 0-d) operand: ``a * b`` (split as in elementwise operations);
    - both at most 2-D, or ``b`` 1-D, or ``a`` 1-D: :func:`matmul` (same values
      as numpy's ``dot`` there, and Heat's split rule);
    - otherwise :func:`tensordot` over ``a``'s last and ``b``'s second-to-last axis.

    Parameters
    ----------
    a, b : DNDarray, numpy.ndarray, torch.Tensor or scalar
        At least one is a DNDarray.

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
        return _ops.binary(operator.mul, a, b)
    a, b, _ = _operands(a, b, "dot")
    if max(a.ndim, b.ndim) <= 2 or min(a.ndim, b.ndim) == 1:
        return matmul(a, b)
    return tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 2]))


def _is_scalar_like(value) -> bool:
    if isinstance(value, (_dndarray.DNDarray, np.ndarray, torch.Tensor)):
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
    a, b, _ = _operands(a, b, "tensordot")
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


def vecdot(a, b, axis=-1):
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
    a, b, _ = _operands(a, b, "vecdot")
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
    return _product("vecdot", functools.partial(np.vecdot, axis=neg), a, b, spec, label)


def _flattened(x: _dndarray.DNDarray) -> _dndarray.DNDarray:
    """``x`` as 1-D in C order; a split other than 0 is first moved to axis 0."""
    if x.ndim == 1:
        return x
    if x.split is not None and x.split != 0:
        x = x.resplit(0)
    arr = x.to_dask()
    rest = math.prod(x.shape[1:])
    if x.split is None:
        chunks = ((x.size,),)
    else:
        chunks = (tuple(c * rest for c in x.lshape_map[:, 0].tolist()),)
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
    a, b, _ = _operands(a, b, "outer")
    a, b = _flattened(a), _flattened(b)
    if split is None:
        split = 0 if a.split is not None or b.split is not None else None
    spec = ProductSpec(("i",), ("j",), ("i", "j"), {"i": a.size, "j": b.size}, (), ())
    label = None if split is None else ("i", "j")[int(split)]
    return _product("outer", np.multiply.outer, a, b, spec, label)


# ============================================================ norms


def _real_float(x: _dndarray.DNDarray) -> _dndarray.DNDarray:
    """``x`` as numpy's norms see it: integers and booleans become float64."""
    if x.dtype.kind in "fc":
        return x
    return x.astype(np.float64)


def _check_array(x, name: str = "x") -> None:
    if not isinstance(x, _dndarray.DNDarray):
        raise TypeError(f"`{name}` must be a DNDarray, got {type(x).__name__}")


def _check_keepdims(keepdims) -> None:
    if not isinstance(keepdims, bool):
        raise TypeError(f"`keepdims` must be a bool, got {type(keepdims).__name__}")


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
        meta=_graph.meta_of(dtype, len(chunks)),
    )
    split = _layout.reduced_split(x.split, axes, keepdims)
    return _dndarray.from_dask(out, split, x.comm, parents=(x,))


def _norm_dtype(x: _dndarray.DNDarray) -> np.dtype:
    return np.empty(0, dtype=x.dtype).real.dtype


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
        total = (mag * mag).sum(axis=axes, keepdims=keepdims)
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
    _check_keepdims(keepdims)
    axes = _layout.normalize_axes(axis, x.ndim)
    x = _real_float(x)
    if x.split is None or x.split not in axes:
        fn = functools.partial(np.linalg.vector_norm, ord=ord, axis=axes, keepdims=keepdims)
        return _local_blocks(x, fn, axes, keepdims, _norm_dtype(x))
    return _vector_norm_over_split(x, ord, axes, keepdims)


def _matrix_axes(axis, ndim: int) -> tuple[int, int]:
    if not isinstance(axis, (tuple, list)) or len(axis) != 2:
        raise TypeError(f"`axis` must be a pair of ints, got {axis!r}")
    if ndim < 2:
        raise ValueError(f"a matrix norm needs at least 2 dimensions, got {ndim}")
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
    if x.ndim != 2:
        raise NotImplementedError(
            f"`matrix_norm` with ord={ord!r} of a stack of matrices split along a matrix axis "
            f"({_describe(x)}) is not implemented"
        )
    s = svd(x, compute_uv=False)
    value = s.sum() if ord == "nuc" else (s.max() if ord == 2 else s.min())
    return _reshape_keep(value, 2) if keepdims else value


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
    _check_keepdims(keepdims)
    rows, cols = _matrix_axes(axis, x.ndim)
    x = _real_float(x)
    if x.split is None or x.split not in (rows, cols):
        fn = functools.partial(np.linalg.norm, ord=ord, axis=(rows, cols), keepdims=keepdims)
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
    _check_keepdims(keepdims)
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


# ============================================================ QR and SVD


class QR(NamedTuple):
    """What :func:`qr` returns: ``Q`` (None for ``mode="r"``) and ``R``."""

    Q: _dndarray.DNDarray | None
    R: _dndarray.DNDarray


class SVD(NamedTuple):
    """What :func:`svd` returns with ``compute_uv=True``: ``A = U @ diag(S) @ V.conj().T``.

    ``V`` holds the right singular vectors as columns (Heat's convention), not
    numpy's ``Vh``.
    """

    U: _dndarray.DNDarray
    S: _dndarray.DNDarray
    V: _dndarray.DNDarray


def _decomposition_input(a, fname: str) -> _dndarray.DNDarray:
    """``a`` checked and, as in numpy's linalg, integers and booleans taken as float64."""
    _check_array(a, "a")
    if a.ndim < 2:
        raise ValueError(f"`{fname}` needs `a` with at least 2 dimensions, got {a.ndim}")
    if a.dtype.kind in "fc" and a.dtype.itemsize < 4:
        raise TypeError(f"`{fname}` supports float32, float64 and complex dtypes, got {a.dtype}")
    return a if a.dtype.kind in "fc" else a.astype(np.float64)


def _positive_diagonal(q: np.ndarray | None, r: np.ndarray):
    """Scale R's rows (and Q's columns) so that R's diagonal is real and non-negative.

    ``Q D`` and ``conj(D) R`` with ``D`` diagonal of unit modulus still multiply
    to ``A``; the fixed signs make results comparable across layouts.
    """
    k = min(r.shape[-2], r.shape[-1])
    diag = np.diagonal(r[..., :k, :k], axis1=-2, axis2=-1)
    mag = np.abs(diag)
    phase = np.where(mag == 0, 1, diag / np.where(mag == 0, 1, mag)).astype(r.dtype)
    r = r.copy()
    r[..., :k, :] *= np.conj(phase)[..., :, None]
    if q is not None:
        q = q.copy()
        q[..., :, :k] *= phase[..., None, :]
    return q, r


def _qr_block(block: np.ndarray, mode: str) -> tuple:
    if mode == "r":
        return (_positive_diagonal(None, np.linalg.qr(block, mode="r"))[1],)
    return _positive_diagonal(*np.linalg.qr(block, mode=mode))


def _svd_block(block: np.ndarray, full_matrices: bool, compute_uv: bool) -> tuple:
    if not compute_uv:
        return (np.linalg.svd(block, compute_uv=False),)
    u, s, vh = np.linalg.svd(block, full_matrices=full_matrices)
    return u, s, np.swapaxes(vh, -1, -2).conj()


def _wrap(name: str, dsk: dict, deps: list, shape, split, counts, dtype, comm, parents, hints):
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=deps)
    chunks = _layout.chunks_for(shape, split, counts)
    x = da.Array(graph, name, chunks, meta=_graph.meta_of(dtype, len(shape)))
    out = _dndarray.from_dask(x, split, comm, parents=parents)
    out._hints.update(hints)
    return out


def _per_block(x: _dndarray.DNDarray, fn: Callable, outputs: Sequence, prefix: str) -> list:
    """Run ``fn`` on every chunk where it lives; it returns one array per ``outputs`` entry.

    ``outputs`` holds ``(global shape, dtype)`` pairs; each result is split like
    ``x`` (along a batch axis, or not at all) with ``x``'s counts.
    """
    arr, split, comm = x.to_dask(), x.split, x.comm
    counts = tuple(x.lshape_map[:, split].tolist()) if split is not None else ()
    name = f"{prefix}-{tokenize(arr.name, fn)}"
    ranks = range(comm.size) if split is not None else range(1)
    dsk, hints = {}, {}
    for r in ranks:
        key = (f"{name}-stage", r)
        dsk[key] = Task(key, fn, TaskRef(_chunk_key(arr, split, r)))
        hints[key] = r
    results = []
    for i, (shape, dtype) in enumerate(outputs):
        out_name = f"{name}-{i}"
        layer = dict(dsk)
        for r in ranks:
            key = (out_name, *_graph.block_index(split, len(shape), r))
            layer[key] = Task(key, operator.getitem, TaskRef((f"{name}-stage", r)), i)
        results.append(
            _wrap(out_name, layer, [arr], shape, split, counts, dtype, comm, (x,), hints)
        )
    return results


def _local_qr(block: np.ndarray, mode: str) -> tuple:
    if mode == "r":
        return None, np.linalg.qr(block, mode="r")
    return tuple(np.linalg.qr(block))


def _second(pair: tuple) -> np.ndarray:
    return pair[1]


def _tsqr_merge(factors: list, n: int, dtype, want: str) -> dict:
    """QR (and SVD) of the stacked R factors: the only step that sees more than one rank."""
    stacked = np.concatenate(factors, axis=0) if factors else np.zeros((0, n), dtype=dtype)
    q2, r = _positive_diagonal(*np.linalg.qr(stacked))
    out = {"R": r}
    if want == "s":
        out["S"] = np.linalg.svd(r, compute_uv=False)
    if want == "svd":
        u_r, s, vh = np.linalg.svd(r, full_matrices=False)
        q2 = q2 @ u_r
        out.update(S=s, V=vh.conj().T)
    if want in ("qr", "svd"):
        bounds = np.cumsum([f.shape[0] for f in factors])[:-1]
        out["blocks"] = tuple(np.split(q2, bounds, axis=0))
    return out


def _block_of(merged: dict, index: int) -> np.ndarray:
    return merged["blocks"][index]


def _times(pair: tuple, block: np.ndarray) -> np.ndarray:
    return pair[0] @ block


def _tsqr(a: _dndarray.DNDarray, want: str) -> dict:
    """The TSQR of a 2-D, split=0 DNDarray as a graph.

    ``want``: ``"qr"`` (Q and R), ``"r"`` (R), ``"svd"`` (Q holding U, S, V) or
    ``"s"`` (S). Rank ``r`` factors its rows locally; only the small R factor
    (at most ``n x n``) leaves it. Rank 0 factors the stacked R factors (and,
    for the SVD, the resulting R), then sends rank ``r`` its block of the
    second-level Q, which rank ``r`` multiplies into its local Q. Q has ``a``'s
    counts; R, S and V are split None. Ranks without rows do no work.
    """
    x, comm = a.to_dask(), a.comm
    m, n = a.shape
    k = min(m, n)
    counts = tuple(a.lshape_map[:, 0].tolist())
    contributors = [r for r, c in enumerate(counts) if c]
    name = f"tsqr-{want}-{tokenize(x.name, want)}"
    mode = "reduced" if want in ("qr", "svd") else "r"
    dsk, hints, factors = {}, {}, []
    for r in contributors:
        local, factor = (f"{name}-local", r), (f"{name}-factor", r)
        dsk[local] = Task(local, _local_qr, TaskRef((x.name, r, 0)), mode)
        # a task of its own, never fused downstream, so only the R factor travels
        dsk[factor] = _distribution.SliceTask(factor, _second, TaskRef(local))
        hints[local] = hints[factor] = r
        factors.append(TaskRef(factor))
    merge = (f"{name}-merge",)
    dsk[merge] = Task(merge, _tsqr_merge, List(*factors), n, a.dtype, want)
    hints[merge] = 0
    real = _norm_dtype(a)
    small = {"R": ((k, n), a.dtype), "S": ((k,), real), "V": ((n, k), a.dtype)}
    wanted = {"qr": ("R",), "r": ("R",), "svd": ("S", "V"), "s": ("S",)}[want]
    out = {}
    for label in wanted:
        shape, dtype = small[label]
        key_name = f"{name}-{label}"
        key = (key_name, *(0,) * len(shape))
        layer = {**dsk, key: Task(key, operator.getitem, TaskRef(merge), label)}
        out[label] = _wrap(key_name, layer, [x], shape, None, (), dtype, comm, (a,), hints)
    if mode == "reduced":
        q_name = f"{name}-Q"
        layer = dict(dsk)
        for r, count in enumerate(counts):
            key = (q_name, r, 0)
            if not count:
                layer[key] = Task(key, _zeros, (0, k), a.dtype)
                continue
            block = (f"{name}-block", r)
            layer[block] = _distribution.SliceTask(
                block, _block_of, TaskRef(merge), contributors.index(r)
            )
            hints[block] = 0
            layer[key] = Task(key, _times, TaskRef((f"{name}-local", r)), TaskRef(block))
        out["Q"] = _wrap(q_name, layer, [x], (m, k), 0, counts, a.dtype, comm, (a,), hints)
    return out


def _transposed(a: _dndarray.DNDarray, conjugate: bool = False) -> _dndarray.DNDarray:
    """The (conjugate) transpose of a 2-D array; every chunk is transposed where it lives."""
    arr = a.to_dask().T
    if conjugate and a.dtype.kind == "c":
        arr = da.conj(arr)
    split = None if a.split is None else 1 - a.split
    return _dndarray.from_dask(arr, split, a.comm, parents=(a,))


def _check_bool(value, name: str) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"`{name}` must be a bool, got {type(value).__name__}")


def qr(a, mode="reduced"):
    """The QR decomposition ``a = Q @ R``: tall-skinny QR (TSQR) for a split matrix.

    ``R``'s diagonal is made real and non-negative (numpy leaves its signs to
    LAPACK), so results agree across layouts and rank counts.

    Layouts:

    - split None, or split along a batch axis of a stack: every rank factors its
      own matrices with numpy; ``Q`` and ``R`` are split like ``a``. Every mode works.
    - split 0 (rows) and ``m >= n``: TSQR. Each rank factors its rows (ranks with
      fewer rows than columns, or none, are fine), rank 0 factors the stacked
      ``R`` factors, each rank multiplies its local ``Q`` by its block of that
      second-level ``Q``. Only the ``n``-column factors travel. ``Q`` keeps
      ``a``'s counts (split 0), ``R`` is split None.
    - split 1 (columns) and ``m >= n``: ``a`` is resplit to 0 first (every element
      not on its final rank moves once), then TSQR; Heat keeps split 1 here.
    - ``m < n`` split along a matrix axis, a stack split along a matrix axis, and
      ``mode="complete"`` of a split matrix raise ``NotImplementedError`` (``R``,
      respectively ``Q``, would be as large as the matrix and one chunk).

    Parameters
    ----------
    a : DNDarray
        At least 2-D; integers and booleans are factored in float64.
    mode : {"reduced", "r", "complete"}
        ``"reduced"``: ``Q`` is ``(m, k)`` and ``R`` ``(k, n)`` with ``k = min(m, n)``;
        ``"r"``: only ``R``; ``"complete"``: ``Q`` is ``(m, m)`` (unsplit inputs only).

    Returns
    -------
    QR
        The named tuple ``(Q, R)`` (Heat's convention); ``Q`` is None for ``mode="r"``.

    Examples
    --------
    >>> import dndask as ht
    >>> a = ht.array([[3.0, 0.0], [4.0, 5.0], [0.0, 0.0], [0.0, 0.0]], split=0)
    >>> q, r = ht.linalg.qr(a)
    >>> q.split, r.split, r.numpy().round(6).tolist()
    (0, None, [[5.0, 4.0], [0.0, 3.0]])
    """
    a = _decomposition_input(a, "qr")
    if not isinstance(mode, str):
        raise TypeError(f"`mode` must be a str, got {type(mode).__name__}")
    if mode == "raw":
        raise NotImplementedError("`qr` with mode='raw' is not implemented")
    if mode not in ("reduced", "r", "complete"):
        raise ValueError(f"`mode` must be 'reduced', 'r' or 'complete', got {mode!r}")
    m, n = a.shape[-2:]
    if a.split is None or a.split < a.ndim - 2:
        return _qr_per_block(a, mode)
    if mode == "complete":
        raise NotImplementedError(
            f"`qr` with mode='complete' of a matrix split along a matrix axis ({_describe(a)}) "
            "is not implemented: Q would be m x m in one chunk"
        )
    if a.ndim > 2:
        raise NotImplementedError(
            f"`qr` of a stack of matrices split along a matrix axis ({_describe(a)}) is not "
            "implemented; split it along a batch axis"
        )
    if m < n:
        raise NotImplementedError(
            f"`qr` of a wide matrix (m < n) split along an axis ({_describe(a)}) is not "
            "implemented: R would be as large as the matrix"
        )
    if a.split == 1:
        a = a.resplit(0)
    out = _tsqr(a, "qr" if mode == "reduced" else "r")
    return QR(out.get("Q"), out["R"])


def _qr_per_block(a: _dndarray.DNDarray, mode: str) -> QR:
    *batch, m, n = a.shape
    k = min(m, n)
    rows = m if mode == "complete" else k
    r_out = ((*batch, rows, n), a.dtype)
    if mode == "r":
        (r,) = _per_block(a, functools.partial(_qr_block, mode=mode), [r_out], "qr")
        return QR(None, r)
    q_out = ((*batch, m, rows), a.dtype)
    q, r = _per_block(a, functools.partial(_qr_block, mode=mode), [q_out, r_out], "qr")
    return QR(q, r)


def _svd_per_block(a: _dndarray.DNDarray, full_matrices: bool, compute_uv: bool):
    *batch, m, n = a.shape
    k = min(m, n)
    fn = functools.partial(_svd_block, full_matrices=full_matrices, compute_uv=compute_uv)
    s_out = ((*batch, k), _norm_dtype(a))
    if not compute_uv:
        return _per_block(a, fn, [s_out], "svd")[0]
    u_out = ((*batch, m, m if full_matrices else k), a.dtype)
    v_out = ((*batch, n, n if full_matrices else k), a.dtype)
    return SVD(*_per_block(a, fn, [u_out, s_out, v_out], "svd"))


def svd(a, full_matrices=False, compute_uv=True):
    """The singular value decomposition ``a = U @ diag(S) @ V.conj().T``, built on TSQR.

    Heat's convention: ``V`` (right singular vectors as columns) is returned, not
    numpy's ``Vh = V.conj().T``. Singular values are in descending order.

    Layouts:

    - split None, or split along a batch axis of a stack: numpy on every rank's
      own matrices; outputs split like ``a``. ``full_matrices=True`` works here.
    - 2-D with ``m >= n``: TSQR of ``a`` (resplit to 0 first if split 1), then the
      SVD of the small ``R = U_r S V^H`` on rank 0, folded into the TSQR's last
      step: ``U = Q U_r`` is split 0 with ``a``'s counts, ``S`` and ``V`` are split None.
    - 2-D with ``m < n``: the same on ``a``'s conjugate transpose (resplit to 0
      if ``a`` is split 0), so ``U`` and ``S`` are split None and ``V`` is split 0.
    - ``full_matrices=True`` for a split matrix and stacks split along a matrix
      axis raise ``NotImplementedError``.

    Parameters
    ----------
    a : DNDarray
        At least 2-D; integers and booleans are decomposed in float64.
    full_matrices : bool
        ``False`` (default): ``U`` is ``(m, k)``, ``V`` is ``(n, k)``, ``k = min(m, n)``.
    compute_uv : bool
        ``False``: return only ``S``.

    Returns
    -------
    SVD or DNDarray
        The named tuple ``(U, S, V)``, or ``S`` for ``compute_uv=False``.

    Examples
    --------
    >>> import dndask as ht
    >>> a = ht.array([[3.0, 0.0], [0.0, -4.0], [0.0, 0.0]], split=0)
    >>> u, s, v = ht.linalg.svd(a)
    >>> u.split, s.split, v.split, s.numpy().round(6).tolist()
    (0, None, None, [4.0, 3.0])
    """
    a = _decomposition_input(a, "svd")
    _check_bool(full_matrices, "full_matrices")
    _check_bool(compute_uv, "compute_uv")
    if a.split is None or a.split < a.ndim - 2:
        return _svd_per_block(a, full_matrices, compute_uv)
    if full_matrices:
        raise NotImplementedError(
            f"`svd` with full_matrices=True of a matrix split along a matrix axis "
            f"({_describe(a)}) is not implemented: U or V would be square and in one chunk"
        )
    if a.ndim > 2:
        raise NotImplementedError(
            f"`svd` of a stack of matrices split along a matrix axis ({_describe(a)}) is not "
            "implemented; split it along a batch axis"
        )
    m, n = a.shape
    tall = m >= n
    t = a if tall else _transposed(a, conjugate=True)
    if t.split != 0:
        t = t.resplit(0)
    out = _tsqr(t, "svd" if compute_uv else "s")
    if not compute_uv:
        return out["S"]
    if tall:
        return SVD(out["Q"], out["S"], out["V"])
    # a^H = U' S V'^H, hence a = V' S U'^H
    return SVD(out["V"], out["S"], out["Q"])
