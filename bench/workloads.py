"""The benchmark cases: what each one does, its array shapes and the bytes it must move.

Standard library only: the Heat side imports this module from Heat's own
virtual environment, so the three systems run exactly the same shapes.

Every case works on a float32 matrix of ``rows x cols`` whose size in MiB is
given; ``cols`` is fixed per case and ``rows`` follows from the size. Counts
along an axis are Heat's balanced rule (the lowest ``n % P`` ranks hold one
extra row).

Two byte counts are derived from the lshape maps, without running anything:

- :meth:`Workload.minimum_bytes`: what has to cross from one worker to
  another for the result dndask (and the plain Dask code) produces; this is
  also the numerator of the copy-bandwidth floor;
- :meth:`Workload.heat_bytes`: what Heat's MPI exchange moves by
  construction for the result *Heat* produces. The two differ where the
  semantics differ: Heat's ``split=None`` array is replicated on every rank
  (``resplit_(None)`` is an allgather), and a ``split=None`` operand of
  ``matmul`` is already on every rank; and where Heat's algorithm moves
  more: its ``redistribute_`` passes surplus rows from rank to rank
  (:func:`heat_redistribute_rows`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

ITEMSIZE = 4  # float32 throughout
MIB = 1 << 20
MATMUL_N = 256  # the split=None operand of matmul is (cols, MATMUL_N)


@dataclass(frozen=True)
class Case:
    """One operation of the suite.

    ``shape`` says how the size in MiB gives the main matrix: ``"rows"`` (``cols`` fixed,
    rows follow), ``"square"`` (``n x n``, ``cols`` ignored) or ``"pairs"`` (``cdist``: the
    ``n x n`` result has the size; both operands are ``n x cols``).
    """

    key: str
    label: str
    cols: int
    movement: bool  # a data-movement case: it has a copy-bandwidth floor
    group: str = "core"
    shape: str = "rows"
    default_mib: float = 0.0  # the group's own size for the case (0: the run's first size)


CASES: dict[str, Case] = {
    c.key: c
    for c in (
        Case("randn", "randn creation", 1024, False),
        Case("redistribute", "redistribute_ balanced → skewed", 1024, True),
        Case("resplit01", "resplit_ 0 → 1", 4096, True),
        Case("resplit_none", "resplit_ 0 → None", 1024, True),
        Case("elementwise", "10 elementwise ops + sum", 4096, False),
        Case("matmul", f"matmul split 0 @ None (x{MATMUL_N})", 1024, False),
        Case("tsqr", "qr (TSQR), 128 columns", 128, False),
        Case("is_split", "array(local, is_split=0)", 1024, False),
    )
}

# Issues 27 and 28: Heat's machine-learning and linear-algebra layer (``--group algorithms``).
KMEANS_CLUSTERS = 8
KMEANS_ITERATIONS = 30
LASSO_ITERATIONS = 3
LASSO_LAM = 0.1
RSVD_RANK = 10
IPCA_COMPONENTS = 50
IPCA_BATCHES = 4
WARMUP_MIB = 0.01  # the algorithm cases' warm-up (see Workload.warmup)
N1000_MIB = 1000 * 1000 * ITEMSIZE / MIB  # a 1000 x 1000 float32 matrix (Heat's own bench size)

ALGORITHM_CASES: dict[str, Case] = {
    c.key: c
    for c in (
        Case(
            "cdist", "cdist split 0 x split 0 (18 features)", 18, False, "algorithms", "pairs", 256
        ),
        Case(
            "kmeans",
            f"k-means, {KMEANS_CLUSTERS} clusters x {KMEANS_ITERATIONS} iterations",
            32,
            False,
            "algorithms",
            "rows",
            16,
        ),
        Case("lasso", f"Lasso, {LASSO_ITERATIONS} sweeps", 16, False, "algorithms", "rows", 16),
        Case("moments", "mean, var, skew, kurtosis (axis 0)", 64, False, "algorithms", "rows", 256),
        Case("eigh", "eigh (symmetric), split 0", 0, False, "algorithms", "square", N1000_MIB),
        Case("polar", "polar, split 0", 0, False, "algorithms", "square", N1000_MIB),
        Case("rsvd", f"rsvd rank {RSVD_RANK}, 1000 columns", 1000, False, "algorithms", "rows", 64),
        Case(
            "ipca",
            f"IncrementalPCA.partial_fit x {IPCA_BATCHES}, {IPCA_COMPONENTS} components",
            500,
            False,
            "algorithms",
            "rows",
            16,
        ),
        Case("fft", "fft along the split axis (0)", 256, True, "algorithms", "rows", 64),
    )
}

# the fewest rows of a case at a tiny size (an IncrementalPCA batch holds its components)
MIN_ROWS = {"kmeans": KMEANS_CLUSTERS, "ipca": IPCA_COMPONENTS, "rsvd": 2 * RSVD_RANK}

# ``python -m bench --group NAME`` runs the cases of one group.
GROUPS: dict[str, dict[str, Case]] = {"core": CASES, "algorithms": ALGORITHM_CASES}

# Cases run by their own scripts (``python -m bench.sorting``), not by ``python -m bench``.
OWN_SCRIPT_CASES: dict[str, Case] = {
    c.key: c for c in (Case("sort", "sort of a split-0 float32 vector", 1, True),)
}


def balanced_counts(n: int, size: int) -> list[int]:
    """Heat's balanced counts of ``n`` rows over ``size`` ranks."""
    base, extra = divmod(n, size)
    return [base + (1 if r < extra else 0) for r in range(size)]


def skewed_counts(n: int, size: int) -> list[int]:
    """The skewed target of the redistribute case: ranks ``0..P-2`` hold ``2n/(5P)`` rows each.

    At ``P = 4`` that is 10 %, 10 %, 10 % and 70 % of the rows.
    """
    small = 2 * n // (5 * size)
    return [small] * (size - 1) + [n - small * (size - 1)]


def intervals(counts: list[int]) -> list[tuple[int, int]]:
    """``[start, stop)`` of every rank's rows."""
    out, start = [], 0
    for c in counts:
        out.append((start, start + c))
        start += c
    return out


def moved_rows(src: list[int], dst: list[int]) -> int:
    """Rows whose owner changes from counts ``src`` to counts ``dst`` (the minimum to move)."""
    kept = sum(
        max(0, min(b1, b2) - max(a1, a2))
        for (a1, b1), (a2, b2) in zip(intervals(src), intervals(dst), strict=True)
    )
    return sum(src) - kept


def heat_redistribute_rows(src: list[int], dst: list[int]) -> int:
    """Rows Heat 1.8's ``redistribute_`` sends, simulated on the counts.

    Heat visits the ranks in order: rank ``r`` first pulls the rows it lacks
    from the ranks after it, nearest first, then passes any surplus on to
    rank ``r + 1``, which may pass it on again. Rows can so cross several
    ranks: balanced ``[25] * 4`` to ``[10, 10, 10, 70]`` sends 90 rows where
    65 change owner (checked against Heat with a byte-counting ``Send``).
    """
    cur, dst = list(src), list(dst)
    moved = 0
    for r in range(len(cur) - 1):
        for s in range(r + 1, len(cur)):
            take = min(max(0, dst[r] - cur[r]), cur[s])
            cur[s] -= take
            cur[r] += take
            moved += take
        surplus = cur[r] - dst[r]
        if surplus > 0:
            cur[r] -= surplus
            cur[r + 1] += surplus
            moved += surplus
    return moved


def chain(x, absolute=abs):
    """Ten elementwise operations and a full sum, written once for every system.

    ``absolute`` is Python's ``abs`` for dndask and dask; Heat's DNDarray has
    no ``__abs__``, so its side passes ``ht.abs``.
    """
    y = x * 1.5
    y = y + 2.0
    y = y - x
    y = y / 3.0
    y = y * y
    y = absolute(y - 0.25)
    y = y + x
    y = y * 0.5
    y = y - 1.0
    y = y * y
    return y.sum()


@dataclass(frozen=True)
class Workload:
    """A case at a size (MiB of its main matrix) on ``ranks`` ranks."""

    case: Case
    mib: float
    ranks: int

    @classmethod
    def of(cls, key: str, mib: float, ranks: int) -> Workload:
        """The workload of case ``key``; ``KeyError`` names the known cases."""
        known = {**CASES, **ALGORITHM_CASES, **OWN_SCRIPT_CASES}
        if key not in known:
            raise KeyError(f"unknown case {key!r}; known: {', '.join(known)}")
        return cls(known[key], mib, ranks)

    def resized(self, mib: float) -> Workload:
        """The same case at another size."""
        return replace(self, mib=mib)

    def warmup(self, core_mib: float) -> Workload:
        """The untimed warm-up before the repeats: the same case at ``core_mib`` for the core
        group; for the algorithm cases the statistical moments of a tiny matrix, on every
        system (it loads the libraries and opens the connections; an algorithm's own cost at
        any size is mostly its iterations' round trips, which a warm-up would only repeat)."""
        if self.case.group == "algorithms":
            return Workload(ALGORITHM_CASES["moments"], WARMUP_MIB, self.ranks)
        return self.resized(core_mib)

    @property
    def cols(self) -> int:
        """Columns of the main matrix (``n`` for the square and pairs shapes)."""
        return self.rows if self.case.shape == "square" else self.case.cols

    @property
    def rows(self) -> int:
        """Rows of the main matrix: the size in MiB, at least one row per rank.

        Square cases: ``n`` of an ``n x n`` matrix of that size; ``cdist``: ``n`` of its
        ``n x n`` result.
        """
        if self.case.shape in ("square", "pairs"):
            return max(self.ranks, math.isqrt(int(self.mib * MIB) // ITEMSIZE))
        least = max(self.ranks, MIN_ROWS.get(self.case.key, 0))
        return max(least, int(self.mib * MIB) // (ITEMSIZE * self.cols))

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows, self.cols)

    @property
    def nbytes(self) -> int:
        """Bytes of the main matrix (of ``cdist``: one operand)."""
        return self.rows * self.cols * ITEMSIZE

    @property
    def data_bytes(self) -> int:
        """Bytes of every input and of the main result (the "data" of the algorithm cases)."""
        key = self.case.key
        if key == "cdist":  # two operands and the n x n result
            return 2 * self.nbytes + self.rows * self.rows * ITEMSIZE
        if key == "lasso":  # and y
            return self.nbytes + self.rows * ITEMSIZE
        if key == "ipca":  # every batch
            return IPCA_BATCHES * self.nbytes
        if key == "fft":  # and the complex64 result
            return 3 * self.nbytes
        return self.nbytes

    @property
    def counts(self) -> list[int]:
        """Balanced rows per rank (split 0)."""
        return balanced_counts(self.rows, self.ranks)

    @property
    def col_counts(self) -> list[int]:
        """Balanced columns per rank (split 1)."""
        return balanced_counts(self.cols, self.ranks)

    @property
    def target_counts(self) -> list[int]:
        """The skewed rows per rank of the redistribute case."""
        return skewed_counts(self.rows, self.ranks)

    def _row_bytes(self, rows: int) -> int:
        return rows * self.cols * ITEMSIZE

    def minimum_bytes(self) -> int:
        """Bytes that must cross between workers for dndask's (and Dask's) result."""
        key, p = self.case.key, self.ranks
        if key == "redistribute":
            return self._row_bytes(moved_rows(self.counts, self.target_counts))
        if key == "resplit01":
            kept = sum(r * c for r, c in zip(self.counts, self.col_counts, strict=True))
            return self.nbytes - kept * ITEMSIZE
        if key == "resplit_none":  # one chunk, on the rank holding the most rows
            return self.nbytes - self._row_bytes(max(self.counts))
        if key == "matmul":  # the split=None operand reaches the other ranks
            return (p - 1) * self.cols * MATMUL_N * ITEMSIZE
        if key == "tsqr":  # R factors to one rank, their Q blocks back
            return 2 * (p - 1) * self.cols * self.cols * ITEMSIZE
        if key == "cdist":  # every rank lacks the other ranks' rows of Y
            return (p - 1) * self.nbytes
        if key == "fft":  # resplit 0 -> 1 of the input, 1 -> 0 of the complex result
            kept = sum(r * c for r, c in zip(self.counts, self.col_counts, strict=True))
            return 3 * (self.nbytes - kept * ITEMSIZE)
        if self.case.group == "algorithms":
            return 0  # no fixed minimum (only partial results or factors move)
        return 0  # creation, wrapping, elementwise (only P - 1 scalars)

    def heat_bytes(self) -> int:
        """Bytes Heat's MPI exchange moves by construction, from the lshape maps."""
        key, p = self.case.key, self.ranks
        if key == "redistribute":  # surplus rows travel rank to rank
            return self._row_bytes(heat_redistribute_rows(self.counts, self.target_counts))
        if key == "resplit_none":  # allgather: every rank receives what it lacks
            return (p - 1) * self.nbytes
        if key == "matmul":  # the split=None operand is already on every rank
            return 0
        if key == "is_split":  # the lshapes are exchanged, the data stays
            return p * (p - 1) * 2 * 8
        if key == "tsqr":  # as dndask, plus R replicated on every rank (a lower bound)
            return 3 * (p - 1) * self.cols * self.cols * ITEMSIZE
        if key == "cdist":  # Y's blocks travel round the ring: each to every other rank
            return (p - 1) * self.nbytes
        if key == "fft":
            return self.minimum_bytes()
        if self.case.group == "algorithms":
            return math.nan  # not derived: Heat's algorithms exchange as they go
        return self.minimum_bytes()
