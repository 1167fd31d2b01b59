"""Operations on DNDarrays: align the operands' distributions, run dask, re-wrap.

Heat's rule for operands with different splits: the result takes the split
of the first split operand that is not broadcast along its split axis (of the
first split operand if all are), and the other operands are laid out to match
it with one :func:`~dndask._distribution.relayout` each, so every result keeps
the DNDarray invariant.
"""

from __future__ import annotations

import functools
import operator
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import dask.array as da
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from . import (
    _distribution,
    _dndarray,
    _graph,
    _layout,
    _moment_partials,
    _scan,
    _torch,
    _types,
    _xp,
)
from ._compat import elemwise, new_array, pick_blocks


def _describe(x) -> str:
    if isinstance(x, _dndarray.DNDarray):
        return f"DNDarray(shape={x.shape}, split={x.split})"
    if isinstance(x, da.Array):
        return f"dask Array(shape={x.shape}, split=None, chunks={x.chunks})"
    return f"{type(x).__name__}(shape={np.shape(x)})"


def _broadcast_along_split(v, out_shape: tuple[int, ...]) -> bool:
    """Whether the split operand ``v`` is broadcast along its split axis in the result."""
    return v.shape[v.split] != out_shape[v.split + len(out_shape) - v.ndim]


def result_layout(dnds: list, out_shape: tuple[int, ...]) -> tuple[int | None, tuple[int, ...]]:
    """Heat's rule: the result's split and counts for the DNDarray operands ``dnds``.

    The reference is the first split operand that is not broadcast along its
    split axis; its counts carry over. If every split operand is broadcast
    there, the first one gives the split and the result is balanced.
    """
    split_ones = [v for v in dnds if v.split is not None]
    if not split_ones:
        return None, ()
    ndim = len(out_shape)
    ref = next((v for v in split_ones if not _broadcast_along_split(v, out_shape)), None)
    if ref is not None:
        return ref.split + ndim - ref.ndim, ref.distribution.counts
    split = split_ones[0].split + ndim - split_ones[0].ndim
    return split, _layout.balanced_counts(out_shape[split], split_ones[0].comm.size)


def _conform_dask(x: da.Array, out_shape, split, counts, comm) -> _dndarray.DNDarray:
    """A dask operand as a DNDarray laid out like the result (one chunk per rank along ``split``).

    Its chunks are rechunked to the result's counts along the split axis (or to one
    chunk if it is broadcast there): the rows move to the rank that will use them.
    """
    plain = _dndarray.from_dask(x, None, comm) if x.ndim == 0 else None
    if plain is not None:
        return plain
    axis = None if split is None else split - (len(out_shape) - x.ndim)
    if axis is None or axis < 0 or x.shape[axis] != out_shape[split]:
        return _dndarray.from_dask(x, None, comm)
    return _dndarray.from_dask(x, axis, comm, counts=counts)


def align(values: tuple, name: str):
    """The operands as dask/numpy values, each DNDarray laid out as the result will be."""
    dnds = [v for v in values if isinstance(v, _dndarray.DNDarray)]
    if not dnds:
        raise TypeError(
            f"`{name}` needs a DNDarray operand, got "
            + ", ".join(type(v).__name__ for v in values)
            + " (build one with dndask.array)"
        )
    comm = ([v for v in dnds if v.ndim] or dnds)[0].comm
    # a 0-d DNDarray of another comm (a scalar that xarray or the array API made with
    # asarray on the default comm) is a value: its one element goes where it is needed
    values = tuple(
        v.to_dask() if isinstance(v, _dndarray.DNDarray) and v.ndim == 0 and v.comm != comm else v
        for v in values
    )
    dnds = [v for v in values if isinstance(v, _dndarray.DNDarray)]
    for v in dnds:
        if v.comm != comm:
            raise ValueError(f"operands of `{name}` must share a comm, got {v.comm!r} and {comm!r}")
    for v in values:
        if isinstance(v, da.Array) and any(np.isnan(s) for s in v.shape):
            raise ValueError(
                f"a dask operand of `{name}` must have known chunk sizes, got shape {v.shape}; "
                "call compute_chunk_sizes() first"
            )
    check_one_device(dnds, name)
    shapes = [np.shape(v) if not isinstance(v, _dndarray.DNDarray) else v.shape for v in values]
    try:
        out_shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(
            f"operands of `{name}` could not be broadcast together: "
            + ", ".join(_describe(v) for v in values)
        ) from None
    split, counts = result_layout(dnds, out_shape)
    out, parents = [], []
    for v in values:
        if _torch.is_tensor(v):
            v = _torch.from_torch(v)
        if isinstance(v, da.Array):
            v = _conform_dask(v, out_shape, split, counts, comm)
        if isinstance(v, _dndarray.DNDarray):
            v = _distribution.relayout(v, operand_distribution(v, out_shape, split, counts))
            parents.append(v)
            out.append(v.to_dask())
        else:
            out.append(v)
    return out, split, comm, tuple(parents)


def operand_distribution(v, out_shape: tuple[int, ...], split: int | None, counts):
    """How the operand ``v`` must be laid out for a result split along ``split`` with ``counts``.

    An operand broadcast along the split axis (it lacks the axis or has length
    1 there) is needed whole by every rank: ``split=None``. Any other one is
    split along the same axis with the result's counts, so chunks line up.
    """
    ndim = len(out_shape)
    if split is None:
        return v.distribution
    axis = split - (ndim - v.ndim)
    if axis < 0 or v.shape[axis] != out_shape[split]:
        return _layout.Distribution(None, (), v.comm)
    return _layout.Distribution(axis, counts, v.comm)


def elementwise(fn: Callable, *values, name: str, out=None) -> _dndarray.DNDarray:
    """Apply ``fn`` to dask versions of ``values`` (at least one a DNDarray).

    ``out``, if given, is a DNDarray that receives the result in place.
    """
    arrays, split, comm, parents = align(values, name)
    one_row = False
    try:
        # a ufunc or operator as dask's graph arrays build it (scalars inline, numpy's types)
        per_block = _per_chunk(fn) and not isinstance(fn, TorchKernel)
        result = elemwise(fn, *arrays) if per_block else fn(*arrays)
        if split is not None and result.shape[split] == 1 and len(result.chunks[split]) > 1:
            result, one_row = _one_row_split(fn, arrays, split, result), True
    except TypeError as err:
        raise TypeError(
            f"`{name}` does not support the operands "
            + ", ".join(f"{_describe(v)} of {_dtype_of(v)}" for v in values)
            + f": {err}"
        ) from None
    producer = None if one_row else Producer.of(fn, arrays, result)
    if producer is not None:
        producer = producer.fused(_producers(parents))
        if producer.name != result.name:  # operands' operations composed in: one layer
            result = producer.array(result)
    made = _dndarray.from_dask(result, split, comm, parents)
    if producer is not None and made.to_dask().name == producer.name:
        made._producer = producer
    return into(out, made, name)


def _producers(arrays) -> dict:
    """The valid :class:`Producer` of each DNDarray in ``arrays``, by its dask array's name."""
    out = {}
    for v in arrays:
        p = v._producer
        if p is not None and p.name == v.to_dask().name:
            out[p.name] = p
    return out


# Python's operators that Dask applies to each chunk as they are (``Array.__add__`` is
# ``elemwise(operator.add, ...)``), so calling one on the chunks is the task Dask would run.
_OPERATORS = frozenset(
    {
        operator.abs, operator.neg, operator.pos, operator.invert, operator.not_,
        operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
        operator.mod, operator.pow, operator.and_, operator.or_, operator.xor,
        operator.lshift, operator.rshift,
        operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge,
    }
)  # fmt: skip


def _per_chunk(fn: Callable) -> bool:
    """Whether ``fn`` on dask arrays is ``fn`` on each block (a one-output ufunc, an operator,
    a :class:`TorchKernel`)."""
    if isinstance(fn, TorchKernel):
        return True
    if isinstance(fn, np.ufunc):
        return fn.nout == 1 and fn.signature is None  # not a generalized ufunc (matmul)
    try:
        return fn in _OPERATORS
    except TypeError:  # an unhashable callable
        return False


@dataclass(frozen=True, eq=False)
class Producer:
    """How an elementwise operation made each chunk of its result: ``fn`` of operand blocks.

    Recorded by :func:`elementwise` on the DNDarray it returns, and valid while that
    array's dask array is still named ``name`` (persisting or assigning in place renames
    it). A reduction over the split axis of such an array builds, for each rank, one task
    that runs ``fn`` on the operands' blocks and reduces the result (see :func:`reduce`);
    the elementwise layer itself then drops out of the graph. Only recorded where the
    block ``idx`` of the result is ``fn`` of block ``idx`` of every operand (block 0
    along axes where an operand has length 1 and is broadcast), which is what Dask's
    elementwise layer computes, so the fused task gives the same values.

    ``operands`` are the aligned operands: dask arrays, and scalars passed as they are.
    A record made by :meth:`fused` is a whole chain: ``fn`` is a :class:`Fused` of ``ops``
    operations, ``operands`` the chain's leaves (dask arrays only), and
    :func:`elementwise` builds its array as one layer (:meth:`array`).
    """

    name: str
    fn: Callable
    operands: tuple
    ops: int = 1  # the elementwise operations ``fn`` runs (more than 1: a :class:`Fused`)
    dtype: np.dtype | None = None  # the result's dtype

    @classmethod
    def of(cls, fn: Callable, operands, result: da.Array) -> Producer | None:
        """The record for ``result = fn(*operands)``, or ``None`` where a task cannot fuse it."""
        if not _per_chunk(fn):
            return None
        for v in operands:
            if isinstance(v, da.Array):
                lead = result.ndim - v.ndim
                if lead < 0:
                    return None
                for j, c in enumerate(v.chunks):
                    if c != result.chunks[j + lead] and not (v.shape[j] == 1 and len(c) == 1):
                        return None
            elif _torch.is_tensor(v) or not _types.is_scalar(v):
                return None  # arrays Dask would chunk itself
        return cls(result.name, fn, tuple(operands), 1, result.dtype)

    def fused(self, inner: dict) -> Producer:
        """This operation with the operations that made its operands composed in.

        ``inner`` maps an operand's dask name to the :class:`Producer` that made it
        (unpersisted elementwise results). Each such operand is replaced by its
        producer's expression over that producer's operands, so the result is one
        :class:`Fused` function of the chain's leaves (persisted arrays, arrays of other
        operations, scalars). The expression is a DAG: an operation met twice (``y * y``,
        or two operands computed from one intermediate) is one node, computed once per
        block, as Dask computes one key once. The fused record is named after the result's
        name and which operands were composed in, so one name always means one expression.
        Up to :data:`_MAX_FUSED` distinct operations fuse into one task; a longer chain
        starts a new one. Returns ``self`` when no operand has a producer.
        """
        leaves: dict[str, tuple[int, da.Array]] = {}
        nodes: dict = {}  # structural key -> the one node of that operation (hash-consing)

        def leaf(v: da.Array) -> _Leaf:
            if v.name not in leaves:
                leaves[v.name] = (len(leaves), v)
            return _Leaf(leaves[v.name][0])

        def remap(expr, arrays, done: dict):
            # a leaf's index counts the producer's dask operands only (scalars are inline);
            # ``done`` keeps the producer's own sharing (by node identity)
            if isinstance(expr, _Leaf):
                return leaf(arrays[expr.index])
            if not isinstance(expr, _Expr):
                return expr
            got = done.get(id(expr))
            if got is None:
                args = tuple(remap(a, arrays, done) for a in expr.args)
                got = done[id(expr)] = _intern(nodes, _Expr(expr.fn, args, expr.dtype))
            return got

        composed: dict[str, object] = {}  # a producer's name -> its remapped expression
        args, mask = [], []
        for v in self.operands:
            p = inner.get(v.name) if isinstance(v, da.Array) else None
            if p is not None and p.name not in composed:
                before = (len(nodes), len(leaves))
                expr = (
                    p.fn.expr
                    if isinstance(p.fn, Fused)
                    else _Expr(p.fn, _leaves(p.operands), p.dtype)
                )
                got = remap(expr, p.arrays(), {})
                if len(nodes) + 1 > _MAX_FUSED:  # too long: this operand stays a leaf
                    for table, size in zip((nodes, leaves), before, strict=True):
                        for key in list(table)[size:]:
                            del table[key]
                    p = None
                else:
                    composed[p.name] = got
            if p is not None:
                args.append(composed[p.name])
                mask.append(p.name)
            else:
                args.append(leaf(v) if isinstance(v, da.Array) else v)
                mask.append(None)
        if not composed:
            return self
        fn_name = getattr(self.fn, "__name__", "elementwise")
        name = f"{fn_name}-fused-{tokenize('fused', self.name, mask)}"
        fused = Fused(_Expr(self.fn, tuple(args), self.dtype), fn_name)
        operands = tuple(v for _, v in sorted(leaves.values(), key=operator.itemgetter(0)))
        return Producer(name, fused, operands, len(fused.steps), self.dtype)

    def array(self, like: da.Array) -> da.Array:
        """The dask array of this (fused) record: one blockwise layer over the operands.

        ``like`` is the result built the unfused way (Dask's layers, never submitted):
        it gives the chunks, dtype and meta. Block ``idx`` is :meth:`task` of ``idx``.
        """
        ndim, meta = like.ndim, _graph.chunk_meta(like)
        args = []
        for v in self.operands:
            args += [v, tuple(range(ndim - v.ndim, ndim))]
        y = da.blockwise(
            self.fn,
            tuple(range(ndim)),
            *args,
            name=self.name,
            dtype=like.dtype,
            meta=meta,
            align_arrays=False,
            concatenate=True,
        )
        return new_array(y.dask, self.name, like.chunks, meta)

    def arrays(self) -> list[da.Array]:
        """The dask operands (the dependencies of a task built by :meth:`task`)."""
        return [v for v in self.operands if isinstance(v, da.Array)]

    def task(self, idx: tuple[int, ...]) -> tuple:
        """The task (a tuple) computing block ``idx`` of the result from the operands' blocks."""
        args = []
        for v in self.operands:
            if isinstance(v, da.Array):
                own = zip(idx[len(idx) - v.ndim :], v.chunks, strict=True)
                args.append((v.name, *(i if len(c) > 1 else 0 for i, c in own)))
            else:
                args.append(v)
        return (self.fn, *args)


# The most elementwise operations one fused task runs (a longer chain makes a task per
# this many operations), so a task's function stays small to pickle and to evaluate.
_MAX_FUSED = 32


class _Leaf(NamedTuple):
    """An operand of a :class:`Fused` function: its ``index``-th block argument."""

    index: int


class _Expr(NamedTuple):
    """``fn`` of ``args`` (leaves, scalars, expressions): one node of a fused chain.

    A node that several others use is one object, so a chain is a DAG and each node is
    computed once. ``dtype`` is the dtype of the node's result where the graph knows it
    (the dask array it stands for); :class:`Fused` then may write it into a temporary
    block of that dtype it no longer needs.
    """

    fn: Callable
    args: tuple
    dtype: np.dtype | None = None


class _Ref(NamedTuple):
    """An argument of a :class:`Fused` step: the result of its ``step``-th step."""

    step: int


class _Step(NamedTuple):
    """One operation of a :class:`Fused` program: ``fn`` of ``args`` (leaves, refs, scalars)."""

    fn: Callable
    args: tuple
    dtype: np.dtype | None


def _leaves(operands: tuple) -> tuple:
    """``operands`` with the dask arrays replaced by leaves (in order), scalars as they are."""
    out, i = [], 0
    for v in operands:
        if isinstance(v, da.Array):
            out.append(_Leaf(i))
            i += 1
        else:
            out.append(v)
    return tuple(out)


# Python scalar types whose ``repr`` says the value exactly (``-0.0`` and ``0.0`` apart).
_EXACT_SCALARS = (bool, int, float, complex, np.number, np.bool_)


def _arg_key(a) -> tuple:
    if isinstance(a, _Leaf):
        return ("leaf", a.index)
    if isinstance(a, _Expr):
        return ("node", id(a))  # interned: one object per structure
    if isinstance(a, _EXACT_SCALARS):
        return ("scalar", type(a), repr(a))  # 2 and 2.0 differ in type, 0.0 and -0.0 in repr
    return ("object", id(a))


def _intern(nodes: dict, node: _Expr) -> _Expr:
    """The one node of ``nodes`` that computes what ``node`` does (``node`` if new).

    Two nodes are the same operation when their functions, result dtypes and arguments
    are: the same leaves, the same (interned) nodes, scalars of the same type and value.
    """
    fn_key = node.fn
    try:
        hash(fn_key)
    except TypeError:
        fn_key = ("object", id(node.fn))
    key = (fn_key, tuple(_arg_key(a) for a in node.args), node.dtype)
    return nodes.setdefault(key, node)


def _program(root: _Expr) -> tuple[_Step, ...]:
    """The steps computing ``root``: each node once, its arguments first, left to right."""
    steps: list[_Step] = []
    done: dict[int, _Ref] = {}

    def visit(node):
        if not isinstance(node, _Expr):
            return node
        got = done.get(id(node))
        if got is None:
            args = tuple(visit(a) for a in node.args)
            steps.append(_Step(node.fn, args, node.dtype))
            got = done[id(node)] = _Ref(len(steps) - 1)
        return got

    visit(root)
    return tuple(steps)


def _last_uses(steps: tuple[_Step, ...]) -> tuple[tuple[int, ...], ...]:
    """For each step, the earlier steps whose results it uses for the last time."""
    last: dict[int, int] = {}
    for i, step in enumerate(steps):
        for a in step.args:
            if isinstance(a, _Ref):
                last[a.step] = i
    out: list[list[int]] = [[] for _ in steps]
    for j, i in last.items():
        out[i].append(j)
    return tuple(tuple(sorted(js)) for js in out)


# The ufunc each of Python's operators applies to numpy arrays (``ndarray.__mul__`` is
# ``np.multiply``), for :func:`_into_temporary`. ``pow`` is left out: ``a ** 2`` takes
# numpy's square shortcut, which ``np.power`` does not.
_OPERATOR_UFUNCS = {
    operator.abs: np.absolute, operator.neg: np.negative, operator.pos: np.positive,
    operator.invert: np.invert,
    operator.add: np.add, operator.sub: np.subtract, operator.mul: np.multiply,
    operator.truediv: np.true_divide, operator.floordiv: np.floor_divide,
    operator.mod: np.remainder, operator.and_: np.bitwise_and, operator.or_: np.bitwise_or,
    operator.xor: np.bitwise_xor, operator.lshift: np.left_shift,
    operator.rshift: np.right_shift,
    operator.eq: np.equal, operator.ne: np.not_equal, operator.lt: np.less,
    operator.le: np.less_equal, operator.gt: np.greater, operator.ge: np.greater_equal,
}  # fmt: skip


def _ufunc_of(fn: Callable) -> np.ufunc | None:
    """The one-output ufunc ``fn`` is (or that the operator ``fn`` applies to arrays)."""
    if isinstance(fn, np.ufunc):
        return fn if fn.nout == 1 and fn.signature is None else None
    try:
        return _OPERATOR_UFUNCS.get(fn)
    except TypeError:  # an unhashable callable
        return None


def _into_temporary(step: _Step, args: list, values: list, freed: tuple[int, ...]):
    """``step`` computed into a temporary block it uses for the last time, else ``None``.

    Only numpy: the step is a ufunc of numpy arrays and numeric scalars, the temporary
    (a result of an earlier step of this task, never a leaf block) owns its memory and has
    the step's result dtype and shape, so writing into it gives the values a fresh block
    would, without allocating one.
    """
    ufunc = _ufunc_of(step.fn)
    if ufunc is None or step.dtype is None or ufunc.nin != len(args):
        return None
    if not all(
        type(a) is np.ndarray if isinstance(a, np.ndarray) else isinstance(a, _EXACT_SCALARS)
        for a in args
    ):
        return None
    for a in step.args:
        if isinstance(a, _Ref) and a.step in freed:
            block = values[a.step]
            if (
                type(block) is np.ndarray
                and block.ndim
                and block.dtype == step.dtype
                and block.flags.owndata
                and block.flags.writeable
                and block.shape == np.broadcast_shapes(*(np.shape(b) for b in args))
            ):
                return ufunc(*args, out=block)
    return None


class Fused:
    """A task function: a chain of elementwise operations evaluated on one block of each leaf.

    Built by :meth:`Producer.fused` from the chain's expression, a DAG of :class:`_Expr`
    nodes; it runs the program of that DAG (:func:`_program`): each operation once, in
    the order the chain built them. A temporary block is dropped after the last step that
    uses it, and where that step is a numpy ufunc giving a block of the same dtype and
    shape, the step writes into it (:func:`_into_temporary`), so a linear chain holds one
    temporary block at a time. Picklable (the program: functions, leaves, refs and scalars).

    >>> f = Fused(_Expr(np.add, (_Expr(np.negative, (_Leaf(0),)), 1.0)), "add")
    >>> f(np.arange(3.0)).tolist()
    [1.0, 0.0, -1.0]
    >>> y = _Expr(np.add, (_Leaf(0), 1.0))
    >>> g = Fused(_Expr(np.multiply, (y, y)), "mul")  # y * y: y computed once
    >>> len(g.steps), g(np.arange(3.0)).tolist()
    (2, [1.0, 4.0, 9.0])
    """

    __slots__ = ("__name__", "_drops", "steps")

    def __init__(self, expr: _Expr, name: str):
        self.steps = _program(expr)
        self._drops = _last_uses(self.steps)
        self.__name__ = name

    @classmethod
    def _of_steps(cls, steps: tuple, name: str) -> Fused:
        self = cls.__new__(cls)
        self.steps = steps
        self._drops = _last_uses(steps)
        self.__name__ = name
        return self

    @property
    def expr(self) -> _Expr:
        """The DAG of the program (its last step's node; shared steps are shared nodes)."""
        nodes: list[_Expr] = []
        for step in self.steps:
            args = tuple(nodes[a.step] if isinstance(a, _Ref) else a for a in step.args)
            nodes.append(_Expr(step.fn, args, step.dtype))
        return nodes[-1]

    def __call__(self, *blocks):
        values: list = [None] * len(self.steps)
        for i, (step, freed) in enumerate(zip(self.steps, self._drops, strict=True)):
            args = [
                blocks[a.index]
                if isinstance(a, _Leaf)
                else values[a.step]
                if isinstance(a, _Ref)
                else a
                for a in step.args
            ]
            result = _into_temporary(step, args, values, freed) if freed else None
            if result is None:
                result = step.fn(*args)
            for j in freed:
                values[j] = None
            values[i] = result
        return values[-1]

    def __reduce__(self):
        return (Fused._of_steps, (self.steps, self.__name__))

    def __repr__(self) -> str:
        return f"Fused({self.__name__})"


@dataclass(frozen=True)
class TorchKernel:
    """A unary elementwise function whose chunks are computed by torch's function ``name``.

    Called on dask arrays it builds Dask's elementwise layer (one task per chunk,
    result type ``dtype``); called on a chunk it runs ``torch.<name>`` on it: the chunk
    reaches torch through :func:`dndask._torch.to_torch` (a view; DLPack for device
    chunks) and the result comes back as a chunk of the same device
    (:func:`dndask._xp.from_torch`). torch is imported by the task that runs it, so a
    worker imports torch only when it computes such a chunk. Pure data (a name and a
    dtype): it pickles and tokenizes by value, and :class:`Producer` fuses it like a
    ufunc. The Heat face computes its transcendental functions with it, so their values
    are torch's to the last bit, as Heat's are.

    >>> k = TorchKernel("exp", np.dtype(np.float32))
    >>> k(np.zeros(2, dtype=np.float32)).tolist()
    [1.0, 1.0]
    >>> k(da.zeros(4, chunks=2, dtype=np.float32)).compute().tolist()
    [1.0, 1.0, 1.0, 1.0]
    """

    name: str
    dtype: np.dtype

    def __call__(self, x):
        if isinstance(x, da.Array):
            meta = _xp.empty_like_meta(_graph.chunk_meta(x), (0,) * x.ndim, self.dtype)
            return da.map_blocks(self, x, dtype=self.dtype, meta=meta, token=f"torch-{self.name}")
        fn = getattr(_torch.torch(), self.name)
        return _xp.from_torch(fn(_torch.to_torch(x)), x)


def _one_row_split(fn: Callable, arrays: list, split: int, wrong: da.Array) -> da.Array:
    """``fn(*arrays)`` when the split axis has one row spread over several chunks.

    Dask treats a length-1 axis as broadcastable and feeds every output
    chunk from block 0, so chunks ``(1, 0, 0)`` would come out as three rows.
    The operands are cut down to their one non-empty block along the split
    axis (a graph rewrite, no data moves), and the empty ranks are put back.
    """
    ndim = wrong.ndim
    cut = []
    for x in arrays:
        axis = split - (ndim - getattr(x, "ndim", 0))
        if isinstance(x, da.Array) and axis >= 0 and len(x.chunks[axis]) > 1:
            keep = next((i for i, c in enumerate(x.chunks[axis]) if c), 0)
            x = pick_blocks(x, tuple(keep if a == axis else slice(None) for a in range(x.ndim)))
        cut.append(x)
    return _distribution.restore_empty_ranks(fn(*cut), split, wrong.chunks[split])


def _dtype_of(value) -> str:
    if isinstance(value, (_dndarray.DNDarray, np.ndarray)):
        return str(value.dtype)
    if _torch.is_tensor(value):
        return str(value.dtype).removeprefix("torch.")
    return type(value).__name__


def into(out, result: _dndarray.DNDarray, name: str) -> _dndarray.DNDarray:
    """Write ``result`` into the DNDarray ``out`` (unless ``out`` is None); returns ``out``.

    ``out`` keeps its split, distribution and dtype; the result is checked
    first (shape, safe cast), so a failure leaves ``out`` unchanged.
    """
    if out is None:
        return result
    if isinstance(out, tuple) and len(out) == 1:
        out = out[0]
    if not isinstance(out, _dndarray.DNDarray):
        raise TypeError(f"`out` of `{name}` must be a DNDarray, got {type(out).__name__}")
    if out.comm != result.comm:
        raise ValueError(f"`out` of `{name}` must be on the operands' comm, got {out.comm!r}")
    if result.shape != out.shape:
        raise ValueError(f"`out` of `{name}` must have shape {result.shape}, got {out.shape}")
    if not np.can_cast(result.dtype, out.dtype, "same_kind"):
        raise TypeError(
            f"`out` of `{name}` cannot hold the result: cannot cast {result.dtype} to {out.dtype}"
        )
    result = _distribution.relayout(result, out.distribution)
    array = result.to_dask()
    if array.dtype != out.dtype:
        array = array.astype(out.dtype)
    return out._set(array, out.split, result._task_ranks)


def binary(op: Callable, left, right) -> _dndarray.DNDarray:
    """A binary operator; NotImplemented for operands dndask does not handle."""
    for v in (left, right):
        if not (
            isinstance(v, (_dndarray.DNDarray, np.ndarray, da.Array))
            or _torch.is_tensor(v)
            or _types.is_scalar(v)
        ):
            return NotImplemented
    return elementwise(op, left, right, name=op.__name__)


def inplace(op: Callable, target: _dndarray.DNDarray, other) -> _dndarray.DNDarray:
    """``target op= other``: checked first, then ``target``'s graph is replaced."""
    result = binary(op, target, other)
    if result is NotImplemented:
        return NotImplemented
    if result.shape != target.shape:
        raise ValueError(
            f"in-place `{op.__name__}` cannot change the shape {target.shape}, "
            f"got {_describe(other)}"
        )
    if not np.can_cast(result.dtype, target.dtype, "same_kind"):
        raise TypeError(
            f"in-place `{op.__name__}` cannot cast the result from {result.dtype} to {target.dtype}"
        )
    return into(target, result, op.__name__)


def _without_empty_ranks(a: _dndarray.DNDarray):
    """``a``'s dask array minus the empty chunks of its split axis (about to be reduced).

    Dask's min/max/mean trip over zero-size chunks; dropping them only
    rewires the graph (no data moves), and the reduced axis disappears anyway.
    """
    x = a.to_dask()
    keep = [r for r, c in enumerate(x.chunks[a.split]) if c] or [0]
    if len(keep) == len(x.chunks[a.split]):
        return x
    index = [slice(None)] * x.ndim
    blocks = []
    for r in keep:
        index[a.split] = r
        blocks.append(pick_blocks(x, tuple(index)))
    return blocks[0] if len(blocks) == 1 else da.concatenate(blocks, axis=a.split)


def _result_dtype(local: Callable, dtype: np.dtype, ndim: int) -> np.dtype:
    """The dtype ``local`` returns for chunks of ``dtype`` (tried on one element)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(local(np.ones((1,) * ndim, dtype=dtype))).dtype


def _local_reduction(np_fn: Callable, x, axes, keepdims: bool, kwargs: dict, label: str = ""):
    """Reduce axes that each chunk holds whole: one task per rank, no combine step."""
    label = label or np_fn.__name__
    local = functools.partial(np_fn, axis=axes, keepdims=keepdims, **kwargs)
    dtype = _result_dtype(local, x.dtype, x.ndim)
    chunks = [
        ((1,) * len(c) if keepdims else None) if axis in axes else c
        for axis, c in enumerate(x.chunks)
    ]
    chunks = tuple(c for c in chunks if c is not None)
    return da.map_blocks(
        local,
        x,
        chunks=chunks,
        drop_axis=[] if keepdims else list(axes),
        dtype=dtype,
        meta=_graph.meta_of(dtype, len(chunks), like=x),
        name=f"{label}-local-{tokenize(label, x.name, axes, keepdims, kwargs)}",
    )


def _check_keepdims(keepdims: object) -> None:
    if not isinstance(keepdims, (bool, np.bool_)):
        raise TypeError(f"`keepdims` must be a bool, got {type(keepdims).__name__}")


def _check_not_empty(a: _dndarray.DNDarray, axes: tuple[int, ...], name: str) -> None:
    """Reductions without an identity (min, argmax, ...) refuse to reduce zero elements."""
    if any(a.shape[ax] == 0 for ax in axes):
        raise ValueError(
            f"`{name}` of a zero-size reduction has no identity: "
            f"{_describe(a)} reduced over axes {axes}"
        )


def reduce(
    np_fn: Callable,
    dask_fn: Callable,
    a: _dndarray.DNDarray,
    axis,
    keepdims: bool,
    *,
    out=None,
    needs_elements: bool = False,
    **kwargs,
):
    """A reduction; the result's split follows the reduced axes.

    Axes other than ``split`` are whole in every chunk, so they reduce
    locally on each rank; a reduction over ``split`` uses Dask's tree
    reduction. ``needs_elements`` marks reductions without an identity.
    """
    name = np_fn.__name__
    _check_operand(a, name)
    _check_keepdims(keepdims)
    axes = _layout.normalize_axes(axis, a.ndim)
    if needs_elements:
        _check_not_empty(a, axes, name)
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    if "dtype" in kwargs:
        kwargs["dtype"] = _types.canonical_dtype(kwargs["dtype"])
    task_ranks: dict = {}
    if a.split is None or a.split not in axes:
        result = _local_reduction(np_fn, a.to_dask(), axes, bool(keepdims), kwargs)
    elif np_fn in _FLAT_AGGREGATES and set(kwargs) <= {"dtype"} and a.size:
        result, task_ranks = _flat_reduction(np_fn, a, axes, bool(keepdims), kwargs)
    elif a.size == 0:
        # Dask's min/max stand a (1, ..., 1, 0) placeholder in for every empty
        # chunk, which fails (or gives a wrong shape) once another axis is empty.
        # Without elements, joining the chunks into one moves nothing.
        x = _without_empty_ranks(a)
        result = _local_reduction(np_fn, x.rechunk(x.shape), axes, bool(keepdims), kwargs)
    elif np_fn is np.var and set(kwargs) == {"ddof"} and _moment_partials.applies(a.to_dask()):
        # the partials skew and kurtosis use too (one pass a chunk, shared when together)
        variance = functools.partial(_moment_partials.variance, ddof=kwargs["ddof"])
        result = _moment_partials.reduction(a.to_dask(), variance, axes, bool(keepdims))
    else:
        result = dask_fn(_without_empty_ranks(a), axis=axes, keepdims=bool(keepdims), **kwargs)
    split = _layout.reduced_split(a.split, axes, bool(keepdims))
    made = _dndarray.from_dask(result, split, a.comm, parents=(a,))
    made._task_ranks.update(task_ranks)
    return into(out, made, name)


# The reductions over the split axis built by :func:`_flat_reduction`, and the function that
# combines their per-rank partials. nansum's and nanprod's partials combine with sum and
# prod, as Dask's do: a partial holds no NaN to skip unless its chunk made one (inf - inf),
# which must stay NaN in the result.
_FLAT_AGGREGATES: dict[Callable, Callable] = {
    np.sum: np.sum,
    np.prod: np.prod,
    np.min: np.min,
    np.max: np.max,
    np.any: np.any,
    np.all: np.all,
    np.nansum: np.sum,
    np.nanprod: np.prod,
    np.nanmin: np.nanmin,
    np.nanmax: np.nanmax,
}
# The most partials one task combines. Up to this many, one aggregate task fetches them all
# (each is a few bytes: the reduced axes have length 1); above it they combine in a tree of
# this fan-in, so no single task waits on hundreds of transfers in a row and the combining
# spreads over the workers (log_32(P) levels: 2 up to 1024 ranks).
_FAN_IN = 32


def _concat_reduce(reduction: Callable, axis: int, *parts):
    """``reduction`` of the partials ``parts`` joined along ``axis`` (a task function)."""
    return reduction(_xp.concatenate(parts, axis))


def _flat_reduction(
    np_fn: Callable, a: _dndarray.DNDarray, axes: tuple[int, ...], keepdims: bool, kwargs: dict
) -> tuple[da.Array, dict]:
    """``np_fn`` over ``axes`` (the split axis among them): one partial per rank, one aggregate.

    Each non-empty rank reduces its chunk with ``keepdims`` (a task pinned to the rank);
    one task joins the partials along the split axis and reduces them with
    ``_FLAT_AGGREGATES[np_fn]`` (above :data:`_FAN_IN` partials, a tree does). Dask's
    tree reduction would add a per-chunk task and ``log2(P)`` levels of combining.

    If ``a`` is the unpersisted result of an elementwise operation (``a._producer``),
    each partial runs that operation on the operands' blocks and reduces in one task,
    so ``(a + 1).sum()`` is ``P + 1`` tasks and ``a + 1`` is not in the graph. The
    fused layers get names of their own (a token over "fused", the operation's name and
    the reduction), so a key always means one task, whichever arrays are computed together.

    Returns the result (one chunk) and the rank of each partial and combining task.
    Dtypes follow Dask's reductions: sum and prod (and their nan-forms) reduce in the
    dtype numpy gives one element of ``a``'s dtype, unless ``dtype`` is given.
    """
    x = a.to_dask()
    split = a.split
    kwargs = dict(kwargs)
    if np_fn in (np.sum, np.prod, np.nansum, np.nanprod) and "dtype" not in kwargs:
        kwargs["dtype"] = np_fn(np.ones(1, dtype=x.dtype)).dtype
    producer = a._producer if a._producer is not None and a._producer.name == x.name else None
    label = np_fn.__name__
    if producer is None:
        token = tokenize("flat", label, x.name, axes, keepdims, kwargs)
        prefix, dependencies = label, [x]
    else:
        token = tokenize("fused", label, producer.name, axes, keepdims, kwargs)
        fn_name = getattr(producer.fn, "__name__", "elementwise")
        prefix, dependencies = f"{fn_name}-{label}", producer.arrays()
    partial = functools.partial(np_fn, axis=axes, keepdims=True, **kwargs)
    dsk: dict = {}
    task_ranks: dict = {}
    level = []
    for r, count in enumerate(x.chunks[split]):
        if not count:
            continue  # an empty rank adds nothing (and min/max have no identity)
        idx = _graph.block_index(split, x.ndim, r)
        key = (f"{prefix}-partial-{token}", r)
        dsk[key] = (partial, (x.name, *idx) if producer is None else producer.task(idx))
        task_ranks[key] = r
        level.append(key)
    combine = functools.partial(_FLAT_AGGREGATES[np_fn], axis=axes, keepdims=True, **kwargs)
    depth = 0
    while len(level) > _FAN_IN:
        depth += 1
        upper = []
        for i in range(0, len(level), _FAN_IN):
            key = (f"{prefix}-combine{depth}-{token}", i // _FAN_IN)
            dsk[key] = (_concat_reduce, combine, split, *level[i : i + _FAN_IN])
            task_ranks[key] = task_ranks[level[i]]
            upper.append(key)
        level = upper
    final = functools.partial(_FLAT_AGGREGATES[np_fn], axis=axes, keepdims=keepdims, **kwargs)
    shape = tuple(
        (1 if keepdims else None) if axis in axes else n for axis, n in enumerate(x.shape)
    )
    shape = tuple(n for n in shape if n is not None)
    name = f"{prefix}-{token}"
    dsk[(name, *(0,) * len(shape))] = (_concat_reduce, final, split, *level)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=dependencies)
    dtype = _result_dtype(final, x.dtype, x.ndim)
    meta = _graph.meta_of(dtype, len(shape), like=x)
    return new_array(graph, name, tuple((n,) for n in shape), meta), task_ranks


def arg_reduce(
    np_fn: Callable, dask_fn: Callable, a: _dndarray.DNDarray, axis, keepdims: bool, out=None
):
    """argmin/argmax: indices into the flattened array (``axis=None``) or along ``axis``."""
    name = np_fn.__name__
    _check_operand(a, name)
    _check_keepdims(keepdims)
    keepdims = bool(keepdims)
    if axis is None:
        _check_not_empty(a, tuple(range(a.ndim)), name)
        x = a.to_dask() if a.split is None else _without_empty_ranks(a)
        result = dask_fn(x, axis=None, keepdims=keepdims)
        split = None
    else:
        if isinstance(axis, (tuple, list)):
            raise TypeError(f"`axis` of `{name}` must be an int or None, got {axis!r}")
        (ax,) = _layout.normalize_axes(axis, a.ndim)
        _check_not_empty(a, (ax,), name)
        if a.split == ax:
            result = dask_fn(_without_empty_ranks(a), axis=ax, keepdims=keepdims)
        else:
            result = _local_reduction(
                functools.partial(_along_one_axis, fn=np_fn), a.to_dask(), (ax,), keepdims, {}, name
            )
        split = _layout.reduced_split(a.split, (ax,), keepdims)
    return into(out, _dndarray.from_dask(result, split, a.comm, parents=(a,)), name)


def _along_one_axis(chunk: np.ndarray, axis: tuple[int], keepdims: bool, fn: Callable):
    return fn(chunk, axis=axis[0], keepdims=keepdims)


def cumulative(np_fn: Callable, dask_fn: Callable, a: _dndarray.DNDarray, axis, dtype, out=None):
    """cumsum/cumprod (or nancumsum/nancumprod) along ``axis`` (``None``: flattened, split 0)."""
    name = np_fn.__name__
    _check_operand(a, name)
    if axis is None:
        a = a.flatten()
        axis = 0
    (ax,) = _layout.normalize_axes(axis, a.ndim)
    dtype = None if dtype is None else _types.canonical_dtype(dtype)
    x = a.to_dask()
    local = functools.partial(np_fn, axis=ax, dtype=dtype)
    out_dtype = _result_dtype(local, x.dtype, x.ndim)
    task_ranks: dict = {}
    if a.split == ax:
        combine = np.add if np_fn in (np.cumsum, np.nancumsum) else np.multiply
        result, task_ranks = _scan.split_scan(np_fn, combine, x, ax, out_dtype)
    else:
        meta = _graph.meta_of(out_dtype, x.ndim, like=x)
        result = x.map_blocks(local, dtype=out_dtype, meta=meta)
    out_array = _dndarray.from_dask(result, a.split, a.comm, parents=(a,))
    out_array._task_ranks.update(task_ranks)
    return into(out, out_array, name)


def check_one_device(arrays, name: str) -> None:
    """ValueError, naming the devices, when the DNDarrays ``arrays`` are not on one device.

    No implicit transfer: the caller moves one side explicitly (``.cpu()``, ``.gpu()``).
    """
    devices = {str(v.device) for v in arrays}
    if len(devices) > 1:
        raise ValueError(
            f"operands of `{name}` must be on one device, got {' and '.join(sorted(devices))}; "
            "move one with .cpu() or .gpu()"
        )


def _check_operand(a: object, name: str) -> None:
    if not isinstance(a, _dndarray.DNDarray):
        raise TypeError(f"`a` of `{name}` must be a DNDarray, got {type(a).__name__}")
