"""Pure planning of the FFTs: which axes each local stage transforms, under which split.

Nothing here touches a scheduler or a DNDarray; it reads shapes, counts and dtypes.

A transform over the axes ``T`` of an array split along ``sp`` is a list of steps:

- ``sp`` is None or not in ``T``: one local stage, every rank transforms its chunk.
- ``sp`` in ``T`` and an axis ``f`` not in ``T`` exists (the longest one): relayout
  to split ``f`` (balanced), one local stage over ``T``, relayout back to ``sp``
  (balanced).
- ``sp`` in ``T`` and every axis transformed (``ndim >= 2``): the transform is split
  in two stages around a second transformed axis ``w`` (the last one that is not
  ``sp``): the stage over ``{w}`` runs while the array is split along ``sp``, the stage
  over ``T - {w}`` while it is split along ``w``; the order follows the kind (a
  real-to-complex stage first, a complex-to-real stage last).
- a 1-D array split along its only axis: gathered on rank 0, transformed, and
  spread back balanced (as Heat does; there is no other axis to split along).

In every case each element changes rank at most twice (out and back); the
bytes are the sum of the relayout plans' ``moved`` elements times the itemsize
of the array at that step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from .. import _layout

# the kinds of local stage: a complex transform, the real-to-complex (its last axis
# halved) and complex-to-real ones, and the two shifts (no size change)
KINDS = ("fft", "ifft", "rfft", "irfft", "fftshift", "ifftshift")


class Stage(NamedTuple):
    """One local transform: ``kind`` over ``axes`` with output lengths ``s`` (None: shifts)."""

    kind: str
    axes: tuple[int, ...]
    s: tuple[int, ...] | None


class Relayout(NamedTuple):
    """A change of split to ``split`` (None: gathered on rank 0), balanced along it."""

    split: int | None


class FFTPlan(NamedTuple):
    """The steps of a transform, the result's shape, dtype and split, and the bytes moved.

    ``counts`` is the result's rows per rank (``None``: keep the input's counts,
    for a transform local to every rank).
    """

    steps: tuple
    shape: tuple[int, ...]
    dtype: np.dtype
    split: int | None
    counts: tuple[int, ...] | None
    moved: int


class _Ranks(NamedTuple):
    """The stand-in comm of a planned distribution (only its size counts)."""

    size: int


def stage_shape(shape: Sequence[int], stage: Stage) -> tuple[int, ...]:
    """The shape after ``stage``.

    >>> stage_shape((4, 6), Stage("rfft", (0, 1), (4, 6)))
    (4, 4)
    """
    out = list(shape)
    if stage.s is None:
        return tuple(out)
    for axis, n in zip(stage.axes, stage.s, strict=True):
        out[axis] = n
    if stage.kind == "rfft":
        out[stage.axes[-1]] = stage.s[-1] // 2 + 1
    return tuple(out)


def complex_of(dtype: np.dtype) -> np.dtype:
    """complex64 for float32 (and complex64), complex128 for float64 (and complex128)."""
    single = np.dtype(dtype) in (np.float32, np.complex64)
    return np.dtype(np.complex64 if single else np.complex128)


def real_of(dtype: np.dtype) -> np.dtype:
    """float32 for complex64 (and float32), float64 otherwise."""
    single = np.dtype(dtype) in (np.float32, np.complex64)
    return np.dtype(np.float32 if single else np.float64)


def stage_dtype(dtype: np.dtype, stage: Stage) -> np.dtype:
    """The dtype after ``stage``: shifts keep it, ``irfft`` is real, the rest complex."""
    if stage.kind in ("fftshift", "ifftshift"):
        return np.dtype(dtype)
    return real_of(dtype) if stage.kind == "irfft" else complex_of(dtype)


def _split_stages(kind: str, axes: tuple, s, sp: int, w: int) -> tuple[Stage, Stage, bool]:
    """The stages over ``{w}`` (run split along ``sp``) and over the rest (run split along
    ``w``), and whether the ``{w}`` stage runs first."""
    last = axes[-1]
    rest = tuple(a for a in axes if a != w)

    def sub(keep) -> tuple | None:
        return None if s is None else tuple(n for a, n in zip(axes, s, strict=True) if a in keep)

    if kind in ("fft", "ifft", "fftshift", "ifftshift"):
        return Stage(kind, (w,), sub((w,))), Stage(kind, rest, sub(rest)), True
    if kind == "rfft":
        if w == last:  # the real-to-complex stage first, over w
            return Stage("rfft", (w,), sub((w,))), Stage("fft", rest, sub(rest)), True
        return Stage("fft", (w,), sub((w,))), Stage("rfft", rest, sub(rest)), False
    # irfft: the complex-to-real stage last
    if w == last:
        return Stage("irfft", (w,), sub((w,))), Stage("ifft", rest, sub(rest)), False
    return Stage("ifft", (w,), sub((w,))), Stage("irfft", rest, sub(rest)), True


def plan_fft(
    kind: str,
    shape: Sequence[int],
    split: int | None,
    counts: Sequence[int],
    size: int,
    axes: Sequence[int],
    s: Sequence[int] | None,
    dtype: np.dtype,
) -> FFTPlan:
    """Plan ``kind`` over ``axes`` (output lengths ``s``, None for shifts); see the module.

    >>> plan = plan_fft("fft", (8, 4), 0, (4, 4), 2, (0,), (8,), np.dtype("complex128"))
    >>> [type(step).__name__ for step in plan.steps], plan.split, plan.moved
    (['Relayout', 'Stage', 'Relayout'], 0, 512)
    """
    shape = tuple(int(n) for n in shape)
    axes = tuple(axes)
    s = None if s is None else tuple(s)
    ranks = _Ranks(size)
    if split is None or split not in axes:
        stage = Stage(kind, axes, s)
        out_shape, out_dtype = stage_shape(shape, stage), stage_dtype(dtype, stage)
        return FFTPlan((stage,), out_shape, out_dtype, split, None, 0)
    free = [a for a in range(len(shape)) if a not in axes]
    if free:
        f = max(free, key=lambda a: (shape[a], a))
        steps = [Relayout(f), Stage(kind, axes, s), Relayout(split)]
    elif len(shape) == 1:
        steps = [Relayout(None), Stage(kind, axes, s), Relayout(split)]
    else:
        w = max(a for a in axes if a != split)
        at_w, rest, w_first = _split_stages(kind, axes, s, split, w)
        if w_first:
            steps = [at_w, Relayout(w), rest, Relayout(split)]
        else:
            steps = [Relayout(w), rest, Relayout(split), at_w]
    cur_shape, cur_dtype = shape, np.dtype(dtype)
    cur = _layout.Distribution(split, tuple(counts), ranks)
    moved = 0
    for step in steps:
        if isinstance(step, Stage):
            new_shape = stage_shape(cur_shape, step)
            if cur.split is not None and new_shape[cur.split] != cur_shape[cur.split]:
                raise AssertionError("a local stage must not change the split axis")
            cur_shape, cur_dtype = new_shape, stage_dtype(cur_dtype, step)
            continue
        dst = _layout.Distribution.balanced(cur_shape, step.split, ranks)
        moved += _layout.plan_relayout(cur_shape, cur, dst).moved * cur_dtype.itemsize
        cur = dst
    return FFTPlan(tuple(steps), cur_shape, cur_dtype, split, cur.counts, moved)
