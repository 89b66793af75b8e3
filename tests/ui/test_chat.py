"""Pilot tests for the chat pane: streaming, the stored reply replacing the preview once,
aborts, errors, thinking, tool calls, summaries, the window of blocks, hostile content."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.llm_server import ScriptedLLMServer, error, reasoning, slow, text, tool_call
from support.screens import SIZE, chat, run_finished, terminal_output, wait_for
from support.turns import fill_turns
from textual.content import Content
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Button

from pitui.session import SessionStore
from pitui.text import StreamSanitizer, keep_sgr_only, strip_escapes
from pitui.ui.app import PituiApp
from pitui.ui.sanitize import tool_output_text
from pitui.ui.widgets.bounded import MARKDOWN_CHARS, MoreLine
from pitui.ui.widgets.chat import (
    FILL_PAUSE,
    FILL_SLICE,
    PRUNE_SLACK,
    WINDOW,
    AssistantBlock,
    ChatView,
    NoteBlock,
    SummaryBlock,
    ThinkingBlock,
    ToolBlock,
    UserBlock,
)
from pitui.ui.widgets.markdown_view import MarkdownView
from pitui.ui.widgets.prompt import PromptEditor

HOSTILE = (
    "markup [bold]not bold[/] and [x[0]] and [/ "
    "\x1b[31mred\x1b[0m cursor\x1b[2;5Hmove\x1b[5A "
    "title\x1b]0;PWNED-TITLE\x07 clip\x1b]52;c;cHduZWQ=\x07 done"
)


def assistant_sources(app: PituiApp) -> list[str]:
    return [b.source for b in chat(app).query(AssistantBlock)]


# ---------------------------------------------------------------------------------- streaming


async def test_streamed_reply_appears_and_is_replaced_by_one_stored_block(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    llm.script(slow("Hello **world** one two three four five six seven", 0.1))
    app = app_factory(llm_url=llm.url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"say hello", "enter")
        # Partial text before the end: the preview is a streamed Markdown block.
        await wait_for(pilot, lambda: bool(chat(app).query(AssistantBlock)))
        preview = chat(app).query_one(AssistantBlock)
        assert preview.has_class("-streaming")
        await wait_for(pilot, lambda: "one" in preview.source)
        assert app.agent is not None and app.agent.running
        assert "seven" not in preview.source
        await run_finished(pilot, app)
        blocks = list(chat(app).query(AssistantBlock))
        assert len(blocks) == 1
        assert not blocks[0].has_class("-streaming")
        assert blocks[0].source == "Hello **world** one two three four five six seven"
        assert [type(w).__name__ for w in chat(app).children] == ["UserBlock", "AssistantBlock"]


async def test_two_turns_give_two_assistant_blocks(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    llm.script(text("first answer"), text("second answer", chunks=5))
    app = app_factory(llm_url=llm.url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"one", "enter")
        await run_finished(pilot, app)
        await pilot.press(*"two", "enter")
        await run_finished(pilot, app)
        assert assistant_sources(app) == ["first answer", "second answer"]
        assert len(chat(app).query(UserBlock)) == 2
        # A rebuild from the store shows the same.
        await chat(app).rebuild()
        await pilot.pause()
        assert assistant_sources(app) == ["first answer", "second answer"]


async def test_exit_mid_stream_leaves_no_pending_stream_task(
    app_factory: Callable[..., PituiApp],
    llm: ScriptedLLMServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    llm.script(text("warm up"), slow("a b c d e f g h i j k l m n o p", 0.1))
    app = app_factory(llm_url=llm.url)
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press(*"one", "enter")
            await run_finished(pilot, app)
            await pilot.press(*"two", "enter")
            await wait_for(pilot, lambda: "c" in "".join(assistant_sources(app)[1:]))
        gc.collect()
        await asyncio.sleep(0.05)
        gc.collect()
    assert not [r for r in caplog.records if "Task was destroyed" in r.getMessage()]


async def test_escape_aborts_a_slow_reply(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    llm.script(slow("alpha beta gamma delta epsilon zeta eta theta", 0.15))
    app = app_factory(llm_url=llm.url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go", "enter")
        await wait_for(pilot, lambda: "beta" in "".join(assistant_sources(app)))
        await pilot.press("escape")
        await run_finished(pilot, app)
        notes = [str(n.visual) for n in chat(app).query(NoteBlock)]
        assert notes == ["Aborted."]
        blocks = list(chat(app).query(AssistantBlock))
        assert len(blocks) == 1
        assert not blocks[0].has_class("-streaming")
        assert blocks[0].source.startswith("alpha beta")
        assert "theta" not in blocks[0].source
        stored = app.store.data(app.store.path_to()[-1])["message"]
        assert stored["stopReason"] == "aborted"


async def test_provider_error_is_shown(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    llm.script(error(401, "Invalid API key [bold]x[/]"))
    app = app_factory(llm_url=llm.url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go", "enter")
        await run_finished(pilot, app)
        notes = list(chat(app).query(NoteBlock))
        assert len(notes) == 1
        assert notes[0].has_class("-error")
        shown = str(notes[0].visual)
        assert shown.startswith("Error: ")
        assert "Invalid API key [bold]x[/]" in shown


async def test_thinking_is_collapsed_and_toggles(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    llm.script(reasoning("Let me weigh the options carefully.", then="Use a deque."))
    app = app_factory(llm_url=llm.url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"which?", "enter")
        await run_finished(pilot, app)
        thinking = chat(app).query_one(ThinkingBlock)
        assert thinking.collapsed
        assert thinking.text == "Let me weigh the options carefully."
        assert assistant_sources(app) == ["Use a deque."]
        await pilot.click(ThinkingBlock)
        await pilot.pause()
        assert not thinking.collapsed
        assert app.query_one(PromptEditor).has_focus  # clicking does not steal the focus
        body = thinking.query_one(".thinking-text")
        assert str(body.visual) == "Let me weigh the options carefully."


# ---------------------------------------------------------------------------------- tools


@pytest.mark.slow
async def test_long_tool_call_is_collapsed_and_expands_on_click_and_enter(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    command = "for i in $(seq 1 30); do echo line $i; done  # thirty lines of output"
    llm.script(tool_call("bash", {"command": command}), text("Printed thirty lines."))
    app = app_factory(llm_url=llm.url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"count", "enter")
        await run_finished(pilot, app)
        tools = list(chat(app).query(ToolBlock))
        assert len(tools) == 1  # the running placeholder was replaced by the stored result
        block = tools[0]
        assert not block.running
        assert block.tool_title == f"[bash: {command[:50]}...]"
        assert block.collapsible and not block.expanded
        # The bash tool reports 30 lines, a blank line and the exit code.
        assert block.hidden_lines == block.hidden_above == 27
        output = str(block.query_one(".tool-output").visual)
        # Shell output previews its end, under a note of the lines above it.
        assert output.splitlines() == [
            "▲ 27 earlier lines",
            "line 28",
            "line 29",
            "line 30",
            "",
            "exit code: 0",
        ]
        assert str(block.query_one(".tool-args").visual) == f"$ {command}"
        more = str(block.query_one(".tool-more").visual)
        assert more == "▼ show all lines (click or Enter to expand)"
        await pilot.click(block, offset=(4, 0))
        await pilot.pause()
        assert block.expanded
        output = str(block.query_one(".tool-output").visual)
        assert output.splitlines() == [f"line {i}" for i in range(1, 31)] + ["", "exit code: 0"]
        # Keyboard: focus it and press Enter.
        block.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert not block.expanded
        await pilot.press("enter")
        assert block.expanded
        assert assistant_sources(app) == ["Printed thirty lines."]
        # The first reply was only a tool call: it adds no text block.
        assert [type(w).__name__ for w in chat(app).children] == [
            "UserBlock",
            "ToolBlock",
            "AssistantBlock",
        ]


async def test_short_tool_call_shows_arguments_and_result(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer, tmp_path: Path
) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("alpha\nbeta\n", encoding="utf-8")
    llm.script(tool_call("read", {"path": str(target), "limit": 5}), text("Two lines."))
    app = app_factory(llm_url=llm.url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"read it", "enter")
        await run_finished(pilot, app)
        block = chat(app).query_one(ToolBlock)
        assert not block.collapsible
        assert block.tool_title == f"[read: {target}:1-5]"
        # The path is in the title already; the other arguments are listed.
        assert str(block.query_one(".tool-args").visual) == "limit: 5"
        assert str(block.query_one(".tool-output").visual) == "alpha\nbeta"
        assert not block.query_one(".tool-more").display


@pytest.mark.slow
async def test_bash_output_keeps_colours_but_no_other_escapes(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    command = (
        r"printf '\033[31mred\033[0m plain\n\033]0;PWNED-TITLE\007"
        r"\033]52;c;cHduZWQ=\007\033[2J\033[5Aafter\n'"
    )
    llm.script(tool_call("bash", {"command": command}), text("ok"))
    app = app_factory(llm_url=llm.url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"colours", "enter")
        await run_finished(pilot, app)
        block = chat(app).query_one(ToolBlock)
        content = block.query_one(".tool-output").visual
        assert str(content) == "red plain\nafter\n\nexit code: 0"
        styles = [str(span.style) for span in content.spans]  # type: ignore[attr-defined]
        assert any("red" in style for style in styles)
        output = terminal_output(app)  # the command shows as text; no real escape is written
        assert "\x1b]52" not in output and "\x1b]0;" not in output
        assert "\x1b[5A" not in output and "\x1b[2J" not in output


async def test_a_huge_single_line_is_cut_in_the_preview(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory(model=None)
    store = app.store
    call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "min.js"}}
    store.append_message({"role": "assistant", "content": [call], "stopReason": "toolUse"})
    store.append_message(
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",
            "content": [{"type": "text", "text": "x" * 5000}],
            "isError": True,
        }
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        block = chat(app).query_one(ToolBlock)
        assert block.has_class("-error") and block.collapsible and block.hidden_lines == 0
        shown = str(block.query_one(".tool-output").visual)
        assert len(shown) == 401 and shown.endswith("…")
        more = str(block.query_one(".tool-more").visual)
        assert more == "▼ long lines cut (click or Enter to expand)"
        block.expanded = True
        await pilot.pause()
        assert str(block.query_one(".tool-output").visual) == "x" * 5000


async def test_stored_tool_calls_find_their_arguments(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory("pi-v3-compaction-and-system-prompt.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        titles = [b.tool_title for b in chat(app).query(ToolBlock)]
        assert titles
        assert not any(t.startswith("[tool") for t in titles)
        assert all(b.arguments for b in chat(app).query(ToolBlock))


# ---------------------------------------------------------------------------------- summaries


async def test_compaction_block_is_collapsed_and_expands_to_the_summary(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory("pi-v3-compaction-and-system-prompt.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await chat(app).wait_idle()  # the window is mounted a slice a frame after the first
        blocks = list(chat(app).query(SummaryBlock).filter(".compaction"))
        assert [str(b.title) for b in blocks] == [
            "Compacted from 2,466 tokens",
            "Compacted from 2,179 tokens",
        ]
        block = blocks[-1]
        assert block.collapsed
        block.collapsed = False
        await pilot.pause()
        summary = block.query_one(MarkdownView)
        assert "07-compaction summary #1 (update" in summary.source
        # Rendered as a reply is (the one Markdown renderer): the source's marks are gone.
        assert "07-compaction summary #1 (update" in summary.text


async def test_branch_summaries_are_shown(app_factory: Callable[..., PituiApp]) -> None:
    app = app_factory("pi-v3-branch-summary.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        blocks = list(chat(app).query(SummaryBlock).filter(".branch-summary"))
        assert len(blocks) == 1  # the one on the active branch
        assert blocks[0].collapsed and str(blocks[0].title) == "Branch summary"
        app.store.branch("763216ee")  # the branch that starts with a summary at the root
        await chat(app).wait_idle()
        await pilot.pause()
        blocks = list(chat(app).query(SummaryBlock).filter(".branch-summary"))
        assert len(blocks) == 1
        summary = blocks[0].query_one(MarkdownView)
        assert summary.source.startswith("The user explored a different conversati")


async def test_a_long_summary_shows_more_as_a_reply_does(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory(model=None)
    lines = [f"- point {n:05d} of the summary, kept for later" for n in range(600)]
    summary = "## Goal\n\n" + "\n".join(lines)  # ~28k characters: several parts
    user = app.store.append_message({"role": "user", "content": "hi", "timestamp": 1})
    app.store.append_compaction(summary, user, 99)
    async with app.run_test(size=SIZE) as pilot:
        await chat(app).wait_idle()
        block = chat(app).query(SummaryBlock).last()
        block.collapsed = False
        await pilot.pause()
        view = block.query_one(MarkdownView)
        assert len(view.source) < len(summary) and summary.startswith(view.source)
        presses = 0
        while block.query(MoreLine) and presses < 50:
            block.query_one(MoreLine).action_show_more()
            await pilot.pause()
            presses += 1
        assert presses >= len(summary) // MARKDOWN_CHARS  # a part at a time
        assert view.source == summary
        shown = view.text.split("\n")
        assert shown[0] == "Goal" and shown[-1].endswith(
            "point 00599 of the summary, kept for later"
        )


async def test_leaf_move_rebuilds_the_branch(app_factory: Callable[..., PituiApp]) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert assistant_sources(app)[-1] == "Answering tie sibling 2."
        app.store.branch("c34f19b4")
        await chat(app).wait_idle()
        await pilot.pause()
        assert [str(u.visual) for u in chat(app).query(UserBlock)] == [
            "Let's design the tree widget.",
            "No lazy loading; keep it simple.",
        ]
        assert assistant_sources(app) == ["Sure. Do you want lazy loading?", "OK, eager it is."]


async def test_view_matches_the_store_after_a_burst_of_changes(
    app_factory: Callable[..., PituiApp],
) -> None:
    """Appends and leaf moves published faster than the chat applies them: no duplicate and
    no missing block, whatever the order the queue sees them in."""
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        store = app.store
        view = chat(app)

        def user(text: str) -> dict[str, Any]:
            return {"role": "user", "content": [{"type": "text", "text": text}]}

        store.append_message(user("one"))
        store.branch("c34f19b4")
        store.append_message(user("two"))
        store.append_message({"role": "assistant", "content": "plain", "stopReason": "stop"})
        store.branch("bd49a39b")
        store.branch("c34f19b4")
        store.append_message(user("three"))
        await view.wait_idle()
        await pilot.pause()
        expected = [n.id for n in view.visible_entries()]
        assert [entry_id for entry_id, _ in view._mounted] == expected
        assert [str(u.visual) for u in view.query(UserBlock)] == [
            "Let's design the tree widget.",
            "No lazy loading; keep it simple.",
            "three",
        ]
        assert assistant_sources(app) == ["Sure. Do you want lazy loading?", "OK, eager it is."]


# ---------------------------------------------------------------------------------- window


async def test_long_sessions_mount_a_window_and_load_earlier_entries(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory(model=None)
    fill_turns(app.store, 100)  # 200 entries
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = chat(app)
        await view.wait_idle()  # the window's older part is mounted just after the first frame
        await pilot.pause()
        button = view.query_one("#load-earlier", Button)
        assert str(button.label) == "Show 50 earlier entries"
        assert len(view.query(UserBlock)) + len(view.query(AssistantBlock)) == WINDOW
        assert view.max_scroll_y > 0 and view.scroll_y == view.max_scroll_y
        view.scroll_home(animate=False)
        await pilot.pause()
        await pilot.click("#load-earlier")
        await pilot.pause()
        assert not view.query("#load-earlier")
        users = [str(u.visual) for u in view.query(UserBlock)]
        assert users[0] == "question 0" and len(users) == 100


async def test_the_window_fills_a_slice_a_frame_and_waits_while_another_screen_covers_it(
    app_factory: Callable[..., PituiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the first frame the rest of the window is mounted FILL_SLICE entries at a time
    (keys are handled between slices), and not at all while a screen covers the chat: the
    tree opened at once after start has the interpreter to itself."""
    from textual.screen import Screen

    batches: list[int] = []
    real_mount_all = ChatView.mount_all

    def counting(self: ChatView, widgets: Any, *args: Any, **kwargs: Any) -> Any:
        widgets = list(widgets)
        batches.append(sum(isinstance(w, UserBlock | AssistantBlock) for w in widgets))
        return real_mount_all(self, widgets, *args, **kwargs)

    monkeypatch.setattr(ChatView, "mount_all", counting)
    app = app_factory(model=None)
    fill_turns(app.store, 100)
    async with app.run_test(size=SIZE) as pilot:
        view = chat(app)
        await app.push_screen(Screen())
        mounted = len(view.query(UserBlock)) + len(view.query(AssistantBlock))
        for _ in range(4):
            await pilot.pause(FILL_PAUSE)
        assert len(view.query(UserBlock)) + len(view.query(AssistantBlock)) == mounted
        assert mounted < WINDOW  # the covered chat waited
        app.pop_screen()
        for _ in range(100):  # the slices, one after each refresh
            await pilot.pause(0.01)
            if len(view.query(UserBlock)) + len(view.query(AssistantBlock)) == WINDOW:
                break
        assert len(view.query(UserBlock)) + len(view.query(AssistantBlock)) == WINDOW
    _first_screen, *fills = batches  # the first frame's screenful, then the slices
    assert len(fills) >= 2 and all(0 < n <= FILL_SLICE for n in fills)


async def test_live_appends_prune_the_oldest_blocks(app_factory: Callable[..., PituiApp]) -> None:
    app = app_factory(model=None)
    fill_turns(app.store, WINDOW // 2)  # exactly the window
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = chat(app)
        await view.wait_idle()  # the whole window is mounted
        await pilot.pause()
        assert not view.query("#load-earlier")
        fill_turns(app.store, 30, "more ")  # 60 more entries: past the window and its slack
        # The appends reach the view through the app's queue: wait until the last one shows.
        for _ in range(500):
            await view.wait_idle()
            await pilot.pause()
            answers = view.query(AssistantBlock)
            if answers and answers.last().source == "more answer 29":
                break
        # Past the window and its slack, the oldest were unmounted at once (back to the window).
        button = view.query_one("#load-earlier", Button)
        assert str(button.label) == f"Show {PRUNE_SLACK + 1} earlier entries"
        mounted = len(view.query(UserBlock)) + len(view.query(AssistantBlock))
        assert mounted == WINDOW + 60 - (PRUNE_SLACK + 1)
        assert view.query(AssistantBlock).last().source == "more answer 29"
        # 51 entries pruned: questions 0-25 and answers 0-24.
        assert PRUNE_SLACK + 1 == 51
        assert view.query(UserBlock).first().visual == Content("question 26")
        assert view.query(AssistantBlock).first().source == "answer 25"


async def test_stays_at_the_bottom_while_streaming_unless_scrolled_up(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    words = " ".join(f"w{i}" for i in range(40))
    llm.script(slow(words.replace(" w1", "\n\nw1"), 0.05))
    app = app_factory(llm_url=llm.url)
    fill_turns(app.store, 15)
    async with app.run_test(size=SIZE) as pilot:
        view = chat(app)
        await pilot.press(*"go", "enter")
        await wait_for(pilot, lambda: "w5" in "".join(assistant_sources(app)))
        await pilot.pause()
        assert view.max_scroll_y > 0
        assert view.scroll_y == view.max_scroll_y  # anchored
        height = view.vertical_scrollbar.size.height
        assert max(thumb_rows(view)) == height - 1  # the scrollbar shows it
        view.scroll_to(y=0, animate=False)  # the user scrolls up
        await pilot.pause()
        await wait_for(pilot, lambda: "w19" in "".join(assistant_sources(app)))
        await pilot.pause()
        assert view.scroll_y == 0
        assert min(thumb_rows(view)) == 0
        view.scroll_end(animate=False)  # back at the bottom: anchored again
        await run_finished(pilot, app)
        await pilot.pause()
        assert view.scroll_y == view.max_scroll_y
        assert max(thumb_rows(view)) == height - 1


def thumb_rows(view: ChatView) -> list[int]:
    """The rows of the chat's scrollbar its thumb is painted on (as painted last)."""
    bar = view.vertical_scrollbar
    strips = bar.render_lines(Region(0, 0, bar.size.width, bar.size.height))
    return [
        y
        for y, strip in enumerate(strips)
        if any(s.style and s.style.meta.get("@mouse.down") == "grab" for s in strip)
    ]


# ---------------------------------------------------------------------------------- hostile


def _add_hostile(store: SessionStore) -> None:
    store.append_message({"role": "user", "content": [{"type": "text", "text": HOSTILE}]})
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": HOSTILE}}
    store.append_message(
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": HOSTILE},
                {"type": "text", "text": HOSTILE},
                call,
            ],
            "stopReason": "toolUse",
        }
    )
    store.append_message(
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "bash",
            "content": [{"type": "text", "text": HOSTILE}],
            "isError": False,
        }
    )
    store.append_message(
        {"role": "assistant", "content": [], "stopReason": "error", "errorMessage": HOSTILE}
    )


async def test_hostile_content_is_shown_as_text_and_no_escape_reaches_the_terminal(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory(model=None)
    _add_hostile(app.store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = chat(app)
        expected = strip_escapes(HOSTILE)
        assert "[bold]not bold[/]" in expected and "\x1b" not in expected
        assert str(view.query_one(UserBlock).visual) == expected
        assert view.query_one(AssistantBlock).source == expected
        assert view.query_one(ThinkingBlock).text == expected
        tool = view.query_one(ToolBlock)
        assert str(tool.query_one(".tool-output").visual) == expected
        assert str(view.query_one(NoteBlock).visual) == f"Error: {expected}"
        svg = app.export_screenshot()
        assert "\x1b" not in svg and "&#27;" not in svg
        assert "PWNED" not in svg
        assert "[bold]not&#160;bold[/]" in svg
        output = terminal_output(app)
        for escape in ("\x1b]0;", "\x1b]52", "\x1b[5A", "\x1b[2;5H", "PWNED"):
            assert escape not in output
        # Colours in the tool output are kept as styles.
        spans = tool.query_one(".tool-output").visual.spans  # type: ignore[attr-defined]
        assert any("red" in str(span.style) for span in spans)


def test_sanitizers() -> None:
    assert strip_escapes("a\x1b[31mb\x1b[0mc\x07\x1b]0;t\x07d\x9b") == "abcd"
    assert strip_escapes("10%\r20%\r\n") == "20%\n"
    kept = keep_sgr_only("\x1b\x1b[31mred\x1b[2J\x1b]52;c;eA==\x07\x1b")
    assert kept == "\x1b[31mred"
    assert "\x1b" not in tool_output_text("\x1b\x1b[2J[31m x \x1b").plain
    sanitizer = StreamSanitizer()
    parts = [sanitizer.feed(c) for c in ("ab\x1b[3", "1mcd\x1b]0;ti", "tle\x07ef\r", "\ngh")]
    assert "".join(parts) + sanitizer.flush() == "abcdef\ngh"


async def test_scrolling_far_back_keeps_a_bounded_window(
    app_factory: Callable[..., PituiApp],
) -> None:
    from pitui.ui.widgets.chat import MAX_MOUNTED

    app = app_factory(model=None)
    fill_turns(app.store, 400)  # 800 entries
    async with app.run_test(size=SIZE) as pilot:
        view = chat(app)
        await view.wait_idle()
        await pilot.pause()
        assert len(view._mounted) == WINDOW
        for click in range(1, 5):
            assert await view.load_earlier()
            await pilot.pause()
            mounted = len(view.query(UserBlock)) + len(view.query(AssistantBlock))
            assert mounted == min(WINDOW * (click + 1), MAX_MOUNTED)
        # 4 clicks: entries 50..349 are mounted (the oldest 50 and newest 450 are not).
        users = [str(u.visual) for u in view.query(UserBlock)]
        assert users[0] == "question 25" and users[-1] == "question 174"
        assert str(view.query_one("#load-earlier", Button).label) == "Show 50 earlier entries"
        assert str(view.query_one("#load-later", Button).label) == "Show 450 later entries"
        assert await view.load_earlier()  # the very first entries
        await pilot.pause()
        assert not await view.load_earlier()
        assert not view.query("#load-earlier")
        assert str(view.query(UserBlock).first().visual) == "question 0"
        # "Show later" (or anything new happening) goes back to the newest window.
        view.scroll_end(animate=False)
        await pilot.pause()
        await pilot.click("#load-later")
        await view.wait_idle()
        await pilot.pause()
        assert not view.query("#load-later")
        assert view.query(AssistantBlock).last().source == "answer 399"
        app.store.append_message({"role": "user", "content": [{"type": "text", "text": "new"}]})
        await pilot.pause()
        await view.wait_idle()
        assert str(view.query(UserBlock).last().visual) == "new"


async def test_first_frame_shows_the_newest_entries_and_fills_in_after(
    app_factory: Callable[..., PituiApp],
) -> None:
    from pitui.ui.widgets.chat import FIRST_SCREEN

    app = app_factory(model=None)
    fill_turns(app.store, 100)
    mounted_at_first_frame: list[int] = []

    async with app.run_test(size=SIZE) as pilot:
        view = chat(app)
        mounted_at_first_frame.append(len(view.children))
        await view.wait_idle()
        await pilot.pause()
        assert mounted_at_first_frame[0] <= FIRST_SCREEN + 1  # + the "Show earlier" button
        assert len(view.query(UserBlock)) + len(view.query(AssistantBlock)) == WINDOW
        users = [str(u.visual) for u in view.query(UserBlock)]
        assert users == [f"question {i}" for i in range(25, 100)]  # in order
        assert view.scroll_y == view.max_scroll_y


async def test_the_first_frame_written_already_shows_the_end_of_the_chat(
    app_factory: Callable[..., PituiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Textual's first layout of an anchored view scrolled it by its whole content (it had no
    height yet): the first frame showed an empty chat and the end came a frame later."""
    from textual.screen import Screen

    from pitui.ui.screens.main import MainScreen

    app = app_factory(model=None)
    fill_turns(app.store, 100)
    frames: list[str] = []
    refresh = Screen._compositor_refresh

    def record(screen: Screen[Any]) -> None:
        if isinstance(screen, MainScreen) and not frames:
            frames.append(strip_escapes(terminal_output(app)))
        refresh(screen)

    monkeypatch.setattr(Screen, "_compositor_refresh", record)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert frames
        assert "question 99" in frames[0]
        assert "answer 99" in frames[0]


LONG_REPLY = "\n\n".join(
    [
        f"## Step {i}"
        if i % 5 == 0
        else f"```python\nx = {i}\ny = x + 1\n```"
        if i % 5 == 1
        else f"- item {i}\n- item {i} b"
        if i % 5 == 2
        else f"| a | b |\n|---|---|\n| {i} | {i * 2} |"
        if i % 5 == 3
        else f"Paragraph {i} with `code` and **bold** text that runs on for a while."
        for i in range(70)
    ]
)


async def test_a_long_streamed_reply_looks_like_the_same_text_shown_at_once(
    app_factory: Callable[..., PituiApp],
) -> None:
    """A long reply streamed in small chunks (its last block rendered again at each frame)
    ends up with exactly the lines, styles and height of the same text rendered at once."""
    from pitui.agent.events import MessageDelta, MessageStart, RunEnded

    app = app_factory(model=None)
    async with app.run_test(size=(100, 41)) as pilot:
        view = chat(app)
        publish = app.bridge.on_agent_event
        publish(MessageStart("assistant"))
        for i in range(0, len(LONG_REPLY), 7):
            publish(MessageDelta("text", LONG_REPLY[i : i + 7]))
            if i % 210 == 0:
                await pilot.pause()
        await view.wait_idle()
        await pilot.pause()
        streamed = view.query_one(AssistantBlock)
        step = streamed.view.height_step
        assert step == view.size.height // 4 > 1
        assert streamed.view.region.height % step == 0  # it grew in steps
        assert streamed.view.line_count % step  # (so the height is not the line count)
        assert 0 <= streamed.view.region.height - streamed.view.line_count < step
        publish(RunEnded("done"))  # no stored message (an error): its own height again
        await view.wait_idle()
        await pilot.pause()
        assert streamed.source == LONG_REPLY
        reference = MarkdownView(LONG_REPLY, classes="reference")
        reference.styles.padding = (0, 1)
        reference.styles.margin = (1, 0, 0, 0)
        await view.mount(reference)
        await pilot.pause(0.3)

        def lines(widget: MarkdownView) -> list[list[tuple[str, object]]]:
            return [
                [(seg.text, seg.style) for seg in widget.render_line(y)]
                for y in range(widget.line_count)
            ]

        assert streamed.view.line_count > 200
        assert lines(streamed.view) == lines(reference)
        assert streamed.view.region.height == reference.region.height
        # What was painted while it streamed (Textual's per-widget line cache, kept when only
        # the height changes) is what the same text shows when painted afresh.
        whole = AssistantBlock(LONG_REPLY, classes="reference")
        await view.mount(whole)
        await pilot.pause(0.3)

        def painted(widget: Widget) -> list[list[tuple[str, object]]]:
            region = Region(0, 0, widget.size.width, widget.size.height)
            return [[(s.text, s.style) for s in strip] for strip in widget.render_lines(region)]

        assert painted(streamed.view) == painted(whole.view)
        assert painted(streamed) == painted(whole)
        shown = [strip.text.strip() for strip in map(streamed.view.render_line, range(12))]
        assert shown[:4] == ["Step 0", "", "", "x = 1"]  # a heading, then a fence (padded)
        assert "• item 2" in shown


async def test_only_the_newest_screenful_is_built_before_the_first_frame(
    app_factory: Callable[..., PituiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The older entries of the window are read and built after the first frame, and the
    count of the entries above the window is taken then too."""
    from pitui.ui.widgets.chat import FIRST_SCREEN

    app = app_factory(model=None)
    fill_turns(app.store, 200)  # 400 entries: 250 above the window
    built: list[str] = []
    blocks_for = ChatView.blocks_for

    def counting(self: ChatView, node: Any) -> Any:
        built.append(node.id)
        return blocks_for(self, node)

    monkeypatch.setattr(ChatView, "blocks_for", counting)
    async with app.run_test(size=SIZE) as pilot:
        view = chat(app)
        at_first_frame = len(built)
        await view.wait_idle()
        await pilot.pause()
        assert at_first_frame <= FIRST_SCREEN
        assert len(built) == WINDOW  # each entry of the window built once
        assert str(view.query_one("#load-earlier", Button).label) == "Show 250 earlier entries"
        users = [str(u.visual) for u in view.query(UserBlock)]
        assert users == [f"question {i}" for i in range(125, 200)]


async def test_switching_sessions_lets_the_collector_free_the_old_one(
    app_factory: Callable[..., PituiApp], tmp_path: Path
) -> None:
    """``pitui`` freezes its start-up heap (the session's nodes) out of the cyclic collector;
    a switch to another session unfreezes it, so the old nodes can be collected."""
    app = app_factory(model=None)
    fill_turns(app.store, 3)
    async with app.run_test(size=SIZE) as pilot:
        gc.freeze()
        try:
            other = SessionStore.create(tmp_path / "other", str(tmp_path))
            app.switch_session(other)
            await pilot.pause()
            assert gc.get_freeze_count() == 0
        finally:
            gc.unfreeze()
