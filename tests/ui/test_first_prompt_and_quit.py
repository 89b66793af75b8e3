"""The first prompt of a run while litellm still imports (a model on litellm's route: its
``api`` setting says ``litellm``), and quitting (Pilot).

The user message and the spinner show at once, before the import ends, and the request goes
out when it has; Ctrl+Q closes the session (the leaf marker, the lock) and does not wait for
an import still under way."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.llm_server import ScriptedLLMServer, text
from support.screens import wait_for

from pitui.llm import lazy
from pitui.session import LEAF_MARKER_TYPE, SessionStore
from pitui.ui.app import PituiApp
from pitui.ui.widgets.chat import UserBlock
from pitui.ui.widgets.status import StatusLine

SIZE = (100, 30)
#: The scripted OpenAI-compatible server, reached through litellm.
THROUGH_LITELLM = {"models": {"openai/test-model": {"api": "litellm"}}}


@pytest.fixture
def slow_import(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """The background import of litellm does not end until the test sets the event."""
    real = lazy.litellm()  # imported now; the app's preload then waits for the test
    release = threading.Event()
    monkeypatch.setattr(lazy, "_ready", threading.Event())
    monkeypatch.setattr(lazy, "_preload", None)
    monkeypatch.setattr(lazy, "_module", None)

    def prepare() -> None:
        release.wait(60)
        lazy._module = real
        lazy._ready.set()

    monkeypatch.setattr(lazy, "_prepare", prepare)
    yield release
    release.set()


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_bytes().splitlines()]


def user_texts(app: PituiApp) -> list[str]:
    return [str(block.visual) for block in app.query(UserBlock)]


async def test_the_message_and_the_spinner_show_before_the_import_ends(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer, slow_import: threading.Event
) -> None:
    llm.script(text("the answer"))
    app = app_factory(llm_url=llm.url, settings=THROUGH_LITELLM)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hello", "enter")
        await wait_for(pilot, lambda: user_texts(app) == ["hello"])
        assert "working" in app.query_one(StatusLine).render_text()
        assert not lazy.loaded() and llm.requests == []  # the import is still under way
        slow_import.set()
        await wait_for(pilot, lambda: app.agent is not None and not app.agent.running)
        assert len(llm.requests) == 1
        # the status line hears of the end through its own event: it stops "working" then
        await wait_for(pilot, lambda: "working" not in app.query_one(StatusLine).render_text())


async def test_quit_while_the_import_runs_stores_the_prompt_and_releases_the_lock(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer, slow_import: threading.Event
) -> None:
    app = app_factory(llm_url=llm.url, settings=THROUGH_LITELLM)
    path = app.store.path
    assert path is not None
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hello", "enter")
        await wait_for(pilot, lambda: user_texts(app) == ["hello"])
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: app.return_code is not None)
    assert app.return_code == 0
    assert not slow_import.is_set()  # the app did not wait for the import
    assert llm.requests == []
    messages = [e["message"] for e in lines(path) if e.get("type") == "message"]
    user, reply = messages[-2:]
    assert user["role"] == "user" and user["content"][0]["text"] == "hello"
    assert reply["role"] == "assistant" and reply["stopReason"] == "aborted"
    assert not path.with_name(path.name + ".lock").exists(), "the lock note stayed"
    again = SessionStore.open(path)
    assert not again.read_only, again.read_only_reason
    again.close()


async def test_ctrl_q_writes_the_leaf_marker_and_releases_the_lock(tmp_path: Path) -> None:
    """The leaf moved without an append: quitting records it."""
    from pitui.config.settings import Settings

    path = tmp_path / "s.jsonl"
    store = SessionStore.create_at(path, str(tmp_path))
    first = store.append_message({"role": "user", "content": "one", "timestamp": 1})
    store.append_message({"role": "user", "content": "two", "timestamp": 2})
    store.close()
    store = SessionStore.open(path)
    app = PituiApp(store, settings=Settings.from_dict({"ui": {"cursorBlink": False}}), cwd=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        store.branch(first)
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: app.return_code is not None)
    assert app.return_code == 0
    last = lines(path)[-1]
    assert last["customType"] == LEAF_MARKER_TYPE and last["parentId"] == first
    assert not path.with_name(path.name + ".lock").exists()
