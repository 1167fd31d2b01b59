"""What dndask's estimators share: scikit-learn's conventions, input checks, per-rank passes.

The algorithm packages (:mod:`dndask.cluster`, :mod:`dndask.preprocessing`, ...) build
on this module and on dndask's public API only. An estimator keeps its constructor's
arguments as attributes of the same name (``get_params``/``set_params``), learns in
``fit`` and sets fitted attributes ending in ``_``. :class:`BaseEstimator`, that parameter
protocol, is :mod:`dndask._estimator`'s, the one the core's estimators (DMD, DMDc) use too.

A *pass* over a DNDarray (:func:`per_chunk`) runs one task per chunk, on the worker
that holds it (Dask puts a task where its large input is), and brings the small
results to the driver in one round trip: an iterative fit makes one pass per
iteration over its persisted data, so its task graph does not grow.

>>> import dndask as ht, numpy as np
>>> from dndask.base import per_chunk
>>> x = ht.array(np.arange(12.0).reshape(6, 2), split=0, comm=ht.get_comm().subcomm([0, 1, 2]))
>>> [float(s) for s in per_chunk(x, lambda block: block.sum())]
[6.0, 22.0, 38.0]
"""

from __future__ import annotations

import numbers
from collections.abc import Callable

import dask
import distributed
import numpy as np

import dndask as ht
from dndask._estimator import BaseEstimator

__all__ = [
    "BaseEstimator",
    "ClassificationMixin",
    "ClusteringMixin",
    "RegressionMixin",
    "TransformMixin",
    "check_fitted",
    "check_samples",
    "is_classifier",
    "is_clusterer",
    "is_estimator",
    "is_regressor",
    "is_transformer",
    "map_rows",
    "per_chunk",
    "random_generator",
    "samples_dtype",
]


class ClassificationMixin:
    """Marks a classifier: ``fit(x, y)``, ``predict(x)``."""

    _estimator_type = "classifier"

    def fit_predict(self, x, y):
        """Fit, then predict the labels of ``x``."""
        return self.fit(x, y).predict(x)


class ClusteringMixin:
    """Marks a clusterer: ``fit(x)``, ``labels_``."""

    _estimator_type = "clusterer"

    def fit_predict(self, x):
        """Fit, then return the labels of ``x``."""
        self.fit(x)
        return self.labels_


class RegressionMixin:
    """Marks a regressor: ``fit(x, y)``, ``predict(x)``."""

    _estimator_type = "regressor"

    def fit_predict(self, x, y):
        """Fit, then predict the targets of ``x``."""
        return self.fit(x, y).predict(x)


class TransformMixin:
    """Marks a transformer: ``fit(x)``, ``transform(x)``."""

    _estimator_type = "transformer"

    def fit_transform(self, x, **fit_params):
        """Fit, then transform ``x``."""
        return self.fit(x, **fit_params).transform(x)


def _is(kind: str) -> Callable[[object], bool]:
    def check(estimator) -> bool:
        return getattr(estimator, "_estimator_type", None) == kind

    check.__name__ = f"is_{kind}"
    check.__doc__ = f"Whether ``estimator`` is a {kind} (its ``_estimator_type``)."
    return check


is_classifier = _is("classifier")
is_clusterer = _is("clusterer")
is_regressor = _is("regressor")
is_transformer = _is("transformer")


def is_estimator(estimator) -> bool:
    """Whether ``estimator`` follows the parameter protocol (``get_params``/``set_params``)."""
    return callable(getattr(estimator, "get_params", None)) and callable(
        getattr(estimator, "set_params", None)
    )


# ------------------------------------------------------------------ inputs
def samples_dtype(x: ht.DNDarray) -> np.dtype:
    """The floating dtype an estimator computes ``x`` in: ``x``'s own if floating, else float64."""
    dtype = x.to_dask().dtype
    return dtype if np.issubdtype(dtype, np.floating) else np.dtype(np.float64)


def check_samples(
    x, name: str = "x", *, min_samples: int = 1, finite: bool = True, n_features: int | None = None
) -> ht.DNDarray:
    """``x`` as a (samples, features) DNDarray split along its samples or not at all.

    TypeError for a non-DNDarray, ValueError for another number of axes, too few
    samples, another number of features or (``finite=True``) a NaN or infinity
    (one pass over the data). A split along the features is resplit along the
    samples (a copy: ``x`` itself is left as it is).
    """
    if not isinstance(x, ht.DNDarray):
        raise TypeError(f"`{name}` must be a DNDarray, got {type(x).__name__}")
    if x.ndim != 2:
        raise ValueError(f"`{name}` must be 2-D (samples, features), got shape {x.shape}")
    if x.shape[0] < min_samples:
        raise ValueError(f"`{name}` must have at least {min_samples} samples, got {x.shape[0]}")
    if n_features is not None and x.shape[1] != n_features:
        raise ValueError(f"`{name}` must have {n_features} features (as in fit), got {x.shape[1]}")
    dtype = x.to_dask().dtype
    if not (np.issubdtype(dtype, np.number) or dtype == np.bool_) or np.issubdtype(
        dtype, np.complexfloating
    ):
        raise TypeError(f"`{name}` must have a real numeric dtype, got {dtype}")
    if x.split == 1:
        x = x.resplit(0)
    if finite and np.issubdtype(dtype, np.floating):
        bad = [int(b) for b in per_chunk(x, _count_nonfinite)]
        if any(bad):
            rank = next(r for r, b in enumerate(bad) if b)
            raise ValueError(
                f"`{name}` must be finite, got {sum(bad)} NaN or infinite values "
                f"(the first on rank {rank})"
            )
    return x


def _count_nonfinite(block: np.ndarray) -> int:
    return int(block.size - np.count_nonzero(np.isfinite(block)))


def check_fitted(estimator, attribute: str) -> None:
    """ValueError naming the estimator when ``fit`` has not set ``attribute``."""
    if getattr(estimator, attribute, None) is None:
        raise ValueError(
            f"this {type(estimator).__name__} is not fitted yet: call `fit` before using it"
        )


def random_generator(random_state) -> np.random.Generator:
    """A numpy generator drawn from dndask's random stream (seeded first with ``random_state``).

    The stream does not depend on the number of ranks, so neither does what an
    estimator draws from it; each call takes one draw of the stream, as an array would.
    """
    if random_state is not None:
        if isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral):
            raise TypeError(
                f"`random_state` must be an int or None, got {type(random_state).__name__}"
            )
        ht.random.seed(int(random_state))
    algorithm, seed, counter = ht.random.get_state()
    ht.random.set_state((algorithm, seed, counter + 1))
    return np.random.default_rng([seed, counter])


# ------------------------------------------------------------------ passes
def per_chunk(x: ht.DNDarray, fn: Callable, *args, indexed: bool = False) -> list:
    """``fn(chunk, *args)`` for every chunk of ``x`` (rank order), in one round trip.

    ``indexed=True`` calls ``fn(chunk, i, *args)`` for chunk ``i``. Each task runs
    where its chunk is held; only the results travel to the driver. Persist ``x``
    first when it is used again, or its chunks are computed each time.
    """
    blocks = x.to_dask().to_delayed().ravel()
    call = dask.delayed(fn, pure=False)
    if indexed:
        tasks = [call(block, i, *args) for i, block in enumerate(blocks)]
    else:
        tasks = [call(block, *args) for block in blocks]
    client = x.comm.client
    try:
        return client.gather(client.compute(tasks))
    except _CANCELLED:
        # Dask cancels a pass whose chunk was sent from the driver and died with its worker;
        # the array's own wait says which rank lost it and what to do (or finds nothing)
        x.persist(wait=True)
        raise


_CANCELLED = (distributed.client.FutureCancelledError, distributed.client.FuturesCancelledError)


def map_rows(
    x: ht.DNDarray, fn: Callable, *args, dtype, n_columns: int | None = None
) -> ht.DNDarray:
    """``fn(chunk, *args)`` on every chunk of the 2-D ``x``: one output row per input row.

    The result has ``n_columns`` columns (None: a 1-D result) and ``x``'s split;
    nothing is computed here.
    """
    arr = x.to_dask()
    if n_columns is None:
        out = arr.map_blocks(fn, *args, drop_axis=1, dtype=dtype)
    else:
        out = arr.map_blocks(fn, *args, chunks=(arr.chunks[0], (n_columns,)), dtype=dtype)
    return ht.from_dask(out, split=x.split, comm=x.comm)
