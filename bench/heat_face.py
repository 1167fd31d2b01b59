"""Two costs of the Heat face (``dndask.heat``), printed as one table.

- **torch kernels**: ``ht.exp`` computes every chunk with ``torch.exp`` (the face's
  ``TORCH_KERNEL`` functions, so values are torch's to the last bit, as Heat's); the core's
  ``dndask.exp`` runs numpy's kernel. Both are timed on the same persisted float32 array
  (``ht.exp(x).numpy()`` against ``dndask.exp(x).numpy()``, fetch included), after reporting
  whether the workers have imported torch: the first face call includes that import;
- **unfold rounds**: one round of Heat's ``test_unfold`` loop (``ht.array`` of a torch
  ``unfold`` of a 53³ array, ``ht.unfold`` of the DNDarray, ``ht.equal`` of the two), per
  split of the DNDarray after ``resplit_``, averaged over ``--rounds`` (size, step, axis)
  triples;
- **eager face**: the bench's elementwise chain (ten operations and a sum,
  :func:`bench.workloads.chain`) on the core (lazy: one graph, computed by ``item()``), on
  the face inside ``ht.lazy()`` (the same), on the eager face (each of the eleven results
  persisted at its call, without waiting) and on the face under ``ht.blocking()`` (each
  result waited for), per size of the float64 input.

Example::

    PYTHONPATH=. DNDASK_WORKERS=3 .venv/bin/python -m bench.heat_face
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def _torch_loaded() -> bool:
    return "torch" in sys.modules


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def kernels(n: int, repeats: int) -> None:
    import dndask as dd
    import dndask.heat as ht

    client = dd.current_client()
    x = ht.arange(n, dtype=ht.float32, split=0).persist_(wait=True)
    before = sorted(set(client.run(_torch_loaded).values()))
    face = [_timed(lambda: ht.exp(x).numpy()) for _ in range(repeats)]
    core = [_timed(lambda: dd.exp(x).numpy()) for _ in range(repeats)]
    print(f"exp of {n:,} float32 on {x.comm.size} ranks (fetch included), seconds per call")
    print(f"  workers had imported torch before: {before}")
    print("  face (torch kernel): " + ", ".join(f"{t:.3f}" for t in face))
    print("  core (numpy kernel): " + ", ".join(f"{t:.3f}" for t in core))


def unfold_rounds(rounds: int) -> None:
    import torch

    import dndask.heat as ht

    n = 53
    x = torch.arange(n**3).reshape(n, n, n)
    y = ht.array(x.clone(), ht.int)
    triples = [(size, step, dim) for size in (2, 5, 8) for step in (1, 7, 20) for dim in range(3)]
    triples = triples[:rounds]
    print(f"unfold-and-compare rounds of a {n}^3 array, ms per round ({len(triples)} rounds)")
    for split in (None, 0, 1, 2):
        y.resplit_(split)
        parts = [0.0, 0.0, 0.0]
        for size, step, dim in triples:
            t0 = time.perf_counter()
            u = ht.array(x.unfold(dim, size, step))
            t1 = time.perf_counter()
            v = ht.unfold(y, dim, size, step)
            t2 = time.perf_counter()
            assert ht.equal(u, v)
            t3 = time.perf_counter()
            for i, dt in enumerate((t1 - t0, t2 - t1, t3 - t2)):
                parts[i] += dt
        a, f, e = (p / len(triples) * 1e3 for p in parts)
        print(
            f"  split {split}: array {a:.1f}, unfold {f:.1f}, equal {e:.1f}, total {a + f + e:.1f}"
        )


def _chain_times(mib: float, repeats: int) -> tuple[str, dict]:
    import dndask as dd
    import dndask.heat as ht

    from .workloads import chain

    cols = 256
    rows = max(1, int(mib * 2**20 / 8 / cols))
    core = dd.ones((rows, cols), split=0).persist_(wait=True)
    face = ht.ones((rows, cols), dtype=ht.float64, split=0)
    ht.wait(face)

    def lazy_face():
        with ht.lazy():
            return chain(face, ht.abs).item()

    def blocking_face():
        with ht.blocking():
            return chain(face, ht.abs).item()

    sides = {
        "core": lambda: chain(core).item(),
        "face lazy": lazy_face,
        "face eager": lambda: chain(face, ht.abs).item(),
        "face blocking": blocking_face,
    }
    for fn in sides.values():
        fn()  # warm: imports, kernels
    times = {name: sorted(_timed(fn) for _ in range(repeats)) for name, fn in sides.items()}
    return f"{mib:g} MiB ({rows}x{cols}) on {core.comm.size} ranks", times


def eager_chain(sizes_mib: list[float], repeats: int) -> None:
    print("elementwise chain (10 ops + sum) of float64, split 0, seconds per call (median)")
    for mib in sizes_mib:
        label, times = _chain_times(mib, repeats)
        line = ", ".join(f"{name} {t[len(t) // 2]:.3f}" for name, t in times.items())
        print(f"  {label}: {line}", flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=3 * 10**6, help="elements of the exp array")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=27)
    parser.add_argument(
        "--chain-mib", type=float, nargs="+", default=[1.0, 64.0], help="sizes of the chain input"
    )
    parser.add_argument(
        "--parts", default="kernels,unfold,eager", help="comma-separated: kernels, unfold, eager"
    )
    args = parser.parse_args(argv)
    parts = set(args.parts.split(","))
    print(f"load average {os.getloadavg()}")
    if "kernels" in parts:
        kernels(args.n, args.repeats)
    if "unfold" in parts:
        unfold_rounds(args.rounds)
    if "eager" in parts:
        eager_chain(args.chain_mib, max(args.repeats, 5))
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
