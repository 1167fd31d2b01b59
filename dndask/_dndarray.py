"""The DNDarray: a Dask array whose chunk grid along ``split`` is the distribution map."""

from __future__ import annotations

import operator
from collections.abc import Callable

import dask.array as da
import numpy as np
import torch

from . import (
    _comm,
    _compute,
    _distribution,
    _elementwise,
    _indexing,
    _layout,
    _linalg,
    _manipulation,
    _ops,
    _per_rank,
    _protocols,
    _reductions,
    _repr,
    _types,
    _xarray,
)
from ._comm import Comm
from ._graph import block_index
from ._torch import to_torch


class Device:
    """Where chunks live; ``str(device)`` is Heat's ``cpu:0`` form.

    >>> Device("cpu")
    device(cpu:0)
    """

    def __init__(self, device_type: str = "cpu", device_id: int = 0):
        if device_type not in ("cpu", "gpu"):
            raise ValueError(f"`device_type` must be 'cpu' or 'gpu', got {device_type!r}")
        self.device_type = device_type
        self.device_id = device_id

    @property
    def torch_device(self) -> str:
        """The torch device string of local tensors."""
        return "cpu" if self.device_type == "cpu" else f"cuda:{self.device_id}"

    def __str__(self) -> str:
        return f"{self.device_type}:{self.device_id}"

    def __repr__(self) -> str:
        return f"device({self})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return other in (str(self), self.device_type)
        return isinstance(other, Device) and str(other) == str(self)

    def __hash__(self) -> int:
        return hash(str(self))


cpu = Device("cpu")


class LshapeMap(torch.Tensor):
    """The ``(size, ndim)`` int64 table of local shapes: a torch tensor with ``copy()``.

    Heat users call torch methods on it; the seed notebook also calls ``.copy()``.

    >>> m = LshapeMap.of(np.array([[2, 4], [1, 4]]))
    >>> m.copy()[:, 0].tolist()
    [2, 1]
    """

    @staticmethod
    def of(table: np.ndarray) -> LshapeMap:
        return torch.from_numpy(np.ascontiguousarray(table, dtype=np.int64)).as_subclass(LshapeMap)

    def copy(self) -> LshapeMap:
        """A copy that can be edited freely (same as ``clone()``)."""
        return self.clone()

    def __repr__(self, *, tensor_contents=None) -> str:
        return repr(self.as_subclass(torch.Tensor))


class DNDarray:
    """A global array split along one axis over the ranks of a :class:`Comm`.

    It wraps a ``dask.array.Array`` whose chunks along ``split`` are exactly
    one per rank (chunk ``r`` is rank ``r``'s ``lshape``) and which has a
    single chunk along every other axis. Build one with the factories
    (:func:`dndask.array`, :func:`dndask.zeros`, ...) rather than directly.

    Parameters
    ----------
    array : dask.array.Array
        Chunked as described above.
    split : int or None
        The distributed axis.
    comm : Comm
        The ranks.

    Examples
    --------
    >>> import dndask as ht
    >>> a = ht.arange(10, split=0, comm=ht.get_comm().subcomm([0, 1, 2]))
    >>> a.lshape_map.tolist()
    [[4], [3], [3]]
    >>> a.counts_displs()
    ((4, 3, 3), (0, 4, 7))
    """

    __array_priority__ = 100

    def __init__(self, array: da.Array, split: int | None, comm: Comm):
        if not isinstance(array, da.Array):
            raise TypeError(f"`array` must be a dask.array.Array, got {type(array).__name__}")
        if not isinstance(comm, Comm):
            raise TypeError(f"`comm` must be a dndask.Comm, got {type(comm).__name__}")
        split = _layout.normalize_axis(split, array.ndim, "split")
        if any(np.isnan(c) for dim in array.chunks for c in dim):
            raise ValueError("`array` must have known chunk sizes")
        _layout.counts_from_chunks(array.chunks, split, comm.size)
        self._array = array
        self._split = split
        self._comm = comm
        # rank of every dndask-made task upstream of the chunks (see _lineage)
        self._hints: dict = {}

    # ------------------------------------------------------------------ metadata
    @property
    def shape(self) -> tuple[int, ...]:
        """Global shape."""
        return tuple(int(s) for s in self._array.shape)

    gshape = shape

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return self._array.ndim

    @property
    def size(self) -> int:
        """Global number of elements."""
        return int(np.prod(self.shape, dtype=np.int64))

    gnumel = size

    @property
    def nbytes(self) -> int:
        """Global number of bytes."""
        return self.size * self.dtype.itemsize

    gnbytes = nbytes

    @property
    def dtype(self) -> np.dtype:
        """Element type (a numpy dtype; compare with ``ht.float32`` etc.)."""
        return self._array.dtype

    @property
    def split(self) -> int | None:
        """The distributed axis, or ``None`` if every rank holds the whole array."""
        return self._split

    @property
    def comm(self) -> Comm:
        """The ranks this array is distributed over."""
        return self._comm

    @property
    def device(self) -> Device:
        """Where the chunks live."""
        return cpu

    def _counts(self) -> tuple[int, ...]:
        return _layout.counts_from_chunks(self._array.chunks, self._split, self._comm.size)

    @property
    def lshape_map(self) -> LshapeMap:
        """A fresh ``(size, ndim)`` int64 tensor of every rank's local shape (no communication)."""
        return LshapeMap.of(
            _layout.lshape_map_from_counts(self.shape, self._split, self._counts(), self._comm.size)
        )

    @property
    def lshape(self) -> tuple[int, ...]:
        """Local shape of ``comm.rank`` (rank 0 in the driver)."""
        if self._split is None:
            return self.shape
        counts = self._counts()
        return tuple(
            counts[self._comm.rank] if a == self._split else s for a, s in enumerate(self.shape)
        )

    @property
    def lnumel(self) -> int:
        """Number of elements of the local shape."""
        return int(np.prod(self.lshape, dtype=np.int64))

    def counts_displs(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Rows per rank along ``split`` and their offsets (the actual distribution)."""
        if self._split is None:
            raise ValueError("`counts_displs` needs a split array, got split=None")
        counts = self._counts()
        return counts, _layout.displacements(counts)

    @property
    def balanced(self) -> bool:
        """Whether the distribution is Heat's balanced one (read off the chunks, always known)."""
        if self._split is None:
            return True
        return self._counts() == _layout.balanced_counts(self.shape[self._split], self._comm.size)

    def is_balanced(self, force_check: bool = False) -> bool:
        """Whether the array is balanced; ``force_check`` is accepted for Heat compatibility."""
        if not isinstance(force_check, bool):
            raise TypeError(f"`force_check` must be a bool, got {type(force_check).__name__}")
        return self.balanced

    def is_distributed(self) -> bool:
        """Whether the array is split over more than one rank."""
        return self._split is not None and self._comm.size > 1

    def _chunk_keys(self) -> list[tuple]:
        if self._split is None:
            return [(self._array.name,) + (0,) * self.ndim]
        return [
            (self._array.name, *block_index(self._split, self.ndim, r))
            for r in range(self._comm.size)
        ]

    @property
    def larray(self) -> torch.Tensor:
        """Rank 0's local chunk as a torch tensor (computed, zero-copy where possible)."""
        block = self._array
        if self.ndim:  # a 0-d array is its own single block (dask has no blocks[()])
            block = block.blocks[block_index(self._split, self.ndim, 0)]
        return to_torch(_compute.compute(block, self._comm.client, {}))

    def _lineage(self) -> dict:
        """The rank of each chunk key, and of every upstream dndask task not yet computed.

        Persisting pins these tasks to their rank's worker, so chains of
        per-rank work and the slices of a redistribution run where their
        data lives, as Heat's SPMD ranks would.
        """
        out = dict(self._hints)
        for r, key in enumerate(self._chunk_keys()):
            out[key] = r
        return out

    # ------------------------------------------------------------ state changes
    def _set(self, array: da.Array, split: int | None, hints: dict | None = None) -> DNDarray:
        """Swap in a new graph and split after every check has passed.

        ``hints`` are the ranks of the tasks the new graph adds; ``None``
        means the graph is already in memory and forgets its lineage.
        """
        _layout.counts_from_chunks(array.chunks, split, self._comm.size)
        lineage = {} if hints is None else {**self._lineage(), **hints}
        self._array, self._split, self._hints = array, split, lineage
        return self

    def copy(self) -> DNDarray:
        """A new DNDarray with the same values and distribution.

        Dask graphs are immutable, so this is free; in-place calls on the copy
        leave the original untouched.
        """
        x = self._array
        out = DNDarray(da.Array(x.dask, x.name, x.chunks, meta=x._meta), self._split, self._comm)
        out._hints = dict(self._hints)
        return out

    def redistribute_(self, lshape_map=None, target_map=None) -> DNDarray:
        """Move rows along ``split`` so rank ``r`` holds ``target_map[r, split]`` of them.

        Lazy: the graph changes now, data moves (worker to worker) when the
        array is computed or persisted. With no ``target_map`` the array is
        balanced. ``lshape_map``, if given, must describe the current
        distribution (dndask knows it already, so it is only checked).

        Parameters
        ----------
        lshape_map : torch.Tensor, optional
            The current map, as returned by :attr:`lshape_map`.
        target_map : torch.Tensor, optional
            An integer ``(comm.size, ndim)`` map; non-split columns must equal
            the global shape, the split column must sum to ``shape[split]``.

        Returns
        -------
        DNDarray
            ``self``.

        Examples
        --------
        >>> import dndask as ht, torch
        >>> a = ht.zeros((7, 4, 3), split=0, comm=ht.get_comm().subcomm([0, 1, 2, 3]))
        >>> target = a.lshape_map
        >>> target[:, a.split] = torch.tensor([1, 2, 2, 2])
        >>> a.redistribute_(target_map=target).lshape_map[:, 0].tolist()
        [1, 2, 2, 2]
        """
        if self._split is None:
            raise ValueError(
                "`redistribute_` needs a split array, got split=None; use resplit_(axis) first"
            )
        size, split, shape = self._comm.size, self._split, self.shape
        if lshape_map is not None:
            given = _layout.validate_map(lshape_map, shape, split, size, "lshape_map")
            if given != self._counts():
                raise ValueError(
                    f"`lshape_map` must match the current distribution {list(self._counts())} "
                    f"along axis {split}, got {list(given)}"
                )
        if target_map is None:
            target = _layout.balanced_counts(shape[split], size)
        else:
            target = _layout.validate_map(target_map, shape, split, size, "target_map")
        array, hints = _distribution.redistribute(self._array, split, self._counts(), target)
        return self._set(array, split, hints)

    def redistribute(self, lshape_map=None, target_map=None) -> DNDarray:
        """Out-of-place :meth:`redistribute_`: a redistributed copy."""
        return self.copy().redistribute_(lshape_map=lshape_map, target_map=target_map)

    def balance_(self) -> DNDarray:
        """Redistribute to Heat's balanced layout (no-op if balanced); returns ``self``."""
        if self._split is None or self.balanced:
            return self
        return self.redistribute_()

    def balance(self, copy: bool = False) -> DNDarray:
        """Balance in place (``copy=False``, returns ``self``) or return a balanced copy."""
        if not isinstance(copy, bool):
            raise TypeError(f"`copy` must be a bool, got {type(copy).__name__}")
        return (self.copy() if copy else self).balance_()

    def resplit_(self, axis: int | None = None, *, method: str | None = None) -> DNDarray:
        """Change the split axis in place; the new axis is balanced. Returns ``self``.

        ``axis=None`` gathers the array into one chunk (every rank sees all of
        it); ``None -> axis`` slices that chunk. ``method`` picks the graph
        (see :func:`dndask.resplit`).

        Examples
        --------
        >>> import dndask as ht
        >>> a = ht.zeros((7, 4, 3), split=0, comm=ht.get_comm().subcomm([0, 1, 2, 3]))
        >>> a.resplit_(1).lshape_map.tolist()
        [[7, 1, 3], [7, 1, 3], [7, 1, 3], [7, 1, 3]]
        >>> a.resplit_(None).split is None
        True
        """
        axis = _layout.normalize_axis(axis, self.ndim, "axis")
        _distribution.check_method(method)
        if axis == self._split:
            return self
        if self._comm.size == 1:
            return self._set(self._array, axis, {})
        array, hints = _distribution.resplit(
            self._array, self._split, axis, self._counts(), self._comm.size, method
        )
        return self._set(array, axis, hints)

    def resplit(self, axis: int | None = None, *, method: str | None = None) -> DNDarray:
        """Out-of-place :meth:`resplit_`."""
        return self.copy().resplit_(axis, method=method)

    # --------------------------------------------------------------- execution
    def _placement(self) -> dict:
        workers = self._comm.workers
        return {key: workers[r] for key, r in self._lineage().items()}

    def persist_(self, replicate: int = 1) -> DNDarray:
        """Compute now, keeping chunk ``r`` in ``comm.workers[r]``'s memory; returns ``self``.

        A lost worker is survivable when the chunks can be recomputed from the
        graph: Dask recomputes them on the worker that replaces it (see
        :class:`dndask._recovery.RankKeeper`). Data that exists only in memory
        (sent from the driver or made by ``ht.per_rank``) cannot be recomputed;
        ``replicate=k`` keeps ``k`` copies of every chunk on different workers
        (``k`` times the memory), so it survives the loss of ``k - 1`` of them.

        Examples
        --------
        >>> import dndask as ht
        >>> a = ht.arange(6, split=0).persist_(replicate=2)
        >>> a.numpy().tolist()
        [0, 1, 2, 3, 4, 5]
        """
        if isinstance(replicate, bool) or not isinstance(replicate, int):
            raise TypeError(f"`replicate` must be an int, got {type(replicate).__name__}")
        if replicate < 1:
            raise ValueError(f"`replicate` must be at least 1, got {replicate}")
        client = self._comm.client
        if replicate > 1:
            n_workers = len(_comm.live_workers(client))
            if replicate > n_workers:
                raise ValueError(
                    f"`replicate` must be at most the number of workers, {n_workers}, "
                    f"got {replicate}"
                )
        persisted = _compute.persist(
            self._array, client, self._placement(), comm=self._comm, replicate=replicate
        )
        return self._set(persisted, self._split)

    def persist(self, replicate: int = 1) -> DNDarray:
        """Out-of-place :meth:`persist_`: a persisted copy (the original stays lazy)."""
        return self.copy().persist_(replicate)

    def compute(self) -> np.ndarray:
        """The global values as a numpy array in the driver."""
        return _compute.compute(self._array, self._comm.client, self._placement(), self._comm)

    def numpy(self) -> np.ndarray:
        """The global values as a numpy array in the driver (same as :meth:`compute`)."""
        return self.compute()

    def to_dask(self) -> da.Array:
        """The underlying Dask array (chunks as described in the class docstring)."""
        return self._array

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        values = self.compute()
        return values if dtype is None else values.astype(dtype, copy=False)

    def map_local(self, fn: Callable) -> DNDarray:
        """Run ``fn(local_tensor, rank)`` on every chunk where it lives; join along ``split``.

        ``fn`` gets rank ``r``'s chunk as a torch tensor and returns a tensor
        or numpy array; the results become the chunks of a new DNDarray split
        like this one (their sizes along ``split`` may change). For a split=None
        array ``fn`` runs once, as rank 0.

        Examples
        --------
        >>> import dndask as ht
        >>> a = ht.arange(6, split=0, comm=ht.get_comm().subcomm([0, 1]))
        >>> a.map_local(lambda t, rank: t * 10 + rank).numpy().tolist()
        [0, 10, 20, 31, 41, 51]
        """
        return _per_rank.map_local(self, fn)

    # ----------------------------------------------------- dask collection API
    def __dask_graph__(self):
        return self._array.__dask_graph__()

    def __dask_keys__(self):
        return self._array.__dask_keys__()

    def __dask_layers__(self):
        return self._array.__dask_layers__()

    def __dask_tokenize__(self):
        return ("dndask.DNDarray", self._array.name, self._split, self._comm.workers)

    __dask_optimize__ = staticmethod(da.Array.__dask_optimize__)
    __dask_scheduler__ = staticmethod(da.Array.__dask_scheduler__)

    def __dask_postcompute__(self):
        return self._array.__dask_postcompute__()

    def __dask_postpersist__(self):
        func, args = self._array.__dask_postpersist__()
        return self._rebuild, (func, args)

    def _rebuild(self, dsk, func, args, rename=None) -> DNDarray:
        array = func(dsk, *args, rename=rename) if rename else func(dsk, *args)
        return DNDarray(array, self._split, self._comm)

    # ------------------------------------------------------------------- repr
    def _meta_text(self) -> str:
        return f"dtype={_types.heat_name(self.dtype)}, device={self.device}, split={self._split}"

    def __repr__(self) -> str:
        summarize = self.size > _repr.THRESHOLD
        x = self._array
        for axis, idx in enumerate(_repr.edge_indices(self.shape, summarize)):
            if len(idx) != self.shape[axis]:
                x = x[(slice(None),) * axis + (idx,)]
        values = _compute.compute(x, self._comm.client, {})
        return _repr.text(values, self.shape, self._meta_text())

    __str__ = __repr__

    def _repr_html_(self) -> str:
        lmap = self.lshape_map.tolist()
        offsets = (
            _layout.displacements(self._counts()) if self._split is not None else (0,) * len(lmap)
        )
        rows = [
            (r, tuple(lmap[r]), offsets[r], self._comm.workers[r]) for r in range(self._comm.size)
        ]
        try:
            svg = self._array.to_svg(size=150)
        except (NotImplementedError, ValueError):
            svg = ""
        return _repr.html_table(
            self.shape, _types.heat_name(self.dtype), self._split, self.balanced, rows, svg
        )

    # ------------------------------------------------------------ conversions
    def to_xarray(self, dims=None, coords=None, name=None, attrs=None):
        """An ``xarray.DataArray`` backed by this array's dask graph (no compute, no copy)."""
        return _xarray.to_xarray(self, dims=dims, coords=coords, name=name, attrs=attrs)

    def astype(self, dtype, copy: bool = True) -> DNDarray:
        """The array cast to ``dtype`` (numpy, torch or Python type)."""
        if not isinstance(copy, (bool, np.bool_)):
            raise TypeError(f"`copy` must be a bool, got {type(copy).__name__}")
        dtype = _types.canonical_dtype(dtype)
        if dtype == self.dtype and not copy:
            return self
        return from_dask(self._array.astype(dtype), self._split, self._comm, parents=(self,))

    def item(self):
        """The single element as a Python scalar."""
        if self.size != 1:
            raise ValueError(f"`item` needs an array of size 1, got size {self.size}")
        return self.compute().reshape(()).item()

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-dimensional DNDarray")
        return self.shape[0]

    def _scalar(self, kind: type):
        if self.size != 1:
            raise TypeError(f"only size-1 arrays convert to Python scalars, got size {self.size}")
        return kind(self.item())

    def __bool__(self) -> bool:
        return self._scalar(bool)

    def __float__(self) -> float:
        return self._scalar(float)

    def __int__(self) -> int:
        return self._scalar(int)

    def __complex__(self) -> complex:
        return self._scalar(complex)

    def __index__(self) -> int:
        if self.dtype.kind not in "iu":
            raise TypeError(f"only integer arrays can be used as an index, got {self.dtype}")
        return self._scalar(int)

    # --------------------------------------------------------------- indexing
    def __getitem__(self, key) -> DNDarray:
        """``a[key]``: basic, integer and boolean indexing (see :mod:`dndask._indexing`)."""
        return _indexing.getitem(self, key)

    def __setitem__(self, key, value) -> None:
        """``a[key] = value`` in place; a failed assignment leaves ``a`` as it was."""
        _indexing.setitem(self, key, value)

    # ----------------------------------------------------------- manipulation
    def reshape(self, *shape, new_split: int | None = None) -> DNDarray:
        """The array with a new shape (see :func:`dndask.reshape`)."""
        return _manipulation.reshape(self, *shape, new_split=new_split)

    def transpose(self, *axes) -> DNDarray:
        """Permute the axes; the split follows its axis (see :func:`dndask.transpose`)."""
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], int)):
            axes = axes[0]
        return _manipulation.transpose(self, axes or None)

    @property
    def T(self) -> DNDarray:  # noqa: N802 (numpy's name)
        """The transpose (axes reversed)."""
        return _manipulation.transpose(self, None)

    def swapaxes(self, axis1: int, axis2: int) -> DNDarray:
        """Interchange two axes (see :func:`dndask.swapaxes`)."""
        return _manipulation.swapaxes(self, axis1, axis2)

    def squeeze(self, axis=None) -> DNDarray:
        """Remove length-one axes (see :func:`dndask.squeeze`)."""
        return _manipulation.squeeze(self, axis)

    def expand_dims(self, axis) -> DNDarray:
        """Insert a length-one axis (see :func:`dndask.expand_dims`)."""
        return _manipulation.expand_dims(self, axis)

    def flatten(self) -> DNDarray:
        """The array as 1-D in C order (see :func:`dndask.flatten`)."""
        return _manipulation.flatten(self)

    def ravel(self) -> DNDarray:
        """The array as 1-D in C order (see :func:`dndask.ravel`)."""
        return _manipulation.ravel(self)

    def flip(self, axis=None) -> DNDarray:
        """Reverse the order of elements along ``axis`` (see :func:`dndask.flip`)."""
        return _manipulation.flip(self, axis)

    def repeat(self, repeats, axis=None) -> DNDarray:
        """Repeat elements (see :func:`dndask.repeat`)."""
        return _manipulation.repeat(self, repeats, axis)

    # ------------------------------------------------------- linear algebra
    def __matmul__(self, other):
        return _linalg.matmul(self, other)

    def __rmatmul__(self, other):
        return _linalg.matmul(other, self)

    # ------------------------------------------------------------- arithmetic
    def __add__(self, other):
        return _ops.binary(operator.add, self, other)

    def __radd__(self, other):
        return _ops.binary(operator.add, other, self)

    def __iadd__(self, other):
        return _ops.inplace(operator.add, self, other)

    def __sub__(self, other):
        return _ops.binary(operator.sub, self, other)

    def __rsub__(self, other):
        return _ops.binary(operator.sub, other, self)

    def __isub__(self, other):
        return _ops.inplace(operator.sub, self, other)

    def __mul__(self, other):
        return _ops.binary(operator.mul, self, other)

    def __rmul__(self, other):
        return _ops.binary(operator.mul, other, self)

    def __imul__(self, other):
        return _ops.inplace(operator.mul, self, other)

    def __truediv__(self, other):
        return _ops.binary(operator.truediv, self, other)

    def __rtruediv__(self, other):
        return _ops.binary(operator.truediv, other, self)

    def __itruediv__(self, other):
        return _ops.inplace(operator.truediv, self, other)

    def __floordiv__(self, other):
        return _ops.binary(operator.floordiv, self, other)

    def __rfloordiv__(self, other):
        return _ops.binary(operator.floordiv, other, self)

    def __ifloordiv__(self, other):
        return _ops.inplace(operator.floordiv, self, other)

    def __mod__(self, other):
        return _ops.binary(operator.mod, self, other)

    def __rmod__(self, other):
        return _ops.binary(operator.mod, other, self)

    def __imod__(self, other):
        return _ops.inplace(operator.mod, self, other)

    def __pow__(self, other):
        return _ops.binary(operator.pow, self, other)

    def __rpow__(self, other):
        return _ops.binary(operator.pow, other, self)

    def __ipow__(self, other):
        return _ops.inplace(operator.pow, self, other)

    def __and__(self, other):
        return _ops.binary(operator.and_, self, other)

    def __rand__(self, other):
        return _ops.binary(operator.and_, other, self)

    def __iand__(self, other):
        return _ops.inplace(operator.and_, self, other)

    def __or__(self, other):
        return _ops.binary(operator.or_, self, other)

    def __ror__(self, other):
        return _ops.binary(operator.or_, other, self)

    def __ior__(self, other):
        return _ops.inplace(operator.or_, self, other)

    def __xor__(self, other):
        return _ops.binary(operator.xor, self, other)

    def __rxor__(self, other):
        return _ops.binary(operator.xor, other, self)

    def __ixor__(self, other):
        return _ops.inplace(operator.xor, self, other)

    def __lshift__(self, other):
        return _ops.binary(operator.lshift, self, other)

    def __rlshift__(self, other):
        return _ops.binary(operator.lshift, other, self)

    def __ilshift__(self, other):
        return _ops.inplace(operator.lshift, self, other)

    def __rshift__(self, other):
        return _ops.binary(operator.rshift, self, other)

    def __rrshift__(self, other):
        return _ops.binary(operator.rshift, other, self)

    def __irshift__(self, other):
        return _ops.inplace(operator.rshift, self, other)

    def __divmod__(self, other):
        return (self // other, self % other)

    def __rdivmod__(self, other):
        return (other // self, other % self)

    def __eq__(self, other):  # type: ignore[override]
        return _ops.binary(operator.eq, self, other)

    def __ne__(self, other):  # type: ignore[override]
        return _ops.binary(operator.ne, self, other)

    def __lt__(self, other):
        return _ops.binary(operator.lt, self, other)

    def __le__(self, other):
        return _ops.binary(operator.le, self, other)

    def __gt__(self, other):
        return _ops.binary(operator.gt, self, other)

    def __ge__(self, other):
        return _ops.binary(operator.ge, self, other)

    __hash__ = None  # type: ignore[assignment]

    def __neg__(self):
        return _ops.elementwise(operator.neg, self, name="neg")

    def __pos__(self):
        return _ops.elementwise(operator.pos, self, name="pos")

    def __abs__(self):
        return _ops.elementwise(operator.abs, self, name="abs")

    def __invert__(self):
        return _ops.elementwise(operator.invert, self, name="invert")

    # ------------------------------------------------------------- reductions
    def sum(self, axis=None, *, dtype=None, out=None, keepdims: bool = False) -> DNDarray:
        """Sum over ``axis`` (all axes by default); reducing ``split`` gives split=None.

        >>> import dndask as ht
        >>> int(ht.arange(10, split=0).sum())
        45
        """
        return _reductions.sum(self, axis, dtype=dtype, out=out, keepdims=keepdims)

    def prod(self, axis=None, *, dtype=None, out=None, keepdims: bool = False) -> DNDarray:
        """Product over ``axis`` (see :func:`dndask.prod`)."""
        return _reductions.prod(self, axis, dtype=dtype, out=out, keepdims=keepdims)

    def mean(self, axis=None, *, dtype=None, out=None, keepdims: bool = False) -> DNDarray:
        """Arithmetic mean over ``axis`` (see :func:`dndask.mean`)."""
        return _reductions.mean(self, axis, dtype=dtype, out=out, keepdims=keepdims)

    def var(
        self, axis=None, *, dtype=None, out=None, ddof: int = 0, keepdims: bool = False
    ) -> DNDarray:
        """Variance over ``axis`` (see :func:`dndask.var`)."""
        return _reductions.var(self, axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims)

    def std(
        self, axis=None, *, dtype=None, out=None, ddof: int = 0, keepdims: bool = False
    ) -> DNDarray:
        """Standard deviation over ``axis`` (see :func:`dndask.std`)."""
        return _reductions.std(self, axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims)

    def min(self, axis=None, *, out=None, keepdims: bool = False) -> DNDarray:
        """Minimum over ``axis`` (see :func:`dndask.min`)."""
        return _reductions.min(self, axis, out=out, keepdims=keepdims)

    def max(self, axis=None, *, out=None, keepdims: bool = False) -> DNDarray:
        """Maximum over ``axis`` (see :func:`dndask.max`)."""
        return _reductions.max(self, axis, out=out, keepdims=keepdims)

    def argmin(self, axis: int | None = None, *, out=None, keepdims: bool = False) -> DNDarray:
        """Index of the minimum (see :func:`dndask.argmin`)."""
        return _reductions.argmin(self, axis, out=out, keepdims=keepdims)

    def argmax(self, axis: int | None = None, *, out=None, keepdims: bool = False) -> DNDarray:
        """Index of the maximum (see :func:`dndask.argmax`)."""
        return _reductions.argmax(self, axis, out=out, keepdims=keepdims)

    def all(self, axis=None, *, out=None, keepdims: bool = False) -> DNDarray:
        """Whether every element is true (see :func:`dndask.all`)."""
        return _reductions.all(self, axis, out=out, keepdims=keepdims)

    def any(self, axis=None, *, out=None, keepdims: bool = False) -> DNDarray:
        """Whether any element is true (see :func:`dndask.any`)."""
        return _reductions.any(self, axis, out=out, keepdims=keepdims)

    def cumsum(self, axis: int | None = None, *, dtype=None, out=None) -> DNDarray:
        """Cumulative sum (see :func:`dndask.cumsum`)."""
        return _reductions.cumsum(self, axis, dtype=dtype, out=out)

    def cumprod(self, axis: int | None = None, *, dtype=None, out=None) -> DNDarray:
        """Cumulative product (see :func:`dndask.cumprod`)."""
        return _reductions.cumprod(self, axis, dtype=dtype, out=out)

    # --------------------------------------------------- elementwise methods
    def abs(self) -> DNDarray:
        """Absolute value (see :func:`dndask.abs`)."""
        return _elementwise.abs(self)

    absolute = abs

    def sqrt(self) -> DNDarray:
        """Square root (see :func:`dndask.sqrt`)."""
        return _elementwise.sqrt(self)

    def exp(self) -> DNDarray:
        """Exponential (see :func:`dndask.exp`)."""
        return _elementwise.exp(self)

    def log(self) -> DNDarray:
        """Natural logarithm (see :func:`dndask.log`)."""
        return _elementwise.log(self)

    def sin(self) -> DNDarray:
        """Sine (see :func:`dndask.sin`)."""
        return _elementwise.sin(self)

    def cos(self) -> DNDarray:
        """Cosine (see :func:`dndask.cos`)."""
        return _elementwise.cos(self)

    def floor(self) -> DNDarray:
        """Floor (see :func:`dndask.floor`)."""
        return _elementwise.floor(self)

    def ceil(self) -> DNDarray:
        """Ceiling (see :func:`dndask.ceil`)."""
        return _elementwise.ceil(self)

    def round(self, decimals: int = 0) -> DNDarray:
        """Round to ``decimals`` places (see :func:`dndask.round`)."""
        return _elementwise.round(self, decimals)

    def clip(self, a_min=None, a_max=None) -> DNDarray:
        """Limit the values to an interval (see :func:`dndask.clip`)."""
        return _elementwise.clip(self, a_min, a_max)

    def conj(self) -> DNDarray:
        """Complex conjugate (see :func:`dndask.conj`)."""
        return _elementwise.conj(self)

    @property
    def real(self) -> DNDarray:
        """Real part."""
        return _elementwise.real(self)

    @property
    def imag(self) -> DNDarray:
        """Imaginary part."""
        return _elementwise.imag(self)

    # -------------------------------------------------------------- protocols
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _protocols.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return _protocols.array_function(func, types, args, kwargs)

    def __array_namespace__(self, *, api_version: str | None = None):
        """The array API namespace of DNDarrays (:mod:`dndask.array_api`)."""
        return _protocols.array_namespace(api_version)


def from_dask(
    array: da.Array, split: int | None, comm: Comm, parents: tuple[DNDarray, ...] = ()
) -> DNDarray:
    """Wrap a Dask array, rechunking it to the balanced layout if it does not conform.

    ``parents`` are the DNDarrays it was computed from; their lineage is kept
    so that persisting runs their tasks on their ranks.
    """
    split = _layout.normalize_axis(split, array.ndim, "split")
    if any(np.isnan(c) for dim in array.chunks for c in dim):
        raise ValueError("`array` must have known chunk sizes; call compute_chunk_sizes() first")
    if not _layout.conforms(array.chunks, split, comm.size):
        array = _conform(array, split, comm.size)
    out = DNDarray(array, split, comm)
    for parent in parents:
        if parent.comm == comm:
            out._hints.update(parent._lineage())
    return out


def _conform(array: da.Array, split: int | None, size: int) -> da.Array:
    """Rechunk to the balanced DNDarray layout.

    Dask rechunks to the non-empty counts (it would drop empty chunks
    anyway), then dndask's own redistribution adds the empty ranks.
    """
    shape = tuple(int(s) for s in array.shape)
    if split is None:
        return array.rechunk(_layout.chunks_for(shape, None, None))
    counts = _layout.balanced_counts(shape[split], size)
    nonzero = tuple(c for c in counts if c) or (0,)
    array = array.rechunk(_layout.chunks_for(shape, split, nonzero))
    return _distribution.restore_empty_ranks(array, split, counts)
