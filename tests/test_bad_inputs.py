"""The bad-input catalogue: wrong calls across the public API, one table row each.

Every row says which call is wrong, the exception it must raise and a ``match``
pattern that names the offending argument (in backticks, as dndask's messages
do). The test also checks that the call left every input array exactly as it
was (dask graph name, split, ``lshape_map`` and values, the values read back
from the workers, so a half-done write to a chunk would show) and that no
global state moved (random generator state, default comm, client).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from conftest import values_of

import dndask as ht
import dndask.heat as hf
from dndask import _xp


@dataclass(frozen=True)
class Bad:
    """One wrong call: ``call(inputs)`` must raise ``exc`` matching ``match``."""

    call: Callable[[SimpleNamespace], object]
    exc: type[BaseException]
    match: str
    inputs: tuple[str, ...] = ("a",)


def counts_map(x: ht.DNDarray, counts) -> torch.Tensor:
    target = x.lshape_map
    target[:, x.split] = torch.tensor(counts)
    return target


def setitem(x: ht.DNDarray, key, value) -> None:
    x[key] = value


def iadd(x: ht.DNDarray, value) -> ht.DNDarray:
    x += value
    return x


class _NoChunk:
    """The array type of a GPU backend that cannot run here (nothing is ever one)."""


def without_gpu(call: Callable[[], object], missing: str | None = None):
    """``call()`` with no usable "gpu" backend, whichever is registered (stand-in, CuPy).

    ``missing=None``: no backend at all (CuPy not installed); otherwise a CuPy-like backend
    whose CUDA check answers ``missing`` (CuPy installed, no GPU).
    """
    saved = _xp._BACKENDS.pop("gpu", None)
    if missing is not None:
        _xp.register_backend(
            _xp.Backend("gpu", np, _NoChunk, np.asarray, np.asarray, lambda: missing)
        )
    try:
        return call()
    finally:
        _xp._BACKENDS.pop("gpu", None)
        if saved is not None:
            _xp.register_backend(saved)


NO_CUDA = "CuPy is installed but no CUDA device is visible"


CATALOGUE: dict[str, Bad] = {
    # ---- distribution: redistribute_, resplit_, balance
    "redistribute-list-map": Bad(
        lambda e: e.a.redistribute_(target_map=[[2, 3], [1, 3], [1, 3]]),
        TypeError,
        r"`target_map` must be a torch.Tensor or numpy.ndarray, got list",
    ),
    "redistribute-map-sum": Bad(
        lambda e: e.a.redistribute_(target_map=counts_map(e.a, [2, 2, 2])),
        ValueError,
        r"`target_map` must sum to 4 along axis 0, got 6",
    ),
    "redistribute-negative-rows": Bad(
        lambda e: e.u.redistribute_(target_map=counts_map(e.u, [-1, 5, 0, 3])),
        ValueError,
        r"`target_map` must hold non-negative entries, got \[-1, 2\] for rank 0",
        ("u",),
    ),
    "redistribute-map-shape": Bad(
        lambda e: e.a.redistribute_(target_map=torch.zeros(2, 2, dtype=torch.int64)),
        ValueError,
        r"`target_map` must have shape \(3, 2\), got \(2, 2\)",
    ),
    "redistribute-non-split-column": Bad(
        lambda e: e.a.redistribute_(target_map=torch.tensor([[2, 1], [1, 3], [1, 3]])),
        ValueError,
        r"`target_map` column 1 must equal the global shape 3 on every rank, got 1 for rank 0",
    ),
    "redistribute-float-map": Bad(
        lambda e: e.a.redistribute_(target_map=e.a.lshape_map.float()),
        TypeError,
        r"`target_map` must have an integer dtype, got torch.float32",
    ),
    "redistribute-bool-map": Bad(
        lambda e: e.a.redistribute_(target_map=torch.ones(3, 2, dtype=torch.bool)),
        TypeError,
        r"`target_map` must have an integer dtype, got torch.bool",
    ),
    "redistribute-unsplit": Bad(
        lambda e: e.n.redistribute_(target_map=e.a.lshape_map),
        ValueError,
        r"`redistribute_` needs a split array, got split=None",
        ("n", "a"),
    ),
    "redistribute-stale-lshape-map": Bad(
        lambda e: e.u.redistribute_(lshape_map=counts_map(e.u, [7, 0, 0, 0])),
        ValueError,
        r"`lshape_map` must match the current distribution \[0, 4, 0, 3\]",
        ("u",),
    ),
    "redistribute-numpy-float-map": Bad(
        lambda e: e.u.redistribute_(target_map=np.full((4, 2), 1.75)),
        TypeError,
        r"`target_map` must have an integer dtype",
        ("u",),
    ),
    "redistribute-map-sum-wraps-int64": Bad(
        lambda e: e.a.redistribute_(target_map=np.array([[2**63 - 1, 3], [2**63 - 1, 3], [6, 3]])),
        ValueError,
        r"`target_map` must sum to 4 along axis 0, got 18446744073709551620",
    ),
    "redistribute-uint64-max-entry": Bad(
        lambda e: e.a.redistribute_(
            target_map=np.array([[2**64 - 1, 3], [1, 3], [0, 3]], dtype=np.uint64)
        ),
        ValueError,
        r"`target_map` must sum to 4 along axis 0, got 18446744073709551616",
    ),
    "redistribute-meta-tensor-map": Bad(
        lambda e: e.a.redistribute_(target_map=torch.zeros(3, 2, dtype=torch.int64, device="meta")),
        TypeError,
        r"`target_map` must hold values, got a tensor on the meta device",
    ),
    "redistribute-sparse-map": Bad(
        lambda e: e.a.redistribute_(target_map=torch.tensor([[2, 3], [1, 3], [1, 3]]).to_sparse()),
        TypeError,
        r"`target_map` must be a dense tensor, got layout torch.sparse_coo",
    ),
    "resplit-float-axis": Bad(
        lambda e: e.a.resplit_(0.5), TypeError, r"`axis` must be None or an int, got float"
    ),
    "resplit-axis-out-of-range": Bad(
        lambda e: e.u.resplit_(2),
        ValueError,
        r"`axis` must be in \[-2, 1\] for a 2-dimensional array, got 2",
        ("u",),
    ),
    "resplit-method": Bad(
        lambda e: e.a.resplit_(1, method="mpi"),
        ValueError,
        r"`method` 'mpi' needs a cluster started by dndask's mpirun launcher",
    ),
    "balance-copy-not-bool": Bad(
        lambda e: e.u.balance(copy="yes"), TypeError, r"`copy` must be a bool, got str", ("u",)
    ),
    "is-balanced-force-check": Bad(
        lambda e: e.a.is_balanced(force_check=1), TypeError, r"`force_check` must be a bool"
    ),
    "counts-displs-unsplit": Bad(
        lambda e: e.n.counts_displs(),
        ValueError,
        r"`counts_displs` needs a split array, got split=None",
        ("n",),
    ),
    # ---- factories and random
    "zeros-negative-shape": Bad(
        lambda e: ht.zeros((-1, 2), comm=e.comm),
        ValueError,
        r"`shape` must hold non-negative ints, got \(-1, 2\)",
        (),
    ),
    "zeros-float-shape": Bad(
        lambda e: ht.zeros((2.5, 2), comm=e.comm), TypeError, r"`shape` must hold ints", ()
    ),
    "zeros-unknown-dtype": Bad(
        lambda e: ht.zeros(3, dtype="banana", comm=e.comm),
        TypeError,
        r"`dtype` must be a numpy, torch or Python type, got 'banana'",
        (),
    ),
    "zeros-split-out-of-range": Bad(
        lambda e: ht.zeros((3, 2), split=2, comm=e.comm), ValueError, r"`split` must be in", ()
    ),
    "zeros-comm-not-a-comm": Bad(
        lambda e: ht.zeros(3, comm="all"), TypeError, r"`comm` must be a dndask.Comm, got str", ()
    ),
    "array-split-and-is-split": Bad(
        lambda e: ht.array(np.ones(3), split=0, is_split=0, comm=e.comm),
        ValueError,
        r"`split` and `is_split` are mutually exclusive",
        (),
    ),
    "array-is-split-one-array": Bad(
        lambda e: ht.array(np.ones(3), is_split=0, comm=e.comm),
        TypeError,
        r"`is_split` needs one piece per rank",
        (),
    ),
    "array-is-split-piece-count": Bad(
        lambda e: ht.array([np.ones(2)] * 2, is_split=0, comm=e.comm),
        ValueError,
        r"`is_split` needs one piece per rank: 3, got 2",
        (),
    ),
    "array-is-split-pieces-disagree": Bad(
        lambda e: ht.array(
            [np.ones((2, 3)), np.ones((2, 4)), np.ones((1, 3))], is_split=0, comm=e.comm
        ),
        ValueError,
        r"`is_split` pieces must agree off axis 0: rank 0 has shape \(2, 3\), rank 1 has \(2, 4\)",
        (),
    ),
    "array-strings": Bad(
        lambda e: ht.array(["a", "b"], comm=e.comm), TypeError, r"`obj` must hold numbers", ()
    ),
    "array-ragged": Bad(
        lambda e: ht.array([[1, 2], [3]], comm=e.comm),
        ValueError,
        r"`obj` must be rectangular array data",
        (),
    ),
    "array-copy-false-needs-copy": Bad(
        lambda e: ht.array(np.ones(3), dtype=ht.int32, copy=False, comm=e.comm),
        ValueError,
        r"`copy` is False but converting float64 to int32 needs a copy",
        (),
    ),
    "arange-zero-step": Bad(
        lambda e: ht.arange(0, 5, 0, comm=e.comm), ValueError, r"`step` must not be zero", ()
    ),
    "linspace-negative-num": Bad(
        lambda e: ht.linspace(0, 1, -3, comm=e.comm),
        ValueError,
        r"`num` must be non-negative, got -3",
        (),
    ),
    "linspace-float-num": Bad(
        lambda e: ht.linspace(0, 1, 2.5, comm=e.comm), TypeError, r"`num` must be an int", ()
    ),
    "eye-3d-shape": Bad(
        lambda e: ht.eye((2, 3, 4), comm=e.comm), ValueError, r"`shape` must be n or \(n, m\)", ()
    ),
    "full-string-fill": Bad(
        lambda e: ht.full((2,), "x", comm=e.comm), TypeError, r"`fill_value` must be a scalar", ()
    ),
    "zeros-like-split": Bad(
        lambda e: ht.zeros_like(e.a, split=3), ValueError, r"`split` must be in \[-2, 1\]"
    ),
    "full-like-numpy": Bad(
        lambda e: ht.full_like(np.ones(3), 2), TypeError, r"`a` must be a DNDarray, got ndarray", ()
    ),
    "randint-empty-range": Bad(
        lambda e: ht.random.randint(5, 2, size=(3,), comm=e.comm),
        ValueError,
        r"`high` must be greater than `low` \(5\), got 2",
        (),
    ),
    "randint-range-too-wide-for-dtype": Bad(
        lambda e: ht.random.randint(0, 300, size=(3,), dtype=ht.uint8, comm=e.comm),
        ValueError,
        r"`low`/`high` \[0, 300\) must fit in uint8",
        (),
    ),
    "randint-float-dtype": Bad(
        lambda e: ht.random.randint(0, 10, size=(3,), dtype=ht.float32, comm=e.comm),
        ValueError,
        r"`dtype` must be an integer type, got float32",
        (),
    ),
    "seed-string": Bad(
        lambda e: ht.random.seed("x"), TypeError, r"`seed` must be an int or None, got str", ()
    ),
    "normal-negative-std": Bad(
        lambda e: ht.random.normal(0.0, -1.0, (3,), comm=e.comm),
        ValueError,
        r"`std` must be non-negative, got -1.0",
        (),
    ),
    "set-state-algorithm": Bad(
        lambda e: ht.random.set_state(("mt", 1, 2)),
        ValueError,
        r"`state` algorithm must be 'splitmix64', got 'mt'",
        (),
    ),
    "rand-split-out-of-range": Bad(
        lambda e: ht.random.rand(2, split=5, comm=e.comm),
        ValueError,
        r"`split` must be in \[-1, 0\] for a 1-dimensional array, got 5",
        (),
    ),
    # ---- elementwise, operators, out= and in-place
    "add-shapes-do-not-broadcast": Bad(
        lambda e: e.a + e.v,
        ValueError,
        r"operands of `add` could not be broadcast together: DNDarray\(shape=\(4, 3\)",
        ("a", "v"),
    ),
    "add-different-comms": Bad(
        lambda e: e.a + e.b4, ValueError, r"operands of `add` must share a comm", ("a", "b4")
    ),
    "add-string-operand": Bad(
        lambda e: ht.add(e.a, "x"), TypeError, r"`add` does not support the operands .* of str"
    ),
    "out-wrong-shape": Bad(
        lambda e: ht.add(e.a, 1, out=e.n[:3]),
        ValueError,
        r"`out` of `add` must have shape \(4, 3\), got \(3, 3\)",
        ("a", "n"),
    ),
    "out-numpy": Bad(
        lambda e: ht.add(e.a, 1, out=np.zeros((4, 3))),
        TypeError,
        r"`out` of `add` must be a DNDarray, got ndarray",
    ),
    "out-cannot-cast": Bad(
        lambda e: ht.multiply(e.a, 1.5, out=e.i4),
        TypeError,
        r"`out` of `multiply` cannot hold the result: cannot cast float32 to int64",
        ("a", "i4"),
    ),
    "out-other-comm": Bad(
        lambda e: ht.add(e.a, 1, out=e.b4),
        ValueError,
        r"`out` of `add` must be on the operands' comm",
        ("a", "b4"),
    ),
    "iadd-float-into-int": Bad(
        lambda e: iadd(e.i, 1.5),
        TypeError,
        r"in-place `add` cannot cast the result from float64 to int64",
        ("i",),
    ),
    "iadd-changes-shape": Bad(
        lambda e: iadd(e.v, e.col),
        ValueError,
        r"in-place `add` cannot change the shape \(5,\)",
        ("v", "col"),
    ),
    "iadd-other-comm": Bad(
        lambda e: iadd(e.a, e.b4), ValueError, r"operands of `add` must share a comm", ("a", "b4")
    ),
    "round-float-decimals": Bad(
        lambda e: ht.round(e.a, 1.5), TypeError, r"`decimals` must be an int, got float"
    ),
    "where-shapes": Bad(
        lambda e: ht.where(e.m, e.a, e.v),
        ValueError,
        r"operands of `where` could not be broadcast together",
        ("m", "a", "v"),
    ),
    "clip-string-bound": Bad(
        lambda e: ht.clip(e.a, "x", 2), TypeError, r"`clip` does not support the operands .* of str"
    ),
    "nan-to-num-string-nan": Bad(
        lambda e: ht.nan_to_num(e.a, nan="x"), TypeError, r"`nan` must be a real number, got str"
    ),
    "nan-to-num-string-posinf": Bad(
        lambda e: ht.nan_to_num(e.a, posinf="x"),
        TypeError,
        r"`posinf` must be a real number, got str",
    ),
    "nan-to-num-complex-neginf": Bad(
        lambda e: ht.nan_to_num(e.u, neginf=1j),
        TypeError,
        r"`neginf` must be a real number, got complex",
        ("u",),
    ),
    # ---- reductions
    "sum-axis-out-of-range": Bad(
        lambda e: e.u.sum(axis=2),
        ValueError,
        r"`axis` must be in \[-2, 1\] for a 2-dimensional array, got 2",
        ("u",),
    ),
    "sum-float-axis": Bad(
        lambda e: e.a.sum(axis=0.5),
        TypeError,
        r"`axis` must be None, an int or a tuple of ints, got float",
    ),
    "sum-keepdims-not-bool": Bad(
        lambda e: e.a.sum(keepdims="no"), TypeError, r"`keepdims` must be a bool, got str"
    ),
    "sum-unknown-dtype": Bad(
        lambda e: e.a.sum(dtype="banana"), TypeError, r"`dtype` must be a numpy, torch or Python"
    ),
    "sum-repeated-axis": Bad(
        lambda e: e.a.sum(axis=(0, 0)), ValueError, r"`axis` must not repeat an axis, got \(0, 0\)"
    ),
    "min-of-nothing": Bad(
        lambda e: e.empty.min(),
        ValueError,
        r"`min` of a zero-size reduction has no identity",
        ("empty",),
    ),
    "argmax-tuple-axis": Bad(
        lambda e: e.a.argmax(axis=(0, 1)),
        TypeError,
        r"`axis` of `argmax` must be an int or None, got \(0, 1\)",
    ),
    "var-string-ddof": Bad(lambda e: e.a.var(ddof="1"), TypeError, r"`ddof` must be an int"),
    "std-negative-ddof": Bad(
        lambda e: e.u.std(ddof=-1), ValueError, r"`ddof` must be non-negative", ("u",)
    ),
    "cumsum-axis-out-of-range": Bad(
        lambda e: e.u.cumsum(axis=3), ValueError, r"`axis` must be in \[-2, 1\]", ("u",)
    ),
    # ---- indexing and assignment
    "getitem-index-out-of-bounds": Bad(
        lambda e: e.u[7],
        IndexError,
        r"`key` index 7 is out of bounds for axis 0 with size 7",
        ("u",),
    ),
    "getitem-too-many-indices": Bad(
        lambda e: e.a[0, 0, 0], IndexError, r"`key` has too many indices for the array"
    ),
    "getitem-float-index": Bad(
        lambda e: e.a[1.5], IndexError, r"`key` only integers, slices .* are valid indices"
    ),
    "getitem-mask-wrong-shape": Bad(
        lambda e: e.a[np.ones((3, 3), bool)],
        IndexError,
        r"`key` boolean index did not match the array along axis 0",
    ),
    "getitem-integer-array-out-of-bounds": Bad(
        lambda e: e.u[[0, 9]], IndexError, r"`key` index 9 is out of bounds", ("u",)
    ),
    "getitem-float-dndarray-index": Bad(
        lambda e: e.a[e.v[:2]],
        IndexError,
        r"`key` arrays used as indices must be of integer \(or boolean\) type, got float64",
        ("a", "v"),
    ),
    "setitem-value-shape": Bad(
        lambda e: setitem(e.a, slice(0, 2), np.ones((3, 3))),
        ValueError,
        r"`value` of shape \(3, 3\) could not be broadcast to the indexed shape \(2, 3\)",
    ),
    "setitem-float-into-int": Bad(
        lambda e: setitem(e.i, 0, 1.5),
        TypeError,
        r"`value` of dtype float64 cannot be cast to the array's dtype int64",
        ("i",),
    ),
    "setitem-index-out-of-bounds": Bad(
        lambda e: setitem(e.u, 9, 1.0), IndexError, r"`key` index 9 is out of bounds", ("u",)
    ),
    "setitem-mask-value-shape": Bad(
        lambda e: setitem(e.a, e.m, np.ones(3)),
        ValueError,
        r"`value` of shape \(3,\) could not be broadcast to the indexed shape \(8,\)",
        ("a", "m"),
    ),
    "setitem-value-other-comm": Bad(
        lambda e: setitem(e.a, slice(None), e.b4),
        ValueError,
        r"`value` must share the array's comm",
        ("a", "b4"),
    ),
    # ---- manipulation
    "reshape-wrong-size": Bad(
        lambda e: e.a.reshape(5, 3), ValueError, r"`shape` \(5, 3\) must have 12 elements, got 15"
    ),
    "reshape-new-split-out-of-range": Bad(
        lambda e: e.a.reshape(3, 4, new_split=2), ValueError, r"`new_split` must be in \[-2, 1\]"
    ),
    "reshape-two-unknowns": Bad(
        lambda e: e.u.reshape(-1, -1),
        ValueError,
        r"`shape` must hold at most one -1, got \(-1, -1\)",
        ("u",),
    ),
    "reshape-float-shape": Bad(
        lambda e: e.a.reshape(4.0, 3), TypeError, r"`shape` must hold ints, got float"
    ),
    "transpose-repeated-axis": Bad(
        lambda e: e.a.transpose((0, 0)), ValueError, r"`axes` must not repeat an axis"
    ),
    "squeeze-long-axis": Bad(
        lambda e: e.a.squeeze(0),
        ValueError,
        r"`axis` must name axes of length 1, got axis 0 of length 4",
    ),
    "expand-dims-out-of-range": Bad(
        lambda e: e.a.expand_dims(4), ValueError, r"`axis` must be in \[-3, 2\]"
    ),
    "swapaxes-out-of-range": Bad(
        lambda e: e.u.swapaxes(0, 3), ValueError, r"`axis2` must be in \[-2, 1\]", ("u",)
    ),
    "moveaxis-out-of-range": Bad(
        lambda e: ht.moveaxis(e.a, 0, 5), ValueError, r"`destination` must be in \[-2, 1\]"
    ),
    "concatenate-shapes": Bad(
        lambda e: ht.concatenate([e.a, e.col]),
        ValueError,
        r"`arrays` of `concatenate` must have the same shape except along axis 0",
        ("a", "col"),
    ),
    "concatenate-comms": Bad(
        lambda e: ht.concatenate([e.a, e.b4]),
        ValueError,
        r"`arrays` of `concatenate` must share one comm",
        ("a", "b4"),
    ),
    "concatenate-axis": Bad(
        lambda e: ht.concatenate([e.a, e.a], axis=3), ValueError, r"`axis` must be in \[-2, 1\]"
    ),
    "concatenate-nothing": Bad(
        lambda e: ht.concatenate([]),
        ValueError,
        r"`arrays` of `concatenate` must hold at least one array",
        (),
    ),
    "stack-shapes": Bad(
        lambda e: ht.stack([e.a, e.n[:, :2]]),
        ValueError,
        r"`arrays` of `stack` must all have the same shape",
        ("a", "n"),
    ),
    "hstack-shapes": Bad(
        lambda e: ht.hstack([e.a, e.col]),
        ValueError,
        r"`arrays` of `hstack` must have the same shape except along axis 1",
        ("a", "col"),
    ),
    "flip-axis-out-of-range": Bad(
        lambda e: ht.flip(e.a, 3), ValueError, r"`axis` must be in \[-2, 1\]"
    ),
    "roll-float-shift": Bad(
        lambda e: ht.roll(e.u, 1.5),
        TypeError,
        r"`shift` must be an int or a tuple of ints, got float",
        ("u",),
    ),
    "pad-negative-width": Bad(
        lambda e: ht.pad(e.a, -1), ValueError, r"`pad_width` must hold non-negative ints"
    ),
    "pad-unknown-mode": Bad(
        lambda e: ht.pad(e.a, 1, mode="banana"), ValueError, r"`mode` must be one of constant"
    ),
    "pad-width-shape": Bad(
        lambda e: ht.pad(e.a, ((1, 1),) * 3),
        ValueError,
        r"`pad_width` must broadcast to \(2, 2\) \(before, after\) pairs",
    ),
    "repeat-negative": Bad(
        lambda e: ht.repeat(e.u, -1), ValueError, r"`repeats` must be non-negative", ("u",)
    ),
    "repeat-float": Bad(
        lambda e: ht.repeat(e.a, 1.5), TypeError, r"`repeats` must be an int or a 1-D array"
    ),
    "tile-negative": Bad(
        lambda e: ht.tile(e.a, -1), ValueError, r"`reps` must hold non-negative ints"
    ),
    "astype-unknown-dtype": Bad(
        lambda e: e.a.astype("banana"), TypeError, r"`dtype` must be a numpy, torch or Python"
    ),
    "astype-copy-not-bool": Bad(
        lambda e: e.a.astype(ht.float64, copy="x"), TypeError, r"`copy` must be a bool, got str"
    ),
    # ---- linear algebra
    "matmul-inner-dimensions": Bad(
        lambda e: e.a @ e.a,
        ValueError,
        r"`matmul` operands do not fit: `a` has shape \(4, 3\) .* inner dimensions differ",
    ),
    "matmul-0d": Bad(
        lambda e: ht.matmul(e.scalar, e.a),
        ValueError,
        r"`matmul` needs operands of at least one dimension, got `a` 0-d",
        ("scalar", "a"),
    ),
    "dot-lengths": Bad(
        lambda e: ht.dot(e.v, e.i),
        ValueError,
        r"`matmul` operands do not fit: `a` has shape \(5,\)",
        ("v", "i"),
    ),
    "tensordot-axes": Bad(
        lambda e: ht.tensordot(e.a, e.a, axes=3),
        ValueError,
        r"`axes` must be in \[0, 2\] for operands of 2 and 2 dimensions, got 3",
    ),
    "vecdot-shapes": Bad(
        lambda e: ht.vecdot(e.a, e.n[:, :2]),
        ValueError,
        r"`vecdot` operands do not broadcast: `a` has shape \(4, 3\)",
        ("a", "n"),
    ),
    "outer-split": Bad(
        lambda e: ht.outer(e.v, e.v, split=2),
        ValueError,
        r"`split` must be None, 0 or 1, got 2",
        ("v",),
    ),
    "qr-vector": Bad(
        lambda e: ht.linalg.qr(e.v),
        ValueError,
        r"`qr` needs `a` with at least 2 dimensions, got 1",
        ("v",),
    ),
    "qr-complete-split-rows": Bad(
        lambda e: ht.linalg.qr(e.a, mode="complete"),
        NotImplementedError,
        r"`qr` with mode='complete' of a matrix split along a matrix axis",
    ),
    "svd-vector": Bad(
        lambda e: ht.linalg.svd(e.v),
        ValueError,
        r"`svd` needs `a` with at least 2 dimensions, got 1",
        ("v",),
    ),
    "qr-procs-to-merge-type": Bad(
        lambda e: ht.linalg.qr(e.a, procs_to_merge="2"),
        TypeError,
        r"`procs_to_merge` must be an int, got str",
    ),
    "qr-procs-to-merge-one": Bad(
        lambda e: ht.linalg.qr(e.a, procs_to_merge=1),
        ValueError,
        r"`procs_to_merge` must be 0 \(all at once\) or >= 2, got 1",
    ),
    "svd-procs-to-merge-negative": Bad(
        lambda e: ht.linalg.svd(e.a, procs_to_merge=-2),
        ValueError,
        r"`procs_to_merge` must be 0 \(all at once\) or >= 2, got -2",
    ),
    "qr-complete-wide-split": Bad(
        lambda e: ht.linalg.qr(e.zeros.T, mode="complete"),
        NotImplementedError,
        r"`qr` with mode='complete' of a matrix split along a matrix axis",
        ("zeros",),
    ),
    "norm-unknown-ord": Bad(
        lambda e: ht.linalg.norm(e.a, ord="banana"),
        ValueError,
        r"`ord` must be one of 'fro', 'nuc'",
    ),
    "vector-norm-axis": Bad(
        lambda e: ht.linalg.vector_norm(e.u, axis=3), ValueError, r"`axis` must be in", ("u",)
    ),
    "matrix-norm-vector": Bad(
        lambda e: ht.linalg.matrix_norm(e.v),
        ValueError,
        r"`matrix_norm` needs `x` with at least 2 dimensions, got 1",
        ("v",),
    ),
    # ---- statistics
    "percentile-q-out-of-range": Bad(
        lambda e: ht.percentile(e.a, 150), ValueError, r"`q` must be in \[0, 100\], got 150"
    ),
    "percentile-q-list-out-of-range": Bad(
        lambda e: ht.percentile(e.u, [10, 200]),
        ValueError,
        r"`q` must be in \[0, 100\], got \[10, 200\]",
        ("u",),
    ),
    "percentile-unknown-method": Bad(
        lambda e: ht.percentile(e.a, 50, method="banana"),
        ValueError,
        r"`method` must be one of inverted_cdf",
    ),
    "median-axis-out-of-range": Bad(
        lambda e: ht.median(e.a, axis=3), ValueError, r"`axis` must be in \[-2, 1\]"
    ),
    "median-keepdims-not-bool": Bad(
        lambda e: ht.median(e.a, keepdims="x"), TypeError, r"`keepdims` must be a bool, got str"
    ),
    "histogram-negative-bins": Bad(
        lambda e: ht.histogram(e.a, bins=-1), ValueError, r"`bins` must be positive"
    ),
    "histogram-reversed-range": Bad(
        lambda e: ht.histogram(e.u, range=(5, 1)),
        ValueError,
        r"`range` must have max >= min, got \(5, 1\)",
        ("u",),
    ),
    "histogram-weights-shape": Bad(
        lambda e: ht.histogram(e.a, weights=e.row),
        ValueError,
        r"`weights` must have the shape of `a` \(4, 3\), got \(3,\)",
        ("a", "row"),
    ),
    "histc-zero-bins": Bad(
        lambda e: ht.histc(e.a, bins=0), ValueError, r"`bins` must be positive, got 0"
    ),
    "bincount-negative": Bad(
        lambda e: ht.bincount(e.signed),
        ValueError,
        r"`x` of `bincount` must hold non-negative ints, got minimum -1",
        ("signed",),
    ),
    "bincount-float": Bad(
        lambda e: ht.bincount(e.v),
        TypeError,
        r"`x` of `bincount` must have an integer dtype, got float64",
        ("v",),
    ),
    "bincount-2d": Bad(
        lambda e: ht.bincount(e.i.reshape(2, 3)),
        ValueError,
        r"`x` of `bincount` must be 1-dimensional, got shape \(2, 3\)",
        ("i",),
    ),
    "average-weights-shape": Bad(
        lambda e: ht.average(e.a, axis=0, weights=e.row),
        ValueError,
        r"`weights` must have shape \(4, 3\) or \(4,\)",
        ("a", "row"),
    ),
    "average-weights-sum-to-zero": Bad(
        lambda e: ht.average(e.a, weights=e.zeros),
        ZeroDivisionError,
        r"`weights` sum to zero along `axis`",
        ("a", "zeros"),
    ),
    "average-returned-not-bool": Bad(
        lambda e: ht.average(e.a, returned="x"), TypeError, r"`returned` must be a bool, got str"
    ),
    # ---- files
    "load-missing-file": Bad(
        lambda e: ht.load_hdf5(e.missing, "data", comm=e.comm),
        FileNotFoundError,
        r"`path` '.*nope.h5' does not exist",
        (),
    ),
    "load-missing-dataset": Bad(
        lambda e: ht.load_hdf5(e.h5, "nope", comm=e.comm),
        KeyError,
        r"`dataset` 'nope' is not a dataset of .*; it holds \['data'\]",
        (),
    ),
    "load-not-hdf5": Bad(
        lambda e: ht.load_hdf5(e.fake_h5, "data", comm=e.comm), ValueError, r"`path` .*", ()
    ),
    "load-split-out-of-range": Bad(
        lambda e: ht.load_hdf5(e.h5, "data", split=3, comm=e.comm),
        ValueError,
        r"`split` must be in \[-2, 1\]",
        (),
    ),
    "load-missing-variable": Bad(
        lambda e: ht.load_netcdf(e.nc, "missing", comm=e.comm),
        KeyError,
        r"`variable` 'missing' is not a variable of .*; it holds \['v'\]",
        (),
    ),
    "load-missing-zarr": Bad(
        lambda e: ht.load_zarr(e.missing_zarr, comm=e.comm),
        FileNotFoundError,
        r"`path` .* does not exist",
        (),
    ),
    "load-csv-separator": Bad(
        lambda e: ht.load_csv(e.csv, sep=3, comm=e.comm),
        TypeError,
        r"`sep` must be a non-empty str, got 3",
        (),
    ),
    "load-csv-header-lines": Bad(
        lambda e: ht.load_csv(e.csv, header_lines=-1, comm=e.comm),
        ValueError,
        r"`header_lines` must be a non-negative int, got -1",
        (),
    ),
    "load-unknown-extension": Bad(
        lambda e: ht.load(e.banana, comm=e.comm),
        ValueError,
        r"`path` must end with one of \['.csv'",
        (),
    ),
    "save-existing-target": Bad(
        lambda e: ht.save_hdf5(e.a, e.h5, "data"),
        FileExistsError,
        r"`path` '.*x.h5' exists; pass mode='w' to overwrite it",
    ),
    "save-unknown-mode": Bad(
        lambda e: ht.save_zarr(e.u, e.new_zarr, mode="x"),
        ValueError,
        r"`mode` must be 'w-' \(refuse an existing file\) or 'w' \(overwrite\), got 'x'",
        ("u",),
    ),
    "save-csv-3d": Bad(
        lambda e: ht.save_csv(e.a.reshape(2, 2, 3), e.new_csv),
        ValueError,
        r"`a` must be 1-D or 2-D to save as CSV, got 3-D",
    ),
    "save-missing-folder": Bad(
        lambda e: ht.save_hdf5(e.a, os.path.join(e.missing_dir, "y.h5"), "data"),
        FileNotFoundError,
        r"`path` .*",
    ),
    "save-unknown-extension": Bad(
        lambda e: ht.save(e.a, e.banana), ValueError, r"`path` must end with one of"
    ),
    "save-hdf5-over-a-folder": Bad(
        lambda e: ht.save_hdf5(e.a, e.folder_h5, "data", mode="w"),
        IsADirectoryError,
        r"`path` '.*d\.h5' is a folder; a save replaces only a file, never a folder",
    ),
    "save-csv-over-a-folder": Bad(
        lambda e: ht.save_csv(e.a, e.folder_csv, mode="w"),
        IsADirectoryError,
        r"`path` '.*d\.csv' is a folder",
    ),
    "save-zarr-over-a-plain-folder": Bad(
        lambda e: ht.save_zarr(e.a, e.folder_zarr, mode="w"),
        FileExistsError,
        r"`path` '.*d\.zarr' exists and is a folder that is not a zarr store",
    ),
    "load-csv-bad-value": Bad(
        lambda e: ht.load_csv(e.bad_csv, comm=e.comm),
        ValueError,
        r"`path` '.*bad\.csv' line 5 holds a value that is not float32: '9,x'",
        (),
    ),
    # ---- per-rank work, comms, cluster, persist
    "per-rank-calls-dndask": Bad(
        lambda e: ht.per_rank(lambda rank: ht.zeros(3).numpy(), comm=e.comm),
        RuntimeError,
        r"dndask calls cannot run inside a rank's task",
        (),
    ),
    "per-rank-not-callable": Bad(
        lambda e: ht.per_rank(3, comm=e.comm), TypeError, r"`fn` must be callable, got int", ()
    ),
    "per-rank-raises-on-one-rank": Bad(
        lambda e: ht.per_rank(lambda rank: 1 / (rank - 1), comm=e.comm),
        ZeroDivisionError,
        r"per_rank function '<lambda>' failed on rank 1: ZeroDivisionError",
        (),
    ),
    "map-local-not-callable": Bad(
        lambda e: e.a.map_local(3), TypeError, r"`fn` must be callable, got int"
    ),
    "map-local-returns-string": Bad(
        lambda e: e.a.map_local(lambda t, rank: "x"),
        TypeError,
        r"`map_local` failed on rank 0: TypeError: the piece of rank 0 must be boolean or numeric",
    ),
    "comm-no-workers": Bad(
        lambda e: ht.Comm([]), ValueError, r"`workers` must name at least one worker", ()
    ),
    "comm-one-string": Bad(
        lambda e: ht.Comm("tcp://x"), TypeError, r"`workers` must be a sequence of worker", ()
    ),
    "comm-repeated-worker": Bad(
        lambda e: ht.Comm(["a", "a"]), ValueError, r"`workers` must not repeat a worker", ()
    ),
    "subcomm-rank-out-of-range": Bad(
        lambda e: e.comm.subcomm([0, 9]), ValueError, r"`ranks` must be in \[0, 2\], got 9", ()
    ),
    "subcomm-bool-rank": Bad(
        lambda e: e.comm.subcomm([True]), TypeError, r"`ranks` must hold ints, got bool", ()
    ),
    "use-comm-string": Bad(
        lambda e: ht.use_comm("x"), TypeError, r"`comm` must be a dndask.Comm, got str", ()
    ),
    "persist-replicate-zero": Bad(
        lambda e: e.u.persist(replicate=0),
        ValueError,
        r"`replicate` must be at least 1, got 0",
        ("u",),
    ),
    "persist-replicate-string": Bad(
        lambda e: e.a.persist_(replicate="2"), TypeError, r"`replicate` must be an int, got str"
    ),
    "persist-replicate-too-many": Bad(
        lambda e: e.a.persist_(replicate=99),
        ValueError,
        r"`replicate` must be at most the number of workers, 5, got 99",
    ),
    "init-zero-workers": Bad(
        lambda e: ht.init(0), ValueError, r"`n_workers` must be a positive int, got 0", ()
    ),
    "init-address-and-scheduler-file": Bad(
        lambda e: ht.init(address="tcp://127.0.0.1:1", scheduler_file="s.json"),
        ValueError,
        r"`address` and `scheduler_file` are mutually exclusive",
        (),
    ),
    "device-type": Bad(
        lambda e: ht.Device("tpu"),
        ValueError,
        r"`device_type` must be 'cpu' or 'gpu', got 'tpu'",
        (),
    ),
    "device-array-no-cupy": Bad(
        lambda e: without_gpu(lambda: ht.array([[1.0, 2.0]], split=0, device="gpu")),
        RuntimeError,
        r"device 'gpu:0' needs CuPy and a CUDA GPU: CuPy is not installed",
        (),
    ),
    "device-array-no-cuda": Bad(
        lambda e: without_gpu(lambda: ht.array([1.0, 2.0], split=0, device="gpu"), NO_CUDA),
        RuntimeError,
        r"device 'gpu:0' cannot be used: CuPy is installed but no CUDA device is visible",
        (),
    ),
    "device-rand-no-cuda": Bad(
        lambda e: without_gpu(lambda: ht.random.rand(4, 2, split=0, device="gpu"), NO_CUDA),
        RuntimeError,
        r"device 'gpu:0' cannot be used: CuPy is installed but no CUDA device is visible",
        (),
    ),
    "device-randperm-no-cupy": Bad(
        lambda e: without_gpu(lambda: ht.random.randperm(5, device="gpu:1")),
        RuntimeError,
        r"device 'gpu:1' needs CuPy and a CUDA GPU",
        (),
    ),
    "device-zeros-like-no-cupy": Bad(
        lambda e: without_gpu(lambda: ht.zeros_like(e.a, device="gpu")),
        RuntimeError,
        r"device 'gpu:0' needs CuPy and a CUDA GPU",
    ),
    "device-gpu-method-no-cuda": Bad(
        lambda e: without_gpu(e.a.gpu, NO_CUDA),
        RuntimeError,
        r"device 'gpu:0' cannot be used: CuPy is installed but no CUDA device is visible",
    ),
    "device-use-device-no-cupy": Bad(
        lambda e: without_gpu(lambda: ht.use_device("gpu")),
        RuntimeError,
        r"device 'gpu:0' needs CuPy and a CUDA GPU: CuPy is not installed",
        (),
    ),
    "device-array-unknown": Bad(
        lambda e: ht.array([1.0, 2.0], device="tpu"),
        ValueError,
        r"`device` must be 'cpu', 'gpu' or 'gpu:<n>', got 'tpu'",
        (),
    ),
    "device-randint-unknown": Bad(
        lambda e: ht.random.randint(0, 5, (3,), device="cuda:x"),
        ValueError,
        r"`device` must be 'cpu', 'gpu' or 'gpu:<n>', got 'cuda:x'",
        (),
    ),
    "device-ones-like-unknown": Bad(
        lambda e: ht.ones_like(e.a, device="npu"),
        ValueError,
        r"`device` must be 'cpu', 'gpu' or 'gpu:<n>', got 'npu'",
    ),
    "device-array-int": Bad(
        lambda e: ht.array([1.0], device=0),
        TypeError,
        r"`device` must be a Device or a str, got int",
        (),
    ),
    # ---- the Heat face (dndask.heat): what it accepts beyond numpy is checked too
    "heat-qr-complete": Bad(
        lambda e: hf.linalg.qr(hf.array(e.a), mode="complete"),
        NotImplementedError,
        r"`qr` with mode='complete' is not supported \(as in Heat\)",
    ),
    "heat-qr-integer": Bad(
        lambda e: hf.linalg.qr(hf.array(e.i4)),
        TypeError,
        r"`a` of `qr` must be float32, float64 or complex, got int64",
        ("i4",),
    ),
    "heat-svd-merge": Bad(
        lambda e: hf.linalg.svd(hf.array(e.a), qr_procs_to_merge=1),
        ValueError,
        r"`qr_procs_to_merge` must be 0 \(all ranks at once\) or >= 2, got 1",
    ),
    "heat-outer-ndarray": Bad(
        lambda e: hf.outer(hf.array(e.v), np.arange(3)),
        TypeError,
        r"`b` of `outer` must be a DNDarray, got ndarray",
        ("v",),
    ),
    "heat-matrix-exp-shape": Bad(
        lambda e: hf.linalg.matrix_exp(hf.array(e.a)),
        RuntimeError,
        r"`a` of `matrix_exp` must be square in its last two axes, got shape \(4, 3\)",
    ),
    "heat-matmul-axes": Bad(
        lambda e: hf.matmul(hf.zeros((3, 4, 3), comm=e.comm), hf.zeros((3,), comm=e.comm)),
        ValueError,
        r"`a` and `b` of `matmul` must have the same number of axes",
        (),
    ),
    "heat-equal-list": Bad(
        lambda e: hf.equal(hf.array(e.a), [1, 2]), TypeError, r"`y` of `equal` must be a DNDarray"
    ),
    "heat-ceil-list": Bad(
        lambda e: hf.ceil([1.5, 2.5]), TypeError, r"operand 0 of `ceil` must be a DNDarray"
    ),
    "heat-clip-tensor": Bad(
        lambda e: hf.add(hf.array(e.a), torch.ones(3)),
        TypeError,
        r"operand 1 of `add` must be a DNDarray or a numeric scalar, got Tensor",
    ),
    "heat-add-inplace-cast": Bad(
        lambda e: hf.asarray(e.i4).add_(1.5),
        TypeError,
        r"in-place `add_` cannot cast float32 to int64 \(Heat's intuitive casting\)",
        ("i4",),
    ),
    "heat-iadd-shape": Bad(
        lambda e: iadd(hf.asarray(e.a), hf.ones((2, 4, 3), comm=e.comm)),
        ValueError,
        r"`out` of `add` must have shape \(2, 4, 3\), got \(4, 3\)",
    ),
    "heat-type-two-values": Bad(
        lambda e: hf.float32(1, 2), TypeError, r"`float32` takes at most 1 argument"
    ),
    "heat-abstract-type": Bad(
        lambda e: hf.floating([1.0]), TypeError, r"cannot create 'floating' instances"
    ),
    "heat-state-algorithm": Bad(
        lambda e: hf.random.set_state(("Mersenne", 1, 0)),
        ValueError,
        r"`state` algorithm must be 'Threefry' or 'Batchparallel'",
    ),
    "heat-state-length": Bad(
        lambda e: hf.random.set_state(("Threefry", 1)),
        TypeError,
        r"`state` must be a 3- or 5-tuple",
    ),
    "heat-state-seed": Bad(
        lambda e: hf.random.set_state(("Threefry", 1.5, 0)),
        ValueError,
        r"`state` seed must be an int",
    ),
    "heat-device": Bad(
        lambda e: hf.zeros((2, 2), device="tpu"),
        ValueError,
        r"`device` must be 'cpu', 'gpu' or 'gpu:<n>', got 'tpu'",
    ),
    "heat-device-no-cupy": Bad(
        lambda e: without_gpu(lambda: hf.zeros((2, 2), device="gpu")),
        RuntimeError,
        r"device 'gpu:0' needs CuPy and a CUDA GPU: CuPy is not installed",
    ),
    "heat-device-no-new-chunks": Bad(
        lambda e: hf.sum(e.a, device="gpu:0"),
        ValueError,
        r"`device` of `sum` must be None or 'cpu'",
    ),
    "heat-order": Bad(
        lambda e: hf.ones((2, 2), order="K"), ValueError, r"`order` must be 'C' or 'F'"
    ),
    "heat-zeros-like-object": Bad(
        lambda e: hf.zeros_like(object()), TypeError, r"`a` of `zeros_like` must be array-like"
    ),
    "heat-repeat-object": Bad(
        lambda e: hf.repeat(object(), 2), TypeError, r"`a` of `repeat` must be array-like"
    ),
    "heat-repeat-negative-axis": Bad(
        lambda e: hf.repeat(hf.asarray(e.a), 2, -1),
        ValueError,
        r"`axis` of `repeat` must be in \[0, 2\) \(as in Heat\), got -1",
    ),
    "heat-resplit-axis": Bad(  # the face's eager resplit_ checks before it moves anything
        lambda e: hf.asarray(e.a).resplit_(5), ValueError, r"`axis`"
    ),
    "heat-redistribute-target": Bad(
        lambda e: hf.asarray(e.a).redistribute_(
            target_map=counts_map(e.a, [99, 0, 0][: e.a.comm.size])
        ),
        ValueError,
        r"`target_map`",
    ),
    "heat-comm-bcast-root": Bad(
        lambda e: hf.comm.bcast(e.a, root=99), ValueError, r"`root` of `bcast` must be in \[0, "
    ),
    "heat-ndmin-string": Bad(
        lambda e: hf.array([1], ndmin="2"), TypeError, r"`ndmin` must be an int"
    ),
    "heat-astype-inplace-bad-type": Bad(
        lambda e: hf.array(e.a).astype("banana", copy=False), TypeError, r"`dtype`"
    ),
    "heat-canonical-type": Bad(
        lambda e: hf.types.canonical_heat_type("banana"), TypeError, r"`a_type`"
    ),
    "heat-larray-shape": Bad(
        lambda e: setattr(hf.asarray(e.a), "larray", torch.arange(42)),
        ValueError,
        r"`larray` must have shape \(2, 3\) \(any length along split=0\), got \(42,\)",
    ),
    "heat-larray-numpy": Bad(
        lambda e: setattr(hf.asarray(e.a), "larray", np.zeros((2, 3))),
        TypeError,
        r"`larray` must be a torch.Tensor, got ndarray",
    ),
    "heat-randperm-float": Bad(
        lambda e: hf.random.randperm(2.5), TypeError, r"`n` must be an int, got float"
    ),
    "heat-randperm-negative": Bad(
        lambda e: hf.random.randperm(-1), ValueError, r"`n` must be non-negative, got -1"
    ),
    "heat-permutation-list": Bad(
        lambda e: hf.random.permutation([1, 2]),
        TypeError,
        r"`x` of `permutation` must be an int or a DNDarray, got list",
    ),
    "heat-equal-splits": Bad(
        lambda e: hf.equal(hf.asarray(e.a), hf.asarray(e.a).resplit(1)),
        ValueError,
        r"`equal` needs arrays of the same split, got 0 and 1",
    ),
    "heat-copysign-inplace-int": Bad(
        lambda e: hf.asarray(e.a).copysign_(hf.asarray(e.i4)),
        TypeError,
        r"operand 1 of `copysign_` must be real floating, got int64",
        ("a", "i4"),
    ),
    "heat-iadd-split": Bad(
        lambda e: iadd(hf.zeros((4, 3), comm=e.comm), hf.asarray(e.a)),
        ValueError,
        r"`out` of `add` must have the result's split 0, got None",
    ),
    "heat-cumsum-inplace-axis": Bad(
        lambda e: hf.asarray(e.a).cumsum_("1"), TypeError, r"`axis` of `cumsum` must be an int"
    ),
    "heat-divmod-out-twice": Bad(
        lambda e: hf.divmod(e.a, e.a, hf.asarray(e.a), out=(hf.asarray(e.a), None)),
        TypeError,
        r"`out\[0\]` and `out1` of `divmod` cannot both be given",
    ),
    "heat-det-vector": Bad(
        lambda e: hf.linalg.det(hf.asarray(e.a)[0]),
        RuntimeError,
        r"`a` of `det` must be square in its last two axes, got \(3,\)",
    ),
    "heat-transpose-float-axis": Bad(
        lambda e: hf.transpose(hf.asarray(e.a), axes=(0, 1.0)),
        TypeError,
        r"`axes` must hold ints, got 1.0",
    ),
    "heat-collect-rank": Bad(
        lambda e: hf.array(e.a).collect_(7), ValueError, r"`target_rank` must be in \[0, 3\)"
    ),
    # ---- new core functions
    "diagonal-same-axes": Bad(
        lambda e: ht.diagonal(e.a, 0, 1, 1), ValueError, r"`axis1` and `axis2` of `diagonal`"
    ),
    "triu-0d": Bad(lambda e: ht.triu(e.scalar), ValueError, r"`a` of `triu` must have at least 1"),
    "split-unequal": Bad(
        lambda e: ht.split(e.a, 3), ValueError, r"`indices_or_sections` 3 does not divide"
    ),
    "split-float-indices": Bad(
        lambda e: ht.split(e.a, [1.5]), TypeError, r"`indices_or_sections` must be an int"
    ),
    "broadcast-to-smaller": Bad(
        lambda e: ht.broadcast_to(e.a, (3,)),
        ValueError,
        r"`x` of shape \(4, 3\) cannot be broadcast",
    ),
    "inv-not-square": Bad(lambda e: ht.linalg.inv(e.a), ValueError, r"`a` of `inv` must be square"),
    "cross-components": Bad(
        lambda e: ht.cross(e.col, e.col), ValueError, r"`a` of `cross` must have 2 or 3 components"
    ),
    "digitize-2d-bins": Bad(lambda e: ht.digitize(e.v, [[1.0]]), ValueError, r"`bins` must be 1-D"),
    "randperm-negative": Bad(
        lambda e: ht.random.randperm(-1), ValueError, r"`n` must be non-negative"
    ),
    "ceil-list": Bad(
        lambda e: ht.ceil([1.5]), TypeError, r"`ceil` needs a DNDarray operand, got list"
    ),
    # ---- sorting and set operations
    "sort-axis-out-of-range": Bad(
        lambda e: ht.sort(e.a, axis=2),
        ValueError,
        r"`axis` must be in \[-2, 1\] for a 2-dimensional array, got 2",
    ),
    "sort-unknown-kind": Bad(
        lambda e: ht.sort(e.a, kind="bogo"),
        ValueError,
        r"`kind` must be one of \[None, 'quicksort', 'mergesort', 'heapsort', 'stable'\], got 'bogo'",
    ),
    "sort-unknown-method": Bad(
        lambda e: ht.sort(e.v, method="p2p"),
        ValueError,
        r"`method` must be None, 'tasks', 'two-level', 'shm' or 'mpi', got 'p2p'",
        ("v",),
    ),
    "argsort-method-int": Bad(
        lambda e: ht.argsort(e.v, method=2),
        TypeError,
        r"`method` must be a str or None, got int",
        ("v",),
    ),
    "sort-complex": Bad(
        lambda e: ht.sort(e.c), TypeError, r"`a` of `sort` must not be complex", ("c",)
    ),
    "sort-descending-string": Bad(
        lambda e: ht.sort(e.v, descending="yes"),
        TypeError,
        r"`descending` must be a bool, got str",
        ("v",),
    ),
    "sort-0d-axis": Bad(
        lambda e: ht.sort(e.scalar),
        ValueError,
        r"`axis` must be None for a 0-dimensional array, got -1",
        ("scalar",),
    ),
    "argsort-numpy-array": Bad(
        lambda e: ht.argsort(np.arange(3)), TypeError, r"`a` of `argsort` must be a DNDarray", ()
    ),
    "unique-complex": Bad(
        lambda e: ht.unique(e.c), TypeError, r"`a` of `unique` must not be complex", ("c",)
    ),
    "unique-axis-out-of-range": Bad(
        lambda e: ht.unique(e.u, axis=-3),
        ValueError,
        r"`axis` must be in \[-2, 1\] for a 2-dimensional array, got -3",
        ("u",),
    ),
    "searchsorted-2d-haystack": Bad(
        lambda e: ht.searchsorted(e.a, 1.0),
        ValueError,
        r"`a` of `searchsorted` must be 1-D, got 2-D",
    ),
    "searchsorted-side": Bad(
        lambda e: ht.searchsorted(e.v, 1.0, side="middle"),
        ValueError,
        r"`side` must be 'left' or 'right', got 'middle'",
        ("v",),
    ),
    "topk-k-above-length": Bad(
        lambda e: ht.topk(e.u, 3, dim=1),
        ValueError,
        r"`k` must be in \[0, 2\] \(the length of `dim`\), got 3",
        ("u",),
    ),
    "topk-float-k": Bad(
        lambda e: ht.topk(e.v, 1.5), TypeError, r"`k` must be an int, got float", ("v",)
    ),
    "partition-kth-out-of-range": Bad(
        lambda e: ht.partition(e.v, 5),
        ValueError,
        r"`kth` must be in \[-5, 4\], got 5",
        ("v",),
    ),
    "take-float-indices": Bad(
        lambda e: ht.take(e.v, [0.5]),
        TypeError,
        r"`indices` must hold integers, got float64",
        ("v",),
    ),
    "nonzero-0d": Bad(
        lambda e: ht.nonzero(e.scalar),
        ValueError,
        r"`a` of `nonzero` must not be 0-d",
        ("scalar",),
    ),
    "isin-unknown-kind": Bad(
        lambda e: ht.isin(e.v, [1.0], kind="hash"),
        ValueError,
        r"`kind` must be None, 'sort' or 'table', got 'hash'",
        ("v",),
    ),
    "from-xarray-split-not-a-dimension": Bad(
        lambda e: ht.from_xarray(e.xr, split="z", comm=e.comm),
        ValueError,
        r"`split` must be a dimension of \('x', 'y'\), got 'z'",
        (),
    ),
    "to-xarray-dims-count": Bad(
        lambda e: e.a.to_xarray(dims=("x",)),
        ValueError,
        r"`dims` must name 2 dimensions, got 1",
    ),
    # ---- rot90, collect, halos (core)
    "rot90-one-axis": Bad(
        lambda e: ht.rot90(e.a, 1, (0,)), ValueError, r"`axes` must be two axes, got \(0,\)"
    ),
    "rot90-same-axis": Bad(
        lambda e: ht.rot90(e.a, 1, (0, -2)), ValueError, r"`axes` must be two different axes"
    ),
    "rot90-axis-out-of-range": Bad(
        lambda e: ht.rot90(e.a, 1, (0, 2)), ValueError, r"`axes` must be in \[-2, 2\)"
    ),
    "rot90-float-k": Bad(lambda e: ht.rot90(e.a, 1.0), TypeError, r"`k` must be an int, got float"),
    "collect-float-rank": Bad(
        lambda e: ht.collect(e.a, 1.0), TypeError, r"`target_rank` must be an int, got float"
    ),
    "collect-rank-out-of-range": Bad(
        lambda e: ht.collect(e.a, 3), ValueError, r"`target_rank` must be in \[0, 3\), got 3"
    ),
    "halos-string-size": Bad(
        lambda e: ht.halos(e.a, "1"), TypeError, r"`halo_size` must be an int, got str"
    ),
    "halos-negative-size": Bad(
        lambda e: e.a.get_halo(-1), ValueError, r"`halo_size` must be non-negative, got -1"
    ),
    "halos-above-a-count": Bad(
        lambda e: ht.halos(e.u, 4),
        ValueError,
        r"`halo_size` 4 must be at most every populated rank's count along `split`, got 3 on rank 3",
        ("u",),
    ),
    "halos-split-none": Bad(
        lambda e: ht.halos(e.col, 1), ValueError, r"`a` of `halos` must be distributed", ("col",)
    ),
    "unfold-size-one": Bad(
        lambda e: ht.unfold(e.a, 0, 1), ValueError, r"`size` must be at least 2, got 1"
    ),
    "unfold-step-zero": Bad(
        lambda e: ht.unfold(e.a, 0, 2, 0), ValueError, r"`step` must be at least 1, got 0"
    ),
    "unfold-size-above-length": Bad(
        lambda e: ht.unfold(e.a, 0, 5), ValueError, r"`size` must be at most the length 4"
    ),
    "unfold-window-over-two-boundaries": Bad(
        lambda e: ht.unfold(e.u, 0, 5),
        RuntimeError,
        r"`size` - 1 = 4 must be at most every populated rank's count",
        ("u",),
    ),
    "unfold-float-step": Bad(
        lambda e: ht.unfold(e.a, 0, 2, 1.0), TypeError, r"`step` must be an int, got float"
    ),
    # ---- the Heat face's checks
    "heat-stack-numpy-operand": Bad(
        lambda e: hf.stack((hf.asarray(e.a), e.a.numpy())),
        TypeError,
        r"`arrays\[1\]` of `stack` must be a DNDarray, got ndarray",
    ),
    "heat-stack-one-array": Bad(
        lambda e: hf.stack((hf.asarray(e.a),)),
        ValueError,
        r"`arrays` of `stack` must hold at least 2 DNDarrays, got 1",
    ),
    "heat-stack-two-splits": Bad(
        lambda e: hf.stack((hf.asarray(e.zeros), hf.asarray(e.zeros).resplit(0))),
        ValueError,
        r"`arrays` of `stack` must be split along one axis",
        ("zeros",),
    ),
    "heat-concatenate-two-splits": Bad(
        lambda e: hf.concatenate((hf.asarray(e.zeros), hf.asarray(e.zeros).resplit(0))),
        RuntimeError,
        r"`arrays` of `concatenate` must be split along one axis",
        ("zeros",),
    ),
    "heat-column-stack-3d": Bad(
        lambda e: hf.column_stack((e.a.numpy(), hf.zeros((2, 2, 2)))),
        ValueError,
        r"`arrays\[1\]` of `column_stack` must be 1-D or 2-D, got 3-D",
        (),
    ),
    "heat-broadcast-arrays-two-splits": Bad(
        lambda e: hf.broadcast_arrays(hf.asarray(e.a), hf.asarray(e.zeros)),
        ValueError,
        r"`arrays` of `broadcast_arrays` must be split along one axis",
        ("a", "zeros"),
    ),
    "heat-pad-string-width": Bad(
        lambda e: hf.pad(hf.asarray(e.a), ((1, 2), "(3,4)")),
        TypeError,
        r"`pad_width` of `pad` must hold numbers",
    ),
    "heat-pad-triple": Bad(
        lambda e: hf.pad(hf.asarray(e.a), ((1, 2, 3),)),
        ValueError,
        r"`pad_width` of `pad` must hold \(before, after\) pairs",
    ),
    "heat-pad-too-many-pairs": Bad(
        lambda e: hf.pad(hf.asarray(e.a), ((1, 2), (1, 2), (1, 2))),
        ValueError,
        r"`pad_width` of `pad` has 3 pairs for a 2-D array",
    ),
    "heat-sort-string-axis": Bad(
        lambda e: hf.sort(hf.asarray(e.a), axis="1"),
        TypeError,
        r"`axis` of `sort` must be an int, got str",
    ),
    "heat-split-negative-axis": Bad(
        lambda e: hf.split(hf.asarray(e.a), 2, -1), ValueError, r"`axis` of `split` must be in"
    ),
    "heat-split-2d-indices": Bad(
        lambda e: hf.split(hf.asarray(e.a), [[0, 1]]),
        ValueError,
        r"`indices_or_sections` of `split` must be an int or a 1-D sequence, got 2-D",
    ),
    "heat-topk-out-types": Bad(
        lambda e: hf.topk(
            hf.asarray(e.a), 2, out=(hf.zeros((4, 2), dtype=hf.float32), hf.zeros((4, 2)))
        ),
        RuntimeError,
        r"`out` indices of `topk` must have type int64, got float32",
    ),
    "heat-where-x-only": Bad(
        lambda e: hf.where(hf.asarray(e.m), hf.asarray(e.a)),
        TypeError,
        r"`where` takes either both `x` and `y` or neither",
        ("a", "m"),
    ),
    "heat-where-two-splits": Bad(
        lambda e: hf.where(hf.asarray(e.m), hf.asarray(e.a).resplit(1), 0.0),
        NotImplementedError,
        r"`where` of operands split along different axes",
        ("a", "m"),
    ),
    "heat-diff-long-append": Bad(
        lambda e: hf.diff(hf.asarray(e.a), axis=0, append=hf.asarray(e.a)),
        ValueError,
        r"`append` of `diff` must have shape \(1, 3\), got \(4, 3\)",
    ),
    "heat-diff-tensor-prepend": Bad(
        lambda e: hf.diff(hf.asarray(e.a), prepend=torch.zeros(4, 1)),
        TypeError,
        r"`prepend` of `diff` must be a scalar or a DNDarray, got Tensor",
    ),
    "heat-div-where-other-split": Bad(
        lambda e: hf.div(hf.asarray(e.a), 2.0, where=hf.asarray(e.zeros) == 0),
        NotImplementedError,
        r"`where` of `div` split along another axis than the result",
        ("a", "zeros"),
    ),
    "heat-argmax-float-out": Bad(
        lambda e: hf.argmax(hf.asarray(e.a), axis=0, out=hf.zeros(3)),
        TypeError,
        r"`out` of `argmax` must be int64",
    ),
    "heat-average-numpy-weights": Bad(
        lambda e: hf.average(hf.asarray(e.a), axis=0, weights=np.ones(4)),
        TypeError,
        r"`weights` of `average` must be a DNDarray, got ndarray",
    ),
    "heat-average-2d-weights-for-an-axis": Bad(
        lambda e: hf.average(hf.asarray(e.a), axis=0, weights=hf.ones((4, 1))),
        TypeError,
        r"`weights` of `average` must be 1-D",
    ),
    "heat-average-tuple-axis-weights": Bad(
        lambda e: hf.average(hf.asarray(e.a), axis=(0, 1), weights=hf.ones(4)),
        NotImplementedError,
        r"`weights` of `average` with a tuple `axis`",
    ),
    "heat-bincount-weights-split": Bad(
        lambda e: hf.bincount(hf.asarray(e.i), weights=hf.ones(6)),
        ValueError,
        r"`weights` of `bincount` must be split like `x` \(0\), got None",
        ("i",),
    ),
    "heat-mean-string-in-axes": Bad(
        lambda e: hf.mean(hf.asarray(e.a), axis=(0, "1")),
        ValueError,
        r"`axis` of `mean` must hold ints, got str",
    ),
    "heat-var-tensor-axis": Bad(
        lambda e: hf.var(hf.asarray(e.a), axis=torch.tensor([0])),
        ValueError,
        r"`axis` of `var` must be None, an int or ints, not an array",
    ),
    "heat-var-ddof-2": Bad(
        lambda e: hf.var(hf.asarray(e.a), ddof=2),
        NotImplementedError,
        r"`ddof` of `var` above 1 is not implemented",
    ),
    "heat-percentile-out-type": Bad(
        lambda e: hf.percentile(hf.asarray(e.v), 50, out=hf.zeros((), dtype=hf.float32)),
        TypeError,
        r"`out` of `percentile` must have type float64, got float32",
        ("v",),
    ),
    "heat-histogram-weights": Bad(
        lambda e: hf.histogram(hf.asarray(e.v), weights=hf.asarray(e.v)),
        NotImplementedError,
        r"`weights` of `histogram` is not supported",
        ("v",),
    ),
    "heat-minimum-out-other-comm": Bad(
        lambda e: hf.minimum(hf.asarray(e.b4), 1.0, out=hf.zeros((4, 3), split=0, comm=e.comm)),
        NotImplementedError,
        r"`out` of `minimum` on another comm",
        ("b4",),
    ),
    "heat-getitem-two-ellipses": Bad(
        lambda e: hf.asarray(e.a)[..., ...],
        ValueError,
        r"an index can only have a single ellipsis",
    ),
    "heat-setitem-other-split": Bad(
        lambda e: setitem(hf.asarray(e.a), (slice(None), slice(None)), hf.asarray(e.zeros)),
        ValueError,
        r"a value split along 1 cannot be assigned into an array split along 0",
        ("a", "zeros"),
    ),
    "heat-array-is-split-other-split": Bad(
        lambda e: hf.array(hf.asarray(e.a), is_split=1),
        ValueError,
        r"`is_split` must match the split of a DNDarray `obj`, got 1",
    ),
}


@pytest.fixture(scope="module")
def inputs(comm_of, tmp_path_factory) -> SimpleNamespace:
    """The arrays and files the wrong calls get, persisted so their chunks sit on the workers."""
    import xarray as xr

    comm, comm4 = comm_of(3), comm_of(4)
    tmp = tmp_path_factory.mktemp("bad-inputs")
    a = ht.arange(12, dtype=ht.float32, split=0, comm=comm).reshape(4, 3).persist()
    u = ht.arange(14, dtype=ht.float64, split=0, comm=comm4).reshape(7, 2)
    u = u.redistribute(target_map=counts_map(u, [0, 4, 0, 3])).persist()  # empty ranks
    e = SimpleNamespace(
        comm=comm,
        a=a,
        u=u,
        i=ht.arange(6, split=0, comm=comm).persist(),
        i4=ht.zeros((4, 3), dtype=ht.int64, split=1, comm=comm),
        n=ht.zeros((4, 3), comm=comm),
        v=ht.arange(5, dtype=ht.float64, split=0, comm=comm),
        col=ht.ones((2, 5), comm=comm),
        row=ht.ones((3,), comm=comm),
        zeros=ht.zeros((4, 3), split=1, comm=comm),
        m=(a > 3).persist(),
        b4=ht.ones((4, 3), split=0, comm=comm4),
        empty=ht.zeros((0, 3), split=0, comm=comm),
        scalar=ht.full((), 2.0, comm=comm),
        signed=ht.array(np.array([1, -1, 2]), split=0, comm=comm),
        c=ht.array(np.array([1 + 2j, 3j, 1]), split=0, comm=comm),
        h5=str(tmp / "x.h5"),
        nc=str(tmp / "x.nc"),
        csv=str(tmp / "x.csv"),
        fake_h5=str(tmp / "fake.h5"),
        missing=str(tmp / "nope.h5"),
        missing_zarr=str(tmp / "none.zarr"),
        missing_dir=str(tmp / "no" / "such" / "folder"),
        new_zarr=str(tmp / "new.zarr"),
        new_csv=str(tmp / "new.csv"),
        banana=str(tmp / "x.banana"),
        folder_h5=str(tmp / "d.h5"),
        folder_csv=str(tmp / "d.csv"),
        folder_zarr=str(tmp / "d.zarr"),
        bad_csv=str(tmp / "bad.csv"),
        xr=xr.DataArray(np.ones((2, 3)), dims=("x", "y")),
    )
    ht.save_hdf5(a, e.h5, "data")
    ht.save_netcdf(a, e.nc, "v")
    ht.save_csv(a, e.csv)
    (tmp / "fake.h5").write_text("not an HDF5 file\n")
    (tmp / "bad.csv").write_text("1,2\n3,4\n5,6\n7,8\n9,x\n11,12\n")
    for folder in (e.folder_h5, e.folder_csv, e.folder_zarr):
        os.makedirs(folder)
        with open(os.path.join(folder, "precious.txt"), "w") as f:
            f.write("keep\n")
    return e


def snapshot(e: SimpleNamespace, names: tuple[str, ...]):
    arrays = [getattr(e, n) for n in names]
    meta = [(x.to_dask().name, x.split, x.dtype, x.lshape_map.tolist()) for x in arrays]
    return meta, values_of(arrays)


def global_state(client) -> tuple:
    return (
        ht.random.get_state(),
        ht.get_comm(),
        ht.current_client() is client,
        ht.get_device(),
    )


def test_catalogue_is_large_and_covers_the_api():
    assert len(CATALOGUE) >= 40
    families = {
        "redistribute",
        "resplit",
        "zeros",
        "array",
        "randint",
        "add",
        "out",
        "iadd",
        "sum",
        "getitem",
        "setitem",
        "reshape",
        "concatenate",
        "matmul",
        "qr",
        "percentile",
        "histogram",
        "bincount",
        "load",
        "save",
        "per-rank",
        "comm",
        "persist",
        "init",
        "sort",
        "unique",
        "searchsorted",
        "topk",
    }
    assert families <= {name.split("-")[0] for name in CATALOGUE} | {
        "-".join(name.split("-")[:2]) for name in CATALOGUE
    }


@pytest.mark.parametrize("case", list(CATALOGUE.values()), ids=list(CATALOGUE))
def test_bad_input_raises_and_changes_nothing(client, inputs, case):
    before = snapshot(inputs, case.inputs)
    state = global_state(client)
    with pytest.raises(case.exc, match=case.match):
        case.call(inputs)
    meta, values = snapshot(inputs, case.inputs)
    assert meta == before[0]
    for got, expected in zip(values, before[1], strict=True):
        np.testing.assert_array_equal(got, expected)
        assert got.dtype == expected.dtype
    assert global_state(client) == state
    for folder in (inputs.folder_h5, inputs.folder_csv, inputs.folder_zarr):  # no save removed one
        with open(os.path.join(folder, "precious.txt")) as f:
            assert f.read() == "keep\n"
