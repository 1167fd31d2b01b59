"""The inputs of the algorithm cases, the same numbers on every system (numpy only).

Heat's ranks import this module from Heat's own virtual environment, so it needs
nothing but numpy: rank ``r``'s rows of an input come from ``default_rng(seed + offset + r)``
in dndask's workers, in the Dask side (the same chunks) and in Heat's MPI rank ``r``.
"""

from __future__ import annotations

import numpy as np

from . import workloads

# seed offsets of the inputs, so that X and Y (or x and y) differ
OFFSETS = {"x": 0, "y": 1000, "init": 7919}


def piece(rank: int, seed: int, counts: list[int], cols: int, name: str = "x") -> np.ndarray:
    """Rank ``rank``'s rows of input ``name``: float32 standard normal numbers.

    ``name="target"`` is Lasso's ``y`` for the same rows (a vector): the sum of the first
    three columns of ``x`` plus noise.
    """
    if name == "target":
        x = piece(rank, seed, counts, cols)
        noise = np.random.default_rng(seed + OFFSETS["y"] + rank).standard_normal(counts[rank])
        return (x[:, :3].sum(axis=1) + 0.1 * noise).astype(np.float32)
    rng = np.random.default_rng(seed + OFFSETS[name] + rank)
    return rng.standard_normal((counts[rank], cols), dtype=np.float32)


def kmeans_init(seed: int, cols: int) -> np.ndarray:
    """The fixed initial centers of k-means (the same on every system)."""
    rng = np.random.default_rng(seed + OFFSETS["init"])
    return rng.standard_normal((workloads.KMEANS_CLUSTERS, cols), dtype=np.float32)
