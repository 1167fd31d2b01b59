"""Discrete linear convolution of a distributed signal with a kernel (``numpy.convolve``).

The signal stays where it is: rank ``r`` computes the outputs whose newest signal element
it holds (the full convolution's tail, past the signal's end, goes to the last populated
rank), so the result has the signal's split and about its counts. Each rank needs, besides
its own rows, the ``M - 1`` rows before them, which may come from several earlier ranks
when chunks are shorter than the kernel: one slicing task on each rank that holds some of
them, one task on rank ``r`` that joins them, pads the signal's ends with zeros and
convolves. The kernel (the shorter operand, as numpy swaps) goes whole to every rank.

Heat's extensions go through the same graph: a ``stride`` (every ``stride``-th output of
the mode's window) and batches (convolution along the last axis of every row of a signal
split along another axis, with one kernel or one per row). The planning
(:func:`plan_convolution`) is pure; :func:`convolve` and :func:`convolve_batched` build
graphs.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from . import _distribution, _dndarray, _factories, _layout, _ops, _xp
from ._compat import new_array
from ._graph import chunk_meta, empty, meta_of

__all__ = [
    "MODES",
    "Window",
    "check_mode",
    "check_stride",
    "convolve",
    "convolve_batched",
    "convolve_strided",
    "mode_window",
    "plan_convolution",
]

MODES = ("full", "same", "valid")


class Window(NamedTuple):
    """The outputs of one rank, as positions of the full convolution.

    ``first`` is the first output's position and ``count`` how many there are, ``stride``
    apart; ``pieces`` are ``(source rank, local start, local stop)`` slices of the signal
    that, joined with ``left`` zeros before and ``right`` zeros after, are exactly the
    signal over ``[first - M + 1, last + 1)``.
    """

    first: int
    count: int
    pieces: tuple[tuple[int, int, int], ...]
    left: int
    right: int


def mode_window(mode: str, n: int, m: int) -> tuple[int, int]:
    """``[start, stop)`` of ``mode``'s outputs among the full convolution's ``n + m - 1``.

    ``n`` is the signal's length and ``m`` the kernel's (``n >= m``), as numpy defines the
    modes: ``"same"`` is the centred ``n`` outputs, ``"valid"`` those of complete overlap.

    >>> mode_window("full", 5, 3), mode_window("same", 5, 3), mode_window("valid", 5, 3)
    ((0, 7), (1, 6), (2, 5))
    """
    if mode == "full":
        return 0, n + m - 1
    if mode == "same":
        return (m - 1) // 2, (m - 1) // 2 + n
    return m - 1, n


def plan_convolution(
    counts: Sequence[int], m: int, start: int, stop: int, stride: int = 1
) -> list[Window]:
    """Every rank's :class:`Window` for outputs ``start, start + stride, ... < stop``.

    ``counts`` are the signal's rows per rank and ``m`` the kernel's length. Rank ``r``
    owns the positions of the signal rows it holds; the last populated rank also owns
    the tail past the signal's end.

    >>> [(w.first, w.count, w.pieces, w.left) for w in plan_convolution([2, 0, 3], 3, 0, 7)]
    [(0, 2, ((0, 0, 2),), 2), (2, 0, (), 0), (2, 5, ((0, 0, 2), (2, 0, 3)), 0)]
    """
    n = int(sum(counts))
    displs = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])
    last = max((r for r, c in enumerate(counts) if c), default=len(counts) - 1)
    windows = []
    for r, c in enumerate(counts):
        lo = int(displs[r])
        hi = n + m - 1 if r == last else lo + int(c)
        lo, hi = max(lo, start), min(hi, stop)
        if hi <= lo:
            windows.append(Window(lo, 0, (), 0, 0))
            continue
        first = start + -(-(lo - start) // stride) * stride  # the first output at or after lo
        count = max(0, -(-(hi - first) // stride))
        if count == 0:
            windows.append(Window(first, 0, (), 0, 0))
            continue
        final = first + (count - 1) * stride
        need_lo, need_hi = first - m + 1, final + 1
        pieces = []
        for s, cs in enumerate(counts):
            s_lo, s_hi = int(displs[s]), int(displs[s]) + int(cs)
            a, b = max(s_lo, need_lo), min(s_hi, need_hi)
            if a < b:
                pieces.append((s, a - s_lo, b - s_lo))
        windows.append(Window(first, count, tuple(pieces), max(0, -need_lo), max(0, need_hi - n)))
    return windows


# ------------------------------------------------------------------ task functions
def _piece(chunk, start: int, stop: int):
    return chunk[..., start:stop]


def _padded(pieces: list, left: int, right: int, dtype):
    """The pieces joined along the last axis, with ``left``/``right`` zeros, as ``dtype``."""
    xp = _xp.namespace_of(pieces[0])
    lead = pieces[0].shape[:-1]
    parts = [p.astype(dtype, copy=False) for p in pieces]
    if left:
        parts.insert(0, xp.zeros((*lead, left), dtype=dtype))
    if right:
        parts.append(xp.zeros((*lead, right), dtype=dtype))
    return _xp.concatenate(parts, -1)


def _on_device_of(kernel, like):
    """The kernel in ``like``'s namespace (a host kernel is copied explicitly)."""
    if _xp.namespace_of(kernel) is _xp.namespace_of(like):
        return kernel
    return _xp.to_device(kernel, _xp.device_of(like))


def _taps(signal, kernel, base: int, count: int, stride: int):
    """``out[..., j]``: the sum over the kernel's taps ``i``, in order, of ``kernel[..., i] *
    signal[..., base + j * stride - i]``.

    One vector operation per tap, the same for every row and every window, so each output
    is the same sum in the same order whatever the layout, the rank count or the batch.
    """
    stop = base + (count - 1) * stride + 1
    out = None
    for i in range(kernel.shape[-1]):
        tap = kernel[..., i : i + 1] if kernel.ndim > 1 else kernel[i]
        term = tap * signal[..., base - i : stop - i : stride]
        out = term if out is None else out + term
    return out


def _convolve_1d(pieces: list, left: int, right: int, kernel, stride: int, dtype):
    """The window's outputs: the padded signal convolved with the kernel, every ``stride``-th."""
    signal = _padded(pieces, left, right, dtype)
    kernel = _on_device_of(kernel, signal).astype(dtype, copy=False)
    m = kernel.shape[-1]
    count = -(-(signal.shape[-1] - m + 1) // stride)
    return _taps(signal, kernel, m - 1, count, stride).astype(dtype, copy=False)


def _convolve_rows(chunk, kernel, left: int, right: int, first: int, count: int, stride, dtype):
    """Each row of ``chunk`` convolved along its last axis (one kernel, or one per row).

    The rows are padded with ``left``/``right`` zeros, so output ``j`` of a row is at
    position ``first + j * stride`` of the full convolution of the unpadded row.
    """
    signal = _padded([chunk], left, right, dtype)
    kernel = _on_device_of(kernel, signal).astype(dtype, copy=False)
    if count == 0 or chunk.size == 0:
        xp = _xp.namespace_of(signal)
        return xp.zeros((*chunk.shape[:-1], count), dtype=dtype)
    return _taps(signal, kernel, first + left, count, stride).astype(dtype, copy=False)


# ---------------------------------------------------------------------- checks
def check_mode(mode: object) -> None:
    """ValueError unless ``mode`` is one of :data:`MODES`."""
    if mode not in MODES:
        raise ValueError(f"`mode` must be one of {list(MODES)}, got {mode!r}")


def check_stride(stride: object) -> int:
    """``stride`` as an int: TypeError unless it is one, ValueError unless it is positive."""
    if isinstance(stride, bool) or not isinstance(stride, numbers.Integral):
        raise TypeError(f"`stride` must be an int, got {type(stride).__name__}")
    if stride < 1:
        raise ValueError(f"`stride` must be a positive int, got {stride}")
    return int(stride)


def _as_operand(value, name: str, like: _dndarray.DNDarray) -> _dndarray.DNDarray:
    """A DNDarray for ``value``: itself, or an array-like made one (not split) on ``like``'s
    comm and device."""
    if isinstance(value, _dndarray.DNDarray):
        return value
    host = np.asarray(value)
    if host.dtype.kind not in "biufc":
        raise TypeError(f"`{name}` of `convolve` must be numeric, got {host.dtype}")
    return _factories.array(host, comm=like.comm, device=like.device)


def _result_dtype(a: _dndarray.DNDarray, v: _dndarray.DNDarray) -> np.dtype:
    for x, name in ((a, "a"), (v, "v")):
        if np.dtype(x.dtype).kind not in "biufc":
            raise TypeError(f"`{name}` of `convolve` must be numeric, got {np.dtype(x.dtype)}")
    return np.convolve(np.ones(1, a.dtype), np.ones(1, v.dtype)).dtype


def _operands(a, v) -> tuple[_dndarray.DNDarray, _dndarray.DNDarray]:
    """``a`` and ``v`` as DNDarrays of one comm and one device (at least one given as one)."""
    given = [x for x in (a, v) if isinstance(x, _dndarray.DNDarray)]
    if not given:
        raise TypeError(
            f"`convolve` needs a DNDarray operand, got {type(a).__name__} and {type(v).__name__}"
        )
    a, v = _as_operand(a, "a", given[0]), _as_operand(v, "v", given[0])
    if a.comm != v.comm:
        raise ValueError(f"operands of `convolve` must share a comm, got {a.comm!r} and {v.comm!r}")
    _ops.check_one_device((a, v), "convolve")
    return a, v


def _whole(x: _dndarray.DNDarray) -> tuple:
    """The key of ``x`` gathered into one chunk (``split=None``, held by its comm's rank 0)."""
    whole = _distribution.relayout(x, _layout.Distribution(None, (), x.comm))
    return whole, whole._chunk_keys()[0]


# ---------------------------------------------------------------------- graphs
def _signal_graph(
    signal: _dndarray.DNDarray, kernel: _dndarray.DNDarray, start, stop, stride, dtype, label
) -> _dndarray.DNDarray:
    """The 1-D convolution's outputs ``start::stride`` below ``stop`` (full positions)."""
    m = kernel.shape[0]
    counts = signal.counts_displs()[0] if signal.split is not None else (signal.shape[0],)
    windows = plan_convolution(counts, m, start, stop, stride)
    whole, kernel_key = _whole(kernel)
    keys = signal._chunk_keys()
    x = signal.to_dask()
    token = tokenize(x.name, whole.to_dask().name, start, stop, stride, str(dtype), label)
    name, pieces_name = f"{label}-{token}", f"{label}-piece-{token}"
    meta = meta_of(dtype, 1, chunk_meta(x))
    layer: dict = {}
    hints: dict = {}
    for r, w in enumerate(windows):
        key = (name, r)
        hints[key] = r
        if not w.count:
            layer[key] = (empty, (0,), dtype, meta)
            continue
        parts = []
        for s, lo, hi in w.pieces:  # sliced where the rows are, received by rank r
            piece = (pieces_name, r, s)
            layer[piece] = (_piece, keys[s], lo, hi)
            hints[piece] = s
            parts.append(piece)
        layer[key] = (_convolve_1d, parts, w.left, w.right, kernel_key, stride, dtype)
    graph = HighLevelGraph.from_collections(name, layer, dependencies=[x, whole.to_dask()])
    y = new_array(graph, name, (tuple(w.count for w in windows),), meta)  # one chunk if not split
    out = _dndarray.from_dask(y, signal.split, signal.comm, parents=(signal, whole))
    out._task_ranks.update(hints)
    return out


def _check_1d(a: _dndarray.DNDarray, v: _dndarray.DNDarray) -> None:
    for x, name in ((a, "a"), (v, "v")):
        if x.ndim != 1:
            raise ValueError(f"`{name}` of `convolve` must be 1-D, got shape {x.shape}")
        if x.shape[0] == 0:
            raise ValueError(f"`{name}` of `convolve` must not be empty")


def convolve(a, v, mode: str = "full") -> _dndarray.DNDarray:
    """The discrete linear convolution of two 1-D arrays, as ``numpy.convolve``.

    The longer operand is the signal (numpy swaps them): it stays distributed, and the
    result has its split; the shorter one, the kernel, goes whole to every rank.

    Parameters
    ----------
    a, v : DNDarray or array_like
        1-D, not empty, numeric; at least one a DNDarray (an array-like operand is put on
        the other's comm, not split).
    mode : {"full", "same", "valid"}
        numpy's: every overlap (``N + M - 1`` outputs), the centred ``max(N, M)``, or those
        of complete overlap (``max(N, M) - min(N, M) + 1``).

    Returns
    -------
    DNDarray
        Split like the signal; rank ``r`` holds the outputs ending at the signal rows it
        holds (the last populated rank also the full convolution's tail), so it is
        usually not balanced: ``balance_()`` on request.

    Examples
    --------
    >>> import dndask as ht
    >>> ht.convolve(ht.ones(5, split=0), [0.0, 1.0, 2.0]).numpy().tolist()
    [0.0, 1.0, 3.0, 3.0, 3.0, 3.0, 2.0]
    """
    check_mode(mode)
    a, v = _operands(a, v)
    _check_1d(a, v)
    dtype = _result_dtype(a, v)
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    start, stop = mode_window(mode, a.shape[0], v.shape[0])
    return _signal_graph(a, v, start, stop, 1, dtype, "convolve")


def convolve_strided(a, v, mode: str = "full", stride: int = 1) -> _dndarray.DNDarray:
    """:func:`convolve` keeping every ``stride``-th output of ``mode``'s window (Heat's).

    Only the kept outputs are computed. ``a`` is the signal and ``v`` the kernel, as
    given (no swap: ``v`` must not be the longer); both 1-D.

    >>> import dndask as ht
    >>> from dndask._signal import convolve_strided
    >>> convolve_strided(ht.ones(5, split=0), ht.arange(3.0), stride=2).numpy().tolist()
    [0.0, 3.0, 3.0, 2.0]
    """
    check_mode(mode)
    stride = check_stride(stride)
    a, v = _operands(a, v)
    _check_1d(a, v)
    if v.shape[0] > a.shape[0]:
        raise ValueError(
            f"`v` of `convolve_strided` must not be longer than `a`, got {v.shape[0]} and "
            f"{a.shape[0]}"
        )
    dtype = _result_dtype(a, v)
    start, stop = mode_window(mode, a.shape[0], v.shape[0])
    return _signal_graph(a, v, start, stop, stride, dtype, "convolve")


def convolve_batched(a, v, mode: str = "full", stride: int = 1) -> _dndarray.DNDarray:
    """Every row of ``a`` convolved along its last axis: with ``v`` (1-D) or its own row of ``v``.

    Heat's batch convolution: ``a`` has shape ``(..., N)`` and is split along a batch axis
    (or not at all); ``v`` has shape ``(M,)`` or ``(..., M)`` with ``a``'s batch shape,
    and is laid out like ``a`` (its rows move to the rank of ``a``'s rows). Each rank
    convolves its own rows: nothing else moves.

    >>> import dndask as ht
    >>> from dndask._signal import convolve_batched
    >>> convolve_batched(ht.ones((2, 4), split=0), ht.ones(2)).numpy().tolist()
    [[1.0, 2.0, 2.0, 2.0, 1.0], [1.0, 2.0, 2.0, 2.0, 1.0]]
    """
    check_mode(mode)
    stride = check_stride(stride)
    a, v = _operands(a, v)
    dtype = _result_dtype(a, v)
    if a.ndim < 2:
        raise ValueError(f"`a` of `convolve_batched` must have a batch axis, got shape {a.shape}")
    if a.split is not None and a.split == a.ndim - 1:
        raise ValueError(
            f"`a` of `convolve_batched` must be split along a batch axis, not the last one "
            f"(got split={a.split}); resplit it first"
        )
    if v.ndim > 1 and v.shape[:-1] != a.shape[:-1]:
        raise ValueError(
            f"the batch shapes of `a` and `v` must match, got {a.shape[:-1]} and {v.shape[:-1]}"
        )
    n, m = a.shape[-1], v.shape[-1]
    start, stop = mode_window(mode, n, m)
    count = max(0, -(-(stop - start) // stride))
    left, right = m - 1, m - 1  # the padded row holds every position of the full convolution
    if v.ndim == 1:
        kernel, kernel_keys = _whole(v)
        kernel_keys = [kernel_keys] * len(a._chunk_keys())
    else:
        kernel = _distribution.relayout(v, a.distribution)
        kernel_keys = kernel._chunk_keys()
    x = a.to_dask()
    token = tokenize(x.name, kernel.to_dask().name, start, stop, stride, str(dtype))
    name = f"convolve-batched-{token}"
    meta = meta_of(dtype, a.ndim, chunk_meta(x))
    counts = a.counts_displs()[0] if a.split is not None else (a.shape[0],)
    layer, hints = {}, {}
    for r, (key, kkey) in enumerate(zip(a._chunk_keys(), kernel_keys, strict=True)):
        index = (name, *(r if ax == a.split else 0 for ax in range(a.ndim)))
        layer[index] = (_convolve_rows, key, kkey, left, right, start, count, stride, dtype)
        hints[index] = r
    graph = HighLevelGraph.from_collections(name, layer, dependencies=[x, kernel.to_dask()])
    chunks = tuple(
        (count,) if ax == a.ndim - 1 else (tuple(counts) if ax == a.split else (a.shape[ax],))
        for ax in range(a.ndim)
    )
    y = new_array(graph, name, chunks, meta)
    out = _dndarray.from_dask(y, a.split, a.comm, parents=(a, kernel))
    out._task_ranks.update(hints)
    return out
