"""Running graphs: compute to the driver, or persist with every chunk on its rank's worker."""

from __future__ import annotations

import contextlib
import os
import sys
import uuid
from collections.abc import Iterator, Mapping, Sequence

import dask
import dask.array as da
import distributed
import numpy as np
from dask._task_spec import Task, TaskRef
from dask.array.core import concatenate3
from dask.core import flatten

_PROGRESS_ENV = "DNDASK_PROGRESS"
_PROGRESS_DELAY = 2.0  # seconds before a bar appears


class Placement:
    """Scheduler-side annotation: the worker each key in the table must run on.

    The table holds the chunk keys and the dndask-made tasks upstream of them
    (see ``DNDarray._lineage``); other keys, such as Dask's own intermediate
    tasks, are left free, so Dask places them next to their inputs.
    """

    def __init__(self, table: Mapping):
        self.table = dict(table)

    def __call__(self, key) -> list[str]:
        address = self.table.get(key)
        return [address] if address is not None else []


@contextlib.contextmanager
def _placed(table: Mapping) -> Iterator[None]:
    """Pin the keys in ``table`` to their workers for graphs submitted inside."""
    with dask.annotate(workers=Placement(table), allow_other_workers=False):
        yield


def _progress_mode() -> str:
    mode = os.environ.get(_PROGRESS_ENV, "auto").lower()
    if mode not in ("auto", "on", "off"):
        raise ValueError(f"`{_PROGRESS_ENV}` must be 'auto', 'on' or 'off', got {mode!r}")
    return mode


def _interactive() -> bool:
    if "ipykernel" in sys.modules:
        return True
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


def wait(futures: Sequence[distributed.Future]) -> None:
    """Wait for ``futures``; show a progress bar if they take a while interactively."""
    mode = _progress_mode()
    if mode == "off" or (mode == "auto" and not _interactive()):
        distributed.wait(futures)
        return
    if mode == "auto":
        try:
            distributed.wait(futures, timeout=_PROGRESS_DELAY)
            return
        except distributed.TimeoutError:
            pass
    distributed.progress(futures)
    distributed.wait(futures)


def _identity(value):
    return value


def _fresh_outputs(graph: Mapping, keys, table: Mapping) -> tuple[dict, object, dict]:
    """The graph plus one alias task per output key, under names unique to this call.

    Computing the same keys twice in a row would otherwise hand the client a
    stale "finished" state for keys the scheduler is still releasing from the
    previous call ("Couldn't gather keys"). The aliases run where their chunk
    is (they are pinned like it), so nothing extra moves.
    """
    token = uuid.uuid4().hex
    dsk = dict(graph)
    table = dict(table)
    counter = iter(range(len(list(flatten(keys, container=list)))))

    def alias(structure):
        if isinstance(structure, list):
            return [alias(s) for s in structure]
        new = (f"dndask-result-{token}", next(counter))
        dsk[new] = Task(new, _identity, TaskRef(structure))
        if structure in table:
            table[new] = table[structure]
        return new

    return dsk, alias(keys), table


def compute(array: da.Array, client: distributed.Client, table: Mapping) -> np.ndarray:
    """Compute ``array``'s chunks on their workers and assemble them in the driver.

    The chunks travel straight to the driver: no worker first gathers the
    whole array (which a Dask ``finalize`` task would do).
    """
    (optimized,) = dask.optimize(array)
    dsk, keys, table = _fresh_outputs(optimized.__dask_graph__(), optimized.__dask_keys__(), table)
    with _placed(table):
        futures = client.get(dsk, keys, sync=False)
    flat = list(flatten(futures, container=list))
    wait(flat)
    parts = client.gather(futures)
    if array.ndim == 0:
        return np.asarray(parts if not isinstance(parts, list) else parts[0])
    return concatenate3(parts)


def persist(collection, client: distributed.Client, table: Mapping):
    """Persist ``collection`` with each key in ``table`` held by its worker."""
    with _placed(table):
        persisted = client.persist(collection)
    futures = list(distributed.futures_of(persisted))
    wait(futures)
    return persisted
