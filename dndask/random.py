"""Random arrays that do not depend on the number of ranks or the split.

>>> import dndask as ht
>>> ht.random.seed(0)
>>> a = ht.random.randn(6, 4, split=0).numpy()
>>> ht.random.seed(0)
>>> b = ht.random.randn(6, 4, split=1).numpy()
>>> bool((a == b).all())
True
"""

from ._random import (
    get_state,
    normal,
    permutation,
    rand,
    randint,
    randn,
    random,
    random_sample,
    randperm,
    seed,
    set_state,
    standard_normal,
)

__all__ = [
    "get_state",
    "normal",
    "permutation",
    "rand",
    "randint",
    "randn",
    "random",
    "random_sample",
    "randperm",
    "seed",
    "set_state",
    "standard_normal",
]
