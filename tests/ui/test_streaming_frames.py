"""What a frame costs while a reply streams: only the widgets under what changed are painted
(pitui.ui.textual_patches.compositor), and the reply grows a quarter of the chat at a time
instead of a line (MarkdownView.grow_in_steps), so most frames repaint a few lines, not the
whole chat. What reaches the terminal is what Textual's own compositor would send."""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import pytest
from support.screens import SIZE, chat
from support.turns import append_answer, fill_turns
from textual._compositor import ChopsUpdate, Compositor
from textual.widget import Widget

from pitui.agent.events import MessageDelta, MessageStart, RunEnded
from pitui.collector import OLDEST_EVERY
from pitui.ui.app import PituiApp
from pitui.ui.textual_patches.compositor import (
    paint_everything_under_the_clip,
    paint_only_what_changed,
)
from pitui.ui.widgets.chat import STREAM_STEPS, AssistantBlock
from pitui.ui.widgets.status import StatusLine

REPLY = "".join(
    f"Paragraph {i}: some words that fill a line or two of the chat, `code` and **bold**.\n\n"
    if i % 4
    else f"```python\nvalue_{i} = {i}\n```\n\n"
    for i in range(48)
)


async def test_frames_are_textuals_own_and_paint_only_what_changed(
    app_factory: Callable[..., PituiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every partial frame of a streamed reply (with the spinner turning and keys typed) is
    rendered twice: by pitui's compositor and by Textual's. The bytes for the terminal are the
    same, and the status line and the editor are painted only when they change."""
    app = app_factory(model=None)
    fill_turns(app.store, 10)
    frames: list[tuple[str, str]] = []
    painted: Counter[str] = Counter()
    partial = Compositor.render_partial_update
    render_lines = Widget.render_lines

    def counting(self: Widget, crop: Any) -> Any:
        painted[type(self).__name__] += 1
        return render_lines(self, crop)

    def both(self: Compositor) -> ChopsUpdate | None:
        dirty = set(self._dirty_regions)
        ours = partial(self)
        self._dirty_regions.update(dirty)
        paint_everything_under_the_clip()
        try:
            with monkeypatch.context() as patch:
                patch.setattr(Widget, "render_lines", render_lines)  # not counted
                theirs = partial(self)
        finally:
            paint_only_what_changed()
        if ours is not None and theirs is not None:
            frames.append((ours.render_segments(app.console), theirs.render_segments(app.console)))
        return ours

    async with app.run_test(size=SIZE) as pilot:
        view = chat(app)
        await view.wait_idle()
        await pilot.pause()
        monkeypatch.setattr(Compositor, "render_partial_update", both)
        monkeypatch.setattr(Widget, "render_lines", counting)
        app.query_one(StatusLine).mark_busy()  # the spinner turns
        publish = app.bridge.on_agent_event
        publish(MessageStart("assistant"))
        for i in range(0, len(REPLY), 40):
            publish(MessageDelta("text", REPLY[i : i + 40]))
            if i % 400 == 0:
                await pilot.press("x")
            await pilot.pause(0.02)
        await view.wait_idle()
        await pilot.pause()
    assert len(frames) > 40
    assert all(ours == theirs for ours, theirs in frames)
    assert painted["MarkdownView"] > 40
    assert painted["StatusLine"] < len(frames) / 2  # was: every frame
    assert painted["PromptEditor"] < len(frames) / 4


async def test_a_streamed_reply_grows_a_quarter_of_the_chat_at_a_time(
    app_factory: Callable[..., PituiApp],
) -> None:
    """Past a screenful, the view follows the end in steps: between them the text fills the
    blank lines under it and nothing moves; once the stored message replaces the preview, the
    blank lines are gone and the reply ends the chat."""
    app = app_factory(model=None)
    fill_turns(app.store, 15)
    async with app.run_test(size=SIZE) as pilot:
        view = chat(app)
        await view.wait_idle()
        await pilot.pause()
        publish = app.bridge.on_agent_event
        publish(MessageStart("assistant"))
        positions: list[float] = []
        text = ""
        for i in range(40):
            text += f"line {i}\n\n"
            publish(MessageDelta("text", f"line {i}\n\n"))
            await view.wait_idle()
            await pilot.pause(0.06)
            reply = view.query(AssistantBlock).last()
            if reply.view.line_count > view.size.height:  # past a screenful
                positions.append(view.scroll_y)
        step = reply.view.height_step
        assert step == view.size.height // STREAM_STEPS > 1
        assert len(positions) > 3 * step
        assert view.scroll_y == view.max_scroll_y  # it follows the end
        moves = [after - before for before, after in pairwise(positions) if after != before]
        assert moves and all(move >= step - 1 for move in moves)
        assert len(moves) <= len(positions) * 2 // step + 1
        blank = reply.view.region.height - reply.view.line_count
        assert 0 <= blank < step
        append_answer(app.store, text)
        publish(RunEnded("done"))
        await view.wait_idle()
        await pilot.pause()
        assert reply.view.height_step == 1
        assert reply.view.region.height == reply.view.line_count
        assert view.scroll_y == view.max_scroll_y


async def test_a_short_reply_grows_a_line_at_a_time(
    app_factory: Callable[..., PituiApp],
) -> None:
    """Within a screenful there are no blank lines (nothing to lose, so nothing moves, when
    the stored message replaces the preview)."""
    app = app_factory(model=None)
    async with app.run_test(size=SIZE) as pilot:
        view = chat(app)
        publish = app.bridge.on_agent_event
        publish(MessageStart("assistant"))
        for i in range(6):
            publish(MessageDelta("text", f"short line {i}\n\n"))
            await view.wait_idle()
            await pilot.pause(0.06)
            reply = view.query_one(AssistantBlock)
            assert reply.view.region.height == reply.view.line_count == 2 * i + 1


async def test_a_reply_with_no_stored_message_loses_its_blank_lines_when_the_run_ends(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory(model=None)
    async with app.run_test(size=SIZE) as pilot:
        view = chat(app)
        publish = app.bridge.on_agent_event
        publish(MessageStart("assistant"))
        publish(MessageDelta("text", "\n\n".join(f"line {i}" for i in range(30))))
        publish(MessageDelta("text", "\n\nthen the provider fails"))
        await view.wait_idle()
        await pilot.pause()
        reply = view.query_one(AssistantBlock)
        lines = reply.view.line_count
        assert lines == 61 > view.size.height
        assert reply.view.region.height % reply.view.height_step == 0
        assert reply.view.region.height > lines
        publish(RunEnded("error"))
        await view.wait_idle()
        await pilot.pause()
        assert reply.view.region.height == reply.view.line_count == lines


async def test_full_collections_are_rarer_while_a_reply_streams(
    app_factory: Callable[..., PituiApp],
) -> None:
    """Each full collection holds the screen (15-76 ms): from the run's first reply on they
    start a tenth as often, and as usual again once the run has ended."""
    usual = gc.get_threshold()
    app = app_factory(model=None)
    async with app.run_test(size=SIZE) as pilot:
        view = chat(app)
        publish = app.bridge.on_agent_event
        publish(MessageStart("assistant"))
        publish(MessageDelta("text", "streaming"))
        await view.wait_idle()
        await pilot.pause()
        assert gc.get_threshold() == (*usual[:2], OLDEST_EVERY)
        publish(RunEnded("done"))
        await view.wait_idle()
        await pilot.pause()
        assert gc.get_threshold() == usual
        publish(MessageStart("assistant"))  # the app quits while a reply streams
        await view.wait_idle()
        await pilot.pause()
        assert gc.get_threshold()[2] == OLDEST_EVERY
    assert gc.get_threshold() == usual
