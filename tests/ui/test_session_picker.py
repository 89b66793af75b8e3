"""The session picker (``/resume``, ``pitui --resume``): rows, filter, scopes, open, delete."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import FIXED_NOW, make_app
from support.screens import screen_up, wait_for
from textual.widgets import Input, OptionList

from pitui.config.paths import resolve_session_folder
from pitui.session import SessionStore
from pitui.session.listing import SessionInfo
from pitui.ui.app import PituiApp
from pitui.ui.screens.session_picker import (
    ConfirmDeleteScreen,
    SessionPickerScreen,
    format_age,
    search_text,
)

CWD = "/home/dev/project"
OTHER_CWD = "/home/dev/other"


def write_session(
    folder: Path,
    cwd: str,
    first: str,
    minutes_ago: float,
    *,
    name: str | None = None,
    replies: list[str] | None = None,
) -> Path:
    """A session whose last message is ``minutes_ago`` before the fixed clock."""
    store = SessionStore.create(folder, cwd)
    replies = replies if replies is not None else ["Sure."]
    end = int((FIXED_NOW - minutes_ago * 60) * 1000)
    t = end - 1000 * (1 + 2 * len(replies))
    store.append_message(
        {"role": "user", "content": [{"type": "text", "text": first}], "timestamp": t}
    )
    for reply in replies:
        t += 1000
        store.append_message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": reply}],
                "stopReason": "stop",
                "timestamp": t,
            }
        )
        t += 1000
        store.append_message(
            {"role": "user", "content": [{"type": "text", "text": "thanks"}], "timestamp": t}
        )
    store.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Done."}],
            "stopReason": "stop",
            "timestamp": end,
        }
    )
    if name:
        store.append_session_info(name)
    assert store.path is not None
    path = store.path
    store.close()
    return path


@dataclass
class Sessions:
    folder: Path
    recent: Path
    flaky: Path
    markup: Path
    other: Path
    results: list[str | None] = field(default_factory=list)


@pytest.fixture
def sessions() -> Sessions:
    folder = resolve_session_folder(CWD)[0]
    other_folder = resolve_session_folder(OTHER_CWD)[0]
    return Sessions(
        folder=folder,
        recent=write_session(
            folder, CWD, "Please refactor parser.py", 3, name="Refactor the parser", replies=[]
        ),
        flaky=write_session(
            folder,
            CWD,
            "Fix the flaky test in test_io.py",
            125,
            replies=["The zebra fixture races with the cleanup.", "Fixed it."],
        ),
        markup=write_session(folder, CWD, "Escape [bold]markup[/bold] and [/ in titles", 3 * 1440),
        other=write_session(other_folder, OTHER_CWD, "Work in the other project", 1440),
    )


@pytest.fixture
def picker_app(sessions: Sessions) -> Callable[[], PituiApp]:
    """An app whose open session is a fresh one in the same folder (modified just now)."""

    def factory() -> PituiApp:
        store = SessionStore.create(sessions.folder, CWD)
        store.append_message(
            {
                "role": "user",
                "content": [{"type": "text", "text": "The session open now"}],
                "timestamp": int((FIXED_NOW - 10) * 1000),
            }
        )
        return make_app(store, model=None, session_folder=sessions.folder)

    return factory


async def open_picker(
    app: PituiApp, pilot: object, results: list[str | None]
) -> SessionPickerScreen:
    screen = SessionPickerScreen()
    app.push_screen(screen, results.append)
    await settle(app, pilot)
    return screen


async def settle(app: PituiApp, pilot: object) -> None:
    """Let the picker's thread workers finish and their results be shown."""
    for _ in range(100):
        await pilot.pause()  # type: ignore[attr-defined]
        screen = app.screen
        busy = isinstance(screen, SessionPickerScreen) and (
            screen.loading_sessions or screen._texts_pending
        )
        if not busy:
            break
        await asyncio.sleep(0.01)
    await pilot.pause()  # type: ignore[attr-defined]


def shown_paths(screen: SessionPickerScreen) -> list[str]:
    return [info.path for info in screen.shown]


def row_text(screen: SessionPickerScreen, index: int) -> str:
    return screen.row(screen.shown[index]).plain


# ------------------------------------------------------------------------------ pure helpers


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (0, "just now"),
        (59, "just now"),
        (60, "1 min ago"),
        (3 * 60 + 5, "3 min ago"),
        (3600, "1 hour ago"),
        (2 * 3600 + 300, "2 hours ago"),
        (86400, "yesterday"),
        (3 * 86400, "3 days ago"),
        (45 * 86400, "1 month ago"),
        (200 * 86400, "6 months ago"),
        (800 * 86400, "2 years ago"),
        (-30, "just now"),
    ],
)
def test_format_age(seconds: float, expected: str) -> None:
    assert format_age(FIXED_NOW - seconds, FIXED_NOW) == expected


def test_search_text_reads_every_message(sessions: Sessions) -> None:
    text = search_text(sessions.flaky)
    assert "zebra fixture" in text
    assert "Fix the flaky test" in text
    assert search_text(sessions.folder / "missing.jsonl") == ""


# ------------------------------------------------------------------------------ Pilot


async def test_rows_newest_first_with_age_and_count(
    sessions: Sessions, picker_app: Callable[[], PituiApp]
) -> None:
    app = picker_app()
    results: list[str | None] = []
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_picker(app, pilot, results)
        assert app.store.path is not None
        assert shown_paths(screen) == [
            str(app.store.path),
            str(sessions.recent),
            str(sessions.flaky),
            str(sessions.markup),
        ]
        assert row_text(screen, 0) == "The session open now\n  just now · 1 message · open now"
        assert row_text(screen, 1) == "Refactor the parser\n  3 min ago · 2 messages"
        assert row_text(screen, 2) == (
            "Fix the flaky test in test_io.py\n  2 hours ago · 6 messages"
        )
        # Untrusted text is literal: brackets are not markup.
        assert row_text(screen, 3).startswith("Escape [bold]markup[/bold] and [/ in titles\n")
        assert "3 days ago" in row_text(screen, 3)
        assert screen.query_one(OptionList).option_count == 4
        assert screen.query_one(OptionList).highlighted == 0
        title = str(screen.query_one("#picker-title").render())
        assert "this directory (4)" in title


async def test_filter_matches_names_first_messages_and_later_text(
    sessions: Sessions, picker_app: Callable[[], PituiApp]
) -> None:
    app = picker_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_picker(app, pilot, [])
        await pilot.press(*"parser")
        await settle(app, pilot)
        assert shown_paths(screen) == [str(sessions.recent)]
        await pilot.press(*["backspace"] * 6, *"FLAKY")
        await settle(app, pilot)
        assert shown_paths(screen) == [str(sessions.flaky)]
        # A word only in a later assistant message: found once the full texts are read.
        screen.query_one(Input).value = "zebra"
        await settle(app, pilot)
        assert shown_paths(screen) == [str(sessions.flaky)]
        screen.query_one(Input).value = "nothing like this"
        await settle(app, pilot)
        assert screen.shown == []
        assert screen.query_one("#picker-empty").display is True
        assert "No session matches" in str(screen.query_one("#picker-empty").render())


async def test_tab_toggles_all_sessions(
    sessions: Sessions, picker_app: Callable[[], PituiApp]
) -> None:
    app = picker_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_picker(app, pilot, [])
        assert str(sessions.other) not in shown_paths(screen)
        await pilot.press("tab")
        await settle(app, pilot)
        assert screen.show_all
        assert str(sessions.other) in shown_paths(screen)
        assert len(screen.shown) == 5
        other = shown_paths(screen).index(str(sessions.other))
        assert OTHER_CWD in row_text(screen, other)
        assert "all sessions (5)" in str(screen.query_one("#picker-title").render())
        await pilot.press("tab")
        await settle(app, pilot)
        assert not screen.show_all
        assert str(sessions.other) not in shown_paths(screen)


async def test_all_sessions_includes_an_explicit_session_folder(
    tmp_path: Path, sessions: Sessions
) -> None:
    folder = tmp_path / "explicit"
    mine = write_session(folder, CWD, "Kept in an explicit folder", 30)
    store = SessionStore.open(mine)
    app = make_app(store, model=None, session_folder=folder)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_picker(app, pilot, [])
        assert shown_paths(screen) == [str(mine)]
        await pilot.press("tab")
        await settle(app, pilot)
        paths = shown_paths(screen)
        assert str(mine) in paths and str(sessions.other) in paths and str(sessions.flaky) in paths


async def test_enter_returns_the_highlighted_path(
    sessions: Sessions, picker_app: Callable[[], PituiApp]
) -> None:
    app = picker_app()
    results: list[str | None] = []
    async with app.run_test(size=(100, 30)) as pilot:
        await open_picker(app, pilot, results)
        await pilot.press("down", "down", "enter")
        await pilot.pause()
        assert results == [str(sessions.flaky)]
        assert not isinstance(app.screen, SessionPickerScreen)


async def test_enter_on_the_open_session_closes_without_a_path(
    picker_app: Callable[[], PituiApp],
) -> None:
    app = picker_app()
    results: list[str | None] = []
    async with app.run_test(size=(100, 30)) as pilot:
        await open_picker(app, pilot, results)
        await pilot.press("enter")
        await pilot.pause()
        assert results == [None]


async def test_escape_cancels(picker_app: Callable[[], PituiApp]) -> None:
    app = picker_app()
    results: list[str | None] = []
    async with app.run_test(size=(100, 30)) as pilot:
        await open_picker(app, pilot, results)
        await pilot.press(*"par", "escape")
        await pilot.pause()
        assert results == [None]


async def test_ctrl_d_deletes_after_confirmation(
    sessions: Sessions, picker_app: Callable[[], PituiApp]
) -> None:
    app = picker_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_picker(app, pilot, [])
        await pilot.press("down", "down", "ctrl+d")
        await wait_for(pilot, lambda: screen_up(app, ConfirmDeleteScreen))
        await pilot.press("n")
        await pilot.pause()
        assert app.screen is screen
        assert sessions.flaky.exists()
        await pilot.press("ctrl+d")
        await wait_for(pilot, lambda: screen_up(app, ConfirmDeleteScreen))
        await pilot.press("y")
        await pilot.pause()
        assert app.screen is screen
        assert not sessions.flaky.exists()
        assert not sessions.flaky.with_name(sessions.flaky.name + ".lock").exists()
        assert str(sessions.flaky) not in shown_paths(screen)
        assert len(screen.shown) == 3
        # The highlight stays at the same place (now the next session).
        assert screen.highlighted_info() is not None
        assert screen.highlighted_info().path == str(sessions.markup)  # type: ignore[union-attr]


async def test_ctrl_d_never_deletes_the_open_session(picker_app: Callable[[], PituiApp]) -> None:
    app = picker_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_picker(app, pilot, [])
        current = app.store.path
        assert current is not None
        assert screen.highlighted_info().path == str(current)  # type: ignore[union-attr]
        await pilot.press("ctrl+d")
        await pilot.pause()
        assert app.screen is screen  # no confirmation: refused at once
        assert current.exists()
        assert screen.delete_session(screen.shown[0]) is False
        assert current.exists()


async def test_delete_refuses_a_session_open_in_another_pitui(
    sessions: Sessions, picker_app: Callable[[], PituiApp]
) -> None:
    other = SessionStore.open(sessions.recent)  # holds the lock, as another process would
    try:
        assert not other.read_only
        app = picker_app()
        async with app.run_test(size=(100, 30)) as pilot:
            screen = await open_picker(app, pilot, [])
            info = next(i for i in screen.shown if i.path == str(sessions.recent))
            assert screen.delete_session(info) is False
            assert sessions.recent.exists()
    finally:
        other.close()


async def test_resume_command_opens_the_chosen_session(
    sessions: Sessions, picker_app: Callable[[], PituiApp]
) -> None:
    app = picker_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"/resume", "enter")
        await settle(app, pilot)
        assert isinstance(app.screen, SessionPickerScreen)
        await pilot.press(*"refactor", "enter")
        await pilot.pause()
        assert app.store.path == sessions.recent
        assert app.store.session_name == "Refactor the parser"


async def test_open_picker_at_start(sessions: Sessions) -> None:
    store = SessionStore.create(sessions.folder, CWD)
    app = make_app(store, model=None, session_folder=sessions.folder, open_picker=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        for _ in range(20):
            if isinstance(app.screen, SessionPickerScreen):
                break
            await pilot.pause()
        await settle(app, pilot)
        assert isinstance(app.screen, SessionPickerScreen)
        assert shown_paths(app.screen)[0] == str(sessions.recent)


async def test_empty_folder_says_so(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path / "empty", CWD)
    app = make_app(store, model=None, session_folder=tmp_path / "empty")
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_picker(app, pilot, [])
        assert screen.shown == []
        assert "Tab shows all sessions" in str(screen.query_one("#picker-empty").render())
        await pilot.press("enter", "ctrl+d")  # nothing highlighted: nothing happens
        await pilot.pause()
        assert app.screen is screen


async def test_listing_runs_in_a_thread_and_the_screen_stays_responsive(
    sessions: Sessions, picker_app: Callable[[], PituiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from pitui.ui.screens import session_picker

    release = threading.Event()
    threads: list[threading.Thread] = []
    real = session_picker.list_sessions

    def slow_list(folders: list[Path], cwd: str | None = None) -> list[SessionInfo]:
        threads.append(threading.current_thread())
        assert release.wait(10)
        return real(folders, cwd)

    monkeypatch.setattr(session_picker, "list_sessions", slow_list)
    app = picker_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = SessionPickerScreen()
        app.push_screen(screen)
        await pilot.pause()
        assert screen.loading_sessions
        assert screen.query_one(OptionList).loading
        # The UI keeps working while the files are read.
        await pilot.press(*"flaky")
        assert screen.query_one(Input).value == "flaky"
        assert threads and threads[0] is not threading.main_thread()
        release.set()
        await settle(app, pilot)
        assert not screen.query_one(OptionList).loading
        assert shown_paths(screen) == [str(sessions.flaky)]
