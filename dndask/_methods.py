"""DNDarray's methods beyond its core: attached to the class in one registration step.

:mod:`dndask._dndarray` defines the class with its state and the methods that need only
the layers below it. The methods here forward to operations that are implemented above
the class (they build DNDarrays, so they import it): operators and ``a.sqrt()``-style
methods generated from the operation table (:mod:`dndask._optable`), reductions,
manipulation, indexing, products, the numpy protocols, ``map_local`` and ``to_xarray``.
They are written as the body of :class:`_Methods` and copied onto ``DNDarray`` by
:func:`attach`, which ``import dndask`` runs once, before a user can reach the class.
A name the core already defines is never overwritten (``attach`` refuses).

>>> import dndask as ht
>>> ht.DNDarray.sum.__qualname__, ht.DNDarray.__add__.__qualname__
('DNDarray.sum', 'DNDarray.__add__')
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import (
    _compute,
    _elementwise,
    _graph,
    _halo,
    _handoff,
    _indexing,
    _linalg,
    _manipulation,
    _per_rank,
    _protocols,
    _reductions,
    _sorting,
    _torch,
    _xarray,
    array_api,
)
from ._compat import pick_blocks
from ._dndarray import DNDarray


class _VIndex:
    """``a.vindex[key]`` (see ``DNDarray.vindex``)."""

    def __init__(self, a: DNDarray) -> None:
        self._a = a

    def __getitem__(self, key) -> DNDarray:
        key = key if isinstance(key, tuple) else (key,)
        out = self._a[key]
        arrays = [i for i, k in enumerate(key) if not isinstance(k, slice)]
        # numpy keeps adjacent index arrays' broadcast axes in their place; Dask puts them first
        if arrays and arrays[0] > 0 and arrays == list(range(arrays[0], arrays[-1] + 1)):
            n = len(np.broadcast_shapes(*(np.shape(key[i]) for i in arrays)))
            first = arrays[0]
            out = _manipulation.moveaxis(out, tuple(range(first, first + n)), tuple(range(n)))
        return out


class _Methods:
    """The methods :func:`attach` copies onto DNDarray (never instantiated)."""

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

    # ------------------------------------------------------------------ halos
    def get_halo(self, halo_size: int, prev: bool = True, next: bool = True) -> None:
        """Exchange ``halo_size`` edge rows with the neighbouring ranks (Heat's ``get_halo``).

        Each populated rank receives the last rows of the previous populated rank and
        the first rows of the next one along ``split`` (see :func:`dndask.halos`); a
        ``split=None`` array has no neighbours. The results are kept on the array:
        :attr:`halo_prev`, :attr:`halo_next` and :attr:`array_with_halos` are rank 0's
        (``comm.rank`` in the driver), ``halo_arrays`` every rank's as DNDarrays.

        >>> import dndask as ht
        >>> a = ht.arange(6, split=0, comm=ht.get_comm().subcomm([0, 1, 2]))
        >>> a.get_halo(1)
        >>> a.halo_prev is None, a.halo_next.tolist(), a.array_with_halos.tolist()
        (True, [2], [0, 1, 2])
        """
        _halo.check_arguments(halo_size, prev, next)
        if self.split is None:
            self.__dict__["halo_arrays"] = None
            return
        self.__dict__["halo_arrays"] = _halo.halos(self, halo_size, prev, next)

    def _halo_part(self, part: int):
        arrays = self.__dict__.get("halo_arrays")
        if arrays is None:
            return None
        if part < 2 and not arrays[part].lshape[arrays[part].split]:
            return None
        return arrays[part].larray

    @property
    def halo_prev(self):
        """Rank 0's halo from the previous rank after :meth:`get_halo` (a tensor), or None."""
        return self._halo_part(0)

    @property
    def halo_next(self):
        """Rank 0's halo from the next rank after :meth:`get_halo` (a tensor), or None."""
        return self._halo_part(1)

    @property
    def array_with_halos(self):
        """Rank 0's chunk joined with its halos along ``split`` (``larray`` without halos)."""
        return self._halo_part(2) if self.__dict__.get("halo_arrays") else self.larray

    # ------------------------------------------------------- partition protocol
    @property
    def __partitioned__(self) -> dict:
        """The array's partitions in the ``__partitioned__`` protocol (Heat's layout).

        One partition per rank (one for ``split=None``), keyed by its block index, with
        its global ``start``, ``shape``, ``location`` (``[rank]``), dtype and device.
        ``data`` is the chunk as a lazy Dask array (nothing is computed); ``get(data)``
        fetches it as a torch tensor. ``locals`` is rank 0's partition (the driver's
        ``comm.rank``). The dict is kept as ``__partitions_dict__`` until the array
        changes.

        >>> import dndask as ht
        >>> p = ht.zeros((4, 2), split=0, comm=ht.get_comm().subcomm([0, 1])).__partitioned__
        >>> second = p["partitions"][(1, 0)]
        >>> p["partition_tiling"], second["start"], second["shape"], p["get"](second["data"]).shape
        ((2, 1), (2, 0), (2, 2), torch.Size([2, 2]))
        """
        x = self.to_dask()
        client = self.comm.client
        size = 1 if self.split is None else self.comm.size
        tiling = tuple(size if ax == self.split else 1 for ax in range(self.ndim))
        counts, displs = ((0,), (0,)) if self.split is None else self.counts_displs()
        partitions = {}
        for r in range(size):
            index = _graph.block_index(self.split, self.ndim, r)
            partitions[index] = {
                "start": tuple(displs[r] if ax == self.split else 0 for ax in range(self.ndim)),
                "shape": tuple(
                    counts[r] if ax == self.split else n for ax, n in enumerate(self.shape)
                ),
                "data": pick_blocks(x, index) if self.ndim else x,
                "location": [r],
                "dtype": x.dtype,
                "device": str(self.device),
            }
        parted = {
            "shape": self.shape,
            "partition_tiling": tiling,
            "partitions": partitions,
            "locals": [(0,) * self.ndim],
            "get": lambda block: _torch.to_torch(_compute.compute(block, client, {})),
        }
        self.__dict__["_partitioned"] = (x.name, self.split, parted)
        return parted

    @property
    def __partitions_dict__(self) -> dict | None:
        """The last :attr:`__partitioned__` dict, or None once the array has changed since."""
        cached = self.__dict__.get("_partitioned")
        if cached is None or cached[:2] != (self.to_dask().name, self.split):
            return None
        return cached[2]

    # ------------------------------------------------------------ conversions
    def to_xarray(self, dims=None, coords=None, name=None, attrs=None, device=None):
        """An ``xarray.DataArray`` backed by this array's dask graph (no compute, no copy).

        ``device`` (``"cpu"``/``"gpu"``) copies the chunks there first, explicitly.
        """
        return _xarray.to_xarray(
            self, dims=dims, coords=coords, name=name, attrs=attrs, device=device
        )

    # --------------------------------------------------------------- indexing
    def __getitem__(self, key) -> DNDarray:
        """``a[key]``: basic, integer and boolean indexing (see :mod:`dndask._indexing`)."""
        if _handoff.xarray_outer_indexing(key):
            raise NotImplementedError(
                "several index arrays broadcast together (numpy's rule); "
                "xarray's outer indexing then goes one axis at a time"
            )
        return _indexing.getitem(self, key)

    @property
    def vindex(self) -> _VIndex:
        """Dask's pointwise indexing: ``a.vindex[i, j]`` as numpy's ``a[i, j]``, except that the
        broadcast axes of the index arrays always come first (xarray's vectorized
        ``isel``/``sel`` call it).

        >>> import dndask as ht, numpy as np
        >>> a = ht.arange(24, split=0).reshape((2, 3, 4))
        >>> a.vindex[:, np.array([0, 2]), np.array([1, 3])].numpy().tolist()
        [[1, 13], [11, 23]]
        """
        return _VIndex(self)

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

    # ---------------------------------------------------------------- sorting
    def sort(self, axis: int | None = -1, kind=None, *, stable=None) -> None:
        """Sort in place along ``axis``, as :meth:`numpy.ndarray.sort` (returns None).

        The array takes :func:`dndask.sort`'s result and its layout: along the
        split axis of a 1-D array the counts follow the data.
        """
        out = _sorting.sort(self, axis, kind=kind, stable=stable)
        self._set(out.to_dask(), out.split, out._task_ranks)

    def argsort(self, axis: int | None = -1, kind=None, *, stable=None) -> DNDarray:
        """Indices that sort the array along ``axis`` (see :func:`dndask.argsort`)."""
        return _sorting.argsort(self, axis, kind=kind, stable=stable)

    def nonzero(self) -> tuple[DNDarray, ...]:
        """Indices of the nonzero elements (see :func:`dndask.nonzero`)."""
        return _sorting.nonzero(self)

    # ---------------------------------------- elementwise methods with arguments
    # (the one-operand ones, ``a.sqrt()``..., come from the operation table)
    def round(self, decimals: int = 0) -> DNDarray:
        """Round to ``decimals`` places (see :func:`dndask.round`)."""
        return _elementwise.round(self, decimals)

    def clip(self, a_min=None, a_max=None) -> DNDarray:
        """Limit the values to an interval (see :func:`dndask.clip`)."""
        return _elementwise.clip(self, a_min, a_max)

    @property
    def real(self) -> DNDarray:
        """Real part."""
        return _elementwise.FUNCTIONS["real"](self)

    @property
    def imag(self) -> DNDarray:
        """Imaginary part."""
        return _elementwise.FUNCTIONS["imag"](self)

    # -------------------------------------------------------------- protocols
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _protocols.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return _protocols.array_function(func, types, args, kwargs)

    def __array_namespace__(self, *, api_version: str | None = None):
        """The array API namespace of DNDarrays (:mod:`dndask.array_api`)."""
        if api_version is not None and api_version not in array_api.SUPPORTED_VERSIONS:
            raise ValueError(
                f"`api_version` must be one of {array_api.SUPPORTED_VERSIONS}, got {api_version!r}"
            )
        return array_api


def _own_attributes(cls: type) -> dict[str, object]:
    skip = {"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__"}
    return {k: v for k, v in vars(cls).items() if k not in skip}


def attach(cls: type, methods: dict[str, object]) -> None:
    """Set ``methods`` on ``cls``; a name ``cls`` already defines is an error, never an override."""
    for name, value in methods.items():
        if name in vars(cls):
            raise ValueError(f"`{name}` is already defined by {cls.__name__}")
        function: Callable | None = getattr(value, "fget", value)
        if callable(function) and hasattr(function, "__qualname__"):
            function.__qualname__ = f"{cls.__name__}.{name}"
        setattr(cls, name, value)


_WRITTEN, _GENERATED = _own_attributes(_Methods), _elementwise.dndarray_methods()
if set(_WRITTEN) & set(_GENERATED):
    raise ValueError(f"methods defined twice: {sorted(set(_WRITTEN) & set(_GENERATED))}")
attach(DNDarray, {**_WRITTEN, **_GENERATED})

__all__ = ["attach"]
