"""Reusable shared-memory segments for the posts of relayouts (worker side, one pool per process).

A post that writes its pieces into fresh files in ``/dev/shm`` pays for every page the
kernel allocates and clears on the way: on the machine of docs/performance.md, 3.4 ms
for 8 MiB against 0.3 ms for a copy into pages that are already there. A worker process
therefore keeps a few segments it wrote before, each mapped once in this process, and a
post writes the pieces that their collects will copy (not map: a later post reuses the
segment) into one of them where they fit (:meth:`SegmentPool.take`); collects read them
by path and offset.

A segment taken by relayout ``(tag, token)`` is busy until the relayout's segments would
be removed: the janitor's sweep (:func:`dndask._transport.remove_many`) runs on the
workers of the relayout's posts and gives it back (:meth:`SegmentPool.give_back`), which
happens only once no collect can read it again. A segment idle for :data:`IDLE` seconds
is unlinked (:meth:`SegmentPool.trim`, called by the worker plugin's periodic callback
and by every :meth:`~SegmentPool.take`), as is the whole pool when the worker closes
(:meth:`SegmentPool.close`). What a killed process left is unlinked by the other pools
of its cluster (their first segment and every periodic trim look for segments of
processes that no longer exist), and by the cluster's shutdown.

A segment is ``/dev/shm/dndask-<tag>-pool-<pid>-<n>``: the cluster's tag, so that the
shutdown's sweep of the tag removes it, then ``pool``, never a relayout's token.

The pool of a process holds at most :func:`configured_cap` bytes (``$DNDASK_SHM_POOL``, 64 MiB;
``0``: no pool). A post that finds no room writes fresh files, as without a pool.

>>> pool = SegmentPool(cap=1 << 20)
>>> seg = pool.take(5000, ("tag0", "tok"), generation=1)
>>> seg.size, seg.view.nbytes, pool.held
(8192, 8192, 8192)
>>> pool.take(1 << 21, ("tag0", "tok"), generation=1) is None  # above the cap
True
>>> pool.give_back(("tag0", "tok"))
1
>>> pool.take(100, ("tag0", "other"), generation=2) is seg  # reused
True
>>> pool.close()
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import mmap
import os
import re
import threading
import time

import numpy as np

from ._env import nonnegative_int
from ._hosts import SHM_DIR

__all__ = [
    "CAP_ENV",
    "IDLE",
    "POOL_MARK",
    "Segment",
    "SegmentPool",
    "close",
    "configured_cap",
    "give_back",
    "is_pool_file",
    "pool_files",
    "process_pool",
    "set_cap",
    "trim",
]

CAP_ENV = "DNDASK_SHM_POOL"
_CAP_DEFAULT = 64 << 20
IDLE = 30.0  # seconds a free segment is kept
POOL_MARK = "pool"  # dndask-<tag>-pool-<pid>-<n>
_POOL_NAME = re.compile(rf"-{POOL_MARK}-[0-9]+-[0-9]+$")  # ...-pool-<pid>-<n>
_GRAIN = 1 << 20  # a new segment's size is a multiple of this (or of a page, below it)


def configured_cap() -> int:
    """Bytes a process's pool may hold: ``$DNDASK_SHM_POOL`` (64 MiB; 0: no pool)."""
    return nonnegative_int(CAP_ENV, _CAP_DEFAULT)


def is_pool_file(path: str) -> bool:
    """Whether ``path`` names a pool segment, ``...-pool-<pid>-<n>`` (never a relayout's file).

    >>> is_pool_file("/dev/shm/dndask-12x0a-pool-99-1")
    True
    >>> is_pool_file("/dev/shm/dndask-12x0a-f3-0-1-7")  # a relayout's: <token>-<src>-<dst>-<gen>
    False
    """
    return _POOL_NAME.search(os.path.basename(path)) is not None


def pool_files(tag: str = "") -> list[str]:
    """The pool segments in ``/dev/shm`` (of cluster tags starting with ``tag``)."""
    found = glob.glob(os.path.join(SHM_DIR, f"dndask-{tag}*-{POOL_MARK}-*"))
    return sorted(p for p in found if is_pool_file(p))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


class Segment:
    """One segment of a pool: its file, mapped in this process, and who holds it."""

    __slots__ = ("holder", "map", "path", "size", "tag", "used", "view")

    def __init__(self, path: str, size: int, tag: str) -> None:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        try:
            os.posix_fallocate(fd, 0, size)  # ENOSPC here, never SIGBUS on a later write
            flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
            self.map = mmap.mmap(fd, size, flags=flags)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            raise
        os.close(fd)
        self.path, self.size, self.tag = path, size, tag  # its cluster's: only its posts use it
        self.view = np.frombuffer(self.map, np.uint8)
        self.holder: tuple | None = None  # ((tag, token), generation) while busy
        self.used = time.monotonic()

    def write(self, offset: int, piece: np.ndarray) -> None:
        """``piece`` (any strides) copied to bytes ``offset...`` of the segment."""
        target = self.view[offset : offset + piece.nbytes].view(piece.dtype)
        np.copyto(target.reshape(piece.shape), piece, casting="no")

    def unlink(self) -> None:
        self.view = None
        with contextlib.suppress(BufferError):  # a view still out: the mapping goes with it
            self.map.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)


class SegmentPool:
    """The reusable segments of one process (see the module's docstring).

    ``cap``: bytes the pool may hold (default :func:`configured_cap`). Thread-safe: a worker runs
    several posts at once.
    """

    def __init__(self, cap: int | None = None, idle: float = IDLE) -> None:
        self.cap = configured_cap() if cap is None else cap
        self.idle = idle
        self.segments: list[Segment] = []
        self._lock = threading.Lock()
        self._count = 0
        self._swept: set[str] = set()  # tags whose dead processes' segments were removed

    @property
    def held(self) -> int:
        """Bytes of all the pool's segments, busy or free."""
        return sum(s.size for s in self.segments)

    def take(self, nbytes: int, relayout: tuple, generation: int) -> Segment | None:
        """A free segment of at least ``nbytes`` for ``relayout``'s post run ``generation``.

        The smallest free one that fits, else a new one when the pool stays within its
        cap (free segments that do not fit are dropped to make room); ``None`` when the
        busy segments leave no room, or ``/dev/shm`` has none.
        """
        if nbytes > self.cap:
            return None
        tag = relayout[0]
        with self._lock:
            self._trim(time.monotonic())
            # unlinked behind the pool's back: of no use to a reader
            self._drop([s for s in self.segments if not os.path.exists(s.path)])
            free = [
                s for s in self.segments if s.holder is None and s.size >= nbytes and s.tag == tag
            ]
            if free:
                chosen = min(free, key=lambda s: s.size)
            else:
                chosen = self._new(tag, nbytes)
                if chosen is None:
                    return None
            chosen.holder = (relayout, generation)
            chosen.used = time.monotonic()
            return chosen

    def _new(self, tag: str, nbytes: int) -> Segment | None:
        grain = _GRAIN if nbytes > _GRAIN else mmap.PAGESIZE
        size = -(-nbytes // grain) * grain
        size = min(size, max(self.cap, nbytes))
        if not self._make_room(size, largest_first=False):
            return None
        if tag not in self._swept:
            self._swept.add(tag)
            self._remove_dead(tag)
        self._count += 1
        path = os.path.join(SHM_DIR, f"dndask-{tag}-{POOL_MARK}-{os.getpid()}-{self._count}")
        try:
            segment = Segment(path, size, tag)
        except OSError:  # /dev/shm is full (ENOSPC) or gone: the post writes its own files
            return None
        self.segments.append(segment)
        return segment

    @staticmethod
    def _remove_dead(tag: str) -> None:
        """Unlink the pool segments of ``tag`` whose process is gone (a killed worker's)."""
        for path in pool_files(tag):
            try:
                pid = int(path.rsplit("-", 2)[1])
            except ValueError:
                continue
            if pid != os.getpid() and not _alive(pid):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)

    def give_back(self, relayout: tuple, older_than: int | None = None) -> int:
        """Free the segments ``relayout`` took (in post runs before ``older_than``); how many."""
        count = 0
        with self._lock:
            for s in self.segments:
                held = s.holder is not None and s.holder[0] == relayout
                if held and (older_than is None or s.holder[1] < older_than):
                    s.holder = None
                    s.used = time.monotonic()
                    count += 1
        return count

    def give_back_run(self, relayout: tuple, generation: int) -> int:
        """Free the segment of one post run (one whose compute was cancelled); how many."""
        with self._lock:
            for s in self.segments:
                if s.holder == (relayout, generation):
                    s.holder = None
                    return 1
        return 0

    def trim(self) -> int:
        """Unlink the segments free for longer than the pool's ``idle`` seconds; how many.

        The segments that processes now gone left under this pool's tags go too.
        """
        with self._lock:
            tags = sorted(self._swept)
            trimmed = self._trim(time.monotonic())
        for tag in tags:
            self._remove_dead(tag)
        return trimmed

    def _trim(self, now: float) -> int:
        return self._drop(
            [s for s in self.segments if s.holder is None and now - s.used > self.idle]
        )

    def _drop(self, segments: list[Segment]) -> int:
        """Unlink ``segments`` and forget them (the lock is held); how many."""
        for s in segments:
            self.segments.remove(s)
            s.unlink()
        return len(segments)

    def _make_room(self, extra: int, largest_first: bool) -> bool:
        """Drop free segments until ``extra`` more bytes fit under the cap (the lock is held).

        Whether they fit; busy segments always stay.
        """
        free = sorted((s for s in self.segments if s.holder is None), key=lambda s: s.size)
        for s in reversed(free) if largest_first else free:
            if self.held + extra <= self.cap:
                break
            self._drop([s])
        return self.held + extra <= self.cap

    def set_cap(self, nbytes: int) -> int:
        """Set the cap (``0``: no segment from now on); returns the previous one.

        Segments in use stay until given back; free ones above the new cap go at once,
        the largest first.
        """
        with self._lock:
            previous, self.cap = self.cap, int(nbytes)
            self._make_room(0, largest_first=True)
        return previous

    def close(self) -> None:
        """Unlink every segment, busy or not (the worker is closing)."""
        with self._lock:
            segments, self.segments = self.segments, []
        for s in segments:
            s.unlink()


_POOL: list[SegmentPool] = []
_POOL_LOCK = threading.Lock()


def process_pool() -> SegmentPool:
    """This process's pool (made on first use, with :func:`configured_cap` read then)."""
    with _POOL_LOCK:
        if not _POOL:
            _POOL.append(SegmentPool())
            atexit.register(close)  # a process that is not a worker: no plugin closes it
        return _POOL[0]


def set_cap(nbytes: int) -> int:
    """:meth:`SegmentPool.set_cap` on this process's pool (made if there is none)."""
    return process_pool().set_cap(nbytes)


def give_back(relayout: tuple, older_than: int | None = None) -> int:
    """:meth:`SegmentPool.give_back` on this process's pool, if it has one (no pool is made)."""
    return _POOL[0].give_back(relayout, older_than) if _POOL else 0


def trim() -> int:
    """:meth:`SegmentPool.trim` on this process's pool, if it has one."""
    return _POOL[0].trim() if _POOL else 0


def close() -> None:
    """Unlink this process's pool segments and forget the pool (the worker is closing)."""
    with _POOL_LOCK:
        pools = _POOL[:]
        _POOL.clear()
    for pool in pools:
        pool.close()
