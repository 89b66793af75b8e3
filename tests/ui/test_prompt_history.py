"""Prompt history through the TUI: kept across sessions of a project, Up/Down with the draft
given back, Up only from the first line, and Ctrl+R's reverse search."""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path

from conftest import make_app
from support.screens import SIZE, wait_for

from pitui.config.history import PromptHistory
from pitui.session import SessionStore
from pitui.ui.app import PituiApp
from pitui.ui.widgets.prompt import PromptEditor


def new_app(tmp_path: Path) -> PituiApp:
    """A new session in the project ``tmp_path/project`` (no model: nothing is sent)."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    store = SessionStore.create(tmp_path / "sessions", str(project))
    return make_app(store, model=None)


async def test_prompts_of_earlier_sessions_come_back_in_a_new_one(tmp_path: Path) -> None:
    app = new_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        for prompt in ("first question", "fix it", "second question"):
            await pilot.press(*prompt, "enter")
            await pilot.pause()
            editor.text = ""  # no model: a prompt stays in the editor, not sent
        file = PromptHistory.for_project(tmp_path / "project").path
        await wait_for(pilot, lambda: file.is_file() and len(file.read_bytes().splitlines()) == 3)
    assert stat.S_IMODE(file.stat().st_mode) == 0o600

    app = new_app(tmp_path)  # another session in the same project
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        await pilot.press("up")
        assert editor.text == "second question"
        await pilot.press("up")
        assert editor.text == "fix it"
        await pilot.press("up")
        assert editor.text == "first question"


async def test_walking_away_from_a_draft_never_loses_it(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory(model=None)
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        editor.prompt_history = ["older", "newer"]
        await pilot.press(*"half-typed idea")
        await pilot.press("up")
        assert editor.text == "newer"
        await pilot.press("up")
        assert editor.text == "older"
        await pilot.press("down", "down")
        assert editor.text == "half-typed idea"
        await pilot.press("down")  # past the draft: nothing more, nothing lost
        assert editor.text == "half-typed idea"
        # An edited recalled prompt is the draft from then on.
        await pilot.press("up", "end", *" plus", "up")
        assert editor.text == "newer"
        await pilot.press("down")
        assert editor.text == "newer plus"


async def test_up_moves_the_cursor_in_a_multi_line_prompt_until_its_first_line(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory(model=None)
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        editor.prompt_history = ["earlier"]
        await pilot.press(*"one", "ctrl+j", *"two", "ctrl+j", *"three")
        await pilot.press("up")
        assert editor.text == "one\ntwo\nthree"
        assert editor.cursor_location[0] == 1
        await pilot.press("up")
        assert editor.cursor_location[0] == 0
        await pilot.press("up")  # on the first line: the history
        assert editor.text == "earlier"
        await pilot.press("down")
        assert editor.text == "one\ntwo\nthree"


async def test_up_on_a_long_wrapped_first_line_moves_within_it_first(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory(model=None)
    async with app.run_test(size=(60, 24)) as pilot:
        editor = app.query_one(PromptEditor)
        editor.prompt_history = ["earlier"]
        long = "word " * 30  # wraps over three rows of the editor
        await pilot.press(*long.strip())
        await pilot.press("up")
        assert editor.text == long.strip()  # the cursor went up a visual row
        await wait_for(pilot, lambda: editor.cursor_location[1] < len(long.strip()))


async def test_ctrl_r_searches_the_history_like_a_shell(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory(model=None)
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        editor.prompt_history = ["run the tests", "fix the parser", "explain the tests", "hi"]
        await pilot.press(*"draft", "ctrl+r", *"tes")
        assert editor.text == "explain the tests"
        assert editor.selected_text == "tes"
        assert "(reverse-i-search)`tes'" in str(editor.border_subtitle)
        await pilot.press("ctrl+r")
        assert editor.text == "run the tests"
        await pilot.press("ctrl+r")  # nothing older: the search fails, the match stays
        assert editor.text == "run the tests"
        assert "failing reverse-i-search" in str(editor.border_subtitle)
        await pilot.press("ctrl+s")
        assert editor.text == "explain the tests"
        await pilot.press("backspace", "backspace", "backspace", *"PARS")
        # A capital makes it case-sensitive: nothing matches.
        assert "failing" in str(editor.border_subtitle)
        await pilot.press("backspace", "backspace", "backspace", "backspace", *"pars")
        assert editor.text == "fix the parser"
        await pilot.press("ctrl+g")  # cancelled: the draft is back
        assert editor.text == "draft"
        assert editor.searching is None
        assert editor.border_subtitle is None

        await pilot.press("ctrl+r", *"fix", "escape")  # Esc keeps the match to edit
        assert editor.text == "fix the parser"
        assert editor.searching is None
        assert editor.cursor_location == (0, 3)  # after the matched part, as in a shell
        await pilot.press("end", *" now")
        assert editor.text == "fix the parser now"


async def test_enter_in_the_search_sends_the_match(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory(model=None)
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        editor.prompt_history = ["/help", "something else"]
        sent: list[str] = []
        original = editor.post_message

        def record(message: object) -> bool:
            if isinstance(message, PromptEditor.Submitted):
                sent.append(message.text)
                return True
            return original(message)  # type: ignore[arg-type]

        editor.post_message = record  # type: ignore[method-assign]
        await pilot.press("ctrl+r", *"hel", "enter")
        assert sent == ["/help"]
        assert editor.text == ""
        assert editor.searching is None
