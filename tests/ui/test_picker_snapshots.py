"""Snapshots: the session picker (with its delete confirmation) and the demo app's main screen.

Deterministic: a fixed clock, sessions written with fixed message timestamps, a fixed cwd,
no cursor blink, and the picker's thread workers waited for before the screenshot.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from conftest import FIXED_NOW, fixed_clock, make_app
from textual.pilot import Pilot

from pitui.config.paths import resolve_session_folder
from pitui.config.settings import Settings
from pitui.session import SessionStore
from pitui.ui.app import PituiApp
from pitui.ui.demo import build_demo_session, make_demo_app, write_demo_project
from pitui.ui.screens.session_picker import SessionPickerScreen

SnapCompare = Callable[..., bool]
CWD = "/home/dev/wordfreq"
SIZE = (100, 30)


def _text(text: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": text}]


def write_session(
    folder: Path, first: str, minutes_ago: float, messages: int, name: str = ""
) -> None:
    store = SessionStore.create(folder, CWD)
    end = int((FIXED_NOW - minutes_ago * 60) * 1000)
    for n in range(messages):
        role = "user" if n % 2 == 0 else "assistant"
        message = {
            "role": role,
            "content": _text(first if n == 0 else f"message {n}"),
            "timestamp": end - (messages - 1 - n) * 1000,
        }
        if role == "assistant":
            message["stopReason"] = "stop"
        store.append_message(message)
    if name:
        store.append_session_info(name)
    store.close()


def picker_app() -> PituiApp:
    folder = resolve_session_folder(CWD)[0]
    write_session(folder, "Why does top_words count The and the separately?", 4, 6)
    write_session(folder, "Add a --top option", 95, 12, name="CLI options for wordfreq")
    write_session(folder, "Explain [bold]this[/bold] markup and [/ in a title", 26 * 60, 2)
    write_session(
        folder,
        "A very long first message that goes on and on about the many things the user would "
        "like to see changed in the project, far beyond the width of the picker",
        9 * 1440,
        40,
    )
    store = SessionStore.create(folder, CWD)
    store.append_message(
        {
            "role": "user",
            "content": _text("The session open now"),
            "timestamp": int(FIXED_NOW * 1000),
        }
    )
    return make_app(store, model=None, session_folder=folder)


async def show_picker(pilot: Pilot[int]) -> None:
    app = pilot.app
    screen = SessionPickerScreen()
    app.push_screen(screen)
    for _ in range(200):
        await pilot.pause()
        if not screen.loading_sessions:
            break
        await asyncio.sleep(0.01)
    await pilot.pause()


def test_session_picker(snap_compare: SnapCompare) -> None:
    assert snap_compare(picker_app(), terminal_size=SIZE, run_before=show_picker)


def test_session_picker_delete_confirmation(snap_compare: SnapCompare) -> None:
    assert snap_compare(
        picker_app(), press=["down", "down", "ctrl+d"], terminal_size=SIZE, run_before=show_picker
    )


def test_demo_main_screen(snap_compare: SnapCompare, tmp_path: Path) -> None:
    project = write_demo_project(tmp_path / "wordfreq")
    session = build_demo_session(tmp_path / "sessions", project, now=fixed_clock)
    app = make_demo_app(
        session,
        "http://127.0.0.1:9/v1",
        settings=Settings.from_dict({"ui": {"cursorBlink": False}}),
        cwd=project,
        clock=fixed_clock,
    )
    assert snap_compare(app, terminal_size=(120, 34))
