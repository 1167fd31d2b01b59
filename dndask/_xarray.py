"""xarray integration: DataArray/Dataset views of DNDarrays and the ``.dnd`` accessor.

A DataArray made by :func:`to_xarray` wraps the DNDarray's own Dask array, so
its chunk grid *is* the distribution: one chunk per rank along the split
dimension, one chunk along every other. The ``.dnd`` accessor keeps no state;
it reads the split off the chunks of whatever Dask array the object wraps,
so it still answers after xarray operations have built new arrays.

Which comm? Dask arrays do not carry one. dndask remembers, for each Dask
array it hands to xarray, the comm, the split dimension and the placement
of its tasks, in a small bounded table keyed by the array's name. An array
that xarray derived later is traced back through its graph to the nearest
remembered ancestor. An array with no remembered ancestor (made by plain
Dask, or evicted from the table) gets the default comm, ``ht.get_comm()``,
and is conformed to it when it becomes a DNDarray.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Hashable, Sequence
from typing import NamedTuple

import dask.array as da
import numpy as np
import torch

from . import _comm, _dndarray, _layout, _per_rank

_REGISTRY_SIZE = 1024


class _Origin(NamedTuple):
    """What dndask knows about a Dask array it gave to xarray."""

    comm: _comm.Comm
    dim: Hashable | None  # the split dimension's name
    task_ranks: dict  # rank of each dndask-made task (see DNDarray._task_ranks)


_origins: collections.OrderedDict[str, _Origin] = collections.OrderedDict()
_origins_lock = threading.Lock()


def _xarray(caller: str):
    """Import xarray, or say which extra to install."""
    try:
        import xarray
    except ImportError as exc:
        raise ImportError(
            f"`{caller}` needs the xarray package: pip install 'dndask[xarray]'"
        ) from exc
    return xarray


# --------------------------------------------------------------- the table
def _remember(a: _dndarray.DNDarray, dims: Sequence[Hashable]) -> None:
    dim = None if a.split is None else dims[a.split]
    name = a.to_dask().name
    with _origins_lock:
        _origins[name] = _Origin(a.comm, dim, dict(a._task_ranks))
        _origins.move_to_end(name)
        while len(_origins) > _REGISTRY_SIZE:
            _origins.popitem(last=False)


def _recall(x: da.Array) -> _Origin | None:
    """The nearest remembered ancestor of ``x`` (itself first), breadth first through its graph."""
    graph = x.__dask_graph__()
    dependencies = getattr(graph, "dependencies", {})
    seen, queue = {x.name}, collections.deque([x.name])
    with _origins_lock:
        while queue:
            name = queue.popleft()
            if name in _origins:
                origin = _origins[name]
                break
            for parent in dependencies.get(name, ()):
                if parent not in seen:
                    seen.add(parent)
                    queue.append(parent)
        else:
            return None
    return origin if _alive(origin.comm) else None


def _alive(comm: _comm.Comm) -> bool:
    """Whether a remembered comm's workers are all live workers of its cluster now."""
    return set(comm.workers) <= set(_comm.live_workers(comm.client))  # not the default comm


# ------------------------------------------------------------ read the layout
def _chunk_split(chunks: tuple, dims: Sequence[Hashable], remembered) -> int | None:
    """The split axis the chunks show.

    The axis with more than one chunk; if there is none (one rank, or a
    selection inside one rank's rows), the remembered split dimension if the
    object still has it; if several axes are chunked, the remembered one if
    it is among them, else the one with the most chunks.
    """
    multi = [axis for axis, c in enumerate(chunks) if len(c) > 1]
    kept = list(dims).index(remembered) if remembered in dims else None
    if kept is not None and (not multi or kept in multi):
        return kept
    if multi:
        return max(multi, key=lambda axis: len(chunks[axis]))
    return None


def _layout_of(obj) -> tuple[int | None, _comm.Comm, dict]:
    """``(split axis, comm, task_ranks)`` of a DataArray, read off its data."""
    data = obj.data
    if not isinstance(data, da.Array):
        return None, _comm.get_comm(), {}
    origin = _recall(data)
    if origin is None:
        return _chunk_split(data.chunks, obj.dims, None), _comm.get_comm(), {}
    return _chunk_split(data.chunks, obj.dims, origin.dim), origin.comm, origin.task_ranks


def _wrap(obj, axis: int | None, comm: _comm.Comm, task_ranks: dict) -> _dndarray.DNDarray:
    """A DataArray's data as a DNDarray split along ``axis``, conformed if needed."""
    data = obj.data
    if isinstance(data, da.Array):
        out = _dndarray.from_dask(data, axis, comm)
        out._task_ranks.update(task_ranks)
        return out
    values = np.asarray(data)
    if values.dtype.kind not in "biufc":
        raise TypeError(
            f"`obj` must hold boolean or numeric data, got {values.dtype} in {obj.name!r}"
        )
    return _per_rank.scatter(values, axis, comm)


def _dim_axis(obj, dim, name: str = "dim") -> int | None:
    """A dimension name or axis of ``obj`` as an axis (``None`` stays ``None``)."""
    if dim is None:
        return None
    if isinstance(dim, str):
        if dim not in obj.dims:
            raise ValueError(f"`{name}` must be a dimension of {tuple(obj.dims)}, got {dim!r}")
        return list(obj.dims).index(dim)
    return _layout.normalize_axis(dim, obj.ndim, name)


def _rewrap(obj, a: _dndarray.DNDarray):
    """``obj`` with ``a``'s data (same dims, coords, name, attrs); remembers ``a``."""
    _remember(a, obj.dims)
    return obj.copy(deep=False, data=a.to_dask())


# ------------------------------------------------------------- conversions
def to_xarray(a, dims=None, coords=None, name=None, attrs=None):
    """An ``xarray.DataArray`` backed by ``a``'s Dask array: no compute, no copy.

    The DataArray's chunks are ``a``'s ranks, so ``.dnd.split`` names the
    dimension of ``a.split`` and ``.dnd.to_dndarray()`` gives ``a`` back.

    Parameters
    ----------
    a : DNDarray
        The array.
    dims : sequence of str, optional
        Dimension names; ``dim_0, dim_1, ...`` by default (as in xarray).
    coords, name, attrs : optional
        As for ``xarray.DataArray``.

    Returns
    -------
    xarray.DataArray

    Examples
    --------
    >>> import dndask as ht
    >>> a = ht.zeros((6, 4), split=0, comm=ht.get_comm().subcomm([0, 1, 2]))
    >>> x = a.to_xarray(dims=("time", "lon"), coords={"time": range(6)}, name="t")
    >>> x.dnd.split, x.data is a.to_dask()
    ('time', True)
    >>> x.dnd.lshape_map.tolist()
    [[2, 4], [2, 4], [2, 4]]
    """
    if not isinstance(a, _dndarray.DNDarray):
        raise TypeError(f"`a` must be a DNDarray, got {type(a).__name__}")
    xr = _xarray("to_xarray")
    dims = _layout.normalize_dims(dims, a.ndim)
    out = xr.DataArray(a.to_dask(), dims=dims, coords=coords, name=name, attrs=attrs)
    _remember(a, dims)
    return out


def _from_dataarray(obj, split, comm) -> _dndarray.DNDarray:
    axis = _dim_axis(obj, split, "split")
    _, inferred, task_ranks = _layout_of(obj)
    if comm is None:
        comm = inferred
    else:
        comm = _comm.sanitize_comm(comm)
        task_ranks = task_ranks if comm == inferred else {}
    return _wrap(obj, axis, comm, task_ranks)


def from_xarray(obj, split=None, comm=None):
    """A DNDarray from an ``xarray.DataArray``, or a dict of them from a ``Dataset``.

    ``split`` is a dimension name or an axis (``None``: one chunk on rank 0,
    as with ``ht.array``). Dask-backed data stays lazy and keeps its chunks if
    they already are one per rank along ``split`` (as for arrays made by
    :func:`to_xarray`); otherwise it is rechunked to the balanced layout.
    In-memory data is sent from the driver to the ranks. For a Dataset, each
    data variable that has the dimension ``split`` is split along it, the
    others are not split. ``comm`` defaults to the comm the data came from
    (see the module notes), else the default comm. Use ``obj.dnd.to_dndarray()``
    to keep the current distribution, whatever it is.

    Parameters
    ----------
    obj : xarray.DataArray or xarray.Dataset
        The labelled data.
    split : str, int or None
        The dimension to distribute along (a name for a Dataset).
    comm : Comm, optional
        The ranks.

    Returns
    -------
    DNDarray, or dict of str to DNDarray for a Dataset

    Examples
    --------
    >>> import dndask as ht, numpy as np, xarray as xr
    >>> x = xr.DataArray(np.arange(12).reshape(4, 3), dims=("time", "lat"))
    >>> a = ht.from_xarray(x, split="time", comm=ht.get_comm().subcomm([0, 1]))
    >>> a.split, a.lshape_map.tolist()
    (0, [[2, 3], [2, 3]])
    >>> ds = xr.Dataset({"t": x, "z": ("lat", np.zeros(3))})
    >>> {k: v.split for k, v in ht.from_xarray(ds, split="time").items()}
    {'t': 0, 'z': None}
    """
    xr = _xarray("from_xarray")
    if comm is not None and not isinstance(comm, _comm.Comm):
        raise TypeError(f"`comm` must be a dndask.Comm, got {type(comm).__name__}")
    if isinstance(obj, xr.DataArray):
        return _from_dataarray(obj, split, comm)
    if isinstance(obj, xr.Dataset):
        _check_dataset_dim(obj, split, "split")
        return {
            name: _from_dataarray(var, split if split in var.dims else None, comm)
            for name, var in obj.data_vars.items()
        }
    raise TypeError(f"`obj` must be an xarray DataArray or Dataset, got {type(obj).__name__}")


def _check_dataset_dim(ds, dim, name: str) -> None:
    if dim is None:
        return
    if not isinstance(dim, str):
        raise TypeError(f"`{name}` must be None or a dimension name for a Dataset, got {dim!r}")
    if dim not in ds.dims:
        raise ValueError(f"`{name}` must be a dimension of {tuple(ds.dims)}, got {dim!r}")


# --------------------------------------------------------------- accessors
class DataArrayAccessor:
    """``da.dnd``: the distribution of a DataArray's Dask data, in Heat's terms.

    It holds no state: every property reads the chunks of the data the
    DataArray wraps now. Methods return new DataArrays with the same
    dimensions, coordinates, name and attributes.

    Examples
    --------
    >>> import dndask as ht
    >>> x = ht.zeros((6, 4), split=0).to_xarray(dims=("time", "lon"))
    >>> y = x.dnd.resplit("lon")
    >>> y.dnd.split, (y + 1).mean("time").dnd.split
    ('lon', 'lon')
    """

    def __init__(self, obj):
        self._obj = obj

    @property
    def split(self) -> Hashable | None:
        """The split dimension's name, or ``None``."""
        axis = _layout_of(self._obj)[0]
        return None if axis is None else self._obj.dims[axis]

    @property
    def comm(self) -> _comm.Comm:
        """The ranks the data belongs to (see the module notes on how it is found)."""
        return _layout_of(self._obj)[1]

    @property
    def lshape_map(self) -> torch.Tensor:
        """Every rank's local shape, as :meth:`to_dndarray` would lay the data out."""
        return self.to_dndarray().lshape_map

    def to_dndarray(self) -> _dndarray.DNDarray:
        """The data as a DNDarray split along :attr:`split` (lazy; conformed if needed)."""
        axis, comm, task_ranks = _layout_of(self._obj)
        return _wrap(self._obj, axis, comm, task_ranks)

    def resplit(self, dim=None):
        """A copy split along ``dim`` (a name or an axis; ``None`` gathers to rank 0)."""
        axis = _dim_axis(self._obj, dim)
        return _rewrap(self._obj, self.to_dndarray().resplit_(axis))

    def redistribute(self, target_map=None):
        """A copy whose rank ``r`` holds ``target_map[r, split]`` rows (balanced if None)."""
        return _rewrap(self._obj, self.to_dndarray().redistribute_(target_map=target_map))

    def balance(self):
        """A copy in Heat's balanced layout."""
        return _rewrap(self._obj, self.to_dndarray().balance_())

    def persist(self, *, wait: bool = False):
        """A copy computed into the workers' memory, chunk ``r`` on rank ``r``'s worker.

        Returns once the work is submitted, as ``DNDarray.persist`` does;
        ``wait=True`` waits until every chunk is in memory.
        """
        return _rewrap(self._obj, self.to_dndarray().persist_(wait=wait))


class DatasetAccessor:
    """``ds.dnd``: the distribution of a Dataset's data variables.

    Every data variable that has the split dimension is split along it;
    the others are not split. Methods return new Datasets.

    Examples
    --------
    >>> import dndask as ht, xarray as xr
    >>> t = ht.zeros((6, 4), split=0).to_xarray(dims=("time", "lon"))
    >>> ds = xr.Dataset({"t": t, "m": t.mean("time")})
    >>> ds.dnd.split, ds.dnd.resplit("lon").dnd.split
    ('time', 'lon')
    """

    def __init__(self, obj):
        self._obj = obj

    def _distributed(self) -> dict:
        return {
            name: var for name, var in self._obj.data_vars.items() if isinstance(var.data, da.Array)
        }

    @property
    def split(self) -> Hashable | None:
        """The dimension the data variables are split along, or ``None``."""
        dims = {var.dnd.split for var in self._distributed().values()} - {None}
        if len(dims) > 1:
            splits = {name: var.dnd.split for name, var in self._distributed().items()}
            raise ValueError(
                f"the data variables are split along different dimensions: {splits}; "
                "call ds.dnd.resplit(dim) to align them"
            )
        return dims.pop() if dims else None

    @property
    def lshape_map(self) -> dict:
        """Each data variable's lshape_map."""
        return {name: var.dnd.lshape_map for name, var in self._obj.data_vars.items()}

    def to_dndarray(self) -> dict:
        """Each data variable as a DNDarray (see :meth:`DataArrayAccessor.to_dndarray`)."""
        return {name: var.dnd.to_dndarray() for name, var in self._obj.data_vars.items()}

    def _each(self, change) -> object:
        new = {name: change(name, var) for name, var in self._obj.data_vars.items()}
        return self._obj.assign({name: var for name, var in new.items() if var is not None})

    def resplit(self, dim=None):
        """A copy with every variable that has ``dim`` split along it, the others gathered."""
        _check_dataset_dim(self._obj, dim, "dim")

        def change(name, var):
            if dim in var.dims:
                return var.dnd.resplit(dim)
            return var.dnd.resplit(None) if isinstance(var.data, da.Array) else None

        return self._each(change)

    def redistribute(self, target_map=None):
        """A copy whose split variables hold ``target_map[r]`` rows on rank ``r``.

        ``target_map`` is one count per rank along the split dimension (a
        1-D tensor, array or sequence), shared by every split variable;
        ``None`` balances them.
        """
        dim = self.split
        if dim is None:
            raise ValueError("`redistribute` needs split data variables, got none")
        counts = None if target_map is None else _as_counts(target_map)

        def change(name, var):
            if var.dnd.split != dim:
                return None
            if counts is None:
                return var.dnd.balance()
            target = var.dnd.lshape_map
            if len(counts) != target.shape[0]:
                raise ValueError(
                    f"`target_map` must hold {target.shape[0]} counts (one per rank), "
                    f"got {len(counts)}"
                )
            target[:, var.dims.index(dim)] = torch.tensor(counts)
            return var.dnd.redistribute(target)

        return self._each(change)

    def balance(self):
        """A copy with every split variable balanced."""
        return self._each(lambda name, var: var.dnd.balance() if var.dnd.split else None)

    def persist(self, *, wait: bool = False):
        """A copy with every Dask-backed variable computed into its ranks' memory.

        Returns once the work is submitted; ``wait=True`` waits for every variable.
        """
        return self._each(
            lambda name, var: var.dnd.persist(wait=wait) if isinstance(var.data, da.Array) else None
        )


def _as_counts(value) -> list[int]:
    """A Dataset's ``target_map``: one non-negative int per rank."""
    if isinstance(value, (torch.Tensor, np.ndarray)):
        value = value.tolist()
    if not isinstance(value, (list, tuple)) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise TypeError(f"`target_map` of a Dataset must be one int count per rank, got {value!r}")
    return list(value)


def _register_accessors() -> None:
    """Add ``.dnd`` to DataArray and Dataset if xarray is installed (it is optional)."""
    try:
        import xarray
    except ImportError:
        return
    xarray.register_dataarray_accessor("dnd")(DataArrayAccessor)
    xarray.register_dataset_accessor("dnd")(DatasetAccessor)


_register_accessors()
