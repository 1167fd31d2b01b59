"""Pure planning of the products: labels, split rules, plan choice and byte estimates.

Nothing here touches a scheduler or a DNDarray; it reads shapes and counts.

:func:`~dndask.matmul`, :func:`~dndask.dot`, :func:`~dndask.tensordot`,
:func:`~dndask.vecdot` and :func:`~dndask.outer` share one engine. Each names the
axes of its operands with labels (a :class:`ProductSpec`: a label shared by both
operands and the result is a batch axis, one shared by the operands only is
contracted), picks the result's split by its documented rule (Heat's where Heat
has one), and asks :func:`plan_product` how to build the result's blocks. The
planner knows two ways:

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
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from .. import _layout


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
