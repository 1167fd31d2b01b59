"""dndask._hosts: workers report their host; ranks are grouped by what they report."""

from __future__ import annotations

import os
import socket

from dndask import _hosts


def test_host_identity_names_this_kernel_and_its_dev_shm():
    name, boot, dev = _hosts.host_identity().split("/")
    assert name == socket.gethostname()
    with open("/proc/sys/kernel/random/boot_id") as f:
        assert boot == f.read().strip()
    assert dev == str(os.stat("/dev/shm").st_dev)


def test_the_loopback_cluster_is_one_host(client, comm_of):
    comm = comm_of(5)
    ids = _hosts.identities(client, comm.workers)
    assert set(ids.values()) == {_hosts.host_identity()}  # the workers run beside the driver
    assert _hosts.host_groups(client, comm.workers) == [[0, 1, 2, 3, 4]]
    assert _hosts.one_host(client, comm.workers)
    assert _hosts.host_groups(client, ()) == []
