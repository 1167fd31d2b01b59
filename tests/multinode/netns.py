"""Simulated nodes: Linux network, UTS, IPC and mount namespaces joined by a bridge.

:class:`Nodes` makes ``n`` nodes for one test and removes them again:

- a "switch" network namespace holding a bridge, so no interface of the host is touched;
- per node a network namespace with ``eth0`` (one end of a veth pair, the other end on the
  bridge) at ``198.18.0.<i + 1>/24`` (the benchmarking range, RFC 2544) and ``lo``;
- per node one holder process in new UTS, IPC and mount namespaces: its own hostname
  (``node<i>``), its own System V IPC, a private ``/dev/shm`` (tmpfs) and an ``/etc/hosts``
  that names every node. Every process started on a node enters the holder's namespaces
  (``nsenter``), so the processes of one node share a host and those of two nodes do not.

Nothing is created in the host's network namespace. Teardown kills every process in the
nodes' namespaces (``ip netns pids``: only processes this harness started live there), deletes
the namespaces (which deletes their links) and checks that nothing is left; it runs on a failure,
a timeout (pytest-timeout's signal) and at interpreter exit. Namespaces left by an earlier run
that was killed outright (its pid gone) are removed when the next :class:`Nodes` starts.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pathlib
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence

PREFIX = "dndmn"  # every namespace name of this harness: dndmn<pid>x<serial>-<role>
SUBNET = "198.18.0"
NODE_IFACE = "eth0"
_NAME = re.compile(rf"^{PREFIX}(\d+)x(\d+)-(\w+)$")
_serial = 0
_live: list[Nodes] = []


class UnavailableError(Exception):
    """This machine cannot simulate nodes (no ``ip``, ``unshare``, ``nsenter`` or no permission)."""


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and result.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {result.stderr.strip()}")
    return result


def our_namespaces() -> list[str]:
    """Network namespaces of this harness that exist now (any process's)."""
    result = _ip("netns", "list", check=False)
    names = [line.split()[0] for line in result.stdout.splitlines() if line.strip()]
    return [n for n in names if _NAME.match(n)]


def namespace_pids(netns: str) -> list[int]:
    result = _ip("netns", "pids", netns, check=False)
    return [int(p) for p in result.stdout.split()]


def _remove_stale() -> None:
    """Namespaces of a run whose process is gone (killed outright): their processes and them."""
    for name in our_namespaces():
        owner = int(_NAME.match(name).group(1))
        if owner != os.getpid() and not pathlib.Path(f"/proc/{owner}").exists():
            _kill(namespace_pids(name))
            _ip("netns", "del", name, check=False)


def _kill(pids: Sequence[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def check_available() -> None:
    """Raise :class:`UnavailableError` with the reason this machine cannot make nodes."""
    for tool in ("ip", "unshare", "nsenter"):
        if shutil.which(tool) is None:
            raise UnavailableError(f"no `{tool}` command on this machine (iproute2 / util-linux)")
    probe = f"{PREFIX}{os.getpid()}x0-probe"
    result = _ip("netns", "add", probe, check=False)
    if result.returncode != 0:
        raise UnavailableError(
            f"cannot create a network namespace (`ip netns add`: {result.stderr.strip()}); "
            "the multi-node tests need root or CAP_SYS_ADMIN"
        )
    _ip("netns", "del", probe, check=False)


class Node:
    """One simulated host: its network namespace and the holder of its other namespaces."""

    def __init__(self, nodes: Nodes, index: int):
        self.index = index
        self.hostname = f"node{index}"
        self.address = f"{SUBNET}.{index + 1}"
        self.netns = f"{nodes.tag}-n{index}"
        self.holder: subprocess.Popen | None = None

    def __repr__(self) -> str:
        return f"Node({self.hostname}, {self.address})"

    def command(self, args: Sequence[str]) -> list[str]:
        """``args`` run inside this node (its network, UTS, IPC and mount namespaces)."""
        pid = str(self.holder.pid)
        return ["nsenter", "-t", pid, "-n", "-u", "-i", "-m", "--", *args]

    def popen(self, args: Sequence[str], **kwargs) -> subprocess.Popen:
        return subprocess.Popen(self.command(args), **kwargs)

    def run(self, args: Sequence[str], timeout: float = 60, **kwargs):
        kwargs.setdefault("capture_output", True)
        kwargs.setdefault("text", True)
        return subprocess.run(self.command(args), timeout=timeout, **kwargs)

    def pids(self) -> list[int]:
        """Every process on this node but its namespace holder."""
        return [p for p in namespace_pids(self.netns) if p != self.holder.pid]

    def kill_all(self) -> list[int]:
        """SIGKILL every process of this node (the node is lost); returns their pids."""
        pids = self.pids()
        _kill(pids)
        return pids

    def listening(self) -> list[tuple[str, str]]:
        """(local address, process) of every TCP socket listening in this node."""
        result = _ip("netns", "exec", self.netns, "ss", "-Hltnp", check=False)
        return _parse_ss(result.stdout)


def _parse_ss(text: str) -> list[tuple[str, str]]:
    rows = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 4:
            rows.append((fields[3], " ".join(fields[5:])))
    return rows


def host_listening() -> list[tuple[str, str]]:
    """The host's (root network namespace's) listening TCP sockets."""
    result = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True, timeout=30)
    return _parse_ss(result.stdout)


class Nodes:
    """``n`` simulated nodes on one bridge; a context manager that always tears them down.

    >>> with Nodes(2) as nodes:                                       # doctest: +SKIP
    ...     nodes[1].run(["hostname"]).stdout
    'node1\\n'
    """

    def __init__(self, n: int):
        global _serial
        if not 1 <= n <= 200:
            raise ValueError(f"`n` must be in [1, 200], got {n}")
        _serial += 1
        self.tag = f"{PREFIX}{os.getpid()}x{_serial}"
        self.switch = f"{self.tag}-sw"
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix=f"{self.tag}-"))
        self.nodes = [Node(self, i) for i in range(n)]
        self._made: list[str] = []

    def __len__(self) -> int:
        return len(self.nodes)

    def __getitem__(self, i: int) -> Node:
        return self.nodes[i]

    def __iter__(self):
        return iter(self.nodes)

    @property
    def namespaces(self) -> list[str]:
        return [self.switch, *(node.netns for node in self.nodes)]

    def __enter__(self) -> Nodes:
        _remove_stale()
        _live.append(self)
        try:
            self._create()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _add_netns(self, name: str) -> None:
        _ip("netns", "add", name)
        self._made.append(name)

    def _create(self) -> None:
        hosts = self.dir / "hosts"
        lines = ["127.0.0.1 localhost"]
        lines += [f"{node.address} {node.hostname}" for node in self.nodes]
        hosts.write_text("\n".join(lines) + "\n")
        self._add_netns(self.switch)
        _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.switch, "link", "set", "br0", "up")
        for node in self.nodes:
            self._add_netns(node.netns)
            port = f"p{node.index}"
            # both ends are made in the switch namespace and one is moved to the node's:
            # no link ever exists in the host's namespace
            _ip("-n", self.switch, "link", "add", port, "type", "veth", "peer", "name",
                NODE_IFACE, "netns", node.netns)  # fmt: skip
            _ip("-n", self.switch, "link", "set", port, "master", "br0", "up")
            _ip("-n", node.netns, "addr", "add", f"{node.address}/24", "dev", NODE_IFACE)
            _ip("-n", node.netns, "link", "set", NODE_IFACE, "up")
            _ip("-n", node.netns, "link", "set", "lo", "up")
            setup = (
                f"hostname {node.hostname} && mount -t tmpfs -o size=256m tmpfs /dev/shm && "
                f"mount --bind {hosts} /etc/hosts && echo ready && exec sleep 100000"
            )
            node.holder = subprocess.Popen(
                ["ip", "netns", "exec", node.netns, "unshare", "--uts", "--ipc", "--mount",
                 "--propagation", "private", "sh", "-c", setup],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
            if node.holder.stdout.readline().strip() != "ready":
                node.holder.wait(timeout=10)
                raise RuntimeError(f"{node.hostname} failed to start: {node.holder.stderr.read()}")

    def launcher(self) -> pathlib.Path:
        """An ``ssh`` stand-in for MPICH's Hydra (``-launcher ssh -launcher-exec <it>``).

        Hydra calls it as ``<it> -x <host> <command words>``, as it would call ``ssh``; it runs
        the command, through a shell as ssh does, inside the node named ``<host>``.
        """
        script = self.dir / "enter-node"
        cases = "\n".join(f"  {node.hostname}) pid={node.holder.pid} ;;" for node in self.nodes)
        script.write_text(
            "#!/bin/sh\n"
            '[ "$1" = "-x" ] && shift\n'
            "host=$1; shift\n"
            "case $host in\n"
            f"{cases}\n"
            '  *) echo "enter-node: no node named $host" >&2; exit 255 ;;\n'
            "esac\n"
            'exec nsenter -t "$pid" -n -u -i -m -- sh -c "$*"\n'
        )
        script.chmod(0o755)
        return script

    def mpirun(self, mpirun: str, per_node: Sequence[int], args: Sequence[str]) -> list[str]:
        """The ``mpirun`` command (to run on node 0) that puts ``per_node[i]`` ranks on node i.

        Ranks fill the nodes in order: ranks 0 and 1 (scheduler and client) land on node 0.
        """
        hosts = ",".join(
            f"{node.hostname}:{k}" for node, k in zip(self.nodes, per_node, strict=True)
        )
        return [
            mpirun, "-launcher", "ssh", "-launcher-exec", str(self.launcher()),
            "-hosts", hosts, "-np", str(sum(per_node)), *args,
        ]  # fmt: skip

    def close(self) -> None:
        """Kill every process on the nodes, delete the namespaces, check nothing is left."""
        if self in _live:
            _live.remove(self)
        for name in self._made:
            _kill(namespace_pids(name))
        for node in self.nodes:
            if node.holder is not None:
                _kill([node.holder.pid])
                with contextlib.suppress(subprocess.TimeoutExpired):
                    node.holder.wait(timeout=10)
                for stream in (node.holder.stdout, node.holder.stderr):
                    stream.close()
        deadline = time.monotonic() + 10
        for name in self._made:  # a killed process leaves its namespace a moment later
            while namespace_pids(name) and time.monotonic() < deadline:
                time.sleep(0.1)
            _ip("netns", "del", name, check=False)
        shutil.rmtree(self.dir, ignore_errors=True)
        left = self.leftovers()
        self._made = []
        if left:
            raise RuntimeError(f"the nodes left something behind: {left}")

    def leftovers(self) -> list[str]:
        """What of these nodes still exists: namespaces or processes in them."""
        existing = set(our_namespaces())
        left = [f"namespace {n}" for n in self._made if n in existing]
        for name in self._made:
            left += [f"process {p} in {name}" for p in namespace_pids(name)]
        return left


@atexit.register
def _close_all() -> None:
    for nodes in list(_live):
        with contextlib.suppress(Exception):
            nodes.close()
