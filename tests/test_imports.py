"""dndask's layers are visible in its imports: no cycle, no import hidden inside a function.

The import graph is read from the source with ``ast`` (nothing is imported), over every
module of the package; an edge ``a -> b`` means module ``a`` imports module ``b``, at module
level or inside a function. ``from . import x`` is an edge to the submodule ``x`` when ``x``
is one, else to the package; a package's ``__init__`` is its own node. Importing
``dndask._indexing._keys`` from outside ``dndask._indexing`` first runs that package's
``__init__``, so it is an edge to the package too (the top package ``dndask`` aside: it
is always imported first, and it imports everything).
"""

from __future__ import annotations

import ast
import functools
import os
import subprocess
import sys
from pathlib import Path

from _estimators import ALGORITHM_PACKAGES

PACKAGE = Path(__file__).resolve().parent.parent / "dndask"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute name of ``from <node.module> import ...`` inside ``module``."""
    if node.level == 0:
        return node.module or ""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: str, path: Path, modules: dict) -> list[tuple[str, int, bool]]:
    """``(imported module, line, inside a function)`` for every dndask import of ``module``."""
    tree = ast.parse(path.read_text(), str(path))
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
            )
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name in modules:
                        found.append((alias.name, child.lineno, in_function))
            elif isinstance(child, ast.ImportFrom):
                base = _resolve(module, path, child)
                for alias in child.names:
                    target = f"{base}.{alias.name}"
                    target = target if target in modules else base
                    if target in modules:
                        found.append((target, child.lineno, in_function))
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                continue  # annotations only: never executed
            visit(child, nested)

    visit(tree, False)
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"


def _outer_packages(target: str, importer: str) -> list[str]:
    """The packages above ``target`` that importing it runs, seen from ``importer``."""
    parts = target.split(".")
    outer = [".".join(parts[:i]) for i in range(2, len(parts))]
    return [p for p in outer if not (importer == p or importer.startswith(p + "."))]


@functools.cache
def import_graph() -> tuple[dict[str, set[str]], list[str]]:
    """The intra-package graph, and ``path:line`` of every function-level dndask import."""
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    hidden = []
    for module, path in modules.items():
        for target, line, in_function in _imports(module, path, modules):
            for other in (target, *_outer_packages(target, module)):
                if other != module:
                    graph[module].add(other)
            if in_function:
                hidden.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}")
    return graph, hidden


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other (Tarjan), groups of one without a self-edge left out."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return groups


def _a_cycle(graph: dict[str, set[str]], group: list[str]) -> list[str]:
    """One concrete cycle inside ``group``, for the failure message."""
    members = set(group)
    path, seen = [group[0]], {group[0]}
    while True:
        nxt = sorted(w for w in graph[path[-1]] if w in members)
        back = [w for w in nxt if w in seen]
        if back:
            return [*path[path.index(back[0]) :], back[0]]
        step = next(w for w in nxt if w not in seen)
        path.append(step)
        seen.add(step)


def test_the_package_has_no_import_cycle():
    graph, _ = import_graph()
    assert len(graph) > 50  # the walk found the package
    groups = strongly_connected(graph)
    message = "; ".join(
        f"{len(g)} modules import each other, e.g. {' -> '.join(_a_cycle(graph, g))}"
        for g in groups
    )
    assert not groups, f"{len(groups)} import cycle(s): {message}"


def test_no_dndask_import_inside_a_function():
    _, hidden = import_graph()
    assert not hidden, "imports inside functions: " + "; ".join(hidden)


def test_the_checker_sees_cycles_and_hidden_imports(tmp_path):
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert strongly_connected(graph) == [["a", "b", "c"]]
    assert _a_cycle(graph, ["a", "b", "c"]) == ["a", "b", "c", "a"]
    source = "from . import x\n\ndef f():\n    from .y import z\n    import dndask\n"
    path = tmp_path / "m.py"
    path.write_text(source)
    found = _imports("dndask.m", path, {"dndask", "dndask.m", "dndask.x", "dndask.y"})
    assert found == [("dndask.x", 1, False), ("dndask.y", 4, True), ("dndask", 5, True)]
    assert _outer_packages("dndask._io._csv", "dndask._xarray") == ["dndask._io"]
    assert _outer_packages("dndask._io._csv", "dndask._io._hdf5") == []


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for w in graph[todo.pop()] - seen:
            seen.add(w)
            todo.append(w)
    return seen


PLANNERS = [
    "dndask._layout",
    "dndask._optable",
    "dndask._indexing._keys",
    "dndask._indexing._plan",
    "dndask._indexing._setplan",
    "dndask._manipulation._plan",
    "dndask._linalg._plan",
    "dndask._statistics._quantiles",
    "dndask._sorting._plan",
]


def test_planners_do_not_reach_the_array_or_the_cluster():
    graph, _ = import_graph()
    for planner in PLANNERS:
        below = _reachable(graph, planner)
        assert not below & {"dndask._dndarray", "dndask._runtime", "dndask._compute"}, planner


def test_the_array_core_imports_only_lower_layers():
    graph, _ = import_graph()
    below = _reachable(graph, "dndask._dndarray")
    above = {m for m in graph if "dndask._dndarray" in _reachable(graph, m)}
    assert not below & above
    assert {"dndask._ops", "dndask._elementwise", "dndask._methods", "dndask._protocols"} <= above
    assert below <= {
        "dndask._abc",
        "dndask._runtime",
        "dndask._compat",
        "dndask._comm",
        "dndask._compute",
        "dndask._display",
        "dndask._distribution",
        "dndask._env",  # settings from the environment: one parser
        "dndask._fuse",  # one task per rank for a compute (graph rewriting, pure)
        "dndask._graph",
        "dndask._handoff",  # the LayoutWarning and the table of DNDarrays xarray gave to Dask
        "dndask._hosts",  # which ranks share a host (and a /dev/shm)
        "dndask._launch",
        "dndask._layout",
        "dndask._mpi",
        "dndask._mpi_transport",  # the MPI transport's worker-side tasks and progress thread
        "dndask._output_cache",  # reusable memory for the collects' outputs (worker side)
        "dndask._placement",  # where a graph's keys run: one rule per key name (pure)
        "dndask._progress",
        "dndask._recovery",
        "dndask._repr",
        "dndask._shm_pool",  # the posts' reusable shared-memory segments (worker side)
        "dndask._torch",
        "dndask._transport",  # the shared-memory transport's worker-side tasks
        "dndask._types",
        "dndask._worker_logs",
        "dndask._xp",
    }


# ------------------------------------------------------------------ torch, lazily
# torch costs seconds and some 200 MiB per process: dndask imports it in one place only,
# the lazy loader ``dndask._torch.torch()``; every other module asks that one.
TORCH_LOADER = ("dndask/_torch.py", "torch")


def torch_imports(path: Path) -> list[tuple[int, str | None]]:
    """``(line, enclosing function or None)`` of every executed ``import torch`` in a file.

    ``import torch``, ``import torch.x`` and ``from torch... import`` count; those under
    ``if TYPE_CHECKING:`` (annotations only) do not.
    """
    tree = ast.parse(path.read_text(), str(path))
    found = []

    def is_torch(name: str | None) -> bool:
        return name is not None and (name == "torch" or name.startswith("torch."))

    def visit(node: ast.AST, function: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for other in child.orelse:
                    visit(ast.Module(body=[other], type_ignores=[]), function)
                continue
            names = []
            if isinstance(child, ast.Import):
                names = [alias.name for alias in child.names]
            elif isinstance(child, ast.ImportFrom) and child.level == 0:
                names = [child.module]
            if any(is_torch(name) for name in names):
                found.append((child.lineno, function))
            inner = function
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = child.name
            elif isinstance(child, ast.Lambda):
                inner = "<lambda>"
            visit(child, inner)

    visit(tree, None)
    return found


def test_torch_is_imported_only_by_the_lazy_loader():
    places = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).as_posix()
        places += [(rel, function, line) for line, function in torch_imports(path)]
    loader = [p for p in places if p[:2] == TORCH_LOADER]
    others = [f"{rel}:{line} (in {function or 'the module'})" for rel, function, line in places]
    others = [o for o, p in zip(others, places, strict=True) if p[:2] != TORCH_LOADER]
    assert not others, "torch imported outside dndask._torch.torch(): " + "; ".join(others)
    assert len(loader) == 1, loader  # the loader itself is found


def test_the_torch_checker_sees_every_kind_of_import(tmp_path):
    source = (
        "from typing import TYPE_CHECKING\n"
        "import torch\n"
        "if TYPE_CHECKING:\n"
        "    import torch.nn\n"
        "else:\n"
        "    from torch import nn\n"
        "def f():\n"
        "    import torch.linalg as tl\n"
        "class C:\n"
        "    def g(self):\n"
        "        from torch.nn import functional\n"
        "import torchvision\n"
        "from . import torch_like\n"
    )
    path = tmp_path / "m.py"
    path.write_text(source)
    assert torch_imports(path) == [(2, None), (6, None), (8, "f"), (11, "g")]


def _fresh_python(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DNDASK_PROGRESS": "off", "PYTHONPATH": str(PACKAGE.parent)}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=240, env=env
    )


def test_import_dndask_does_not_import_torch():
    code = (
        "import sys\n"
        "import dndask, dndask.heat, dndask.array_api, dndask.linalg, dndask.random\n"
        "print('torch' in sys.modules)\n"
        "dndask.LshapeMap\n"  # the torch-returning name loads it when asked for
        "print('torch' in sys.modules)\n"
    )
    result = _fresh_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "True"]


# ------------------------------------------------------------------ the algorithm layer
# Heat's machine-learning packages sit on top of dndask: they use its public API only
# (``import dndask as ht`` and public modules such as ``dndask.base``), never a private
# module or a private attribute, so that they could live outside the package. The packages are
# tests/_estimators.py's ALGORITHM_PACKAGES.
#
# The one private module the algorithm layer may import: the parameter protocol it shares with
# the core's estimators (the core cannot import the layer above it). It imports nothing of dndask,
# so the algorithm packages still need nothing but dndask's public API and this leaf.
SHARED_WITH_THE_CORE = ("dndask._estimator",)


def _package_of(module: str) -> str | None:
    return next((p for p in ALGORITHM_PACKAGES if module == p or module.startswith(p + ".")), None)


def _private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split(".")[1:])


def algorithm_layer_violations() -> list[str]:
    """``path:line`` of every import or attribute use outside dndask's public API."""
    modules = _modules()
    found = []
    for module, path in modules.items():
        own = _package_of(module)
        if own is None:
            continue
        rel = path.relative_to(PACKAGE.parent)
        for target, line, _ in _imports(module, path, modules):
            inside = target == own or target.startswith(own + ".")
            shared = target in SHARED_WITH_THE_CORE
            public = not _private(target) and _package_of(target)
            if not inside and target != "dndask" and not shared and not public:
                found.append(f"{rel}:{line} imports {target}")
        tree = ast.parse(path.read_text(), str(path))
        aliases = {
            a.asname or a.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for a in node.names
            if a.name == "dndask"
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and node.attr.startswith("_")
            ):
                found.append(f"{rel}:{node.lineno} uses {node.value.id}.{node.attr}")
    return found


def test_the_algorithm_packages_use_only_the_public_api():
    graph, _ = import_graph()
    for module in SHARED_WITH_THE_CORE:
        assert not graph[module], f"{module} imports {sorted(graph[module])}"
    assert {"dndask.cluster", "dndask.spatial", "dndask.preprocessing"} <= set(graph)
    violations = algorithm_layer_violations()
    assert not violations, "private dndask API in the algorithm layer: " + "; ".join(violations)
    # and the core does not depend on them: they are a layer above it
    for module, targets in graph.items():
        if _package_of(module) is None and not module.startswith("dndask.heat"):
            assert not {t for t in targets if _package_of(t)}, module


def test_the_algorithm_rule_sees_private_use(tmp_path, monkeypatch):
    pkg = tmp_path / "dndask"
    (pkg / "spatial").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "_xp.py").write_text("")
    (pkg / "spatial" / "__init__.py").write_text(
        "import dndask as ht\nfrom dndask import _xp\nfrom . import _kernels\nht._layout\nht.zeros\n"
    )
    (pkg / "spatial" / "_kernels.py").write_text("")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", pkg)
    assert algorithm_layer_violations() == [
        "dndask/spatial/__init__.py:2 imports dndask._xp",
        "dndask/spatial/__init__.py:4 uses ht._layout",
    ]
