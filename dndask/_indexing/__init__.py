"""Indexing of DNDarrays: ``a[key]`` and ``a[key] = value``.

Values follow numpy exactly; the distribution of a result follows Heat. The
key is first normalised, then pure planning functions decide which rows of
which rank every output chunk needs; only then is a Dask graph built. No step
gathers the indexed array: every rank slices its own chunk, and only the
selected rows travel to the rank that needs them.

What lives where:

- ``_keys``: the keys accepted, their checks and errors, :func:`normalize_key` (pure).
- ``_plan``: the layout of ``a[key]`` (which split a result gets) and its fetch plans (pure).
- ``_setplan``: the plans of ``a[key] = value``: regions, value cuts, value shape check (pure).
- ``_tasks``: the chunk functions the tasks run, and :func:`run_fetch` to replay a plan.
- ``_prepare``: driver-side preparation: index DNDarrays computed, masks laid out, True counts.
- ``_graph``: the tasks that assemble a fetch plan on its target rank.
- ``_getitem``: :func:`getitem`.
- ``_setitem``: :func:`setitem` and the checks of the value (what assignment does).
"""

from __future__ import annotations

from ._getitem import getitem
from ._keys import MASK, Item, Key, key_mode, leaves, local_key, normalize_key
from ._plan import FetchPlan, GetPlan, Layout, plan_fetch, plan_getitem, positions_in, result_layout
from ._setitem import setitem
from ._setplan import (
    ALL,
    Region,
    SetPlan,
    check_value_shape,
    mask_positions,
    plan_setitem,
    value_key,
)
from ._tasks import assign, join, pick, run_fetch, take

__all__ = [
    "ALL",
    "MASK",
    "FetchPlan",
    "GetPlan",
    "Item",
    "Key",
    "Layout",
    "Region",
    "SetPlan",
    "assign",
    "check_value_shape",
    "getitem",
    "join",
    "key_mode",
    "leaves",
    "local_key",
    "mask_positions",
    "normalize_key",
    "pick",
    "plan_fetch",
    "plan_getitem",
    "plan_setitem",
    "positions_in",
    "result_layout",
    "run_fetch",
    "setitem",
    "take",
    "value_key",
]
