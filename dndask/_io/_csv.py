"""CSV: each rank parses its own byte range of the file, and writes its rows at its offset."""

from __future__ import annotations

import io
import os

import numpy as np

from .. import _comm, _dndarray, _layout, _per_rank, _types, _xp
from .._compat import TaskRef
from . import _checks, _files, _tasks


def _csv_lines(f, start: int, stop: int) -> list[bytes]:
    """The lines whose first byte lies in ``[start, stop)``; ``f`` is positioned at ``start``."""
    lines = []
    while f.tell() < stop:
        line = f.readline()
        if not line:
            break
        lines.append(line)
    return lines


def _csv_rank_rows(rank: int, path: str, sep: str, header_lines: int, dtype, size: int):
    """Parse the rows of one rank's byte range of a CSV file (runs on that rank's worker).

    The body after the header is cut into ``size`` equal byte ranges; a rank
    takes every line that starts in its range, so each line is read once.
    """
    with open(path, "rb") as f:
        for _ in range(header_lines):
            f.readline()
        body = f.tell()
        width = _csv_width(f, sep)
        total = os.fstat(f.fileno()).st_size
        start = body + (total - body) * rank // size
        stop = body + (total - body) * (rank + 1) // size
        if start > body:
            f.seek(start - 1)
            f.readline()  # finish the line that started before this range
        else:
            f.seek(body)
        first = f.tell()
        raw = _csv_lines(f, start, stop)
    lines = [line.decode() for line in raw if line.strip()]
    if not lines:
        return np.empty((0, width), dtype=dtype)
    try:
        rows = np.loadtxt(lines, delimiter=sep, dtype=dtype, ndmin=2, comments=None)
    except ValueError:
        rows = None
    if rows is None or rows.shape[1] != width:
        _csv_bad_line(path, first, raw, sep, dtype, width)
    return rows


def _csv_bad_line(path: str, first: int, raw: list[bytes], sep: str, dtype, width: int):
    """Raise a ValueError naming the file and the line (1-based, in the file) that fails."""
    number = 1  # the line number of raw[0]: one more than the newlines before it
    with open(path, "rb") as f:
        while f.tell() < first:
            block = f.read(min(2**20, first - f.tell()))
            if not block:
                break
            number += block.count(b"\n")
    for i, line in enumerate(raw):
        text = line.decode().rstrip("\r\n")
        if not text.strip():
            continue
        values = text.split(sep)
        where = f"`path` {path!r} line {number + i}"
        if len(values) != width:
            raise ValueError(
                f"{where} has {len(values)} values, the first row {width}: rows must all "
                f"have the same number of values"
            )
        try:
            np.loadtxt([text], delimiter=sep, dtype=dtype, ndmin=2, comments=None)
        except ValueError:
            raise ValueError(
                f"{where} holds a value that is not {np.dtype(dtype)}: {text!r}"
            ) from None
    raise ValueError(f"`path` {path!r} cannot be parsed as {width} {np.dtype(dtype)} columns")


def _csv_width(f, sep: str) -> int:
    """Values per row, from the first non-blank line after the header (position restored)."""
    here = f.tell()
    width = 0
    for line in f:
        if line.strip():
            width = len(line.decode().split(sep))
            break
    f.seek(here)
    return width


def load_csv(
    path, split=0, sep=",", header_lines=0, dtype=None, comm=None, device=None
) -> _dndarray.DNDarray:
    """Load a CSV table as a 2-D array; each rank parses its own part of the file.

    The file's body is cut into equal byte ranges, one per rank, and each
    rank's worker parses the lines that start in its range now (the row
    counts are only known after parsing). The rows stay on their workers and
    the result is then balanced along axis 0 (a lazy redistribution that
    moves only the rows that change rank), and resplit if ``split`` is not 0.

    Parameters
    ----------
    path : str or os.PathLike
        The CSV file.
    split : int or None
        0 (rows), 1 (columns) or None.
    sep : str
        The separator between values.
    header_lines : int
        Lines to skip at the top of the file.
    dtype : optional
        The values' type; float32 by default, as in Heat.
    comm : Comm, optional
        The ranks; the default comm otherwise.
    device : str or Device, optional
        Where the chunks live (``"cpu"``, ``"gpu"``; the default device if None): each
        rank reads into host memory and copies its chunk to the device on its worker.

    Returns
    -------
    DNDarray

    Examples
    --------
    >>> import dndask as ht, os, tempfile
    >>> folder = tempfile.TemporaryDirectory()  # removed when the doctest ends
    >>> path = os.path.join(folder.name, "t.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("a,b\\n1,2\\n3,4\\n5,6\\n")
    >>> a = ht.load_csv(path, header_lines=1, comm=ht.get_comm().subcomm([0, 1]))
    >>> a.lshape_map.tolist(), a.numpy().tolist()
    ([[2, 2], [1, 2]], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    """
    path = _files.as_path(path)
    _checks.check_name(sep, "sep")
    if isinstance(header_lines, bool) or not isinstance(header_lines, int) or header_lines < 0:
        raise ValueError(f"`header_lines` must be a non-negative int, got {header_lines!r}")
    _checks.check_split_type(split, names=False)
    split = _layout.normalize_axis(split, 2, "split")
    dtype = _types.float32 if dtype is None else _types.canonical_dtype(dtype)
    device = _tasks.load_device(device)
    comm = _comm.sanitize_comm(comm)
    _tasks.on_rank0(comm, _files.check_exists, path)
    pieces = _per_rank.per_rank(
        _csv_rank_rows, path, sep, header_lines, dtype, comm.size, comm=comm
    )
    out = _per_rank.join_result(pieces, 0, "load_csv").balance_()._on_device(device)
    return out if split == 0 else out.resplit_(split)


def _csv_text(block, sep: str, header: str | None) -> bytes:
    """One rank's rows as CSV text (numbers in their shortest round-trip form).

    A device chunk is copied to host explicitly here, on its worker.
    """
    block = np.asarray(_xp.to_host(block))
    if block.ndim == 1:
        block = block.reshape(-1, 1)
    if block.dtype.kind == "b":
        block = block.astype(np.uint8)
    buffer = io.StringIO()
    if header is not None:
        buffer.write(header.rstrip("\n") + "\n")
    np.savetxt(buffer, block, fmt="%s", delimiter=sep)
    return buffer.getvalue().encode()


def _create_csv(tmp: str, *lengths: int) -> None:
    with open(tmp, "wb") as f:
        f.truncate(sum(lengths))


def _write_csv(tmp: str, text: bytes, after, *before: int) -> None:
    """Write one rank's text at its offset (the lengths of the ranks before it)."""
    with open(tmp, "r+b") as f:
        f.seek(sum(before))
        f.write(text)


def _write_header(tmp: str, header: str, after) -> None:
    """The whole file of an array with no rows: its header line."""
    with open(tmp, "w") as f:
        f.write(header.rstrip("\n") + "\n")


def save_csv(a, path, sep=",", mode="w-", header=None) -> None:
    """Save a 1-D or 2-D array as CSV; every rank writes its own rows, all in parallel.

    Each rank formats its rows on its worker; the ranks then write their text
    at its byte offset in the file (known from the lengths of the ranks
    before), at the same time. A column-split array is first resplit to
    rows (lazily, worker to worker). 1-D arrays become one column.

    Parameters
    ----------
    a : DNDarray
        1-D or 2-D, real (booleans are written as 0/1).
    path : str or os.PathLike
        The file to create.
    sep : str
        The separator between values.
    mode : {'w-', 'w'}
        ``'w-'`` refuses an existing ``path``; ``'w'`` replaces a file (never a folder).
    header : str, optional
        A first line (read it back with ``load_csv(..., header_lines=1)``).

    Examples
    --------
    >>> import dndask as ht, os, tempfile
    >>> folder = tempfile.TemporaryDirectory()  # removed when the doctest ends
    >>> path = os.path.join(folder.name, "t.csv")
    >>> ht.save_csv(ht.array([[1.5, 2.0], [3.0, 4.0]], split=0), path, header="a,b")
    >>> open(path).read().splitlines()
    ['a,b', '1.5,2.0', '3.0,4.0']
    """
    _checks.check_dndarray(a)
    _checks.check_name(sep, "sep")
    if header is not None and not isinstance(header, str):
        raise TypeError(f"`header` must be None or a str, got {type(header).__name__}")
    if a.ndim not in (1, 2):
        raise ValueError(f"`a` must be 1-D or 2-D to save as CSV, got {a.ndim}-D")
    if a.dtype.kind == "c":
        raise TypeError(f"`a` must be real to save as CSV, got {a.dtype}")
    target, tmp = _tasks.prepare(a, path, mode, "save_csv", None)
    if a.split not in (None, 0):
        a = a.resplit(0)
    plan = _tasks.WritePlan(a, "save-csv")
    slabs = _tasks.slabs(a)
    texts, lengths = [], []
    for rank, key, _ in slabs:
        text = plan.add(
            (f"{plan.name}-text", rank), rank, _csv_text, TaskRef(key), sep,
            header if rank == slabs[0][0] else None,
        )  # fmt: skip
        texts.append(text)
        lengths.append(plan.add((f"{plan.name}-length", rank), rank, len, text))
    create = plan.create(_create_csv, tmp, *lengths)
    for i, (rank, _, _) in enumerate(slabs):
        plan.add((plan.name, rank), rank, _write_csv, tmp, texts[i], create, *lengths[:i])
    if not slabs and header is not None:
        plan.add(f"{plan.name}-header", 0, _write_header, tmp, header, create)
    _tasks.execute(plan, tmp, target, mode)
