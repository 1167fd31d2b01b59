"""Graph building shared by ``a[key]`` and ``a[key] = value``: the tasks that assemble a fetch
plan on its target rank, each piece sliced where its rows live."""

from __future__ import annotations

from collections.abc import Callable

import dask.array as da

from .._compat import List, SliceTask, Task, TaskRef
from .._graph import chunk_key, empty, meta_of
from ._plan import FetchPlan
from ._tasks import join, pick, take


def _chunk_shape(x: da.Array, split: int | None, rank: int) -> tuple[int, ...]:
    return tuple(c[rank] if a == split else c[0] for a, c in enumerate(x.chunks))


def _is_whole(key: tuple, shape: tuple[int, ...]) -> bool:
    return len(key) == len(shape) and all(
        isinstance(k, slice) and k.indices(n) == (0, n, 1) for k, n in zip(key, shape, strict=True)
    )


def no_mask(rank: int) -> None:
    """The mask argument of a key without a mask: none on every rank."""
    return None


def fetch_into(
    dsk: dict,
    task_ranks: dict,
    out_key,
    target: int,
    src: tuple[da.Array, int | None],
    plan: FetchPlan,
    mask_for: Callable,
    dtype,
) -> None:
    """Add the tasks that assemble ``plan`` on rank ``target`` under ``out_key``.

    ``src`` is ``(dask array, split)``; each piece is sliced on its source rank
    (a pinned task Dask does not fuse away), so only the piece travels.
    ``mask_for(rank)`` is the mask argument of that rank's piece.
    """
    x, split = src
    task_ranks[out_key] = target
    if not plan.pieces:
        dsk[out_key] = Task(
            out_key, empty, plan.shape, dtype, meta_of(dtype, len(plan.shape), like=x)
        )
        return
    (s0, k0) = plan.pieces[0]
    if len(plan.pieces) == 1 and plan.order is None and s0 == target:
        ref = TaskRef(chunk_key(x, split, s0))
        dsk[out_key] = Task(out_key, take, ref, k0, plan.shape, mask_for(s0))
        return
    refs = []
    for j, (s, k) in enumerate(plan.pieces):
        ref = TaskRef(chunk_key(x, split, s))
        if mask_for(s) is None and _is_whole(k, _chunk_shape(x, split, s)):
            refs.append(ref)
            continue
        piece = (f"{out_key[0]}-piece", target, j)
        dsk[piece] = SliceTask(piece, pick, ref, k, mask_for(s))
        task_ranks[piece] = s
        refs.append(TaskRef(piece))
    dsk[out_key] = Task(out_key, join, List(*refs), plan.axis, plan.order, plan.shape)
