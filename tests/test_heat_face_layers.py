"""The Heat face's declarative layers: every name defined once, submodules as real modules."""

from __future__ import annotations

import ast
import importlib
import types
from pathlib import Path

import numpy as np
import pytest

import dndask.heat as ht
from dndask.heat import _base, _namespace

FACE = Path(ht.__file__).resolve().parent
# linalg.py (the core's linalg names, then Heat's over them) belongs to another change
NOT_CHECKED = frozenset({"linalg.py"})


def module_bindings(source: str) -> list[str]:
    """Every name a module's top level binds (def, class, import, assignment, loop target)."""
    names: list[str] = []

    def targets(node: ast.AST) -> None:
        if isinstance(node, ast.Name):
            names.append(node.id)
        elif isinstance(node, (ast.Tuple, ast.List)):
            for elt in node.elts:
                targets(elt)
        elif isinstance(node, ast.Starred):
            targets(node.value)

    def visit(body) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.append(stmt.name)
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                names.extend((a.asname or a.name).split(".")[0] for a in stmt.names)
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    targets(target)
            elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
                targets(stmt.target)
            elif isinstance(stmt, (ast.For, ast.AsyncFor)):
                targets(stmt.target)
                visit(stmt.body)
                visit(stmt.orelse)
            elif isinstance(stmt, ast.If) and not _type_checking(stmt.test):
                visit(stmt.body)
                visit(stmt.orelse)
            elif isinstance(stmt, (ast.With, ast.Try)):
                visit(stmt.body)

    visit(ast.parse(source).body)
    return names


def _type_checking(test: ast.expr) -> bool:
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"


def duplicates(source: str) -> list[str]:
    names = module_bindings(source)
    return sorted({n for n in names if names.count(n) > 1})


def face_files() -> list[Path]:
    return sorted(p for p in FACE.glob("*.py") if p.name not in NOT_CHECKED)


@pytest.mark.parametrize("path", face_files(), ids=lambda p: p.name)
def test_no_module_of_the_face_binds_a_name_twice(path):
    assert duplicates(path.read_text()) == []


def test_the_binding_check_sees_a_deliberate_duplicate():
    source = "from . import _x\nfull = 1\n\n\ndef full():\n    pass\n"
    assert duplicates(source) == ["full"]
    assert duplicates("a, (b, c) = 1, (2, 3)\nfor c in ():\n    pass\n") == ["c"]
    assert duplicates("import numpy as np\nnp = 2\nif True:\n    e = 1\nelse:\n    e = 2\n") == [
        "e",
        "np",
    ]
    assert duplicates("x = 1\ny = 2\n") == []


def test_assembly_refuses_a_name_two_layers_define():
    layers = [("dndask.heat.a", {"full": 1, "eq": 2}), ("dndask.heat.b", {"full": 3})]
    with pytest.raises(ValueError, match=r"`full` is defined twice .*dndask.heat.a.*dndask.heat.b"):
        _namespace.assemble({"full": 0}, layers)
    ns, owner = _namespace.assemble({"full": 0, "sum": 5}, layers[:1])
    assert ns == {"full": 1, "eq": 2, "sum": 5} and owner == {
        "full": "dndask.heat.a",
        "eq": "dndask.heat.a",
    }
    # the order of the layers does not matter
    disjoint = [("m", {"full": 1}), ("n", {"eq": 2, "sum": 3})]
    assert _namespace.assemble({"sum": 0}, disjoint) == _namespace.assemble(
        {"sum": 0}, disjoint[::-1]
    )


def test_the_face_is_its_base_updated_by_its_overrides():
    owner = ht._OWNER
    for name in ht.__all__:
        value = getattr(ht, name)
        if isinstance(value, types.ModuleType):
            continue
        if name in owner:
            module = ht._NAMESPACE[name]
            assert value is module, name
        elif name not in _base.LAZY:
            assert value is _base.BASE[name], name
    # the seven names the old script assigned twice: each is one override now
    for name in ("full", "eq", "ne", "sign", "split", "maximum", "minimum"):
        assert name in _base.BASE and owner[name] != "base", name
    assert owner["full"] == "dndask.heat.factories" and owner["eq"] == "dndask.heat.relational"
    assert owner["sign"] == "dndask.heat.rounding" and owner["split"] == "dndask.heat.manipulations"
    assert owner["maximum"] == owner["minimum"] == "dndask.heat.statistics"
    assert ht.__all__ == sorted(ht.__all__) and len(set(ht.__all__)) == len(ht.__all__)


def test_every_override_is_in_its_module_all():
    own_names = {"dndask.heat.linalg", "dndask.heat._eager", "dndask.heat.DNDarray"}
    for name, label in ht._OWNER.items():
        if label not in own_names:
            module = importlib.import_module(label)
            assert name in module.__all__, (name, label)
            assert getattr(module, name) is getattr(ht, name)


@pytest.mark.parametrize(
    "module",
    [
        "arithmetics",
        "complex_math",
        "exponential",
        "factories",
        "indexing",
        "logical",
        "manipulations",
        "printing",
        "relational",
        "rounding",
        "signal",
        "statistics",
        "stride_tricks",
        "trigonometrics",
    ],
)
def test_heat_submodules_are_real_modules(module):
    sub = getattr(ht, module)
    assert isinstance(sub, types.ModuleType) and sub is not ht
    assert sub.__name__ == f"dndask.heat.{module}"
    assert getattr(ht.core, module) is sub
    for name in sub.__all__:
        assert getattr(sub, name) is getattr(ht, name)
    assert sub.resplit is ht.resplit  # the face's other names resolve through the namespace
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        sub.no_such_name  # noqa: B018


def test_core_holds_heats_core_modules():
    assert ht.core is not ht and ht.core.types is ht.types and ht.core.linalg is ht.linalg
    assert ht.core.random is ht.random and ht.core.arange is ht.arange
    assert ht.exponential.exp is ht.exp and ht.trigonometrics.sin is ht.sin
    assert ht.complex_math.angle is ht.angle and ht.rounding.floor is ht.floor
    assert ht.constants.pi == np.pi and -np.inf == ht.NINF and np.isnan(ht.constants.NaN)
    from dndask.heat.core import factories
    from dndask.heat.manipulations import concatenate

    assert factories is ht.factories and concatenate is ht.concatenate
