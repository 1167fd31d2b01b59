"""Progress bars while the driver waits: which bar fits the session, and showing it.

Three environments, three bars (:func:`bar_kind` decides, from facts passed
in, so the choice is testable without a kernel):

- a terminal (or any non-kernel process): Dask's text bar, on stderr, so that
  a script's stdout stays clean;
- a Jupyter kernel with ``ipywidgets``: Dask's widget, *displayed* in the
  cell (``distributed.progress`` only returns it);
- a Jupyter kernel without ``ipywidgets``: the text bar, on the cell's stdout.

A bar is decoration: if one fails to start, the wait goes on without it and
a ``RuntimeWarning`` says why, once per session. Errors of the computation
itself are raised by the caller, never here.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import warnings
from collections.abc import Sequence

import distributed

__all__ = [
    "DELAY",
    "ENV",
    "bar_kind",
    "in_kernel",
    "mode",
    "shows_bar",
    "wait",
    "wait_showing",
]

ENV = "DNDASK_PROGRESS"
DELAY = 2.0  # seconds of work before a bar appears in ``auto`` mode

_warned = False


def mode() -> str:
    """``$DNDASK_PROGRESS``: ``'auto'`` (default), ``'on'`` or ``'off'``.

    >>> mode() in ("auto", "on", "off")
    True
    """
    value = os.environ.get(ENV, "auto").lower()
    if value not in ("auto", "on", "off"):
        raise ValueError(f"`{ENV}` must be 'auto', 'on' or 'off', got {value!r}")
    return value


def in_kernel() -> bool:
    """Whether this process is a Jupyter (IPython) kernel.

    IPython is looked up, not imported: a process that never loaded it is no
    kernel.

    >>> in_kernel()
    False
    """
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    shell = ipython.get_ipython()
    return getattr(shell, "kernel", None) is not None


def _has_widgets() -> bool:
    return importlib.util.find_spec("ipywidgets") is not None


def _stderr_is_terminal() -> bool:
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


def bar_kind(mode: str, *, kernel: bool, widgets: bool, terminal: bool) -> str:
    """The bar to show: ``'widget'``, ``'notebook-text'``, ``'terminal-text'`` or ``'none'``.

    Parameters
    ----------
    mode : str
        ``'auto'``, ``'on'`` or ``'off'`` (see :func:`mode`).
    kernel : bool
        Running in a Jupyter kernel.
    widgets : bool
        ``ipywidgets`` can be imported.
    terminal : bool
        stderr is a terminal.

    In ``auto`` mode a process that is neither a kernel nor on a terminal
    (a batch job, a pipe) gets no bar; ``on`` gives one everywhere.

    >>> bar_kind("auto", kernel=True, widgets=False, terminal=False)
    'notebook-text'
    >>> bar_kind("auto", kernel=False, widgets=True, terminal=False)
    'none'
    """
    if mode == "off" or (mode == "auto" and not (kernel or terminal)):
        return "none"
    if kernel:
        return "widget" if widgets else "notebook-text"
    return "terminal-text"


def _warn_once(exc: BaseException) -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(
            f"dndask's progress bar could not be shown ({exc!r}); waiting without it",
            RuntimeWarning,
            stacklevel=4,
        )


def _show(kind: str, futures: Sequence[distributed.Future]) -> None:
    """Show a bar of ``kind`` for ``futures``; the text bars block until they finish."""
    if kind == "widget":
        from IPython.display import display  # only reached inside a kernel

        display(distributed.progress(futures, notebook=True))
    elif kind == "notebook-text":
        distributed.progress(futures, notebook=False)
    else:  # Dask's text bar writes to sys.stdout; a terminal's goes to stderr
        with contextlib.redirect_stdout(sys.stderr):
            distributed.progress(futures, notebook=False)


def _kind() -> str:
    kernel = in_kernel()  # ipywidgets is looked for only where it matters
    widgets = kernel and _has_widgets()
    return bar_kind(mode(), kernel=kernel, widgets=widgets, terminal=_stderr_is_terminal())


def shows_bar() -> bool:
    """Whether a wait in this session may show a bar (else a caller can skip :func:`wait`).

    >>> import os
    >>> saved = os.environ.get(ENV)
    >>> os.environ[ENV] = "off"
    >>> shows_bar()
    False
    >>> _ = os.environ.pop(ENV) if saved is None else os.environ.update({ENV: saved})
    """
    return _kind() != "none"


def wait(futures: Sequence[distributed.Future]) -> None:
    """Wait for ``futures``, with the bar :func:`bar_kind` picks for this session.

    In ``auto`` mode the bar appears once the work has run :data:`DELAY`
    seconds; with ``$DNDASK_PROGRESS=on`` at once. Waits through the current
    client.
    """
    wait_showing(_kind(), futures, delay=DELAY if mode() == "auto" else 0.0)


def wait_showing(kind: str, futures: Sequence[distributed.Future], delay: float = 0.0) -> None:
    """Wait for ``futures``, showing a bar of ``kind`` if they are not done after ``delay`` s.

    Never raises for a failed task (the caller reads the futures' errors) nor
    for a bar that cannot be shown (a ``RuntimeWarning`` says why, once).
    """
    if kind != "none" and delay > 0:
        try:
            distributed.wait(futures, timeout=delay)
            return
        except distributed.TimeoutError:
            pass
    if kind != "none":
        try:
            _show(kind, futures)
        except Exception as exc:  # the bar is decoration: say why, and wait without it
            _warn_once(exc)
    distributed.wait(futures)
