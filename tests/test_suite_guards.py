"""The suite's own guards can fail: one key with two different tasks is caught."""

from __future__ import annotations

import time

from conftest import _run_spec_watch
from dask.delayed import Delayed


def _plus_one(x):
    return x + 1


def test_run_spec_guard_sees_one_key_with_two_tasks(client):
    key = "guard-same-key"
    first = client.compute(Delayed(key, {key: (_plus_one, "guard-a"), "guard-a": 1}))
    first.result()  # held, so the next graph's task for the same key meets it
    second = client.compute(Delayed(key, {key: (_plus_one, "guard-b"), "guard-b": 2}))
    deadline = time.monotonic() + 10
    while not _run_spec_watch.seen and time.monotonic() < deadline:
        time.sleep(0.05)
    seen = list(_run_spec_watch.seen)
    _run_spec_watch.seen.clear()  # caught on purpose: do not fail this test for it
    del first, second
    assert seen and "guard-same-key" in seen[0]
