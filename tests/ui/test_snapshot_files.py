"""Every SVG in ``snapshots/`` belongs to a snapshot test, and every snapshot test has its SVG.

syrupy runs with ``--snapshot-warn-unused`` (pyproject): with its single-file extension it
otherwise reports the SVGs of *skipped* tests as unused and fails the whole run. This test
keeps the guard that flag gives up: a stale SVG (a renamed or deleted test) fails here.
A snapshot that differs from its SVG still fails its own test.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = ROOT / "snapshots"


def _snapshot_tests(module: Path) -> set[str]:
    """Names of the test functions in ``module`` that take the ``snap_compare`` fixture."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
        and any(arg.arg == "snap_compare" for arg in node.args.args)
    }


def _modules() -> dict[str, Path]:
    return {p.stem: p for p in (ROOT / "tests").rglob("test_*.py")}


def test_every_svg_belongs_to_a_snapshot_test() -> None:
    modules = _modules()
    svgs = sorted(SNAPSHOTS.rglob("*.svg"))
    assert svgs, f"no snapshots found under {SNAPSHOTS}"
    stale = []
    for svg in svgs:
        module = modules.get(svg.parent.name)
        test_name = svg.stem.split("[", 1)[0]
        if module is None or test_name not in _snapshot_tests(module):
            stale.append(str(svg.relative_to(ROOT)))
    assert not stale, f"snapshots without a test (delete them or restore the test): {stale}"


def test_every_snapshot_test_has_an_svg() -> None:
    missing = []
    for name, module in sorted(_modules().items()):
        for test_name in sorted(_snapshot_tests(module)):
            folder = SNAPSHOTS / name
            if not any(folder.glob(f"{test_name}.svg")) and not any(
                folder.glob(f"{test_name}[[]*].svg")
            ):
                missing.append(f"{name}::{test_name}")
    assert not missing, f"snapshot tests without an SVG (run --snapshot-update): {missing}"
