"""Peak resident memory of this process while an operation runs (standard library only).

The same meter runs in every Dask worker and in every Heat MPI rank, so the
three systems are measured alike. :meth:`PeakMeter.start` takes the resident
set size as the baseline (the inputs are in memory by then) and resets the
kernel's high-water mark (``VmHWM``, by writing ``5`` to
``/proc/self/clear_refs``); :meth:`PeakMeter.stop` returns the high-water
mark minus the baseline: the extra memory the operation needed, its output
included. The kernel tracks the mark on every page fault, so no peak is
missed. Where ``clear_refs`` cannot be written, a thread samples the RSS
every millisecond instead (``method`` says which).
"""

from __future__ import annotations

import os
import threading

_PAGE = os.sysconf("SC_PAGE_SIZE")
SAMPLE_S = 0.001


def rss() -> int:
    """Resident set size of this process in bytes (Linux)."""
    with open("/proc/self/statm", "rb") as f:
        return int(f.read().split()[1]) * _PAGE


def high_water_mark() -> int:
    """The kernel's peak resident set size of this process (``VmHWM``) in bytes."""
    with open("/proc/self/status", "rb") as f:
        for line in f:
            if line.startswith(b"VmHWM:"):
                return int(line.split()[1]) * 1024
    raise OSError("no VmHWM in /proc/self/status")


def reset_high_water_mark() -> bool:
    """Reset ``VmHWM`` to the current RSS; False where the kernel does not allow it."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


class PeakMeter:
    """Peak RSS above the RSS at :meth:`start`."""

    def __init__(self):
        self.baseline = 0
        self.method = ""
        self._peak = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _sample(self) -> None:
        while not self._stop.wait(SAMPLE_S):
            self._peak = max(self._peak, rss())

    def start(self) -> PeakMeter:
        """Take the baseline and start tracking the peak; returns ``self``."""
        self.baseline = self._peak = rss()
        if reset_high_water_mark():
            self.method = "VmHWM"
            return self
        self.method = "sampled"
        self._stop.clear()
        self._thread = threading.Thread(target=self._sample, name="bench-rss", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> int:
        """The peak above the baseline in bytes (never negative)."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
            peak = max(self._peak, rss())
        else:
            peak = high_water_mark()
        return max(0, peak - self.baseline)
