"""The shared-memory transport of relayouts: values, graph size, placement, cleanup, fallback."""

from __future__ import annotations

import ctypes
import gc
import itertools
import logging
import mmap
import os
import pickle
import time
import types

import dask.array as da
import distributed
import numpy as np
import pytest
import torch
from conftest import (
    LayoutBatch,
    layouts,
    naive_pieces,
    slow_on_rank,
    splits_of,
    values_of,
    wait_until,
)
from dask.base import tokenize

import dndask as ht
from dndask import (
    _distribution,
    _dndarray,
    _fuse,
    _layout,
    _mpi_transport,
    _output_cache,
    _shm_pool,
    _transport,
)

METHODS = ["shm", "tasks"]
# collects that map segments into their output need C's mmap through ctypes (Linux)
NEEDS_MAPPING = pytest.mark.skipif(_transport._LIBC_MMAP is None, reason="no mmap through ctypes")


def global_data(shape, dtype=np.float64):
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


def counts_with_empty_ranks(n: int, size: int) -> list[int]:
    """All rows on the last rank but one row on rank 1 (ranks 0 and the rest empty)."""
    counts = [0] * size
    counts[-1] = n
    if size > 2 and n:
        counts[1], counts[-1] = 1, n - 1
    return counts


def redistributed(a: ht.DNDarray, counts, method: str) -> ht.DNDarray:
    target = a.lshape_map
    target[:, a.split] = torch.tensor(counts)
    return a.redistribute(target_map=target, method=method)


def segments_gone(tag: str, *arrays: ht.DNDarray, timeout: float = 20.0) -> list[str]:
    """The segments of the relayouts in ``arrays``' graphs still there after ``timeout`` s.

    Only these relayouts' files are looked at: other tests of this process share ``tag``
    (the client's), and the session's own check (conftest) sees whatever is left at the end.
    """
    tokens = {key[0].rsplit("-", 1)[1] for x in arrays for key in post_keys(x)}
    assert tokens, "no shared-memory relayout in these arrays' graphs"

    def left() -> list[str]:
        return sorted(p for token in tokens for p in _transport.segments(tag, token))

    deadline = time.monotonic() + timeout
    while left() and time.monotonic() < deadline:
        time.sleep(0.05)
    return left()


def is_result(key) -> bool:
    """Whether ``key`` is an output task of a compute to the driver (``dndask._fuse``)."""
    return isinstance(key, tuple) and str(key[0]).startswith(_fuse.RESULT_PREFIX)


def post_keys(x: ht.DNDarray) -> list:
    return [k for k in dict(x.to_dask().dask) if _transport.is_control(k) and isinstance(k, tuple)]


# ------------------------------------------------------------------------ values
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(("shape", "split", "n"), layouts([(7, 5), (3, 0, 4)]))
def test_resplit_and_redistribute_match_numpy(comm_of, shape, split, n, method):
    comm = comm_of(n)
    g = global_data(shape)
    a = ht.array(g, split=split, comm=comm)
    if split is not None and n > 1:
        a = redistributed(a, counts_with_empty_ranks(shape[split], n), method)
    with LayoutBatch() as batch:
        for axis in splits_of(len(shape)):
            batch.add(a.resplit(axis, method=method), g, axis, comm)
        if split is not None:
            batch.add(a, g, split, comm)
            batch.add(a.redistribute(method=method), g, split, comm)  # balanced
            for counts in (
                counts_with_empty_ranks(shape[split], n),
                [shape[split], *[0] * (n - 1)],
            ):
                b = redistributed(a, counts, method)
                assert b.lshape_map[:, split].tolist() == counts
                batch.add(b, g, split, comm)


@pytest.mark.parametrize("method", METHODS)
def test_in_place_resplits_chain(comm_of, method):
    """0 -> 1 -> 0 -> None -> 1, in place, on a persisted array of ints."""
    comm = comm_of(4)
    g = global_data((9, 6), np.int32)
    a = ht.array(g, split=0, comm=comm).persist_(wait=True)
    for axis in (1, 0, None, 1):
        assert a.resplit_(axis, method=method) is a
    assert a.split == 1
    np.testing.assert_array_equal(a.numpy(), g)


# Rows wide enough that every piece is posted by pwritev (runs of at least MIN_RUN bytes) at
# up to 5 ranks; the small shapes above post theirs through a mapping.
WIDE = 5 * _transport.MIN_RUN // 8 + 3


@pytest.mark.parametrize(("shape", "split", "n"), layouts([(9, WIDE), (3, 4, WIDE)]))
def test_wide_rows_match_numpy_on_every_split(comm_of, shape, split, n):
    comm = comm_of(n)
    g = global_data(shape)
    a = ht.array(g, split=split, comm=comm)
    with LayoutBatch() as batch:
        for axis in splits_of(len(shape)):
            batch.add(a.resplit(axis, method="shm"), g, axis, comm)
        if split is not None and n > 1:
            for counts in (
                counts_with_empty_ranks(shape[split], n),
                [0] * (n - 1) + [shape[split]],
            ):
                b = redistributed(a, counts, "shm")
                batch.add(b, g, split, comm)
                for axis in splits_of(len(shape)):
                    batch.add(b.resplit(axis, method="shm"), g, axis, comm)


@pytest.mark.parametrize("n", [2, 3, 5])
def test_chunks_in_fortran_order_and_reversed_match_numpy(comm_of, n):
    """Chunks whose runs are one element long (a transpose) go through a mapping."""
    comm = comm_of(n)
    g = global_data((WIDE, 11))
    a = ht.array(g.T.copy(), split=1, comm=comm).T  # split 0, chunks in Fortran order
    with LayoutBatch() as batch:
        batch.add(a.resplit(1, method="shm"), g, 1, comm)
        batch.add(a.resplit(None, method="shm"), g, None, comm)
        batch.add(ht.flip(a, 1).resplit(1, method="shm"), g[:, ::-1], 1, comm)


def _bytes_at(iov: np.ndarray) -> bytes:
    return b"".join(ctypes.string_at(int(p), int(n)) for p, n in iov)


@pytest.mark.parametrize(
    "view",
    [
        lambda a: a,
        lambda a: a[:, 3:200],
        lambda a: a[1:5, :, 2:180],
        lambda a: a[::2, ::-1][:, :, ::-1][:, :, ::-1],
        lambda a: a[:, :0],
        lambda a: a[:, :2, :1],
        lambda a: np.asfortranarray(a),
        lambda a: a[2, 1],
    ],
)
def test_runs_are_the_bytes_of_the_view_in_order(view):
    a = view(np.arange(6 * 4 * 256, dtype=np.float64).reshape(6, 4, 256))
    iov = _transport.runs(a)
    if iov is None:  # runs shorter than MIN_RUN, more than one
        assert a.size > 1
        return
    assert (iov[:, 1] >= min(_transport.MIN_RUN, a.nbytes)).all() or len(iov) <= 1
    assert _bytes_at(iov) == a.tobytes()


def _short(fn):
    """``fn`` (the C call) asked for one run and at most 100 bytes a call: short transfers."""

    def call(fd, iov, count, offset):
        first = np.frombuffer(ctypes.string_at(iov, 16), np.uint64).copy()
        first[1] = min(int(first[1]), 100)
        return fn(fd, first.ctypes.data, 1, offset)

    return call


@pytest.mark.skipif(_transport._PWRITEV is None, reason="no pwritev/preadv in this C library")
@pytest.mark.parametrize("how", ["batches of 2", "short transfers"])
def test_vectored_goes_on_after_partial_calls(tmp_path, how):
    g = np.random.default_rng(3).random((9, 300))
    piece, batch = g[:, 7:290], (2 if how == "batches of 2" else 1024)
    write, read = _transport._PWRITEV, _transport._libc_call("preadv")
    if how == "short transfers":
        write, read = _short(write), _short(read)
    path = tmp_path / "piece"
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        assert _transport.vectored(write, fd, _transport.runs(piece), 0, batch) == piece.nbytes
        assert path.read_bytes() == piece.tobytes()
        out = np.zeros((11, 300))
        assert (
            _transport.vectored(read, fd, _transport.runs(out[1:10, 4:287]), 0, batch)
            == piece.nbytes
        )
        np.testing.assert_array_equal(out[1:10, 4:287], piece)
        assert not out[0].any() and not out[:, :4].any() and not out[:, 287:].any()
        longer = np.zeros((10, 283))  # alive while its runs are read into
        with pytest.raises(OSError, match="end of file"):
            _transport.vectored(read, fd, _transport.runs(longer), 0, batch)
    finally:
        os.close(fd)


# ------------------------------------------------- collects that map the segments' pages
def _maps_of(path_start: str, out: np.ndarray) -> int:
    """How many of this process's mappings of files starting ``path_start`` lie in ``out``."""
    lo, hi = out.ctypes.data, out.ctypes.data + out.nbytes
    found = 0
    with open("/proc/self/maps") as f:
        for line in f:
            fields = line.split(maxsplit=5)
            if len(fields) == 6 and fields[5].startswith(path_start):
                start, end = (int(v, 16) for v in fields[0].split("-"))
                found += lo <= start and end <= hi
    return found


def _exchange(pieces: list, axis: int, base: str) -> tuple:
    """``pieces`` (piece 0 kept, the others posted by ranks 1, 2, ...) collected on rank 0.

    The pads are computed here from the output's layout (an independent restatement of
    the graph's rule): the byte offset of a piece in the output modulo the page size,
    where the pieces are consecutive byte ranges; 0 elsewhere.
    """
    lshape = list(pieces[0].shape)
    lshape[axis] = sum(p.shape[axis] for p in pieces)
    consecutive = all(n == 1 for n in lshape[:axis])
    row = int(np.prod(lshape[axis + 1 :])) * pieces[0].itemsize
    spec, generations, at = [("kept", 0, None, pieces[0].shape[axis])], {}, pieces[0].shape[axis]
    for src, piece in enumerate(pieces[1:], start=1):
        pad = at * row % _transport.PAGE if consecutive else 0
        _, generations[src], _ = _transport.post(piece, base, src, [(0, None, pad)])
        spec.append(("shm", src, 0, piece.shape, pad))
        at += piece.shape[axis]
    out = _transport.collect(generations, [pieces[0]], spec, lshape, pieces[0].dtype, axis, base)
    return out, spec, generations, lshape


SEGMENT_BASE = os.path.join(_transport.SHM_DIR, f"{_transport.SEGMENT_PREFIX}{os.getpid()}t")


@pytest.fixture
def no_pool(monkeypatch):
    """This process's posts write their own files (the pool is off for one test)."""
    monkeypatch.setattr(_shm_pool.process_pool(), "cap", 0)


@pytest.fixture
def pool(monkeypatch):
    """This process's posts use its pool (64 MiB, free segments kept), for one test."""
    p = _shm_pool.process_pool()
    monkeypatch.setattr(p, "cap", 64 << 20)
    yield p
    _shm_pool.give_back((f"{os.getpid()}t", "pool-test"))


@NEEDS_MAPPING
@pytest.mark.parametrize(
    ("rows", "width", "dtype", "axis"),
    [
        ([3, 700, 1, 500], 1000, np.float32, 0),  # 4000-byte rows: pieces across page edges
        ([2, 512, 256], 1024, np.float32, 0),  # whole pages
        ([0, 900, 0, 333], 777, np.int16, 0),  # odd widths, empty pieces, nothing kept
        ([5, 1, 2], 100, np.float64, 0),  # every piece under MAP_MIN: all copied
        ([4, 1300, 700], (1, 123), np.complex64, 1),  # 3-D, stacked after a length-1 axis
    ],
)
def test_a_collect_maps_the_pages_of_its_big_pieces(rows, width, dtype, axis, no_pool):
    g = np.random.default_rng(len(rows))
    shape = (width,) if np.ndim(width) == 0 else width
    pieces = []
    for n in rows:
        full = [*shape[:axis], n, *shape[axis:]] if axis else [n, *shape]
        pieces.append((g.random(full) * 1000).astype(dtype))
    base = f"{SEGMENT_BASE}-{len(rows)}-{np.dtype(dtype).char}"
    try:
        out, spec, generations, lshape = _exchange(pieces, axis, base)
        expected = np.concatenate(pieces, axis=axis)
        np.testing.assert_array_equal(out, expected)
        big = any(p.nbytes >= _transport.MAP_MIN + 2 * _transport.PAGE for p in pieces[1:])
        assert isinstance(out.base, mmap.mmap) == big
        assert (_maps_of(base, out) > 0) == big  # the pages are the segments', not copies
        out[...] = 0  # copy-on-write: the files keep what the posts wrote
        again = _transport.collect(generations, [pieces[0]], spec, lshape, dtype, axis, base)
        np.testing.assert_array_equal(again, expected)
    finally:
        _transport.remove_segments(token="", tag=f"{os.getpid()}t")
    np.testing.assert_array_equal(again, expected)  # the pages outlive their files
    del again
    gc.collect()


def test_pooled_posts_are_copied_into_the_output_and_their_segments_reused(pool):
    """Pieces side by side in their output (pad COPIED) or under MAP_MIN go into a pool
    segment; the collect copies them, so the segment takes the next post once the relayout
    gives it back. Pieces the collect maps get files of their own."""
    g = np.random.default_rng(11)
    pieces = [g.random((300, n)).astype(np.float32) for n in (10, 600, 0, 900)]
    tag, base = f"{os.getpid()}t", f"{SEGMENT_BASE}-pool-test"
    spec, generations = [("kept", 0, None, 10)], {}
    for src, piece in enumerate(pieces[1:], start=1):
        _, generations[src], _ = _transport.post(piece, base, src, [(0, None, _transport.COPIED)])
        spec.append(("shm", src, 0, piece.shape, _transport.COPIED))
    lshape = (300, 1510)
    out = _transport.collect(generations, [pieces[0]], spec, lshape, np.float32, 1, base)
    expected = np.concatenate(pieces, axis=1)
    np.testing.assert_array_equal(out, expected)
    assert [generations[s].pool is not None for s in (1, 2, 3)] == [True, False, True]
    assert pickle.loads(pickle.dumps(generations)) == generations  # as the barrier's value
    assert _transport.segments(tag, "pool-test") == []  # no file per piece
    again = _transport.collect(generations, [pieces[0]], spec, lshape, np.float32, 1, base)
    np.testing.assert_array_equal(again, expected)  # a rerun collect reads them again
    used = {generations[s].pool for s in (1, 3)}
    assert _shm_pool.give_back((tag, "pool-test")) == 2
    _, reused, _ = _transport.post(pieces[1] * 2, base, 1, [(0, None, _transport.COPIED)])
    assert reused.pool in used and reused.offsets == {0: 0}
    np.testing.assert_array_equal(out, expected)  # the first output is its own copy


@NEEDS_MAPPING
def test_pieces_a_collect_maps_get_files_and_small_ones_the_pool(pool):
    g = np.random.default_rng(13)
    pieces = [g.random((n, 1000)).astype(np.float32) for n in (3, 700, 1)]  # 2.7 MiB, 4 KB
    tag, base = f"{os.getpid()}t", f"{SEGMENT_BASE}-pool-test"
    out, _, generations, _ = _exchange(pieces, 0, base)
    np.testing.assert_array_equal(out, np.concatenate(pieces))
    assert generations[1].pool is None and generations[2].pool is not None
    assert isinstance(out.base, mmap.mmap) and _maps_of(base, out) > 0  # the big piece: mapped
    assert len(_transport.segments(tag, "pool-test")) == 1
    _transport.remove_segments(tag, "pool-test")


@pytest.mark.parametrize(
    ("shape", "dtype", "sliced"), [((6, 9), np.float64, 1), ((4, 5, 3), np.complex64, 2)]
)
def test_a_pooled_post_of_strided_pieces_matches_numpy(pool, shape, dtype, sliced):
    g = np.random.default_rng(12)
    chunk = (g.random(shape) * 100).astype(dtype)
    cuts = [0, 2, shape[sliced] - 1, shape[sliced]]
    base = f"{SEGMENT_BASE}-pool-test"
    outgoing = [
        (d, _layout.along(len(shape), sliced, lo, hi), 0)
        for d, lo, hi in zip((1, 2, 3), cuts[:-1], cuts[1:], strict=True)
    ]
    _, where, sent = _transport.post(chunk, base, 0, outgoing)
    assert where.pool is not None
    assert sorted(where.offsets) == [d for d, index, _ in outgoing if chunk[index].size]
    for d, index, _ in outgoing:
        piece = chunk[index]
        assert sent[d] == piece.nbytes
        spec = [("shm", 0, d, piece.shape, 0)]
        out = _transport.collect({0: where}, [], spec, piece.shape, dtype, 0, base)
        np.testing.assert_array_equal(out, piece)


@NEEDS_MAPPING
def test_a_collect_of_columns_copies_and_matches_numpy():
    g = np.random.default_rng(5)
    pieces = [g.random((300, n)).astype(np.float32) for n in (10, 600, 900)]
    base = f"{SEGMENT_BASE}-columns"
    try:
        out, *_ = _exchange(pieces, 1, base)
    finally:
        _transport.remove_segments(tag=f"{os.getpid()}t")
    assert not isinstance(out.base, mmap.mmap)  # pieces are not consecutive bytes: copied
    np.testing.assert_array_equal(out, np.concatenate(pieces, axis=1))


@NEEDS_MAPPING
def test_mapped_outputs_stay_within_the_process_budget(monkeypatch, no_pool):
    """Beyond the budget of mappings a collect copies; a freed output gives its share back."""
    g = np.random.default_rng(9)
    pieces = [g.random((n, 1000)).astype(np.float32) for n in (3, 700, 500)]  # 2 mapped
    live = _transport._LIVE_MAPS[0]
    monkeypatch.setattr(_transport, "MAPS_BUDGET", live + 5)
    base = f"{SEGMENT_BASE}-budget"
    try:
        first, *_ = _exchange(pieces, 0, base)
        assert isinstance(first.base, mmap.mmap) and _transport._LIVE_MAPS[0] == live + 5
        second, *_ = _exchange(pieces, 0, f"{base}-2")
        assert not isinstance(second.base, mmap.mmap)  # over the budget: copied
        del first
        gc.collect()
        assert _transport._LIVE_MAPS[0] == live
        third, *_ = _exchange(pieces, 0, f"{base}-3")
        assert isinstance(third.base, mmap.mmap)
    finally:
        _transport.remove_segments(tag=f"{os.getpid()}t")
    for out in (second, third):
        np.testing.assert_array_equal(out, np.concatenate(pieces))


def vm_flags(address: int) -> list[str]:
    """The kernel's flags of the mapping of this process that holds ``address``."""
    with open("/proc/self/smaps") as smaps:
        inside = False
        for line in smaps:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                start, end = (int(x, 16) for x in head.split("-"))
                inside = start <= address < end
            elif inside and head == "VmFlags:":
                return line.split()[1:]
    raise LookupError(f"no mapping holds {address:#x}")


@pytest.mark.skipif(
    not os.path.exists("/sys/kernel/mm/transparent_hugepage/enabled"),
    reason="this kernel has no transparent huge pages",
)
def test_a_mapped_output_asks_for_huge_pages_where_the_collect_copies():
    # the kept pieces are copied into the region: on 4 KiB pages that took 31 ms for 32 MiB
    out = _transport.mapped_output((64, 1024), np.dtype("f4"), 0, [("shm", 1, 0, (64, 1024), 0)])
    assert "hg" in vm_flags(out.ctypes.data)  # MADV_HUGEPAGE
    # a plain anonymous mapping of the same size has no such advice (a small heap block is
    # no control: in one full run it lay in heap pages that had huge-page advice)
    plain = np.frombuffer(mmap.mmap(-1, out.nbytes, flags=mmap.MAP_PRIVATE), np.uint8)
    assert "hg" not in vm_flags(plain.ctypes.data)


def test_a_segment_that_starts_at_the_wrong_byte_raises():
    out = _transport.mapped_output((64, 1024), np.dtype("f4"), 0, [("shm", 1, 0, (64, 1024), 0)])
    with pytest.raises(ValueError, match="starts at byte 8, not 0"):
        _transport._map_piece("/nonexistent", out, 0, 4096, 8)


# ------------------------------------------------------------------ the graph
@pytest.mark.parametrize("n", [2, 3, 5])
@pytest.mark.parametrize(("src", "dst"), [(0, 1), (1, 0), (0, None), (None, 1)])
def test_an_shm_relayout_has_at_most_2p_plus_1_tasks(comm_of, n, src, dst):
    comm = comm_of(n)
    a = ht.array(global_data((11, 13)), split=src, comm=comm).persist_(wait=True)
    before = len(dict(a.to_dask().dask))
    shm = a.resplit(dst, method="shm")
    tasks = a.resplit(dst, method="tasks")
    added = len(dict(shm.to_dask().dask)) - before
    assert added <= 2 * n + 1
    posts = post_keys(shm)
    assert sorted(k[1] for k in posts) == sorted({k[1] for k in posts})  # one per rank
    assert not post_keys(tasks)
    if src is not None and dst is not None:  # the tasks graph: a slice per pair of ranks
        assert len(dict(tasks.to_dask().dask)) - before > 2 * n + 1
    np.testing.assert_array_equal(shm.numpy(), tasks.numpy())


def distributions(shape, comm) -> list[_layout.Distribution]:
    """None and every split of ``shape`` on ``comm``, balanced and with empty ranks."""
    out = [_layout.Distribution(None, (), comm)]
    for split, n in enumerate(shape):
        for counts in {
            _layout.balanced_counts(n, comm.size),
            tuple(counts_with_empty_ranks(n, comm.size)),
        }:
            out.append(_layout.Distribution(split, counts, comm))
    return out


def exchange_tasks(y: da.Array, x: da.Array) -> tuple[dict, dict]:
    """The posts of ``y``'s relayout graph by source rank, and every task ``x`` lacks."""
    dsk, before = dict(y.__dask_graph__()), dict(x.__dask_graph__())
    added = {k: v for k, v in dsk.items() if k not in before}
    posts = {k[1]: v for k, v in added.items() if isinstance(k, tuple) and _transport.is_control(k)}
    return posts, added


def collects(tasks: dict, fn) -> list:
    """The tasks of ``tasks`` that run ``fn``, in key order."""
    return [tasks[k] for k in sorted(tasks, key=str) if getattr(tasks[k], "func", None) is fn]


@pytest.fixture(params=["mapped", "copied"])
def copied_outputs(request):
    """This process's output cache off (outputs mapped where they can be) or holding
    every output of the test (outputs copied from a relayout's second plan within
    :class:`dndask._distribution.SteadyRuns`' window on)."""
    previous = _output_cache.set_cap(0 if request.param == "mapped" else 64 << 20)
    yield _transport.copy_limit() > 0  # not with the posts' pool off ($DNDASK_SHM_POOL=0)
    _output_cache.set_cap(previous)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_the_exchange_graph_runs_the_naive_pieces_through_the_files(n, copied_outputs):
    """Built on plain data and run by Dask's synchronous scheduler here (no cluster): the
    posts send exactly the naive plan's non-empty pieces between ranks, the values are
    numpy's, and the MPI graph carries the same lists. With the output cache on and each
    plan built twice (a steady run), every output of these small arrays is copied (each
    piece's pad is COPIED)."""
    comm = ht.Comm([f"tcp://rank-{r}:1" for r in range(n)])  # plain data: nobody answers
    shape = (5, 4)
    g = global_data(shape)
    tag = f"{_transport.process_tag()}pure"
    try:
        for src, dst in itertools.product(distributions(shape, comm), repeat=2):
            if src.chunks(shape) == dst.chunks(shape):
                continue
            x = da.from_array(g, chunks=src.chunks(shape))
            plan = _layout.plan_relayout(shape, src, dst)
            if copied_outputs:  # outputs are copied from the second relayout of a run on
                _distribution.build_shm(x, plan, tag)
            y = _distribution.build_shm(x, plan, tag)[0]
            posts, added = exchange_tasks(y, x)
            expected: dict = {}
            pads: dict = {}  # where each piece starts in its output, modulo a page (or COPIED)
            out_chunks = dst.chunks(shape)
            for r, pieces in enumerate(naive_pieces(shape, src, dst)):
                lshape = [c[r] if a == dst.split else c[0] for a, c in enumerate(out_chunks)]
                mapped = all(n == 1 for n in lshape[: plan.axis]) and not copied_outputs
                row = int(np.prod(lshape[plan.axis + 1 :])) * g.itemsize
                at = 0
                for s, box in pieces:
                    pads[s, r] = at * row % _transport.PAGE if mapped else _transport.COPIED
                    at += box[plan.axis][1] - box[plan.axis][0]
                    if s != r and all(hi > lo for lo, hi in box):
                        expected.setdefault(s, []).append((r, box))
            assert sorted(posts) == sorted(expected) and len(added) <= 2 * n + 1
            chunks = {s: g[tuple(sl)] for s, sl in enumerate(da.core.slices_from_chunks(x.chunks))}
            for s, post in posts.items():
                outgoing = list(post.args[-1])
                assert [r for r, *_ in outgoing] == [r for r, _ in expected[s]]
                assert [pad for *_, pad in outgoing] == [pads[s, r] for r, _ in expected[s]]
                for (_, index, _), (_, box) in zip(outgoing, expected[s], strict=True):
                    chunk = chunks[s] if src.split is not None else g
                    piece = chunk if index is None else chunk[index]
                    np.testing.assert_array_equal(piece, chunk[tuple(slice(*b) for b in box)])
            got = y.compute(scheduler="sync", optimize_graph=False)
            np.testing.assert_array_equal(got, g)
            assert [c for c in y.chunks] == list(dst.chunks(shape))
            mpi = _distribution.build_mpi(x, plan, f"{_transport.MPI_MARK}pure")[0]
            mpi_posts, mpi_added = exchange_tasks(mpi, x)
            assert {s: list(p.args[-1]) for s, p in mpi_posts.items()} == {
                s: [e[:2] for e in p.args[-1]] for s, p in posts.items()
            }  # the same pieces; only shm's posts write at a page offset
            specs = [list(t.args[2]) for t in collects(added, _transport.collect)]
            for lists in [p.args[-1] for p in posts.values()] + [
                t.args[2] for t in collects(added, _transport.collect)
            ]:  # what a worker gets: the same list, by index, unpickled, and one token
                assert [lists[i] for i in range(-len(lists), 0)] == list(lists) == lists
                assert pickle.loads(pickle.dumps(lists)) == list(lists)
                assert tokenize(lists) == tokenize(pickle.loads(pickle.dumps(lists)))
            mpi_specs = [list(t.args[2]) for t in collects(mpi_added, _mpi_transport.collect)]
            assert mpi_specs == [
                [("mpi", *e[1:4]) if e[0] == "shm" else e for e in spec] for spec in specs
            ]
    finally:
        _transport.remove_segments(tag)


def test_a_relayout_copies_its_outputs_only_in_a_steady_run():
    """SteadyRuns: the second plan of the same outputs within the window copies them (up to
    the limit); a first plan, other sizes, other ranks, a later plan, no cache: mapped."""
    previous = _output_cache.set_cap(64 << 20)
    try:
        limit = _transport.copy_limit()
        if not limit:
            pytest.skip("the posts' pool is off ($DNDASK_SHM_POOL=0)")
        comm = ht.Comm([f"tcp://rank-{r}:1" for r in range(3)])
        other = ht.Comm([f"tcp://other-{r}:1" for r in range(3)])

        def plan(rows, c=comm):
            src = _layout.Distribution.balanced((rows, 64), 0, c)
            return _layout.plan_relayout(
                (rows, 64), src, _layout.Distribution.balanced((rows, 64), 1, c)
            )

        steady = _distribution.SteadyRuns(window=60.0, size=2)
        assert steady.copy_below(plan(99), 4, "t") == 0  # first
        assert steady.copy_below(plan(99), 4, "t") == limit  # again: steady
        assert steady.copy_below(plan(99), 8, "t") == 0  # float64: other sizes
        assert steady.copy_below(plan(99, other), 4, "t") == 0  # other ranks
        assert steady.copy_below(plan(99), 4, "u") == 0  # another cluster
        assert steady.copy_below(plan(99), 4, "t") == 0  # forgotten: 2 entries kept
        assert steady.copy_below(plan(99), 4, "t") == limit
        steady.window = 0.0
        assert steady.copy_below(plan(99), 4, "t") == 0  # too long ago
        steady.window = 60.0
        _output_cache.set_cap(0)
        assert steady.copy_below(plan(99), 4, "t") == 0  # no cache: nothing to copy into
    finally:
        _output_cache.set_cap(previous)


def test_a_resplit_exchange_at_1024_ranks_is_2p_plus_1_tasks_of_columns(copied_outputs):
    """0 -> 1 on 1024 ranks (built, not run): P**2 pieces, 2P + 1 tasks, lists as columns.

    Each piece's pad: its byte in its output modulo a page, or COPIED (every output copied)."""
    p = 1024
    comm = ht.Comm([f"tcp://rank-{r}:1" for r in range(p)])  # plain data: nobody answers
    shape = (4 * p + 3, 2 * p + 1)  # rows: 5 on ranks 0-2, else 4; columns: 3 on rank 0, else 2
    x = da.zeros(shape, chunks=(_layout.balanced_counts(shape[0], p), shape[1]), dtype=np.float32)
    src, dst = (
        _layout.Distribution(0, x.chunks[0], comm),
        _layout.Distribution.balanced(shape, 1, comm),
    )
    plan = _layout.plan_relayout(shape, src, dst)
    if copied_outputs:  # outputs are copied from the second relayout of a run on
        _distribution.build_shm(x, plan, "pure")
    y = _distribution.build_shm(x, plan, "pure")[0]
    posts, added = exchange_tasks(y, x)
    assert len(added) == 2 * p + 1 and sorted(posts) == list(range(p))
    assert y.name == _distribution.build_shm(x, plan, "pure")[0].name  # named by the plan
    assert all(len(post.args[-1]) == p - 1 for post in posts.values())

    def pad(at: int) -> int:
        return _transport.COPIED if copied_outputs else at % _transport.PAGE

    assert list(posts[3].args[-1])[:2] == [  # rank 3's rows start at row 15 of every output
        (0, (slice(None), slice(0, 3)), pad(15 * 3 * 4)),
        (1, (slice(None), slice(3, 5)), pad(15 * 2 * 4)),
    ]
    collect = added[(y.name, 0, 5)]
    spec = list(collect.args[2])
    assert len(spec) == p and len(collect.args[1].args) == 1  # one kept chunk: rank 5 own rows
    assert spec[5] == ("kept", 0, (slice(None), slice(11, 13)), 4)
    assert spec[:2] == [("shm", 0, 5, (5, 2), pad(0)), ("shm", 1, 5, (5, 2), pad(5 * 2 * 4))]
    assert spec[-1] == ("shm", p - 1, 5, (4, 2), pad((shape[0] - 4) * 2 * 4))


def test_posts_and_collects_run_on_their_ranks(client, comm_of):
    comm = comm_of(4)
    a = ht.array(global_data((8, 12)), split=0, comm=comm).persist_(wait=True)
    b = a.resplit(1, method="shm")
    posts = post_keys(b)
    assert len(posts) == 4
    with distributed.get_task_stream(client) as stream:
        b.persist_(wait=True)
    ran = {str(t["key"]): t["worker"] for t in stream.data}
    assert {str(k): ran.get(str(k)) for k in posts} == {str(k): comm.workers[k[1]] for k in posts}
    chunks = {str(k): comm.workers[r] for r, k in enumerate(b._chunk_keys())}
    assert {k: ran.get(k) for k in chunks} == chunks
    np.testing.assert_array_equal(b.numpy(), global_data((8, 12)))


def _mapped_chunk(key, dask_worker) -> tuple[bool, bool]:
    """On a worker: is chunk ``key`` in its own mapping, and does a segment map into it?"""
    chunk = dask_worker.data[key]
    return isinstance(chunk.base, mmap.mmap), _maps_of(_transport.SHM_DIR, chunk) > 0


@NEEDS_MAPPING
@pytest.mark.parametrize(("src", "dst"), [(0, 1), (0, None)])
def test_a_big_resplit_maps_its_pieces_into_every_output(client, comm_of, src, dst, shm_pool_cap):
    """Pieces of 300 KiB, no pool: each output chunk holds the posts' pages, not a copy."""
    shm_pool_cap(0)
    comm = comm_of(4)
    data = global_data((4096, 300), np.float32)
    a = ht.array(data, split=src, comm=comm).persist_(wait=True)
    lazy = a.resplit(dst, method="shm")  # its graph names the relayout's segments
    b = lazy.copy().persist_(wait=True)
    np.testing.assert_array_equal(b.numpy(), data)
    keys = b._chunk_keys()
    for rank, key in enumerate(keys):
        mapped = client.run(_mapped_chunk, key, workers=[comm.workers[rank]])
        assert list(mapped.values()) == [(True, True)], f"rank {rank}"
    a.resplit_(dst, method="shm").persist_(wait=True)
    a[:5] = -1.0  # a write into a mapped chunk stays in that chunk (copy-on-write)
    expected = data.copy()
    expected[:5] = -1.0
    np.testing.assert_array_equal(a.numpy(), expected)
    np.testing.assert_array_equal(b.numpy(), data)
    assert segments_gone(_transport.cluster_tag(client), lazy) == []


def _cached_output(key, dask_worker) -> tuple[bool, int]:
    """On a worker: does chunk ``key`` rest on a buffer of the output cache; bytes reused."""
    chunk = dask_worker.data[key]
    while chunk is not None and not isinstance(chunk, _output_cache.Lease):
        chunk = getattr(chunk, "base", None)
    return chunk is not None, _output_cache.process_cache().reused


def _holds_any(keys, dask_worker) -> bool:
    return any(k in dask_worker.data for k in keys)


def test_a_steady_run_of_relayouts_reuses_the_outputs_memory(client, comm_of):
    """Outputs of 2 MiB (consecutive rows): the first relayout maps its pieces; from the
    second on (a steady run) the outputs are copied, on buffers of the workers' output
    caches, and each one after that writes into the buffers the previous one left."""
    if _transport.copy_limit() == 0:
        pytest.skip("the output cache or the posts' pool is off ($DNDASK_OUTPUT_CACHE=0?)")
    comm = comm_of(4)
    data = global_data((2048, 1028), np.float32)  # a shape no other test relayouts
    a = ht.array(data, split=0, comm=comm).persist_(wait=True)
    cached, reused = [], []
    for _ in range(4):
        b = a.resplit(1, method="shm").persist_(wait=True)
        np.testing.assert_array_equal(b.numpy(), data)
        keys = b._chunk_keys()
        seen = [
            next(iter(client.run(_cached_output, key, workers=[comm.workers[r]]).values()))
            for r, key in enumerate(keys)
        ]
        cached.append([c for c, _ in seen])
        reused.append([n for _, n in seen])
        del b
        deadline = time.monotonic() + 30
        while any(client.run(_holds_any, keys, workers=comm.workers).values()):
            assert time.monotonic() < deadline, "the workers kept the released output"
            time.sleep(0.05)
    assert cached == [[False] * 4] + [[True] * 4] * 3
    grew = np.diff(np.array(reused), axis=0)[1:]  # bytes reused per worker in repeats 3 and 4
    assert (grew >= 2048 * 257 * 4).all(), reused


def test_data_goes_by_file_not_by_socket(client, comm_of):
    """Dask's transfer logs see only the control metadata; the collects log the bytes."""
    comm = comm_of(3)
    shape = (13, 3000)
    a = ht.random.rand(*shape, dtype=ht.float64, split=0, comm=comm).persist(wait=True)
    since = time.time()

    def logs(dask_worker, since=since):
        delay = dask_worker.scheduler_delay  # as conftest.received_bytes reads the log
        log = dask_worker.transfer_incoming_log
        fresh = [e for e in log if e.get("local_start", e["start"] - delay) >= since]
        data = sum(n for e in fresh for k, n in e["keys"].items() if not _transport.is_control(k))
        by_file = sum(e["total"] for e in _transport.RECEIVED if e["start"] >= since)
        return data, by_file

    b = a.resplit(1, method="shm").persist(wait=True)
    seen = client.run(logs, workers=list(comm.workers))
    rows, cols = _layout.balanced_counts(shape[0], 3), _layout.balanced_counts(shape[1], 3)
    kept = sum(r * c for r, c in zip(rows, cols, strict=True))
    assert sum(d for d, _ in seen.values()) == 0
    assert sum(f for _, f in seen.values()) == (shape[0] * shape[1] - kept) * 8
    np.testing.assert_array_equal(b.numpy(), a.numpy())


def test_the_report_names_the_transport_and_the_bytes_per_pair(comm_of):
    comm = comm_of(3)
    a = ht.array(global_data((6, 4), np.float32), split=0, comm=comm)
    x, src = a.to_dask(), a.distribution
    dst = _layout.Distribution.balanced(a.shape, 1, comm)
    report = _distribution.relayout_plan(x, src, dst, "shm")[0]
    assert report.transport == "shm"
    # rank s holds rows 2s:2s+2; rank d gets columns of width 2, 1, 1: 4 bytes a value
    widths = [2, 1, 1]
    expected = {(s, d): 2 * widths[d] * 4 for s in range(3) for d in range(3) if s != d}
    assert report.pairs == expected and report.moved == sum(expected.values())
    assert _distribution.relayout_plan(x, src, dst, "tasks")[0] == ("tasks", expected)
    assert _distribution.relayout_plan(x, src, dst, "p2p")[0].transport == "p2p"
    assert _distribution.relayout_plan(x, src, src, "shm")[0] == ("none", {})


@pytest.mark.timeout(120)
def test_interleaved_chained_and_busy_relayouts_finish(client, comm_of):
    """Relayouts submitted together, one after another, and one behind a rank's long task."""
    comm = comm_of(4)
    g = global_data((12, 8))
    a = ht.array(g, split=0, comm=comm)
    b = ht.array(g * 2, split=1, comm=comm)
    x = slow_on_rank(a.to_dask(), 1, 1.0)
    slow = _dndarray.from_dask(x, 0, comm, parents=(a,)).resplit(1, method="shm")
    y = b.resplit(0, method="shm")  # interleaved with slow's
    chain = slow.resplit(None, method="shm").resplit(0, method="shm").resplit(1, method="shm")
    mixed = (slow + b).resplit(0, method="shm") + y
    with distributed.get_task_stream(client) as stream:
        got = values_of([slow, y, chain, mixed])
    for value, expected in zip(got, [g, g * 2, g, g + 4 * g], strict=True):
        np.testing.assert_array_equal(value, expected)
    # rank 1 busy moves no post and no collect (an output chunk) to another rank's worker
    ran = {str(t["key"]): t["worker"] for t in stream.data}
    pinned = {str(k): comm.workers[k[1]] for x in (slow, y, chain, mixed) for k in post_keys(x)}
    # 20 posts of 6 relayouts (only ranks that send post: 3 into None, 1 out of it)
    assert len(pinned) == 20
    assert {k: ran.get(k) for k in pinned} == pinned
    # the 16 output chunks (each run with its collect as the call's result task i: array
    # i // 4, chunk i % 4)
    results = {t["key"][1]: t["worker"] for t in stream.data if is_result(t["key"])}
    assert results == {i: comm.workers[i % 4] for i in range(16)}
    assert segments_gone(_transport.cluster_tag(client), slow, y, chain, mixed) == []


# ----------------------------------------------------------------- the choice
def test_none_and_the_environment_pick_the_transport(comm_of, monkeypatch):
    comm = comm_of(3)
    a = ht.array(global_data((6, 6)), split=0, comm=comm)
    x, src = a.to_dask(), a.distribution
    dst = _layout.Distribution.balanced(a.shape, 1, comm)
    monkeypatch.delenv("DNDASK_RELAYOUT", raising=False)
    assert _distribution.relayout_plan(x, src, dst)[0].transport == "shm"  # one host
    for method in ("tasks", "p2p", "shm"):
        monkeypatch.setenv("DNDASK_RELAYOUT", method)
        assert _distribution.relayout_plan(x, src, dst)[0].transport == method
        assert _distribution.relayout_plan(x, src, dst, "tasks")[0].transport == "tasks"
    monkeypatch.setenv("DNDASK_RELAYOUT", "MPI")
    with pytest.raises(
        ValueError, match="`DNDASK_RELAYOUT` must be 'mpi', 'shm', 'tasks' or 'p2p', got 'MPI'"
    ):
        a.resplit(1)


def test_falls_back_when_shared_memory_is_too_small(comm_of, monkeypatch, caplog):
    comm = comm_of(3)
    g = global_data((6, 6))
    a = ht.array(g, split=0, comm=comm)
    monkeypatch.setenv("DNDASK_SHM_RESERVE", str(_transport.free_bytes() + 2**30))
    with caplog.at_level(logging.WARNING, logger="dndask"):
        b = a.resplit(1, method="shm")
    assert not post_keys(b)
    assert any(
        r.name == "dndask"
        and "/dev/shm has" in r.getMessage()
        and "using 'tasks'" in r.getMessage()
        for r in caplog.records
    )
    np.testing.assert_array_equal(b.numpy(), g)
    monkeypatch.setenv("DNDASK_SHM_RESERVE", "0")
    assert post_keys(a.resplit(1, method="shm"))
    monkeypatch.setenv("DNDASK_SHM_RESERVE", "lots")
    with pytest.raises(
        ValueError, match="`DNDASK_SHM_RESERVE` must be a non-negative int, got 'lots'"
    ):
        a.resplit(1, method="shm")


@pytest.mark.parametrize("method", ["MPI", "SHM", 1])
def test_a_bad_method_raises_and_leaves_the_array(comm_of, method):
    a = ht.zeros((4, 3), split=0, comm=comm_of(2))
    name = a.to_dask().name
    match = rf"`method` must be None, 'mpi', 'shm', 'tasks' or 'p2p', got {method!r}"
    with pytest.raises(ValueError, match=match):
        a.resplit_(1, method=method)
    with pytest.raises(ValueError, match=match):
        a.redistribute_(method=method)
    assert a.split == 0 and a.to_dask().name == name


def test_shm_refuses_a_comm_that_is_not_on_one_host():
    comm = ht.Comm([f"tcp://rank-{r}:1" for r in range(2)])  # plain data: nobody answers
    x = da.zeros((4, 4), chunks=((2, 2), 4))
    src = _layout.Distribution(0, (2, 2), comm)
    dst = _layout.Distribution.balanced(x.shape, 1, comm)
    with pytest.raises(ValueError, match="`method` 'shm' needs every rank on one host"):
        _distribution.relayout_plan(x, src, dst, "shm")
    assert _distribution.relayout_plan(x, src, dst)[0].transport == "tasks"


# -------------------------------------------------------------------- cleanup
def _pool_holders(dask_worker=None) -> list:
    """``(path, holder)`` of each segment of this worker's pool."""
    return [(seg.path, seg.holder) for seg in _shm_pool.process_pool().segments]


def _busy_pool_segments(client, token: str | None = None) -> list:
    """``(worker, path)`` of the busy pool segments (those of relayout ``token``)."""
    return [
        (w, p)
        for w, held in client.run(_pool_holders).items()
        for p, h in held
        if h and token in (None, h[0][1])
    ]


@pytest.mark.parametrize("pooled", [False, True], ids=["files", "pool"])
def test_no_segment_is_left_after_relayouts(client, comm_of, shm_pool_cap, pooled):
    """Chained and culled relayouts: no file is left, and every pool segment is free again."""
    shm_pool_cap((64 << 20) if pooled else 0)
    tag = _transport.cluster_tag(client)
    comm = comm_of(5)
    g = global_data((10, 9))
    a = ht.array(g, split=0, comm=comm).persist_(wait=True)
    b = a.resplit(1, method="shm")
    c = b.resplit(None, method="shm").resplit(0, method="shm")
    np.testing.assert_array_equal(c.numpy(), g)
    part = b.resplit(0, method="shm")[3]  # culled: only some collects run
    np.testing.assert_array_equal(part.numpy(), g[3])
    assert segments_gone(tag, c, part) == []
    if pooled:  # small pieces: the posts use the pool
        assert any(client.run(_pool_holders).values()), "no post used the pool"
    wait_until(lambda: not _busy_pool_segments(client), 20, "the pool segments to be free")


class _SlowToSlice(np.ndarray):
    """A chunk whose every slice takes 1 s: its post is still running when the compute goes."""

    def __getitem__(self, index):
        time.sleep(1.0)
        return np.asarray(self)[index]


def test_a_post_cancelled_while_it_runs_leaves_no_segment(client, comm_of):
    """The scheduler cannot stop a running post; the worker drops its result when it ends."""
    tag = _transport.cluster_tag(client)
    comm = comm_of(3)
    a = ht.array(global_data((6, 6)), split=0, comm=comm).persist_(wait=True)
    x = a.to_dask().map_blocks(lambda block: block.view(_SlowToSlice), dtype=a.dtype)
    b = _dndarray.from_dask(x, 0, comm, parents=(a,)).resplit(1, method="shm")
    posts = set(post_keys(b))
    started = b.persist()  # not waited for

    def posts_on_workers(dask_worker, state=None):
        tasks = dask_worker.state.tasks
        return [k for k in tasks if k in posts and state in (None, tasks[k].state)]

    def a_post_running():
        return any(client.run(posts_on_workers, state="executing").values())

    wait_until(a_post_running, 60, "a post to run")
    time.sleep(0.2)  # the running posts are slicing their first piece
    client.cancel(distributed.futures_of(started.to_dask()))  # they still run to their end
    # the case under test: a post cancelled while it runs (it has 1.8 s left to slice)
    wait_until(
        lambda: any(client.run(posts_on_workers, state="cancelled").values()),
        10,
        "a running post to be cancelled",
    )
    wait_until(lambda: not any(client.run(posts_on_workers).values()), 60, "the posts to end")
    assert segments_gone(tag, b) == []


@pytest.mark.parametrize("pooled", [False, True], ids=["files", "pool"])
def test_a_relayout_cancelled_before_its_barrier_leaves_no_segment(
    client, comm_of, shm_pool_cap, pooled
):
    """Ranks 0 and 1 have posted, rank 2's input is slow: the compute is released then.
    Their files go; with the pool, their pool segments are free again."""
    shm_pool_cap((64 << 20) if pooled else 0)
    tag = _transport.cluster_tag(client)
    comm = comm_of(3)
    a = ht.array(global_data((6, 6)), split=0, comm=comm).persist_(wait=True)
    # rank 2 is held back long enough for the polls below (with the pool, each is a call to
    # every worker) to see ranks 0 and 1's posts on a loaded machine (2 s was too short there)
    x = slow_on_rank(a.to_dask(), 2, 6.0)
    b = _dndarray.from_dask(x, 0, comm, parents=(a,)).resplit(1, method="shm")
    token = post_keys(b)[0][0].rsplit("-", 1)[1]

    def posted() -> int:  # ranks 0 and 1 post two pieces each: 4 files, or 2 pool segments
        if pooled:
            return 2 * len(_busy_pool_segments(client, token))
        return len(_transport.segments(tag, token))

    started = b.persist()  # not waited for
    wait_until(lambda: posted() == 4, 60, "ranks 0 and 1's posts")
    del started  # the client releases the compute, as a dropped result does: no barrier
    gc.collect()
    assert segments_gone(tag, b) == []
    wait_until(lambda: not _busy_pool_segments(client, token), 20, "the segments to be free")


def test_a_failed_relayout_leaves_no_segment(client, comm_of):
    tag = _transport.cluster_tag(client)
    comm = comm_of(3)
    a = ht.array(global_data((6, 6)), split=0, comm=comm)

    def fail_on_rank_2(block, block_info=None):
        if block_info[0]["chunk-location"][0] == 2:
            time.sleep(0.5)  # the other posts write first
            raise RuntimeError("rank 2 failed")
        return block

    x = a.to_dask().map_blocks(fail_on_rank_2, dtype=a.dtype)
    bad = _dndarray.from_dask(x, 0, comm, parents=(a,))
    failing = bad.resplit(1, method="shm")
    with pytest.raises(RuntimeError, match="rank 2 failed"):
        failing.numpy()
    assert segments_gone(tag, failing) == []


class _Loop:
    """The two calls the janitor makes on the scheduler's event loop, recorded."""

    def __init__(self):
        self.now, self.later = [], []

    def add_callback(self, fn, *args):
        self.now.append((fn, args))

    def call_later(self, delay, fn, *args):
        self.later.append((delay, fn, args))


@pytest.mark.parametrize(
    ("start", "again"),
    [("waiting", True), ("processing", True), ("no-worker", True), ("memory", False)],
)
def test_a_relayout_dropped_in_mid_flight_is_swept_again_later(start, again):
    """A post may end between the sweep and its worker hearing it is unwanted: sweep again."""
    janitor = _transport.ShmJanitor()
    scheduler = types.SimpleNamespace(tasks={}, loop=_Loop())
    janitor.start(scheduler)
    barrier = f"{_transport.BARRIER_PREFIX}77xabc-tok"
    janitor.transition(barrier, start, "released")
    (sweep,) = janitor.pending[None]
    assert sweep[:2] == ("77xabc", "tok") and len(scheduler.loop.now) == 1
    if not again:  # done with: every post had ended before the barrier ran
        assert scheduler.loop.later == []
        return
    assert [d for d, _, _ in scheduler.loop.later] == list(janitor.resweep_after)
    janitor.pending.clear()
    for _, fn, args in scheduler.loop.later:
        fn(*args)
    # everything written before each later moment: a post that started after the first
    # sweep (queued on its worker when the compute was dropped) is swept too
    again = janitor.pending[None]
    assert [s[:2] for s in again] == [sweep[:2]] * 2 and all(s[2] >= sweep[2] for s in again)
    # wanted again by then (resubmitted): the flush drops the repeated sweeps
    scheduler.tasks[barrier] = types.SimpleNamespace(state="waiting")
    assert janitor._wanted(sweep[:2])
