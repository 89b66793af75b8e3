"""The headless commands never import Textual or litellm.

``pitui context``, ``tree``, ``sessions`` and ``compact --dry-run`` are what scripts and
benchmarks call: importing Textual costs a large part of a second and litellm 2.5-4 s and
~200 MB. Each command runs as a real process (``python -X importtime -m pitui ...``) and the
interpreter's own import log is checked, so a lazy import anywhere on the path is caught.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.fixtures import copy_fixture

HEAVY = frozenset({"textual", "litellm"})
BRANCHES = "pi-v3-branches.jsonl"
CONTEXT_EDIT = "pi-v3-context-edit.jsonl"


def imported_modules(import_log: str) -> set[str]:
    """Module names from ``-X importtime`` lines (``import time: self | cumulative | name``)."""
    names = set()
    for line in import_log.splitlines():
        if line.startswith("import time:"):
            name = line.rsplit("|", 1)[-1].strip()
            if name != "imported package":  # the header line
                names.add(name)
    return names


def run_pitui(*argv: str, cwd: Path) -> tuple[str, set[str]]:
    env = {
        **os.environ,
        "HOME": str(cwd / "home"),
        "XDG_CONFIG_HOME": str(cwd / "config"),
        "XDG_DATA_HOME": str(cwd / "data"),
        "XDG_STATE_HOME": str(cwd / "state"),
        "XDG_CACHE_HOME": str(cwd / "cache"),
    }
    env.pop("PITUI_SESSION_DIR", None)
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "pitui", *argv],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    log = result.stderr
    errors = "\n".join(line for line in log.splitlines() if not line.startswith("import time:"))
    assert result.returncode == 0, f"pitui {' '.join(argv)} failed: {errors}"
    return result.stdout, imported_modules(log)


@pytest.mark.parametrize(
    ("argv", "expected_output"),
    [
        (("context", "{sessions}/" + BRANCHES), "leaf a2d5fcdf"),
        (("tree", "{sessions}/" + BRANCHES), "Let's design the tree widget."),
        (("--session-dir", "{sessions}", "sessions", "--all"), BRANCHES),
        (
            ("compact", "{sessions}/" + CONTEXT_EDIT, "--dry-run", "--keep-recent", "200"),
            "summarize 6 messages",
        ),
        (
            ("compact", "{sessions}/" + CONTEXT_EDIT, "--dry-run", "--estimator", "tiktoken"),
            "context ",
        ),
    ],
    ids=["context", "tree", "sessions", "compact-dry-run", "compact-dry-run-tiktoken"],
)
def test_headless_command_imports_no_textual_or_litellm(
    tmp_path: Path, argv: tuple[str, ...], expected_output: str
) -> None:
    sessions = tmp_path / "sessions"
    for name in (BRANCHES, CONTEXT_EDIT):
        copy_fixture(name, sessions)
    args = [a.format(sessions=sessions) for a in argv]
    out, modules = run_pitui(*args, cwd=tmp_path)
    assert expected_output in out  # the command did its work, not an early exit
    assert "pitui.cli" in modules  # the import log was read
    heavy = sorted(m for m in modules if m.split(".")[0] in HEAVY)
    assert heavy == [], f"pitui {' '.join(args)} imported {heavy[:5]} (and {len(heavy)} in all)"


def test_the_import_log_sees_a_lazy_heavy_import(tmp_path: Path) -> None:
    """The check above can fail: the same log does show Textual when something imports it."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "def f():\n import textual\nf()"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "textual" in imported_modules(result.stderr)
