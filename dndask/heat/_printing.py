"""Heat's printing functions: print options with Heat's profiles, local and global printing,
``print0``.

The options are the core's (:func:`dndask.set_printoptions`), so both faces print alike.
Heat runs one process per rank, so "local printing" makes each process print its own
tensor; a driver program prints every rank's chunk instead, each line tagged
``[rank/last rank]``, and ``print0`` prints rank 0's chunk, as Heat's rank 0 does.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from .. import _display, _dndarray, _repr
from .._compat import pick_blocks

__all__ = [
    "get_printoptions",
    "global_printing",
    "is_local",
    "local_printing",
    "local_text",
    "print0",
    "set_printoptions",
]

# Heat's profiles (torch's, at Heat's line width of 120 unless one is given)
_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 120},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 120},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 120},
}
_LOCAL = [False]


def get_printoptions() -> dict:
    """The current print options (``precision``, ``threshold``, ``edgeitems``, ``linewidth``,
    ``sci_mode``), as Heat's ``get_printoptions`` returns torch's.

    >>> import dndask.heat as ht
    >>> sorted(ht.get_printoptions())
    ['edgeitems', 'linewidth', 'precision', 'sci_mode', 'threshold']
    """
    return _display.get_printoptions()


def set_printoptions(
    precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None
) -> None:
    """Heat's ``set_printoptions``: a ``profile`` (``"default"``, ``"short"``, ``"full"``)
    sets every option, and the ones given override it.

    >>> import dndask.heat as ht
    >>> ht.set_printoptions(profile="short")
    >>> ht.get_printoptions()["precision"]
    2
    >>> ht.set_printoptions(profile="default")
    """
    options = {}
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"`profile` must be one of {sorted(_PROFILES)}, got {profile!r}")
        options.update(_PROFILES[profile])
    given = {"precision": precision, "threshold": threshold, "edgeitems": edgeitems}
    options.update({k: v for k, v in given.items() if v is not None})
    if linewidth is not None:
        options["linewidth"] = linewidth
    _display.set_printoptions(**options, sci_mode=sci_mode)


def local_printing() -> None:
    """``print`` shows each rank's own chunk from now on (Heat's local printing).

    >>> import dndask.heat as ht
    >>> ht.local_printing()
    Printing options set to LOCAL. DNDarrays will print the local PyTorch Tensors
    >>> ht.global_printing()
    Printing options set to GLOBAL. DNDarrays will be collected on process 0 before printing
    """
    _LOCAL[0] = True
    builtins.print("Printing options set to LOCAL. DNDarrays will print the local PyTorch Tensors")


def global_printing() -> None:
    """``print`` shows the global array again (the default)."""
    if not _LOCAL[0]:
        return
    _LOCAL[0] = False
    builtins.print(
        "Printing options set to GLOBAL. DNDarrays will be collected on process 0 before printing"
    )


def is_local() -> bool:
    """Whether local printing is on."""
    return _LOCAL[0]


def _chunks(a: _dndarray.DNDarray, ranks) -> list[np.ndarray]:
    """The host values of the chunks of ``ranks``, in one round trip."""
    x = (a.cpu() if str(a.device) != "cpu:0" else a).to_dask()
    blocks = [
        pick_blocks(x, tuple(r if ax == a.split else 0 for ax in range(a.ndim))) for r in ranks
    ]
    client = a.comm.client
    return client.gather(client.compute(blocks))


def local_text(a: _dndarray.DNDarray, ranks=None) -> str:
    """Each rank's chunk as Heat's local printing shows it: ``<values>, device: ..., split: ...``,
    every line tagged ``[rank/last rank]`` (untagged when ``ranks`` is rank 0 alone)."""
    size = a.comm.size if a.split is not None else 1
    ranks = range(size) if ranks is None else ranks
    options = _display.options()
    out = []
    for r, values in zip(ranks, _chunks(a, ranks), strict=True):
        summarize = [False] * values.ndim
        if _repr.summarizes(values.size, options):
            idx = _repr.edge_indices(values.shape, True, options)
            summarize = [len(i) != n for i, n in zip(idx, values.shape, strict=True)]
            values = values[np.ix_(*idx)] if values.ndim else values
        body = _repr.format_values(values, summarize, 0, options) if values.size else "[]"
        block = f"{body}, device: {a.device}, split: {a.split}"
        if len(ranks) > 1:
            block = "\n".join(f"[{r}/{size - 1}] {line}" for line in block.split("\n"))
        out.append(block)
    return "\n".join(out)


def print0(*args, **kwargs) -> None:
    """Heat's ``print0``: print on rank 0 only, which in a driver program is ``print``; with
    local printing a DNDarray shows rank 0's chunk.

    >>> import dndask.heat as ht
    >>> ht.print0(ht.arange(3, split=0))
    DNDarray([0, 1, 2], dtype=ht.int32, device=cpu:0, split=0)
    """
    if _LOCAL[0]:
        args = tuple(local_text(a, [0]) if isinstance(a, _dndarray.DNDarray) else a for a in args)
    builtins.print(*args, **kwargs)
