"""Pure plans of the shape manipulations: which rows each rank needs, and from where.

Plain Python on shapes and counts, like :mod:`dndask._layout` (whose
:class:`~dndask._layout.Piece` and redistribution plan these build on): no
Dask, no scheduler, no array data, so every plan is tested by replaying it
on row numbers. :mod:`dndask._manipulation._graph` turns the plans into tasks.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import NamedTuple

from .._layout import Counts, Piece, Shape, balanced_counts, displacements, plan_redistribution


def _prod(values: Sequence[int]) -> int:
    return math.prod(int(v) for v in values)


def local_reshape_axes(shape: Shape, split: int, new_shape: Shape) -> tuple[int, ...]:
    """Axes of ``new_shape`` that can keep every rank's rows of ``shape[split]`` in place.

    Axis ``k`` qualifies when it has the split axis's length and the axes
    before (and after) it hold as many elements as those before (and after)
    ``split``: then the C-order reshape maps each rank's chunk onto itself,
    so every rank reshapes its chunk locally and the counts stay. With at most
    one row, or no elements at all, any axis of the right length qualifies
    (one rank holds everything or nothing).

    >>> local_reshape_axes((2, 3, 4), 2, (6, 4))
    (1,)
    >>> local_reshape_axes((6, 4), 0, (2, 3, 4))
    ()
    """
    n = int(shape[split])
    same_length = [k for k in range(len(new_shape)) if int(new_shape[k]) == n]
    if n <= 1 or _prod(shape) == 0:
        return tuple(same_length)
    before, after = _prod(shape[:split]), _prod(shape[split + 1 :])
    return tuple(
        k
        for k in same_length
        if _prod(new_shape[:k]) == before and _prod(new_shape[k + 1 :]) == after
    )


def wrapped_ranges(start: int, count: int, n: int) -> tuple[tuple[int, int], ...]:
    """Contiguous ``[lo, hi)`` row ranges of rows ``start, start + 1, ...`` taken modulo ``n``.

    ``count`` rows are covered in order; the ranges wrap around (several
    times if ``count > n``).

    >>> wrapped_ranges(5, 4, 7)
    ((5, 7), (0, 2))
    >>> wrapped_ranges(-1, 9, 4)
    ((3, 4), (0, 4), (0, 4))
    """
    if count < 0:
        raise ValueError(f"`count` must be non-negative, got {count}")
    if count and n <= 0:
        raise ValueError(f"`n` must be positive to take {count} rows, got {n}")
    out = []
    pos, left = (start % n if n else 0), count
    while left > 0:
        take = min(left, n - pos)
        out.append((pos, pos + take))
        left -= take
        pos = 0
    return tuple(out)


def plan_ranges(src: Sequence[int], ranges: Sequence[tuple[int, int]]) -> tuple[Piece, ...]:
    """The pieces of the ``src`` chunks that hold the global rows ``ranges``, in order.

    >>> [(p.src, p.start, p.stop, p.whole) for p in plan_ranges((2, 3), [(1, 4), (0, 1)])]
    [(0, 1, 2, False), (1, 0, 2, False), (0, 0, 1, False)]
    """
    offsets = displacements(src)
    total = sum(int(c) for c in src)
    pieces = []
    for lo, hi in ranges:
        if not 0 <= lo <= hi <= total:
            raise ValueError(f"`ranges` must lie in [0, {total}], got ({lo}, {hi})")
        for s, (off, c) in enumerate(zip(offsets, src, strict=True)):
            a, b = max(lo, off), min(hi, off + c)
            if b > a:
                pieces.append(Piece(s, a - off, b - off, a == off and b == off + c))
    return tuple(pieces)


def plan_roll(counts: Sequence[int], shift: int) -> tuple[tuple[Piece, ...], ...]:
    """Pieces each rank needs to hold ``numpy.roll(rows, shift)`` with the same ``counts``.

    Result row ``j`` is source row ``(j - shift) % n``, so each rank's range
    maps to at most two wrapped source ranges.

    >>> [[(p.src, p.start, p.stop) for p in ps] for ps in plan_roll((2, 2), 1)]
    [[(1, 1, 2), (0, 0, 1)], [(0, 1, 2), (1, 0, 1)]]
    """
    n = sum(int(c) for c in counts)
    return tuple(
        plan_ranges(counts, wrapped_ranges(d - shift, int(c), n))
        for d, c in zip(displacements(counts), counts, strict=True)
    )


def plan_tile(
    counts: Sequence[int], reps: int, size: int
) -> tuple[Counts, tuple[tuple[Piece, ...], ...]]:
    """Balanced counts of ``reps`` copies of the rows, and the pieces each rank needs.

    Result row ``j`` is source row ``j % n``.

    >>> dst, plan = plan_tile((1, 2), 2, 2)
    >>> dst, [[(p.src, p.start, p.stop) for p in ps] for ps in plan]
    ((3, 3), [[(0, 0, 1), (1, 0, 2)], [(0, 0, 1), (1, 0, 2)]])
    """
    n = sum(int(c) for c in counts)
    dst = balanced_counts(n * int(reps), size)
    plan = tuple(
        plan_ranges(counts, wrapped_ranges(d, c, n))
        for d, c in zip(displacements(dst), dst, strict=True)
    )
    return dst, plan


class OperandPiece(NamedTuple):
    """A :class:`Piece` of operand ``operand``'s chunk ``src`` (for joins of several arrays)."""

    operand: int
    src: int
    start: int
    stop: int
    whole: bool


def plan_concatenation(
    counts: Sequence[Sequence[int]], size: int
) -> tuple[Counts, tuple[tuple[OperandPiece, ...], ...]]:
    """Join operands along their split axis into Heat's balanced layout, keeping global order.

    ``counts[i]`` are operand ``i``'s rows per rank (any number of entries;
    a ``split=None`` operand is one chunk on rank 0). Returns the balanced
    counts and, for every target rank, the pieces it assembles in order;
    rows whose owner does not change are sliced in place.

    >>> dst, plan = plan_concatenation([(2, 1), (0, 3)], 2)
    >>> dst, [[(p.operand, p.src, p.start, p.stop) for p in ps] for ps in plan]
    ((3, 3), [[(0, 0, 0, 2), (0, 1, 0, 1)], [(1, 1, 0, 3)]])
    """
    flat, owner = [], []
    for i, operand_counts in enumerate(counts):
        for s, c in enumerate(operand_counts):
            flat.append(int(c))
            owner.append((i, s))
    dst = balanced_counts(sum(flat), size)
    plan = tuple(
        tuple(OperandPiece(*owner[p.src], p.start, p.stop, p.whole) for p in pieces)
        for pieces in plan_redistribution(flat, dst)
    )
    return dst, plan


def repeated_counts(counts: Sequence[int], repeats: int | Sequence[int]) -> Counts:
    """Rows per rank after repeating each row ``repeats`` times (an int or one entry per row).

    >>> repeated_counts((2, 1), 3)
    (6, 3)
    >>> repeated_counts((2, 1), [1, 0, 4])
    (1, 4)
    """
    if isinstance(repeats, numbers.Integral):
        return tuple(int(c) * int(repeats) for c in counts)
    repeats = [int(r) for r in repeats]
    if len(repeats) != sum(int(c) for c in counts):
        raise ValueError(
            f"`repeats` must have {sum(int(c) for c in counts)} entries, got {len(repeats)}"
        )
    return tuple(
        sum(repeats[d : d + int(c)]) for d, c in zip(displacements(counts), counts, strict=True)
    )


def padded_counts(counts: Sequence[int], before: int, after: int) -> Counts:
    """Rows per rank after padding: ``before`` rows go to rank 0, ``after`` to the last rank.

    >>> padded_counts((2, 2, 1), 1, 3)
    (3, 2, 4)
    """
    out = [int(c) for c in counts]
    out[0] += int(before)
    out[-1] += int(after)
    return tuple(out)
