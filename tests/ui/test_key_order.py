"""Keys are handled in the order they arrived, whatever the terminal's read boundaries, and
keys typed while a dialog opens never answer it (:mod:`pitui.ui.key_routing`).

The keys are posted to the app the way the terminal driver posts one read: all at once, with
no wait between them (``pilot.press`` waits after each key, which hides the bugs).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from conftest import copy_fixture, make_app
from support.llm_server import ScriptedLLMServer, text
from support.screens import screen_up, wait_for
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import TextArea

from pitui.session import SessionStore
from pitui.ui.app import PituiApp
from pitui.ui.key_routing import TYPING_PAUSE, KeyRouter
from pitui.ui.screens.main import MainScreen
from pitui.ui.screens.read_only import ReadOnlyScreen
from pitui.ui.widgets.prompt import PromptEditor


def key_event(character: str) -> events.Key:
    if character == "\r":
        return events.Key("enter", "\r")
    return events.Key("space" if character == " " else character, character)


def burst(app: App[Any], typed: str) -> None:
    """Post ``typed`` as the driver does for one terminal read: every key at once."""
    for character in typed:
        app.post_message(key_event(character))


def user_texts(app: PituiApp) -> list[str]:
    out = []
    for message in app.store.project().messages:
        if message["role"] == "user":
            content = message["content"]
            out.append(content if isinstance(content, str) else content[0]["text"])
    return out


async def test_text_and_enter_in_one_read_send_the_text(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    llm.script(text("one"), text("two"), text("three"))
    app = app_factory(llm_url=llm.url)
    async with app.run_test(size=(100, 30)) as pilot:
        editor = app.screen.query_one(PromptEditor)
        burst(app, "fix bug 2\r")
        await wait_for(pilot, lambda: len(llm.requests) == 1)
        await wait_for(pilot, lambda: app.agent is not None and not app.agent.running)
        assert editor.text == ""
        # Two prompts in one read: the second arrives while the first runs (it is queued).
        burst(app, "warm\rlong please\r")
        await wait_for(pilot, lambda: len(llm.requests) == 3)
        await wait_for(pilot, lambda: app.agent is not None and not app.agent.running)
        assert editor.text == ""
    assert user_texts(app) == ["fix bug 2", "warm", "long please"]


class _Recorder(App[None]):
    """A text area and an app-level priority binding that records what the area holds."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+s", "record", "Record", priority=True)]

    def __init__(self) -> None:
        super().__init__()
        self.router = KeyRouter(self)
        self.recorded: list[str] = []

    def compose(self) -> ComposeResult:
        yield TextArea(id="area")

    def on_mount(self) -> None:
        self.router.start()
        self.query_one(TextArea).focus()

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded:
            await self.router.route(event)
        await super().on_event(event)

    def action_record(self) -> None:
        self.recorded.append(self.query_one(TextArea).text)


async def test_a_priority_binding_acts_after_the_keys_before_it() -> None:
    """Textual runs a priority binding when the app reads the key; the router makes it wait
    for the focused widget to insert what was typed before it."""
    app = _Recorder()
    async with app.run_test() as pilot:
        burst(app, "abc")
        app.post_message(events.Key("ctrl+s", None))
        burst(app, "de")
        app.post_message(events.Key("ctrl+s", None))
        await wait_for(pilot, lambda: len(app.recorded) == 2)
    assert app.recorded == ["abc", "abcde"]


def held_session(tmp_path: Path) -> tuple[SessionStore, SessionStore]:
    """(a holder, a second store of the same file: read-only)."""
    path = copy_fixture("pi-v3-branches.jsonl", tmp_path)
    holder = SessionStore.open(path)
    return holder, SessionStore.open(path)


async def test_typing_on_into_the_read_only_refusal_never_clones(tmp_path: Path) -> None:
    """A prompt sent in a read-only view opens the refusal (c clones, f forks); the ``c`` of a
    ``/compact`` typed on in the same burst goes to the editor. After a pause, ``c`` clones."""
    holder, store = held_session(tmp_path)
    try:
        app = make_app(store, cwd=tmp_path)
        async with app.run_test(size=(110, 32)) as pilot:
            await wait_for(pilot, lambda: screen_up(app, MainScreen))
            editor = app.screen.query_one(PromptEditor)
            burst(app, "hello")
            enter = key_event("\r")
            app.post_message(enter)
            await wait_for(pilot, lambda: screen_up(app, ReadOnlyScreen))
            # The typist goes on, a key every 50 ms after the Enter (the keys' own times: the
            # router judges the pause from when keys were read, whatever the machine's load).
            for i, character in enumerate("/compact", 1):
                key = key_event(character)
                key.time = enter.time + 0.05 * i
                app.post_message(key)
            await pilot.pause(0.1)
            assert isinstance(app.screen, ReadOnlyScreen)
            assert app.store is store  # nothing was cloned
            await wait_for(pilot, lambda: editor.text == "hello/compact")
            # The burst is over a pause after its last key's own time (set above, ahead of now).
            last_key = enter.time + 0.05 * len("/compact")
            await asyncio.sleep(max(0.0, last_key + TYPING_PAUSE + 0.1 - time.monotonic()))
            await pilot.press("c")  # deliberate: clones
            await wait_for(pilot, lambda: app.store is not store)
    finally:
        holder.close()


async def test_keys_that_arrived_before_a_dialog_showed_do_not_answer_it(
    tmp_path: Path,
) -> None:
    """A key read before the dialog's first frame never answers it, also when nothing was
    being typed (it is dropped), while a key after a pause does."""
    holder, store = held_session(tmp_path)
    try:
        app = make_app(store, cwd=tmp_path)
        async with app.run_test(size=(110, 32)) as pilot:
            await wait_for(pilot, lambda: screen_up(app, MainScreen))
            early = events.Key("c", "c")  # read now, handled after the dialog is pushed
            await asyncio.sleep(TYPING_PAUSE + 0.1)
            app.refuse_write()  # the dialog opens (as after a refused prompt)
            app.post_message(early)
            await pilot.pause(0.2)
            assert isinstance(app.screen, ReadOnlyScreen)
            assert app.store is store
            await pilot.press("escape")
            await wait_for(pilot, lambda: screen_up(app, MainScreen))
    finally:
        holder.close()


def test_an_unbracketed_paste_is_told_from_typing() -> None:
    from pitui.ui.keys import UnbracketedPaste

    reads = UnbracketedPaste()
    assert reads.text("fix bug 2\r") is None  # typing and its Enter, coalesced
    assert reads.text("\r") is None
    assert reads.text("\rnext") is None  # Enter, then typing on: not a paste
    assert reads.text("\r\r") is None
    assert reads.text("line one\rline two\r") == "line one\nline two\n"
    assert reads.text("a\r\nb") == "a\nb"
    assert reads.text("\x1b[Aup\rdown") is None  # keys with escape sequences: typed
    assert reads.text("x\x01\ry") is None  # a control key: typed
    # A bracketed paste split over reads is Textual's (one paste event), line breaks and all.
    assert reads.text("\x1b[200~first\r") is None
    assert reads.text("second\rthird") is None
    assert reads.text("\x1b[201~") is None
    assert reads.text("after\rwards") == "after\nwards"
    # ... also when a marker itself is split between two reads.
    assert reads.text("\x1b[20") is None
    assert reads.text("0~in\rside") is None
    assert reads.text("\x1b[201~") is None
    # A read that continues an escape sequence is never a paste.
    assert reads.text("1;5A\rx", mid_sequence=True) is None


async def test_keys_typed_while_the_focus_lands_reach_the_editor(
    app_factory: Callable[..., PituiApp],
) -> None:
    """Just after start the focus can be nowhere when a key is read and on the editor when it
    is handled: the key went to the screen, and must still be typed (the first one was lost)."""
    app = app_factory(model=None)
    async with app.run_test(size=(100, 30)) as pilot:
        editor = app.screen.query_one(PromptEditor)
        app.screen.set_focus(None)
        burst(app, "next step")
        editor.focus()
        await wait_for(pilot, lambda: editor.text == "next step")
