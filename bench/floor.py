"""The physical floor of a data-movement case: bytes that must move / measured bandwidth.

Two bandwidths are measured on this machine:

- memory copy: ``np.copyto`` of a large float64 array into another one
  (already faulted in), best of a few repeats; bytes copied per second;
- loopback TCP: one thread sends a buffer over a 127.0.0.1 socket that
  another thread receives into a preallocated buffer; bytes per second.

The floor of a case is its minimum bytes (see
:meth:`bench.workloads.Workload.minimum_bytes`) divided by the copy
bandwidth: no system can move its data faster than one memory copy. The
distance from the floor is ``time / floor``.
"""

from __future__ import annotations

import math
import socket
import threading
import time
from dataclasses import dataclass

import numpy as np

MIB = 1 << 20


@dataclass(frozen=True)
class Bandwidth:
    """Measured bandwidths in bytes per second, with buffers of ``mib`` MiB."""

    memcpy: float
    loopback: float
    mib: int = 256


def memcpy_bandwidth(mib: int = 256, repeats: int = 5) -> float:
    """Bytes per second of ``np.copyto`` between two ``mib`` MiB arrays."""
    src = np.ones(mib * MIB // 8)
    dst = np.empty_like(src)
    np.copyto(dst, src)  # fault every page in before timing
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - t0)
    return src.nbytes / best


def _receive_into(conn: socket.socket, buf: memoryview) -> None:
    got = 0
    while got < len(buf):
        n = conn.recv_into(buf[got:])
        if n == 0:
            raise ConnectionError("loopback sender closed early")
        got += n


def loopback_bandwidth(mib: int = 256) -> float:
    """Bytes per second over one TCP connection on 127.0.0.1 (two threads)."""
    payload = memoryview(np.ones(mib * MIB, dtype=np.uint8))
    sink = memoryview(np.empty(mib * MIB, dtype=np.uint8))
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)) as sender:
            conn, _ = server.accept()
            with conn:
                reader = threading.Thread(target=_receive_into, args=(conn, sink))
                t0 = time.perf_counter()
                reader.start()
                sender.sendall(payload)
                reader.join()
                seconds = time.perf_counter() - t0
    return len(payload) / seconds


def measure(mib: int = 256) -> Bandwidth:
    """Both bandwidths, with ``mib`` MiB buffers."""
    return Bandwidth(memcpy=memcpy_bandwidth(mib), loopback=loopback_bandwidth(mib), mib=mib)


def floor_seconds(nbytes: float, bandwidth: float) -> float:
    """Seconds to copy ``nbytes`` once at ``bandwidth``; NaN when nothing must move."""
    if nbytes <= 0 or bandwidth <= 0:
        return math.nan
    return nbytes / bandwidth


def distance(seconds: float, floor: float) -> float:
    """How many times the floor ``seconds`` is; NaN without a floor."""
    if not floor or math.isnan(floor):
        return math.nan
    return seconds / floor
