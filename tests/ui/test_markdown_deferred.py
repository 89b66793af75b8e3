"""A long text shows its end without rendering the rest first (MarkdownView renders its last
screenful at once, estimates the height of the other blocks and renders them when they
are painted or in the background), and ends up with exactly the lines of the same text
rendered at once."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from support.screens import SIZE, chat, wait_for
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.geometry import Region

from pitui.agent.events import MessageDelta, MessageStart, RunEnded
from pitui.ui.app import PituiApp
from pitui.ui.markdown_lines import block_starts, estimated_height
from pitui.ui.widgets.chat import AssistantBlock
from pitui.ui.widgets.markdown_view import MarkdownView


def long_text(blocks: int, end: str = "The last paragraph ZZEND.") -> str:
    parts = []
    for i in range(blocks):
        kind = i % 6
        if kind == 0:
            parts.append(f"## Step {i}")
        elif kind == 1:
            parts.append(f"```python\ndef step_{i}(x):\n    return x + {i}\n```")
        elif kind == 2:
            parts.append(f"- item {i}\n- item {i} with `code` and a second line\n  continued")
        elif kind == 3:
            parts.append(f"| a | b |\n|---|---|\n| {i} | {i * 2} |")
        elif kind == 4:
            parts.append(f"> quoted {i}\n> and more")
        else:
            parts.append(
                f"Paragraph {i} with **bold**, `code` and words "
                + "that run on for a while and wrap " * (1 + i % 4)
                + "\nafter a soft break."
            )
    return "\n\n".join([*parts, end])


TEXT = long_text(300)  # ~1,000 lines


def rows(view: MarkdownView) -> list[list[tuple[str, object]]]:
    view.render_everything()
    return [[(s.text, s.style) for s in view.render_line(y)] for y in range(view.line_count)]


class Views(App[None]):
    """A deferred view and a reference rendered at once, side by side in scrolling columns."""

    CSS = "VerticalScroll { width: 1fr; height: 1fr; }"

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="deferred"):
            yield MarkdownView(self.text, id="lazy")
        with VerticalScroll(id="whole"):
            yield Eager(self.text, id="eager")


class Eager(MarkdownView):
    EAGER_SCREENS = 10**6  # everything rendered at once


def test_estimates_are_exact_for_fences_and_short_lines_and_never_zero() -> None:
    assert estimated_height("```python\nx = 1\ny = 2\n```\n\n", 80) == 4  # code + padding
    assert estimated_height("A short paragraph.\n\n", 80) == 1
    assert estimated_height("x" * 200, 80) == 3
    assert estimated_height("\n\n", 80) == 1


async def test_only_the_end_is_rendered_before_the_first_frame_and_the_rest_follows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(MarkdownView, "FILL_DELAY", 30.0)  # no background rendering yet
    complete = len(block_starts(TEXT)) - 1  # the last block is the open one
    app = Views(TEXT)
    async with app.run_test(size=(160, 40)) as pilot:
        lazy = app.query_one("#lazy", MarkdownView)
        eager = app.query_one("#eager", MarkdownView)
        app.query_one("#deferred", VerticalScroll).scroll_end(animate=False)
        app.query_one("#whole", VerticalScroll).scroll_end(animate=False)
        await pilot.pause()
        assert eager.unrendered_blocks == 0
        assert complete - 60 < lazy.unrendered_blocks < complete  # the end only
        # The end shows as it would with every block rendered.
        shown = lazy.render_lines(Region(0, lazy.line_count - 30, lazy.size.width, 30))
        whole = eager.render_lines(Region(0, eager.line_count - 30, eager.size.width, 30))
        assert [s.text for s in shown] == [s.text for s in whole]
        assert "ZZEND" in shown[-1].text
        # The middle, painted before the background got to it, is rendered then (where it
        # is shown depends on the estimated heights above it until they are rendered too).
        before, middle = lazy.unrendered_blocks, lazy.line_count // 2
        shown = [s.text for s in lazy.render_lines(Region(0, middle, lazy.size.width, 20))]
        everything = [s.text for s in eager.render_lines(eager.size.region)]
        at = everything.index(shown[0]) if shown[0].strip() else everything.index(shown[1]) - 1
        assert shown == everything[at : at + 20]
        assert before - 12 < lazy.unrendered_blocks < before
        assert rows(lazy) == rows(eager)


async def test_background_rendering_ends_with_the_lines_and_height_of_the_whole_text() -> None:
    app = Views(TEXT)
    async with app.run_test(size=(120, 40)) as pilot:
        lazy = app.query_one("#lazy", MarkdownView)
        eager = app.query_one("#eager", MarkdownView)
        await pilot.pause()
        assert lazy.unrendered_blocks > 0
        await wait_for(pilot, lambda: lazy.unrendered_blocks == 0)
        await pilot.pause()
        assert lazy.region.height == eager.region.height == eager.line_count
        assert rows(lazy) == rows(eager)
        # Narrower: everything at the new width, the end first again.
        await pilot.resize_terminal(90, 40)
        await pilot.pause()
        await wait_for(pilot, lambda: lazy.unrendered_blocks == 0)
        await pilot.pause()
        assert lazy.size.width == eager.size.width
        assert lazy.region.height == eager.region.height
        assert rows(lazy) == rows(eager)
        assert lazy.text == eager.text


async def test_a_reply_arriving_at_once_shows_its_end_and_then_matches_the_text_shown_whole(
    app_factory: Callable[..., PituiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chat's streamed reply: a 30 KB burst shows its last paragraph at the end of the
    chat after rendering a few blocks; rendered in full, the reply's lines and height are
    those of the same text shown whole, and the chat still shows its end."""
    monkeypatch.setattr(MarkdownView, "FILL_DELAY", 30.0)  # no background rendering
    app = app_factory(model=None)
    async with app.run_test(size=SIZE) as pilot:
        view = chat(app)
        await view.wait_idle()
        publish = app.bridge.on_agent_event
        publish(MessageStart("assistant"))
        publish(MessageDelta("text", TEXT))
        await wait_for(pilot, lambda: bool(view.query(AssistantBlock)))
        await pilot.pause()
        reply = view.query_one(AssistantBlock)
        assert reply.view.unrendered_blocks > 200
        assert "ZZEND" in app.screen._compositor.render_update(full=True).render_segments(
            app.console
        )
        assert view.scroll_y == view.max_scroll_y  # following the end
        publish(RunEnded("done"))
        await view.wait_idle()
        reply.view.render_everything()
        await pilot.pause()
        assert view.scroll_y == view.max_scroll_y  # still at the end
        whole = AssistantBlock(TEXT, classes="reference")
        await view.mount(whole)
        await pilot.pause()
        assert rows(reply.view) == rows(whole.view)
        assert reply.view.region.height == reply.view.line_count == whole.view.line_count
