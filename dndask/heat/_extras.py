"""The face's functions whose Heat semantics need more than an argument adapter.

Each is a composition of the core's functions (nothing computes here); the face's
namespace (:mod:`dndask.heat`) registers them over the generated ones.
"""

from __future__ import annotations

import warnings

import numpy as np

import dndask as _core

from .. import _comm, _dndarray, _per_rank, _torch
from . import _adapt, types

__all__ = [
    "ObjectComm",
    "floats_only",
    "gathered_indices",
    "heat_sign",
    "same_split_axes",
    "spmd_pieces",
]


def heat_sign(promoted_sign):
    """Heat's ``sign``: for complex input ``x / sqrt(x**2)``, so ``±1 + 0j`` (or 0).

    That is the sign of the real part, or of the imaginary part where the real part
    is 0, as a complex number (numpy 1's convention; numpy 2 gives ``x / |x|``).
    Real input: the generated function (torch's dtype rule).
    """

    def sign(x, out=None):
        if not (isinstance(x, _dndarray.DNDarray) and x.to_dask().dtype.kind == "c"):
            return promoted_sign(x, out=out)
        re, im = _core.real(x), _core.imag(x)
        result = _core.where(re != 0, _core.sign(re), _core.sign(im)).astype(x.to_dask().dtype)
        if out is None:
            return _adapt.face(result)
        return _adapt.face(_adapt.into(out, result, "sign"))

    sign.__name__ = sign.__qualname__ = "sign"
    sign.__doc__ = heat_sign.__doc__
    return sign


def floats_only(fn, name: str):
    """``fn`` for real floating operands only (Heat's ``copysign_``: ints and complex refused)."""

    def checked(x1, x2, *args, **kwargs):
        for i, v in enumerate((x1, x2)):
            if isinstance(v, _dndarray.DNDarray) or _adapt._is_scalar(v):
                t = types.heat_type_of(v)
                if t.dtype.kind != "f":
                    raise TypeError(
                        f"operand {i} of `{name}` must be real floating, got {t.__name__}"
                    )
        return fn(x1, x2, *args, **kwargs)

    checked.__name__ = checked.__qualname__ = name
    checked.__doc__ = floats_only.__doc__
    return checked


def same_split_axes(fn):
    """``fn`` refusing two operands distributed along different axes (Heat's ``maximum``).

    The axes are compared after broadcasting aligns the operands' trailing dimensions;
    Heat raises ``NotImplementedError`` there.
    """

    def guarded(x1, x2, *args, **kwargs):
        if (
            isinstance(x1, _dndarray.DNDarray)
            and isinstance(x2, _dndarray.DNDarray)
            and x1.is_distributed()
            and x2.is_distributed()
        ):
            ndim = max(x1.ndim, x2.ndim)
            if x1.split + ndim - x1.ndim != x2.split + ndim - x2.ndim:
                raise NotImplementedError(
                    f"`{fn.__name__}` of operands distributed along different axes "
                    f"(split {x1.split} and {x2.split}) is not implemented (as in Heat)"
                )
        return fn(x1, x2, *args, **kwargs)

    guarded.__name__ = guarded.__qualname__ = fn.__name__
    guarded.__doc__ = fn.__doc__
    return guarded


def spmd_pieces(obj, is_split, comm):
    """Heat's ``array(local, is_split=k)`` in one driver: every rank's piece is ``local``.

    Heat's SPMD code runs on every process, so a single local array given with
    ``is_split`` is each rank's piece, and the global array stacks ``comm.size`` of
    them along ``is_split``. Per-rank pieces (a ``PerRank``, or a list of ``comm.size``
    arrays) and a DNDarray already split along ``is_split`` go to the core unchanged; a
    DNDarray split along another axis is a ``ValueError``, as in Heat, and a ``split=None``
    one counts as one local array.
    """
    if isinstance(obj, _per_rank.PerRank):
        return obj
    if isinstance(obj, _dndarray.DNDarray) and obj.split is None:
        obj = obj.numpy()  # Heat: the process's copy is its local piece
    elif isinstance(obj, _dndarray.DNDarray):
        if obj.split != is_split:
            raise ValueError(
                f"`is_split` must match the split of a DNDarray `obj`, got {is_split} for an "
                f"array split along {obj.split} (as in Heat)"
            )
        return obj
    size = _comm.sanitize_comm(comm).size
    pieces = (np.ndarray, _dndarray.DNDarray)
    if (
        isinstance(obj, (list, tuple))
        and len(obj) == size
        and all(isinstance(p, pieces) or _torch.is_tensor(p) for p in obj)
    ):
        return obj
    if _torch.is_tensor(obj):
        local = obj.detach().cpu().numpy()
    elif isinstance(obj, np.ndarray):
        local = obj
    elif isinstance(obj, (list, tuple)) or _adapt._is_scalar(obj):
        local = np.asarray(obj)
        # Heat builds Python data as torch does: floats are float32, complex complex64
        heat_default = {"f": np.float32, "c": np.complex64}
        local = local.astype(heat_default.get(local.dtype.kind, local.dtype))
    else:
        return obj  # the core names what is wrong
    return [local] * size


def gathered_indices(fn, name: str):
    """``fn(x, indices_or_sections, ...)`` warning when the indices are a distributed array.

    Heat warns that a distributed ``indices_or_sections`` is copied to every process;
    dndask fetches it to the driver, which is the same cost, so the face warns too.
    """

    def split(x, indices_or_sections, *args, **kwargs):
        if isinstance(indices_or_sections, _dndarray.DNDarray) and (
            indices_or_sections.is_distributed()
        ):
            warnings.warn(
                f"`indices_or_sections` of `{name}` is distributed: its values are gathered "
                "(as Heat copies them to every process)",
                UserWarning,
                stacklevel=2,
            )
        return fn(x, indices_or_sections, *args, **kwargs)

    split.__name__ = split.__qualname__ = name
    split.__doc__ = fn.__doc__
    return split


class ObjectComm:
    """Heat's ``ht.comm`` (mpi4py's ``COMM_WORLD``) for a driver program: its object
    collectives, over dndask's default comm.

    Heat's SPMD code runs on every process, and ``ht.comm.bcast(obj, root=0)`` makes every
    process hold the root's ``obj``. A dndask program is one driver: there is one ``obj``,
    which every rank already sees, so ``bcast`` returns it (after checking ``root``).
    Everything else is the comm's own (``size``, ``workers``...).

    >>> import dndask as dd
    >>> comm = ObjectComm(dd.get_comm())
    >>> comm.bcast([1, 2], root=0), comm.size == dd.get_comm().size
    ([1, 2], True)
    """

    def __init__(self, comm: _comm.Comm) -> None:
        self._comm = comm

    def bcast(self, obj, root: int = 0):
        """``obj`` as every rank would receive it from ``root``: the driver's own object."""
        if isinstance(root, bool) or not isinstance(root, (int, np.integer)):
            raise TypeError(f"`root` of `bcast` must be an int, got {type(root).__name__}")
        if not 0 <= root < self._comm.size:
            raise ValueError(f"`root` of `bcast` must be in [0, {self._comm.size}), got {root}")
        return obj

    def __getattr__(self, name: str):
        return getattr(self._comm, name)

    def __repr__(self) -> str:
        return f"ObjectComm({self._comm!r})"
