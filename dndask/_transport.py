"""The shared-memory transport of a relayout: ``post``, one barrier, ``collect`` (worker side).

A relayout whose ranks all share one host (one kernel, one ``/dev/shm``) moves its pieces
through files in ``/dev/shm`` instead of Dask's sockets. Its graph (built in
:mod:`dndask._distribution`) has ``2P + 1`` tasks at most:

- :func:`post`, one task per source rank that sends something, pinned to it: it writes
  each outgoing piece once, into a segment of its process's pool where they fit
  (:mod:`dndask._shm_pool`: pages that are already there), else into a file of its own,
  and returns metadata (where it wrote, and bytes per destination). It never waits for
  a peer.
- :func:`barrier`, one task on all posts: where each wrote, by source rank.
- :func:`collect`, one task per destination rank (its output chunk), pinned to it: where
  its pieces lie one after another in the output's memory (stacked along its first axis)
  it maps each incoming segment's pages straight into the output, copy-on-write, with no
  copy at all (:func:`mapped_output`); otherwise, and always for pool segments (which
  later posts reuse), it copies each piece once into place, in an output on memory the
  process used before where its cache has some (:mod:`dndask._output_cache`). The pieces
  it keeps (source rank = its rank) come by reference to the source chunk, never through
  a file. In a steady run of relayouts (:class:`dndask._distribution.SteadyRuns`), outputs
  up to :func:`copy_limit` bytes are copied: their pieces and the outputs then reuse
  memory, where a mapped output is new memory each time (docs/concepts.md has the numbers).

A segment is ``/dev/shm/dndask-<tag>-<token>-<src>-<dst>-<generation>``: ``tag`` names
the cluster's client (:func:`cluster_tag`), ``token`` the relayout, ``generation`` the
post run (a rerun writes new files, it never overwrites the ones a collect may be
reading). A collect does not unlink: a collect that reruns (its output lost with a
worker) while the barrier is still in memory must find its segments again. The segments
of a relayout are removed by :class:`ShmJanitor` (a scheduler plugin) once its barrier
leaves memory, which the scheduler does only when no collect waits for it any more, or
errs (at that moment a pool segment is given back to its pool instead); and, whatever
is left (a post that was killed mid-write, a cancelled compute), by
:func:`remove_segments` when dndask shuts its cluster down. See docs/concepts.md for
why this never deadlocks.

Every key of the transport's control tasks starts with :data:`POST_PREFIX` or
:data:`BARRIER_PREFIX`; :func:`is_control` tells them apart from the keys of data.

>>> is_control(("relayout-post-ab12-cd34", 0)), is_control(("relayout-cd34", 0, 0))
(True, False)
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import errno
import glob
import logging
import mmap
import os
import sys
import threading
import time
import weakref
from collections.abc import Sequence
from typing import NamedTuple

import distributed
import numpy as np
from dask.base import tokenize
from distributed.diagnostics.plugin import SchedulerPlugin, WorkerPlugin
from distributed.protocol.pickle import dumps
from tornado.ioloop import PeriodicCallback

from . import _output_cache, _shm_pool
from ._hosts import SHM_DIR

__all__ = [
    "BARRIER_PREFIX",
    "COPIED",
    "MAP_MIN",
    "MPI_MARK",
    "PAGE",
    "POST_PREFIX",
    "Posted",
    "RECEIVED",
    "SEGMENT_PREFIX",
    "ShmJanitor",
    "ShmPostSweeper",
    "WRITTEN",
    "barrier",
    "cluster_tag",
    "collect",
    "ensure_janitor",
    "file_sources",
    "free_bytes",
    "is_control",
    "mapped_output",
    "post",
    "process_tag",
    "remove_many",
    "remove_segments",
    "runs",
    "segments",
    "vectored",
]

SEGMENT_PREFIX = "dndask-"  # every file the transport writes in /dev/shm starts with it
POST_PREFIX = "relayout-post-"  # key names: relayout-post-<tag>-<token>, one key per rank
BARRIER_PREFIX = "relayout-barrier-"  # key: relayout-barrier-<tag>-<token>
_CONTROL = (POST_PREFIX, BARRIER_PREFIX)
_WANTED = frozenset({"waiting", "queued", "processing", "no-worker", "memory"})  # scheduler states
_GONE = frozenset({"released", "forgotten", "erred"})
MPI_MARK = "mpi"  # the tag of an MPI relayout's keys starts with it (dndask._mpi_transport)

# The segments each post this worker process ran last wrote, by the post's key: kept until
# the worker's state machine has seen the post finish (:class:`ShmPostSweeper`).
WRITTEN: dict = {}

# Incoming transport bytes this process received (its collects), as Dask's
# ``transfer_incoming_log`` records socket transfers: what tests and benchmarks count.
RECEIVED: collections.deque = collections.deque(maxlen=100_000)

log = logging.getLogger("dndask")


def is_control(key) -> bool:
    """Whether ``key`` is a transport control task (a post or a barrier: metadata only)."""
    name = key[0] if isinstance(key, tuple) else key
    return isinstance(name, str) and name.startswith(_CONTROL)


def process_tag() -> str:
    """The start of every :func:`cluster_tag` this (driver) process makes: its pid."""
    return f"{os.getpid()}x"


def cluster_tag(client: distributed.Client) -> str:
    """The tag of ``client``'s segments: the driver's pid and 8 hex digits of the client's id.

    Stable while the client lives; tests check that no segment of their process is left.

    >>> import types
    >>> cluster_tag(types.SimpleNamespace(id="Client-1")).startswith(process_tag())
    True
    """
    return f"{process_tag()}{tokenize(client.id)[:8]}"


def _path(base: str, src: int, dst: int, generation: int) -> str:
    return f"{base}-{src}-{dst}-{generation}"


def segment_base(tag: str, token: str) -> str:
    """The path every segment of relayout ``token`` starts with."""
    return os.path.join(SHM_DIR, f"{SEGMENT_PREFIX}{tag}-{token}")


def segments(tag: str = "", token: str = "") -> list[str]:
    """The relayouts' files in ``/dev/shm`` (of tags starting ``tag``, of relayout ``token``).

    Not the posts' reusable segments (:func:`dndask._shm_pool.pool_files`).
    """
    pattern = f"{SEGMENT_PREFIX}{tag}-{token}-*" if token else f"{SEGMENT_PREFIX}{tag}*"
    return sorted(
        p for p in glob.glob(os.path.join(SHM_DIR, pattern)) if not _shm_pool.is_pool_file(p)
    )


def remove_segments(tag: str = "", token: str = "", older_than: int | None = None) -> int:
    """Unlink the segments of ``tag`` (and ``token``); returns how many went.

    ``older_than`` (``time.time_ns()``) keeps the segments of a later post run: a rerun
    that started after the barrier left memory. Without ``token`` (the cluster's
    shutdown), the pools' segments of ``tag`` go too.
    """
    removed = 0
    paths = segments(tag, token)
    if not token and older_than is None:
        paths += _shm_pool.pool_files(tag)
    for path in paths:
        if older_than is not None:
            try:
                if int(path.rsplit("-", 1)[1]) >= older_than:
                    continue
            except ValueError:
                pass
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
            removed += 1
    return removed


def free_bytes() -> int:
    """Bytes free for unprivileged writers in ``/dev/shm`` (0 where there is none)."""
    try:
        st = os.statvfs(SHM_DIR)
    except OSError:
        return 0
    return st.f_bavail * st.f_frsize


# ------------------------------------------------------------ the tasks (worker side)
# Map the pages in one call rather than one fault per page (Linux; elsewhere plain shared).
_SHARED_POPULATED = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)

# A post writes each piece with pwritev, one iovec per contiguous run of the piece's bytes,
# straight from the (strided) source chunk: the kernel copies, no mapping is made, and a
# fresh tmpfs page is never zeroed before it is written (a mapping's page faults zero it):
# 43-46 % less time than mapping the file and copying into it (docs/performance.md).
# Runs shorter than MIN_RUN bytes (thin columns, chunks in Fortran order) go through a
# mapping and numpy's strided copy instead. A collect reads through a mapping: measured,
# preadv into the output was slower than mapping the (already written) pages and copying.
MIN_RUN = 1024  # bytes: pwritev was slower than the mapping below about 512 (measured)


def _libc_call(name: str):
    """``name`` from the C library as a ctypes function ``(fd, iov, count, offset)``, else None."""
    if ctypes.sizeof(ctypes.c_void_p) != 8 or ctypes.sizeof(ctypes.c_size_t) != 8:
        return None  # the iovec arrays below are pairs of 64-bit words
    try:
        fn = getattr(ctypes.CDLL(None, use_errno=True), name)
    except (AttributeError, OSError, TypeError):  # TypeError: no C library by that name
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_int64]
    fn.restype = ctypes.c_ssize_t
    return fn


_PWRITEV = _libc_call("pwritev")
try:
    _IOV_MAX = os.sysconf("SC_IOV_MAX")
except (AttributeError, ValueError, OSError):
    _IOV_MAX = 16
_IOV_MAX = min(_IOV_MAX, 1024) if _IOV_MAX > 0 else 16  # runs per call


def runs(a: np.ndarray) -> np.ndarray | None:
    """``(address, bytes)`` of each contiguous run of ``a``'s elements, in C order, as uint64.

    ``None`` when the runs are shorter than :data:`MIN_RUN` bytes (and there is more
    than one). The addresses are only valid while ``a`` lives.

    >>> a = np.zeros((4, 300))
    >>> r = runs(a[:, :150])
    >>> r.shape, r[:, 1].tolist(), int(r[1, 0] - r[0, 0])
    ((4, 2), [1200, 1200, 1200, 1200], 2400)
    >>> runs(a[:, :2]) is None, len(runs(a))
    (True, 1)
    """
    shape, strides = a.shape, a.strides
    k, run = a.ndim, a.itemsize  # axes k.. form one contiguous block of ``run`` bytes
    while k > 0 and (shape[k - 1] == 1 or strides[k - 1] == run):
        k -= 1
        run *= shape[k]
    count = int(np.prod(shape[:k]))
    if a.size == 0:
        return np.empty((0, 2), np.uint64)
    if count > 1 and run < MIN_RUN:
        return None
    offsets = np.zeros(1, np.int64)
    for axis in range(k):
        step = np.arange(shape[axis], dtype=np.int64) * strides[axis]
        offsets = (offsets[:, None] + step).ravel()
    iov = np.empty((count, 2), np.uint64)
    iov[:, 0] = offsets + a.ctypes.data
    iov[:, 1] = run
    return iov


def vectored(fn, fd: int, iov: np.ndarray, offset: int = 0, batch: int = _IOV_MAX) -> int:
    """Run ``fn`` (C's ``pwritev`` or ``preadv``) on the runs of ``iov`` from file ``offset``.

    At most ``batch`` runs a call; a call that moves less than it was asked (a signal, the
    kernel's 2 GiB cap per call) goes on where it stopped. Returns the bytes moved;
    ``OSError`` on an error or on the end of the file before the last run.
    """
    iov = np.array(iov, dtype=np.uint64, order="C")  # ours: a partial run is shortened in it
    i, moved = 0, 0
    while i < len(iov):
        part = iov[i : i + batch]
        done = fn(fd, part.ctypes.data, len(part), offset)
        if done < 0:
            err = ctypes.get_errno()
            if err == errno.EINTR:
                continue
            raise OSError(err, os.strerror(err))
        if done == 0:
            raise OSError(errno.EIO, f"end of file after {moved} of {int(iov[:, 1].sum())} bytes")
        offset += done
        moved += done
        ends = np.cumsum(part[:, 1])
        whole = int(np.searchsorted(ends, done, side="right"))
        i += whole
        rest = done - (int(ends[whole - 1]) if whole else 0)
        if rest:  # the run at i was moved in part
            iov[i, 0] += np.uint64(rest)
            iov[i, 1] -= np.uint64(rest)
    return moved


def _write(path: str, piece: np.ndarray, pad: int = 0) -> None:
    """``piece`` into a new file at ``path`` from byte ``pad`` on: one copy, from its memory.

    ``pad`` is the piece's offset in its destination's output modulo the page size, so
    that the collect can map the file's pages into the output (:func:`mapped_output`).
    """
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
    try:
        iov = runs(piece) if _PWRITEV is not None else None
        if iov is not None:
            vectored(_PWRITEV, fd, iov, pad)
            return
        os.ftruncate(fd, pad + piece.nbytes)
        with mmap.mmap(fd, pad + piece.nbytes, flags=_SHARED_POPULATED) as m:
            view = np.frombuffer(m, piece.dtype, piece.size, pad).reshape(piece.shape)
            view[...] = piece
            del view
    finally:
        os.close(fd)


def _read(path: str, target: np.ndarray, pad: int = 0, offset: int = 0) -> None:
    """The piece at byte ``offset + pad`` of the segment at ``path``, copied once into ``target``.

    ``offset``: a multiple of the page size (a pool segment's piece), ``pad``: any.
    """
    with (
        open(path, "rb") as f,
        mmap.mmap(
            f.fileno(),
            pad + target.nbytes,
            flags=_SHARED_POPULATED,
            prot=mmap.PROT_READ,
            offset=offset,
        ) as m,
    ):
        seg = np.frombuffer(m, target.dtype, target.size, pad).reshape(target.shape)
        target[...] = seg
        del seg


class Posted(NamedTuple):
    """What a post wrote, as its barrier passes it on to the collects (``generations[src]``).

    ``generation``: the post run (its files' names); ``pool``: the pool segment it wrote
    the pieces of ``offsets`` (destination rank -> byte) into, else None. A destination
    not in ``offsets`` reads its own file.
    """

    generation: int
    pool: str | None = None
    offsets: dict | None = None

    def pooled(self, dst: int) -> int | None:
        """Where rank ``dst``'s piece starts in the pool segment; None: in its own file."""
        return None if self.offsets is None else self.offsets.get(dst)


def copy_limit() -> int:
    """Bytes up to which a collect copies its whole output rather than mapping pieces into it.

    The largest output this process's output cache serves
    (:func:`dndask._output_cache.lease_limit`), while its posts' pool is on; else 0. The
    driver asks it when it plans the pieces (:func:`dndask._distribution.page_offsets`):
    the workers' caches and pools are configured as the driver's (the same environment,
    or the same test fixture).
    """
    if _shm_pool.process_pool().cap == 0:
        return 0
    return _output_cache.lease_limit(_output_cache.process_cache().cap)


def _mapped_by_collect(pad: int, nbytes: int) -> bool:
    """Whether a collect maps a piece of ``nbytes`` at byte ``pad`` of an output page.

    :func:`mapped_output`'s rule, from the piece's side: its output is consecutive bytes
    (``pad`` is not :data:`COPIED`) and it spans :data:`MAP_MIN` bytes of whole pages.
    """
    if pad == COPIED or _LIBC_MMAP is None:
        return False
    first, last = _whole_pages(pad, nbytes)
    return last - first >= MAP_MIN


def post(chunk: np.ndarray, base: str, src: int, outgoing: Sequence) -> tuple:
    """Write ``chunk[index]`` for each ``(dst, index, pad)`` of ``outgoing`` for rank ``dst``.

    A piece its collect will map into the output (:func:`_mapped_by_collect`) goes into a
    new file of its own, from byte ``pad`` on (:func:`_write`): the file's pages become
    the output's, so it is the only copy. The others, which the collect copies anyway,
    go one after another into a segment of this process's pool (:mod:`dndask._shm_pool`:
    pages that are already there) when one is free or can be made, else into files too.
    Returns ``(src, Posted, {dst: bytes})``. Empty pieces get no bytes. A post that fails
    unlinks what it wrote and gives its pool segment back; one whose compute was cancelled
    while it ran has that done by :class:`ShmPostSweeper` once it ends.
    """
    generation = time.time_ns()
    pieces = [(dst, chunk if index is None else chunk[index], pad) for dst, index, pad in outgoing]
    sent = {dst: int(piece.nbytes) for dst, piece, _ in pieces}
    relayout = _base_relayout(base)
    copied = [(d, p) for d, p, pad in pieces if p.nbytes and not _mapped_by_collect(pad, p.nbytes)]
    written: list[str] = []
    try:
        posted = _post_pooled(copied, relayout, generation)
        for dst, piece, pad in pieces:
            if piece.nbytes and posted.pooled(dst) is None:
                path = _path(base, src, dst, generation)
                written.append(path)
                _write(path, piece, max(pad, 0))
    except BaseException:
        for path in written:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        _shm_pool.process_pool().give_back_run(relayout, generation)
        raise
    key = _running_key()
    if key is not None:
        WRITTEN[key] = (written, relayout, generation)
    return src, posted, sent


def _post_pooled(pieces: list, relayout: tuple, generation: int) -> Posted:
    """``(dst, piece)`` pieces written into a pool segment, each from a page boundary on.

    A :class:`Posted` without a pool segment when there are none, or no room. Pickles
    with plain ``pickle`` (the barrier's value travels to every collect).
    """
    offsets: dict[int, int] = {}
    at = 0
    for dst, piece in pieces:
        offsets[dst] = at
        at += -(-piece.nbytes // PAGE) * PAGE
    if not at:
        return Posted(generation)
    segment = _shm_pool.process_pool().take(at, relayout, generation)
    if segment is None:
        return Posted(generation)
    for dst, piece in pieces:
        segment.write(offsets[dst], piece)
    return Posted(generation, segment.path, offsets)


def _base_relayout(base: str) -> tuple[str, str]:
    """``(tag, token)`` of the relayout whose segments start with ``base``."""
    tag, _, token = os.path.basename(base)[len(SEGMENT_PREFIX) :].partition("-")
    return tag, token


def _running_key():
    """The key of the task this thread runs on a Dask worker, else ``None``."""
    try:
        return distributed.get_worker().get_current_task()
    except ValueError:  # not on a worker (a local scheduler): nothing can cancel it
        return None


def barrier(*posted: tuple) -> dict[int, int]:
    """Source rank -> the generation its post wrote (metadata only; it waits on every post)."""
    return {src: generation for src, generation, _ in posted}


def collect(generations, kept: Sequence, spec: Sequence, lshape, dtype, axis: int, base: str):
    """Rank ``dst``'s output chunk: the pieces of ``spec`` in place along ``axis``.

    ``spec`` entries, in order along ``axis``: ``("kept", i, index, rows)`` (a slice of
    ``kept[i]``, a source chunk of this rank: no file), or ``("shm", src, dst, shape, pad)``
    (the segment ``src`` posted for ``dst``, its piece from byte ``pad`` on).
    ``generations`` is the barrier's value: per source, what its post wrote
    (:class:`Posted`). Where the pieces lie one after another in the output's memory,
    the segments' pages are mapped into it (:func:`mapped_output`); otherwise, and for
    the pieces in a pool segment (which a later post reuses), each is copied once into
    place.
    """
    dtype = np.dtype(dtype)
    lshape = tuple(lshape)
    out = mapped_output(lshape, dtype, axis, spec) if _LIBC_MMAP is not None else None
    mapped = out is not None
    if not mapped:  # on memory this process used before, where the cache has some
        out = _output_cache.empty(lshape, dtype)
    row = int(np.prod(lshape[axis + 1 :], dtype=np.int64)) * dtype.itemsize  # bytes, if mapped
    at = 0
    received = 0
    for entry in spec:
        if entry[0] == "kept":
            _, i, index, rows = entry
            part = kept[i] if index is None else kept[i][index]
        else:
            _, src, dst, shape, pad = entry
            rows = shape[axis]
            part = None
        where = tuple(slice(at, at + rows) if a == axis else slice(None) for a in range(out.ndim))
        start = at
        at += rows
        if part is not None:
            out[where] = part
            continue
        count = int(np.prod(shape))
        if count == 0:
            continue
        posted = generations[src]
        received += count * dtype.itemsize
        at_byte = posted.pooled(dst)
        if at_byte is not None:
            # mapped and copied, never preadv: into numpy's huge pages (an output of the
            # cache) preadv of 32 MiB took 20-27 ms here, mapping and copying 12 ms
            _read(posted.pool, out[where], 0, at_byte)
            continue
        path = _path(base, src, dst, posted.generation)
        if mapped:
            _map_piece(path, out, start * row, count * dtype.itemsize, pad)
        else:
            _read(path, out[where], max(pad, 0))
    if received:
        RECEIVED.append({"start": time.time(), "total": received, "key": base})
    return out


# ------------------------------------------------------- mapping segments into the output
# A collect whose pieces are consecutive byte ranges of its output (stacked along the
# output's first axis, or an axis after only length-1 ones) maps every page of a segment
# that lies wholly inside its piece straight into the output with MAP_PRIVATE | MAP_FIXED:
# no copy, and no fresh output page to fault in (on this VM, fresh memory costs more
# than the copy itself: docs/performance.md). Copy-on-write keeps the chunk private: a
# write into it never reaches the file, which a rerun collect may still map. The post
# wrote each piece from byte ``pad`` = its offset in the output modulo the page size, so
# file pages and output pages line up; the partial pages at a piece's two ends are read
# into place. The pages stay after the janitor unlinks the file, until the chunk is freed:
# an output of this kind holds shared memory (``Shmem`` in /proc/meminfo, counted against
# /dev/shm's size) rather than anonymous memory.
PAGE = mmap.PAGESIZE
COPIED = -1  # the pad of a piece whose output is not consecutive bytes: its collect copies it
MAP_MIN = 64 * PAGE  # a piece maps its pages only if it spans at least this many bytes
_MADV_POPULATE_READ = 22  # Linux >= 5.14: fill the page table now, not on first touch
_MAP_FIXED_FLAG = 0x10  # MAP_FIXED on Linux (the mmap module does not export it)
_MADV_HUGEPAGE = getattr(mmap, "MADV_HUGEPAGE", 14)  # Linux's value (Python exports it there)


def _mmap_call():
    """C's ``mmap`` and ``madvise`` as ctypes functions, or ``None`` where not available."""
    if ctypes.sizeof(ctypes.c_void_p) != 8 or not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn, advise = libc.mmap, libc.madvise
    except (AttributeError, OSError, TypeError):
        return None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    fn.argtypes += [ctypes.c_int64]
    fn.restype = ctypes.c_void_p
    advise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    advise.restype = ctypes.c_int
    return fn, advise


_LIBC_MMAP = _mmap_call()
_POPULATE = [True]  # until the kernel says it cannot (EINVAL: older than 5.14)


def _whole_pages(start: int, nbytes: int) -> tuple[int, int]:
    """The first and the end byte of the whole pages inside ``[start, start + nbytes)``."""
    return -(-start // PAGE) * PAGE, (start + nbytes) // PAGE * PAGE


def _max_map_count() -> int:
    try:
        with open("/proc/sys/vm/max_map_count") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 65530  # Linux's default


# The kernel caps the mappings of a process (vm.max_map_count, 65530 by default); each
# mapped piece splits its output's mapping in up to three. The mapped outputs alive in a
# process may use a quarter of the cap; beyond that, collects copy.
MAPS_BUDGET = _max_map_count() // 4
_LIVE_MAPS = [0]  # mappings held by this process's mapped outputs (a lock guards it)
_LIVE_LOCK = threading.Lock()


def _unmapped(count: int) -> None:
    with _LIVE_LOCK:
        _LIVE_MAPS[0] -= count


def mapped_output(lshape: tuple, dtype: np.dtype, axis: int, spec: Sequence) -> np.ndarray | None:
    """An empty output chunk in its own anonymous mapping, if :func:`collect` can map into it.

    ``None`` unless the pieces of ``spec`` are consecutive byte ranges of the output
    (every axis before ``axis`` has length 1), one of them holds :data:`MAP_MIN` bytes of
    whole pages, and the process's mapped outputs stay within :data:`MAPS_BUDGET`
    mappings. The chunk's memory is freed with the chunk (its mapping's last reference).

    >>> spec = [("shm", 1, 0, (64, 1024), 0)]
    >>> out = mapped_output((64, 1024), np.dtype("f4"), 0, spec)
    >>> out.shape, out.flags.writeable, isinstance(out.base, mmap.mmap)
    ((64, 1024), True, True)
    >>> mapped_output((64, 1024), np.dtype("f4"), 1, spec) is None  # columns: not consecutive
    True
    """
    if any(n != 1 for n in lshape[:axis]) or dtype.hasobject:
        return None
    row = int(np.prod(lshape[axis + 1 :], dtype=np.int64)) * dtype.itemsize
    pieces, at = 0, 0
    for entry in spec:
        rows = entry[3] if entry[0] == "kept" else entry[3][axis]
        first, last = _whole_pages(at * row, rows * row)
        pieces += entry[0] != "kept" and entry[4] != COPIED and last - first >= MAP_MIN
        at += rows
    maps = 2 * pieces + 1
    with _LIVE_LOCK:
        if not pieces or _LIVE_MAPS[0] + maps > MAPS_BUDGET:
            return None
        _LIVE_MAPS[0] += maps
    try:
        region = mmap.mmap(-1, at * row, flags=mmap.MAP_PRIVATE)
    except BaseException:
        _unmapped(maps)
        raise
    weakref.finalize(region, _unmapped, maps)
    _huge_pages(region)
    return np.ndarray(lshape, dtype, buffer=region)


def _huge_pages(region: mmap.mmap) -> None:
    """Ask for transparent huge pages under the parts of ``region`` the collect copies into.

    numpy asks the same for its large arrays; a plain anonymous mapping gets 4 KiB pages
    where the kernel's setting is ``madvise`` (the common default). Measured in one process:
    copying a kept 32 MiB piece into the output took 31 ms on 4 KiB pages, 7-9 ms on huge
    pages, and freeing the output 9 ms against 6. The pieces mapped over the region keep
    their own pages. A kernel without them (``EINVAL``) keeps the small pages.
    """
    with contextlib.suppress(OSError):
        region.madvise(_MADV_HUGEPAGE)


def _map_piece(path: str, out: np.ndarray, start: int, nbytes: int, pad: int) -> None:
    """Bytes ``[start, start + nbytes)`` of ``out`` (an :func:`mapped_output`) from ``path``.

    The file holds them from byte ``pad`` = ``start % PAGE`` on. Whole pages are mapped,
    the partial pages at both ends read with ``preadv``; a short piece is read whole.
    """
    if pad != start % PAGE:
        raise ValueError(f"the segment {path} starts at byte {pad}, not {start % PAGE}")
    first, last = _whole_pages(start, nbytes)
    origin = start - pad  # the output byte at the file's byte 0 (page aligned)
    flat = memoryview(out.reshape(-1).view(np.uint8))
    fd = os.open(path, os.O_RDONLY)
    try:
        if last - first < MAP_MIN:
            _pread(fd, flat[start : start + nbytes], pad)
            return
        _pread(fd, flat[start:first], pad)
        _pread(fd, flat[last : start + nbytes], last - origin)
        fn, advise = _LIBC_MMAP
        addr = out.ctypes.data + first
        prot = mmap.PROT_READ | mmap.PROT_WRITE
        flags = mmap.MAP_PRIVATE | _MAP_FIXED_FLAG
        if fn(addr, last - first, prot, flags, fd, first - origin) != addr:
            err = ctypes.get_errno()
            raise OSError(err, f"cannot map {path} into the output: {os.strerror(err)}")
        if _POPULATE[0] and advise(addr, last - first, _MADV_POPULATE_READ) != 0:
            if ctypes.get_errno() != errno.EINVAL:
                err = ctypes.get_errno()
                raise OSError(err, f"cannot read {path} into the output: {os.strerror(err)}")
            _POPULATE[0] = False  # an older kernel: the pages come in on first touch
    finally:
        os.close(fd)


def _pread(fd: int, target: memoryview, offset: int) -> None:
    """Fill ``target`` from ``fd`` at ``offset`` (``OSError`` at an early end of file)."""
    while len(target):
        done = os.preadv(fd, [target], offset)
        if done <= 0:
            raise OSError(errno.EIO, f"end of file at byte {offset}, {len(target)} short")
        target, offset = target[done:], offset + done


def file_sources(task) -> set[int]:
    """The source ranks whose segments the graph task ``task`` reads (a collect), else none.

    A collect depends on every post through the barrier; what it reads is in its spec.
    For code that follows data through a graph (tests of what travels).
    """
    if getattr(task, "func", None) is not collect:
        return set()
    return {entry[1] for entry in task.args[2] if entry[0] == "shm"}


# --------------------------------------------------------------------- cleanup
def _relayout_of(key) -> tuple[str, str] | None:
    """``(tag, token)`` of a control key, else ``None``."""
    name = key[0] if isinstance(key, tuple) else key
    if not isinstance(name, str):
        return None
    for prefix in _CONTROL:
        if name.startswith(prefix):
            tag, _, token = name[len(prefix) :].partition("-")
            return tag, token
    return None


def remove_many(sweeps: Sequence[tuple[str, str, int]]) -> int:
    """:func:`remove_segments` for each ``(tag, token, older_than)``; how many went.

    The pool segments the relayouts' posts took in this process are given back too.
    """
    removed = 0
    for tag, token, older_than in sweeps:
        removed += remove_segments(tag, token, older_than)
        _shm_pool.give_back((tag, token), older_than)
    return removed


class ShmJanitor(SchedulerPlugin):
    """Scheduler plugin: removes a relayout's segments once no collect can need them.

    The barrier of a relayout leaves memory only when no task waits for it (every
    collect of the compute has its output) or when the relayout failed; then the
    plugin asks the worker that ran the barrier (on the segments' host) to unlink the
    relayout's segments written before that moment (:func:`remove_segments`), and the
    workers that ran its posts to give back the pool segments they wrote into. A later
    compute of the same keys reruns the posts, which write new generations that the
    sweep keeps. A barrier cancelled before it ran (the compute was released: the Heat
    face's relayout of a call that then raised) sweeps too, as does the release of a
    post's result when the barrier is not wanted. Sweeps are sent in batches, one message
    per worker per turn of the scheduler's event loop, and only for barriers that are
    still not wanted then: one released because its worker died is waiting again.
    """

    name = "dndask-shm-janitor"
    idempotent = True
    everywhere = False  # sweep on the worker that ran the barrier (its host's /dev/shm)
    sweep_function = staticmethod(remove_many)

    def owns(self, tag: str) -> bool:
        """Whether the relayouts of cluster tag ``tag`` are this janitor's (not MPI's)."""
        return not tag.startswith(MPI_MARK)

    # a relayout dropped in mid-flight is swept again this many seconds later (see _sweep)
    resweep_after: tuple[float, ...] = (2.0, 10.0)

    def __init__(self) -> None:
        self.where: dict[tuple[str, str], str] = {}  # relayout -> worker that ran its barrier
        self.posters: dict[tuple[str, str], set] = {}  # relayout -> workers that ran its posts
        self.pending: dict[str | None, list] = {}  # worker (None: all) -> sweeps to send
        self.flushing = False

    def start(self, scheduler) -> None:
        self.scheduler = scheduler

    def _sweep(self, relayout: tuple[str, str], dropped: bool = False) -> None:
        """Sweep ``relayout``'s segments written before now; ``dropped``: again later too.

        A relayout dropped while its posts run or wait on their workers (its barrier
        released before it ran) races them: a post may start, or end, after the sweep
        reached its worker and before the worker heard that the post is no longer wanted,
        so neither the sweep nor :class:`ShmPostSweeper` sees its files. So it is swept
        again after each of :attr:`resweep_after` seconds, of everything written before
        that moment, unless the relayout is wanted again by then (:meth:`_flush` checks):
        nobody else can read its files.
        """
        workers = {self.where.pop(relayout, None)} | self.posters.pop(relayout, set())
        if self.everywhere or None in workers:
            workers = {None}
        sweep = (*relayout, time.time_ns())
        for worker in workers:
            self._queue(worker, sweep)
        if dropped:
            for delay in self.resweep_after:
                self.scheduler.loop.call_later(delay, self._resweep, relayout)

    def _resweep(self, relayout: tuple[str, str]) -> None:
        self._queue(None, (*relayout, time.time_ns()))

    def _queue(self, worker: str | None, sweep: tuple) -> None:
        self.pending.setdefault(worker, []).append(sweep)
        if not self.flushing:
            self.flushing = True
            self.scheduler.loop.add_callback(self._flush)

    def _wanted(self, relayout: tuple[str, str]) -> bool:
        """Whether the relayout's barrier is wanted (again): then its files must stay."""
        ts = self.scheduler.tasks.get(f"{BARRIER_PREFIX}{relayout[0]}-{relayout[1]}")
        return ts is not None and ts.state in _WANTED

    async def _flush(self) -> None:
        # runs once the stimulus that asked for these sweeps is fully handled: a barrier
        # released because its worker died is already back to waiting, and keeps its files
        # (its next departure sweeps every generation older than that moment)
        self.flushing = False
        pending, self.pending = self.pending, {}
        for worker, sweeps in pending.items():
            sweeps = [sweep for sweep in sweeps if not self._wanted(sweep[:2])]
            if not sweeps:
                continue
            msg = {
                "op": "run",
                "function": dumps(self.sweep_function),
                "args": dumps((sweeps,)),
                "wait": True,
                "kwargs": dumps({}),
            }
            workers = [worker] if worker in self.scheduler.workers else None  # None: all
            with contextlib.suppress(Exception):
                await self.scheduler.broadcast(msg=msg, workers=workers, on_error="ignore")

    def transition(self, key, start, finish, *args, **kwargs) -> None:
        relayout = _relayout_of(key)
        if relayout is None or not self.owns(relayout[0]):
            return
        name = key[0] if isinstance(key, tuple) else key
        if name.startswith(BARRIER_PREFIX):
            if finish == "memory":
                if kwargs.get("worker"):
                    self.where[relayout] = kwargs["worker"]
            elif finish in _GONE and start not in ("released", "erred"):
                # done with (from memory), failed, or cancelled before it ran: either
                # way no collect of this compute reads the files any more
                self._sweep(relayout, dropped=start != "memory")
        elif finish == "memory":
            if kwargs.get("worker"):  # its pool segment is given back there
                self.posters.setdefault(relayout, set()).add(kwargs["worker"])
        elif start == "memory" and finish in _GONE and not self._wanted(relayout):
            self._sweep(relayout)


class ShmPostSweeper(WorkerPlugin):
    """Worker plugin: unlinks the segments of a post that ended after its compute was cancelled.

    The scheduler cannot stop a running task: when no one wants a post any more (its
    compute was cancelled or failed elsewhere) while it runs, the worker lets it finish
    and drops its result without telling the scheduler, so :class:`ShmJanitor` never
    hears of the files it wrote. The worker's state machine does say so: the post goes
    from ``cancelled`` to ``memory``. A post that is wanted again while it runs goes
    through ``resumed`` instead, and its files stay for its barrier.

    It also looks after the process's pool of post segments (:mod:`dndask._shm_pool`) and
    its cache of outputs (:mod:`dndask._output_cache`): it frees what stayed idle for
    long, and all of it when the worker closes.
    """

    name = "dndask-shm-post-sweeper"
    idempotent = True

    def transition(self, key, start, finish, **kwargs) -> None:
        # only the end of a run: a post cancelled while running is still running
        if finish not in ("memory", "error") or key not in WRITTEN:
            return
        written, relayout, generation = WRITTEN.pop(key)
        if start == "cancelled" and finish == "memory":
            for path in written:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
            _shm_pool.process_pool().give_back_run(relayout, generation)

    def setup(self, worker) -> None:
        # idle pool segments and cached outputs go even when no relayout comes to trim them
        self._trim = PeriodicCallback(_trim_both, _shm_pool.IDLE * 1000 / 3)
        self._trim.start()

    def teardown(self, worker) -> None:
        trimmer = getattr(self, "_trim", None)
        if trimmer is not None:
            trimmer.stop()
        _shm_pool.close()
        _output_cache.close()


def _trim_both() -> None:
    _shm_pool.trim()
    _output_cache.trim()


_lock = threading.Lock()
_janitors: set[str] = set()  # ids of the clients whose scheduler has the janitor


def ensure_janitor(client: distributed.Client) -> None:
    """Install :class:`ShmJanitor` on ``client``'s scheduler and :class:`ShmPostSweeper` on its
    workers (asked once per client; workers that join later get the sweeper too).

    A cluster that refuses them (one that cannot import dndask) leaves the segments to
    the cleanup at shutdown; that is logged once.
    """
    with _lock:
        if client.id in _janitors:
            return
        _janitors.add(client.id)
    try:
        client.register_plugin(ShmJanitor())
        client.register_plugin(ShmPostSweeper())
    except Exception as exc:
        log.warning("dndask could not install its shared-memory janitor (%s)", exc)
