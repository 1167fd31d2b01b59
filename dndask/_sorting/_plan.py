"""Pure planning of the sample sort: samples, splitters, cuts and the exchange (no scheduler).

Every element is ordered by the pair ``(value, key)``: ``key`` is an int64
that is unique over the whole array (the element's global flat index, or its
negation for a descending sort, or, when ties cannot be told apart, the rank's
offset plus the element's position in the rank's sorted run). Equal values are
therefore split between ranks like any other values, and an all-equal array
spreads like a distinct one. NaNs are larger than every number (numpy's rule,
which ``np.sort``, ``np.lexsort`` and ``np.searchsorted`` all follow).

- :func:`sample_positions`: the regular samples a rank sends (sorted positions).
- :func:`choose_splitters`: the ``P - 1`` splitters from everyone's samples,
  weighted by the number of values each sample stands for (skew-proof).
- :func:`cut_positions`: where a rank's sorted run is cut by the splitters.
- :func:`plan_exchange`: the ``P x P`` pieces and the result's counts.
- :func:`fill_steps`: the order and grouping in which a destination writes its inputs.
- :func:`plan_two_level`: the same exchange through ``sqrt(P)`` groups of ranks
  (:func:`plan_two_level_cuts`: a sort's, straight from the cuts, with numpy).
- :func:`exchange_pieces`: the number of tasks (graph size) at ``P`` ranks.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

# Regular samples each rank sends per destination rank (oversampling).
OVERSAMPLE = 4

# A destination writes what it receives into its output in at most this many steps
# (after its own piece): each step is a task, and only one step's inputs are
# fetched at a time, so about 1/FILL_STEPS of the result is in flight at once.
FILL_STEPS = 4

__all__ = [
    "FILL_STEPS",
    "OVERSAMPLE",
    "Boundaries",
    "Piece",
    "TwoLevel",
    "bucket_of",
    "choose_splitters",
    "cut_positions",
    "exchange_moves",
    "exchange_pieces",
    "fill_steps",
    "group_size",
    "plan_exchange",
    "plan_ordered_exchange",
    "plan_two_level",
    "plan_two_level_cuts",
    "plan_unique",
    "sample_positions",
]


def sample_positions(count: int, ranks: int, oversample: int = OVERSAMPLE) -> np.ndarray:
    """Positions in a sorted run of ``count`` values of the regular samples it sends.

    ``oversample * (ranks - 1)`` evenly spaced interior positions, or every
    position when the run is shorter.

    >>> sample_positions(10, 3, oversample=1).tolist()
    [3, 6]
    >>> sample_positions(2, 4).tolist()
    [0, 1]
    """
    m = max(int(oversample) * (int(ranks) - 1), 0)
    if count <= m:
        return np.arange(count, dtype=np.int64)
    return (np.arange(1, m + 1, dtype=np.int64) * count) // (m + 1)


def _order(values: np.ndarray, keys: np.ndarray) -> np.ndarray:
    return np.lexsort((keys, values))


def choose_splitters(
    values: np.ndarray, keys: np.ndarray, weights: np.ndarray, ranks: int
) -> tuple[np.ndarray, np.ndarray]:
    """The ``ranks - 1`` splitters ``(values, keys)`` from everyone's samples.

    Each sample carries the number of values it stands for (its rank's count
    over its number of samples); splitter ``i`` is the first sample whose
    cumulative weight reaches ``i / ranks`` of the total, so a rank holding
    most of the data does not get most of the splitters' attention wrong.

    >>> v, k = choose_splitters(np.array([1.0, 5.0, 3.0]), np.arange(3), np.ones(3), 3)
    >>> v.tolist(), k.tolist()
    ([1.0, 3.0], [0, 2])
    """
    values = np.asarray(values)
    keys = np.asarray(keys, dtype=np.int64)
    if ranks <= 1 or values.size == 0:
        return values[:0], keys[:0]
    order = _order(values, keys)
    weight = np.cumsum(np.asarray(weights, dtype=np.float64)[order])
    targets = weight[-1] * np.arange(1, ranks, dtype=np.float64) / ranks
    picks = np.minimum(np.searchsorted(weight, targets, side="left"), values.size - 1)
    return values[order][picks], keys[order][picks]


def cut_positions(
    values: np.ndarray,
    keys: np.ndarray | None,
    offset: int,
    split_values: np.ndarray,
    split_keys: np.ndarray,
) -> np.ndarray:
    """Where a sorted run is cut: ``P + 1`` positions, piece ``d`` is ``[cut[d], cut[d + 1])``.

    Runs on the rank that holds the run. ``keys`` are the run's keys in sorted
    order; ``None`` means they are ``offset + position`` (implicit). Piece
    ``d`` holds the values ``(v, k)`` with splitter ``d - 1 <= (v, k) <``
    splitter ``d``.

    >>> cut_positions(np.array([1, 2, 2, 2, 3]), None, 10, np.array([2]), np.array([12])).tolist()
    [0, 2, 5]
    """
    n = values.size
    low = np.searchsorted(values, split_values, side="left")
    high = np.searchsorted(values, split_values, side="right")
    if keys is None:
        return implicit_cuts(low, high, n, offset, split_keys)
    else:
        inner = np.array(
            [
                lo + int(np.searchsorted(keys[lo:hi], k, side="left"))
                for lo, hi, k in zip(
                    low.tolist(), high.tolist(), np.asarray(split_keys).tolist(), strict=True
                )
            ],
            dtype=np.int64,
        )
    return np.concatenate([[0], np.maximum.accumulate(inner) if inner.size else inner, [n]])


def implicit_cuts(low, high, n: int, offset: int, split_keys) -> np.ndarray:
    """:func:`cut_positions` of a run with implicit keys, from the splitters' search bounds.

    ``low``/``high`` are where each splitter value's equal run starts and ends in the run
    (numpy's ``searchsorted`` left and right), found where the run lives.

    >>> implicit_cuts(np.array([1]), np.array([4]), 5, 10, np.array([12])).tolist()
    [0, 2, 5]
    """
    inner = np.clip(np.asarray(split_keys, dtype=np.int64) - offset, low, high)
    return np.concatenate([[0], np.maximum.accumulate(inner) if inner.size else inner, [n]])


class Piece(NamedTuple):
    """Rows ``[start, stop)`` of source rank ``src``'s sorted run, sent to a destination."""

    src: int
    start: int
    stop: int


def plan_exchange(cuts: np.ndarray, descending: bool = False):
    """The all-to-all of a sample sort: per destination rank its pieces, and the counts.

    ``cuts[r]`` are rank ``r``'s :func:`cut_positions`. Ascending, destination
    ``d`` gets piece ``d`` of every source, sources in rank order; descending,
    it gets piece ``P - 1 - d`` (its merge reverses it), so rank 0 still holds
    the first values of the result. Empty pieces are left out.

    >>> pieces, counts = plan_exchange(np.array([[0, 2, 3], [0, 0, 4]]))
    >>> counts, pieces[1]
    ((2, 5), [Piece(src=0, start=2, stop=3), Piece(src=1, start=0, stop=4)])
    """
    cuts = np.asarray(cuts, dtype=np.int64)
    ranks = cuts.shape[0]
    plans, counts = [], []
    for d in range(ranks):
        block = ranks - 1 - d if descending else d
        pieces = [
            Piece(r, int(cuts[r, block]), int(cuts[r, block + 1]))
            for r in range(ranks)
            if cuts[r, block + 1] > cuts[r, block]
        ]
        plans.append(pieces)
        counts.append(sum(p.stop - p.start for p in pieces))
    return plans, tuple(counts)


def exchange_moves(cuts: np.ndarray, descending: bool = False) -> tuple[np.ndarray, tuple]:
    """The pieces and counts of :func:`plan_exchange`, as int64 rows ``(dst, src, start, stop)``.

    Vectorised (no ``P²`` Python objects): the moves of :func:`dndask._layout.plan_moves`.
    Each destination takes its pieces in source order, descending: in reverse source
    order, so that for a split-0 array the runs it joins hold ties in the order of their
    records' keys (negated when descending, see :func:`._tasks.local_run`) and a stable
    sort by value merges them (:func:`._tasks.merge_runs`).

    >>> moves, counts = exchange_moves(np.array([[0, 2, 3], [0, 0, 4]]))
    >>> moves.tolist(), counts
    ([[0, 0, 0, 2], [1, 0, 2, 3], [1, 1, 0, 4]], (2, 5))
    >>> exchange_moves(np.array([[0, 2, 3], [0, 0, 4]]), descending=True)[0].tolist()
    [[0, 1, 0, 4], [0, 0, 2, 3], [1, 0, 0, 2]]
    """
    cuts = np.asarray(cuts, dtype=np.int64)
    ranks = cuts.shape[0]
    blocks = np.arange(ranks)[::-1] if descending else np.arange(ranks)
    start = cuts[:, blocks].T  # [destination, source]
    stop = cuts[:, blocks + 1].T
    if descending:  # sources in reverse order within each destination
        start, stop = start[:, ::-1], stop[:, ::-1]
    dst, col = np.nonzero(stop > start)  # row-major: destinations in order, then columns
    src = ranks - 1 - col if descending else col
    lo, hi = start[dst, col], stop[dst, col]
    moves = np.stack([dst, src, lo, hi], axis=1).astype(np.int64)
    counts = np.bincount(dst, weights=hi - lo, minlength=ranks)
    return moves.reshape(-1, 4), tuple(int(c) for c in counts)


def exchange_pieces(ranks: int, method: str = "tasks") -> int:
    """Tasks of a sample sort's graph at ``ranks`` ranks when every piece is non-empty.

    A local sort, a sample and a cut task per rank, then the exchange:
    ``"tasks"``: ``P²`` slices and each destination's fill steps (its own
    piece, then the others in up to :data:`FILL_STEPS` steps);
    ``"two-level"``: see :func:`plan_two_level` (``O(P^1.5)``).

    >>> exchange_pieces(4), exchange_pieces(4, "two-level")
    (44, 40)
    """
    p = int(ranks)
    fills = p * (1 + min(p - 1, FILL_STEPS))
    if method == "tasks":
        return 3 * p + p * p + fills
    g = group_size(p)
    sizes = [min(g, p - a) for a in range(0, p, g)]
    groups = len(sizes)
    fills = 0
    for d in range(p):
        srcs = [a * g + (d // g) % size for a, size in enumerate(sizes)]
        fills += len(fill_steps(srcs, [1] * groups, d, p))
    # bundles (source x destination group), collects (source group x destination
    # group), forwards (source group x destination), each destination's fill steps
    return 3 * p + p * groups + groups * groups + groups * p + fills


def fill_steps(srcs, lengths, dst: int, ranks: int, steps: int = FILL_STEPS) -> list[list[int]]:
    """The order in which destination ``dst`` writes its inputs: lists of input indices.

    ``srcs[i]`` is the rank input ``i`` lives on, ``lengths[i]`` its length.
    Inputs on ``dst`` itself come first, alone (no transfer); the others follow
    in ring order from ``dst + 1`` (so that the destinations do not all fetch
    from rank 0 first), cut into at most ``steps`` groups of about equal length.
    Empty inputs are left out.

    >>> fill_steps([0, 1, 2, 3], [5, 5, 5, 5], 2, 4, steps=2)
    [[2], [3, 0], [1]]
    """
    local = [i for i, s in enumerate(srcs) if s == dst and lengths[i]]
    others = sorted(
        (i for i, s in enumerate(srcs) if s != dst and lengths[i]),
        key=lambda i: ((srcs[i] - dst) % max(ranks, 1), i),
    )
    out = [local] if local else []
    if not others:
        return out
    groups = max(1, min(int(steps), len(others)))
    total = sum(int(lengths[i]) for i in others)
    closed, done, current = 0, 0, []
    for i in others:
        # start the next group before an input whose middle is past this group's share
        boundary = total * (closed + 1) / groups
        if current and closed < groups - 1 and done + int(lengths[i]) / 2 > boundary:
            out.append(current)
            closed, current = closed + 1, []
        current.append(i)
        done += int(lengths[i])
    if current:
        out.append(current)
    return out


def group_size(ranks: int) -> int:
    """Ranks per group of the two-level exchange: ``ceil(sqrt(P))``.

    >>> group_size(64), group_size(65), group_size(1)
    (8, 9, 1)
    """
    return max(1, math.isqrt(max(int(ranks) - 1, 0)) + 1) if ranks > 1 else 1


class TwoLevel(NamedTuple):
    """The exchange of :func:`plan_exchange`'s pieces in two hops through groups of ranks.

    Ranks form groups of :func:`group_size` consecutive ranks; destination
    group ``b`` is the destinations ``b * g .. b * g + g - 1``. Every hop stays
    inside a group or goes to one rank of another, so the graph has
    ``O(P^1.5)`` tasks, and the data move twice.

    - ``bundles``: ``(src, ranges)``: what rank ``src`` sends for one destination
      group, the rows ``ranges`` (``(start, stop)`` pairs) of its run, joined.
    - ``collects``: ``(rank, bundle indices)``: the bundles of one source group
      for one destination group, gathered on one rank of the source group.
    - ``forwards``: ``(rank, collect index, parts)``: what that rank sends to one
      destination: ``parts`` are ``(position in the collect, start, stop)``
      within the bundles (sent as a list of views, read as joined).
    - ``inputs[d]``: ``(forward index, segments)``: destination ``d`` writes
      rows ``[lo, hi)`` of the forward at ``offset`` of its result, for every
      ``(lo, hi, offset)`` of ``segments``.
    """

    bundles: tuple
    collects: tuple
    forwards: tuple
    inputs: tuple


def plan_two_level(plans, ranks: int) -> TwoLevel:
    """The pieces ``plans[d]`` (lists of :class:`Piece`) sent in two hops (:class:`TwoLevel`).

    Source ``r`` (group ``a``) sends each destination group ``b`` one bundle,
    to rank ``a * g + b % size_a`` of its own group; that rank joins each
    destination's parts of its group's bundles and sends them on. Destination
    ``d``'s result is the same as the one-hop exchange's, row for row.

    >>> t = plan_two_level([[Piece(0, 0, 2)], [Piece(0, 2, 3), Piece(1, 0, 1)]], 2)
    >>> t.bundles, t.collects
    (((0, ((0, 3),)), (1, ((0, 1),))), ((0, (0, 1)),))
    >>> t.forwards[1], t.inputs[1]
    ((0, 0, ((0, 2, 3), (1, 0, 1))), ((1, ((0, 1, 0), (1, 2, 1))),))
    """
    ranks = int(ranks)
    g = group_size(ranks)

    def members(a):
        return range(a * g, min((a + 1) * g, ranks))

    # the pieces of every (source, destination group), by start in the run
    by_bundle: dict = {}
    for d, pieces in enumerate(plans):
        for j, p in enumerate(pieces):
            if p.stop > p.start:
                by_bundle.setdefault((p.src, d // g), []).append((p.start, p.stop, d, j))
    bundles, where = [], {}  # where[(d, j)] = (bundle index, row in the bundle)
    bundle_of = {}
    for (src, b), items in sorted(by_bundle.items()):
        items.sort()
        ranges: list[list[int]] = []
        row = 0
        for start, stop, d, j in items:
            if ranges and ranges[-1][1] == start:
                ranges[-1][1] = stop
            else:
                ranges.append([start, stop])
            where[(d, j)] = row
            row += stop - start
        bundle_of[(src, b)] = len(bundles)
        bundles.append((src, tuple((lo, hi) for lo, hi in ranges)))
    collects, collect_of = [], {}
    groups = -(-ranks // g)
    for a in range(groups):
        size = len(members(a))
        for b in range(groups):
            keys = [bundle_of[(r, b)] for r in members(a) if (r, b) in bundle_of]
            if keys:
                collect_of[(a, b)] = len(collects)
                collects.append((a * g + b % size, tuple(keys)))
    forwards: list = []
    inputs: list = []
    for d, pieces in enumerate(plans):
        b = d // g
        offsets = np.concatenate([[0], np.cumsum([p.stop - p.start for p in pieces])])
        by_group: dict = {}
        for j, p in enumerate(pieces):
            if p.stop > p.start:
                by_group.setdefault(p.src // g, []).append(j)
        mine = []
        for a, js in sorted(by_group.items()):
            c = collect_of[(a, b)]
            rank, keys = collects[c]
            position = {k: i for i, k in enumerate(keys)}
            parts, segments, row = [], [], 0
            for j in js:
                p = pieces[j]
                pos = position[bundle_of[(p.src, b)]]
                start = where[(d, j)]
                parts.append((pos, start, start + p.stop - p.start))
                segments.append((row, row + p.stop - p.start, int(offsets[j])))
                row += p.stop - p.start
            mine.append((len(forwards), tuple(segments)))
            forwards.append((rank, c, tuple(parts)))
        inputs.append(tuple(mine))
    return TwoLevel(tuple(bundles), tuple(collects), tuple(forwards), tuple(inputs))


def plan_two_level_cuts(cuts: np.ndarray, descending: bool = False) -> tuple[TwoLevel, tuple]:
    """:func:`plan_two_level` of :func:`plan_exchange`'s pieces, from the cuts, with numpy.

    The same plan (a forward's ``parts`` as an int64 array), without the
    ``P²`` :class:`Piece` objects: every destination group's rows of a run are
    one range (the blocks of a group are neighbours), and every source group's
    pieces for one destination are one range of its result. Also the counts.

    >>> t, counts = plan_two_level_cuts(np.array([[0, 2, 3], [0, 0, 1]]))
    >>> t.bundles, counts, t.forwards[1][2].tolist(), t.inputs[1]
    (((0, ((0, 3),)), (1, ((0, 1),))), (2, 2), [[0, 2, 3], [1, 0, 1]], ((1, ((0, 2, 0),)),))
    """
    cuts = np.asarray(cuts, dtype=np.int64)
    ranks = cuts.shape[0]
    g = group_size(ranks)
    groups = -(-ranks // g)
    block = np.arange(ranks)
    if descending:
        block = ranks - 1 - block
    lo, hi = cuts[:, block], cuts[:, block + 1]  # piece (source, destination)
    length = hi - lo
    starts = np.arange(0, ranks, g)
    bundle_lo = np.minimum.reduceat(lo, starts, axis=1)  # (source, destination group)
    bundle_hi = np.maximum.reduceat(hi, starts, axis=1)
    full = bundle_hi > bundle_lo
    index = np.full(full.shape, -1, dtype=np.int64)
    index[full] = np.arange(int(full.sum()))
    rs, bs = np.nonzero(full)
    bundles = tuple(
        (r, ((int(bundle_lo[r, b]), int(bundle_hi[r, b])),))
        for r, b in zip(rs.tolist(), bs.tolist(), strict=True)
    )
    # a bundle's position among the bundles its collect gathers
    position = np.zeros_like(index)
    collects, collect_of = [], np.full((groups, groups), -1, dtype=np.int64)
    for a in range(groups):
        rows = slice(a * g, min((a + 1) * g, ranks))
        size = rows.stop - rows.start
        position[rows] = np.cumsum(full[rows], axis=0) - 1
        for b in range(groups):
            keys = index[rows, b][full[rows, b]]
            if keys.size:
                collect_of[a, b] = len(collects)
                collects.append((a * g + b % size, tuple(keys.tolist())))
    dest_group = np.arange(ranks) // g
    start = lo - bundle_lo[:, dest_group]
    before = np.concatenate([np.zeros((1, ranks), np.int64), np.cumsum(length, axis=0)])
    forwards: list = []
    inputs: list = []
    for d in range(ranks):
        b = int(dest_group[d])
        mine = []
        for a in range(groups):
            r0, r1 = a * g, min((a + 1) * g, ranks)
            rows = np.nonzero(length[r0:r1, d])[0] + r0
            if not rows.size:
                continue
            parts = np.stack(
                [position[rows, b], start[rows, d], start[rows, d] + length[rows, d]], 1
            )
            total = int(before[r1, d] - before[r0, d])
            mine.append((len(forwards), ((0, total, int(before[r0, d])),)))
            forwards.append((collects[int(collect_of[a, b])][0], int(collect_of[a, b]), parts))
        inputs.append(tuple(mine))
    plan = TwoLevel(bundles, tuple(collects), tuple(forwards), tuple(inputs))
    return plan, tuple(int(c) for c in length.sum(axis=0))


def plan_ordered_exchange(sizes: np.ndarray, dst_counts) -> list[list[Piece]]:
    """Pieces of a bucket exchange: buckets in order, ranks in order within a bucket.

    ``sizes[r][b]`` is the length of bucket ``b`` in rank ``r``'s bucket-ordered
    run; the result is the concatenation, bucket by bucket and rank by rank, cut
    into ``dst_counts``. Destination ``d``'s pieces are listed in that order.

    >>> plan_ordered_exchange(np.array([[1, 1], [2, 0]]), (2, 2))[1]
    [Piece(src=1, start=1, stop=2), Piece(src=0, start=1, stop=2)]
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    ranks, buckets = sizes.shape
    starts = np.concatenate([np.zeros((ranks, 1), np.int64), np.cumsum(sizes, axis=1)], axis=1)
    segments = [
        (r, int(starts[r, b]), int(starts[r, b + 1]))
        for b in range(buckets)
        for r in range(ranks)
        if sizes[r, b]
    ]
    plans: list[list[Piece]] = []
    seg, used = 0, 0
    for count in dst_counts:
        need, pieces = int(count), []
        while need:
            src, start, stop = segments[seg]
            take = min(need, stop - start - used)
            pieces.append(Piece(src, start + used, start + used + take))
            need -= take
            used += take
            if used == stop - start:
                seg, used = seg + 1, 0
        plans.append(pieces)
    return plans


def bucket_of(values: np.ndarray, pivots: np.ndarray) -> np.ndarray:
    """Bucket ``2 j`` for values between pivots ``j - 1`` and ``j``, ``2 j + 1`` for pivot ``j``.

    ``pivots`` are sorted and distinct; every arrangement that keeps the
    buckets in order puts each pivot's value at its own sorted positions.

    >>> bucket_of(np.array([0, 1, 2, 5]), np.array([1, 3])).tolist()
    [0, 1, 2, 4]
    """
    if pivots.size == 0:
        return np.zeros(np.shape(values), dtype=np.int64)
    j = np.searchsorted(pivots, values, side="left")
    hit = (j < pivots.size) & (pivots[np.minimum(j, max(pivots.size - 1, 0))] == values)
    return 2 * j + hit


class Boundaries(NamedTuple):
    """How the ranks' local groups of a distributed ``unique`` join into global ones.

    ``drop[r]``: rank ``r``'s first group continues the previous rank's last
    one (it is left out); ``extra_counts[r]`` / ``extra_index[r]``: the count to
    add to, and the smallest first index to merge into, rank ``r``'s last
    group; ``counts[r]``: the groups rank ``r`` keeps; ``offsets[r]``: the global
    number of rank ``r``'s first local group (its dropped one's is one less).
    """

    drop: tuple
    extra_counts: tuple
    extra_index: tuple
    counts: tuple
    offsets: tuple


def _same(x, y) -> bool:
    """Equal values, NaN equal to NaN (``None`` stands for no value)."""
    if x is None or y is None:
        return False
    if x == y:
        return True
    return np.asarray(x).dtype.kind == "f" and bool(np.isnan(x) and np.isnan(y))


def plan_unique(summaries) -> Boundaries:
    """The :class:`Boundaries` of a ``unique`` from every rank's summary of its sorted run.

    ``summaries[r] = (groups, first value, last value, count of the first group,
    smallest index of the first group)`` (values ``None`` when the run is
    empty). NaNs are one group, as numpy's default ``equal_nan=True``.

    >>> plan_unique([(2, 1, 2, 1, 0), (1, 2, 2, 3, 4), (2, 2, 5, 1, 7)]).drop
    (False, True, True)
    """
    size = len(summaries)
    drop = [False] * size
    extra_counts = [0] * size
    extra_index = [np.iinfo(np.int64).max] * size
    owner, last = None, None
    for r, (groups, first, final, first_count, first_index) in enumerate(summaries):
        if groups == 0:
            continue
        if owner is not None and _same(first, last):
            drop[r] = True
            extra_counts[owner] += first_count
            extra_index[owner] = min(extra_index[owner], first_index)
            if groups == 1:
                continue
        owner, last = r, final
    counts = [g - d for (g, *_), d in zip(summaries, drop, strict=True)]
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int).tolist()
    return Boundaries(
        tuple(drop), tuple(extra_counts), tuple(extra_index), tuple(counts), tuple(offsets)
    )
