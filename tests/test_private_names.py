"""The house rule, enforced: no module (and no test or benchmark) imports another module's
private names, and no benchmark reaches into a pitui module's private names through the module
(``loader._decoder``).

Ruff's SLF001 checks attribute access inside ``pitui/``; what it cannot see is checked here:
``from x import _name`` anywhere, and ``module._name`` in ``benchmarks/``, which use pitui as an
outside program would. (Tests may patch a module's private seams, ``monkeypatch.setattr(module,
"_stage", crash)``, to inject faults.)
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _pitui_modules(tree: ast.AST) -> dict[str, str]:
    """Local names bound to pitui modules: ``import pitui.x as m``, ``from pitui.x import m``."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("pitui") and alias.asname:
                    bound[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pitui"):
            for alias in node.names:
                if _is_module(f"{node.module}.{alias.name}"):
                    bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bound


def private_imports(folder: Path, root: Path = ROOT, *, attributes: bool = False) -> list[str]:
    """``path:line module.name`` for each private name imported from a pitui module (and, with
    ``attributes``, each one read as ``module._name`` through an imported pitui module)."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        where = path.relative_to(root)
        modules = _pitui_modules(tree) if attributes else {}
        for node in sorted(ast.walk(tree), key=lambda n: getattr(n, "lineno", 0)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pitui"):
                found += [
                    f"{where}:{node.lineno} {node.module}.{alias.name}"
                    for alias in node.names
                    if _private(alias.name)
                ]
            elif (
                isinstance(node, ast.Attribute)
                and _private(node.attr)
                and isinstance(node.value, ast.Name)
                and node.value.id in modules
            ):
                found.append(f"{where}:{node.lineno} {modules[node.value.id]}.{node.attr}")
    return found


def test_no_private_name_crosses_a_module() -> None:
    assert (
        private_imports(ROOT / "pitui")
        + private_imports(ROOT / "tests")
        + private_imports(ROOT / "benchmarks", attributes=True)
    ) == []


def test_the_check_sees_a_private_import(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("from pitui.text import _hidden\n", encoding="utf-8")
    assert private_imports(tmp_path, tmp_path) == ["m.py:1 pitui.text._hidden"]


def test_the_check_sees_a_private_name_read_through_its_module(tmp_path: Path) -> None:
    (tmp_path / "bench.py").write_text(
        "from pitui.session import loader\n"
        "import pitui.text as text\n"
        "loader._node_decoder.decode(b'{}')\n"
        "text._js_value(1)\n"
        "loader.load_session_file\n",
        encoding="utf-8",
    )
    assert private_imports(tmp_path, tmp_path, attributes=True) == [
        "bench.py:3 pitui.session.loader._node_decoder",
        "bench.py:4 pitui.text._js_value",
    ]
