"""Square matrices and small helpers: ``inv``, ``det``, ``solve``, ``matrix_exp``,
``trace``, ``cross``, ``vdot``.

``inv``, ``det``, ``solve`` and ``matrix_exp`` act on the last two axes. When the
split is a batch axis, every rank works on its own matrices and nothing moves.
When the split is a matrix axis, the matrices of each batch meet in one chunk (the
whole ``(n, n)`` matrix travels to one worker), are computed there with torch, and
the result is laid out again with the input's split. A device chunk (CuPy) reaches
torch through DLPack and the result comes back the same way (:func:`dndask._xp.from_torch`),
so nothing goes through host memory. ``trace`` is the sum of
:func:`dndask.diagonal`; ``cross`` and ``vdot`` are built from slicing,
elementwise functions and reductions, so they follow those functions' splits.
"""

from __future__ import annotations

import dask.array as da
import numpy as np

from .. import _dndarray, _elementwise, _layout, _reductions, _torch, _xp
from .._distribution import relayout
from .._graph import meta_of
from .._manipulation import diagonal, flatten, stack


def _check_square(a, name: str) -> None:
    if not isinstance(a, _dndarray.DNDarray):
        raise TypeError(f"`a` of `{name}` must be a DNDarray, got {type(a).__name__}")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(
            f"`a` of `{name}` must be square in its last two axes, got shape {a.shape}"
        )


def _float(a):
    return a if a.dtype.kind in "fc" else a.astype(np.float32)


def _per_matrix(a, name: str, out_shape, dtype):
    """``torch.linalg.<name>`` (on a stack of matrices) on each chunk, after gathering the
    matrix axes; torch is imported where the chunks are, when the task runs."""
    x = a.to_dask()
    split = a.split
    batch = a.ndim - 2
    if split is not None and split >= batch:
        x = x.rechunk({batch: -1, batch + 1: -1})
    kept = len(out_shape) - batch  # matrix axes the result keeps

    def local(block):
        return _xp.from_torch(getattr(_torch.torch().linalg, name)(_torch.to_torch(block)), block)

    chunks = x.chunks[:batch] + tuple((n,) for n in out_shape[batch:])
    out = x.map_blocks(
        local,
        dtype=dtype,
        chunks=chunks,
        drop_axis=list(range(batch + kept, a.ndim)),
        meta=meta_of(dtype, len(out_shape), like=a),
    )
    if split is not None and split >= len(out_shape):
        split = None
    return _dndarray.from_dask(out, split, a.comm, parents=(a,))


def inv(a: _dndarray.DNDarray) -> _dndarray.DNDarray:
    """The inverse of each square matrix (last two axes); integers become float32.

    >>> import dndask as ht
    >>> ht.linalg.inv(ht.array([[2.0, 0.0], [0.0, 4.0]], split=0)).numpy().tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    _check_square(a, "inv")
    a = _float(a)
    return _per_matrix(a, "inv", a.shape, a.to_dask().dtype)


def det(a: _dndarray.DNDarray) -> _dndarray.DNDarray:
    """The determinant of each square matrix (last two axes).

    >>> import dndask as ht
    >>> float(ht.linalg.det(ht.array([[1.0, 2.0], [3.0, 4.0]], split=1)))
    -2.0
    """
    _check_square(a, "det")
    a = _float(a)
    return _per_matrix(a, "det", a.shape[:-2], a.to_dask().dtype)


def matrix_exp(a: _dndarray.DNDarray) -> _dndarray.DNDarray:
    """The matrix exponential of each square matrix (last two axes).

    >>> import dndask as ht
    >>> ht.linalg.matrix_exp(ht.zeros((2, 2), split=0)).numpy().tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    _check_square(a, "matrix_exp")
    a = _float(a)
    return _per_matrix(a, "matrix_exp", a.shape, a.to_dask().dtype)


def _solve_shapes(a, b) -> None:
    """``solve``'s shape rules: ``b`` is ``(n,)``, ``(n, k)`` (both broadcast over ``a``'s
    batch) or ``(*, n, k)`` with ``a``'s batch shape ``*``."""
    n = a.shape[-1]
    batch = a.shape[:-2]
    ok = (b.ndim in (1, 2) and b.shape[0] == n) or (
        b.ndim == a.ndim and b.shape[:-2] == batch and b.shape[-2] == n
    )
    if not ok:
        raise ValueError(
            f"`b` of `solve` must be ({n},), ({n}, k) or {(*batch, n)} + (k,) for `a` of "
            f"shape {a.shape}, got {b.shape}"
        )


def _solve_layout(a, b):
    """The split of ``x`` and the layouts ``a`` and ``b`` are solved in: a batch split of
    either operand (shared: the other follows it), else ``b``'s column split with ``a``
    whole, else nothing split. Returns ``(split, a, b)``."""
    batch = a.ndim - 2
    b_batch = b.ndim == a.ndim  # b carries a's batch axes
    a_on_batch = a.split is not None and a.split < batch
    b_on_batch = b_batch and b.split is not None and b.split < batch
    if a_on_batch and b_on_batch and a.split != b.split:
        raise ValueError(
            f"`a` and `b` of `solve` split along different batch axes, {a.split} and {b.split}"
        )
    if a_on_batch or b_on_batch:
        lead = a if a_on_batch else b
        split = lead.split
        dist = lead.distribution
        if not a_on_batch:
            a = relayout(a, _layout.Distribution(split, dist.counts, a.comm))
        if b_batch and b.split != split:
            b = relayout(b, _layout.Distribution(split, dist.counts, b.comm))
        elif not b_batch and b.split is not None:
            b = b.resplit(None)
        return split, a, b
    if a.split is not None:
        a = a.resplit(None)
    if b.ndim >= 2 and b.split == b.ndim - 1:  # columns: each rank solves its own
        return (batch + 1 if b_batch else a.ndim - 1), a, b
    if b.split is not None:
        b = b.resplit(None)
    return None, a, b


def solve(a: _dndarray.DNDarray, b) -> _dndarray.DNDarray:
    """The solution ``x`` of ``a @ x = b`` for a (stack of) square ``a``, ``(*, n, n)``.

    ``b`` is a vector ``(n,)`` or a matrix ``(n, k)``, each broadcast over ``a``'s batch
    axes ``*`` (``x`` is ``(*, n)`` or ``(*, n, k)``), or ``(*, n, k)``. Integers are
    solved in float32 (torch's). Layouts: a batch axis split in ``a`` or ``b`` is shared
    (the other operand follows it) and every rank solves its own matrices; a ``b`` split
    along its columns meets a whole ``a`` on every rank; otherwise both meet on one
    worker. ``x`` is split along that axis (or not at all).

    >>> import dndask as ht
    >>> a = ht.array([[2.0, 0.0], [0.0, 4.0]])
    >>> ht.linalg.solve(a, ht.array([2.0, 4.0], split=0)).numpy().tolist()
    [1.0, 1.0]
    """
    _check_square(a, "solve")
    if not isinstance(b, _dndarray.DNDarray):
        raise TypeError(f"`b` of `solve` must be a DNDarray, got {type(b).__name__}")
    _solve_shapes(a, b)
    dtype = np.promote_types(_float(a).to_dask().dtype, _float(b).to_dask().dtype)
    vector = b.ndim == 1
    if vector:
        b = _manipulation_expand(b)
    split, a, b = _solve_layout(a, b)
    nd = a.ndim
    batch = tuple(f"b{i}" for i in range(nd - 2))
    A = a.to_dask().astype(dtype).rechunk({nd - 2: -1, nd - 1: -1})  # noqa: N806
    B = b.to_dask().astype(dtype).rechunk({b.ndim - 2: -1})  # noqa: N806
    if b.ndim == nd and split is not None and split < nd - 2:
        B = B.rechunk({split: A.chunks[split]})  # noqa: N806
    b_index = (*batch, "m", "k") if b.ndim == nd else ("m", "k")

    out = da.blockwise(
        _solve_block, (*batch, "n", "k"), A, (*batch, "n", "m"), B, b_index,
        dtype=dtype, concatenate=True, meta=meta_of(dtype, nd, like=a),
    )  # fmt: skip
    x = _dndarray.from_dask(out, split, a.comm, parents=(a, b))
    return x[..., 0] if vector else x


def _solve_block(ma, mb):
    """``torch.linalg.solve`` of one block: matrices ``ma``, right-hand sides ``mb``
    (broadcast over ``ma``'s batch when they have none)."""
    ta, tb = _torch.to_torch(ma), _torch.to_torch(mb)
    if tb.ndim < ta.ndim:
        tb = tb.expand(*ta.shape[:-2], *tb.shape)
    return _xp.from_torch(_torch.torch().linalg.solve(ta, tb), ma)


def _manipulation_expand(v):
    """A vector as an ``n x 1`` matrix, keeping its split."""
    return _dndarray.from_dask(v.to_dask()[:, None], v.split, v.comm, parents=(v,))


def trace(a: _dndarray.DNDarray, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None):
    """Sum along the ``offset``-th diagonal, as :func:`numpy.trace` (a 0-d array for 2-D input).

    >>> import dndask as ht
    >>> int(ht.trace(ht.arange(9, split=0).reshape((3, 3))))
    12
    """
    return _reductions.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis=None):
    """Cross product of 3-vectors (2-vectors are padded with a zero z), as :func:`numpy.cross`.

    >>> import dndask as ht
    >>> ht.cross(ht.array([1.0, 0.0, 0.0]), ht.array([0.0, 1.0, 0.0])).numpy().tolist()
    [0.0, 0.0, 1.0]
    """
    for v, what in ((a, "a"), (b, "b")):
        if not isinstance(v, _dndarray.DNDarray):
            raise TypeError(f"`{what}` of `cross` must be a DNDarray, got {type(v).__name__}")
    if axis is not None:
        axisa = axisb = axisc = axis
    ax_a = _layout.normalize_axis(axisa, a.ndim, "axisa")
    ax_b = _layout.normalize_axis(axisb, b.ndim, "axisb")
    for v, ax, what in ((a, ax_a, "a"), (b, ax_b, "b")):
        if v.shape[ax] not in (2, 3):
            raise ValueError(
                f"`{what}` of `cross` must have 2 or 3 components along axis {ax}, "
                f"got {v.shape[ax]}"
            )

    def comps(v, ax):
        parts = []
        for i in range(3):
            if i < v.shape[ax]:
                key = [slice(None)] * v.ndim
                key[ax] = i
                parts.append(v[tuple(key)])
            else:
                parts.append(0)
        return parts

    a0, a1, a2 = comps(a, ax_a)
    b0, b1, b2 = comps(b, ax_b)
    sub, mul = _elementwise.subtract, _elementwise.multiply

    def term(p, q, r, s):
        left = mul(p, q) if not (isinstance(p, int) or isinstance(q, int)) else 0
        right = mul(r, s) if not (isinstance(r, int) or isinstance(s, int)) else 0
        if isinstance(left, int) and isinstance(right, int):
            return None
        if isinstance(right, int):
            return left
        if isinstance(left, int):
            return _elementwise.negative(right)
        return sub(left, right)

    z = term(a0, b1, a1, b0)
    if a.shape[ax_a] == 2 and b.shape[ax_b] == 2:
        return z
    x, y = term(a1, b2, a2, b1), term(a2, b0, a0, b2)
    ref = next(t for t in (x, y, z) if t is not None)
    x, y, z = (_elementwise.multiply(ref, 0) if t is None else t for t in (x, y, z))
    ax_c = _layout.normalize_axis(axisc, ref.ndim + 1, "axisc")
    return stack([x, y, z], axis=ax_c)


def vdot(x1, x2) -> _dndarray.DNDarray:
    """The dot product of the flattened arrays, conjugating ``x1``, as :func:`numpy.vdot`.

    >>> import dndask as ht
    >>> int(ht.vdot(ht.arange(3, split=0), ht.arange(3, split=0)))
    5
    """
    for v, what in ((x1, "x1"), (x2, "x2")):
        if not isinstance(v, _dndarray.DNDarray):
            raise TypeError(f"`{what}` of `vdot` must be a DNDarray, got {type(v).__name__}")
    if x1.size != x2.size:
        raise ValueError(
            f"`x1` and `x2` of `vdot` must have the same size, got {x1.size} and {x2.size}"
        )
    f1 = flatten(x1) if x1.ndim != 1 else x1
    f2 = flatten(x2) if x2.ndim != 1 else x2
    return _reductions.sum(_elementwise.multiply(_elementwise.conj(f1), f2))
