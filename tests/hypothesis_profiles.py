"""Hypothesis profiles of the property tests (``tests/test_properties.py``).

- ``ci`` (the default): deterministic. ``derandomize=True`` seeds the generator
  from each test's code and ``database=None`` keeps earlier runs' failures from
  adding examples, so every run tests the same examples; modest example counts.
- ``long``: ``DNDASK_HYPOTHESIS=long``. Random seeds, ten times the examples,
  and up to 6 ranks (on a 6-worker cluster of its own). Failures are saved in
  ``.hypothesis/`` and replayed first by the next long run.

Profiles are applied per test (``profiled(n)``), never loaded globally, so other
test files keep their own hypothesis settings.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

_ENV = "DNDASK_HYPOTHESIS"
_SLOW_IS_FINE = [HealthCheck.too_slow, HealthCheck.data_too_large]

settings.register_profile(
    "dndask-ci",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=_SLOW_IS_FINE,
)
settings.register_profile(
    "dndask-long",
    derandomize=False,
    database=DirectoryBasedExampleDatabase(".hypothesis/examples"),
    deadline=None,
    print_blob=True,
    suppress_health_check=_SLOW_IS_FINE,
)

PROFILE = os.environ.get(_ENV, "ci")
if PROFILE not in ("ci", "long"):
    raise ValueError(f"`{_ENV}` must be 'ci' or 'long', got {PROFILE!r}")
LONG = PROFILE == "long"
SCALE = 10 if LONG else 1
MAX_RANKS = 6 if LONG else 5  # the session cluster has 5 workers; 6 needs its own


def profiled(examples: int) -> settings:
    """The active profile with ``examples`` examples (times ten in the long profile)."""
    return settings(settings.get_profile(f"dndask-{PROFILE}"), max_examples=examples * SCALE)
