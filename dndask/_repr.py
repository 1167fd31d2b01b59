"""Text and HTML representations (pure formatting: values arrive as numpy)."""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np

EDGE_ITEMS = 3
THRESHOLD = 1000  # arrays larger than this print only their edges
LINE_WIDTH = 80


def edge_indices(shape: Sequence[int], summarize: bool) -> list[np.ndarray]:
    """Per axis, the indices a summarized print shows (all of them when short)."""
    out = []
    for n in shape:
        if summarize and n > 2 * EDGE_ITEMS:
            out.append(np.r_[0:EDGE_ITEMS, n - EDGE_ITEMS : n])
        else:
            out.append(np.arange(n))
    return out


def _element_formatter(values: np.ndarray):
    kind = values.dtype.kind
    if kind == "b":
        return lambda v: "True" if v else "False"
    if kind in "iu":
        return lambda v: str(int(v))
    if kind == "c":
        real = _element_formatter(values.real.astype(np.float64))
        imag = _element_formatter(values.imag.astype(np.float64))
        return lambda v: f"{real(v.real)}{'+' if v.imag >= 0 else '-'}{imag(abs(v.imag)).strip()}j"
    finite = np.abs(values[np.isfinite(values)]).astype(np.float64)
    nonzero = finite[finite > 0]
    scientific = finite.size and (finite.max() >= 1e8 or (nonzero.size and nonzero.min() < 1e-4))
    if scientific:
        return lambda v: f"{v:.4e}"
    if finite.size and (finite == np.round(finite)).all():
        # integral floats print as torch does: "2."
        return lambda v: f"{v:.0f}." if np.isfinite(v) else str(v)
    return lambda v: f"{v:.4f}"


def format_values(values: np.ndarray, summarized: Sequence[bool], indent: int) -> str:
    """Nested brackets of ``values``; ``summarized[axis]`` inserts ``...`` mid-axis."""
    if values.ndim == 0:
        return _element_formatter(values.reshape(1))(values[()])
    fmt = _element_formatter(values)
    cells = np.vectorize(fmt, otypes=[object])(values) if values.size else values.astype(object)
    width = max((len(c) for c in cells.flat), default=0)

    def render(block: np.ndarray, depth: int) -> str:
        pad = " " * (indent + depth + 1)
        gap = summarized[depth]
        if block.ndim == 1:
            items = [c.rjust(width) for c in block]
            if gap:
                items = [*items[:EDGE_ITEMS], "...", *items[EDGE_ITEMS:]]
            lines, line = [], ""
            for item in items:
                piece = item if not line else f"{line}, {item}"
                if line and len(pad) + len(piece) + 2 > LINE_WIDTH:
                    lines.append(line + ",")
                    line = item
                else:
                    line = piece
            lines.append(line)
            return "[" + ("\n" + pad).join(lines) + "]"
        rows = [render(sub, depth + 1) for sub in block]
        if gap:
            rows = [*rows[:EDGE_ITEMS], "...", *rows[EDGE_ITEMS:]]
        sep = ",\n" + "\n" * (block.ndim - 2) + pad
        return "[" + sep.join(rows) + "]"

    return render(cells, 0)


def text(values: np.ndarray, shape: Sequence[int], meta: str) -> str:
    """``DNDarray(<values>, <meta>)`` for the (possibly summarized) values."""
    prefix = "DNDarray("
    summarized = [v != n for v, n in zip(values.shape, shape, strict=True)]
    body = format_values(values, summarized, len(prefix))
    if values.size == 0 and values.ndim:
        body = f"[], size={tuple(shape)}"
    return f"{prefix}{body}, {meta})"


def html_table(
    shape: Sequence[int],
    dtype: str,
    split: int | None,
    balanced: bool,
    rows: Sequence[tuple[int, tuple[int, ...], int, str]],
    svg: str,
) -> str:
    """Notebook view: a summary, the chunk diagram and one table row per rank."""
    esc = html.escape
    head = (
        f"<b>DNDarray</b> shape={esc(str(tuple(shape)))} dtype={esc(dtype)} "
        f"split={split} balanced={balanced}"
    )
    body = "".join(
        f"<tr><td>{rank}</td><td>{esc(str(lshape))}</td><td>{offset}</td><td>{esc(worker)}</td></tr>"
        for rank, lshape, offset, worker in rows
    )
    table = (
        "<table><thead><tr><th>rank</th><th>lshape</th><th>offset</th><th>worker</th></tr>"
        f"</thead><tbody>{body}</tbody></table>"
    )
    return (
        f'<div class="dndask-dndarray"><p>{head}</p>'
        '<div style="display:flex;gap:1em;align-items:flex-start">'
        f"<div>{table}</div><div>{svg}</div></div></div>"
    )
