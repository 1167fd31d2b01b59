"""The simulated nodes themselves (tests/multinode/netns.py): separate hosts, full teardown."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

from multinode import netns


def test_nodes_are_separate_hosts(make_nodes):
    nodes = make_nodes(3)
    seen = [node.run(["hostname"]).stdout.strip() for node in nodes]
    assert seen == ["node0", "node1", "node2"]
    nodes[0].run(["sh", "-c", "echo x > /dev/shm/dndmn-probe"], check=True)
    shm = [node.run(["ls", "/dev/shm"]).stdout.split() for node in nodes]
    assert shm == [["dndmn-probe"], [], []]  # one /dev/shm per node
    code = (
        "import socket; s = socket.create_server(('198.18.0.3', 0)); print(s.getsockname()[1],"
        " flush=True); c, _ = s.accept(); c.sendall(socket.gethostname().encode())"
    )
    server = nodes[2].popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    port = server.stdout.readline().strip()
    client = nodes[0].run([sys.executable, "-c", (
        f"import socket; s = socket.create_connection(('node2', {port}), timeout=10); "
        "print(s.recv(100).decode())"
    )])  # fmt: skip
    assert client.stdout.strip() == "node2", client.stderr
    server.wait(timeout=30)
    # the host's network namespace has no link and no address of the nodes
    assert "198.18." not in subprocess.run(["ip", "-br", "addr"], capture_output=True,
                                           text=True).stdout  # fmt: skip


def test_teardown_leaves_nothing_even_after_an_error():
    made = {}

    def fail_on_nodes():
        with netns.Nodes(2) as nodes:
            made["nodes"], made["names"] = nodes, nodes.namespaces
            made["sleeper"] = nodes[1].popen(
                ["sh", "-c", "echo up; exec sleep 600"], stdout=subprocess.PIPE, text=True
            )
            # the sleeper runs inside the node before the error (else nsenter may find the
            # node already gone and exit 1 on its own)
            assert made["sleeper"].stdout.readline().strip() == "up"
            raise KeyError("a test failed")

    with pytest.raises(KeyError, match="a test failed"):
        fail_on_nodes()
    assert made["sleeper"].wait(timeout=10) < 0  # killed
    assert not set(made["names"]) & set(netns.our_namespaces())
    assert made["nodes"].leftovers() == []


def test_a_machine_without_ip_is_unavailable(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no ip, unshare or nsenter there
    with pytest.raises(netns.UnavailableError, match="no `ip` command on this machine"):
        netns.check_available()


def test_a_process_without_permission_is_unavailable():
    # a new user namespace drops the host's privileges: `ip netns add` is refused
    code = (
        "from multinode import netns\n"
        "try:\n    netns.check_available()\n"
        "except netns.UnavailableError as exc:\n    print(exc)\n"
    )
    tests = pathlib.Path(__file__).resolve().parents[1]
    result = subprocess.run(["unshare", "--user", sys.executable, "-c", code], cwd=tests,
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    if result.returncode != 0 and "unshare" in result.stderr:
        pytest.skip(f"no user namespaces here: {result.stderr.strip()}")
    assert "cannot create a network namespace (`ip netns add`: " in result.stdout, result
    assert "the multi-node tests need root or CAP_SYS_ADMIN" in result.stdout
