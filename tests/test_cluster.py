"""The embedded cluster and the Comm: loopback only, ranks in a stable order."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from urllib.parse import urlparse

import distributed
import pytest

import dndask as ht
from dndask import _comm, _launch, _mpi, _runtime


def test_embedded_cluster_listens_on_loopback_only(client):
    scheduler = urlparse(client.scheduler.address)
    assert scheduler.hostname == "127.0.0.1"
    for address in _comm.live_workers(client):
        assert urlparse(address).hostname == "127.0.0.1"
    assert urlparse(client.dashboard_link).hostname == "127.0.0.1"
    info = _comm.live_workers(client)
    assert all(w["nthreads"] == 1 for w in info.values())


def test_comm_orders_workers_by_name(client, comm):
    info = _comm.live_workers(client)
    names = [info[w]["name"] for w in comm.workers]
    assert names == sorted(names) and comm.size == len(info)
    assert ht.get_comm() is comm
    assert ht.current_client() is client


def test_comm_layout_helpers(comm_of):
    comm = comm_of(4)
    assert comm.rank == 0 and comm.size == 4 and comm.is_distributed()
    assert comm.chunk((7, 4, 3), 0, rank=3) == (
        6,
        (1, 4, 3),
        (slice(6, 7), slice(0, 4), slice(0, 3)),
    )
    assert comm.chunk((7, 4, 3), -3)[1] == (2, 4, 3)
    assert comm.chunk((7, 4), None)[1] == (7, 4)
    assert comm_of(3).counts_displs_shape((7, 3), 0) == ((3, 2, 2), (0, 3, 5), (9, 3))
    sub = comm.subcomm([2, 0])
    assert sub.workers == (comm.workers[2], comm.workers[0])
    assert sub == ht.Comm(list(sub.workers)) and hash(sub) == hash(ht.Comm(list(sub.workers)))
    assert "size=2" in repr(sub)
    with pytest.raises(ValueError, match=r"`ranks` must be in \[0, 3\], got 4"):
        comm.subcomm([4])
    with pytest.raises(TypeError, match="`ranks` must hold ints, got str"):
        comm.subcomm(["0"])
    with pytest.raises(TypeError, match="`rank` must be an int, got float"):
        comm.chunk((4,), 0, rank=1.0)
    with pytest.raises(ValueError, match=r"`split` must be in \[-1, 0\]"):
        comm.chunk((4,), 1)
    with pytest.raises(ValueError, match="`workers` must not repeat a worker"):
        ht.Comm([comm.workers[0]] * 2)
    with pytest.raises(ValueError, match="`workers` must name at least one worker"):
        ht.Comm([])
    with pytest.raises(TypeError, match="`workers` must be a sequence of worker address strings"):
        ht.Comm("tcp://127.0.0.1:1")


def test_use_comm_sets_the_default(comm, comm_of):
    try:
        ht.use_comm(comm_of(2))
        assert ht.zeros(4, split=0).comm.size == 2
    finally:
        ht.use_comm(None)
    assert ht.get_comm() == comm
    with pytest.raises(TypeError, match=r"`comm` must be a dndask\.Comm, got int"):
        ht.use_comm(3)


def test_init_argument_checks(client):
    with pytest.raises(ValueError, match="`address` and `scheduler_file` are mutually exclusive"):
        ht.init(address="tcp://127.0.0.1:1", scheduler_file="x.json")
    with pytest.raises(ValueError, match="`n_workers` must be a positive int, got 0"):
        ht.init(0)
    with pytest.raises(TypeError, match="`n_workers` must be an int, got float"):
        ht.init(2.0)
    with pytest.raises(
        ValueError,
        match="`n_workers`, `mpi`, `gpu`, `tls`, `interface` and cluster options only apply to a "
        "cluster dndask starts",
    ):
        ht.init(2, address="tcp://127.0.0.1:1")
    assert client.status == "running"  # a refused call leaves the cluster alone


def _run(code: str, env: dict | None = None, timeout: int = 240) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "DNDASK_PROGRESS": "off", **(env or {})}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
    )


def test_first_operation_starts_a_quiet_default_cluster():
    result = _run(
        """
        if __name__ == "__main__":
            import dndask as ht
            a = ht.arange(6, split=0)
            print(a.comm.size, a.numpy().tolist())
            ht.shutdown()
        """,
        env={"DNDASK_WORKERS": "2"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[0] == "2 [0, 1, 2, 3, 4, 5]"
    assert "INFO" not in result.stderr


def test_an_existing_client_is_reused():
    result = _run(
        """
        if __name__ == "__main__":
            import distributed
            import dndask as ht
            # threads and the in-process transport: no network at all
            cluster = distributed.LocalCluster(n_workers=2, processes=False, dashboard_address=None)
            client = distributed.Client(cluster)
            assert ht.current_client() is client
            print(ht.get_comm().size, int(ht.ones(4, split=0).sum()))
            ht.shutdown()
            assert client.status == "running"  # dndask closes only what it started
            client.close(); cluster.close()
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "2 4"


def test_init_against_a_scheduler_without_dndask_warns_and_goes_on(tmp_path):
    """``init`` installs the lost-worker plugin; a scheduler that cannot import dndask refuses it."""
    scheduler_file = tmp_path / "scheduler.json"
    scheduler = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; sys.modules['dndask'] = None  # this scheduler cannot import dndask\n"
            "from distributed.cli.dask_scheduler import main; main()",
            "--host=127.0.0.1",
            "--port=0",
            "--no-dashboard",
            f"--scheduler-file={scheduler_file}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not scheduler_file.exists():
            assert time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.1)
        result = _run(
            f"""
            import warnings
            import dndask as ht
            from dndask import _recovery
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                client = ht.init(scheduler_file={str(scheduler_file)!r})
                _recovery.ensure_keeper(client)  # not asked again
                print(client.status, _recovery.serving_live(client, ["tcp://127.0.0.1:1"]))
            for w in caught:
                print(w.category.__name__, w.filename, w.message)
            ht.shutdown()
            """
        )
    finally:
        scheduler.kill()
        scheduler.wait()
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "running [('tcp://127.0.0.1:1', True)]"  # as they are, no query
    assert len(lines) == 2, lines  # one warning, pointing at the line that called init
    assert lines[1].startswith("RuntimeWarning <string> dndask could not install its lost-worker")


def test_unguarded_script_gets_a_clear_error(tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text("import dndask as ht\nht.init(1)\n")
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=240,
        env={**os.environ, "DNDASK_PROGRESS": "off"},
    )  # fmt: skip
    assert result.returncode != 0
    assert "if __name__ == '__main__':" in result.stderr


def test_environment_variable_checks(monkeypatch):
    from dndask import _runtime

    monkeypatch.setenv("DNDASK_WORKERS", "many")
    with pytest.raises(ValueError, match="`DNDASK_WORKERS` must be a positive int, got 'many'"):
        _runtime._default_workers()
    monkeypatch.setenv("DNDASK_WORKERS", "0")
    with pytest.raises(ValueError, match="`DNDASK_WORKERS` must be a positive int, got 0"):
        _runtime._default_workers()


def test_progress_setting(monkeypatch):
    from dndask import _compute

    monkeypatch.setenv("DNDASK_PROGRESS", "loud")
    with pytest.raises(ValueError, match="`DNDASK_PROGRESS` must be 'auto', 'on' or 'off'"):
        _compute.wait([])


# (mode, in a kernel, ipywidgets importable, stderr a terminal) -> the bar
BAR_CHOICES = [
    ("off", True, True, True, "none"),
    ("off", False, False, True, "none"),
    ("auto", False, False, False, "none"),  # a batch job or a pipe
    ("auto", False, True, False, "none"),
    ("auto", False, False, True, "terminal-text"),
    ("auto", False, True, True, "terminal-text"),  # widgets need a kernel
    ("auto", True, False, False, "notebook-text"),
    ("auto", True, True, False, "widget"),
    ("on", False, False, False, "terminal-text"),
    ("on", True, False, True, "notebook-text"),
    ("on", True, True, False, "widget"),
]


@pytest.mark.parametrize(("mode", "kernel", "widgets", "terminal", "kind"), BAR_CHOICES)
def test_progress_bar_choice(mode, kernel, widgets, terminal, kind):
    from dndask import _progress

    assert _progress.bar_kind(mode, kernel=kernel, widgets=widgets, terminal=terminal) == kind


def test_progress_bar_goes_to_stderr_outside_a_kernel(comm_of, capsys, monkeypatch):
    from dndask import _progress

    assert not _progress.in_kernel()
    monkeypatch.setenv("DNDASK_PROGRESS", "on")
    a = ht.ones((8, 8), split=0, comm=comm_of(2))
    assert int(a.sum()) == 64
    out = capsys.readouterr()
    assert "100% Completed" in out.err and "100%" not in out.out
    assert isinstance(distributed.get_client(), distributed.Client)
    monkeypatch.setenv("DNDASK_PROGRESS", "auto")  # pytest's stderr is no terminal: no bar
    assert int(a.sum()) == 64
    out = capsys.readouterr()
    assert "Completed" not in out.err + out.out


def test_a_bar_that_cannot_show_never_raises(client, comm_of, monkeypatch):
    import importlib.util

    from dndask import _progress

    if importlib.util.find_spec("ipywidgets") is not None:
        pytest.skip("needs an environment without ipywidgets (the test extra has none)")
    monkeypatch.setattr(_progress, "_warned", False)
    futures = client.compute(ht.arange(6, split=0, comm=comm_of(3)).to_dask(), sync=False)
    with pytest.warns(RuntimeWarning, match="progress bar could not be shown.*ipywidgets"):
        _progress.wait_showing("widget", [futures])  # outside a kernel, without ipywidgets
    assert futures.done() and futures.result().tolist() == list(range(6))
    failing = client.submit(lambda: 1 / 0)
    _progress.wait_showing("terminal-text", [failing])  # a failed task: the caller raises
    assert failing.status == "error"


def test_public_surface_is_explicit_and_sorted():
    import dndask.random

    for module in (ht, dndask.random):
        assert module.__all__ == sorted(module.__all__)
        assert all(hasattr(module, name) for name in module.__all__)
    assert ht.bool is ht.bool_ and ht.float32 == "float32"


def test_tls_cluster_refuses_strangers():
    result = _run(
        """
        if __name__ == "__main__":
            import distributed
            import dndask as ht
            client = ht.init(2, tls=True)
            address = client.scheduler.address
            assert address.startswith("tls://127.0.0.1"), address
            print(int(ht.ones(6, split=0).sum()))
            import asyncio
            from distributed.comm import connect

            async def knock(security):
                # a bare connection on its own event loop, as a stranger process would make
                args = security.get_connection_args("client") if security else {}
                comm = await connect(address, timeout=10, **args)
                await comm.close()

            for label, security in (("none", None), ("foreign", distributed.Security.temporary())):
                try:
                    asyncio.run(knock(security))
                    print(label, "admitted")
                except (TypeError, OSError) as exc:
                    print(label, "refused", type(exc).__name__)
            ht.shutdown()
        """
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "6"
    assert lines[1].startswith("none refused")
    assert lines[2].startswith("foreign refused")


def test_gpu_and_flag_checks(client):
    if _mpi.count_gpus() == 0:
        with pytest.raises(ValueError, match="`gpu=True` needs a CUDA GPU, but none is visible"):
            ht.init(2, gpu=True)
    with pytest.raises(TypeError, match="`tls` must be a bool, got str"):
        ht.init(tls="yes")
    with pytest.raises(ValueError, match="only apply to a cluster dndask starts"):
        ht.init(address="tcp://127.0.0.1:1", tls=True)
    with pytest.raises(ValueError, match="only apply to a cluster dndask starts"):
        ht.init(address="tcp://127.0.0.1:1", interface="lo")
    with pytest.raises(ValueError, match="`interface` applies to a cluster started under MPI"):
        ht.init(2, interface="lo")
    assert client.status == "running"


def test_embedded_gpu_workers_see_their_gpu_and_never_spill():
    """``init(gpu=True)``'s plumbing without a GPU: each nanny gets its ``CUDA_VISIBLE_DEVICES``.

    Nothing here starts CUDA; with a real GPU, bench/gpu_check.py runs the same cluster.
    """
    client, cluster = _runtime._start_local(3, ["4", "7"], False, {})
    try:

        def seen(dask_worker):
            memory = dask_worker.memory_manager
            return (
                os.environ.get("CUDA_VISIBLE_DEVICES"),
                dask_worker.state.nthreads,
                memory.memory_spill_fraction,
                memory.memory_target_fraction,
            )

        workers = client.scheduler_info()["workers"]
        by_name = {info["name"]: address for address, info in workers.items()}
        found = client.run(seen)
        table = {name: found[address] for name, address in by_name.items()}
        assert table == {
            0: ("4", 1, False, False),
            1: ("7", 1, False, False),
            2: ("4", 1, False, False),
        }
    finally:
        client.close()
        cluster.close()


def test_gpu_workers_need_a_visible_gpu():
    assert _launch.share_gpus(4, ["0", "1"]) == ["0", "1", "0", "1"]
    with pytest.raises(ValueError, match="`gpu=True` needs a CUDA GPU, but none is visible"):
        _launch.share_gpus(2, [])
