"""The seed notebook "A look behind the curtain: some internals for the experts", on dndask.

Heat runs each cell on 4 MPI processes; here the driver runs the cells once and
per-rank work goes through ``ht.per_rank``. Run it with ``make demo`` or::

    python examples/internals.py          # 4 workers, or $DNDASK_WORKERS

The embedded cluster starts worker processes, so the code sits under
``if __name__ == "__main__":``.
"""

import numpy as np
import torch

import dndask as ht


def one_then_balanced(n: int, size: int) -> list[int]:
    """Rank 0 holds one row, the others share the rest (the notebook's maps on 4 ranks)."""
    if size == 1:
        return [n]
    q, r = divmod(n - 1, size - 1)
    return [1] + [q + 1 if i < r else q for i in range(size - 1)]


def main() -> None:
    ht.init()
    ht.random.seed(42)

    # --- the DNDarray is aware of its ranks --------------------------------
    a = ht.random.randn(7, 4, 3, split=0)
    size = a.comm.size
    print(f"a is distributed over {size} processes")
    print(f"a is a distributed {a.ndim}-dimensional array with global shape {a.shape}")
    for rank in range(size):
        lshape = tuple(a.lshape_map[rank].tolist())
        print(f"Rank {rank} holds a slice of DNDarray 'a' with local shape {lshape}")

    # --- distribution map ----------------------------------------------------
    print("lshape_map:")
    print(a.lshape_map)

    # --- redistribute_: same split, new target map ---------------------------
    target_map = a.lshape_map
    target_map[:, a.split] = torch.tensor(one_then_balanced(7, size))  # [1, 2, 2, 2]
    a.redistribute_(target_map=target_map)
    print("lshape_map after redistribute_:")
    print(a.lshape_map)
    print("local array of rank 0 after redistribution:")
    print(a.larray)

    # --- resplit_: a new split axis --------------------------------------------
    a.resplit_(axis=1)
    print("lshape_map after resplit_(axis=1):")
    print(a.lshape_map)

    # --- resplit_(None): every rank holds the whole array -----------------------
    a.resplit_(axis=None)
    print(a)

    # --- and split again (ht.array or resplit_ both work) ------------------------
    a = ht.array(a, split=0)
    print(f"split again: split={a.split}, lshape_map={a.lshape_map.tolist()}")

    # --- joining per-rank data with is_split ------------------------------------
    local = ht.per_rank(lambda rank: np.random.default_rng(rank).random((3, 4)))
    a_0 = ht.array(local, is_split=0)
    print(f"is_split=0 joins {size} local (3, 4) arrays into shape {a_0.shape}")
    a_1 = ht.array(local, is_split=1)
    print(f"is_split=1 joins them into shape {a_1.shape}")

    # --- exercise: redistribution vs resplit --------------------------------------
    A = ht.random.randn(10, 4, split=0)
    B = A.copy()
    B.resplit_(axis=1)
    target_map = A.lshape_map.copy()
    target_map[:, A.split] = torch.tensor(one_then_balanced(10, size))  # [1, 3, 3, 3]
    C = A.copy()
    C.redistribute_(target_map=target_map)
    for rank in range(size):
        print(f"--- Rank {rank} ---")
        print(f"A (Original): Split={A.split}, lshape={tuple(A.lshape_map[rank].tolist())}")
        print(
            f"B (Resplit A to axis=1): Split={B.split}, lshape={tuple(B.lshape_map[rank].tolist())}"
        )
        print(f"C (Redistribute A): Split={C.split}, lshape={tuple(C.lshape_map[rank].tolist())}")
    same = bool((A.numpy() == B.numpy()).all() and (A.numpy() == C.numpy()).all())
    print(f"A, B and C hold the same values: {same}")
    ht.shutdown()


if __name__ == "__main__":
    main()
