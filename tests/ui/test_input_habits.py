"""Pilot tests for a terminal user's habits (issue 11, item 5): mouse selection and Ctrl+C, keys
that always reach the editor, scrolling the chat from the editor with a "new messages below"
marker, newline keys and the one-time hint, the slash-command dropdown."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

import pytest
from support.llm_server import ScriptedLLMServer, slow, text
from support.screens import wait_for
from support.turns import fill_turns
from textual.app import App
from textual.pilot import Pilot

from pitui.session import SessionStore
from pitui.ui.app import PituiApp
from pitui.ui.keys import NEWLINE_HINT, reports_shift_enter
from pitui.ui.screens.main import NEW_BELOW, NewBelowMarker
from pitui.ui.textual_patches.keys import teach_textual_enter_keys
from pitui.ui.widgets.chat import AssistantBlock, ChatView, NoteBlock, ToolBlock, UserBlock
from pitui.ui.widgets.prompt import CommandMenu, PromptEditor

SIZE = (100, 30)


def _tool_turn(store: SessionStore) -> None:
    store.append_message({"role": "user", "content": [{"type": "text", "text": "list files"}]})
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}
    store.append_message(
        {"role": "assistant", "content": [call], "stopReason": "toolUse"},
    )
    output = "\n".join(f"file{i}.py" for i in range(12))
    store.append_message(
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "bash",
            "content": [{"type": "text", "text": output}],
            "isError": False,
        }
    )


def notes(app: PituiApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


def fake_pyperclip(monkeypatch: pytest.MonkeyPatch, works: bool) -> tuple[list[str], list[str]]:
    """(what reached pyperclip, what went out as OSC 52)."""
    clipboard: list[str] = []
    osc: list[str] = []

    def copy(text: str) -> None:
        if not works:
            raise RuntimeError("no clipboard mechanism")
        clipboard.append(text)

    fake = types.ModuleType("pyperclip")
    fake.copy = copy  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pyperclip", fake)
    monkeypatch.setattr(App, "copy_to_clipboard", lambda self, text: osc.append(text))
    return clipboard, osc


async def drag(
    pilot: Pilot[Any], widget: Any, start: tuple[int, int], end: tuple[int, int]
) -> None:
    """A mouse selection: press, move, release."""
    await pilot.mouse_down(widget, offset=start)
    await pilot.hover(widget, offset=end)
    await pilot.mouse_up(widget, offset=end)
    await pilot.pause()


# ---------------------------------------------------------------------------------- Ctrl+C


@pytest.mark.parametrize("works", [True, False])
async def test_selecting_in_the_chat_and_ctrl_c_copies_and_says_how(
    app_factory: Callable[..., PituiApp], monkeypatch: pytest.MonkeyPatch, works: bool
) -> None:
    clipboard, osc = fake_pyperclip(monkeypatch, works)
    app = app_factory(model=None)
    app.store.append_message(
        {"role": "user", "content": [{"type": "text", "text": "select these words please"}]}
    )
    async with app.run_test(size=SIZE) as pilot:
        await app.query_one(ChatView).wait_idle()
        await pilot.pause()
        block = app.query_one(UserBlock)
        await drag(pilot, block, (1, 0), (18, 0))  # "select these word"
        assert app.screen.get_selected_text() == "select these word"
        editor = app.query_one(PromptEditor)
        assert editor.has_focus  # selecting did not take the focus
        await pilot.press("ctrl+c")
        await pilot.pause()
        copied = clipboard if works else osc
        assert copied == ["select these word"]
        assert (osc if works else clipboard) == []
        expected = (
            "Copied to the clipboard."
            if works
            else "Copied through the terminal (OSC 52); your terminal must allow clipboard access."
        )
        assert notes(app)[-1] == expected
        assert "Do you want to quit?" not in [str(n.title) for n in app._notifications]
        await pilot.press(*"typed")  # typing after the selection lands in the editor
        assert editor.text == "typed"


async def test_a_selection_in_a_markdown_reply_is_copied(
    app_factory: Callable[..., PituiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    clipboard, _ = fake_pyperclip(monkeypatch, works=True)
    app = app_factory(model=None)
    app.store.append_message({"role": "user", "content": [{"type": "text", "text": "q"}]})
    app.store.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Some **bold** answer here\n\nsecond"}],
            "stopReason": "stop",
        }
    )
    async with app.run_test(size=SIZE) as pilot:
        await app.query_one(ChatView).wait_idle()
        await pilot.pause()
        text = app.query_one(AssistantBlock).view
        await drag(pilot, text, (0, 0), (10, 0))
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert clipboard == ["Some bold a"]  # the text as shown, not the Markdown source
        # and across lines: from "answer" to the second paragraph's "sec"
        await drag(pilot, text, (10, 0), (3, 2))
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert clipboard[-1] == "answer here\n\nseco"  # the end cell is included
        assert app.query_one(PromptEditor).has_focus


async def test_ctrl_c_copies_the_editors_selection_with_the_same_mechanism(
    app_factory: Callable[..., PituiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    clipboard, osc = fake_pyperclip(monkeypatch, works=True)
    app = app_factory(model=None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hello world", "shift+home", "ctrl+c")
        await pilot.pause()
        assert clipboard == ["hello world"] and osc == []
        assert notes(app)[-1] == "Copied to the clipboard."


async def test_ctrl_c_with_nothing_selected_keeps_textuals_quit_note(
    app_factory: Callable[..., PituiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    clipboard, osc = fake_pyperclip(monkeypatch, works=True)
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert clipboard == [] and osc == []
        assert [str(n.title) for n in app._notifications] == ["Do you want to quit?"]
        assert app.is_running


async def test_ctrl_c_aborts_a_run_even_with_a_selection(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    clipboard, osc = fake_pyperclip(monkeypatch, works=True)
    # Slow enough that the run is still going when Ctrl+C comes, on a loaded machine too.
    llm.script(slow("alpha beta gamma delta epsilon zeta eta theta", 0.5))
    app = app_factory(llm_url=llm.url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go", "enter")
        view = app.query_one(ChatView)
        await wait_for(
            pilot, lambda: "beta" in "".join(b.source for b in view.query(AssistantBlock))
        )
        await drag(pilot, view.query_one(UserBlock), (1, 0), (2, 0))
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: app.agent is not None and not app.agent.running)
        await view.wait_idle()
        await pilot.pause()
        assert [str(n.visual) for n in view.query(NoteBlock)] == ["Aborted."]
        assert clipboard == [] and osc == []
        stored = app.store.data(app.store.path_to()[-1])["message"]
        assert stored["stopReason"] == "aborted"


# ---------------------------------------------------------------------------------- focus


async def test_clicks_in_the_chat_never_take_the_focus_from_the_editor(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory(model=None)
    _tool_turn(app.store)
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(ChatView)
        await view.wait_idle()
        await pilot.pause()
        editor = app.query_one(PromptEditor)
        tool = view.query_one(ToolBlock)
        typed = ""
        for target in (tool, view.query_one(UserBlock), view):
            await pilot.click(target, offset=(2, 0))
            assert editor.has_focus, target
            await pilot.press("x")
            typed += "x"
            assert editor.text == typed
        assert tool.expanded  # the click still did what it does


async def test_typing_with_the_focus_in_the_chat_goes_to_the_editor(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory(model=None)
    _tool_turn(app.store)
    async with app.run_test(size=SIZE) as pilot:
        await app.query_one(ChatView).wait_idle()
        editor = app.query_one(PromptEditor)
        app.query_one(ToolBlock).focus()  # e.g. Tab moved there
        await pilot.pause()
        await pilot.press(*"hi")
        assert editor.has_focus
        assert editor.text == "hi"


# ---------------------------------------------------------------------------------- scrolling


async def test_chat_scrolls_from_the_editor_and_marks_new_output_below(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory(model=None)
    fill_turns(app.store, 20)
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(ChatView)
        await view.wait_idle()
        await pilot.pause()
        editor = app.query_one(PromptEditor)
        marker = app.query_one(NewBelowMarker)
        bottom = view.max_scroll_y
        assert bottom > 0 and view.scroll_y == bottom
        await pilot.press(*"draft", "pageup")
        await pilot.pause()
        assert view.scroll_y < bottom
        assert editor.has_focus and editor.text == "draft"
        await pilot.press("ctrl+home")
        await pilot.pause()
        assert view.scroll_y == 0
        assert not marker.display  # scrolled up, but nothing new yet
        fill_turns(app.store, 1, "new ")
        await view.wait_idle()
        await pilot.pause()
        assert view.scroll_y == 0  # not dragged down while reading
        assert marker.display
        assert str(marker.visual) == NEW_BELOW
        await pilot.press("ctrl+end")
        await pilot.pause()
        await pilot.pause()
        assert view.scroll_y == view.max_scroll_y
        assert not marker.display
        # At the bottom again: new output is followed, no marker.
        fill_turns(app.store, 3, "later ")
        await view.wait_idle()
        await pilot.pause()
        await pilot.pause()
        assert view.scroll_y == view.max_scroll_y
        assert not marker.display
        # PgUp then PgDn back onto the end follows again.
        await pilot.press("pageup")
        await pilot.pause()
        assert view.scroll_y < view.max_scroll_y
        for _ in range(3):
            await pilot.press("pagedown")
            await pilot.pause()
        assert view.following
        assert editor.text == "draft"


async def test_clicking_the_marker_jumps_to_the_latest(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory(model=None)
    fill_turns(app.store, 20)
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(ChatView)
        await view.wait_idle()
        await pilot.press("ctrl+home")
        fill_turns(app.store, 1, "new ")
        await view.wait_idle()
        await pilot.pause()
        await pilot.click(NewBelowMarker)
        await pilot.pause()
        await pilot.pause()
        assert view.scroll_y == view.max_scroll_y
        assert not app.query_one(NewBelowMarker).display
        assert app.query_one(PromptEditor).has_focus


async def test_sending_a_prompt_scrolls_to_the_bottom(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    llm.script(text("the reply"))
    app = app_factory(llm_url=llm.url)
    fill_turns(app.store, 20)
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(ChatView)
        await view.wait_idle()
        await pilot.press("ctrl+home")
        await pilot.pause()
        assert view.scroll_y == 0
        await pilot.press(*"hello", "enter")
        await wait_for(pilot, lambda: app.agent is not None and not app.agent.running)
        await view.wait_idle()
        await pilot.pause()
        await pilot.pause()
        assert view.scroll_y == view.max_scroll_y
        assert str(view.query(UserBlock).last().visual) == "hello"
        assert view.query(AssistantBlock).last().source == "the reply"
        assert not app.query_one(NewBelowMarker).display


# ---------------------------------------------------------------------------------- newline


def test_alt_enter_is_read_as_alt_enter_not_enter() -> None:
    from textual._xterm_parser import XTermParser

    teach_textual_enter_keys()
    for sequence, key in [
        ("\x1b\r", "alt+enter"),  # xterm, GNOME Terminal, tmux
        ("\r", "enter"),
        ("\n", "ctrl+j"),
        ("\x1b[13;2u", "shift+enter"),  # kitty keyboard protocol
        ("\x1b[13;3u", "alt+enter"),
    ]:
        parser = XTermParser()
        events = [*parser.feed(sequence), *parser.feed("")]
        assert [e.key for e in events] == [key], sequence  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("env", "reported"),
    [
        ({"TERM": "xterm-256color"}, False),
        ({"TERM": "xterm-256color", "TERM_PROGRAM": "gnome-terminal"}, False),
        ({"TERM": "xterm-kitty"}, True),
        ({"TERM": "xterm-256color", "TERM_PROGRAM": "WezTerm"}, True),
        ({"TERM": "xterm-256color", "KITTY_WINDOW_ID": "1"}, True),
        ({"TERM": "foot"}, True),
        ({"TERM": "tmux-256color", "TERM_PROGRAM": "tmux"}, False),
        ({"TERM": "xterm-kitty", "TMUX": "/tmp/tmux-1000/default,1,0"}, False),
        ({}, False),
    ],
)
def test_which_terminals_report_shift_enter(env: dict[str, str], reported: bool) -> None:
    assert reports_shift_enter(env) is reported


async def test_newline_keys_and_the_one_time_hint(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    llm.script(text("Three lines."), text("Again."))
    app = app_factory(llm_url=llm.url)
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        assert not editor.shift_enter_reported  # the tests' terminal is a plain xterm
        assert "Alt+Enter newline" in str(editor.placeholder)
        await pilot.press(*"a", "alt+enter", *"b", "ctrl+j", *"c")
        assert editor.text == "a\nb\nc"
        await pilot.press("enter")
        await pilot.pause()
        hints = [n for n in notes(app) if NEWLINE_HINT in n]
        assert hints == [
            f"Enter sends the prompt. {NEWLINE_HINT} (this terminal sends Shift+Enter as Enter)."
        ]
        assert editor.text == ""  # Enter still sent it
        await pilot.press(*"again", "enter")
        await pilot.pause()
        assert len([n for n in notes(app) if NEWLINE_HINT in n]) == 1  # once per run


async def test_a_reported_shift_enter_is_a_newline_and_ends_the_hint(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory(model=None)
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        await pilot.press(*"a", "shift+enter", *"b")
        assert editor.text == "a\nb"
        assert editor.shift_enter_reported
        assert "Shift+Enter newline" in str(editor.placeholder)
        await pilot.press("enter")
        await pilot.pause()
        assert not [n for n in notes(app) if NEWLINE_HINT in n]


async def test_no_hint_in_a_terminal_that_reports_shift_enter(
    app_factory: Callable[..., PituiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERM", "xterm-kitty")
    app = app_factory(model=None)
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        assert "Shift+Enter newline" in str(editor.placeholder)
        await pilot.press(*"hello", "enter")
        await pilot.pause()
        assert not [n for n in notes(app) if NEWLINE_HINT in n]


# ---------------------------------------------------------------------------------- dropdown


def menu_rows(app: PituiApp) -> list[str]:
    menu = app.query_one(CommandMenu)
    return [str(menu.get_option_at_index(i).prompt) for i in range(menu.option_count)]


async def test_slash_dropdown_lists_moves_completes_and_closes(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory(model=None)
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        menu = app.query_one(CommandMenu)
        assert not menu.display
        await pilot.press("slash", "c")
        await pilot.pause()
        assert menu.display
        rows = menu_rows(app)
        assert [r.split()[0] for r in rows] == ["/clone", "/compact", "/context", "/copy"]
        assert "Copy the active branch into a new session" in rows[0]
        assert menu.highlighted == 0
        await pilot.press("down", "down")
        await pilot.pause()
        assert menu.highlighted == 2 and editor.menu_index == 2
        await pilot.press("up")
        await pilot.pause()
        assert menu.highlighted == 1
        await pilot.press("tab")  # the highlighted entry
        assert editor.text == "/compact "
        await pilot.pause()
        assert not menu.display
        # Esc closes the dropdown only (no abort, no tree); typing opens it again.
        editor.text = ""
        await pilot.press("slash", "t")
        await pilot.pause()
        assert menu.display
        await pilot.press("escape")
        await pilot.pause()
        assert not menu.display and editor.text == "/t"
        await pilot.press("r")
        await pilot.pause()
        assert menu.display and [r.split()[0] for r in menu_rows(app)] == ["/tree"]
        assert editor.has_focus


async def test_tab_on_an_ambiguous_prefix_completes_the_common_part(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory(model=None)
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        editor.command_help = {"session": "", "sessions-list": "", "settings": ""}
        editor.commands = sorted(editor.command_help)
        await pilot.press("slash", "s", "e", "s")
        await pilot.pause()
        await pilot.press("tab")
        assert editor.text == "/session"  # common to /session and /sessions-list
        await pilot.press("tab")  # nothing more in common: the highlighted entry
        assert editor.text == "/session "


async def test_enter_in_the_dropdown_runs_a_command_without_arguments(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory(model=None)
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        await pilot.press("slash", "h", "e", "enter")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "HelpScreen")
        assert editor.text == ""
        await pilot.press("escape")
        await pilot.pause()
        # A command with an argument is completed and waits for it.
        await pilot.press("slash", "n", "a", "enter")
        await pilot.pause()
        assert editor.text == "/name "
        assert type(app.screen).__name__ == "MainScreen"


async def test_clicking_a_dropdown_entry_completes_it(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory(model=None)
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        await pilot.press("slash", "c", "o")
        await pilot.pause()
        await pilot.click(CommandMenu, offset=(3, 2))  # the third row: /copy
        await pilot.pause()
        assert editor.text == "/copy "
        assert editor.has_focus


async def test_recalled_prompts_open_no_dropdown(app_factory: Callable[..., PituiApp]) -> None:
    app = app_factory(model=None)
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        editor.prompt_history = ["/tree", "/help"]
        await pilot.press("up")
        await pilot.pause()
        assert editor.text == "/help"
        assert not app.query_one(CommandMenu).display
        await pilot.press("up")  # still walks the history
        assert editor.text == "/tree"


# ---------------------------------------------------------------------------------- start-up


async def test_the_editor_has_the_focus_from_the_start_and_the_chat_never_gets_it(
    app_factory: Callable[..., PituiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Textual's auto focus would focus the chat first (restyling every block in it before the
    first frame) and hand it to the editor a moment later: the editor gets it at once."""
    from textual.widget import Widget

    app = app_factory(model=None)
    fill_turns(app.store, 20)
    chat_focus: list[bool] = []

    def watch_has_focus(self: ChatView, value: bool) -> None:
        chat_focus.append(value)
        Widget.watch_has_focus(self, value)

    monkeypatch.setattr(ChatView, "watch_has_focus", watch_has_focus, raising=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.focused, PromptEditor)
        await pilot.press("h", "i")
        assert app.query_one(PromptEditor).text == "hi"
    assert chat_focus == []
