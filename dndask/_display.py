"""What a DNDarray shows: ``repr``/``str`` and the notebook display.

- ``repr(a)`` and ``str(a)`` are Heat's: the values (only the edges of an
  array of more than ``threshold`` elements, :func:`set_printoptions`), computed when
  needed, as Heat prints them. A REPL's ``>>> a`` and ``print(a)`` show values.
- The notebook display (:func:`mimebundle`, what Jupyter asks for; it also
  answers ``text/plain``, so Jupyter never falls back to ``repr``) runs no
  graph: shape, dtype, split, the lshape_map, the chunk diagram, the workers
  and the dashboard link, and the values only when every chunk is already in
  a worker's memory or on its way there (:func:`in_memory`: the array was
  persisted; a persist still running is waited for). Their edges
  are then fetched from those chunks, which runs a few slicing tasks but
  recomputes nothing. An empty array's values are known without a fetch.
  Smallness is no criterion: a small array can stand for any amount of work
  (``big.sum()`` is one number).
- Inside an xarray object (``xr.DataArray(a)``), xarray's own repr and HTML
  view show the notebook's text, not Heat's: ``repr(a)`` called from xarray's
  formatting code (:func:`for_xarray`) is :func:`display_text`, and
  ``a._repr_inline_`` (:func:`inline`) gives xarray's one-line summaries. So
  displaying or printing such a DataArray or Dataset runs no graph either.
"""

from __future__ import annotations

import sys

import distributed
import numpy as np

from . import _compute, _layout, _repr, _types

__all__ = [
    "display_text",
    "for_xarray",
    "get_printoptions",
    "html",
    "in_memory",
    "inline",
    "mimebundle",
    "options",
    "set_printoptions",
    "text",
]

_OPTIONS = [_repr.DEFAULT_OPTIONS]  # the current print options (one list cell: replaced whole)


def options() -> _repr.PrintOptions:
    """The print options ``repr``/``str`` use now."""
    return _OPTIONS[0]


def get_printoptions() -> dict:
    """The current print options: ``precision``, ``threshold``, ``edgeitems``, ``linewidth``
    and ``sci_mode``.

    >>> import dndask as ht
    >>> ht.get_printoptions()["precision"]
    4
    """
    return dict(vars(_OPTIONS[0]))


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set how ``repr``/``str`` print values; ``None`` keeps an option as it is.

    Parameters
    ----------
    precision : int
        Digits after the decimal point of floats (4).
    threshold : int or float
        Arrays of more elements print only their edges (1000; ``math.inf``: never).
    edgeitems : int
        Items shown at each end of a summarized axis (3).
    linewidth : int
        Characters per line before a row wraps (80).
    sci_mode : bool
        Scientific notation always (True), never (False); by default when the magnitudes
        call for it. Unlike the others, ``None`` here restores that default.

    Examples
    --------
    >>> import dndask as ht
    >>> ht.set_printoptions(precision=2)
    >>> print(ht.array([1.0 / 3.0], split=0))
    DNDarray([0.33], dtype=ht.float32, device=cpu:0, split=0)
    >>> ht.set_printoptions(precision=4)
    """
    current = _OPTIONS[0]
    new = {}
    for name, value, low in (
        ("precision", precision, 0),
        ("threshold", threshold, 0),
        ("edgeitems", edgeitems, 1),
        ("linewidth", linewidth, 1),
    ):
        if value is None:
            continue
        integral = isinstance(value, (int, np.integer)) or (name == "threshold" and value == np.inf)
        if isinstance(value, bool) or not integral:
            raise TypeError(f"`{name}` must be an int, got {type(value).__name__}")
        if value < low:
            raise ValueError(f"`{name}` must be at least {low}, got {value}")
        new[name] = value if name == "threshold" and value == np.inf else int(value)
    if sci_mode is not None and not isinstance(sci_mode, bool):
        raise TypeError(f"`sci_mode` must be a bool or None, got {type(sci_mode).__name__}")
    _OPTIONS[0] = _repr.PrintOptions(**{**vars(current), **new, "sci_mode": sci_mode})


def _meta(a) -> str:
    return f"dtype={_types.heat_name(a.dtype)}, device={a.device}, split={a.split}"


def in_memory(a) -> bool:
    """Whether every chunk of ``a`` is a future (finished or pending): its values need no graph.

    A pending future is a persist still running; showing the values waits for
    it and runs nothing more. A failed one is no value to show.

    >>> import dndask as ht
    >>> a = ht.arange(4, split=0)
    >>> in_memory(a), in_memory(a.persist())
    (False, True)
    """
    x = a.to_dask()
    graph = x.__dask_graph__()
    if graph.dependencies.get(x.name):  # a layer with inputs holds tasks, not results
        return False
    layer = graph.layers[x.name]
    for key in a._chunk_keys():
        node = layer.get(key)
        if not (isinstance(node, distributed.Future) and node.status in ("pending", "finished")):
            return False
    return True


def _values(a) -> np.ndarray:
    """The values ``repr`` shows: all of them, or the edges of a large array (computed)."""
    if a.size == 0:
        return np.empty(a.shape, a.dtype)
    x = a.to_dask()
    opts = options()
    for axis, idx in enumerate(_repr.edge_indices(a.shape, _repr.summarizes(a.size, opts), opts)):
        if len(idx) != a.shape[axis]:
            x = x[(slice(None),) * axis + (idx,)]
    return _compute.compute(x, a.comm.client, {})


def text(a) -> str:
    """Heat's ``repr``: ``DNDarray(<values>, dtype=..., device=..., split=...)`` (computes)."""
    return _repr.text(_values(a), a.shape, _meta(a), options())


def _html(a, values: str | None) -> str:
    lmap = a.lshape_map.tolist()
    offsets = _layout.displacements(a._counts()) if a.split is not None else (0,) * len(lmap)
    workers = a.comm.workers
    rows = [(r, tuple(lmap[r]), offsets[r], workers[r]) for r in range(a.comm.size)]
    try:
        svg = a.to_dask().to_svg(size=150)
    except (NotImplementedError, ValueError):
        svg = ""
    dtype = _types.heat_name(a.dtype)
    dashboard = a.comm.dashboard_link
    return _repr.html_table(a.shape, dtype, a.split, a.balanced, rows, svg, dashboard, values)


def _shown_values(a) -> str | None:
    """The values text when it costs no graph run, else ``None``."""
    if a.size == 0 or in_memory(a):
        return text(a)
    return None


def display_text(a, hint: str = _repr.NOT_COMPUTED) -> str:
    """The notebook's plain text: the values if in memory (see :func:`in_memory`), else none."""
    values = _shown_values(a)
    if values is not None:
        return values
    return _repr.lazy_text(a.shape, _meta(a), a.lshape_map.tolist(), hint)


def for_xarray(a) -> str | None:
    """:func:`display_text` when xarray's formatting code asks for ``repr(a)``, else None.

    xarray's ``repr`` of a DataArray (``short_data_repr``) shows ``repr(data)``
    for any duck array; called from there, ``repr`` must not run the graph.
    """
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith("xarray.core.formatting"):
            return display_text(a, _repr.NOT_COMPUTED_XARRAY)
        frame = frame.f_back
    return None


def inline(a, max_width: int) -> str:
    """xarray's one-line summary of ``a`` (``_repr_inline_``); runs no graph."""
    counts = list(a._counts()) if a.split is not None else [0] * a.comm.size
    extra = "" if a.device.device_type == "cpu" else f", device={a.device}"
    return _repr.inline_text(a.split, counts, extra, max_width)


def html(a) -> str:
    """The notebook's HTML view; values only when already in memory (see the module doc)."""
    return _html(a, _shown_values(a))


def mimebundle(a, include=None, exclude=None) -> dict[str, str]:
    """``text/plain`` and ``text/html`` for Jupyter; runs no graph unless ``a`` is in memory.

    >>> import dndask as ht
    >>> bundle = mimebundle(ht.zeros((3, 2), split=0, comm=ht.get_comm().subcomm([0, 1])))
    >>> print(bundle["text/plain"])
    DNDarray(shape=(3, 2), dtype=ht.float32, device=cpu:0, split=0)
      lshape_map: [[2, 2], [1, 2]]
      values: not computed (print(a) computes them; a.persist() keeps them in memory)
    """
    values = _shown_values(a)
    lazy = _repr.lazy_text(a.shape, _meta(a), a.lshape_map.tolist())
    bundle = {"text/plain": lazy if values is None else values, "text/html": _html(a, values)}
    if include is not None:
        bundle = {k: v for k, v in bundle.items() if k in include}
    if exclude is not None:
        bundle = {k: v for k, v in bundle.items() if k not in exclude}
    return bundle
