"""Task graphs of the I/O: tasks on rank 0, lazy per-rank loads, and a save's write plan.

A load is a lazy DNDarray whose chunk ``r`` reads rank ``r``'s slab
(:func:`lazy_load`). A save is one graph (:class:`WritePlan`): a task on
rank 0 creates the temporary file, one task per rank writes its slab
(:func:`add_writes`, in rank order or all at once), and :func:`execute`
renames the file to its target when every task has succeeded, or removes it.
"""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Callable, Sequence

import numpy as np
from dask.highlevelgraph import HighLevelGraph

from .. import _comm, _compute, _dndarray, _factories, _layout, _xp
from .._compat import Task, TaskRef
from .._placement import WorkerTable
from . import _checks, _files


def on_rank0(comm: _comm.Comm, fn: Callable, *args):
    """Run ``fn(*args)`` on rank 0's worker and return its result (or raise its error)."""
    return _compute.call_on(comm, 0, fn, *args)


# ------------------------------------------------------------------ loading
def lazy_load(prefix, reader, shape, dtype, split, comm, args, device=None) -> _dndarray.DNDarray:
    """Balanced along ``split``; chunk ``r`` is ``reader(offsets, lshape, *args)`` on rank r.

    On a device (``device``, checked by the caller) the task that reads a chunk into host
    memory copies it to the device, on the chunk's worker (an explicit copy).
    """
    counts = _layout.balanced_counts(shape[split], comm.size) if split is not None else ()
    if device is None or device.device_type == "cpu":
        return _factories.from_function(prefix, reader, shape, dtype, split, counts, comm, args)
    meta = _xp.meta(dtype, len(shape), device)
    args = (reader, str(device), *args)
    return _factories.from_function(
        prefix, _read_to_device, shape, dtype, split, counts, comm, args, meta
    )


def _read_to_device(offsets, lshape, reader, device: str, *args):
    return _xp.to_device(reader(offsets, lshape, *args), device)


def load_device(device) -> _xp.Device:
    """The device a load puts its chunks on (``None``: the default device), checked now."""
    return _xp.sanitize_device(device)


def slab(offsets: Sequence[int], lshape: Sequence[int]) -> tuple[slice, ...]:
    """The global slices of a rank's chunk."""
    return tuple(slice(o, o + n) for o, n in zip(offsets, lshape, strict=True))


def empty_block(lshape: Sequence[int], dtype: np.dtype) -> np.ndarray | None:
    """An empty block for a rank with no rows (no need to open the file), else None."""
    return np.empty(tuple(lshape), dtype=dtype) if 0 in lshape else None


# ------------------------------------------------------------------- saving
def slabs(a: _dndarray.DNDarray) -> list[tuple[int, tuple, tuple[slice, ...]]]:
    """``(rank, chunk key, global slices)`` of every chunk that holds data."""
    if a.size == 0:
        return []
    keys = a._chunk_keys()
    if a.split is None:
        return [(0, keys[0], tuple(slice(0, s) for s in a.shape))]
    counts, displs = a.counts_displs()
    out = []
    for r, (count, start) in enumerate(zip(counts, displs, strict=True)):
        if count:
            slices = tuple(
                slice(start, start + count) if ax == a.split else slice(0, s)
                for ax, s in enumerate(a.shape)
            )
            out.append((r, keys[r], slices))
    return out


class WritePlan:
    """A save as one graph: create on rank 0, per-rank writes, an optional finish on rank 0.

    ``a`` is the array written (its comm runs the tasks); ``others`` are more
    arrays on the same comm that the same file receives (a Dataset's variables).
    """

    def __init__(self, a: _dndarray.DNDarray, prefix: str, others=()):
        self.a = a
        self.arrays = (a, *others)
        self.name = f"{prefix}-{uuid.uuid4().hex}"
        self.tasks: dict = {}
        self.table = WorkerTable()
        for array in self.arrays:
            self.table.update(array._placement())
        self.keys: list = []

    def add(self, key, rank: int, fn: Callable, *args) -> TaskRef:
        self.tasks[key] = Task(key, fn, *args)
        self.table[key] = self.a.comm.workers[rank]
        self.keys.append(key)
        return TaskRef(key)

    def create(self, fn: Callable, *args) -> TaskRef:
        """The task on rank 0 that creates the temporary file; the writes wait for it."""
        return self.add(f"{self.name}-create", 0, fn, *args)

    def run(self) -> None:
        """Run every task; wait for all of them (so none writes after a cleanup); raise."""
        graph = HighLevelGraph.from_collections(
            self.name, self.tasks, dependencies=list(self.arrays)
        )
        a = self.a
        _compute.run(graph, self.keys, a.comm.client, self.table, a.comm)


def add_writes(
    plan: WritePlan, fn: Callable, *args, after: TaskRef, in_turn: bool, array=None, tag=None
):
    """One task per slab, on its rank: ``fn(*args, slices, block, after)``; their refs.

    ``in_turn`` chains the writes in rank order, each one's ``after`` the
    previous write (HDF5 allows one writer per file at a time); otherwise
    they all wait only for ``after`` and run in parallel. ``array`` (one of
    the plan's arrays, ``plan.a`` by default) is the array written, ``tag``
    tells its writes apart from another array's in the same plan.
    """
    array = plan.a if array is None else array
    name = plan.name if tag is None else f"{plan.name}-{tag}"
    writes: list[TaskRef] = []
    for rank, key, slices in slabs(array):
        previous = writes[-1] if in_turn and writes else after
        block = TaskRef(key)
        writes.append(plan.add((name, rank), rank, write_host, fn, *args, slices, block, previous))
    return writes


def write_host(fn: Callable, *args):
    """``fn(*head, slices, block, after)`` with ``block`` copied to host explicitly first.

    Writers (h5py, zarr, numpy's text) read host memory: a device chunk (CuPy) is copied
    on its own worker, in the write task; a numpy chunk is passed as it is.
    """
    *head, slices, block, after = args
    return fn(*head, slices, _xp.to_host(block), after)


def prepare(a, path, mode, caller: str, module: str | None, kind: str = "file") -> tuple[str, str]:
    """Check a save's target (the arguments are checked); returns ``(target, temporary name)``.

    ``kind`` is what the save writes: ``"file"``, or ``"zarr"`` (a store folder).
    """
    target = _files.as_path(path)
    _files.check_mode(mode)
    if module is not None:
        _checks.require(module, caller)
    on_rank0(a.comm, _files.check_target, target, mode, kind)
    return target, _files.temp_name(target)


def execute(plan: WritePlan, tmp: str, target: str, mode: str, kind: str = "file") -> None:
    """Run the plan into ``tmp``; rename it to ``target`` on success, remove it on failure."""
    comm = plan.a.comm
    try:
        plan.run()
        on_rank0(comm, _files.commit, tmp, target, mode, kind)
    except BaseException:
        try:
            on_rank0(comm, _files.remove, tmp)
        except Exception as cleanup:  # the save's own error matters more
            warnings.warn(f"could not remove {tmp!r}: {cleanup}", RuntimeWarning, stacklevel=3)
        raise
