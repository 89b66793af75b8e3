"""The read-only second view (another pitui holds the session), taking it over when the other
closes it, a session whose working directory is gone, and ``/name``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from conftest import copy_fixture, make_app
from support.screens import back_to_main, pause_rounds, screen_up, submit, typing_over
from textual.pilot import Pilot

from pitui.session import SessionStore
from pitui.ui.app import PituiApp
from pitui.ui.screens.fork_picker import ForkPickerScreen
from pitui.ui.screens.main import MainScreen
from pitui.ui.screens.read_only import MissingCwdScreen, ReadOnlyScreen
from pitui.ui.screens.tree_browser import TreeBrowserScreen
from pitui.ui.widgets.prompt import PromptEditor
from pitui.ui.widgets.status import StatusLine

SIZE = (110, 32)
PID = f"pid {os.getpid()}"


def notices(app: PituiApp) -> list[str]:
    """What the app tells the user: notices for the transcript and toasts."""
    seen: list[str] = []
    original_notify, original_say = app.notify, app.say

    def notify(message: str, **kw: Any) -> None:
        seen.append(str(message))
        original_notify(message, **kw)

    def say(text: str, *args: Any, **kw: Any) -> None:
        seen.append(text)
        app.notify = original_notify  # type: ignore[method-assign]
        try:
            original_say(text, *args, **kw)
        finally:
            app.notify = notify  # type: ignore[method-assign, assignment]

    app.notify = notify  # type: ignore[method-assign, assignment]
    app.say = say  # type: ignore[method-assign, assignment]
    return seen


async def wait_until(pilot: Pilot[int], check: Any, timeout: float = 10.0) -> None:
    """Pause until ``check()`` holds (a loaded machine is slow; the file check is per second)."""
    for _ in range(int(timeout / 0.05)):
        if check():
            return
        await pilot.pause(0.05)
    assert check()


def status_text(app: PituiApp) -> str:
    main = app.main_screen
    assert main is not None
    return main.query_one(StatusLine).render_text()


@pytest.fixture
def held(tmp_path: Path) -> Any:
    """A session file another pitui (a store in this process) holds; yields (path, holder)."""
    path = copy_fixture("pi-v3-branches.jsonl", tmp_path)
    holder = SessionStore.open(path)
    try:
        yield path, holder
    finally:
        holder.close()


async def test_a_held_session_opens_read_only_with_a_banner_and_writes_offer_fork_or_clone(
    held: Any, tmp_path: Path
) -> None:
    path, _holder = held
    before = path.read_bytes()
    store = SessionStore.open(path)
    assert store.read_only and store.held_elsewhere
    app = make_app(store, cwd=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pause_rounds(pilot)
        assert status_text(app).startswith(f"read-only · open in {PID}")
        # A prompt: one sentence naming /fork and /clone, nothing sent, nothing written.
        await submit(pilot, "hello there")
        assert isinstance(app.screen, ReadOnlyScreen)
        message = app.screen.message
        assert message.count(".") == 1 and message.endswith(".")
        assert f"open in another pitui ({PID})" in message and "/fork" in message
        assert "t take over" not in str(app.screen.query_one("#read-only-keys").render())
        assert app.main_screen is not None
        assert app.main_screen.query_one(PromptEditor).text == "hello there"  # not lost
        await typing_over(pilot)
        await pilot.press("t")  # not offered while the other pitui holds it
        await pause_rounds(pilot, 5)
        assert store.read_only
        # Fork from the dialog opens the fork picker.
        await pilot.press("f")
        await pause_rounds(pilot)
        assert isinstance(app.screen, ForkPickerScreen)
        back_to_main(app)
        # Clone from the dialog: a new session this pitui writes.
        await submit(pilot, "/label here")
        assert isinstance(app.screen, ReadOnlyScreen)
        await typing_over(pilot)
        await pilot.press("c")
        await pause_rounds(pilot)
        assert app.store is not store and not app.store.read_only
        assert app.store.path is not None and app.store.path != path
        assert not status_text(app).startswith("read-only")
        await submit(pilot, "/name cloned")
        assert app.store.session_name == "cloned"
    assert path.read_bytes() == before


async def test_tree_moves_stay_view_only_and_labels_are_refused(held: Any, tmp_path: Path) -> None:
    path, _holder = held
    before = path.read_bytes()
    store = SessionStore.open(path)
    app = make_app(store, cwd=tmp_path, settings={"branchSummary": {"skipPrompt": False}})
    async with app.run_test(size=SIZE) as pilot:
        await pause_rounds(pilot)
        leaf = store.leaf_id
        other = next(n.id for n in store.nodes() if n.type == "message" and n.role == "assistant")
        assert other != leaf
        app.screen.open_tree()  # type: ignore[attr-defined]
        await pause_rounds(pilot)
        browser = app.screen
        assert isinstance(browser, TreeBrowserScreen)
        seen = notices(app)
        browser.select_entry(other)
        await pause_rounds(pilot, 30)
        assert store.leaf_id == other  # moved (the view follows) ...
        assert any("without a branch summary" in n for n in seen)  # ... without a summary
        browser.action_label()
        await pause_rounds(pilot)
        assert isinstance(app.screen, ReadOnlyScreen)
    assert path.read_bytes() == before


async def test_take_over_when_the_other_pitui_closes(held: Any, tmp_path: Path) -> None:
    path, holder = held
    store = SessionStore.open(path)
    app = make_app(store, cwd=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pause_rounds(pilot)
        written = holder.append_message({"role": "user", "content": "last words", "timestamp": 1})
        holder.close()
        # The once-a-second file check notices the free lock.
        await wait_until(pilot, lambda: screen_up(app, ReadOnlyScreen))
        assert isinstance(app.screen, ReadOnlyScreen)
        assert "closed this session" in app.screen.message
        assert "t take over" in str(app.screen.query_one("#read-only-keys").render())
        assert "/takeover" in status_text(app)
        assert written in store  # what it appended before closing is shown
        await pilot.press("t")
        await pause_rounds(pilot)
        assert not store.read_only and app.store is store
        assert not status_text(app).startswith("read-only")
        await submit(pilot, "/name mine now")
        assert store.session_name == "mine now"
        third = SessionStore.open(path)
        assert third.held_elsewhere  # this pitui holds the lock now
        third.close()
    assert b"mine now" in path.read_bytes()


async def test_takeover_command_while_still_held(held: Any, tmp_path: Path) -> None:
    path, _holder = held
    app = make_app(SessionStore.open(path), cwd=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        seen = notices(app)
        await submit(pilot, "/takeover")
        assert any(f"still open in another pitui ({PID})" in n for n in seen)
        assert app.store.read_only


# ------------------------------------------------------------------------- missing directory


def missing_cwd_app(tmp_path: Path, **kwargs: Any) -> PituiApp:
    path = copy_fixture("pi-v3-branches.jsonl", tmp_path)
    store = SessionStore.open(path)
    assert store.stored_cwd_missing
    here = tmp_path / "here"
    here.mkdir()
    return make_app(
        store, cwd=here, session_folder=tmp_path / "mine", ask_missing_cwd=True, **kwargs
    )


async def test_a_missing_working_directory_asks_and_continue_works_here(tmp_path: Path) -> None:
    app = missing_cwd_app(tmp_path)
    stored = app.store.cwd
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: screen_up(app, MissingCwdScreen))
        text = " ".join(str(label.render()) for label in app.screen.query("Label"))
        assert stored in text and str(tmp_path / "here") in text
        assert app.agent is not None and app.agent.cwd != (tmp_path / "here").resolve()
        await pilot.press("c")
        await pause_rounds(pilot)
        assert isinstance(app.screen, MainScreen)
        assert app.agent.cwd == (tmp_path / "here").resolve()
        assert app.store.cwd == stored  # the file keeps its own directory
    assert not os.path.exists(stored)


async def test_a_missing_working_directory_fork_here(tmp_path: Path) -> None:
    app = missing_cwd_app(tmp_path)
    original = app.store.path
    ids = [n.id for n in app.store.all_nodes()]
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: screen_up(app, MissingCwdScreen))
        await pilot.press("f")
        await wait_until(pilot, lambda: app.store.path != original)
        store = app.store
        assert store.path != original and store.path is not None
        assert store.path.parent == tmp_path / "mine"
        assert store.cwd == str(tmp_path / "here") and not store.stored_cwd_missing
        assert [n.id for n in store.all_nodes()] == ids
        assert app.agent is not None and app.agent.cwd == (tmp_path / "here").resolve()


async def test_a_missing_working_directory_cancel_quits(tmp_path: Path) -> None:
    app = missing_cwd_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: screen_up(app, MissingCwdScreen))
        await pilot.press("escape")
        await pause_rounds(pilot)
    assert app.return_code == 0


async def test_resuming_a_session_whose_directory_is_gone_asks(tmp_path: Path) -> None:
    here = tmp_path / "here"
    here.mkdir()
    app = make_app(
        SessionStore.create(tmp_path / "mine", str(here)), cwd=here, ask_missing_cwd=True
    )
    other = copy_fixture("pi-v3-branches.jsonl", tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pause_rounds(pilot)
        first = app.store
        app._open_picked(str(other))
        await wait_until(pilot, lambda: screen_up(app, MissingCwdScreen))
        await pilot.press("escape")  # cancel: stay where we were
        await pause_rounds(pilot)
        assert app.store is first and app.is_running
        app._open_picked(str(other))
        await wait_until(pilot, lambda: screen_up(app, MissingCwdScreen))
        await pilot.press("c")
        await pause_rounds(pilot)
        assert app.store.path == other
        assert app.agent is not None and app.agent.cwd == here.resolve()


# ------------------------------------------------------------------------------------ /name


async def test_bare_name_shows_it_and_empty_quotes_clear_it(tmp_path: Path) -> None:
    path = copy_fixture("pi-v3-branches.jsonl", tmp_path)
    app = make_app(SessionStore.open(path), cwd=tmp_path, model=None)
    async with app.run_test(size=SIZE) as pilot:
        seen = notices(app)
        await submit(pilot, "/name")
        assert seen[-1] == 'This session has no name: /name NAME sets one, /name "" clears it.'
        await submit(pilot, "/name Release prep")
        await submit(pilot, "/name")
        assert seen[-1] == "Session name: Release prep"
        assert app.store.session_name == "Release prep"
        await submit(pilot, '/name ""')
        assert seen[-1] == "Session name cleared."
        assert app.store.session_name is None
