"""The face's evaluation: every DNDarray a face operation returns starts computing at the call.

Heat computes each operation when it is called; the core (:mod:`dndask`) only builds a
graph. The face bridges the two in :func:`start`, which every face result passes
through (:func:`dndask.heat._adapt.face`): the result is persisted where its chunks
live (:meth:`dndask.DNDarray.persist_`), so its tasks run in the background while the
script goes on, and it holds its chunks in worker memory for as long as the array
object lives (a persisted array's graph is its chunks alone, so a loop of updates
does not grow a graph either).

Three modes, one per context (a :class:`contextvars.ContextVar`):

- ``"start"`` (the default): persist without waiting. Argument errors are raised at the
  call (they are checked before any task is built); an error *inside a task* (a
  worker's exception) is raised at the array's next use (``numpy()``, printing, an
  operation that computes). Timing a call measures the submission, not the work.
- ``"wait"``: persist and wait (:func:`blocking`). A task's error is raised at the
  call, and a timer around a call measures the work, as in Heat.
- ``"lazy"``: nothing starts (:func:`lazy`): the core's laziness inside the face.

The default can be set by the environment variable ``DNDASK_HEAT_EVAL`` (``start``,
``wait`` or ``lazy``), so that an unchanged Heat benchmark script times the work.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator

from .. import _dndarray

__all__ = ["MODES", "blocking", "evaluation_mode", "lazy", "start", "wait"]

MODES = ("start", "wait", "lazy")


def _default_mode() -> str:
    raw = os.environ.get("DNDASK_HEAT_EVAL", "start").strip().lower() or "start"
    if raw not in MODES:
        raise ValueError(f"`DNDASK_HEAT_EVAL` must be one of {', '.join(MODES)}, got {raw!r}")
    return raw


_DEFAULT = _default_mode()
_MODE: contextvars.ContextVar[str] = contextvars.ContextVar("dndask_heat_eval", default=_DEFAULT)
_STARTED = "_heat_started"  # the state key holding the dask name last started


def evaluation_mode() -> str:
    """The evaluation mode of this context: ``"start"``, ``"wait"`` or ``"lazy"``.

    >>> import dndask.heat as ht
    >>> with ht.lazy():
    ...     ht.evaluation_mode()
    'lazy'
    """
    return _MODE.get()


def start(array: _dndarray.DNDarray) -> _dndarray.DNDarray:
    """Start computing ``array`` now (persist in place) unless the mode is ``"lazy"``.

    An array already started (same graph as when it was last started) is not
    submitted again; in ``"wait"`` mode it is waited for.
    """
    current = _MODE.get()
    if current == "lazy":
        return array
    _persist(array, current == "wait", skip_started=current == "start")
    return array


def _persist(array: _dndarray.DNDarray, wait_: bool, skip_started: bool) -> None:
    """The core's ``persist_`` (the face's method would start its result again)."""
    state = array.__dict__
    name = _dndarray.DNDarray.to_dask(array).name  # after a write-back of a live local tensor
    if skip_started and state.get(_STARTED) == name:
        return
    _dndarray.DNDarray.persist_(array, wait=wait_)
    state[_STARTED] = _dndarray.DNDarray.to_dask(array).name


@contextlib.contextmanager
def _mode(value: str) -> Iterator[None]:
    token = _MODE.set(value)
    try:
        yield
    finally:
        _MODE.reset(token)


def lazy() -> contextlib.AbstractContextManager[None]:
    """Inside this context face operations only build graphs, as the core's do.

    Nothing runs until a value is needed (``numpy()``, printing, ``persist_``); the
    arrays are the same. Leaving the context starts nothing by itself: the next face
    operation on a lazy array starts that operation's result (with what it needs).

    >>> import dndask.heat as ht
    >>> x = ht.arange(4, split=0)
    >>> with ht.lazy():
    ...     y = (x + 1) * 2  # a graph, no task submitted
    >>> y.tolist()
    [2, 4, 6, 8]
    """
    return _mode("lazy")


def blocking() -> contextlib.AbstractContextManager[None]:
    """Inside this context every face operation waits for its result, as Heat's do.

    A task's error is raised at the call, and a timer around a call measures the work.

    >>> import dndask.heat as ht
    >>> with ht.blocking():
    ...     y = ht.arange(4, split=0) + 1  # computed when the line returns
    >>> y.tolist()
    [1, 2, 3, 4]
    """
    return _mode("wait")


def wait(*arrays: _dndarray.DNDarray) -> None:
    """Block until every array is in worker memory (started first where it is not).

    The face's ``torch.cuda.synchronize``: put it before reading a timer. A task's
    error is raised here.

    >>> import time, dndask.heat as ht
    >>> t0 = time.perf_counter()
    >>> y = ht.ones((100, 100), split=0) @ ht.ones((100, 100), split=1)
    >>> ht.wait(y)
    >>> time.perf_counter() - t0 > 0
    True
    """
    for i, a in enumerate(arrays):
        if not isinstance(a, _dndarray.DNDarray):
            raise TypeError(f"argument {i} of `wait` must be a DNDarray, got {type(a).__name__}")
    for a in arrays:
        _persist(a, True, skip_started=False)
