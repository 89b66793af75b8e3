"""Hostile sizes in the TUI (issue 15 item 10): a reply of hundreds of kilobytes, a message of
thousands of text blocks, a system prompt of hundreds of sections. What the reader sees: the
start of the text, a note saying how much is hidden and how to see it, and a bounded number of
widgets and characters; "show more" reveals the next part. (Time and memory at full size are
measured by ``benchmarks/hostile_sizes.py``, not here.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from corpus import END_PROMPT, long_reply, system_sections, text_blocks
from textual.content import Content
from textual.pilot import Pilot
from textual.widgets import Collapsible, Static

from pitui.config.settings import Settings
from pitui.session import SessionStore
from pitui.ui.app import PituiApp
from pitui.ui.screens.tree_browser import TreeBrowserScreen
from pitui.ui.widgets import chat as chat_module
from pitui.ui.widgets.bounded import MARKDOWN_CHARS, TEXT_BLOCKS, TEXT_CHARS, MoreLine
from pitui.ui.widgets.chat import AssistantBlock, ChatView, NoteBlock, UserBlock
from pitui.ui.widgets.context_details import SECTION_CAP
from pitui.ui.widgets.inspector_views import BLOCK_CAP
from pitui.ui.widgets.inspectors import DetailsPane

SIZE = (120, 36)


def open_app(tmp_path: Path, data: bytes) -> PituiApp:
    path = tmp_path / "hostile.jsonl"
    path.write_bytes(data)
    store = SessionStore.open(path, read_only=True)
    settings = Settings.from_dict({"ui": {"cursorBlink": False}})
    return PituiApp(store, settings=settings, cwd=tmp_path)


async def settled(pilot: Pilot[Any]) -> ChatView:
    view = pilot.app.query_one(ChatView)
    await view.wait_idle()
    await pilot.pause()
    return view


def markdown_chars(block: AssistantBlock) -> int:
    """Characters of Markdown the block renders."""
    return len(block.source)


def screen_text(app: PituiApp) -> str:
    """The text of what is on screen (the last frame, as a terminal would show it)."""
    return "\n".join(
        "".join(segment.text for segment in strip)
        for strip in app.screen._compositor.render_strips()
    )


async def test_a_long_reply_shows_its_start_and_shows_more_on_click(tmp_path: Path) -> None:
    app = open_app(tmp_path, long_reply(200_000))
    async with app.run_test(size=SIZE) as pilot:
        view = await settled(pilot)
        block = next(b for b in view.assistant_blocks() if b.hidden_chars)
        shown = markdown_chars(block)
        assert 0 < shown <= MARKDOWN_CHARS
        more = block.query_one(MoreLine)
        hidden = block.hidden_chars
        assert hidden > 190_000 - MARKDOWN_CHARS
        assert str(more.visual) == (
            f"▼ {hidden:,} more characters hidden · click or Enter: show more"
        )
        # The whole view stays small: the reply's widgets are bounded by what is shown.
        assert len(list(view.walk_children())) < 400
        # The last prompt is on the first screen, under the cut reply.
        assert END_PROMPT in screen_text(app)

        view.release_anchor()  # the reader scrolls up to the note
        view.scroll_to_widget(more, animate=False)
        await pilot.pause()
        await pilot.click(more)
        await settled(pilot)
        assert shown < markdown_chars(block) <= 2 * MARKDOWN_CHARS
        assert block.hidden_chars < hidden
        assert str(more.visual).startswith(f"▼ {block.hidden_chars:,} more characters hidden")

        # Enter on the focused note shows more too.
        more.focus()
        before = block.hidden_chars
        await pilot.press("enter")
        await settled(pilot)
        assert block.hidden_chars < before


async def test_thousands_of_text_blocks_mount_a_bounded_number(tmp_path: Path) -> None:
    app = open_app(tmp_path, text_blocks(2_000))
    async with app.run_test(size=SIZE) as pilot:
        view = await settled(pilot)
        blocks = view.assistant_blocks()
        # The message of 2,000 blocks and the short answer after it.
        assert len(blocks) == TEXT_BLOCKS + 1
        assert sum(markdown_chars(b) for b in blocks) <= MARKDOWN_CHARS + 200
        last = blocks[-2]
        note = str(last.query_one(MoreLine).visual)
        hidden_blocks = 2_000 - TEXT_BLOCKS
        assert note == (
            f"▼ {last.hidden_chars:,} more characters hidden ({hidden_blocks:,} more blocks) · "
            "click or Enter: show more"
        )
        assert len(list(view.walk_children())) < 400
        # Show more: the next blocks' text, in order, and the count goes down.
        await last.show_more()
        await settled(pilot)
        shown = last.source
        assert f"\n\n{TEXT_BLOCKS}: " in shown and f"{TEXT_BLOCKS + 1}: " in shown
        note = str(last.query_one(MoreLine).visual)
        assert "more blocks)" in note
        remaining = int(note.split("(")[1].split(" ")[0].replace(",", ""))
        assert 0 < remaining < hidden_blocks


async def test_a_huge_user_message_is_cut_with_a_note(tmp_path: Path) -> None:
    store = SessionStore.in_memory(str(tmp_path))
    store.append_message({"role": "user", "content": "log line\n" * 100_000, "timestamp": 1})
    app = PituiApp(store, settings=Settings.from_dict({"ui": {"cursorBlink": False}}), cwd=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        block = app.query_one(UserBlock)
        text = str(block.visual)
        assert len(text) < TEXT_CHARS + 200
        hidden = 900_000 - (len(text.split("▼")[0]))
        assert text.endswith(f"▼ {hidden:,} more characters hidden · click or Enter: show more")
        # Click the note (the block's last line, at the bottom of the chat).
        await pilot.click(block, offset=(4, block.size.height - 1))
        await pilot.pause()
        assert len(str(block.visual)) > len(text)


async def test_details_pane_bounds_a_system_prompt_of_many_sections(tmp_path: Path) -> None:
    app = open_app(tmp_path, system_sections(500))
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        await pilot.press("ctrl+t")
        for _ in range(100):
            if isinstance(app.screen, TreeBrowserScreen):
                break
            await pilot.pause(0.05)
        pane = app.screen.query_one(DetailsPane)
        pane.set_tab("entry")
        await pilot.pause()
        pane.show_now("sys")
        await pilot.pause()
        body = pane.query_one("#entry-body", Static).visual
        text = body.plain if isinstance(body, Content) else str(body)
        assert text.count("section s0") == BLOCK_CAP
        assert (
            f"… {500 - BLOCK_CAP:,} more sections not shown (pitui context --json has them all)"
        ) in text

        pane.set_tab("context")
        await pilot.pause()
        pane.show_now("sys")
        await pilot.pause()
        sections = pane.query(Collapsible).filter(".-section")
        assert len(sections) == SECTION_CAP
        system = pane.query_one("#context-system", Collapsible)
        assert str(system.title).startswith("System prompt · 500 sections")
        note = pane.query_one(".-more-sections", Static).visual
        assert f"… {500 - SECTION_CAP:,} more sections not shown" in str(note)
        assert len(list(pane.walk_children())) < 600


async def test_a_big_entry_is_parsed_after_the_first_frame(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chat_module, "BIG_ENTRY", 50_000)
    app = open_app(tmp_path, long_reply(200_000))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = app.query_one(ChatView)
        # The first frame: the other entries, and a note where the big one goes.
        first = [str(n.visual) for n in view.query(NoteBlock).filter(".-loading")]
        if first:  # (the thread may already be done on a fast machine)
            assert first == ["Loading a 0.2 MB entry…"]
        await settled(pilot)
        assert not view.query(NoteBlock).filter(".-loading")
        assert [type(w).__name__ for w in view.children] == [
            "UserBlock",
            "AssistantBlock",
            "UserBlock",
            "AssistantBlock",
        ]
        block = view.assistant_blocks()[0]
        assert 0 < len(block.source) <= MARKDOWN_CHARS and block.hidden_chars > 150_000
