"""Notebooks: displaying an array runs no graph, and the tour runs in a real Jupyter kernel.

The display tests go through IPython's own display formatter, the code a
kernel runs for a cell's last value, and count the tasks the workers ran.
The tour test executes ``examples/tour.ipynb`` with nbclient in a fresh
kernel that starts its own 3-worker cluster. The test environment has no
``ipywidgets`` (the case of issue 16); setting ``$DNDASK_TEST_WIDGETS_PATH``
to a folder holding ``ipywidgets`` (e.g. made with ``pip install --no-deps
--target DIR ipywidgets widgetsnbextension jupyterlab_widgets``) runs the
tour a second time with it on the kernel's path and checks a widget shows.
"""

from __future__ import annotations

import html
import os
import pathlib
import re

import nbclient
import nbformat
import numpy as np
import pytest
from IPython.core.interactiveshell import InteractiveShell

import dndask as ht
from dndask import _display

ROOT = pathlib.Path(__file__).resolve().parents[1]
TOUR = ROOT / "examples" / "tour.ipynb"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def tasks_run(client) -> int:
    """Tasks the workers have executed so far (each worker's own counter)."""
    return sum(client.run(lambda dask_worker: dask_worker.state.executed_count).values())


def notebook_display(obj) -> dict:
    """The mime bundle a Jupyter kernel sends for ``obj`` as a cell's result."""
    data, _ = InteractiveShell.instance().display_formatter.format(obj)
    return data


LAZY = [((7, 4, 3), 0, 3), ((7, 4, 3), 1, 5), ((2, 3), 0, 4), ((5,), None, 2)]


@pytest.mark.parametrize(("shape", "split", "n"), LAZY, ids=str)
def test_display_of_a_lazy_array_runs_no_task(client, comm_of, shape, split, n):
    comm = comm_of(n)
    a = ht.random.randn(*shape, split=split, comm=comm) * 2 + 1
    before = tasks_run(client)
    data = notebook_display(a)
    assert tasks_run(client) == before
    plain, page = data["text/plain"], data["text/html"]
    meta = f"dtype=ht.float32, device=cpu:0, split={split}"
    assert plain.startswith(f"DNDarray(shape={shape}, {meta})")
    assert f"lshape_map: {a.lshape_map.tolist()}" in plain
    assert "values: not computed" in plain and "values: not computed" in page
    for rank, lshape in enumerate(a.lshape_map.tolist()):
        assert f"<tr><td>{rank}</td><td>{tuple(lshape)}</td>" in page
        assert comm.workers[rank] in page
    assert "<svg" in page
    assert f'<a href="{client.dashboard_link}"' in page
    repr(a)  # the counter is live: repr computes
    assert tasks_run(client) > before


def test_display_of_a_persisted_array_shows_its_values(client, comm_of):
    comm = comm_of(3)
    g = np.arange(40 * 50, dtype=np.int64).reshape(40, 50)
    p = (ht.array(g, split=1, comm=comm) * 3).persist()
    assert _display.in_memory(p)
    data = notebook_display(p)
    text = str(p)
    assert data["text/plain"] == text
    assert f"<pre>{html.escape(text)}</pre>" in data["text/html"]
    assert str(g[0, 0] * 3) in text and str(g[-1, -1] * 3) in text
    lazy = p + 1
    assert not _display.in_memory(lazy)
    assert "not computed" in notebook_display(lazy)["text/plain"]


def test_display_of_an_empty_array_needs_no_compute(client, comm_of):
    a = ht.zeros((0, 3), split=1, comm=comm_of(4)) + 1
    before = tasks_run(client)
    data = notebook_display(a)
    assert tasks_run(client) == before
    assert data["text/plain"].startswith("DNDarray([], size=(0, 3), dtype=ht.float32")


def test_mimebundle_include_exclude(comm_of):
    a = ht.ones((4, 2), split=0, comm=comm_of(2))
    assert list(a._repr_mimebundle_(include=["text/html"])) == ["text/html"]
    assert list(a._repr_mimebundle_(exclude=["text/html"])) == ["text/plain"]


@pytest.mark.parametrize(("n", "empty"), [(1, False), (3, False), (4, True)])
def test_display_of_dndarray_backed_xarray_objects_runs_no_task(client, comm_of, n, empty):
    """xarray's repr and HTML view of ``xr.DataArray(a)`` show ``a``'s display, not its values."""
    xr = pytest.importorskip("xarray")
    comm = comm_of(n)
    a = ht.array(np.arange(28.0).reshape(7, 4), split=0, comm=comm) * 2 + 1  # a graph
    if empty:
        a = a.redistribute(target_map=np.array([[0, 4], [4, 4], [0, 4], [3, 4]]))
    x = xr.DataArray(a, dims=("time", "lat"), coords={"lat": np.arange(4.0)}, name="t")
    ds = xr.Dataset({"t": x, "m": x.mean("lat")})
    counts = list(a.lshape_map[:, 0].tolist())
    before = tasks_run(client)
    shown = notebook_display(x)
    shown_ds = notebook_display(ds)
    printed = [repr(x), str(x), repr(ds), str(ds)]
    assert tasks_run(client) == before
    assert f"lshape_map: {a.lshape_map.tolist()}" in shown["text/plain"]
    assert "values: not computed (.values or .compute() computes them" in shown["text/plain"]
    assert shown["text/plain"] == printed[0] == printed[1]
    assert f'<a href="{client.dashboard_link}"' in shown["text/html"]  # a's own HTML view
    assert f"DNDarray&lt;split=0, counts={counts}&gt;" in shown["text/html"]  # the preview line
    assert f"DNDarray<split=0, counts={counts}>" in shown_ds["text/plain"] == printed[2]
    assert "DNDarray&lt;split=0" in shown_ds["text/html"]
    # persisted: the values are in memory and shown, as for the DNDarray itself
    p = x.persist()
    assert _display.in_memory(p.data)
    assert "not computed" not in repr(p) and "55." in repr(p)  # the last value, 27 * 2 + 1
    # Heat's repr of the DNDarray itself still computes, outside xarray
    repr(a)
    assert tasks_run(client) > before


def test_comm_display_links_the_dashboard(client, comm_of):
    comm = comm_of(3)
    assert comm.dashboard_link == client.dashboard_link
    assert comm.dashboard_link.startswith("http://127.0.0.1:")
    page = notebook_display(comm)["text/html"]
    assert f'<a href="{client.dashboard_link}"' in page
    for rank, worker in enumerate(comm.workers):
        assert f"<td>{rank}</td><td>{worker}</td>" in page
    assert ht.Comm(comm.workers).dashboard_link is None  # no client of its own yet


# ------------------------------------------------------------------- the tour
def run_tour(monkeypatch, extra_path: str | None = None) -> nbformat.NotebookNode:
    """Execute the tour in a fresh kernel (3 workers, a progress bar for every compute)."""
    paths = [str(ROOT), *([extra_path] if extra_path else [])]
    if os.environ.get("PYTHONPATH"):
        paths.append(os.environ["PYTHONPATH"])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))
    monkeypatch.setenv("DNDASK_WORKERS", "3")
    monkeypatch.setenv("DNDASK_PROGRESS", "on")  # every persist, print and display waits with a bar
    nb = nbformat.read(TOUR, as_version=4)
    nbclient.NotebookClient(
        nb, timeout=240, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    ).execute()
    return nb


def cell(nb, first_line: str):
    """The code cell whose source starts with ``first_line``."""
    (found,) = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith(first_line)]
    return found


def streams(c) -> str:
    return "".join(o.text for o in c.outputs if o.output_type == "stream")


def result(c) -> dict:
    (out,) = [o for o in c.outputs if o.output_type == "execute_result"]
    return out.data


def check_tour(nb) -> None:
    everything = nbformat.writes(nb)
    assert "ModuleNotFoundError" not in everything and "Traceback" not in everything
    assert not [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    (dashboard,) = re.findall(r"dashboard: (http://127\.0\.0\.1:\d+/status)", streams(nb.cells[1]))

    comm_page = result(cell(nb, "a = ht.random.randn(7, 4, 3"))["text/html"]
    assert f'<a href="{dashboard}"' in comm_page and "<td>2</td><td>tcp://127.0.0.1:" in comm_page
    assert "Rank 0 holds a slice of DNDarray 'a' with local shape (3, 4, 3)" in streams(
        cell(nb, "size = a.comm.size")
    )
    shown = result(cell(nb, "ran = tasks_run()"))
    assert "lshape_map: [[3, 4, 3], [2, 4, 3], [2, 4, 3]]" in shown["text/plain"]
    assert "values: not computed" in shown["text/plain"]
    for rank, lshape in enumerate(["(3, 4, 3)", "(2, 4, 3)", "(2, 4, 3)"]):
        assert f"<tr><td>{rank}</td><td>{lshape}</td>" in shown["text/html"]
    assert "<svg" in shown["text/html"] and f'<a href="{dashboard}"' in shown["text/html"]
    assert "tasks run to display a: 0" in streams(cell(nb, 'print(f"tasks run to display a'))

    maps = {
        "a.lshape_map": "[[3, 4, 3],\n        [2, 4, 3],\n        [2, 4, 3]]",
        "target_map = a.lshape_map": "[[1, 4, 3],\n        [3, 4, 3],\n        [3, 4, 3]]",
        "a.resplit_(axis=1)": "[[7, 2, 3],\n        [7, 1, 3],\n        [7, 1, 3]]",
    }
    for source, table in maps.items():
        assert result(cell(nb, source))["text/plain"] == f"tensor({table})"
    assert "values: not computed" in result(cell(nb, "a.resplit_(axis=None)"))["text/plain"]
    printed = streams(cell(nb, "print(a)"))
    values = printed[printed.index("DNDarray([[[") :].strip()
    assert values.endswith("split=None)")
    persisted = result(cell(nb, "a = a.persist()"))
    assert persisted["text/plain"] == values  # read from memory: the same values print showed
    assert f"<pre>{html.escape(values)}</pre>" in persisted["text/html"]
    rest = streams(cell(nb, "a = ht.array(a, split=0)")) + streams(cell(nb, "local = ht.per_rank"))
    assert "split=0, lshape_map=[[3, 4, 3], [2, 4, 3], [2, 4, 3]]" in rest
    assert "into shape (9, 4)" in rest and "into shape (3, 12)" in rest
    exercise = streams(cell(nb, "A = ht.random.randn(10, 4"))
    assert "C (Redistribute A): Split=0, lshape=(1, 4)" in exercise
    assert "A, B and C hold the same values: True" in exercise


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_tour_notebook_without_ipywidgets(monkeypatch):
    nb = run_tour(monkeypatch)
    check_tour(nb)
    bar = cell(nb, "import os")
    assert "100% Completed" in streams(bar)  # the text bar, in the cell
    assert WIDGET_MIME not in nbformat.writes(nb)
    assert "sum of big @ big.T computed: True" in streams(bar)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_tour_notebook_with_ipywidgets(monkeypatch):
    widgets = os.environ.get("DNDASK_TEST_WIDGETS_PATH")
    if not widgets:
        pytest.skip("set DNDASK_TEST_WIDGETS_PATH to a folder holding ipywidgets to run this")
    nb = run_tour(monkeypatch, widgets)
    check_tour(nb)
    bar = cell(nb, "import os")
    assert any(o.output_type == "display_data" and WIDGET_MIME in o.data for o in bar.outputs)
    assert "100% Completed" not in nbformat.writes(nb)  # widgets replace the text bars
