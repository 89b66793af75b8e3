"""The error boundary: no slash command, key binding, palette entry or worker takes the app
down. A user error is shown as its sentence; an internal error is logged with its traceback
(``<state dir>/pitui.log``, 0600) and shown as one sentence naming the log."""

from __future__ import annotations

import asyncio
import logging
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import copy_fixture, make_app
from support.screens import back_to_main, pause_rounds, submit
from textual import work

from pitui.config.logs import configure_logging
from pitui.session import SessionStore
from pitui.ui import commands
from pitui.ui.app import PituiApp
from pitui.ui.commands import COMMANDS, Command
from pitui.ui.screens.main import MainScreen
from pitui.ui.screens.read_only import ReadOnlyScreen, refusal_sentence
from pitui.ui.widgets.prompt import PromptEditor

SIZE = (110, 32)


@pytest.fixture
def log_path(tmp_path: Path) -> Iterator[Path]:
    path = configure_logging(tmp_path / "state" / "pitui.log")
    yield path
    for handler in logging.getLogger().handlers:
        handler.flush()


def record_notices(app: PituiApp) -> list[tuple[str, str]]:
    """What the app tells the user: notices for the transcript (``say``) and toasts."""
    notes: list[tuple[str, str]] = []

    def notify(message: str, *, severity: str = "information", **kw: Any) -> None:
        notes.append((str(message), severity))

    def say(text: str, severity: str = "information", **kw: Any) -> None:
        notes.append((text, severity))

    app.notify = notify  # type: ignore[method-assign, assignment]
    app.say = say  # type: ignore[method-assign, assignment]
    return notes


def log_text(path: Path) -> str:
    for handler in logging.getLogger().handlers:
        handler.flush()
    return path.read_text(encoding="utf-8") if path.exists() else ""


# ---------------------------------------------------------------------------------- read-only

EVERY_COMMAND = [
    ("/tree", ""),
    ("/fork", ""),
    ("/clone", ""),
    ("/compact", ""),
    ("/model", "openai/other-model"),
    ("/thinking", "high"),
    ("/name", "x"),
    ("/label", "here"),
    ("/resume", ""),
    ("/takeover", ""),
    ("/new", ""),
    ("/copy", ""),
    ("/export", "jsonl"),
    ("/context", ""),
    ("/session", ""),
    ("/help", ""),
]


def test_every_command_is_covered() -> None:
    assert {name for name, _ in EVERY_COMMAND} | {"/quit"} == {f"/{n}" for n in COMMANDS}


@pytest.mark.parametrize(("command", "arg"), EVERY_COMMAND)
async def test_every_command_on_a_read_only_session_keeps_the_app_running(
    command: str, arg: str, tmp_path: Path, log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = copy_fixture("pi-v3-branches.jsonl", tmp_path)
    holder = SessionStore.open(path)  # another pitui holds the session
    before = path.read_bytes()
    monkeypatch.chdir(tmp_path)
    try:
        store = SessionStore.open(path)
        assert store.read_only and store.read_only_reason
        app = make_app(store, cwd=tmp_path, log_path=log_path)
        async with app.run_test(size=SIZE) as pilot:
            notes = record_notices(app)
            await submit(pilot, f"{command} {arg}".strip())
            assert app.is_running
            if command in ("/name", "/label", "/model", "/thinking", "/compact"):
                # A write to a held session: one sentence, fork and clone offered.
                assert isinstance(app.screen, ReadOnlyScreen), app.screen
                assert app.screen.message == refusal_sentence(store)
                assert "open in another pitui" in app.screen.message
                assert "/fork" in app.screen.message and "/clone" in app.screen.message
            back_to_main(app)
            await pilot.pause()
            # The app still answers: another command works.
            await submit(pilot, "/help")
            assert app.screen.__class__.__name__ == "HelpScreen"
            back_to_main(app)
            assert not any(severity == "error" for _, severity in notes), notes
        assert path.read_bytes() == before  # nothing was written to the held session
        assert "Traceback" not in log_text(log_path)
    finally:
        holder.close()


# ---------------------------------------------------------------------------------- internal


def failing_command(monkeypatch: pytest.MonkeyPatch, name: str = "name") -> None:
    async def boom(ctx: commands.CommandContext, arg: str) -> None:
        raise RuntimeError("boom in the handler")

    monkeypatch.setitem(COMMANDS, name, Command(name, COMMANDS[name].help, boom))


def assert_internal_error_reported(
    notes: list[tuple[str, str]], log_path: Path, what: str, error: str
) -> None:
    errors = [text for text, severity in notes if severity == "error"]
    assert len(errors) == 1, notes
    sentence = errors[0]
    assert sentence.startswith(f"Internal error while {what}")
    assert str(log_path) in sentence and sentence.count(".") >= 1
    text = log_text(log_path)
    assert "Traceback (most recent call last)" in text
    assert error in text
    assert stat.S_IMODE(log_path.stat().st_mode) == 0o600


async def test_a_command_that_raises_is_logged_and_the_app_goes_on(
    app_factory: Callable[..., PituiApp], log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing_command(monkeypatch)
    app = app_factory(model=None, log_path=log_path)
    async with app.run_test(size=SIZE) as pilot:
        notes = record_notices(app)
        await submit(pilot, "/name x")
        assert app.is_running
        assert_internal_error_reported(
            notes, log_path, "running /name", "RuntimeError: boom in the handler"
        )
        await submit(pilot, "/help")
        assert app.screen.__class__.__name__ == "HelpScreen"


async def test_a_palette_entry_that_raises_is_reported(
    app_factory: Callable[..., PituiApp], log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing_command(monkeypatch)
    app = app_factory(model=None, log_path=log_path)
    async with app.run_test(size=SIZE) as pilot:
        notes = record_notices(app)
        await pilot.press("ctrl+p")
        await pilot.pause(0.2)
        await pilot.press(*"/name")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pause_rounds(pilot)
        assert app.is_running
        assert_internal_error_reported(
            notes, log_path, "running /name", "RuntimeError: boom in the handler"
        )


async def test_a_system_palette_entry_that_raises_is_reported(
    app_factory: Callable[..., PituiApp], log_path: Path
) -> None:
    app = app_factory(model=None, log_path=log_path)
    async with app.run_test(size=SIZE) as pilot:
        notes = record_notices(app)

        def broken() -> None:
            raise ValueError("keys panel broke")

        app.action_show_help_panel = broken  # type: ignore[method-assign]
        await pilot.press("ctrl+p")
        await pilot.pause(0.2)
        await pilot.press(*"keys")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pause_rounds(pilot)
        assert app.is_running
        assert_internal_error_reported(
            notes, log_path, "running 'Keys'", "ValueError: keys panel broke"
        )


async def test_a_key_binding_whose_action_raises_is_reported(
    app_factory: Callable[..., PituiApp], log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: MainScreen, initial_tab: str | None = None) -> None:
        raise KeyError("tree broke")

    monkeypatch.setattr(MainScreen, "open_tree", broken)
    app = app_factory(model=None, log_path=log_path)
    async with app.run_test(size=SIZE) as pilot:
        notes = record_notices(app)
        await pilot.press("ctrl+t")
        await pause_rounds(pilot)
        assert app.is_running
        assert_internal_error_reported(
            notes, log_path, "running the action 'tree'", "KeyError: 'tree broke'"
        )
        await pilot.press(*"still typing")
        assert app.screen.query_one(PromptEditor).text == "still typing"


async def test_a_key_binding_raising_a_user_error_shows_its_sentence(
    app_factory: Callable[..., PituiApp], log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pitui.session.errors import ReadOnlySessionError

    def refused(self: MainScreen, initial_tab: str | None = None) -> None:
        raise ReadOnlySessionError("This session is read-only; fork it to continue.")

    monkeypatch.setattr(MainScreen, "open_tree", refused)
    app = app_factory(model=None, log_path=log_path)
    async with app.run_test(size=SIZE) as pilot:
        notes = record_notices(app)
        await pilot.press("ctrl+t")
        await pause_rounds(pilot)
        assert app.is_running
        assert notes == [("This session is read-only; fork it to continue.", "warning")]
        assert "Traceback" not in log_text(log_path)


async def test_workers_that_raise_are_reported(
    app_factory: Callable[..., PituiApp], log_path: Path
) -> None:
    app = app_factory(model=None, log_path=log_path)
    async with app.run_test(size=SIZE) as pilot:
        notes = record_notices(app)

        async def fails() -> None:
            await asyncio.sleep(0)
            raise RuntimeError("async worker broke")

        app.screen.run_worker(fails())  # exit_on_error: Textual would exit the app
        await pause_rounds(pilot)
        assert app.is_running
        assert_internal_error_reported(
            notes, log_path, "running a background task", "RuntimeError: async worker broke"
        )

        notes.clear()

        class Holder:
            @work(thread=True)
            def fails_in_a_thread(self) -> None:
                raise OSError("thread worker broke")

        work_on = app.screen
        work_on.fails_in_a_thread = Holder.fails_in_a_thread.__get__(work_on)  # type: ignore[attr-defined]
        work_on.fails_in_a_thread()  # type: ignore[attr-defined]
        await pause_rounds(pilot)
        assert app.is_running
        errors = [text for text, severity in notes if severity == "error"]
        assert len(errors) == 1 and "OSError" in errors[0]
        assert "OSError: thread worker broke" in log_text(log_path)
