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
from typing import TYPE_CHECKING, NamedTuple

import dask.array as da
import numpy as np

from . import _comm, _compute, _dndarray, _handoff, _layout, _per_rank, _torch, _xp
from ._placement import Ranks

if TYPE_CHECKING:
    import torch

_REGISTRY_SIZE = 1024


class Labels(NamedTuple):
    """The xarray labels of a DNDarray made from a DataArray, restored by :func:`to_xarray`.

    ``from_xarray`` and ``.dnd.to_dndarray()`` store them on the DNDarray
    (``a._labels``); they apply while ``a.shape`` is still ``shape`` (in-place
    changes of distribution keep it; results of operations are new arrays
    without labels).
    """

    shape: tuple[int, ...]
    dims: tuple
    coords: object  # xarray Coordinates
    name: Hashable | None
    attrs: dict


def labels_of(a: _dndarray.DNDarray) -> Labels | None:
    """``a``'s labels if it has some and they still fit its shape, else None."""
    labels = a._labels
    return labels if labels is not None and labels.shape == a.shape else None


class _Origin(NamedTuple):
    """What dndask knows about a Dask array it gave to xarray."""

    comm: _comm.Comm
    dim: Hashable | None  # the split dimension's name
    task_ranks: Ranks | dict  # where its dndask-made tasks run (see DNDarray._task_ranks)
    axis: int | None = None  # a DNDarray xarray handed to Dask: its split axis (no dim name)


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
    _compute.hand_over(a.to_dask(), a._placement())  # xarray's own persist pins the chunks
    with _origins_lock:
        _origins[name] = _Origin(a.comm, dim, a._task_ranks)
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
            departed = _handoff.departed(name)
            if departed is not None:  # a DNDarray xarray handed to Dask (rolling, chunk, ...)
                origin = _Origin(departed.comm, None, departed.task_ranks, departed.split)
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
    if isinstance(data, _dndarray.DNDarray):  # xr.DataArray(a, dims=...): a knows its layout
        return data.split, data.comm, data._task_ranks
    if not isinstance(data, da.Array):
        return None, _comm.get_comm(), {}
    origin = _recall(data)
    if origin is None:
        return _chunk_split(data.chunks, obj.dims, None), _comm.get_comm(), {}
    if origin.dim is None and origin.axis is not None and origin.axis < obj.ndim:
        # a DNDarray that xarray handed to Dask (rolling, shift, ...): Dask chose these
        # chunks, so the split is the DNDarray's (its axes keep their places there)
        return origin.axis, origin.comm, origin.task_ranks
    return _chunk_split(data.chunks, obj.dims, origin.dim), origin.comm, origin.task_ranks


def _wrap(
    obj, axis: int | None, comm: _comm.Comm, task_ranks: dict, device=None
) -> _dndarray.DNDarray:
    """A DataArray's data as a DNDarray split along ``axis``, conformed if needed, labelled.

    Dask data keeps its chunk type and in-memory data its device, unless ``device`` names
    one: then the chunks are copied there explicitly, one task per chunk on its rank.
    """
    data = obj.data
    if isinstance(data, _dndarray.DNDarray):
        data = data.to_dask()  # a new DNDarray on the same graph takes the labels
    if isinstance(data, da.Array):
        out = _dndarray.from_dask(data, axis, comm)
        out._task_ranks.update(task_ranks)
    else:
        # in-memory device data (CuPy) is in the driver already: copied to host explicitly,
        # sent to the ranks, and put back on its device there
        device = _xp.device_of(data) if device is None else device
        values = np.asarray(_xp.to_host(data))
        if values.dtype.kind not in "biufc":
            raise TypeError(
                f"`obj` must hold boolean or numeric data, got {values.dtype} in {obj.name!r}"
            )
        out = _per_rank.scatter(values, axis, comm)
    if device is not None:
        out = out._on_device(device)
    out._labels = Labels(out.shape, tuple(obj.dims), obj.coords, obj.name, dict(obj.attrs))
    return out


def _dim_axis(obj, dim, name: str = "dim") -> int | None:
    """A dimension name or axis of ``obj`` as an axis (``None`` stays ``None``)."""
    if dim is None:
        return None
    if isinstance(dim, str):
        if dim not in obj.dims:
            raise ValueError(f"`{name}` must be a dimension of {tuple(obj.dims)}, got {dim!r}")
        return list(obj.dims).index(dim)
    return _layout.normalize_axis(dim, obj.ndim, name)


def _rewrap(obj, a: _dndarray.DNDarray, as_dask: bool = False):
    """``obj`` with ``a``'s data (same dims, coords, name, attrs); remembers ``a``.

    DNDarray-backed data (``xr.DataArray(a, dims=...)``) stays DNDarray-backed
    unless ``as_dask`` (for xarray's writers, which store Dask arrays only).
    """
    if isinstance(obj.data, _dndarray.DNDarray) and not as_dask:
        return obj.copy(deep=False, data=a)
    _remember(a, obj.dims)
    return obj.copy(deep=False, data=a.to_dask())


def _distributed(data) -> bool:
    """Whether a variable's data is laid out on ranks (a DNDarray or a Dask array)."""
    return isinstance(data, (_dndarray.DNDarray, da.Array))


# ------------------------------------------------------------- conversions
def to_xarray(a, dims=None, coords=None, name=None, attrs=None, device=None):
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
    device : str or Device, optional
        ``None`` keeps ``a``'s chunks (CuPy chunks stay on the GPU: computing the
        DataArray then gives device data); ``"cpu"``/``"gpu"`` copies them there first,
        explicitly (one task per chunk, on its rank).

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
    labels = labels_of(a)
    if device is not None:
        moved = a._on_device(device)  # an unusable device fails here, before any task
        if moved is not a:
            moved._labels = a._labels
        a = moved
    if labels is not None:
        same_dims = dims is None or tuple(_layout.normalize_dims(dims, a.ndim)) == labels.dims
        dims = labels.dims if dims is None else dims
        coords = labels.coords if coords is None and same_dims else coords
        name = labels.name if name is None else name
        attrs = dict(labels.attrs) if attrs is None else attrs
    dims = _layout.normalize_dims(dims, a.ndim)
    out = xr.DataArray(a.to_dask(), dims=dims, coords=coords, attrs=attrs)
    out.name = name  # not the Dask key, which xarray takes from data.name otherwise
    _remember(a, dims)
    return out


def _from_dataarray(obj, split, comm, device=None) -> _dndarray.DNDarray:
    axis = _dim_axis(obj, split, "split")
    _, inferred, task_ranks = _layout_of(obj)
    if comm is None:
        comm = inferred
    else:
        comm = _comm.sanitize_comm(comm)
        task_ranks = task_ranks if comm == inferred else {}
    return _wrap(obj, axis, comm, task_ranks, device)


def from_xarray(obj, split=None, comm=None, device=None):
    """A DNDarray from an ``xarray.DataArray``; a DNDarray-backed Dataset from a ``Dataset``.

    ``split`` is a dimension name or an axis (``None``: one chunk on rank 0,
    as with ``ht.array``). Dask-backed data stays lazy and keeps its chunks if
    they already are one per rank along ``split`` (as for arrays made by
    :func:`to_xarray`); otherwise it is rechunked to the balanced layout.
    In-memory data is sent from the driver to the ranks. ``comm`` defaults to
    the comm the data came from (see the module notes), else the default comm.
    Use ``obj.dnd.to_dndarray()`` to keep the current distribution, whatever it is.

    A DataArray gives a DNDarray that remembers the DataArray's dims, coords,
    name and attrs: ``a.to_xarray()`` restores them (see :class:`Labels`).
    A Dataset gives a Dataset with the same coordinates and attributes whose
    data variables are DNDarray graphs: each variable that has the dimension
    ``split`` is split along it, the others are not split (one chunk on rank 0).
    ``ds.dnd.to_dndarray()`` gives them as a dict of DNDarrays.

    Parameters
    ----------
    obj : xarray.DataArray or xarray.Dataset
        The labelled data.
    split : str, int or None
        The dimension to distribute along (a name for a Dataset).
    comm : Comm, optional
        The ranks.
    device : str or Device, optional
        ``None`` keeps the data's device (Dask chunks keep their type, in-memory CuPy
        data goes back to the GPU on the ranks); ``"cpu"``/``"gpu"`` copies the chunks
        there explicitly, one task per chunk on its rank.

    Returns
    -------
    DNDarray, or xarray.Dataset for a Dataset

    Raises
    ------
    ValueError
        ``split`` is not a dimension of ``obj`` (the message names the dims it has).

    Examples
    --------
    >>> import dndask as ht, numpy as np, xarray as xr
    >>> x = xr.DataArray(np.arange(12).reshape(4, 3), dims=("time", "lat"), name="t")
    >>> a = ht.from_xarray(x, split="time", comm=ht.get_comm().subcomm([0, 1]))
    >>> a.split, a.lshape_map.tolist(), a.to_xarray().dims, a.to_xarray().name
    (0, [[2, 3], [2, 3]], ('time', 'lat'), 't')
    >>> ds = xr.Dataset({"t": x, "z": ("lat", np.zeros(3))})
    >>> out = ht.from_xarray(ds, split="time")
    >>> {k: v.dnd.split for k, v in out.data_vars.items()}
    {'t': 'time', 'z': None}
    """
    xr = _xarray("from_xarray")
    if comm is not None and not isinstance(comm, _comm.Comm):
        raise TypeError(f"`comm` must be a dndask.Comm, got {type(comm).__name__}")
    if device is not None:
        device = _xp.sanitize_device(device)  # an unusable device fails here, before any task
    if isinstance(obj, xr.DataArray):
        return _from_dataarray(obj, split, comm, device)
    if isinstance(obj, xr.Dataset):
        _check_dataset_dim(obj, split, "split")
        arrays = {
            name: _from_dataarray(var, split if split in var.dims else None, comm, device)
            for name, var in obj.data_vars.items()
        }
        return obj.assign({name: _rewrap(obj[name], a) for name, a in arrays.items()})
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

    def conform(self, dim=None):
        """A copy with one chunk per rank again, on the same comm.

        xarray operations that regroup the split dimension (``groupby`` over
        it, ``resample``, ``rolling``, ``concat``, ``isel``, ``chunk``) leave
        other chunks: many small ones, or the chunks of some ranks only. The
        copy's chunks are one per rank of :attr:`comm` along ``dim`` (by
        default :attr:`split`, what the chunks show): kept as they are if they
        already are, else Heat's balanced layout. It is a lazy rechunk; each
        rank's chunk is assembled from the pieces that hold its rows, so every
        row moves at most once, when the copy is computed or persisted (and
        xarray's own ``.persist()`` then pins chunk ``r`` to rank ``r``). The
        comm is recorded again, so the copy's descendants find it.

        Parameters
        ----------
        dim : str or int, optional
            The dimension to split along.

        Examples
        --------
        >>> import dndask as ht, numpy as np, pandas as pd
        >>> comm = ht.get_comm().subcomm([0, 1, 2])
        >>> t = ht.arange(12.0, split=0, comm=comm).to_xarray(
        ...     dims="time", coords={"time": pd.date_range("2000-01-01", periods=12)})
        >>> weekly = t.resample(time="3D").mean()
        >>> weekly.data.chunks, weekly.dnd.conform().data.chunks
        (((1, 1, 1, 1),), ((2, 1, 1),))
        """
        axis, comm, task_ranks = _layout_of(self._obj)
        if dim is not None:
            axis = _dim_axis(self._obj, dim)
        return _rewrap(self._obj, _wrap(self._obj, axis, comm, task_ranks))

    def chunk_for_zarr(self, rows: int | None = None):
        """A copy that ``xarray.to_zarr`` writes with every rank writing its own zarr chunks.

        Along the split dimension each rank holds a multiple of ``rows`` rows
        but the last rank, which holds the rest (ranks before it may then be
        empty; a lazy move of the rows at the rank boundaries), and
        ``encoding["chunks"]`` is ``rows`` along it and the whole extent along
        every other dimension. No zarr
        chunk then spans two ranks, so xarray's safe-chunk check passes and
        ``to_zarr`` needs no ``safe_chunks=False`` (which would let two ranks
        write one chunk at once). ``ht.save_zarr(x, path)`` does all of this
        and also keeps each write on its rank's worker. The copy's data is a
        Dask array (as from ``to_xarray``) also when ``x`` holds a DNDarray:
        xarray's writers hand their sources to ``dask.array.store``, which
        takes Dask's own arrays only.

        Parameters
        ----------
        rows : int, optional
            Rows per zarr chunk along the split dimension; by default a rank's
            share, capped near 64 MiB per chunk (as ``ht.save_zarr`` picks).

        Examples
        --------
        >>> import dndask as ht
        >>> x = ht.arange(7, split=0, comm=ht.get_comm().subcomm([0, 1, 2])).to_xarray(dims="t")
        >>> x.data.chunks
        ((3, 2, 2),)
        >>> z = x.dnd.chunk_for_zarr()
        >>> z.data.chunks, z.encoding["chunks"]
        (((3, 3, 1),), (3,))
        """
        if rows is not None and (not isinstance(rows, int) or isinstance(rows, bool)):
            raise TypeError(f"`rows` must be None or an int, got {type(rows).__name__}")
        if rows is not None and rows < 1:
            raise ValueError(f"`rows` must be at least 1, got {rows}")
        a = self.to_dndarray()
        split = 0 if a.split is None else a.split
        if a.ndim == 0:
            chunks = ()
        elif a.split is None:
            chunks = tuple(max(1, s) for s in a.shape)
        else:
            if rows is None:
                rows = _layout.chunk_rows(
                    a.shape, split, a.comm.size, a.dtype.itemsize, _layout.STORE_CHUNK_BYTES
                )
            counts = _layout.whole_chunk_counts(a.shape[split], a.comm.size, rows, rest_last=True)
            a.redistribute_(target_map=_counts_map(a, counts))
            chunks = tuple(rows if ax == split else max(1, s) for ax, s in enumerate(a.shape))
        out = _rewrap(self._obj, a, as_dask=True)  # xarray's writers store Dask arrays only
        encoding = {k: v for k, v in out.encoding.items() if k != "preferred_chunks"}
        out.encoding = {**encoding, "chunks": chunks}
        return out


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
        return {name: var for name, var in self._obj.data_vars.items() if _distributed(var.data)}

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
            return var.dnd.resplit(None) if _distributed(var.data) else None

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
            target[:, var.dims.index(dim)] = _torch.torch().tensor(counts)
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
            lambda name, var: var.dnd.persist(wait=wait) if _distributed(var.data) else None
        )

    def conform(self, dim=None):
        """A copy with every Dask-backed variable one chunk per rank again (see the DataArray's).

        Variables that have ``dim`` are split along it; the others (and all
        of them if ``dim`` is None) along what their chunks show.
        """
        _check_dataset_dim(self._obj, dim, "dim")

        def change(name, var):
            if dim is not None and dim in var.dims:
                return var.dnd.conform(dim)
            return var.dnd.conform() if _distributed(var.data) else None

        return self._each(change)

    def chunk_for_zarr(self, rows: int | None = None):
        """A copy that ``xarray.to_zarr`` writes rank by rank (see the DataArray's).

        Every Dask-backed variable is laid out and gets ``encoding["chunks"]``;
        ``rows`` (if given) applies to every split variable.
        """
        return self._each(
            lambda name, var: var.dnd.chunk_for_zarr(rows) if _distributed(var.data) else None
        )


def _counts_map(a: _dndarray.DNDarray, counts) -> torch.Tensor:
    """``a``'s lshape_map with ``counts`` along its split axis."""
    target = a.lshape_map
    target[:, a.split] = _torch.torch().tensor(counts)
    return target


def _as_counts(value) -> list[int]:
    """A Dataset's ``target_map``: one non-negative int per rank."""
    if isinstance(value, np.ndarray) or _torch.is_tensor(value):
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
