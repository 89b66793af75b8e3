"""The house rule, enforced: no module (and no test) imports another module's private names."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def private_imports(folder: Path, root: Path = ROOT) -> list[str]:
    found = []
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith("pitui"):
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    where = path.relative_to(root)
                    found.append(f"{where}:{node.lineno} {node.module}.{alias.name}")
    return found


def test_no_private_name_crosses_a_module() -> None:
    assert private_imports(ROOT / "pitui") + private_imports(ROOT / "tests") == []


def test_the_check_sees_a_private_import(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("from pitui.text import _hidden\n", encoding="utf-8")
    assert private_imports(tmp_path, tmp_path) == ["m.py:1 pitui.text._hidden"]
