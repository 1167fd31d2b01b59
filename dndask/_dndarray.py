"""The DNDarray's core: a Dask array whose chunk grid along ``split`` is the distribution map.

This module holds what a DNDarray *is*: the dask array, ``split`` and ``comm``, the
metadata read off the chunks (``shape``, ``lshape_map``, ``counts_displs()``, ``balanced``),
the changes of distribution (``redistribute_``, ``resplit_``, ``balance_``), execution
(``compute``, ``persist_``, the dask collection protocol), the repr and scalar conversions.
It imports only the layers below it (layouts, graphs, comm, compute, repr, dtypes).

Everything a DNDarray *does* (operators, reductions, manipulation, indexing, products,
the numpy protocols, ``map_local``, ``to_xarray``) is implemented by the modules above,
which build DNDarrays and so import this one. Those methods are attached to the class in
one registration step, :mod:`dndask._methods`, which ``import dndask`` runs before anything
else can see the class: no module below imports a module above it. (Mixins would need the
final class to be defined above the operations, while the operations construct it.)
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

import dask.array as da
import numpy as np
from dask.array.utils import meta_from_array

from . import _comm, _compute, _display, _distribution, _handoff, _layout, _torch, _types, _xp
from ._abc import DistributedArray
from ._comm import Comm
from ._compat import keyed, new_array, pick_blocks
from ._graph import block_index
from ._placement import Ranks, WorkerTable
from ._xp import Device

if TYPE_CHECKING:
    import torch


class DNDarray(DistributedArray):
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
    # xarray labels (dims, coords, name, attrs) that ``from_xarray`` brought in; ``to_xarray``
    # restores them while the shape is unchanged (see dndask._xarray.Labels)
    _labels = None
    # how an elementwise operation made this array's chunks (``dndask._ops.Producer``), set by
    # ``_ops.elementwise``, dropped by ``_set`` (``persist_`` keeps the keys but puts the
    # chunks in memory): a reduction over the split axis then runs the operation and its
    # per-rank partial in one task
    _producer = None

    def __init__(self, array: da.Array, split: int | None, comm: Comm):
        if not isinstance(array, da.Array):
            raise TypeError(f"`array` must be a dask.array.Array, got {type(array).__name__}")
        if not isinstance(comm, Comm):
            raise TypeError(f"`comm` must be a dndask.Comm, got {type(comm).__name__}")
        split = _layout.normalize_axis(split, array.ndim, "split")
        array = keyed(array)
        self._array = array
        _compute.claim(array)
        self._distribution = _layout.Distribution.of_chunks(array.chunks, split, comm)
        # where the chunks and the dndask-made tasks upstream of them run: one rule per
        # key name of this array, linked to the arrays it was made from (see _placement)
        self._task_ranks: Ranks = Ranks.of_chunks(array.name, self._split)

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
        return math.prod(self.shape)  # Python ints: no int64 overflow

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
    def distribution(self) -> _layout.Distribution:
        """The split, the rows per rank along it and the comm, as one frozen value."""
        return self._distribution

    @property
    def split(self) -> int | None:
        """The distributed axis, or ``None`` if every rank holds the whole array."""
        return self._distribution.split

    _split = split

    @property
    def comm(self) -> Comm:
        """The ranks this array is distributed over."""
        return self._distribution.comm

    _comm = comm

    @property
    def device(self) -> Device:
        """Where the chunks live, read from the Dask array's meta."""
        return _xp.device_of(meta_from_array(self._array))

    def _counts(self) -> tuple[int, ...]:
        return self._distribution.counts

    @property
    def lshape_map(self) -> torch.Tensor:
        """A fresh ``(size, ndim)`` int64 tensor of every rank's local shape (no communication).

        An ``LshapeMap`` (a ``torch.Tensor`` with ``copy()``); the first call imports torch.
        """
        return _torch.lshape_map(self._distribution.lshape_map(self.shape))

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
        return math.prod(self.lshape)

    def counts_displs(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Rows per rank along ``split`` and their offsets (the actual distribution)."""
        if self._split is None:
            raise ValueError("`counts_displs` needs a split array, got split=None")
        counts = self._counts()
        return counts, _layout.displacements(counts)

    @property
    def balanced(self) -> bool:
        """Whether the distribution is Heat's balanced one (read off the chunks, always known)."""
        return self._distribution.is_balanced(self.shape)

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

    def _chunk_futures(self) -> list | None:
        """The futures holding the chunks of a persisted array, in :meth:`_chunk_keys` order.

        Their keys are the chunk keys, except for an ``is_split`` join of ``ht.per_rank``
        results, whose futures keep the results' own keys. ``None`` if not persisted.
        """
        return _compute.held(self._array.__dask_graph__(), self._chunk_keys())

    @property
    def larray(self) -> torch.Tensor:
        """Rank 0's local chunk as a torch tensor on the chunk's device.

        Computed and copied to host on its worker, gathered, then put on the chunk's torch
        device (``cuda:<id>`` for CuPy chunks; host memory otherwise, zero-copy).
        """
        block = self._array
        if self.ndim:  # a 0-d array is its own single block (dask has no blocks[()])
            block = pick_blocks(block, block_index(self._split, self.ndim, 0))
        tensor = _torch.to_torch(_compute.compute(block, self._comm.client, {}))
        target = _xp.torch_device(self.device)
        return tensor if target == "cpu" else tensor.to(target)

    # ------------------------------------------------------------ state changes
    def _set(self, array: da.Array, split: int | None, task_ranks: dict | None = None) -> DNDarray:
        """Swap in a new graph and split after every check has passed.

        ``task_ranks`` are the ranks of the tasks the new graph adds (a ``key -> rank``
        table or a :class:`~dndask._placement.Ranks`); ``None`` means the graph is already
        in memory and forgets its upstream tasks.
        """
        distribution = _layout.Distribution.of_chunks(array.chunks, split, self._comm)
        upstream = () if task_ranks is None else (self._task_ranks,)
        ranks = Ranks.of_chunks(array.name, distribution.split, upstream)
        if task_ranks is not None:
            ranks.update(task_ranks)
        self._array, self._distribution = array, distribution
        self._producer = None  # persisted (same keys, now in memory) or replaced: not fusable
        _compute.claim(array)
        self._task_ranks = ranks
        return self

    def copy(self) -> DNDarray:
        """A new DNDarray with the same values and distribution.

        Dask graphs are immutable, so this is free; in-place calls on the copy
        leave the original untouched.
        """
        x = self._array
        out = DNDarray(new_array(x.dask, x.name, x.chunks, x), self._split, self._comm)
        out._task_ranks = self._task_ranks.copy()
        out._labels = self._labels
        out._producer = self._producer
        return out

    def redistribute_(self, lshape_map=None, target_map=None, *, method=None) -> DNDarray:
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
        method : {None, 'mpi', 'shm', 'tasks', 'p2p'}, optional
            How the rows travel (see :func:`dndask._distribution.relayout_graph`);
            ``None`` picks MPI under dndask's mpirun launch, else shared memory when
            every rank is on one host.

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
        _distribution.check_method(method)
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
            target = _layout.Distribution.balanced(shape, split, self._comm)
        else:
            counts = _layout.validate_map(target_map, shape, split, size, "target_map")
            target = self._distribution.with_counts(counts)
        return _distribution.relayout_(self, target, method)

    def redistribute(self, lshape_map=None, target_map=None, *, method=None) -> DNDarray:
        """Out-of-place :meth:`redistribute_`: a redistributed copy."""
        return self.copy().redistribute_(
            lshape_map=lshape_map, target_map=target_map, method=method
        )

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
        target = _layout.Distribution.balanced(self.shape, axis, self._comm)
        return _distribution.relayout_(self, target, method)

    def resplit(self, axis: int | None = None, *, method: str | None = None) -> DNDarray:
        """Out-of-place :meth:`resplit_`."""
        return self.copy().resplit_(axis, method=method)

    # --------------------------------------------------------------- execution
    def _placement(self) -> WorkerTable:
        """The worker of each chunk and dndask-made task upstream, looked up per key."""
        return self._task_ranks.workers(self._comm.workers)

    def persist_(self, replicate: int = 1, *, wait: bool = False) -> DNDarray:
        """Start computing, keeping chunk ``r`` in ``comm.workers[r]``'s memory; returns ``self``.

        Like Dask's ``persist``, this returns as soon as the graph is
        submitted: where each chunk will live is fixed now, the work goes on
        in the background, and an error of one of its tasks is raised where
        the array is next used (computed, printed, or an operation on it
        computed). ``wait=True`` blocks until every chunk is in memory and
        raises such an error here.

        A lost worker is survivable when the chunks can be recomputed from the
        graph: Dask recomputes them on the worker that replaces it (see
        :class:`dndask._recovery.RankKeeper`). Data that exists only in memory
        (sent from the driver or made by ``ht.per_rank``) cannot be recomputed;
        ``replicate=k`` keeps ``k`` copies of every chunk on different workers
        (``k`` times the memory), so it survives the loss of ``k - 1`` of them.
        Copies are made of chunks in memory, so ``replicate > 1`` always waits.

        Examples
        --------
        >>> import dndask as ht
        >>> a = ht.arange(6, split=0).persist_(replicate=2)
        >>> a.numpy().tolist()
        [0, 1, 2, 3, 4, 5]
        >>> (a * 2).persist_(wait=True).numpy().tolist()
        [0, 2, 4, 6, 8, 10]
        """
        return self._set(self._persisted(replicate, wait), self._split)

    def persist(self, replicate: int = 1, *, wait: bool = False) -> DNDarray:
        """Out-of-place :meth:`persist_`: a persisted copy (the original stays lazy)."""
        return DNDarray(self._persisted(replicate, wait), self._split, self._comm)

    def _persisted(self, replicate: int, wait: bool) -> da.Array:
        """The array persisted with placement (see :meth:`persist_`), checks first."""
        if isinstance(replicate, bool) or not isinstance(replicate, int):
            raise TypeError(f"`replicate` must be an int, got {type(replicate).__name__}")
        if replicate < 1:
            raise ValueError(f"`replicate` must be at least 1, got {replicate}")
        if not isinstance(wait, bool):
            raise TypeError(f"`wait` must be a bool, got {type(wait).__name__}")
        client = self._comm.client
        if replicate > 1:
            n_workers = len(_comm.live_workers(client))
            if replicate > n_workers:
                raise ValueError(
                    f"`replicate` must be at most the number of workers, {n_workers}, "
                    f"got {replicate}"
                )
        persisted = _compute.persist(
            self._array,
            client,
            self._placement(),
            comm=self._comm,
            replicate=replicate,
            wait_=wait,
        )
        return persisted

    def compute(self) -> np.ndarray:
        """The global values as a numpy array in the driver."""
        return _compute.compute(self._array, self._comm.client, self._placement(), self._comm)

    def numpy(self) -> np.ndarray:
        """The global values as a numpy array in the driver (same as :meth:`compute`)."""
        return self.compute()

    def to_dask(self) -> da.Array:
        """The underlying Dask array (chunks as described in the class docstring)."""
        return self._array

    def to_dask_array(self) -> da.Array:
        """Same as :meth:`to_dask`; ``dask.array.asarray(a)`` calls it, so it returns this graph.

        When xarray hands a DNDarray-backed DataArray's data to a Dask function
        this way, the result leaves the one-chunk-per-rank layout: dndask
        warns (:class:`dndask.LayoutWarning`, once per kind of operation) and
        pins this array's tasks to their ranks for xarray's ``persist``.
        """
        self._hand_to_dask()
        return self._array

    def _hand_to_dask(self) -> None:
        if _handoff.leaving(self._array.name, self._comm, self._split, self._task_ranks):
            _compute.hand_over(self._array, self._placement())

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        values = self.compute()
        return values if dtype is None else values.astype(dtype, copy=False)

    # ----------------------------------------------------- dask collection API
    def __dask_graph__(self):
        return self._array.__dask_graph__()

    def __dask_keys__(self):
        return self._array.__dask_keys__()

    def __dask_layers__(self):
        return self._array.__dask_layers__()

    def __dask_tokenize__(self):
        return ("dndask.DNDarray", self._array.name, self._split, self._comm.workers)

    @property
    def __dask_optimize__(self):
        """Dask's graph hook: culled, unfused, each task pinned to its rank (see
        :func:`dndask._compute.optimize_placed`), so ``dask.persist(a)`` places
        chunks as ``a.persist()`` does."""
        return functools.partial(_compute.optimize_placed, placement=self._placement())

    __dask_scheduler__ = staticmethod(da.Array.__dask_scheduler__)

    def __dask_postcompute__(self):
        return self._array.__dask_postcompute__()

    def __dask_postpersist__(self):
        func, args = self._array.__dask_postpersist__()
        return self._rebuild, (func, args)

    def _rebuild(self, dsk, func, args, rename=None) -> DNDarray:
        array = func(dsk, *args, rename=rename) if rename else func(dsk, *args)
        return DNDarray(array, self._split, self._comm)

    # ------------------------------------------------- the dask array's face
    @property
    def chunks(self) -> tuple[tuple[int, ...], ...]:
        """The dask chunk grid: the ranks' counts along ``split``, one chunk elsewhere."""
        return self._array.chunks

    @property
    def dask(self):
        """The dask graph (a ``HighLevelGraph``) of the underlying array."""
        return self._array.dask

    @property
    def name(self) -> str:
        """The dask key name of the underlying array."""
        return self._array.name

    @property
    def blocks(self):
        """Dask's block indexer of the underlying array (``a.blocks[r]`` is rank ``r``'s chunk).

        It returns ``dask.array.Array`` objects: a block is no longer one chunk per rank.
        """
        return self._array.blocks

    def rechunk(self, chunks="auto", **kwargs) -> da.Array:
        """The values rechunked as a plain ``dask.array.Array`` (not a DNDarray).

        Any chunk grid is allowed, so the result leaves the one-chunk-per-rank
        layout; wrap it with :func:`dndask.from_dask` to come back. (Dask's own
        functions call it on a DNDarray they take for a Dask array, and go on
        with Dask-only calls on the result, so it is always Dask's array.)
        When xarray calls it, dndask warns once (:class:`dndask.LayoutWarning`).

        >>> import dndask as ht
        >>> ht.arange(6, split=0, comm=ht.get_comm().subcomm([0, 1])).rechunk(2).chunks
        ((2, 2, 2),)
        """
        self._hand_to_dask()
        return self._array.rechunk(chunks, **kwargs)

    def map_blocks(self, func, *args, **kwargs):
        """Dask's ``map_blocks`` on the chunks; a DNDarray when the result's blocks allow it.

        If the result still has one chunk per rank along ``split`` (and one
        elsewhere), it is a DNDarray with this array's split and comm. Otherwise
        (``drop_axis``, ``new_axis``, ``chunks=`` that break the layout) it is
        returned as a plain ``dask.array.Array``.

        >>> import dndask as ht
        >>> a = ht.arange(6, split=0, comm=ht.get_comm().subcomm([0, 1]))
        >>> b = a.map_blocks(lambda x: x * 2)
        >>> type(b).__name__, b.split, b.numpy().tolist()
        ('DNDarray', 0, [0, 2, 4, 6, 8, 10])
        """
        out = self._array.map_blocks(func, *args, **kwargs)
        if out.ndim == self.ndim and _layout.conforms(out.chunks, self._split, self._comm.size):
            return from_dask(out, self._split, self._comm, parents=(self,))
        return out

    def visualize(self, filename="mydask", format=None, optimize_graph=False, **kwargs):
        """Draw the task graph with dask's ``visualize`` (needs graphviz)."""
        return self._array.visualize(
            filename=filename, format=format, optimize_graph=optimize_graph, **kwargs
        )

    # ------------------------------------------------------------------- repr
    def __repr__(self) -> str:  # Heat's: the values, computed (see dndask._display)
        shown = _display.for_xarray(self)  # inside xarray's repr: no graph run
        return _display.text(self) if shown is None else shown

    __str__ = __repr__

    def _repr_inline_(self, max_width: int) -> str:
        """xarray's one-line summary (a Dataset's variables, the HTML preview); no graph run."""
        return _display.inline(self, max_width)

    def _repr_html_(self) -> str:
        return _display.html(self)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, str]:
        return _display.mimebundle(self, include, exclude)  # runs no graph unless persisted

    # ------------------------------------------------------------ conversions
    def astype(self, dtype, copy: bool = True) -> DNDarray:
        """The array cast to ``dtype`` (numpy, torch or Python type)."""
        if not isinstance(copy, (bool, np.bool_)):
            raise TypeError(f"`copy` must be a bool, got {type(copy).__name__}")
        dtype = _types.canonical_dtype(dtype)
        if dtype == self.dtype and not copy:
            return self
        return from_dask(self._array.astype(dtype), self._split, self._comm, parents=(self,))

    def _on_device(self, device) -> DNDarray:
        target = _xp.sanitize_device(device)  # an unusable device fails here, before any task
        if self.device == target.device_type:
            return self
        meta = _xp.meta(self.dtype, self.ndim, target)
        x = self._array.map_blocks(_xp.to_device, target, dtype=self.dtype, meta=meta)
        return from_dask(x, self._split, self._comm, parents=(self,))

    def cpu(self) -> DNDarray:
        """The array with its chunks copied to host memory: one task per chunk, on its rank.

        Returns ``self`` when the chunks already are on the CPU.

        >>> import dndask as ht
        >>> ht.arange(3, split=0).cpu().device
        device(cpu:0)
        """
        return self._on_device("cpu")

    def gpu(self) -> DNDarray:
        """The array with its chunks copied to the GPU: one task per chunk, on its rank.

        Raises RuntimeError, before any task, when no GPU backend (CuPy and CUDA) is usable.
        """
        return self._on_device("gpu")

    def item(self):
        """The single element as a Python scalar."""
        if self.size != 1:
            raise ValueError(f"`item` needs an array of size 1, got size {self.size}")
        return self.compute().reshape(()).item()

    def tolist(self):
        """The global values as nested Python lists (computed), as :meth:`numpy.ndarray.tolist`.

        Dask's indexing calls it on an index array (xarray's ``idxmax`` and
        ``idxmin`` index their coordinate with the DNDarray of positions).

        >>> import dndask as ht
        >>> ht.arange(4, split=0, comm=ht.get_comm().subcomm([0, 1])).tolist()
        [0, 1, 2, 3]
        """
        return self.compute().tolist()

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

    # Operators, reductions, manipulation, indexing, the numpy protocols and the rest are
    # attached by dndask._methods; comparisons return arrays, so DNDarrays are unhashable.
    __hash__ = None  # type: ignore[assignment]


def from_dask(
    array: da.Array,
    split: int | None,
    comm: Comm,
    parents: tuple[DNDarray, ...] = (),
    counts: tuple[int, ...] | None = None,
) -> DNDarray:
    """Wrap a Dask array, rechunking it to the balanced layout if it does not conform.

    ``parents`` are the DNDarrays it was computed from; their task ranks are
    kept so that persisting runs their tasks on their ranks. ``counts``, if
    given, are the rows per rank the result must have along ``split``.
    """
    split = _layout.normalize_axis(split, array.ndim, "split")
    array = keyed(array)  # its name is its keys' (what the placement rules below read)
    if any(np.isnan(c) for dim in array.chunks for c in dim):
        raise ValueError(
            f"`array` must have known chunk sizes, got {array.chunks}; "
            "call compute_chunk_sizes() first"
        )
    if counts is not None and split is not None:
        if tuple(int(c) for c in array.chunks[split]) != tuple(counts) or not _layout.conforms(
            array.chunks, split, comm.size
        ):
            array = _rechunk_to(array, split, tuple(counts))
    elif not _layout.conforms(array.chunks, split, comm.size):
        array = _conform(array, split, comm.size)
    out = DNDarray(array, split, comm)
    upstream = [parent._task_ranks for parent in parents if parent.comm == comm]
    out._task_ranks = Ranks.of_chunks(array.name, split, upstream)
    return out


def _conform(array: da.Array, split: int | None, size: int) -> da.Array:
    """Rechunk to the balanced DNDarray layout."""
    shape = tuple(int(s) for s in array.shape)
    if split is None:
        return array.rechunk(_layout.chunks_for(shape, None, None))
    return _rechunk_to(array, split, _layout.balanced_counts(shape[split], size))


def _rechunk_to(array: da.Array, split: int, counts: tuple[int, ...]) -> da.Array:
    """Rechunk to ``counts`` along ``split`` and one chunk elsewhere.

    Dask rechunks to the non-empty counts (it would drop empty chunks
    anyway), then dndask's own redistribution adds the empty ranks.
    """
    shape = tuple(int(s) for s in array.shape)
    nonzero = tuple(c for c in counts if c) or (0,)
    array = array.rechunk(_layout.chunks_for(shape, split, nonzero))
    return _distribution.restore_empty_ranks(array, split, counts)
