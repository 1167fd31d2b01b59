"""``a[key]``: the key prepared and planned, then the graph of the result built."""

from __future__ import annotations

from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from .. import _dndarray, _layout
from .._compat import new_array
from .._graph import block_index, meta_of
from ._graph import fetch_into, no_mask
from ._keys import Key, covers, the_mask
from ._plan import GetPlan, plan_getitem
from ._prepare import laid_out_mask, normalized


def getitem(a, key):
    """``a[key]``: basic, integer-array and boolean indexing with Heat's result layout.

    Values are numpy's; the split of the result follows the rules in the
    docstring of :mod:`dndask._indexing._plan` (a slice of the split axis stays
    local and keeps the split, an int on it gives ``split=None``, arrays on it
    give a balanced result, a mask gives each rank its ``True`` elements).

    Parameters
    ----------
    a : DNDarray
        The indexed array.
    key : int, slice, Ellipsis, None, array-like, DNDarray or tuple of them
        The index, as numpy reads it.

    Returns
    -------
    DNDarray
        A new array (never a view; ``a`` is unchanged).

    Examples
    --------
    >>> import dndask as ht
    >>> a = ht.arange(10, split=0, comm=ht.get_comm().subcomm([0, 1, 2]))
    >>> b = a[2:9:2]
    >>> b.numpy().tolist(), b.split, b.lshape_map.tolist(), b.balanced
    ([2, 4, 6, 8], 0, [[1], [2], [1]], False)
    >>> a[-1].split is None, a[-1].item()
    (True, 9)
    >>> c = a[a % 3 == 0]
    >>> c.numpy().tolist(), c.lshape_map.tolist()
    ([0, 3, 6, 9], [[2], [1], [1]])
    """
    norm = normalized(a, key)
    if norm.mode == "mask":
        return _getitem_masked(a, norm)
    plan = plan_getitem(norm, a.split, a.distribution.counts)
    return _build_get(a, plan, no_mask, None, tokenize(norm))


def _getitem_masked(a, norm: Key):
    _, it = the_mask(norm)
    if covers(it, a.split) and a.split != it.axis:
        # C order over the mask's axes interleaves the ranks: split on its first axis
        a = a.resplit(it.axis)
    mask = laid_out_mask(a, it)
    plan = plan_getitem(norm, a.split, a.distribution.counts, mask.table())
    token = tokenize(norm, None if mask.array is None else mask.array.to_dask().name)
    return _build_get(a, plan, mask.arg, mask.array, token)


def _build_get(a, plan: GetPlan, mask_for, mask_array, token: str):
    x = a.to_dask()
    name = f"getitem-{tokenize(x.name, token, plan.split, plan.counts)}"
    ndim = len(plan.shape)
    dsk: dict = {}
    task_ranks: dict = {}
    for r, fetch in enumerate(plan.fetches):
        out_key = (name, *block_index(plan.split, ndim, r))
        fetch_into(dsk, task_ranks, out_key, r, (x, a.split), fetch, mask_for, a.dtype)
    deps = [x] if mask_array is None else [x, mask_array.to_dask()]
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=deps)
    chunks = _layout.chunks_for(plan.shape, plan.split, plan.counts or None)
    out = new_array(graph, name, chunks, meta_of(a.dtype, ndim, like=a))
    parents = (a,) if mask_array is None else (a, mask_array)
    result = _dndarray.from_dask(out, plan.split, a.comm, parents=parents)
    result._task_ranks.update(task_ranks)
    return result
