"""The fast lane: ``pytest -m "not slow"`` runs the tests that stay inside the test process.

A test is ``slow`` when it starts another process: a terminal (tmux), pi (node), Chromium,
pitui itself as a child (``pitui -p``, the CLI through a subprocess), git for checkpoints, the
bash tool, or a server in another process; the torture suite (``tests/reliability``: corpora of
100k entries, kill and signal loops) and the random-tree properties count as slow too. The
marks are given here by folder and module (:data:`SLOW_PATHS`) and by hand
(``@pytest.mark.slow``) for the tests scattered elsewhere.

The lane keeps itself fast: an audit hook (:func:`sys.addaudithook`) sees every process this
interpreter starts (``subprocess.Popen`` and so ``subprocess.run`` and asyncio's subprocesses,
``os.fork``, ``os.posix_spawn``, ``os.system``, ``os.exec*``) and every run of the warmed
``pitui`` in ``support.print_mode`` (:data:`CHILD_EVENT`); a test not marked ``slow`` that
starts one fails, naming itself and what it started. The check runs in every run, so CI (which
runs everything) catches a missing mark too.

Hooks are re-exported by ``tests/conftest.py``.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

SLOW = "slow"

TESTS = Path(__file__).resolve().parents[1]

CHILD_EVENT = "pitui.tests.child_process"
"""The audit event ``support.print_mode`` raises for a run of pitui in a forked child."""

PROCESS_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.fork",
        "os.forkpty",
        "os.posix_spawn",
        "os.spawn",
        "os.system",
        "os.exec",
        CHILD_EVENT,
    }
)

SLOW_PATHS: dict[str, str] = {
    "e2e": "real terminals (tmux) running pitui as a child",
    "agent/test_pi_continues_sessions.py": "pi 1.6 (node) reads the sessions",
    "agent/test_print_mode.py": "pitui -p as a child process",
    "agent/test_tool_output_events.py": "commands run by the bash tool",
    "agent/test_workspace.py": "git, the bash tool and pi",
    "agent/tools/test_tool_bash.py": "the bash tool runs commands",
    "checkpoint/test_restore.py": "checkpoints are git commands",
    "checkpoint/test_store.py": "checkpoints are git commands",
    "export/test_export_chromium.py": "Chromium loads the export",
    "cli/test_checkpoint_cmds.py": "checkpoints are git commands",
    "cli/test_headless_imports.py": "pitui as a child process",
    "cli/test_native_routes_import_no_litellm.py": "pitui as a child process",
    "cli/test_print_mode_providers.py": "pitui -p as a child process, pi",
    "cli/test_session_cwd_and_lock.py": "pitui -p as a child process",
    "reliability": "the torture suite: 100k-entry corpora, kill -9 and signal loops",
    "session/test_exit.py": "a Python child exits with a session open",
    "session/test_properties.py": "thousands of random trees and files",
    "ui/test_providers_tui.py": "the bash tool in a tool loop",
    "ui/test_user_commands.py": "!commands run in the shell, pi reads them",
    "agent/test_user_command.py": "!commands run in the shell",
    "cli/test_session_ids.py": "pitui as a child process, checkpoints are git commands",
    "test_packaging.py": "pip builds and installs the package",
    "ui/test_file_mentions.py": "git lists the files, pi reads the message",
}
"""Folders and modules (relative to ``tests/``) whose tests all count as slow, with why."""


def _slow_by_path(path: Path) -> bool:
    try:
        relative = path.resolve().relative_to(TESTS)
    except ValueError:
        return False
    parts = relative.parts
    return any(tuple(Path(entry).parts) == parts[: len(Path(entry).parts)] for entry in SLOW_PATHS)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests of :data:`SLOW_PATHS` slow (others carry ``@pytest.mark.slow``)."""
    for item in items:
        if _slow_by_path(item.path):
            item.add_marker(pytest.mark.slow)


# ---------------------------------------------------- the guard: an unmarked test stays in-process


class _Guard:
    """The test running now and the processes it started while not marked slow."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.item: pytest.Item | None = None
        self.started: list[str] = []

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        if event not in PROCESS_EVENTS:
            return
        item = self.item
        if item is None or item.get_closest_marker(SLOW) is not None:
            return
        with self.lock:
            self.started.append(_describe(event, args))

    def take(self) -> list[str]:
        with self.lock:
            started, self.started = self.started, []
        return started


def _describe(event: str, args: tuple[Any, ...]) -> str:
    if event in ("os.fork", "os.forkpty"):
        return event
    what = args[0] if args else ""
    if isinstance(what, bytes):
        what = what.decode(errors="replace")
    if event == "subprocess.Popen" and len(args) > 1 and isinstance(args[1], list | tuple):
        what = " ".join(str(a) for a in args[1][:4])
    text = str(what)
    return f"{event}: {text[:120]}"


_guard = _Guard()
_hooked = False


def pytest_configure(config: pytest.Config) -> None:
    global _hooked
    if not _hooked:  # an audit hook cannot be removed: one for the life of the interpreter
        sys.addaudithook(_guard.audit)
        _hooked = True
    # pitui runs `git --version` once per PATH and remembers the answer: asked here, before
    # any test, so a test that opens a checkpoint store where checkpoints are off (a home
    # folder) starts no process whichever test its worker ran first.
    from pitui.checkpoint.git import find_git

    find_git()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    outer, _guard.item = _guard.item, item
    _guard.take()
    try:
        return (yield)
    finally:
        _guard.item = outer
        _guard.take()


def _check(item: pytest.Item) -> None:
    started = _guard.take()
    if started and item.get_closest_marker(SLOW) is None:
        shown = "\n  ".join(dict.fromkeys(started))
        pytest.fail(
            f"{item.nodeid} started {len(started)} process(es) but is not marked slow:\n  "
            f"{shown}\nMark it @pytest.mark.slow (or list its module in SLOW_PATHS in "
            "tests/support/slow_lane.py) so `pytest -m 'not slow'` stays in-process and fast.",
            pytrace=False,
        )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None]:
    result = yield
    _check(item)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None]:
    result = yield
    _check(item)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    result = yield
    _check(item)
    return result
