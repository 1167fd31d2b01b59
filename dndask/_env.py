"""Settings read from the environment: one parser and one error message for them all.

>>> import os
>>> os.environ["DNDASK_DOCTEST_SETTING"] = "12"
>>> nonnegative_int("DNDASK_DOCTEST_SETTING", 5), nonnegative_int("DNDASK_UNSET_SETTING", 5)
(12, 5)
>>> os.environ["DNDASK_DOCTEST_SETTING"] = "-3"
>>> nonnegative_int("DNDASK_DOCTEST_SETTING", 5)
Traceback (most recent call last):
ValueError: `DNDASK_DOCTEST_SETTING` must be a non-negative int, got '-3'
>>> del os.environ["DNDASK_DOCTEST_SETTING"]
"""

from __future__ import annotations

import os

__all__ = ["nonnegative_int"]


def nonnegative_int(name: str, default: int) -> int:
    """The environment variable ``name`` as an int >= 0 (``default`` when unset)."""
    raw = os.environ.get(name, str(default))
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"`{name}` must be a non-negative int, got {raw!r}")
    return value
