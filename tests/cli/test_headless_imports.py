"""The headless commands never import Textual or litellm; the TUI imports neither the
provider layer nor what :mod:`pitui.ui.after_first_frame` defers before its first frame.

``pitui context``, ``tree``, ``sessions`` and ``compact --dry-run`` are what scripts and
benchmarks call: importing Textual costs a large part of a second and litellm 2.5-4 s and
~200 MB. Each command runs as a real process (``python -X importtime -m pitui ...``) and the
interpreter's own import log is checked, so a lazy import anywhere on the path is caught.
The TUI runs the same way in a pseudo-terminal: the log lines written before the screen
shows the session's latest prompt are what the first frame waited for.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.fixtures import copy_fixture
from support.pty_program import PtyProgram

from pitui.ui.after_first_frame import DEFERRED

HEAVY = frozenset({"textual", "litellm"})
PROVIDER_LAYER = frozenset({"litellm", "tiktoken", "httpx"})
"""Packages the TUI imports only after its first frame (the provider layer's background
import brings them in)."""
NOT_BEFORE_FIRST_FRAME = (
    *DEFERRED,
    "pitui.ui.screens.tree_browser",
    "pitui.ui.widgets.session_tree",
    "pitui.ui.widgets.inspectors",
    "pitui.export",
    # The subcommands: ``pitui [options]`` is parsed without them (pitui.cli).
    "pitui.cli.inspect_cmds",
    "pitui.cli.report_cmds",
    "pitui.cli.compact_cmd",
    "pitui.cli.trust_cmd",
    "pitui.cli.checkpoint_cmds",
    # What textual.widgets._markdown imports: Textual loads its widgets through importlib,
    # whose imports -X importtime does not log (the import statements inside them it does).
    "textual.highlight",
)
"""pitui's own modules the first frame does not need (a module or a package, by prefix)."""
LOGGED_AS = {"textual.widgets.markdown": "textual.highlight"}
"""A deferred module that may be imported through importlib (unlogged; ``from textual.widgets
import Markdown`` is) and the module its body imports with an import statement (logged)."""
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


# ------------------------------------------------------------------------ the TUI's first frame

LATEST = "Latest prompt zqfirstframe"


def _with_latest_prompt(session: Path) -> None:
    """Append a prompt (the marker) and a Markdown reply to the fixture's active branch."""
    lines = session.read_text().splitlines()
    parent = json.loads(lines[-1])["id"]
    ms = 1_800_000_000_000
    user = {"role": "user", "content": [{"type": "text", "text": LATEST}], "timestamp": ms}
    reply = {
        "role": "assistant",
        "content": [{"type": "text", "text": "Noted: **the marker** is `shown`.\n\n- one\n- two"}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": {"input": 900, "output": 3, "cacheRead": 0, "cacheWrite": 0},
        "stopReason": "stop",
        "timestamp": ms + 900,
    }
    stamp = "2027-01-15T08:00:00.000Z"
    entries = [
        {
            "type": "message",
            "id": "zq000001",
            "parentId": parent,
            "timestamp": stamp,
            "message": user,
        },
        {
            "type": "message",
            "id": "zq000002",
            "parentId": "zq000001",
            "timestamp": stamp,
            "message": reply,
        },
    ]
    with session.open("a") as f:
        for entry in entries:
            f.write(json.dumps(entry) + "\n")


# The self time is negative when two threads import at once (the app imports its deferred
# modules while the provider layer is imported in another thread): -X importtime keeps one
# running total for the process.
_LOGGED = re.compile(r"import time: +-?\d+ \| +-?\d+ \| *([\w.]+)")


def logged_modules(output: str) -> set[str]:
    """Module names in ``-X importtime`` lines anywhere in a terminal's output (once the app
    runs, a line may follow screen output without a line break)."""
    return set(_LOGGED.findall(output))


def run_tui_to_first_frame(session: Path, cwd: Path, after: tuple[str, ...]) -> tuple[str, str]:
    """Run ``pitui --session SESSION`` with ``-X importtime`` in a 120x40 pseudo-terminal
    (Textual and the import log both write to it). Returns the output up to the first screen
    that shows :data:`LATEST`, and the output after it until every module in ``after`` was
    logged (or 90 s passed)."""
    env = {
        **os.environ,
        "HOME": str(cwd / "home"),
        "XDG_CONFIG_HOME": str(cwd / "config"),
        "XDG_DATA_HOME": str(cwd / "data"),
        "XDG_STATE_HOME": str(cwd / "state"),
        "XDG_CACHE_HOME": str(cwd / "cache"),
        "TERM": "xterm-256color",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    for name in ("PITUI_SESSION_DIR", "TEXTUAL_DRIVER", "TEXTUAL"):
        env.pop(name, None)
    argv = [sys.executable, "-X", "importtime", "-m", "pitui", "--session", str(session)]
    argv += ["--cwd", str(cwd), "--model", "openai/test-model", "--session-dir", str(cwd / "s")]

    def done(text: str) -> bool:
        at = text.find(LATEST)
        return at >= 0 and set(after) <= logged_modules(text[at:])

    # One stream, split where the latest prompt first shows: split at a read's end instead, a
    # log line cut in two by it would be in neither part.
    with PtyProgram(argv, env, cwd) as tui:
        tui.read_until(done, 90)
        text = tui.text
    at = text.find(LATEST)
    assert at >= 0, f"the latest prompt never showed; the program printed: {text[-2000:]}"
    return text[: at + len(LATEST)], text[at:]


def test_the_tui_first_frame_imports_no_provider_layer_and_nothing_deferred(
    tmp_path: Path,
) -> None:
    session = copy_fixture(BRANCHES, tmp_path / "sessions")
    _with_latest_prompt(session)
    deferred = {LOGGED_AS.get(name, name) for name in DEFERRED}
    before, after = run_tui_to_first_frame(session, tmp_path, tuple(sorted(deferred)))
    modules = logged_modules(before)
    assert "pitui.ui.screens.main" in modules  # the import log was read, up to the frame
    assert "pitui.ui.widgets.chat" in modules
    heavy = sorted(m for m in modules if m.split(".")[0] in PROVIDER_LAYER)
    assert heavy == [], f"imported before the first frame: {heavy[:8]} ({len(heavy)} in all)"
    early = sorted(
        m
        for m in modules
        for name in NOT_BEFORE_FIRST_FRAME
        if m == name or m.startswith(name + ".")
    )
    assert early == [], f"imported before the first frame, though it does not need them: {early}"
    # After the frame, the deferred modules are imported (in a thread): the list is real.
    later = logged_modules(after)
    assert deferred <= later, f"not imported after the first frame: {deferred - later}"
