"""What the clusterers run on one chunk: numpy functions of a block of rows and small arguments.

Each returns a small result (per-cluster sums, counts, pivots, ...) that the driver
combines; none keeps state between calls.
"""

from __future__ import annotations

import numpy as np

# rows per slab when distances to the centers are formed: bounded temporaries
_SLAB_ELEMENTS = 1 << 22


def distances(block: np.ndarray, centers: np.ndarray, p: int) -> np.ndarray:
    """``|x_i - c_j|_p^p``: squared Euclidean (``p=2``) or city-block (``p=1``) distances."""
    block = np.asarray(block, dtype=centers.dtype)
    out = np.empty((block.shape[0], centers.shape[0]), dtype=centers.dtype)
    step = max(1, _SLAB_ELEMENTS // max(1, centers.size))
    for start in range(0, block.shape[0], step):
        diff = block[start : start + step, None, :] - centers[None, :, :]
        if p == 2:
            np.einsum("ijk,ijk->ij", diff, diff, out=out[start : start + step])
        else:
            np.abs(diff).sum(axis=2, out=out[start : start + step])
    return out


def nearest(block: np.ndarray, centers: np.ndarray, p: int) -> np.ndarray:
    """The index of the closest center of every row (the first of equals)."""
    if block.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    return distances(block, centers, p).argmin(axis=1).astype(np.int64)


def cost(block: np.ndarray, centers: np.ndarray, p: int) -> float:
    """The sum over rows of the distance (to the power p) to the closest center."""
    if block.shape[0] == 0:
        return 0.0
    return float(distances(block, centers, p).min(axis=1).sum(dtype=np.float64))


def lloyd(block: np.ndarray, centers: np.ndarray) -> tuple:
    """Per cluster: the sum of its rows (float64) and their number; the squared-distance cost."""
    k, f = centers.shape
    sums = np.zeros((k, f), dtype=np.float64)
    counts = np.zeros(k, dtype=np.int64)
    if block.shape[0] == 0:
        return sums, counts, 0.0
    d = distances(block, centers, 2)
    labels = d.argmin(axis=1)
    np.add.at(sums, labels, np.asarray(block, dtype=np.float64))
    counts += np.bincount(labels, minlength=k)
    return sums, counts, float(d[np.arange(len(labels)), labels].sum(dtype=np.float64))


# ------------------------------------------------------------------ exact medians
# Two passes give each cluster's exact per-feature median: the first returns, per cluster,
# the row count and a few pivots of the sorted local values with their local positions;
# the driver brackets the middle order statistics between two pivots (bounds on their
# global positions); the second returns how many values lie at or below the lower
# bracket and the values between the brackets, a small part of the data.
PIVOTS = 65


def median_pivots(block: np.ndarray, centers: np.ndarray, p: int) -> list:
    """Per cluster ``(count, values (P, f), positions (P,))`` of the sorted local members."""
    labels = nearest(block, centers, p)
    out = []
    for c in range(centers.shape[0]):
        rows = np.sort(np.asarray(block[labels == c], dtype=centers.dtype), axis=0)
        n = rows.shape[0]
        positions = np.unique(np.linspace(0, n - 1, PIVOTS).round().astype(np.int64)) if n else []
        positions = np.asarray(positions, dtype=np.int64)
        out.append((n, rows[positions], positions))
    return out


def median_window(block: np.ndarray, centers: np.ndarray, p: int, low, high) -> list:
    """Per cluster, per feature: the count of members ``<= low``, the members in ``(low, high]``."""
    labels = nearest(block, centers, p)
    out = []
    for c in range(centers.shape[0]):
        rows = np.asarray(block[labels == c], dtype=centers.dtype)
        below = (rows <= low[c]).sum(axis=0)
        inside = [
            rows[(rows[:, j] > low[c, j]) & (rows[:, j] <= high[c, j]), j]
            for j in range(rows.shape[1])
        ]
        out.append((below, inside))
    return out


def closest_member(block: np.ndarray, centers: np.ndarray, targets: np.ndarray) -> tuple:
    """Per cluster (members by ``centers``, city-block): the member closest to ``targets[c]``.

    Returns ``(distance (k,), rows (k, f))``; ``inf`` where the chunk has no member.
    """
    labels = nearest(block, centers, 1)
    k, f = centers.shape
    best = np.full(k, np.inf)
    rows = np.zeros((k, f), dtype=centers.dtype)
    for c in range(k):
        members = np.asarray(block[labels == c], dtype=centers.dtype)
        if members.shape[0]:
            d = np.abs(members - targets[c]).sum(axis=1)
            i = int(d.argmin())
            best[c], rows[c] = d[i], members[i]
    return best, rows


def weights_sum(block: np.ndarray, centers: np.ndarray, p: int) -> float:
    """k-means++: the total weight (distance to the power p to the closest center)."""
    return cost(block, centers, p)


def weighted_pick(
    block: np.ndarray, index: int, centers: np.ndarray, p: int, targets
) -> np.ndarray | None:
    """k-means++: the row where this chunk's running weight first exceeds ``targets[index]``."""
    target = targets[index]
    if target is None or block.shape[0] == 0:
        return None
    w = distances(block, centers, p).min(axis=1).astype(np.float64)
    i = int(np.searchsorted(np.cumsum(w), target, side="right"))
    return np.asarray(block[min(i, block.shape[0] - 1)], dtype=centers.dtype)


def row_at(block: np.ndarray, index: int, local) -> np.ndarray | None:
    """The rows ``local[index]`` (local positions) of this chunk, or None."""
    wanted = local[index]
    if not len(wanted):
        return None
    return np.asarray(block[np.asarray(wanted, dtype=np.int64)])


# ------------------------------------------------------------------ local k-clustering
def weighted_median(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per column: the smallest value whose cumulative weight reaches half the total."""
    order = np.argsort(values, axis=0, kind="stable")
    out = np.empty(values.shape[1], dtype=values.dtype)
    for j in range(values.shape[1]):
        v, w = values[order[:, j], j], weights[order[:, j]]
        cum = np.cumsum(w)
        out[j] = v[int(np.searchsorted(cum, cum[-1] / 2))]
    return out


def local_kcluster(points, weights, k: int, p: int, seed, max_iter: int, tol: float) -> tuple:
    """Weighted k-means (``p=2``) or k-medians (``p=1``) of ``points`` in memory, k-means++ seeded.

    Returns ``(centers (k', f), weights (k',), iterations, cost)``, ``k' = min(k, rows)``.
    """
    points = np.asarray(points)
    weights = np.asarray(weights, dtype=np.float64)
    n = points.shape[0]
    if n <= k:
        return points.copy(), weights.copy(), 0, 0.0
    rng = np.random.default_rng(seed)
    chosen = [int(rng.choice(n, p=weights / weights.sum()))]
    best = distances(points, points[chosen], p)[:, 0]
    for _ in range(1, k):
        w = best * weights
        total = w.sum()
        i = int(rng.choice(n, p=w / total)) if total > 0 else int(rng.integers(n))
        chosen.append(i)
        best = np.minimum(best, distances(points, points[[i]], p)[:, 0])
    centers = points[chosen].astype(points.dtype)
    iterations = 0
    for _ in range(max_iter):
        iterations += 1
        labels = nearest(points, centers, p)
        new = centers.copy()
        for c in range(k):
            members = labels == c
            if members.any():
                if p == 2:
                    new[c] = np.average(points[members], axis=0, weights=weights[members])
                else:
                    new[c] = weighted_median(points[members], weights[members])
        shift = float(((new - centers) ** 2).sum())
        centers = new
        if shift <= tol:
            break
    labels = nearest(points, centers, p)
    counts = np.bincount(labels, weights=weights, minlength=k)
    d = distances(points, centers, p)
    return centers, counts, iterations, float((d.min(axis=1) * weights).sum())


def local_fit(block, index: int, k: int, p: int, seeds, max_iter: int, tol: float) -> tuple:
    """One rank's batch: :func:`local_kcluster` of its rows (unit weights), and the number
    of NaN or infinite values in it (then nothing is clustered)."""
    block = np.asarray(block)
    if not np.issubdtype(block.dtype, np.floating):
        block = block.astype(np.float64)
    bad = int(block.size - np.count_nonzero(np.isfinite(block)))
    if bad:
        return block[:0], np.zeros(0), bad
    centers, counts, _, _ = local_kcluster(
        block, np.ones(block.shape[0]), k, p, seeds[index], max_iter, tol
    )
    return centers, counts, 0
