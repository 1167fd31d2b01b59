"""Fixtures of the multi-node tests: simulated nodes, torn down after every test.

The tests skip, saying why, where this machine cannot make network namespaces
(no ``ip``/``unshare``/``nsenter``, or no permission: they need root).
"""

from __future__ import annotations

import os
import pathlib

import pytest

from multinode import netns


def _unavailable() -> str | None:
    try:
        netns.check_available()
    except netns.UnavailableError as exc:
        return f"cannot simulate nodes here: {exc}"
    return None


UNAVAILABLE = _unavailable()


def pytest_collection_modifyitems(config, items):
    """Skip every multi-node test, with the reason, where no nodes can be made."""
    if UNAVAILABLE is None:
        return
    here = pathlib.Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.skip(reason=UNAVAILABLE))


@pytest.fixture
def make_nodes():
    """``make_nodes(n)``: n fresh nodes, removed (and checked gone) when the test ends."""
    made = []

    def make(n: int) -> netns.Nodes:
        nodes = netns.Nodes(n).__enter__()
        made.append(nodes)
        return nodes

    yield make
    errors = []
    for nodes in made:
        try:
            nodes.close()
        except RuntimeError as exc:
            errors.append(str(exc))
    assert not errors, errors


@pytest.fixture(scope="session", autouse=True)
def _nothing_left_behind():
    """At the end of the run, no namespace of this process's nodes may be left."""
    yield
    if UNAVAILABLE is None:
        mine = f"{netns.PREFIX}{os.getpid()}x"
        left = [n for n in netns.our_namespaces() if n.startswith(mine)]
        assert not left, f"namespaces left behind: {left}"
