"""/fork, /clone, /new, /name, /label and /export from the prompt editor."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.screens import command, messages_shown, screen_up, wait_for
from textual.pilot import Pilot
from textual.widgets import OptionList

from pitui.session import SessionStore
from pitui.ui.app import PituiApp
from pitui.ui.screens.fork_picker import ForkPickerScreen
from pitui.ui.screens.main import MainScreen
from pitui.ui.widgets.prompt import PromptEditor

SIZE = (110, 32)


def export_page_data(path: Path) -> dict[str, Any]:
    """The data an HTML export's page renders (zlib-compressed JSON in base64)."""
    import base64
    import re
    import zlib

    found = re.search(r'id="pitui-data">([^<]*)</script>', path.read_text())
    assert found is not None
    data: dict[str, Any] = json.loads(zlib.decompress(base64.b64decode(found.group(1))))
    return data


def said(app: PituiApp, start: str) -> bool:
    return any(message.startswith(start) for message in messages_shown(app))


async def swapped(pilot: Pilot[int], before: SessionStore) -> None:
    """Wait until the app shows a session other than ``before`` in the main screen, with the
    prompt editor filled in as the command leaves it."""
    app = pilot.app
    await wait_for(pilot, lambda: app.store is not before and isinstance(app.screen, MainScreen))
    await pilot.pause()


async def test_clone_creates_a_file_and_switches_to_it(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    old_path = app.store.path
    old_messages = app.store.project().messages
    async with app.run_test(size=SIZE) as pilot:
        before = app.store
        await command(pilot, "/clone")
        await swapped(pilot, before)
        assert app.store.path != old_path and app.store.path is not None
        assert app.store.path.is_file()
        assert app.store.parent_session == str(old_path)
        assert app.store.project().messages == old_messages


async def test_fork_at_a_root_user_message_gives_an_empty_session(
    app_factory: Callable[..., PituiApp], tmp_path: Path
) -> None:
    store = SessionStore.create(tmp_path / "sessions", str(tmp_path))
    first = store.append_message(
        {
            "role": "user",
            "content": [{"type": "text", "text": "the very first prompt"}],
            "timestamp": 1,
        }
    )
    store.append_message({"role": "user", "content": "second", "timestamp": 2})
    from conftest import make_app

    app = make_app(store, model=None)
    async with app.run_test(size=SIZE) as pilot:
        await command(pilot, "/fork")
        await wait_for(pilot, lambda: screen_up(app, ForkPickerScreen))
        options = app.screen.query_one(OptionList)
        options.highlighted = 0
        await pilot.press("enter")
        await swapped(pilot, store)
        assert isinstance(app.screen, MainScreen)
        assert len(app.store) == 0  # a root user message: the new session starts empty
        assert app.store.parent_session == str(store.path)
        assert app.screen.query_one(PromptEditor).text == "the very first prompt"
        # The file appears with the first message, as for any new session.
        assert not app.store.persisted
    assert first


async def test_fork_at_a_later_message_copies_the_path_before_it(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    messages = app.store.user_messages()
    target_id, target_text = messages[1]
    parent = app.store.node(target_id).parent
    assert parent is not None
    expected = [n.id for n in app.store.path_to(parent.id)]
    async with app.run_test(size=SIZE) as pilot:
        before = app.store
        await command(pilot, "/fork")
        await wait_for(pilot, lambda: screen_up(app, ForkPickerScreen))
        options = app.screen.query_one(OptionList)
        options.highlighted = 1
        await pilot.press("enter")
        await swapped(pilot, before)
        assert [n.id for n in app.store.path_to()] == expected
        assert app.store.path is not None and app.store.path.is_file()
        assert app.screen.query_one(PromptEditor).text == target_text


async def test_name_label_new_and_export(
    app_factory: Callable[..., PituiApp], tmp_path: Path
) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    leaf = app.store.leaf_id
    async with app.run_test(size=SIZE) as pilot:
        await command(pilot, "/name Tree widget work")
        await wait_for(pilot, lambda: app.store.session_name is not None)
        assert app.store.session_name == "Tree widget work"
        await command(pilot, "/label checkpoint")
        await wait_for(pilot, lambda: app.store.label_of(leaf or "") is not None)
        assert app.store.label_of(leaf or "") == "checkpoint"
        html_path = tmp_path / "exported.html"
        await command(pilot, f"/export html {html_path}")
        await wait_for(pilot, lambda: said(app, "Exported html"))
        assert export_page_data(html_path)["meta"]["title"] == "Tree widget work"
        jsonl_path = tmp_path / "branch.jsonl"
        await command(pilot, f"/export jsonl {jsonl_path}")
        await wait_for(pilot, lambda: said(app, "Exported jsonl"))
        lines = jsonl_path.read_text().splitlines()
        assert json.loads(lines[0])["type"] == "session"
        assert len(lines) - 1 == len(app.store.path_to())
        old = app.store.path
        before = app.store
        await command(pilot, "/new")
        await swapped(pilot, before)
        assert app.store.path != old and len(app.store) == 0
