"""Run under ``mpirun -np 6``: relayouts over the MPI transport (tests/test_mpi_transport.py;
across simulated nodes in tests/multinode/test_multinode.py, where shm is not checked).

Values against numpy for resplit_ and redistribute_ on every split, with empty ranks and
on a sub-comm; the transport each relayout used; the bytes Dask's transfer logs saw
against the bytes MPI moved; interleaved relayouts, a chain and a busy rank; a culled
relayout; the sample sort's exchange over MPI; and that the posted pieces are dropped
afterwards. Prints one line per check.
"""

import time

import numpy as np
import torch

import dndask as ht
from dndask import _distribution, _dndarray, _hosts, _layout, _mpi_transport, _transport


def values_of(arrays):
    client = arrays[0].comm.client
    return client.gather(client.compute(list(arrays)))


def transports(x: ht.DNDarray) -> set[str]:
    """The transports of the relayouts in ``x``'s graph, by their control keys' tags."""
    tags = set()
    for key in dict(x.to_dask().dask):
        name = key[0] if isinstance(key, tuple) else key
        if isinstance(name, str) and name.startswith(_transport.POST_PREFIX):
            tag = name[len(_transport.POST_PREFIX) :]
            tags.add("mpi" if tag.startswith(_transport.MPI_MARK) else "shm")
    return tags


def redistributed(a, counts, method=None):
    target = a.lshape_map
    target[:, a.split] = torch.tensor(counts)
    return a.redistribute(target_map=target, method=method)


def check_values(comm, method=None) -> int:
    checked = 0
    for shape in ((7, 5), (3, 0, 4), (13, 6)):
        g = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
        for split in (None, *range(len(shape))):
            a = ht.array(g, split=split, comm=comm).persist_(wait=True)
            outs = []
            for axis in (None, *range(len(shape))):
                b = a.resplit(axis, method=method)
                outs.append((b, axis))
            if split is not None:
                n = shape[split]
                empty_ranks = [0] * comm.size
                empty_ranks[-1] = n
                if comm.size > 2 and n:
                    empty_ranks[1], empty_ranks[-1] = 1, n - 1
                for counts in (empty_ranks, [n, *[0] * (comm.size - 1)]):
                    b = redistributed(a, counts, method)
                    assert b.lshape_map[:, split].tolist() == counts
                    outs.append((b, split))
                    back = b.redistribute(method=method)  # balanced again, from empty ranks
                    outs.append((back, split))
                    other = (split + 1) % len(shape)
                    outs.append((b.resplit(other, method=method), other))
            for (b, axis), value in zip(outs, values_of([b for b, _ in outs]), strict=True):
                assert b.split == axis
                np.testing.assert_array_equal(value, g)
                checked += 1
    return checked


def moved_and_logged(client, comm):
    """A persisted 0 -> 1 resplit: the plan's bytes, Dask's logged bytes, MPI's bytes."""
    shape = (64, 6000)
    a = ht.random.rand(*shape, dtype=ht.float64, split=0, comm=comm).persist_(wait=True)
    dst = _layout.Distribution.balanced(a.shape, 1, comm)
    report = _distribution.relayout_plan(a.to_dask(), a.distribution, dst)[0]
    since = time.time()

    def logs(dask_worker, since=since):
        delay = dask_worker.scheduler_delay
        fresh = [e for e in dask_worker.transfer_incoming_log if e["start"] - delay >= since]
        data = {
            str(k): n for e in fresh for k, n in e["keys"].items() if not _transport.is_control(k)
        }
        control = sum(n for e in fresh for k, n in e["keys"].items() if _transport.is_control(k))
        by_mpi = sum(e["total"] for e in _transport.RECEIVED if e["start"] >= since)
        return data, control, by_mpi

    b = a.resplit(1)
    used = transports(b)
    b.persist_(wait=True)
    seen = client.run(logs, workers=list(comm.workers))
    np.testing.assert_array_equal(b.numpy(), a.numpy())
    return report, used, seen


def busy_interleaved_chain(comm):
    g = np.arange(12 * 8, dtype=np.float64).reshape(12, 8)
    a = ht.array(g, split=0, comm=comm)
    b = ht.array(g * 2, split=1, comm=comm)

    def busy_rank_1(block, block_info=None):
        if block_info[0]["chunk-location"][0] == 1:
            time.sleep(2.0)
        return block

    x = a.to_dask().map_blocks(busy_rank_1, dtype=a.dtype)
    slow = _dndarray.from_dask(x, 0, comm, parents=(a,)).resplit(1)
    y = b.resplit(0)  # interleaved with slow's
    chain = slow.resplit(None).resplit(0).resplit(1)
    mixed = (slow + b).resplit(0) + y
    arrays = [slow, y, chain, mixed]
    assert all(transports(z) == {"mpi"} for z in arrays), [transports(z) for z in arrays]
    start = time.monotonic()
    got = values_of(arrays)
    for value, expected in zip(got, [g, g * 2, g, g + 4 * g], strict=True):
        np.testing.assert_array_equal(value, expected)
    return time.monotonic() - start


def outboxes(dask_worker):
    return {rid: sorted(gens) for rid, gens in _mpi_transport.OUTBOX.items()}


def wait_outboxes_empty(client, timeout=20.0):
    deadline = time.monotonic() + timeout
    while True:
        left = {w: o for w, o in client.run(outboxes).items() if o}
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


if __name__ == "__main__":
    client = ht.init(mpi=True)  # returns on MPI rank 1 only
    comm = ht.get_comm()
    assert comm.size == 4, comm.size

    print("values checked (auto):", check_values(comm))
    sub = comm.subcomm([3, 1, 2])  # MPI ranks 5, 3, 4: not in rank order
    print("values checked (sub-comm):", check_values(sub, "mpi"))

    report, used, seen = moved_and_logged(client, comm)
    dask_bytes = sum(sum(d.values()) for d, _, _ in seen.values())
    mpi_bytes = sum(m for _, _, m in seen.values())
    print(f"transport: {report.transport}; graph: {sorted(used)}")
    print(f"bytes: plan {report.moved}, mpi {mpi_bytes}, dask data {dask_bytes}")
    assert report.transport == "mpi" and used == {"mpi"}
    assert mpi_bytes == report.moved and dask_bytes == 0, seen

    one_host = _hosts.one_host(client, comm.workers)  # across nodes (tests/multinode): no shm
    for method in ("tasks", "shm") if one_host else ("tasks",):
        a = ht.arange(40, split=0, comm=comm).reshape((8, 5))
        b = a.resplit(1, method=method)
        assert transports(b) == ({"shm"} if method == "shm" else set()), transports(b)
        np.testing.assert_array_equal(b.numpy(), np.arange(40).reshape(8, 5))
    also = " and 'shm'" if one_host else ""
    print(f"method='tasks'{also} still work under mpirun")

    data = np.random.default_rng(6).standard_normal(1001)
    a = ht.array(data, split=0, comm=comm)
    sorts = [ht.sort(a), ht.argsort(a, descending=True), ht.sort(a, method="tasks")]
    used = [transports(s[0] if isinstance(s, tuple) else s) for s in sorts]
    assert used == [{"mpi"}, {"mpi"}, set()], used
    got = values_of([s[0] if isinstance(s, tuple) else s for s in sorts])
    np.testing.assert_array_equal(got[0], np.sort(data))
    np.testing.assert_array_equal(data[got[1]], np.sort(data)[::-1])
    np.testing.assert_array_equal(got[2], np.sort(data))
    print(f"sort exchanges: {[sorted(u) for u in used]}")

    took = busy_interleaved_chain(comm)
    print(f"interleaved, chained and busy relayouts finished in {took:.1f} s")

    g = np.arange(10 * 9.0).reshape(10, 9)
    a = ht.array(g, split=0, comm=comm).persist_(wait=True)
    part = a.resplit(1).resplit(0)[3]  # culled: only one collect of the last relayout runs
    np.testing.assert_array_equal(part.numpy(), g[3])
    left = wait_outboxes_empty(client)
    assert not left, left
    print("culled relayout done; no posted piece left on any worker")
