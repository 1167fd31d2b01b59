"""Pure layout arithmetic: who holds which rows, and how rows must move.

Everything here is plain Python on shapes and counts. Nothing touches Dask,
a scheduler or any array data, so every rule can be tested without a
cluster. The execution side (:mod:`dndask._distribution`) turns the plans made
here into task graphs. The plans of the shape manipulations (roll, tile,
concatenate, ...) live in :mod:`dndask._manipulation._plan`.

Vocabulary (Heat's):

- ``split``: the axis an array is distributed along, or ``None``.
- ``counts``: rows per rank along ``split``; ``displs``: their offsets.
- ``lshape_map``: one row per rank holding that rank's local shape.
- :class:`Distribution`: the split, the counts and the comm of one array, as one
  value; :func:`plan_relayout` plans every change from one distribution to another.
"""

from __future__ import annotations

import itertools
import math
import numbers
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

import numpy as np

from . import _torch

Shape = tuple[int, ...]
Counts = tuple[int, ...]


def normalize_axis(axis: object, ndim: int, name: str = "axis") -> int | None:
    """Return ``axis`` as a non-negative int (or ``None``), checking its range.

    >>> normalize_axis(-1, 3)
    2
    >>> normalize_axis(None, 3) is None
    True
    """
    if axis is None:
        return None
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"`{name}` must be None or an int, got {type(axis).__name__}")
    axis = int(axis)
    if ndim == 0:
        raise ValueError(f"`{name}` must be None for a 0-dimensional array, got {axis}")
    if not -ndim <= axis < ndim:
        raise ValueError(
            f"`{name}` must be in [{-ndim}, {ndim - 1}] for a {ndim}-dimensional array, got {axis}"
        )
    return axis % ndim


def normalize_axes(axis: object, ndim: int, name: str = "axis") -> tuple[int, ...]:
    """Return a sorted tuple of distinct axes; ``None`` means all axes.

    >>> normalize_axes((0, -1), 3)
    (0, 2)
    >>> normalize_axes(None, 2)
    (0, 1)
    """
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, numbers.Integral):
            raise TypeError(
                f"`{name}` must be None, an int or a tuple of ints, got {type(item).__name__}"
            )
        if not -ndim <= int(item) < ndim:
            raise ValueError(
                f"`{name}` must be in [{-ndim}, {ndim - 1}] for a {ndim}-dimensional array, "
                f"got {int(item)}"
            )
        out.append(int(item) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"`{name}` must not repeat an axis, got {axis}")
    return tuple(sorted(out))


def normalize_shape(shape: object, name: str = "shape") -> Shape:
    """Return ``shape`` as a tuple of non-negative ints.

    >>> normalize_shape(3)
    (3,)
    >>> normalize_shape((2, 0))
    (2, 0)
    """
    items = shape if isinstance(shape, (tuple, list)) else (shape,)
    out = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, numbers.Integral):
            raise TypeError(f"`{name}` must hold ints, got {type(item).__name__}")
        if int(item) < 0:
            raise ValueError(f"`{name}` must hold non-negative ints, got {tuple(items)}")
        out.append(int(item))
    return tuple(out)


def normalize_dims(dims: object, ndim: int, *, strings: bool = False) -> tuple:
    """Dimension names for ``ndim`` axes: ``dims`` checked, or xarray's ``dim_0, dim_1, ...``.

    ``strings=True`` (names written to a file) also requires non-empty strings.

    >>> normalize_dims(None, 2)
    ('dim_0', 'dim_1')
    >>> normalize_dims("time", 1, strings=True)
    ('time',)
    """
    if dims is None:
        return tuple(f"dim_{i}" for i in range(ndim))
    if isinstance(dims, str):
        dims = (dims,)
    dims = tuple(dims)
    if strings:
        if len(dims) != ndim or not all(isinstance(d, str) and d for d in dims):
            raise ValueError(f"`dims` must be {ndim} dimension names, got {dims!r}")
    elif len(dims) != ndim:
        raise ValueError(f"`dims` must name {ndim} dimensions, got {len(dims)}: {dims!r}")
    if len(set(dims)) != ndim:
        raise ValueError(f"`dims` must not repeat a name, got {dims!r}")
    return dims


def balanced_counts(n: int, size: int) -> Counts:
    """Split ``n`` rows over ``size`` ranks as Heat does.

    The lowest ``n % size`` ranks hold one extra row; ranks past ``n`` hold none.

    >>> balanced_counts(7, 4)
    (2, 2, 2, 1)
    >>> balanced_counts(2, 3)
    (1, 1, 0)
    """
    if size < 1:
        raise ValueError(f"`size` must be at least 1, got {size}")
    q, rem = divmod(int(n), int(size))
    return tuple(q + 1 if r < rem else q for r in range(size))


# Largest chunk dndask aims for when it picks a chunked store's chunking (zarr).
STORE_CHUNK_BYTES = 64 * 2**20


def chunk_rows(shape: Shape, split: int, size: int, itemsize: int, cap_bytes: int) -> int:
    """Rows per chunk along ``split`` for chunked stores: a rank's share, capped near ``cap_bytes``.

    >>> chunk_rows((7, 2), 0, 3, 8, 2**20)
    3
    >>> chunk_rows((10**6, 4), 0, 2, 8, 2**20)
    32768
    """
    row_bytes = itemsize * math.prod(s for ax, s in enumerate(shape) if ax != split)
    per_rank = max(1, math.ceil(shape[split] / size))
    return max(1, min(per_rank, cap_bytes // max(1, row_bytes)))


def whole_chunk_counts(n: int, size: int, rows: int, rest_last: bool = False) -> Counts:
    """Rows per rank so that every rank holds whole chunks of ``rows`` rows, one the rest.

    Each rank takes the smallest multiple of ``rows`` at least its balanced
    share; ranks past the end hold none. Ranks then never share a chunk.
    ``rest_last`` puts a partial last chunk on the last rank (the ranks
    before it empty), as xarray's ``to_zarr`` demands: every Dask chunk but
    the last a whole number of zarr chunks.

    >>> whole_chunk_counts(7, 3, 3)
    (3, 3, 1)
    >>> whole_chunk_counts(10, 4, 3)
    (3, 3, 3, 1)
    >>> whole_chunk_counts(3, 5, 1)
    (1, 1, 1, 0, 0)
    >>> whole_chunk_counts(7, 3, 2), whole_chunk_counts(7, 3, 2, rest_last=True)
    ((4, 3, 0), (4, 0, 3))
    """
    per_rank = rows * math.ceil(max(1, math.ceil(n / size)) / rows)
    counts = [min(per_rank, max(0, n - r * per_rank)) for r in range(size)]
    held = [r for r, c in enumerate(counts) if c]
    if rest_last and held and held[-1] != size - 1 and counts[held[-1]] % rows:
        counts[-1], counts[held[-1]] = counts[held[-1]], 0
    return tuple(counts)


def displacements(counts: Sequence[int]) -> Counts:
    """Offsets of each rank's first row (exclusive prefix sum).

    >>> displacements((2, 2, 2, 1))
    (0, 2, 4, 6)
    """
    out, total = [], 0
    for c in counts:
        out.append(total)
        total += int(c)
    return tuple(out)


def chunk(
    shape: Shape, split: int | None, size: int, rank: int
) -> tuple[int, Shape, tuple[slice, ...]]:
    """Offset, local shape and global slices of ``rank``'s balanced share.

    >>> chunk((7, 4), 0, 4, 3)
    (6, (1, 4), (slice(6, 7, None), slice(0, 4, None)))
    """
    if isinstance(rank, bool) or not isinstance(rank, numbers.Integral):
        raise TypeError(f"`rank` must be an int, got {type(rank).__name__}")
    if not 0 <= rank < size:
        raise ValueError(f"`rank` must be in [0, {size - 1}], got {rank}")
    if split is None:
        return 0, tuple(shape), tuple(slice(0, s) for s in shape)
    counts = balanced_counts(shape[split], size)
    start = displacements(counts)[rank]
    lshape = tuple(counts[rank] if i == split else s for i, s in enumerate(shape))
    slices = tuple(
        slice(start, start + counts[rank]) if i == split else slice(0, s)
        for i, s in enumerate(shape)
    )
    return start, lshape, slices


def counts_displs_shape(
    shape: Shape, axis: int, size: int, rank: int
) -> tuple[Counts, Counts, Shape]:
    """Heat's ``counts_displs_shape``: balanced counts, their offsets, and a buffer shape.

    The buffer shape is ``shape`` with ``axis`` set to ``size * counts[rank]``.

    >>> counts_displs_shape((7, 3), 0, 3, 0)
    ((3, 2, 2), (0, 3, 5), (9, 3))
    """
    counts = balanced_counts(shape[axis], size)
    out = tuple(size * counts[rank] if i == axis else s for i, s in enumerate(shape))
    return counts, displacements(counts), out


def chunks_for(shape: Shape, split: int | None, counts: Sequence[int] | None) -> tuple:
    """Dask ``chunks`` for a DNDarray: ``counts`` along ``split``, one chunk elsewhere.

    A zero-length axis still gets one (empty) chunk so that every axis has one.

    >>> chunks_for((7, 4), 0, (2, 2, 2, 1))
    ((2, 2, 2, 1), (4,))
    >>> chunks_for((3, 0), None, None)
    ((3,), (0,))
    """
    return tuple(tuple(int(c) for c in counts) if i == split else (s,) for i, s in enumerate(shape))


def lshape_map_from_counts(shape: Shape, split: int | None, counts: Counts, size: int):
    """The ``(size, ndim)`` table of local shapes, as an int64 numpy array.

    >>> lshape_map_from_counts((7, 4), 0, (2, 2, 2, 1), 4).tolist()
    [[2, 4], [2, 4], [2, 4], [1, 4]]
    """
    table = np.tile(np.asarray(shape, dtype=np.int64).reshape(1, -1), (size, 1))
    table = table.reshape(size, len(shape))
    if split is not None:
        table[:, split] = np.asarray(counts, dtype=np.int64)
    return table


def counts_from_chunks(chunks: tuple, split: int | None, size: int) -> Counts:
    """Read the per-rank counts off a Dask chunk grid, checking the DNDarray invariant.

    >>> counts_from_chunks(((2, 2, 2, 1), (4,)), 0, 4)
    (2, 2, 2, 1)
    """
    for axis, c in enumerate(chunks):
        if axis == split:
            if len(c) != size:
                raise ValueError(
                    f"chunks along split axis {split} must number {size}, got {len(c)}"
                )
        elif len(c) != 1:
            raise ValueError(f"chunks along axis {axis} must be a single chunk, got {len(c)}")
    if split is None:
        return ()
    return tuple(int(v) for v in chunks[split])


def conforms(chunks: tuple, split: int | None, size: int) -> bool:
    """Whether a chunk grid already meets the DNDarray invariant.

    >>> conforms(((3, 4), (2,)), 0, 2)
    True
    >>> conforms(((3, 4), (1, 1)), 0, 2)
    False
    """
    try:
        counts_from_chunks(chunks, split, size)
    except ValueError:
        return False
    return not any(np.isnan(c) for dim in chunks for c in dim)


class Ranks(Protocol):
    """What a :class:`Distribution` needs of its comm: the number of ranks (and equality)."""

    @property
    def size(self) -> int: ...


@dataclass(frozen=True)
class Distribution:
    """How an array's rows are spread over ranks: ``split``, ``counts`` and ``comm``, one value.

    ``counts[r]`` is rank ``r``'s number of rows along ``split``; a ``split=None``
    array has ``counts == ()`` (rank 0's one chunk holds it whole). Two arrays
    are laid out alike exactly when their distributions are equal. The value
    is checked on construction; :meth:`check` also checks it against a shape.

    >>> from dndask._comm import Comm
    >>> comm = Comm(["tcp://a:1", "tcp://b:1", "tcp://c:1"])
    >>> d = Distribution.balanced((7, 4), 0, comm)
    >>> d.counts, d.displs
    ((3, 2, 2), (0, 3, 5))
    >>> d == Distribution(0, [3, 2, 2], comm)
    True
    >>> Distribution(None, (), comm).counts
    ()
    """

    split: int | None
    counts: Counts
    comm: Ranks

    def __post_init__(self) -> None:
        size = self.comm.size
        counts = tuple(self.counts)
        for c in counts:
            if isinstance(c, bool) or not isinstance(c, numbers.Integral):
                raise TypeError(f"`counts` must hold ints, got {type(c).__name__}")
        counts = tuple(int(c) for c in counts)
        if self.split is None:
            if counts:
                raise ValueError(f"`counts` must be () for split=None, got {counts}")
        else:
            if isinstance(self.split, bool) or not isinstance(self.split, numbers.Integral):
                raise TypeError(f"`split` must be None or an int, got {type(self.split).__name__}")
            if len(counts) != size:
                raise ValueError(f"`counts` must have one entry per rank ({size}), got {counts}")
            if any(c < 0 for c in counts):
                bad = next(r for r, c in enumerate(counts) if c < 0)
                raise ValueError(f"`counts` must be non-negative, got {counts[bad]} for rank {bad}")
            object.__setattr__(self, "split", int(self.split))
        object.__setattr__(self, "counts", counts)

    @classmethod
    def balanced(cls, shape: Shape, split: int | None, comm: Ranks) -> Distribution:
        """Heat's balanced distribution of ``shape`` along ``split``."""
        if split is None:
            return cls(None, (), comm)
        return cls(split, balanced_counts(shape[split], comm.size), comm)

    @classmethod
    def of_chunks(cls, chunks: tuple, split: int | None, comm: Ranks) -> Distribution:
        """The distribution a Dask chunk grid stands for, checking the DNDarray invariant."""
        if any(math.isnan(c) for dim in chunks for c in dim):
            raise ValueError("`array` must have known chunk sizes")
        return cls(split, counts_from_chunks(chunks, split, comm.size), comm)

    @property
    def size(self) -> int:
        """Number of ranks."""
        return self.comm.size

    @property
    def displs(self) -> Counts:
        """Offset of each rank's first row along ``split`` (``()`` for ``split=None``)."""
        return displacements(self.counts)

    def check(self, shape: Shape) -> Distribution:
        """``self``, after checking that it can lay out an array of ``shape``."""
        ndim = len(shape)
        if self.split is not None:
            if not 0 <= self.split < ndim:
                raise ValueError(
                    f"`split` must be in [0, {ndim - 1}] for a {ndim}-dimensional array, "
                    f"got {self.split}"
                )
            total = sum(self.counts)
            if total != shape[self.split]:
                raise ValueError(
                    f"`counts` must sum to {shape[self.split]} along axis {self.split}, got {total}"
                )
        return self

    def is_balanced(self, shape: Shape) -> bool:
        """Whether this is Heat's balanced distribution of ``shape``."""
        return self == Distribution.balanced(shape, self.split, self.comm)

    def chunks(self, shape: Shape) -> tuple:
        """The Dask chunks of an array of ``shape`` laid out like this."""
        return chunks_for(shape, self.split, self.counts)

    def lshape_map(self, shape: Shape) -> np.ndarray:
        """The ``(size, ndim)`` int64 table of local shapes."""
        return lshape_map_from_counts(shape, self.split, self.counts, self.size)

    def with_counts(self, counts: Sequence[int]) -> Distribution:
        """The same split and comm with other ``counts``."""
        return Distribution(self.split, tuple(counts), self.comm)


def _as_int_table(value: object, name: str) -> np.ndarray:
    """Turn a torch tensor or numpy array into a numpy table of Python ints, checking its type.

    Python ints: a sum or an entry never wraps (``2**64 - 1`` in a uint64 map stays itself).
    """
    if _torch.is_tensor(value):
        torch = _torch.torch()  # loaded already: ``value`` is a tensor
        if value.is_floating_point() or value.is_complex() or value.dtype == torch.bool:
            raise TypeError(f"`{name}` must have an integer dtype, got {value.dtype}")
        if value.layout != torch.strided:
            raise TypeError(f"`{name}` must be a dense tensor, got layout {value.layout}")
        if value.device.type == "meta":
            raise TypeError(f"`{name}` must hold values, got a tensor on the meta device")
        table = value.detach().cpu().numpy().astype(object)
    elif isinstance(value, np.ndarray):
        if value.dtype.kind not in "iu":
            raise TypeError(f"`{name}` must have an integer dtype, got {value.dtype}")
        table = value.astype(object)
    else:
        raise TypeError(
            f"`{name}` must be a torch.Tensor or numpy.ndarray, got {type(value).__name__}"
        )
    return table


def validate_map(value: object, shape: Shape, split: int, size: int, name: str) -> Counts:
    """Check a user-given distribution map and return its counts along ``split``.

    ``value`` must be an integer ``(size, ndim)`` tensor or array with
    non-negative entries, whose non-split columns equal the global shape and
    whose split column sums to ``shape[split]``.

    >>> import numpy as np
    >>> validate_map(np.array([[1, 4], [3, 4]]), (4, 4), 0, 2, "target_map")
    (1, 3)
    """
    table = _as_int_table(value, name)
    ndim = len(shape)
    if table.shape != (size, ndim):
        raise ValueError(f"`{name}` must have shape ({size}, {ndim}), got {tuple(table.shape)}")
    if (table < 0).any():
        bad = int(np.argwhere((table < 0).any(axis=1))[0][0])
        raise ValueError(
            f"`{name}` must hold non-negative entries, got {table[bad].tolist()} for rank {bad}"
        )
    for axis in range(ndim):
        if axis == split:
            continue
        column = table[:, axis]
        if (column != shape[axis]).any():
            bad = int(np.argwhere(column != shape[axis])[0][0])
            raise ValueError(
                f"`{name}` column {axis} must equal the global shape {shape[axis]} on every rank, "
                f"got {int(column[bad])} for rank {bad}"
            )
    total = int(table[:, split].sum())
    if total != shape[split]:
        raise ValueError(f"`{name}` must sum to {shape[split]} along axis {split}, got {total}")
    return tuple(int(v) for v in table[:, split])


class Piece(NamedTuple):
    """A block of rows that moves from one source chunk into a target chunk.

    ``start``/``stop`` index rows *within* the source chunk along the axis the
    plan slices; ``whole`` says the piece is the entire source chunk (no slicing).
    """

    src: int
    start: int
    stop: int
    whole: bool


def plan_redistribution(src: Sequence[int], dst: Sequence[int]) -> tuple[tuple[Piece, ...], ...]:
    """Plan moving rows from ``src`` counts to ``dst`` counts, keeping global order.

    Returns, for every target rank, the pieces it assembles in order. Each
    source chunk appears in contiguous runs, so the plan holds at most
    ``len(src) + len(dst) - 1`` non-empty pieces.

    >>> [[(p.src, p.start, p.stop) for p in ps] for ps in plan_redistribution((2, 2), (1, 3))]
    [[(0, 0, 1)], [(0, 1, 2), (1, 0, 2)]]
    """
    t = _redistribution(src, dst, 1)
    cols = (c.tolist() for c in (t.src, t.start, t.stop, t.whole))
    pieces = [Piece(*piece) for piece in zip(*cols, strict=True)]
    bounds = t.bounds.tolist()
    return tuple(tuple(pieces[lo:hi]) for lo, hi in itertools.pairwise(bounds))


def moved_rows(src: Sequence[int], dst: Sequence[int]) -> int:
    """Rows that change owner when going from ``src`` to ``dst`` counts.

    This is the theoretical minimum data movement of a redistribution.

    >>> moved_rows((2, 2, 2, 1), (1, 2, 2, 2))
    3
    """
    plan = plan_redistribution(src, dst)
    return sum(p.stop - p.start for r, ps in enumerate(plan) for p in ps if p.src != r)


class Move(NamedTuple):
    """One piece of a relayout: rows of source rank ``src``'s chunk bound for one target chunk.

    ``index`` slices the source chunk (``None``: the whole chunk, no copy);
    ``elements`` is the piece's number of elements.
    """

    src: int
    index: tuple[slice, ...] | None
    elements: int


class PieceTable(NamedTuple):
    """Every piece of a relayout as numpy columns, one row per piece, target chunk by target chunk.

    Target chunk ``r`` joins rows ``bounds[r]:bounds[r + 1]`` in order (``dst`` names the
    target of each row). Row ``i`` is rows ``start[i]:stop[i]`` along the plan's ``sliced``
    axis of source chunk ``src[i]`` (``whole[i]``: the whole chunk, no slicing) and holds
    ``elements[i]`` elements. The columns are int64 (``whole`` bool): the ``P²`` pieces of a
    change of split are a few arrays, never ``P²`` Python objects. A pair of ranks shares at
    most one piece.
    """

    bounds: np.ndarray
    dst: np.ndarray
    src: np.ndarray
    start: np.ndarray
    stop: np.ndarray
    whole: np.ndarray
    elements: np.ndarray


def _table(per_target: np.ndarray, src, start, stop, whole, elements) -> PieceTable:
    """A :class:`PieceTable` from each target's number of pieces and the rows' columns."""
    per_target = np.asarray(per_target, dtype=np.int64)
    bounds = np.zeros(len(per_target) + 1, dtype=np.int64)
    np.cumsum(per_target, out=bounds[1:])
    dst = np.repeat(np.arange(len(per_target), dtype=np.int64), per_target)
    cols = (np.asarray(c, dtype=np.int64) for c in (src, start, stop))
    elements = np.asarray(elements, dtype=np.int64)
    return PieceTable(bounds, dst, *cols, np.asarray(whole, dtype=bool), elements)


class RelayoutPlan(NamedTuple):
    """How to lay an array out as ``dst`` instead of ``src``, as data.

    ``table`` holds every piece (:class:`PieceTable`); ``pieces[r]`` are the moves target
    chunk ``r`` joins, in order, along ``axis`` (one target chunk, on rank 0, when
    ``dst.split`` is None; a ``split=None`` source is rank 0's one chunk); a piece that is
    not a whole source chunk slices it along ``sliced``. A plan is a function of ``shape``
    and the two distributions' splits and counts, never of their comm.
    """

    shape: Shape
    src: Distribution
    dst: Distribution
    table: PieceTable
    axis: int
    sliced: int

    @property
    def pieces(self) -> Moves:
        """Target chunk ``r``'s :class:`Move` tuple at ``pieces[r]`` (made when asked for)."""
        return Moves(self)

    @property
    def moved(self) -> int:
        """Elements that change rank: the least any change from ``src`` to ``dst`` can move."""
        t = self.table
        return int(t.elements[t.src != t.dst].sum())

    @property
    def is_identity(self) -> bool:
        """Whether the array stays as it is: the same chunk grid (so every chunk stays put)."""
        return self.src.chunks(self.shape) == self.dst.chunks(self.shape)


class Moves(Sequence):
    """:attr:`RelayoutPlan.pieces`: target chunk ``r``'s tuple of :class:`Move`, made when asked."""

    __slots__ = ("_plan",)

    def __init__(self, plan: RelayoutPlan) -> None:
        self._plan = plan

    def __len__(self) -> int:
        return len(self._plan.table.bounds) - 1

    def __getitem__(self, r):
        if isinstance(r, slice):
            return tuple(self[i] for i in range(*r.indices(len(self))))
        n = len(self)
        r = operator.index(r)
        if not -n <= r < n:
            raise IndexError(f"target chunk {r} out of range for {n} target chunks")
        t, ndim, sliced = self._plan.table, len(self._plan.shape), self._plan.sliced
        rows = slice(int(t.bounds[r % n]), int(t.bounds[r % n + 1]))
        return tuple(
            Move(s, None if whole else along(ndim, sliced, lo, hi), e)
            for s, lo, hi, whole, e in zip(
                t.src[rows].tolist(),
                t.start[rows].tolist(),
                t.stop[rows].tolist(),
                t.whole[rows].tolist(),
                t.elements[rows].tolist(),
                strict=True,
            )
        )


def along(ndim: int, axis: int, start: int, stop: int) -> tuple[slice, ...]:
    """The index of rows ``start:stop`` along ``axis`` of an ``ndim``-dimensional chunk.

    >>> along(2, 1, 0, 3)
    (slice(None, None, None), slice(0, 3, None))
    """
    return tuple(slice(start, stop) if a == axis else slice(None) for a in range(ndim))


def check_relayout(shape: Shape, src: Distribution, dst: Distribution) -> None:
    """Check that an array of ``shape`` laid out as ``src`` can be laid out as ``dst``.

    Both distributions must fit ``shape`` and share one comm. This is all a
    relayout checks before it is planned; a caller that hands the move to
    another planner (Dask's p2p rechunk) runs it without building the
    ``P²`` pieces of :func:`plan_relayout`.

    >>> from dndask._comm import Comm
    >>> comm = Comm(["tcp://a:1", "tcp://b:1"])
    >>> check_relayout((4, 6), Distribution(0, (2, 2), comm), Distribution(1, (3, 3), comm))
    """
    if src.comm != dst.comm:
        raise ValueError(f"`dst` must be on the array's comm {src.comm!r}, got {dst.comm!r}")
    src.check(shape)
    dst.check(shape)


def plan_relayout(shape: Shape, src: Distribution, dst: Distribution) -> RelayoutPlan:
    """Plan laying out an array of ``shape`` as ``dst`` instead of ``src``, moving the least.

    Every target chunk takes each row straight from the rank that holds it: a
    change of split goes into ``dst.counts`` at once (never through the
    balanced layout), a change of counts moves only the rows that change owner.
    Checks the two as :func:`check_relayout` does, then plans with :func:`plan_pieces`.

    >>> from dndask._comm import Comm
    >>> comm = Comm(["tcp://a:1", "tcp://b:1"])
    >>> src = Distribution(0, (2, 2), comm)
    >>> plan = plan_relayout((4, 6), src, Distribution(1, (1, 5), comm))
    >>> [[(m.src, m.elements) for m in moves] for moves in plan.pieces], plan.moved
    ([[(0, 2), (1, 2)], [(0, 10), (1, 10)]], 12)
    >>> plan_relayout((4, 6), src, src).is_identity
    True
    """
    check_relayout(shape, src, dst)
    return plan_pieces(shape, src, dst)


def plan_pieces(shape: Shape, src: Distribution, dst: Distribution) -> RelayoutPlan:
    """:func:`plan_relayout` unchecked: ``src`` and ``dst`` may count different chunks.

    For chunk grids that are not ranks (Dask's chunks along one axis, regridded).
    Vectorised: a change of counts intersects the two sets of row intervals, a
    change of split is the outer product of the source holders and the target
    chunks, a gather lists the holders.

    >>> from dndask._comm import Comm
    >>> one, two = Comm(["tcp://a:1"]), Comm(["tcp://a:1", "tcp://b:1"])
    >>> plan = plan_pieces((3,), Distribution(0, (3,), one), Distribution(0, (1, 2), two))
    >>> plan.table.start.tolist(), plan.table.stop.tolist()
    ([0, 1], [1, 3])
    """
    shape = tuple(int(s) for s in shape)
    ndim = len(shape)
    a, d = src.split, dst.split
    if a is None:
        holders = np.zeros(1, dtype=np.int64)
        rows = np.asarray([shape[0] if ndim else 1], dtype=np.int64)  # along the axis below
        per_row = math.prod(shape[1:]) if ndim else 1  # elements per row of that axis
    else:
        counts = np.asarray(src.counts, dtype=np.int64)
        holders = np.flatnonzero(counts).astype(np.int64)
        rows = counts[holders]
        per_row = math.prod(s for ax, s in enumerate(shape) if ax != a)
    if d is None:
        # gather: rank 0's chunk joins every non-empty source chunk whole
        axis = 0 if a is None else a
        table = _table(
            [len(holders)],
            holders,
            np.zeros_like(rows),
            rows,
            np.ones(len(holders), bool),
            rows * per_row,
        )
        return RelayoutPlan(shape, src, dst, table, axis, axis)
    if a == d:
        return RelayoutPlan(shape, src, dst, _redistribution(src.counts, dst.counts, per_row), d, d)
    # a change of split: each non-empty target takes a piece of every holder, along d
    dcounts = np.asarray(dst.counts, dtype=np.int64)
    displs = np.asarray(dst.displs, dtype=np.int64)
    targets = np.flatnonzero(dcounts)
    h = len(holders)
    # elements of a holder's piece per target row along d
    if a is None:
        per_target_row = np.asarray([math.prod(s for ax, s in enumerate(shape) if ax != d)])
    else:
        rest = math.prod(s for ax, s in enumerate(shape) if ax not in (a, d))
        per_target_row = rows * rest
    start = np.repeat(displs[targets], h)
    count = np.repeat(dcounts[targets], h)
    table = _table(
        np.where(dcounts > 0, h, 0),
        np.tile(holders, len(targets)),
        start,
        start + count,
        count == shape[d],
        count * np.tile(per_target_row, len(targets)),
    )
    return RelayoutPlan(shape, src, dst, table, d if a is None else a, d)


def plan_moves(src: Distribution, dst: Distribution, moves: np.ndarray) -> RelayoutPlan:
    """The plan of a 1-D exchange whose pieces are given, not derived from the two layouts.

    ``moves``: int rows ``(target, source, start, stop)``, grouped by target in the
    order each target joins them: target ``t`` gets rows ``start:stop`` of source
    chunk ``source``. A sample sort's all-to-all is such an exchange (the pieces follow
    the data). ``src`` and ``dst`` are split 0; each target's pieces must sum to its
    count and lie inside their source chunk, one piece per pair of ranks at most
    (ValueError otherwise).

    >>> from dndask._comm import Comm
    >>> comm = Comm(["tcp://a:1", "tcp://b:1"])
    >>> moves = np.array([[0, 0, 0, 1], [0, 1, 0, 2], [1, 0, 1, 3], [1, 1, 2, 3]])
    >>> plan = plan_moves(Distribution(0, (3, 3), comm), Distribution(0, (3, 3), comm), moves)
    >>> plan.table.src.tolist(), plan.moved
    ([0, 1, 0, 1], 4)
    """
    if src.split != 0 or dst.split != 0:
        raise ValueError(f"`src` and `dst` must be split 0, got {src.split} and {dst.split}")
    moves = np.asarray(moves, dtype=np.int64).reshape(-1, 4)
    target, source, start, stop = moves.T
    ranks, counts = len(dst.counts), np.asarray(src.counts, dtype=np.int64)
    if len(target) and (np.any(np.diff(target) < 0) or target[0] < 0 or target[-1] >= ranks):
        raise ValueError(
            f"`moves` must list targets 0 to {ranks - 1} in order, got {target.tolist()}"
        )
    if len(source) and (
        np.any(source < 0) or np.any(source >= len(counts)) or np.any(start < 0)
        or np.any(stop < start) or np.any(stop > counts[np.clip(source, 0, len(counts) - 1)])
    ):  # fmt: skip
        raise ValueError("`moves` must lie inside their source chunks")
    pairs = target * len(counts) + source
    if len(np.unique(pairs)) != len(pairs):  # a segment per pair of ranks (the transports')
        raise ValueError("`moves` must give each pair of ranks at most one piece")
    got = np.bincount(target, weights=stop - start, minlength=ranks).astype(np.int64)
    if got.tolist() != list(dst.counts):
        raise ValueError(
            f"`moves` must give the targets {list(dst.counts)} rows, got {got.tolist()}"
        )
    whole = (start == 0) & (stop == counts[source])
    table = _table(np.bincount(target, minlength=ranks), source, start, stop, whole, stop - start)
    return RelayoutPlan((int(counts.sum()),), src, dst, table, 0, 0)


def _redistribution(src: Sequence[int], dst: Sequence[int], per_row: int) -> PieceTable:
    """The pieces of moving rows from ``src`` counts to ``dst`` counts (one axis), as a table.

    Every non-empty intersection of a source interval and a target interval is one piece:
    the segments between the union of both sets of boundaries, in global row order.
    """
    if sum(src) != sum(dst):
        raise ValueError(f"`dst` must sum to {sum(src)}, got {sum(dst)}")
    src_ends = np.cumsum(np.asarray(src, dtype=np.int64))
    dst_ends = np.cumsum(np.asarray(dst, dtype=np.int64))
    cuts = np.unique(np.concatenate([[0], src_ends, dst_ends]).astype(np.int64))
    lo, hi = cuts[:-1], cuts[1:]
    s = np.searchsorted(src_ends, lo, side="right")  # first source whose end is past lo
    r = np.searchsorted(dst_ends, lo, side="right")
    src_start = src_ends[s] - np.asarray(src, dtype=np.int64)[s]
    start, stop = lo - src_start, hi - src_start
    whole = (start == 0) & (stop == src_ends[s] - src_start)
    per_target = np.bincount(r, minlength=len(dst)) if len(r) else np.zeros(len(dst), np.int64)
    return _table(per_target, s, start, stop, whole, (stop - start) * per_row)


def reduced_split(split: int | None, axes: Sequence[int], keepdims: bool) -> int | None:
    """The split of a reduction's result over ``axes`` (already normalised).

    >>> reduced_split(2, (0,), False)
    1
    >>> reduced_split(1, (1,), True) is None
    True
    """
    if split is None or split in axes:
        return None
    if keepdims:
        return split
    return split - sum(1 for a in axes if a < split)
