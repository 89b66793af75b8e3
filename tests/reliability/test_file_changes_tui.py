"""The TUI with a session file that changes underneath: what another writer appends shows up;
a replaced, truncated or deleted file gives one sentence and the offer to reopen it or save a
copy; nothing hangs; a crash exits non-zero."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support.screens import messages_shown, screen_up

from pitui.config.settings import Settings
from pitui.session import SessionStore
from pitui.ui.app import PituiApp
from pitui.ui.screens.file_changed import FileChangedScreen
from pitui.ui.screens.tree_browser import TreeBrowserScreen

HEADER = {
    "type": "session",
    "version": 3,
    "id": "0190a6f2-0000-7000-8000-0000000000ee",
    "timestamp": "2026-01-01T00:00:00.000Z",
    "cwd": "/proj",
}


def jline(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def entry(entry_id: str, parent: str | None, text: str | None = None) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": text or f"text of {entry_id}", "timestamp": 1},
    }


def conversation(path: Path, count: int = 30) -> None:
    parts = [jline(HEADER)]
    parent = None
    for i in range(count):
        parts.append(jline(entry(f"e{i}", parent)))
        parent = f"e{i}"
    path.write_bytes(b"".join(parts))


def make_app(path: Path) -> PituiApp:
    store = SessionStore.open(path)
    return PituiApp(
        store, settings=Settings.from_dict({"ui": {"cursorBlink": False}}), cwd=path.parent
    )


async def wait_for_screen(pilot: Any, kind: type, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not screen_up(pilot.app, kind):  # shown: a key before that answers no dialog
        assert time.monotonic() < deadline, f"{kind.__name__} never shown: {pilot.app.screen}"
        await pilot.pause(0.05)


def notices(app: PituiApp) -> list[str]:
    return messages_shown(app)


async def test_lines_pi_appends_show_up_in_the_tree(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    conversation(path, 3)
    app = make_app(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        with open(path, "ab") as f:
            f.write(jline(entry("from-pi", "e2", "written by pi meanwhile")))
        deadline = time.monotonic() + 5
        while "from-pi" not in app.store:
            assert time.monotonic() < deadline, "the appended entry never showed up"
            await pilot.pause(0.1)
        await pilot.press("ctrl+t")
        await wait_for_screen(pilot, TreeBrowserScreen)
        assert [n.id for n in app.store.children("e2")] == ["from-pi"]
        assert not app.store.read_only


@pytest.mark.timeout(60)
async def test_a_replaced_file_is_said_once_and_can_be_reopened(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    conversation(path)
    app = make_app(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        incoming = tmp_path / "incoming"
        incoming.write_bytes(jline(HEADER) + jline(entry("new", None, "the new version")))
        os.replace(incoming, path)
        await wait_for_screen(pilot, FileChangedScreen)
        sentence = app.store.read_only_reason
        assert sentence is not None and sentence.startswith(f"The session file {path} was ")
        assert str(app.screen.query_one("#file-changed-message").render()) == sentence
        await pilot.press("r")
        await pilot.pause()
        assert [n.id for n in app.store.nodes()] == ["new"]
        assert not app.store.read_only


@pytest.mark.timeout(60)
async def test_a_truncated_file_never_hangs_the_tree_and_a_copy_can_be_saved(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    conversation(path)
    app = make_app(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        with open(path, "r+b") as f:
            f.truncate(len(jline(HEADER)) + 5)
        started = time.monotonic()
        await pilot.press("ctrl+t")
        await wait_for_screen(pilot, FileChangedScreen)
        assert time.monotonic() - started < 10
        await pilot.press("s")
        await pilot.pause()
        copies = sorted(tmp_path.glob("s.copy-*.jsonl"))
        assert len(copies) == 1
        lines = copies[0].read_bytes().splitlines()
        assert json.loads(lines[0])["type"] == "session"
        assert any(m.startswith(f"Saved a copy to {copies[0]}") for m in notices(app))
    assert path.stat().st_size == len(jline(HEADER)) + 5  # nothing was written to it


def tool_run(path: Path, runs: int = 60) -> None:
    """A session of runs: prompt, a tool call, its result, a reply (the tree reads the
    assistant messages' lines to hide text-less ones)."""
    parts = [jline(HEADER)]
    parent = None
    for i in range(runs):
        for kind in ("u", "a", "r", "d"):
            entry_id = f"{kind}{i}"
            if kind == "u":
                message: dict[str, Any] = {"role": "user", "content": f"q{i} " + "x" * 500}
            elif kind == "a":
                call = {"type": "toolCall", "id": f"c{i}", "name": "bash", "arguments": {}}
                message = {"role": "assistant", "content": [call], "stopReason": "toolUse"}
            elif kind == "r":
                message = {
                    "role": "toolResult",
                    "toolCallId": f"c{i}",
                    "toolName": "bash",
                    "content": [{"type": "text", "text": "out " * 300}],
                    "isError": False,
                }
            else:
                text = [{"type": "text", "text": f"done {i}"}]
                message = {"role": "assistant", "content": text, "stopReason": "stop"}
            message["timestamp"] = 1
            parts.append(
                jline(
                    {
                        "type": "message",
                        "id": entry_id,
                        "parentId": parent,
                        "timestamp": "2026-01-01T00:00:01.000Z",
                        "message": message,
                    }
                )
            )
            parent = entry_id
    path.write_bytes(b"".join(parts))


@pytest.mark.timeout(180)
@pytest.mark.parametrize("cut", [0.3, 0.5, 0.9])
async def test_a_file_cut_short_then_the_tree_opened_is_one_sentence_not_a_crash(
    tmp_path: Path, cut: float
) -> None:
    """Another program cuts the open session file in the middle of its entries; the user
    opens the tree: one sentence and the reopen/save-copy offer (it used to take the app down
    with a crash dump: the tree read the lines that were gone). The tree stays usable."""
    path = tmp_path / "s.jsonl"
    tool_run(path)
    app = make_app(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        with open(path, "r+b") as f:
            f.truncate(int(path.stat().st_size * cut))
        await pilot.press("ctrl+t")
        await wait_for_screen(pilot, FileChangedScreen, 60)
        sentence = app.store.read_only_reason
        assert sentence is not None and " was cut short by another program" in sentence
        assert str(app.screen.query_one("#file-changed-message").render()) == sentence
        await pilot.press("escape")  # keep viewing, read-only
        await pilot.pause(0.2)
        if not isinstance(app.screen, TreeBrowserScreen):
            # The app's look at the file (once a second) came before the key: open it now.
            await pilot.press("ctrl+t")
        await wait_for_screen(pilot, TreeBrowserScreen, 60)
        await pilot.press("home", "down", "down", "end", "up")
        await pilot.pause(0.2)
        assert isinstance(app.screen, TreeBrowserScreen)
        await pilot.press("escape")
        await pilot.pause(0.2)
        await pilot.press("ctrl+t")
        await wait_for_screen(pilot, TreeBrowserScreen, 60)
    assert app.return_code in (None, 0)


@pytest.mark.timeout(60)
async def test_a_deleted_file_can_be_saved_back(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    conversation(path, 5)
    original = path.read_bytes()
    app = make_app(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        path.unlink()
        await wait_for_screen(pilot, FileChangedScreen)
        await pilot.press("s")
        await pilot.pause()
        assert path.read_bytes() == original
        assert any(m.startswith(f"Saved a copy to {path}") for m in notices(app))


def test_a_tui_crash_exits_non_zero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from textual.app import App

    from pitui.cli.tui import run_tui
    from pitui.ui.screens.main import MainScreen

    def broken(self: MainScreen) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(MainScreen, "compose", broken)
    monkeypatch.setattr(PituiApp, "run", lambda self: App.run(self, headless=True))
    monkeypatch.chdir(tmp_path)
    assert run_tui(_tui_args(tmp_path)) != 0


def _tui_args(tmp_path: Path) -> argparse.Namespace:
    return argparse.Namespace(
        demo=False,
        resume=False,
        session=None,
        session_dir=str(tmp_path / "sessions"),
        no_session=True,
        continue_=False,
        model=None,
        api_base=None,
        thinking=None,
    )


def test_the_tui_runs_with_a_short_thread_switch_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the TUI runs, a thread that computes (a search, the provider loop) hands the
    interpreter back to the UI thread after 1 ms rather than Python's 5 ms; the process's
    setting is put back when it ends."""
    from pitui.cli.tui import SWITCH_INTERVAL, run_tui

    seen: list[float] = []

    def run(self: PituiApp) -> None:
        seen.append(sys.getswitchinterval())

    before = sys.getswitchinterval()
    monkeypatch.setattr(PituiApp, "run", run)
    monkeypatch.chdir(tmp_path)
    run_tui(_tui_args(tmp_path))
    assert seen == [SWITCH_INTERVAL] and before > SWITCH_INTERVAL
    assert sys.getswitchinterval() == before


def test_the_tui_collects_no_garbage_until_its_first_frame(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``pitui``: the cyclic garbage collector is off from start-up to the first frame (its
    passes over the objects start-up creates cost ~70 ms at 20k entries), on again once the
    frame is shown, and on after the app in any case (here the app ends at its first frame).
    (The provider layer's import, which keeps it off while it runs, is not started here: see
    tests/llm/test_lazy_import.py.)"""
    import gc

    from textual.app import App

    from pitui.cli import main
    from pitui.llm import lazy

    monkeypatch.setattr(lazy, "preload", lambda: None)

    seen: dict[str, bool] = {}

    def run(self: PituiApp) -> None:
        seen["at start"] = gc.isenabled()

        def first_frame() -> None:
            seen["after the first frame"] = gc.isenabled()
            self.exit()

        self.after_first_frame.append(first_frame)  # after pitui's own hook
        App.run(self, headless=True)

    monkeypatch.setattr(PituiApp, "run", run)
    monkeypatch.chdir(tmp_path)
    assert gc.isenabled()
    assert main(["--no-session", "--session-dir", str(tmp_path / "sessions")]) == 0
    assert seen == {"at start": False, "after the first frame": True}
    assert gc.isenabled()
