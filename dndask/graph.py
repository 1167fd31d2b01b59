"""Graph Laplacians of data sets: ``Laplacian(similarity).construct(x)``.

The similarity matrix (e.g. :func:`dndask.spatial.rbf` of the samples) is split along
its rows; one pass sums the rows (the degrees), then each rank builds its rows of the
Laplacian from its rows of the adjacency and the degree vector.

>>> import dndask as ht
>>> from dndask.graph import Laplacian
>>> from dndask.spatial import rbf
>>> x = ht.array([[0.0], [0.0], [50.0]], split=0)
>>> Laplacian(lambda a: rbf(a), definition="simple").construct(x).numpy().tolist()
[[1.0, -1.0, 0.0], [-1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]
"""

from __future__ import annotations

import numbers
from collections.abc import Callable

import numpy as np

import dndask as ht
from dndask.base import per_chunk

__all__ = ["Laplacian"]


def _adjacency(block, mode: str, key: str, value: float, weighted: bool, block_info=None):
    rows = block_info[0]["array-location"][0][0] if block_info else 0
    a = np.array(block, copy=True)
    i = np.arange(a.shape[0])
    inside = i + rows < a.shape[1]
    a[i[inside], i[inside] + rows] = 0
    if mode == "eNeighbour":
        keep = a < value if key == "upper" else a > value
        a = np.where(keep, a, 0) if weighted else keep.astype(a.dtype)
        a[i[inside], i[inside] + rows] = 0
    return a


def _laplacian(block, degree, definition: str, block_info=None):
    rows = block_info[0]["array-location"][0][0] if block_info else 0
    i = np.arange(block.shape[0])
    if definition == "simple":
        out = np.subtract(0, block)  # no negative zeros
        out[i, i + rows] += degree[rows : rows + block.shape[0]]
        return out
    d = np.where(degree == 0, 1, degree)
    scale = 1 / np.sqrt(d)
    out = np.subtract(0, block) * scale[rows : rows + block.shape[0], None] * scale[None, :]
    out[i, i + rows] = 1
    return out


def _row_sums(block) -> np.ndarray:
    return np.asarray(block).sum(axis=1)


class Laplacian:
    """The graph Laplacian of the samples' similarity graph.

    Parameters
    ----------
    similarity : callable
        ``similarity(x)``: the ``(n, n)`` similarity (or distance) matrix of the samples.
    weighted : bool
        Keep the similarities as edge weights (else 1 for an edge) in 'eNeighbour' mode.
    definition : {'norm_sym', 'simple'}
        ``I - D^-1/2 A D^-1/2`` or ``D - A``.
    mode : {'fully_connected', 'eNeighbour'}
        Every pair is an edge, or only pairs below ('upper') or above ('lower') ``threshold_value``.
    threshold_key : {'upper', 'lower'}
    threshold_value : float
    neighbours : int
        Accepted for Heat's signature (k-nearest-neighbour graphs are not built).
    """

    def __init__(
        self,
        similarity: Callable,
        weighted: bool = True,
        definition: str = "norm_sym",
        mode: str = "fully_connected",
        threshold_key: str = "upper",
        threshold_value: float = 1.0,
        neighbours: int = 10,
    ):
        if not callable(similarity):
            raise TypeError(f"`similarity` must be callable, got {type(similarity).__name__}")
        if definition not in ("simple", "norm_sym"):
            raise NotImplementedError(
                f"`definition` must be 'simple' or 'norm_sym', got {definition!r}"
            )
        if mode not in ("eNeighbour", "fully_connected"):
            raise NotImplementedError(
                f"`mode` must be 'eNeighbour' or 'fully_connected', got {mode!r}"
            )
        if threshold_key not in ("upper", "lower"):
            raise ValueError(f"`threshold_key` must be 'upper' or 'lower', got {threshold_key!r}")
        if isinstance(threshold_value, bool) or not isinstance(threshold_value, numbers.Real):
            raise TypeError(
                f"`threshold_value` must be a real number, got {type(threshold_value).__name__}"
            )
        self.similarity_metric = similarity
        self.weighted = bool(weighted)
        self.definition = definition
        self.mode = mode
        self.epsilon = (threshold_key, float(threshold_value))
        self.neighbours = neighbours

    def construct(self, x: ht.DNDarray) -> ht.DNDarray:
        """The ``(n, n)`` Laplacian of the samples ``x``, split along its rows."""
        s = self.similarity_metric(x)
        if not isinstance(s, ht.DNDarray) or s.ndim != 2 or s.shape[0] != s.shape[1]:
            raise ValueError("`similarity` must return a square DNDarray")
        if s.split != 0:
            s = s.resplit(0)
        key, value = self.epsilon
        a = s.map_blocks(_adjacency, self.mode, key, value, self.weighted, dtype=s.to_dask().dtype)
        a = a.persist()
        degree = np.concatenate(per_chunk(a, _row_sums))
        return a.map_blocks(_laplacian, degree, self.definition, dtype=s.to_dask().dtype)
