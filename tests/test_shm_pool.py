"""The posts' pool of shared-memory segments, in one process: sizes, reuse, release, cleanup."""

from __future__ import annotations

import errno
import mmap
import os
import subprocess
import sys

import numpy as np
import pytest

from dndask import _shm_pool

TAG = f"{os.getpid()}p"
R1, R2 = (TAG, "one"), (TAG, "two")
MiB = 1 << 20


@pytest.fixture
def pool():
    p = _shm_pool.SegmentPool(cap=8 * MiB)
    yield p
    p.close()
    assert _shm_pool.pool_files(TAG) == []


def test_a_segment_holds_the_bytes_written_into_it(pool):
    seg = pool.take(3 * MiB + 5, R1, generation=1)
    assert seg.size == 4 * MiB and os.path.getsize(seg.path) == seg.size  # a whole MiB
    assert os.path.basename(seg.path).startswith(f"dndask-{TAG}-pool-{os.getpid()}-")
    piece = np.arange(60, dtype=np.float64).reshape(6, 10)[:, 3:7]  # strided
    seg.write(4096, piece)
    with open(seg.path, "rb") as f:
        f.seek(4096)
        back = np.frombuffer(f.read(piece.nbytes), np.float64).reshape(piece.shape)
    np.testing.assert_array_equal(back, piece)
    small = pool.take(100, R1, generation=1)
    assert small.size == mmap.PAGESIZE  # below a MiB: whole pages


def test_the_smallest_free_segment_that_fits_is_reused(pool):
    big = pool.take(4 * MiB, R1, generation=1)
    small = pool.take(2 * MiB, R1, generation=1)
    assert pool.take(3 * MiB, R2, generation=2) is None  # 6 MiB busy, cap 8
    assert pool.give_back(R1) == 2
    assert pool.take(MiB, R2, generation=2) is small
    assert pool.take(MiB, R2, generation=2) is big
    assert pool.held == 6 * MiB


def test_a_segment_serves_only_its_own_clusters_posts(pool):
    seg = pool.take(MiB, R1, generation=1)
    pool.give_back(R1)
    other = pool.take(MiB, ("othertag", "one"), generation=2)  # its file is named by its tag
    assert other is not seg and "-othertag-pool-" not in seg.path
    assert os.path.basename(other.path).startswith("dndask-othertag-pool-")
    assert pool.take(MiB, R2, generation=3) is seg


def test_free_segments_make_room_and_busy_ones_stay(pool):
    a = pool.take(3 * MiB, R1, generation=1)
    b = pool.take(3 * MiB, R2, generation=2)
    pool.give_back(R1)
    c = pool.take(5 * MiB, R2, generation=2)  # a (free) goes, b (busy) stays
    assert c is not None and not os.path.exists(a.path) and os.path.exists(b.path)
    assert pool.held == 8 * MiB
    assert pool.take(9 * MiB, R1, generation=3) is None  # above the cap: never


def test_give_back_frees_only_the_runs_before_older_than(pool):
    first = pool.take(MiB, R1, generation=10)
    rerun = pool.take(MiB, R1, generation=20)
    assert pool.give_back(R1, older_than=15) == 1
    assert first.holder is None and rerun.holder == (R1, 20)
    assert pool.give_back_run(R1, 20) == 1 and rerun.holder is None
    assert pool.give_back_run(R1, 20) == 0


def test_idle_segments_are_trimmed_and_close_unlinks_all(pool):
    pool.idle = 0.0
    busy = pool.take(MiB, R1, generation=1)
    free = pool.take(MiB, R2, generation=2)
    pool.give_back(R2)
    assert pool.trim() == 1
    assert not os.path.exists(free.path) and os.path.exists(busy.path)
    pool.close()
    assert not os.path.exists(busy.path) and pool.segments == []


def test_a_segment_unlinked_behind_the_pools_back_is_not_handed_out(pool):
    seg = pool.take(MiB, R1, generation=1)
    pool.give_back(R1)
    os.unlink(seg.path)  # the cluster's shutdown sweep, say
    again = pool.take(MiB, R2, generation=2)
    assert again is not seg and os.path.exists(again.path) and pool.segments == [again]


def test_a_full_dev_shm_gives_no_segment(pool, monkeypatch):
    def full(fd, offset, length):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", full)
    assert pool.take(MiB, R1, generation=1) is None
    assert pool.segments == [] and _shm_pool.pool_files(TAG) == []


def test_a_new_pool_removes_the_segments_of_dead_processes(pool):
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    pid = int(dead.stdout)
    orphan = os.path.join(_shm_pool.SHM_DIR, f"dndask-{TAG}-pool-{pid}-1")
    alive = os.path.join(_shm_pool.SHM_DIR, f"dndask-{TAG}-pool-1-1")  # pid 1 lives
    for path in (orphan, alive):
        open(path, "wb").close()
    try:
        pool.take(MiB, R1, generation=1)
        assert not os.path.exists(orphan) and os.path.exists(alive)
    finally:
        os.unlink(alive)


@pytest.mark.parametrize(("raw", "expected"), [("0", 0), ("1048576", MiB)])
def test_the_cap_comes_from_the_environment(monkeypatch, raw, expected):
    monkeypatch.setenv(_shm_pool.CAP_ENV, raw)
    assert _shm_pool.configured_cap() == expected
    assert _shm_pool.SegmentPool().cap == expected


@pytest.mark.parametrize("raw", ["-1", "64MiB", "1.5"])
def test_a_bad_cap_in_the_environment_raises(monkeypatch, raw):
    monkeypatch.setenv(_shm_pool.CAP_ENV, raw)
    with pytest.raises(
        ValueError, match=f"`DNDASK_SHM_POOL` must be a non-negative int, got '{raw}'"
    ):
        _shm_pool.configured_cap()


def test_no_pool_with_a_cap_of_zero():
    p = _shm_pool.SegmentPool(cap=0)
    assert p.take(1, R1, generation=1) is None and p.segments == []
