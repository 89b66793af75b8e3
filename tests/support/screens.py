"""Driving the app under Textual's Pilot in tests: waiting for a state (a screen pushed is not
yet shown, a run ended is not yet painted), typing a command, reading what the terminal shows.

A check is polled while the app runs, never slept for: a loaded machine may be many times
slower than a quiet one, so every wait has a generous deadline and fails loudly when it passes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot

from pitui.ui.key_routing import TYPING_PAUSE
from pitui.ui.screens.main import MainScreen
from pitui.ui.widgets.chat import ChatView
from pitui.ui.widgets.prompt import PromptEditor

SIZE = (120, 36)  # the terminal most UI tests run in (snapshots fix their own)


def screen_up(app: Any, kind: type) -> bool:
    """``app``'s current screen is a ``kind`` and it is mounted (its children are composed).

    ``app.screen`` changes the moment a screen is pushed, before it is composed: a check that
    queries the screen's widgets must wait for this, not for the type alone (on a loaded
    machine the gap is long enough to see).

    A dialog answered by single keys counts once its first frame is shown: a key read before
    that never answers it (:mod:`pitui.ui.key_routing`).
    """
    screen = app.screen
    if not (isinstance(screen, kind) and screen.is_mounted):
        return False
    router = getattr(app, "key_router", None)
    return router is None or router.shown(screen)


async def wait_for(
    pilot: Pilot[Any], check: Callable[[], bool], timeout: float = 20.0, step: float = 0.02
) -> None:
    """Let the app run until ``check()`` holds; fail after ``timeout`` seconds (generous: only
    a failing test waits that long)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        if loop.time() > deadline:
            raise AssertionError("timed out waiting for the app")
        await pilot.pause(step)


async def pause_rounds(pilot: Pilot[Any], rounds: int = 15) -> None:
    """Let commands and workers run for ``rounds`` short pauses (for a state with no check to
    wait for, e.g. the chat's consumer, which never completes)."""
    for _ in range(rounds):
        await pilot.pause(0.02)


async def typing_over(pilot: Pilot[Any]) -> None:
    """Pause as a user does before answering a dialog: keys that follow typing into the editor
    within ``TYPING_PAUSE`` go to the editor, not to a dialog that opened meanwhile."""
    await pilot.pause(TYPING_PAUSE + 0.05)


def messages_shown(app: Any) -> list[str]:
    """What the app told the user: the notices in the transcript, then the toasts."""
    main = app.main_screen
    said = []
    if main is not None and main.is_mounted:
        said = [n.text for n in main.query_one(ChatView).notices]
    return said + [str(n.message) for n in app._notifications]


def chat(app: Any) -> ChatView:
    return app.query_one(ChatView)


async def run_finished(pilot: Pilot[Any], app: Any, timeout: float = 20.0) -> None:
    """Wait for the agent's run to end and for the chat to show everything."""
    await wait_for(pilot, lambda: app.agent is not None and not app.agent.running, timeout)
    await chat(app).wait_idle()
    await pilot.pause()


async def command(pilot: Pilot[Any], text: str) -> None:
    """Type ``text`` into the current screen's prompt editor and press Enter."""
    editor = pilot.app.screen.query_one(PromptEditor)
    editor.text = text
    await pilot.press("enter")


async def submit(pilot: Pilot[Any], text: str) -> None:
    """``command``, then let what it started run (``pause_rounds``)."""
    await command(pilot, text)
    await pause_rounds(pilot)


def back_to_main(app: Any) -> None:
    while not isinstance(app.screen, MainScreen):
        app.pop_screen()


def terminal_output(app: Any) -> str:
    """What a full repaint of the screen would write to the terminal."""
    update = app.screen._compositor.render_full_update()
    return str(update.render_segments(app.console))
