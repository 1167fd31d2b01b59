"""Text and HTML representations (pure formatting: values and layouts arrive as data).

Nothing here touches a scheduler; :mod:`dndask._display` decides what to
fetch and passes it in.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "EDGE_ITEMS",
    "LINE_WIDTH",
    "THRESHOLD",
    "PrintOptions",
    "comm_html",
    "edge_indices",
    "format_values",
    "html_table",
    "lazy_text",
    "lshape_rows_text",
    "summarizes",
    "text",
]

EDGE_ITEMS = 3
THRESHOLD = 1000  # arrays larger than this print only their edges
LINE_WIDTH = 80


@dataclass(frozen=True)
class PrintOptions:
    """How values print (Heat's and torch's names): digits after the point, the element count
    above which only ``edgeitems`` per axis end show, the line width, and scientific notation
    (``None``: when the magnitudes call for it)."""

    precision: int = 4
    threshold: float = THRESHOLD
    edgeitems: int = EDGE_ITEMS
    linewidth: int = LINE_WIDTH
    sci_mode: bool | None = None


DEFAULT_OPTIONS = PrintOptions()
NOT_COMPUTED = "not computed (print(a) computes them; a.persist() keeps them in memory)"
# inside an xarray object, whose own repr shows this one
NOT_COMPUTED_XARRAY = (
    "not computed (.values or .compute() computes them; .persist() keeps them in memory)"
)


def summarizes(size: int, options: PrintOptions = DEFAULT_OPTIONS) -> bool:
    """Whether an array of ``size`` elements prints only its edges."""
    return size > options.threshold


def edge_indices(
    shape: Sequence[int], summarize: bool, options: PrintOptions = DEFAULT_OPTIONS
) -> list[np.ndarray]:
    """Per axis, the indices a summarized print shows (all of them when short)."""
    out = []
    edge = options.edgeitems
    for n in shape:
        if summarize and n > 2 * edge:
            out.append(np.r_[0:edge, n - edge : n])
        else:
            out.append(np.arange(n))
    return out


def _element_formatter(values: np.ndarray, options: PrintOptions = DEFAULT_OPTIONS):
    kind = values.dtype.kind
    digits = options.precision
    if kind == "b":
        return lambda v: "True" if v else "False"
    if kind in "iu":
        return lambda v: str(int(v))
    if kind == "c":
        real = _element_formatter(values.real.astype(np.float64), options)
        imag = _element_formatter(values.imag.astype(np.float64), options)
        return lambda v: f"{real(v.real)}{'+' if v.imag >= 0 else '-'}{imag(abs(v.imag)).strip()}j"
    finite = np.abs(values[np.isfinite(values)]).astype(np.float64)
    nonzero = finite[finite > 0]
    scientific = options.sci_mode
    if scientific is None:
        scientific = bool(
            finite.size and (finite.max() >= 1e8 or (nonzero.size and nonzero.min() < 1e-4))
        )
    if scientific:
        return lambda v: f"{v:.{digits}e}"
    if finite.size and (finite == np.round(finite)).all():
        # integral floats print as torch does: "2."
        return lambda v: f"{v:.0f}." if np.isfinite(v) else str(v)
    return lambda v: f"{v:.{digits}f}"


def format_values(
    values: np.ndarray,
    summarized: Sequence[bool],
    indent: int,
    options: PrintOptions = DEFAULT_OPTIONS,
) -> str:
    """Nested brackets of ``values``; ``summarized[axis]`` inserts ``...`` mid-axis."""
    if values.ndim == 0:
        return _element_formatter(values.reshape(1), options)(values[()])
    fmt = _element_formatter(values, options)
    edge, line_width = options.edgeitems, options.linewidth
    cells = np.vectorize(fmt, otypes=[object])(values) if values.size else values.astype(object)
    width = max((len(c) for c in cells.flat), default=0)

    def render(block: np.ndarray, depth: int) -> str:
        pad = " " * (indent + depth + 1)
        gap = summarized[depth]
        if block.ndim == 1:
            items = [c.rjust(width) for c in block]
            if gap:
                items = [*items[:edge], "...", *items[edge:]]
            lines, line = [], ""
            for item in items:
                piece = item if not line else f"{line}, {item}"
                if line and len(pad) + len(piece) + 2 > line_width:
                    lines.append(line + ",")
                    line = item
                else:
                    line = piece
            lines.append(line)
            return "[" + ("\n" + pad).join(lines) + "]"
        rows = [render(sub, depth + 1) for sub in block]
        if gap:
            rows = [*rows[:edge], "...", *rows[edge:]]
        sep = ",\n" + "\n" * (block.ndim - 2) + pad
        return "[" + sep.join(rows) + "]"

    return render(cells, 0)


def text(
    values: np.ndarray, shape: Sequence[int], meta: str, options: PrintOptions = DEFAULT_OPTIONS
) -> str:
    """``DNDarray(<values>, <meta>)`` for the (possibly summarized) values."""
    prefix = "DNDarray("
    summarized = [v != n for v, n in zip(values.shape, shape, strict=True)]
    body = format_values(values, summarized, len(prefix), options)
    if values.size == 0 and values.ndim:
        body = f"[], size={tuple(shape)}"
    return f"{prefix}{body}, {meta})"


def lshape_rows_text(rows: Sequence[Sequence[int]]) -> str:
    """The lshape_map as nested lists; more than ``2 * EDGE_ITEMS`` ranks show their edges.

    >>> lshape_rows_text([[2, 4], [1, 4]])
    '[[2, 4], [1, 4]]'
    >>> lshape_rows_text([[1]] * 9)
    '[[1], [1], [1], ..., [1], [1], [1]]'
    """
    items = [str(list(row)) for row in rows]
    if len(items) > 2 * EDGE_ITEMS:
        items = [*items[:EDGE_ITEMS], "...", *items[-EDGE_ITEMS:]]
    return "[" + ", ".join(items) + "]"


def lazy_text(
    shape: Sequence[int], meta: str, rows: Sequence[Sequence[int]], hint: str = NOT_COMPUTED
) -> str:
    """The plain-text display of an array whose values are not in memory (no values).

    >>> print(lazy_text((3, 2), "dtype=ht.float32, split=0", [[2, 2], [1, 2]]))
    DNDarray(shape=(3, 2), dtype=ht.float32, split=0)
      lshape_map: [[2, 2], [1, 2]]
      values: not computed (print(a) computes them; a.persist() keeps them in memory)
    """
    return (
        f"DNDarray(shape={tuple(shape)}, {meta})\n"
        f"  lshape_map: {lshape_rows_text(rows)}\n"
        f"  values: {hint}"
    )


def inline_text(split: int | None, counts: Sequence[int], extra: str, max_width: int) -> str:
    """One line for xarray's summaries (a Dataset's variables, the HTML preview); no values.

    ``counts``: each rank's length along ``split`` (xarray shows the dtype itself).

    >>> inline_text(0, [2, 1], "", 80)
    'DNDarray<split=0, counts=[2, 1]>'
    >>> inline_text(None, [4, 4, 4], ", device=gpu:0", 80)
    'DNDarray<split=None, ranks=3, device=gpu:0>'
    >>> inline_text(0, [2, 1], "", 16)
    'DNDarray<spli...'
    """
    layout = f"ranks={len(counts)}" if split is None else f"counts={list(counts)}"
    line = f"DNDarray<split={split}, {layout}{extra}>"
    return line if len(line) <= max_width else line[: max(max_width - 3, 0)] + "..."


def _dashboard_html(dashboard: str | None) -> str:
    if not dashboard:
        return ""
    link = html.escape(dashboard, quote=True)
    return f' · dashboard: <a href="{link}" target="_blank">{link}</a>'


def html_table(
    shape: Sequence[int],
    dtype: str,
    split: int | None,
    balanced: bool,
    rows: Sequence[tuple[int, tuple[int, ...], int, str]],
    svg: str,
    dashboard: str | None = None,
    values: str | None = None,
) -> str:
    """Notebook view: a summary, the chunk diagram, one table row per rank, and the values.

    ``values`` is the text of the values (or of their edges); ``None`` says
    they were not computed. ``dashboard`` is the cluster dashboard's address.

    >>> page = html_table((3,), "ht.int64", 0, True, [(0, (3,), 0, "tcp://w")], "", "http://d")
    >>> '<a href="http://d"' in page and "not computed" in page
    True
    """
    esc = html.escape
    head = (
        f"<b>DNDarray</b> shape={esc(str(tuple(shape)))} dtype={esc(dtype)} "
        f"split={split} balanced={balanced}{_dashboard_html(dashboard)}"
    )
    body = "".join(
        f"<tr><td>{rank}</td><td>{esc(str(lshape))}</td><td>{offset}</td><td>{esc(worker)}</td></tr>"
        for rank, lshape, offset, worker in rows
    )
    table = (
        "<table><thead><tr><th>rank</th><th>lshape</th><th>offset</th><th>worker</th></tr>"
        f"</thead><tbody>{body}</tbody></table>"
    )
    shown = f"<pre>{esc(values)}</pre>" if values is not None else f"<p>values: {NOT_COMPUTED}</p>"
    return (
        f'<div class="dndask-dndarray"><p>{head}</p>'
        '<div style="display:flex;gap:1em;align-items:flex-start">'
        f"<div>{table}</div><div>{svg}</div></div>{shown}</div>"
    )


def comm_html(workers: Sequence[str], dashboard: str | None) -> str:
    """Notebook view of a comm: its size, the worker of each rank and the dashboard link.

    >>> "<td>1</td><td>tcp://b</td>" in comm_html(["tcp://a", "tcp://b"], None)
    True
    """
    esc = html.escape
    body = "".join(f"<tr><td>{r}</td><td>{esc(w)}</td></tr>" for r, w in enumerate(workers))
    return (
        f'<div class="dndask-comm"><p><b>Comm</b> size={len(workers)}'
        f"{_dashboard_html(dashboard)}</p>"
        "<table><thead><tr><th>rank</th><th>worker</th></tr></thead>"
        f"<tbody>{body}</tbody></table></div>"
    )
