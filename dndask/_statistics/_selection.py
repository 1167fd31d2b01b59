"""The exact distributed selection: values at given global sorted positions.

:func:`probe` (one rank's answer), :func:`select` (the driver's rounds) and
:func:`_narrow` are pure and tested without a cluster;
:func:`order_statistics` runs them against the sorted chunks kept on the
workers.

Every rank sorts its chunk once (kept in its worker's memory). The driver wants
the values of a few global ranks ``k`` (the sorted positions numpy's formula
needs). For each ``k`` it keeps a bracket ``(L, U]`` that is known to hold the
value, with ``#(x <= L) <= k < #(x <= U)``; at first there are no bounds. One
round sends the distinct brackets to every rank; each rank answers, with binary
searches in its sorted chunk, how many of its values are ``<= L`` and ``< U``,
and either all its values strictly inside the bracket (if at most ``m`` of
them) or ``m`` of them at evenly spaced positions. The positions are known, so
these samples bound the global count below or equal to every sample value
within ``C / m`` per rank (``C`` values strictly inside the bracket). The driver
then either knows the value (``k`` lands on ``U``, or every rank sent all its
values) or moves the bracket to the closest samples whose bounds still hold it,
which leaves at most about ``2 C / m`` values strictly inside. So a round moves
at most ``m`` values and two counts per rank and bracket, and the number of
rounds is about ``1 + log(N / m) / log(m / 2)``, 1 round when no rank holds more
than ``m = 256`` values, 3 to 4 for ``N = 10**9``. Ties never enlarge a bracket:
values equal to ``L`` or ``U`` are counted, not sent. A NaN (found in round 1,
the last value of a sorted chunk) makes every result NaN, as in numpy.
"""

from __future__ import annotations

import distributed
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from .. import _dndarray, _xp
from .._compat import new_array
from .._graph import block_index, meta_of

# Values each rank sends per bracket and round of the distributed selection.
_SAMPLES = 256

# Counters of the last distributed selection (read by the tests).
last_selection: dict = {}


def _offsets(count: int, m: int) -> np.ndarray:
    """Positions of the samples a rank sends: ``m`` evenly spaced in ``[0, count)``, or all."""
    if count <= m:
        return np.arange(count, dtype=np.int64)
    return (np.arange(m, dtype=np.int64) * (count - 1)) // (m - 1)


def probe(values: np.ndarray, brackets: list, m: int):
    """One rank's answer to a selection round (runs where the sorted chunk lives).

    For each bracket ``(L, U)`` (``None`` = unbounded): the counts ``<= L`` and
    ``< U`` and the samples strictly inside. The first item says whether the
    chunk holds a NaN (sorted last).

    >>> probe(np.array([1.0, 2.0, 2.0, 5.0]), [(None, None), (1.0, 5.0)], 8)[1][1]
    (1, 3, array([2., 2.]))

    ``values`` may be a device chunk: the searches run in its namespace, and only the
    answer (two counts and at most ``m`` samples per bracket, which the driver's next
    round is chosen from) is copied to host, explicitly.
    """
    xp = _xp.namespace_of(values)
    has_nan = values.size > 0 and values.dtype.kind == "f" and bool(xp.isnan(values[-1]))
    answers = []
    for low, high in brackets:
        lo = 0 if low is None else _count(xp, values, low, "right")
        hi = values.size if high is None else _count(xp, values, high, "left")
        picked = values[xp.asarray(lo + _offsets(hi - lo, m))]
        answers.append((lo, hi, np.array(_xp.to_host(picked))))  # small: to the driver
    return has_nan, answers


def _count(xp, values, bound, side: str) -> int:
    """How many of the sorted ``values`` are before ``bound`` (``side`` of numpy's search)."""
    return int(xp.searchsorted(values, xp.asarray(bound, dtype=values.dtype), side=side))


def _narrow(samples: list[np.ndarray], counts: list[int], k: int, m: int):
    """The tightest ``(L, U)`` among the samples that still hold the value of rank ``k``.

    ``samples[r]`` are rank ``r``'s sorted samples of its ``counts[r]`` values
    inside the current bracket, ``k`` the rank inside the bracket. ``L`` is the
    largest sample with surely at most ``k`` values ``<=`` it, ``U`` the smallest
    with surely more than ``k``; either is None if no sample qualifies.
    """
    candidates = np.unique(np.concatenate(samples))
    lower = np.zeros(candidates.size, dtype=np.int64)
    upper = np.zeros(candidates.size, dtype=np.int64)
    for values, count in zip(samples, counts, strict=True):
        if count == 0:
            continue
        pos = _offsets(count, m)
        j = np.searchsorted(values, candidates, side="right") - 1
        lower += np.where(j >= 0, pos[np.maximum(j, 0)] + 1, 0)
        upper += np.where(j + 1 < pos.size, pos[np.minimum(j + 1, pos.size - 1)], count)
    below = candidates[upper <= k]
    above = candidates[lower >= k + 1]
    return (below[-1] if below.size else None), (above[0] if above.size else None)


def select(ranks: list[int], ask, m: int, nan_stops: bool = True):
    """The values at the global sorted positions ``ranks``, asking the ranks in rounds.

    ``ask(brackets)`` returns every rank's :func:`probe` answer. Returns
    ``(values, has_nan, stats)``; ``values`` is a dict from position to value
    (empty if a NaN was found and ``nan_stops``). With ``nan_stops=False`` NaNs
    are the largest values, as in numpy's sort and searchsorted: positions below
    the number of values that are not NaN give those values.
    """
    brackets = {k: (None, None) for k in ranks}
    found: dict = {}
    stats = {"rounds": 0, "values": 0, "counts": 0}
    while len(found) < len(brackets):
        open_ = list(dict.fromkeys(brackets[k] for k in brackets if k not in found))
        replies = ask(open_)
        stats["rounds"] += 1
        if nan_stops and any(has_nan for has_nan, _ in replies):
            return {}, True, stats
        for b, (low, high) in enumerate(open_):
            answers = [answer[b] for _, answer in replies]
            stats["values"] += sum(vals.size for _, _, vals in answers)
            stats["counts"] += 2 * len(answers)
            at_most_low = sum(lo for lo, _, _ in answers)
            below_high = sum(hi for _, hi, _ in answers)
            counts = [hi - lo for lo, hi, _ in answers]
            samples = [vals for _, _, vals in answers]
            for k in (k for k in brackets if k not in found and brackets[k] == (low, high)):
                inner = k - at_most_low
                if k >= below_high:
                    found[k] = high
                elif all(c <= m for c in counts):
                    found[k] = np.sort(np.concatenate(samples))[inner]
                else:
                    new_low, new_high = _narrow(samples, counts, inner, m)
                    brackets[k] = (
                        low if new_low is None else new_low,
                        high if new_high is None else new_high,
                    )
    return found, False, stats


def _sorted_values(chunk):
    return _xp.namespace_of(chunk).sort(chunk.reshape(-1))


def _sorted_per_rank(a: _dndarray.DNDarray) -> _dndarray.DNDarray:
    """A 1-D DNDarray whose chunk ``r`` is rank ``r``'s values, sorted (lazy)."""
    x = a.to_dask()
    counts = a.counts_displs()[0]
    inner = int(np.prod([s for ax, s in enumerate(a.shape) if ax != a.split], dtype=np.int64))
    name = f"sorted-values-{tokenize(x.name)}"
    dsk = {
        (name, r): (_sorted_values, (x.name, *block_index(a.split, a.ndim, r)))
        for r in range(a.comm.size)
    }
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[x])
    chunks = (tuple(c * inner for c in counts),)
    y = new_array(graph, name, chunks, meta_of(a.dtype, 1, like=x))
    return _dndarray.from_dask(y, 0, a.comm, parents=(a,))


def valid_count(values) -> int:
    """How many of the sorted ``values`` are not NaN (NaNs sort last).

    >>> valid_count(np.array([1.0, 2.0, np.nan]))
    2
    """
    if values.dtype.kind != "f" or values.size == 0:
        return int(values.size)
    xp = _xp.namespace_of(values)
    return int(xp.searchsorted(values, xp.asarray(np.nan, dtype=values.dtype), side="left"))


def order_statistics(a: _dndarray.DNDarray, positions, *, skip_nan: bool = False):
    """Values of ``a`` (flattened) at the sorted ``positions``, without gathering ``a``.

    Each rank's sorted chunk is persisted on its worker; the rounds of
    :func:`select` run as one small task per rank. Returns ``(values, has_nan)``.

    With ``skip_nan``, ``positions`` is a function of the number ``n`` of values
    that are not NaN (each rank counts its own in one task first), NaNs are
    left out as numpy's ``nan*`` functions leave them out, and the result is
    ``(values, n)`` (no values if ``n`` is 0).
    """
    sorted_ = _sorted_per_rank(a).persist(wait=True)
    by_key = {f.key: f for f in distributed.futures_of(sorted_.to_dask())}
    futures = [by_key[key] for key in sorted_._chunk_keys()]
    client, workers, m = a.comm.client, a.comm.workers, max(int(_SAMPLES), 2)
    n_valid = None
    if skip_nan:
        counts = [
            client.submit(valid_count, f, workers=[w], allow_other_workers=False, pure=False)
            for f, w in zip(futures, workers, strict=True)
        ]
        n_valid = int(sum(client.gather(counts)))
        if n_valid == 0:
            return {}, 0
        positions = positions(n_valid)

    def ask(brackets):
        calls = [
            client.submit(probe, f, brackets, m, workers=[w], allow_other_workers=False, pure=False)
            for f, w in zip(futures, workers, strict=True)
        ]
        return client.gather(calls)

    wanted = sorted({int(p) for p in np.ravel(positions)})
    found, has_nan, stats = select(wanted, ask, m, nan_stops=not skip_nan)
    stats["bytes"] = stats["values"] * a.dtype.itemsize + stats["counts"] * 8
    last_selection.clear()
    last_selection.update(stats, ranks=a.comm.size, samples=m)
    return (found, n_valid) if skip_nan else (found, has_nan)


def pick(found: dict, positions: np.ndarray, dtype) -> np.ndarray:
    flat = [found.get(int(p), 0) for p in np.ravel(positions)]
    return np.asarray(flat, dtype=dtype).reshape(np.shape(positions))
