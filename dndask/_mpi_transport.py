"""The MPI transport of a relayout: ``post``, a barrier, ``collect`` between ranks (worker side).

Under dndask's ``mpirun`` launcher every worker is an MPI rank, and the worker ranks share
a communicator split from ``COMM_WORLD`` at launch (:func:`dndask._mpi.worker_comm`). A
relayout over them has the graph of the shared-memory transport (:mod:`dndask._transport`,
``2P + 1`` tasks at most), with MPI point-to-point messages in place of files:

- :func:`post`, one task per source rank that sends something, pinned to it: it hands its
  outgoing pieces (contiguous, one copy where a piece is strided) to this worker's
  :class:`Engine` and returns at once with its generation and bytes per destination.
- :func:`dndask._transport.barrier`, one task on all posts: their generations.
- :func:`collect`, one task per destination rank, pinned to it: it posts one ``Irecv``
  per incoming piece straight into its output (into a contiguous buffer copied into place
  where the piece is strided in the output), asks each source for its piece with a small
  request message, and completes the receives.

The sends happen in the source's progress thread (:class:`Engine`, started and stopped by
the :class:`MpiProgress` worker plugin), which answers each request with an ``Isend`` of
the piece, on the tag the request names, and drives every outstanding request. So no Dask
task waits for a peer before the barrier, and a send starts only once its matching
receive is posted (a pull): a collect that never runs (culled) leaves no message in flight,
and a collect that reruns while the barrier is in memory simply asks again.

Tags: requests travel on :data:`CONTROL_TAG`; each receive gets a data tag from its own
process's :class:`TagPool`, unique among that process's outstanding receives and never
reused after a cancelled one. A message on a data tag is only ever sent in answer to the
receive that named it, so interleaved relayouts (and reruns of one) never match each
other's messages, whatever their tokens hash to. Pieces stay in :data:`OUTBOX` until the
relayout's barrier leaves memory (:class:`MpiJanitor`, as :class:`dndask._transport.ShmJanitor`
removes segments), or their post's compute was cancelled while it ran (:class:`MpiProgress`).

The barrier's value names the MPI rank that holds each source's pieces, so a post or a
collect that Dask runs off its rank still works: a collect asks the holder, and a holder
answers whichever rank asks. A rank that dies is fatal to MPI: a collect waiting for a piece
from a holder that is no longer in the cluster (or that MPI reports failed, or that answers
with nothing) raises a ``RuntimeError`` naming the dndask rank and the holder's MPI rank.

>>> pool = TagPool(1, 3)
>>> [pool.take(), pool.take()], pool.give(1), pool.take()
([1, 2], None, 3)
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Sequence

import distributed
import numpy as np
from distributed.diagnostics.plugin import WorkerPlugin

from . import _launch, _mpi, _output_cache, _transport
from ._compat import scheduler_workers

__all__ = [
    "CONTROL_TAG",
    "MARK",
    "OUTBOX",
    "Engine",
    "MpiJanitor",
    "MpiProgress",
    "TagPool",
    "collect",
    "engine",
    "ensure_mpi",
    "post",
    "release_many",
]

MARK = _transport.MPI_MARK  # the cluster tag of an MPI relayout's keys starts with it
CONTROL_TAG = 0  # requests: "<relayout>|<generation>|<destination rank>|<data tag>"
_DATA_TAGS = (1, 32767)  # every MPI library offers tags up to 32767
_CONTROL_BYTES = 512
_LIVENESS_AFTER = 2.0  # seconds a collect waits before it asks whether its sources live

# relayout id -> generation -> destination rank -> the contiguous piece; kept until swept
OUTBOX: dict[str, dict[int, dict[int, np.ndarray]]] = {}
_POSTED: dict = {}  # post key -> (relayout id, generation): the sweep of a cancelled post
_outbox_lock = threading.Lock()

log = logging.getLogger("dndask")


class TagPool:
    """Data tags in ``[low, high]`` for one process's receives.

    :meth:`take` hands out a tag no outstanding receive of the process holds; :meth:`give`
    returns one whose receive completed (its message arrived: nothing more can come on it);
    :meth:`retire` drops one whose receive was cancelled (its message may still come, so it
    is never handed out again).

    >>> pool = TagPool(5, 6)
    >>> pool.take(), pool.take()
    (5, 6)
    >>> pool.retire(5); pool.give(6); pool.take()
    6
    """

    def __init__(self, low: int, high: int) -> None:
        if not 0 <= low <= high:
            raise ValueError(f"`low` must be in [0, high], got {low} (high {high})")
        self.low, self.high = low, high
        self.next = low
        self.busy: set[int] = set()
        self.retired: set[int] = set()
        self.lock = threading.Lock()

    def take(self) -> int:
        with self.lock:
            for _ in range(self.high - self.low + 1):
                tag = self.next
                self.next = self.low if tag == self.high else tag + 1
                if tag not in self.busy and tag not in self.retired:
                    self.busy.add(tag)
                    return tag
        raise RuntimeError(f"no free MPI tag in [{self.low}, {self.high}]")

    def give(self, tag: int) -> None:
        with self.lock:
            self.busy.discard(tag)

    def retire(self, tag: int) -> None:
        with self.lock:
            self.busy.discard(tag)
            self.retired.add(tag)


def _bytes(array: np.ndarray):
    """``array`` (C-contiguous) as an MPI byte buffer."""
    from mpi4py import MPI

    return [array.reshape(-1).view(np.uint8), MPI.BYTE]


class Engine:
    """This worker rank's MPI side: the communicator, its tags and the progress thread.

    The thread answers requests for posted pieces with ``Isend`` and tests every request
    this process started (sends and abandoned receives) until it completes. Requests come
    on one receive per source rank: a receive from ``MPI_ANY_SOURCE`` misses messages from
    other nodes under MPICH's UCX netmod (docs/concepts.md, "The MPI transport"). It never
    waits on a Dask task, and no Dask task waits on it before the barrier.
    """

    def __init__(self, comm) -> None:
        from mpi4py import MPI

        self.MPI = MPI
        self.comm = comm
        comm.Set_errhandler(MPI.ERRORS_RETURN)  # a dead peer raises, it does not abort us
        self.rank = comm.Get_rank()
        tag_ub = comm.Get_attr(MPI.TAG_UB) or _DATA_TAGS[1]
        self.tags = TagPool(_DATA_TAGS[0], int(tag_ub))
        self.lock = threading.Lock()
        self.active: list = []  # (request, the buffer it uses) until complete
        # one request receive per rank of the communicator (itself included), never one
        # from MPI_ANY_SOURCE: MPICH's UCX netmod (the pip wheel's default) lets a wildcard
        # receive miss messages from other nodes, which then wait unmatched for ever
        size = comm.Get_size()
        self.control_buffers = [bytearray(_CONTROL_BYTES) for _ in range(size)]
        self.control = [self._listen(source) for source in range(size)]
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="dndask-mpi-progress", daemon=True)
        self.thread.start()

    def mpi_rank(self, worker_rank: int) -> int:
        """The communicator rank of the worker of ``COMM_WORLD`` rank ``worker_rank``."""
        return worker_rank - _launch.FIRST_WORKER_RANK

    def track(self, request, buffer) -> None:
        """Keep ``request`` (and its ``buffer`` alive) until it completes."""
        with self.lock:
            self.active.append((request, buffer))

    def _listen(self, source: int):
        """The receive of ``source``'s next request (into its own buffer)."""
        buffer = [self.control_buffers[source], self.MPI.BYTE]
        return self.comm.Irecv(buffer, source=source, tag=CONTROL_TAG)

    def ask(self, source: int, message: str) -> None:
        """Send ``message`` to ``source``'s progress thread on the control tag."""
        payload = bytearray(message.encode())
        request = self.comm.Isend([payload, self.MPI.BYTE], dest=source, tag=CONTROL_TAG)
        self.track(request, payload)

    def _serve(self, message: str, requester: int) -> None:
        relayout, generation, dst, tag = message.split("|")
        with _outbox_lock:
            piece = OUTBOX.get(relayout, {}).get(int(generation), {}).get(int(dst))
        if piece is None:  # gone (swept, or its worker restarted): an empty answer says so
            piece = np.empty(0, np.uint8)
        request = self.comm.Isend(_bytes(piece), dest=requester, tag=int(tag))
        self.track(request, piece)

    def _requests(self) -> list[tuple[int, str]]:
        """The requests that arrived, as ``(requester, message)``; their receives posted anew."""
        statuses = [self.MPI.Status() for _ in self.control]
        try:
            arrived = self.MPI.Request.Testsome(self.control, statuses) or []
            done = [(source, statuses[k]) for k, source in enumerate(arrived)]  # in that order
        except self.MPI.Exception:  # a source failed: test each, stop listening to the failed
            done = []
            for source, request in enumerate(self.control):
                status = self.MPI.Status()
                try:
                    if request.Test(status):
                        done.append((source, status))
                except self.MPI.Exception as exc:
                    log.warning("dndask: MPI rank %d stopped answering (%s)", source, exc)
                    self.control[source] = self.MPI.Request()  # null: never tested again
        out = []
        for source, status in done:
            count = status.Get_count(self.MPI.BYTE)
            out.append((source, bytes(self.control_buffers[source][:count]).decode()))
            self.control[source] = self._listen(source)
        return out

    def step(self) -> bool:
        """One turn of the progress loop; whether anything happened."""
        did = False
        while requests := self._requests():
            for requester, message in requests:
                try:
                    self._serve(message, requester)
                except Exception:  # a malformed request must not stop the thread
                    log.exception("dndask: MPI transport could not serve %r", message)
            did = True
        with self.lock:
            active = self.active
        if active:
            requests = [r for r, _ in active]
            done = self.MPI.Request.Testsome(requests)
            if done:
                finished = {id(requests[i]) for i in done}
                with self.lock:
                    self.active = [a for a in self.active if id(a[0]) not in finished]
                did = True
        return did

    def _run(self) -> None:
        pause = 0.0
        while not self.stopping.is_set():
            try:
                busy = self.step()
            except Exception:  # MPI failed under us (a dead peer): keep the worker alive
                log.exception("dndask: MPI transport's progress thread")
                busy = False
                pause = 0.05
            pause = 0.0 if busy else min(max(pause * 2, 2e-5), 1e-3)
            time.sleep(pause)

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(timeout=5)
        for request in self.control:
            with contextlib.suppress(Exception):
                request.Cancel()


_engine: Engine | None = None
_engine_lock = threading.Lock()


def engine() -> Engine:
    """This worker rank's :class:`Engine` (started by :class:`MpiProgress`)."""
    global _engine
    with _engine_lock:
        if _engine is None:
            comm = _mpi.worker_comm()
            if comm is None:
                raise RuntimeError(
                    "the MPI transport runs only on the worker ranks of dndask's mpirun launch"
                )
            _engine = Engine(comm)
        return _engine


def _stop_engine() -> None:
    global _engine
    with _engine_lock:
        if _engine is not None:
            _engine.stop()
            _engine = None


def _lost(rank: int, holder: int, why: str) -> RuntimeError:
    return RuntimeError(
        f"rank {rank} of an MPI relayout (its pieces on MPI rank {holder}) is lost: {why}. "
        "MPI cannot bring a dead rank back; restart the job (or relayout with method='tasks')"
    )


def post(chunk: np.ndarray, relayout: str, src: int, outgoing: Sequence) -> tuple:
    """Hand ``chunk[index]`` for each ``(dst, index)`` of ``outgoing`` to this rank's engine.

    ``relayout`` is the relayout's id. Returns ``(src, (MPI rank, generation), {dst: bytes})``
    at once: the pieces wait on this MPI rank until their collects ask for them. Wherever
    Dask runs the post (its own rank, or another after a lost worker), the collects ask
    the rank that holds the pieces.
    """
    rid = relayout
    eng = engine()
    generation = time.time_ns()
    pieces: dict[int, np.ndarray] = {}
    sent: dict[int, int] = {}
    for dst, index in outgoing:
        piece = chunk if index is None else chunk[index]
        sent[dst] = int(piece.nbytes)
        if piece.nbytes:
            pieces[dst] = np.ascontiguousarray(piece)
    with _outbox_lock:
        OUTBOX.setdefault(rid, {})[generation] = pieces
    key = _transport._running_key()
    if key is not None:
        _POSTED[key] = (rid, generation)
    return src, (eng.rank + _launch.FIRST_WORKER_RANK, generation), sent


def _live_ranks() -> set | None:
    """The names (MPI ranks) of the workers the scheduler knows now, or None if it can't say."""
    try:
        client = distributed.get_client()
        return {info.get("name") for info in scheduler_workers(client).values()}
    except Exception:
        return None


def collect(generations, kept: Sequence, spec: Sequence, lshape, dtype, axis: int, relayout):
    """Rank ``dst``'s output chunk: each piece of ``spec`` received once into place along ``axis``.

    ``spec`` entries, in order along ``axis``: ``("kept", i, index, rows)`` (a slice of
    ``kept[i]``, a source chunk of this rank: no message), or ``("mpi", src, dst, shape)``
    (the piece ``src`` posted for ``dst``). ``generations`` is the barrier's value: the
    MPI rank holding each source's pieces and their generation. The collect may run on
    any worker rank: each source answers whichever rank asks.
    """
    rid = relayout
    out = _output_cache.empty(tuple(lshape), dtype)  # memory this process used before, if any
    dtype = out.dtype
    at = 0
    incoming: list[tuple[int, int, np.ndarray, tuple, np.ndarray]] = []
    for entry in spec:
        if entry[0] == "kept":
            _, i, index, rows = entry
        else:
            _, src, dst, shape = entry
            rows = shape[axis]
        where = tuple(slice(at, at + rows) if a == axis else slice(None) for a in range(out.ndim))
        at += rows
        if entry[0] == "kept":
            out[where] = kept[i] if index is None else kept[i][index]
        elif int(np.prod(shape)):
            view = out[where]
            buffer = view if view.flags.c_contiguous else np.empty(shape, dtype)
            incoming.append((src, dst, buffer, where, view))
    if not incoming:
        return out
    eng = engine()
    mpi = eng.MPI
    pending = []
    for src, dst, buffer, _, view in incoming:
        holder, generation = generations[src]
        tag = eng.tags.take()
        source = eng.mpi_rank(holder)
        request = eng.comm.Irecv(_bytes(buffer), source=source, tag=tag)
        pending.append((request, tag, src, buffer, view))
        try:
            eng.ask(source, f"{rid}|{generation}|{dst}|{tag}")
        except mpi.Exception as exc:
            _abandon(eng, pending)
            raise _lost(src, holder, f"MPI could not reach it ({exc})") from exc
    received = 0
    started = checked = time.monotonic()
    pause = 0.0
    try:
        while pending:
            status = mpi.Status()
            left = []
            failed = None
            for item in pending:
                request, tag, src, buffer, view = item
                try:
                    done = request.Test(status)
                except mpi.Exception as exc:
                    holder = generations[src][0]
                    failed = _lost(src, holder, f"MPI failed to receive from it ({exc})")
                    left.append(item)
                    continue
                if not done:
                    left.append(item)
                    continue
                eng.tags.give(tag)
                if status.Get_count(mpi.BYTE) != buffer.nbytes:
                    holder = generations[src][0]
                    raise _lost(src, holder, "its posted pieces are gone (its worker restarted)")
                if buffer is not view:
                    view[...] = buffer
                received += buffer.nbytes
            pause = 0.0 if len(left) < len(pending) else min(max(pause * 2, 2e-5), 1e-3)
            pending = left
            now = time.monotonic()
            if failed is not None:
                raise failed
            if pending and now - started > _LIVENESS_AFTER and now - checked > 1.0:
                checked = now
                live = _live_ranks()
                for _, _, src, _, _ in pending:
                    holder = generations[src][0]
                    if live is not None and holder not in live:
                        why = "its worker left the cluster during the relayout"
                        raise _lost(src, holder, why)
            if pending:
                time.sleep(pause)
    except BaseException:
        _abandon(eng, pending)
        raise
    if received:
        _transport.RECEIVED.append({"start": time.time(), "total": received, "key": rid})
    return out


def _abandon(eng: Engine, pending: list) -> None:
    """Cancel the receives of ``pending``; their buffers stay alive until MPI lets go."""
    for request, tag, _, buffer, _ in pending:
        with contextlib.suppress(Exception):
            request.Cancel()
        eng.tags.retire(tag)
        eng.track(request, buffer)


# --------------------------------------------------------------------- cleanup
def release(tag: str, token: str, older_than: int | None = None) -> int:
    """Drop the posted pieces of relayout ``tag-token`` (generations before ``older_than``)."""
    rid = f"{tag}-{token}"
    with _outbox_lock:
        generations = OUTBOX.get(rid, {})
        gone = [g for g in generations if older_than is None or g < older_than]
        for g in gone:
            del generations[g]
        if not generations:
            OUTBOX.pop(rid, None)
    return len(gone)


def release_many(sweeps: Sequence[tuple[str, str, int]]) -> int:
    """:func:`release` for each ``(tag, token, older_than)``; how many posts' pieces went."""
    return sum(release(*sweep) for sweep in sweeps)


class MpiJanitor(_transport.ShmJanitor):
    """Scheduler plugin: drops an MPI relayout's posted pieces once no collect can need them.

    The rule of :class:`dndask._transport.ShmJanitor` (the barrier left memory, or the
    relayout failed, or its posts were released without a barrier), sent to every worker:
    the pieces are on each source rank, not in one host's ``/dev/shm``.
    """

    name = "dndask-mpi-janitor"
    everywhere = True
    sweep_function = staticmethod(release_many)

    def owns(self, tag: str) -> bool:
        return tag.startswith(MARK)


class MpiProgress(WorkerPlugin):
    """Worker plugin: owns this worker rank's :class:`Engine` (its progress thread).

    Also drops the pieces of a post that ended after its compute was cancelled (the
    scheduler never hears of them; see :class:`dndask._transport.ShmPostSweeper`).
    """

    name = "dndask-mpi-progress"
    idempotent = True

    def setup(self, worker) -> None:
        if _mpi.worker_comm() is not None:
            engine()

    def teardown(self, worker) -> None:
        _stop_engine()

    def transition(self, key, start, finish, **kwargs) -> None:
        if finish not in ("memory", "error") or key not in _POSTED:
            return
        rid, generation = _POSTED.pop(key)
        if start == "cancelled" and finish == "memory":
            with _outbox_lock:
                OUTBOX.get(rid, {}).pop(generation, None)


_lock = threading.Lock()
_installed: set[str] = set()


def ensure_mpi(client: distributed.Client) -> None:
    """Install :class:`MpiJanitor` and :class:`MpiProgress` on ``client``'s cluster (once)."""
    with _lock:
        if client.id in _installed:
            return
        _installed.add(client.id)
    client.register_plugin(MpiJanitor())
    client.register_plugin(MpiProgress())
