"""Per-rank (SPMD) work: run a function on every rank's worker and join the results.

Results stay in the memory of the worker that made them; only their shapes
and dtypes report back to the driver, fetched together with the wait for the
results (:func:`_described`), so an ``is_split`` join afterwards needs no
round trip to the workers: a piece that already is a numpy array becomes the
chunk as it is, and any other piece is converted by a task submitted without
waiting.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence

import dask.array as da
import distributed
import numpy as np
from dask.highlevelgraph import HighLevelGraph

from . import _comm, _compute, _distribution, _dndarray, _layout, _recovery, _worker_logs, _xp
from ._compat import new_array
from ._graph import block_index, chunk_meta
from ._torch import as_numpy_chunk, to_torch

# scatters to a rank whose worker left the scheduler between the lookup of its
# address and the scatter (each try looks the address up again)
_SCATTER_TRIES = 3


class PerRank:
    """One result per rank, each held by its rank's worker (from :func:`per_rank`).

    Pass it to ``ht.array(result, is_split=axis)`` to join array results into
    a DNDarray without moving them, or call :meth:`gather` to fetch them.
    """

    def __init__(
        self,
        futures: Sequence[distributed.Future],
        comm: _comm.Comm,
        metas: Sequence | None = None,
    ):
        if len(futures) != comm.size:
            raise ValueError(f"`futures` must number {comm.size}, got {len(futures)}")
        if metas is not None and len(metas) != comm.size:
            raise ValueError(f"`metas` must number {comm.size}, got {len(metas)}")
        self._futures = tuple(futures)
        self._comm = comm
        # per rank: (shape, dtype, is already a numpy array) of the result as a chunk,
        # or the TypeError saying why it is none (see ``_describe``); None: not known
        self._metas = None if metas is None else tuple(metas)

    @property
    def comm(self) -> _comm.Comm:
        """The ranks the results live on."""
        return self._comm

    @property
    def futures(self) -> tuple[distributed.Future, ...]:
        """The result of rank ``r`` as a future held by ``comm.workers[r]``."""
        return self._futures

    def __len__(self) -> int:
        return len(self._futures)

    def __getitem__(self, rank: int) -> distributed.Future:
        return self._futures[rank]

    def gather(self) -> list:
        """All results, moved to the driver."""
        return self._comm.client.gather(list(self._futures))

    def __repr__(self) -> str:
        return f"PerRank(size={self._comm.size})"


def _call(fn: Callable, rank: int, args: tuple, kwargs: dict):
    with _comm.acting_as(rank):
        return fn(rank, *args, **kwargs)


def _rank_error(exc: BaseException, rank: int, what: str) -> BaseException:
    message = f"{what} failed on rank {rank}: {type(exc).__name__}: {exc}"
    try:
        new = type(exc)(message)
    except Exception:  # exception types with unusual constructors
        new = RuntimeError(message)
    new.__cause__ = exc
    return new


def _raise_errors(futures: Sequence[distributed.Future], what: str, comm: _comm.Comm) -> None:
    """Wait for one future per rank; raise the first error, naming its rank (or a lost one)."""
    client = futures[0].client if futures else comm.client  # not a new one after a shutdown
    with _recovery.lost_data_explained(client, {}, comm):
        _compute.wait(list(futures))
        for rank, future in enumerate(futures):
            if future.status == "error":
                raise _rank_error(future.exception(), rank, what)
            if future.status == "cancelled":
                future.result()  # raises; the guard words it (a shut-down cluster, say)


def _submit_each(
    comm: _comm.Comm,
    fn: Callable,
    inputs: Sequence,
    prefix: str,
    what: str,
    *extra,
    wait: bool = True,
):
    """Run ``fn(inputs[r], r, *extra)`` on rank ``r``'s worker for each input; wait; re-raise.

    The tasks are pinned to their worker, so results stay where they are made.
    With ``wait=False`` the futures come back at once (the caller waits).
    """
    client = comm.client
    _recovery.ensure_keeper(client)  # a lost rank fails its tasks instead of hanging them
    _worker_logs.quiet_user_errors(client)  # their errors are raised here, not logged there
    token = uuid.uuid4().hex[:12]
    futures = [
        client.submit(
            fn,
            item,
            rank,
            *extra,
            key=f"{prefix}-{token}-{rank}",
            workers=[comm.workers[rank]],
            allow_other_workers=False,
            pure=False,
        )
        for rank, item in enumerate(inputs)
    ]
    if wait:
        _raise_errors(futures, what, comm)
    return futures


def per_rank(fn: Callable, *args, comm: _comm.Comm | None = None, **kwargs) -> PerRank:
    """Call ``fn(rank, *args, **kwargs)`` on the worker of every rank; results stay there.

    Inside ``fn``, ``comm.rank`` reports the executing rank. An exception on
    any rank is re-raised in the driver, naming the rank.

    Examples
    --------
    >>> import dndask as ht, numpy as np
    >>> comm = ht.get_comm().subcomm([0, 1, 2])
    >>> pieces = ht.per_rank(lambda rank: np.full((2, 3), rank), comm=comm)
    >>> ht.array(pieces, is_split=0).shape
    (6, 3)
    """
    if not callable(fn):
        raise TypeError(f"`fn` must be callable, got {type(fn).__name__}")
    comm = _comm.sanitize_comm(comm)
    name = getattr(fn, "__name__", "fn")
    what = f"per_rank function {name!r}"
    futures, metas = _described(
        comm, _call, [fn] * comm.size, f"per-rank-{name}", what, args, kwargs
    )
    return PerRank(futures, comm, metas)


def _to_chunk(value, rank: int) -> np.ndarray:
    """A piece as a chunk: device arrays (CuPy) are kept as they are, the rest made numpy."""
    if _xp.device_of(value).device_type != "cpu":
        return value
    try:
        chunk = as_numpy_chunk(value)
    except Exception as exc:
        raise TypeError(
            f"the piece of rank {rank} must be array-like, got {type(value).__name__}"
        ) from exc
    if chunk.dtype.kind not in "biufc":
        raise TypeError(
            f"the piece of rank {rank} must be boolean or numeric, got {type(value).__name__} "
            f"of dtype {chunk.dtype}"
        )
    return chunk


def _describe(value, rank: int):
    """``value`` as rank ``rank``'s chunk, or the error: ``(shape, dtype, native, device)``.

    ``native`` says whether ``value`` is that chunk already (no conversion task needed).

    Runs on the worker holding ``value``; an error is returned, not raised, since
    a per-rank result need not be an array unless it is joined.
    """
    try:
        chunk = _to_chunk(value, rank)
    except TypeError as exc:
        return exc
    return tuple(int(s) for s in chunk.shape), chunk.dtype.str, chunk is value, _device_of(chunk)


def _device_of(chunk) -> str:
    return str(_xp.device_of(chunk))


def _described(comm: _comm.Comm, fn: Callable, inputs: Sequence, prefix: str, what: str, *extra):
    """:func:`_submit_each` and the :func:`_describe` of each result, in one wait.

    The descriptions depend on the results, so gathering them waits for the
    results too: one call into the client and one request to the scheduler.
    A failed rank is re-raised naming it, as :func:`_raise_errors` does.
    """
    futures = _submit_each(comm, fn, inputs, prefix, what, *extra, wait=False)
    described = _submit_each(comm, _describe, futures, "describe", what, wait=False)
    client = comm.client
    try:
        with _recovery.lost_data_explained(client, {}, comm):
            metas = _compute.fetch(client, described)
    except Exception:
        _raise_errors(futures, what, comm)  # a failed rank: its error, naming it
        raise
    return futures, metas


def _check_pieces(metas, axis, name: str) -> tuple[tuple[int, ...], np.dtype, int | None]:
    """Validate per-rank (shape, dtype, device); return the global shape, dtype and axis."""
    shape0, dtype0, device0 = metas[0]
    ndim = len(shape0)
    for rank, (shape, _, device) in enumerate(metas):
        if device != device0:
            raise ValueError(
                f"`{name}` pieces must be on one device: rank 0 has {device0}, "
                f"rank {rank} has {device}"
            )
        if len(shape) != ndim:
            raise ValueError(
                f"`{name}` pieces must have the same ndim: rank 0 has {ndim}, "
                f"rank {rank} has {len(shape)}"
            )
    axis = _layout.normalize_axis(axis, ndim, name)
    for rank, (shape, dtype, _) in enumerate(metas):
        for a in range(ndim):
            if a != axis and shape[a] != shape0[a]:
                raise ValueError(
                    f"`{name}` pieces must agree off axis {axis}: rank 0 has shape {shape0}, "
                    f"rank {rank} has {shape}"
                )
        if np.dtype(dtype) != np.dtype(dtype0):
            raise ValueError(
                f"`{name}` pieces must share a dtype: rank 0 has {np.dtype(dtype0)}, "
                f"rank {rank} has {np.dtype(dtype)}"
            )
    if axis is None:
        return shape0, np.dtype(dtype0), None
    gshape = list(shape0)
    gshape[axis] = sum(m[0][axis] for m in metas)
    return tuple(gshape), np.dtype(dtype0), axis


def join(futures: Sequence[distributed.Future], axis, comm: _comm.Comm, name: str, metas: Sequence):
    """Join per-rank results along ``axis``, given their :func:`_describe` ``metas``.

    Nothing waits: numpy results are the chunks as they are; other array-likes
    are converted on their workers by tasks submitted here.
    """
    for rank, meta in enumerate(metas):
        if isinstance(meta, BaseException):
            raise _rank_error(meta, rank, f"`{name}`")
    shape, dtype, axis = _check_pieces([(m[0], m[1], m[3]) for m in metas], axis, name)
    if any(not native for _, _, native, _ in metas):
        futures = _submit_each(comm, _to_chunk, futures, "as-chunk", f"`{name}`", wait=False)
    if axis is None:
        futures, metas = futures[:1], metas[:1]
        counts = None
    else:
        counts = tuple(m[0][axis] for m in metas)
    # The array is persisted as it is made: chunk key r stands for the future of rank r's
    # result, held by its worker under the result's own key. No task renames it: graphs on
    # the array read the result's key directly (``_compute.direct``).
    return _wrap_futures(futures, shape, dtype, axis, counts, comm, metas[0][3])


def join_result(pieces: PerRank, axis, name: str = "is_split"):
    """``ht.array(pieces, is_split=axis)``: the results of :func:`per_rank` as a DNDarray."""
    metas = pieces._metas
    if metas is None:  # a PerRank made from futures: ask the workers
        metas = _compute.fetch(
            pieces.comm.client,
            _submit_each(
                pieces.comm, _describe, pieces.futures, "describe", f"`{name}`", wait=False
            ),
        )
    return join(pieces.futures, axis, pieces.comm, name, metas)


def _wrap_futures(chunks, shape, dtype, axis, counts, comm, device="cpu") -> _dndarray.DNDarray:
    ndim = len(shape)
    name = f"per-rank-array-{uuid.uuid4().hex}"
    dsk = {(name, *block_index(axis, ndim, r)): f for r, f in enumerate(chunks)}
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=())
    meta = _xp.meta(dtype, ndim, device)
    array = new_array(graph, name, _layout.chunks_for(shape, axis, counts), meta)
    return _dndarray.DNDarray(array, axis, comm)


def _scatter_to_ranks(pieces: Sequence[np.ndarray], comm: _comm.Comm) -> list:
    """Send piece ``r`` from the driver straight to rank ``r``'s worker, all at once.

    A worker its nanny restarted has a new address; the scheduler says which
    (one query per call, waiting for a replacement that is on its way), since
    a scatter names its workers directly. The pieces go in one turn of the
    client's event loop (one scatter per rank, none waiting for another). A
    piece whose worker left between that answer and the scatter is sent again
    to the address that serves its rank then; a rank nobody serves any more is
    a ``RuntimeError`` naming it.
    """
    client = comm.client
    workers = _recovery.serving_live(client, comm.workers)
    for rank in range(len(pieces)):  # a split=None array is one piece, rank 0's
        address, live = workers[rank]
        if not live:
            raise _recovery.lost_rank_error(rank, address)
    sent = _scatter_each(client, pieces, [workers[rank][0] for rank in range(len(pieces))])
    futures = []
    for rank, piece in enumerate(pieces):
        for _ in range(_SCATTER_TRIES):
            address = workers[rank][0]
            got = sent[rank]
            if not isinstance(got, BaseException):
                futures.append(got)
                break
            if not isinstance(got, KeyError) or got.args != (address,):
                raise got
            # the worker left after the lookup: ask again, send this piece again
            workers = _recovery.serving_live(client, comm.workers)
            address, live = workers[rank]
            if not live:
                raise _recovery.lost_rank_error(rank, address)
            sent[rank] = _scatter_each(client, [piece], [address])[0]
        else:
            raise _recovery.lost_rank_error(rank, workers[rank][0])
    return futures


def _scatter_each(client: distributed.Client, pieces: Sequence, addresses: Sequence[str]) -> list:
    """``client.scatter`` of each piece to its address, concurrently: a future, or the
    exception that piece's scatter raised."""

    async def send():
        return await asyncio.gather(
            *(
                client.scatter(piece, workers=[address], hash=False, asynchronous=True)
                for piece, address in zip(pieces, addresses, strict=True)
            ),
            return_exceptions=True,
        )

    return list(client.sync(send))


def scatter(values: np.ndarray, split: int | None, comm: _comm.Comm) -> _dndarray.DNDarray:
    """Send the driver's ``values`` to the ranks, each getting its balanced share.

    A split=None array is one chunk, sent to rank 0's worker.
    """
    shape = tuple(int(s) for s in values.shape)
    if split is None:
        pieces, counts = [values], None
    else:
        counts = _layout.balanced_counts(shape[split], comm.size)
        pieces = [values[_layout.chunk(shape, split, comm.size, r)[2]] for r in range(comm.size)]
    futures = _scatter_to_ranks(pieces, comm)
    return _wrap_futures(futures, shape, values.dtype, split, counts, comm)


def from_pieces(pieces: Sequence, axis: int, comm: _comm.Comm) -> _dndarray.DNDarray:
    """Join ``comm.size`` driver-side pieces (numpy, torch, dask, DNDarray) along ``axis``.

    Dask and DNDarray pieces stay lazy; in-memory pieces go to their rank's worker.
    """
    if len(pieces) != comm.size:
        raise ValueError(f"`is_split` needs one piece per rank: {comm.size}, got {len(pieces)}")
    lazy = [isinstance(p, (da.Array, _dndarray.DNDarray)) for p in pieces]
    if all(lazy):
        arrays = [p.to_dask() if isinstance(p, _dndarray.DNDarray) else p for p in pieces]
        metas = [(tuple(int(s) for s in a.shape), a.dtype.str, _device(a)) for a in arrays]
        shape, dtype, axis = _check_pieces(metas, axis, "is_split")
        joined = da.concatenate([a.rechunk(a.shape) for a in arrays], axis=axis)
        counts = tuple(m[0][axis] for m in metas)
        return _dndarray.DNDarray(
            _distribution.restore_empty_ranks(joined, axis, counts), axis, comm
        )
    if any(lazy):
        raise TypeError("`is_split` pieces must be all lazy (dask/DNDarray) or all in memory")
    values = [_to_chunk(p, rank) for rank, p in enumerate(pieces)]
    metas = [(v.shape, v.dtype.str, _device_of(v)) for v in values]
    shape, dtype, axis = _check_pieces(metas, axis, "is_split")
    counts = tuple(v.shape[axis] for v in values)
    futures = _scatter_to_ranks(values, comm)
    return _wrap_futures(futures, shape, dtype, axis, counts, comm, metas[0][2])


def _device(x: da.Array) -> str:
    return str(_xp.device_of(chunk_meta(x)))


def _apply_local(chunk: np.ndarray, rank: int, fn: Callable):
    """``fn(tensor, rank)`` on a chunk; the result goes back to the chunk's device.

    A device chunk reaches ``fn`` through DLPack (a CUDA tensor for CuPy); a result that
    lives there is adopted without a copy, any other is copied there explicitly.
    """
    with _comm.acting_as(rank):
        result = fn(to_torch(chunk), rank)
    device = _xp.device_of(chunk)
    if device.device_type == "cpu":
        return result
    adopted = _xp.from_dlpack(result, device)
    return adopted if adopted is not None else _xp.to_device(as_numpy_chunk(result), device)


def map_local(a: _dndarray.DNDarray, fn: Callable) -> _dndarray.DNDarray:
    """See :meth:`DNDarray.map_local`."""
    if not callable(fn):
        raise TypeError(f"`fn` must be callable, got {type(fn).__name__}")
    comm = a.comm
    chunks = a.persist(wait=True)._chunk_futures()
    what = "map_local function"
    results, metas = _described(comm, _apply_local, chunks, "map-local", what, fn)
    if a.split is None:
        sub = comm.subcomm([0])
        out = join(results, None, sub, "map_local", metas)
        return _dndarray.DNDarray(out.to_dask(), None, comm)
    return join(results, a.split, comm, "map_local", metas)
