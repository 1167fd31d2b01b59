"""Reusable memory for the outputs of shared-memory collects (worker side, one cache per process).

A collect that copies its pieces writes them into a new output chunk. On the machine of
docs/performance.md, memory a process has not touched before costs more than the copy
itself, with long tails: the kernel hands out pages the host has to back again (a
Dask worker's allocator returns every large block to the system at once). Each worker
process therefore keeps the buffers of outputs that were freed, up to
:func:`configured_cap` bytes (``$DNDASK_OUTPUT_CACHE``, 64 MiB; ``0``: no cache), and the
next collect's output of about that size is written into one of them.

An output is a plain writeable numpy array whose chain of bases ends in a :class:`Lease`
of a buffer: the buffer is busy as long as the array or any view of it lives, and comes
back to the cache when the last one goes (:func:`weakref.finalize`). Which collects copy
their outputs (and so use the cache) is the driver's choice:
:class:`dndask._distribution.SteadyRuns`. A buffer serves outputs of
:data:`MIN_BYTES` up to half the cap, at least half its own size; a buffer that has no
room in the cache when it comes back is freed, as is one idle for :data:`IDLE` seconds
(:meth:`OutputCache.trim`, called by the worker plugin's periodic callback and by every
:meth:`~OutputCache.empty`), and every free one when the worker closes.

>>> cache = OutputCache(cap=8 << 20)
>>> out = cache.empty((1024, 512), np.float32)  # 2 MiB
>>> out.shape, out.flags.writeable, out.flags.c_contiguous, cache.busy
((1024, 512), True, True, 2097152)
>>> address = out.ctypes.data
>>> del out  # its buffer comes back
>>> cache.free, cache.empty((2048, 256), np.float32).ctypes.data == address  # and serves again
(2097152, True)
>>> cache.close()
"""

from __future__ import annotations

import collections
import math
import threading
import time
import weakref

import numpy as np

from ._env import nonnegative_int

__all__ = [
    "CAP_ENV",
    "IDLE",
    "MIN_BYTES",
    "Lease",
    "OutputCache",
    "close",
    "configured_cap",
    "empty",
    "lease_limit",
    "process_cache",
    "set_cap",
    "trim",
]

CAP_ENV = "DNDASK_OUTPUT_CACHE"
_CAP_DEFAULT = 64 << 20
IDLE = 30.0  # seconds a free buffer is kept
MIN_BYTES = 1 << 20  # smaller outputs are cheap to make: never cached
_GRAIN = 1 << 20  # a buffer's size is a multiple of this


def configured_cap() -> int:
    """Bytes of free buffers a process's cache may keep: ``$DNDASK_OUTPUT_CACHE`` (64 MiB)."""
    return nonnegative_int(CAP_ENV, _CAP_DEFAULT)


def lease_limit(cap: int) -> int:
    """The largest output a cache of ``cap`` bytes serves: half of it (0: none).

    >>> lease_limit(64 << 20) >> 20, lease_limit(0)
    (32, 0)
    """
    return cap // 2 if cap // 2 >= MIN_BYTES else 0


def _new_buffer(size: int) -> np.ndarray:
    """``size`` new bytes: numpy's own memory, which it advises into huge pages."""
    return np.empty(size, np.uint8)


class Lease:
    """What an output of the cache rests on: ``nbytes`` bytes of one of its buffers.

    numpy reads them from ``__array_interface__``; the lease holds the buffer, and the
    output and every view of it hold the lease (:meth:`array`).
    """

    __slots__ = ("__array_interface__", "__weakref__", "buffer")

    def __init__(self, buffer: np.ndarray, nbytes: int) -> None:
        self.buffer = buffer
        self.__array_interface__ = {
            "data": (buffer.ctypes.data, False),  # writeable
            "shape": (nbytes,),
            "typestr": "|u1",
            "version": 3,
        }

    def array(self, shape: tuple, dtype: np.dtype) -> np.ndarray:
        """The leased bytes as a C-ordered array of ``shape`` and ``dtype`` (any dtype)."""
        return np.asarray(self).view(dtype).reshape(shape)


class OutputCache:
    """The free buffers of one process (see the module's docstring).

    ``cap``: bytes of free buffers it may keep (default :func:`configured_cap`). Thread-safe:
    a buffer comes back from whichever thread drops its output's last reference, without
    taking the lock (:attr:`_returned`), so no thread can wait on itself.
    """

    def __init__(self, cap: int | None = None, idle: float = IDLE) -> None:
        self.cap = configured_cap() if cap is None else cap
        self.idle = idle
        self._free: list[tuple[float, np.ndarray]] = []  # (last used, buffer)
        self._returned: collections.deque = collections.deque()  # appended by finalizers
        self._lock = threading.Lock()
        self._busy = 0  # bytes of leased buffers, as of the last _collect
        self.reused = 0  # bytes of outputs made on buffers that were free (ever)

    @property
    def busy(self) -> int:
        """Bytes of the buffers under outputs that are alive."""
        return self._settle()[0]

    @property
    def free(self) -> int:
        """Bytes of the free buffers (those come back since the last call included)."""
        return self._settle()[1]

    def empty(self, shape, dtype) -> np.ndarray:
        """An uninitialised C-ordered array, on a buffer of the cache where its size fits.

        Outputs under :data:`MIN_BYTES` or over :func:`lease_limit` are plain ``np.empty``.
        """
        dtype = np.dtype(dtype)
        shape = tuple(int(n) for n in shape)
        nbytes = math.prod(shape) * dtype.itemsize
        if dtype.hasobject or not MIN_BYTES <= nbytes <= lease_limit(self.cap):
            return np.empty(shape, dtype)
        with self._lock:
            self._collect(time.monotonic())
            fits = [i for i, (_, b) in enumerate(self._free) if nbytes <= b.nbytes <= 2 * nbytes]
            buffer = None
            if fits:
                buffer = self._free.pop(min(fits, key=lambda i: self._free[i][1].nbytes))[1]
                self.reused += nbytes
                self._busy += buffer.nbytes
        if buffer is None:
            try:
                buffer = _new_buffer(-(-nbytes // _GRAIN) * _GRAIN)
            except OSError:  # no memory to map: numpy's own error, if there is none at all
                return np.empty(shape, dtype)
            with self._lock:
                self._busy += buffer.nbytes
        lease = Lease(buffer, nbytes)
        weakref.finalize(lease, self._returned.append, buffer)
        return lease.array(shape, dtype)

    def _collect(self, now: float) -> None:
        """Take in the buffers come back, keep what fits under the cap, drop the idle (locked)."""
        while self._returned:
            buffer = self._returned.popleft()
            self._busy -= buffer.nbytes
            self._free.append((now, buffer))
        self._free = [(t, b) for t, b in self._free if now - t < self.idle]
        held, kept = 0, []
        for t, b in reversed(self._free):  # the last come back first (the list is in that order)
            if held + b.nbytes <= self.cap:
                kept.append((t, b))
                held += b.nbytes
        self._free = kept[::-1]

    def _settle(self) -> tuple[int, int]:
        """:meth:`_collect` now, under the lock: the bytes busy and the bytes free after it."""
        with self._lock:
            self._collect(time.monotonic())
            return self._busy, sum(b.nbytes for _, b in self._free)

    def trim(self) -> int:
        """Free the buffers idle for longer than ``idle`` seconds; bytes still free."""
        return self._settle()[1]

    def set_cap(self, nbytes: int) -> int:
        """Set the cap (``0``: no cache from now on); returns the previous one."""
        with self._lock:
            previous, self.cap = self.cap, int(nbytes)
            self._collect(time.monotonic())
        return previous

    def close(self) -> None:
        """Free every free buffer; outputs still alive keep theirs until they go."""
        with self._lock:
            self._collect(time.monotonic())
            self._free = []


_CACHE: list[OutputCache] = []
_CACHE_LOCK = threading.Lock()


def process_cache() -> OutputCache:
    """This process's cache (made on first use, with :func:`configured_cap` read then)."""
    with _CACHE_LOCK:
        if not _CACHE:
            _CACHE.append(OutputCache())
        return _CACHE[0]


def empty(shape, dtype) -> np.ndarray:
    """:meth:`OutputCache.empty` of this process's cache."""
    return process_cache().empty(shape, dtype)


def set_cap(nbytes: int) -> int:
    """:meth:`OutputCache.set_cap` on this process's cache (made if there is none)."""
    return process_cache().set_cap(nbytes)


def trim() -> int:
    """:meth:`OutputCache.trim` on this process's cache, if it has one."""
    return _CACHE[0].trim() if _CACHE else 0


def close() -> None:
    """Free this process's free buffers (the worker is closing)."""
    if _CACHE:
        _CACHE[0].close()
