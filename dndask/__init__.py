"""dndask: Heat's distributed arrays (split, lshape_map, redistribute_, resplit_) on Dask.

>>> import dndask as ht
>>> a = ht.zeros((7, 4, 3), split=0)
>>> a.split, a.shape
(0, (7, 4, 3))
"""

from . import random
from ._cluster import current_client, init, shutdown
from ._comm import Comm, get_comm, use_comm
from ._dndarray import Device, DNDarray, LshapeMap, cpu
from ._factories import (
    arange,
    array,
    balance,
    empty,
    empty_like,
    eye,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    redistribute,
    resplit,
    zeros,
    zeros_like,
)
from ._per_rank import PerRank, per_rank
from ._types import (
    bool_,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
)
from ._types import (
    bool_ as bool,  # Heat's name; shadows the builtin only inside this namespace
)

__version__ = "0.1.0"

__all__ = [
    "Comm",
    "DNDarray",
    "Device",
    "LshapeMap",
    "PerRank",
    "arange",
    "array",
    "balance",
    "bool",
    "bool_",
    "complex128",
    "complex64",
    "cpu",
    "current_client",
    "empty",
    "empty_like",
    "eye",
    "float16",
    "float32",
    "float64",
    "full",
    "full_like",
    "get_comm",
    "init",
    "int16",
    "int32",
    "int64",
    "int8",
    "linspace",
    "ones",
    "ones_like",
    "per_rank",
    "random",
    "redistribute",
    "resplit",
    "shutdown",
    "uint8",
    "use_comm",
    "zeros",
    "zeros_like",
]
