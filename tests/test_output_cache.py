"""The collects' output cache (dndask._output_cache): pure process-local tests, no cluster."""

from __future__ import annotations

import gc
import pickle
import threading

import numpy as np
import pytest

from dndask import _output_cache
from dndask._output_cache import MIN_BYTES, OutputCache

MIB = 1 << 20


@pytest.fixture
def cache():
    c = OutputCache(cap=64 * MIB)
    yield c
    c.close()


def _base_lease(a: np.ndarray):
    while a is not None and not isinstance(a, _output_cache.Lease):
        a = getattr(a, "base", None)
    return a


def test_an_output_is_a_writeable_array_and_its_buffer_serves_the_next_output(cache):
    out = cache.empty((512, 1024), np.float32)
    assert out.shape == (512, 1024) and out.dtype == np.float32
    assert out.flags.writeable and out.flags.c_contiguous
    assert _base_lease(out) is not None
    out[...] = np.arange(out.size, dtype=np.float32).reshape(out.shape)
    np.testing.assert_array_equal(out.ravel()[-3:], [out.size - 3, out.size - 2, out.size - 1])
    address = out.ctypes.data
    assert cache.busy == 2 * MIB and cache.free == 0
    del out
    assert cache.busy == 0 and cache.free == 2 * MIB
    again = cache.empty((2 * MIB // 8,), np.float64)  # the same bytes, another dtype
    assert again.ctypes.data == address and cache.reused == 2 * MIB and cache.free == 0


def test_a_view_keeps_the_buffer_busy(cache):
    out = cache.empty((MIB,), np.int16)
    view = out[10:20]
    as_bytes = memoryview(out)
    del out
    gc.collect()
    assert cache.busy == 2 * MIB and cache.free == 0
    del view
    assert cache.busy == 2 * MIB  # the memoryview still holds it
    del as_bytes
    assert cache.busy == 0 and cache.free == 2 * MIB


@pytest.mark.parametrize(
    ("shape", "dtype", "cap"),
    [
        ((MIN_BYTES // 4 - 1,), np.float32, 64 * MIB),  # under MIN_BYTES
        ((32 * MIB // 8 + 1,), np.float64, 64 * MIB),  # over half the cap
        ((4 * MIB,), np.uint8, 0),  # no cache
        ((MIB,), object, 64 * MIB),  # objects: numpy's own
    ],
)
def test_outputs_outside_the_cache_are_numpys_own(shape, dtype, cap):
    c = OutputCache(cap=cap)
    out = c.empty(shape, dtype)
    assert out.shape == shape and out.dtype == np.dtype(dtype) and out.flags.owndata
    del out
    assert c.busy == 0 and c.free == 0


def test_a_buffer_serves_outputs_of_at_least_half_its_size_the_smallest_first(cache):
    big, small = cache.empty((16 * MIB,), np.uint8), cache.empty((4 * MIB,), np.uint8)
    addresses = {16: big.ctypes.data, 4: small.ctypes.data}
    del big, small
    assert cache.free == 20 * MIB
    one = cache.empty((MIB,), np.uint8)  # both too big for it: a new buffer
    assert one.ctypes.data not in addresses.values()
    three = cache.empty((3 * MIB,), np.uint8)  # 4 MiB fits, 16 MiB is too big
    assert three.ctypes.data == addresses[4]
    ten = cache.empty((10 * MIB,), np.uint8)
    assert ten.ctypes.data == addresses[16]
    assert cache.reused == 13 * MIB


def test_free_buffers_beyond_the_cap_are_freed_the_first_come_back_first():
    c = OutputCache(cap=8 * MIB)
    outs = [c.empty((4 * MIB,), np.uint8) for _ in range(3)]  # 12 MiB busy: the cap is on free
    addresses = [o.ctypes.data for o in outs]
    for i in range(3):
        outs[i] = None  # back in this order
    assert c.busy == 0 and c.free == 8 * MIB  # the first of the three went
    again = [c.empty((4 * MIB,), np.uint8) for _ in range(2)]
    assert {o.ctypes.data for o in again} == set(addresses[1:])
    del again
    c.set_cap(0)
    assert c.free == 0


def test_idle_buffers_are_trimmed_and_close_frees_the_free_ones():
    c = OutputCache(cap=64 * MIB, idle=0.0)
    out = c.empty((2 * MIB,), np.uint8)
    kept = c.empty((2 * MIB,), np.uint8)
    kept[:] = 7
    del out
    assert c.trim() == 0 and c.free == 0  # idle at once
    c.idle = 60.0
    del kept
    assert c.free == 2 * MIB
    c.close()
    assert c.free == 0
    alive = c.empty((2 * MIB,), np.uint8)
    c.close()  # an output alive keeps its buffer
    alive[:] = 3
    assert int(alive.sum()) == 6 * MIB


def test_records_and_pickles():
    c = OutputCache(cap=64 * MIB)
    dtype = np.dtype({"names": ["v", "k"], "formats": ["<f4", "<i8"], "offsets": [0, 8]})
    out = c.empty((MIB // 8,), dtype)
    assert out.dtype == dtype
    out["v"], out["k"] = 1.5, np.arange(out.size)
    out.sort(order="k")
    back = pickle.loads(pickle.dumps(out))
    assert back.dtype == dtype and _base_lease(back) is None  # a copy of its own
    assert int(back["k"][-1]) == out.size - 1


def test_outputs_dropped_in_other_threads_come_back():
    c = OutputCache(cap=64 * MIB)
    outs = [c.empty((MIB,), np.uint8) for _ in range(16)]
    start = threading.Barrier(4)

    def drop(part):
        start.wait()
        for i in part:
            outs[i] = None
            c.empty((MIB,), np.uint8)  # made and dropped at once, while others come back

    threads = [threading.Thread(target=drop, args=(range(k, 16, 4),)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert c.busy == 0 and c.free == 16 * MIB


def test_the_cap_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv(_output_cache.CAP_ENV, str(8 * MIB))
    assert OutputCache().cap == 8 * MIB
    monkeypatch.setenv(_output_cache.CAP_ENV, "lots")
    with pytest.raises(ValueError, match="`DNDASK_OUTPUT_CACHE` must be a non-negative int"):
        OutputCache()
