"""One widget that shows a Markdown text as lines (Textual's line API): the one way the TUI
renders Markdown (assistant replies and compaction and branch summaries in the chat, the
summary in the details pane's Compaction tab). Callers strip escape sequences first.

Textual's own Markdown widget mounts a widget per paragraph, list item, code block and table
cell: a long reply is hundreds of widgets, and every update of a streamed reply makes Textual
lay all of them out again, so showing each chunk costs more than the one before. Here a text is
one widget: its blocks are rendered to lines by :mod:`pitui.ui.markdown_lines`, the complete
blocks once (at a given width), the last block again when text is appended. Only the lines on
screen are painted. Selecting text with the mouse and copying it works on the lines as shown.
"""

from __future__ import annotations

import bisect
import time
from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region, Size
from textual.selection import Selection
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget

from pitui.ui.markdown_lines import (
    MarkdownRenderer,
    MarkdownStyle,
    block_starts,
    estimated_height,
)
from pitui.ui.textual_patches.kept_lines import KeptLines

_renderers: dict[MarkdownStyle, MarkdownRenderer] = {}
_styles: dict[str, MarkdownStyle] = {}  # by theme name
_BLANK = Strip([])  # the blank line between blocks


def _renderer(style: MarkdownStyle) -> MarkdownRenderer:
    renderer = _renderers.get(style)
    if renderer is None:
        renderer = _renderers[style] = MarkdownRenderer(style)
    return renderer


@dataclass(slots=True)
class _Block:
    """A complete block: its source, and its lines once rendered (else an estimated height)."""

    text: str
    lines: list[Strip] | None
    height: int


class MarkdownView(KeptLines, Widget):
    """A Markdown text, rendered block by block; :meth:`append` re-renders the last block.

    Complete blocks far from the end are not rendered when they arrive: a long reply that
    arrives at once (or a resize) renders only its last screenful at once, the view
    following the end shows only those, and the others take an estimated height
    (:func:`~pitui.ui.markdown_lines.estimated_height`) until they are painted or rendered in
    the background, a slice of ``FILL_SLICE`` seconds at a time, newest first. Their lines
    are then the same as if they had been rendered at once."""

    DEFAULT_CSS: ClassVar[str] = """
    MarkdownView { height: auto; width: 1fr; }
    """
    ALLOW_SELECT = True
    EAGER_SCREENS: ClassVar[int] = 1  # screenfuls of the end rendered at once
    FILL_SLICE: ClassVar[float] = 0.012  # seconds of background rendering between frames
    FILL_DELAY: ClassVar[float] = 0.03  # between background slices (frames and keys go first)

    def __init__(self, markdown: str = "", **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._source = markdown
        self._width = -1  # the width the lines are rendered at (-1: not rendered)
        self._style: MarkdownStyle | None = None
        # Complete blocks and the offset in the source where the first block not among them
        # starts; the first line of each (after the blank line between blocks), and their
        # lines in all (None: to be computed again after a height changed).
        self._blocks: list[_Block] = []
        self._done_end = 0
        self._tops: list[int] = []
        self._done_lines: int | None = 0
        self._unrendered = 0  # complete blocks with an estimated height
        self._fill_timer: Timer | None = None
        self._open: list[Strip] = []  # the last block's lines (rendered again on append)
        self.open_cost = 0.0  # seconds the last block took to render (at the last append)
        self._texts: list[str] | None = None  # plain text of every line (for selections)
        # The widget's style, looked up once per paint: Textual computes it by walking the
        # ancestors on every call, which cost more than the rest of a line's paint.
        self._line_style: Style | None = None
        self._step = 1  # past ``_exact`` lines the height is rounded up to a multiple of this
        self._exact = 0

    @property
    def source(self) -> str:
        return self._source

    @property
    def line_count(self) -> int:
        done = self._layout()
        return done + (len(self._open) + (1 if done else 0) if self._open else 0)

    @property
    def unrendered_blocks(self) -> int:
        """Complete blocks not rendered yet (shown with an estimated height)."""
        return self._unrendered

    @property
    def height_step(self) -> int:
        return self._step

    def grow_in_steps(self, lines: int, after: int = 0) -> None:
        """Past ``after`` lines, make the widget's height the line count rounded up to a
        multiple of ``lines`` (1: exactly the line count), the lines below the text blank.

        For a streamed reply: a change of height makes Textual lay out the whole screen and
        paint every line of the chat again (the chat follows the end, so everything moves up a
        line), which at ~20 updates a second was most of what streaming cost. Growing a few
        lines at a time, the text fills the blank lines below it in between, and only those
        lines are painted."""
        lines = max(1, lines)
        if (lines, after) != (self._step, self._exact):
            self._step, self._exact = lines, after
            self.refresh(layout=True)

    def _height(self, lines: int) -> int:
        if lines <= self._exact:
            return lines
        return -(-lines // self._step) * self._step

    def append(self, text: str) -> None:
        """Add streamed text; only the lines of the last block(s) are rendered again."""
        if not text:
            return
        self._source += text
        if self._width < 0:
            self.refresh(layout=True)
            return
        before = self.line_count
        first = self._layout()  # the lines above the old last block are unchanged
        self._render_lines(self._width)
        after = self.line_count
        changed = Region(0, first, max(self._width, 1), max(before, after) - first)
        self.refresh(changed, layout=self._height(after) != self._height(before))

    def update(self, markdown: str) -> None:
        """Show another text (everything is rendered again)."""
        self._source = markdown
        self._width = -1
        self._blocks, self._done_end, self._done_lines, self._unrendered = [], 0, None, 0
        self.refresh(layout=True)

    # ------------------------------------------------------------------ rendering

    def _markdown_style(self) -> MarkdownStyle:
        app = self.app
        style = _styles.get(app.theme)
        if style is None:
            theme = app.current_theme
            style = _styles[app.theme] = MarkdownStyle.from_theme(
                app.theme_variables, dark=theme.dark if theme else True
            )
        return style

    def _layout(self) -> int:
        """The lines of the complete blocks (the first line of each computed again after a
        height changed)."""
        if self._done_lines is not None:
            return self._done_lines
        tops = self._tops
        tops.clear()
        y = 0
        for block in self._blocks:
            if block.height and y:
                y += 1  # one blank line between blocks
            tops.append(y)
            y += block.height
        self._done_lines = y
        return y

    def _render_lines(self, width: int) -> None:
        style = self._markdown_style()
        if width != self._width or style != self._style:
            self._width, self._style = width, style
            for block in self._blocks:  # every block again, at the new width
                block.lines, block.height = None, estimated_height(block.text, width)
            self._unrendered = len(self._blocks)
            self._done_lines = None
        renderer = _renderer(style)
        tail = self._source[self._done_end :]
        starts = block_starts(tail)
        # A block is complete once the first line of the block after it is whole: until then
        # what follows could still turn out to continue it (``#`` then ``#x``).
        complete = 0
        for index in range(1, len(starts)):
            if tail.find("\n", starts[index]) < 0:
                break
            complete = index
        if complete:
            self._blocks.extend(
                _Block(text, None, estimated_height(text, width))
                for text in (tail[starts[i] : starts[i + 1]] for i in range(complete))
            )
            self._unrendered += complete
            self._done_lines = None
            self._done_end += starts[complete]
            tail = tail[starts[complete] :]
        # The end of the text is what a view following it shows: a screenful rendered now.
        budget = self._eager_lines() - estimated_height(tail, width)
        for block in reversed(self._blocks):
            if budget <= 0:
                break
            if block.lines is None:
                self._render_block(block, renderer, width)
            budget -= block.height + 1
        self._open = []
        if tail.strip():
            start = time.perf_counter()
            self._open = renderer.render(tail, width)
            self.open_cost = time.perf_counter() - start
        self._texts = None
        if self._unrendered:
            self._fill_later()

    def _eager_lines(self) -> int:
        try:
            height = self.app.size.height
        except Exception:  # not in an app (no screen): everything
            return 1 << 30
        return self.EAGER_SCREENS * max(height, 24)

    def _render_block(self, block: _Block, renderer: MarkdownRenderer, width: int) -> bool:
        """Render one block; True when its height was not the estimate."""
        block.lines = renderer.render(block.text, width)
        self._unrendered -= 1
        if len(block.lines) == block.height:
            return False
        block.height = len(block.lines)
        self._done_lines = None
        return True

    def _render_between(self, top: int, bottom: int) -> int | None:
        """Render the blocks with lines in ``top <= y < bottom``; the first line from which
        the lines moved (a height was not its estimate), or None."""
        moved: int | None = None
        if not self._unrendered or self._style is None:
            return None
        renderer = _renderer(self._style)
        for _ in range(16):  # heights change: the blocks in the range may change with them
            self._layout()
            tops, blocks = self._tops, self._blocks
            first = max(0, bisect.bisect_right(tops, top) - 1)
            last = bisect.bisect_left(tops, bottom)
            todo = [blocks[i] for i in range(first, last) if blocks[i].lines is None]
            if not todo:
                break
            for index in range(first, last):
                block = blocks[index]
                if block.lines is None and self._render_block(block, renderer, self._width):
                    at = tops[index]
                    moved = at if moved is None else min(moved, at)
        return moved

    def _lines_moved(self, moved: int | None, before: int) -> None:
        if moved is None:
            return
        self._texts = None
        after = self.line_count
        self.refresh(
            Region(0, moved, max(self._width, 1), max(before, after) - moved),
            layout=self._height(after) != self._height(before),
        )

    def _fill_later(self) -> None:
        if self._fill_timer is None and self.is_attached:
            self._fill_timer = self.set_timer(self.FILL_DELAY, self._fill)

    def _fill(self) -> None:
        """Render blocks not rendered yet, newest first, for about ``FILL_SLICE`` seconds."""
        self._fill_timer = None
        if not self._unrendered or self._style is None or self._width < 0:
            return
        renderer = _renderer(self._style)
        before = self.line_count
        moved: int | None = None
        deadline = time.perf_counter() + self.FILL_SLICE
        for index in range(len(self._blocks) - 1, -1, -1):
            block = self._blocks[index]
            if block.lines is not None:
                continue
            self._layout()
            at = self._tops[index]
            if self._render_block(block, renderer, self._width):
                moved = at if moved is None else min(moved, at)
            if time.perf_counter() > deadline:
                break
        self._lines_moved(moved, before)
        if self._unrendered:
            self._fill_later()

    def render_everything(self) -> None:
        """Render every block not rendered yet (for the text as shown: a selection, a test)."""
        if self._width < 0 or not self._unrendered:
            return
        before = self.line_count
        self._lines_moved(self._render_between(0, before), before)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if width != self._width or self._style != self._markdown_style():
            self._render_lines(width)
        return self._height(self.line_count)

    def render_lines(self, crop: Region) -> list[Strip]:
        if self._unrendered and self._width == self.size.width:
            before = self.line_count
            self._lines_moved(self._render_between(crop.y, crop.bottom), before)
        self._line_style = self.rich_style
        try:
            return super().render_lines(crop)
        finally:
            self._line_style = None

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if width != self._width:
            self._render_lines(width)
        style = self._line_style if self._line_style is not None else self.rich_style
        strip = self._line(y)
        if strip is None:
            return Strip.blank(width, style)
        selection = self.text_selection
        if selection is not None:
            strip = self._select(strip, y, selection)
        return strip.apply_style(style).apply_offsets(0, y)

    def _line(self, y: int) -> Strip | None:
        """Line ``y`` as rendered (None: below the text)."""
        done = self._layout()
        if y >= done:
            at = y - done - (1 if done else 0)
            if at < 0:
                return _BLANK
            return self._open[at] if at < len(self._open) else None
        index = bisect.bisect_right(self._tops, y) - 1
        block = self._blocks[index]
        if block.lines is None:  # painted outside render_lines: rendered now
            before = self.line_count
            self._lines_moved(self._render_between(y, y + 1), before)
            if block.lines is None:
                return _BLANK
            return self._line(y)
        at = y - self._tops[index]
        return block.lines[at] if at < len(block.lines) else _BLANK

    def _select(self, strip: Strip, y: int, selection: Selection) -> Strip:
        span = selection.get_span(y)
        if span is None:
            return strip
        text = strip.text
        start, end = span
        if end == -1 or end > len(text):
            end = len(text)
        if start >= end:
            return strip
        cells = [cell_len(text[:start]), cell_len(text[:end])]
        style = self.screen.get_component_rich_style("screen--selection")
        before, middle, after = strip.divide([cells[0], cells[1], strip.cell_length])
        selected = Strip(list(Segment.apply_style(middle, post_style=style)))
        return Strip.join([before, selected, after])

    # ------------------------------------------------------------------ selection

    def _line_texts(self) -> list[str]:
        if self._texts is None:
            self.render_everything()
            self._texts = [
                "" if (strip := self._line(y)) is None else strip.text.rstrip()
                for y in range(self.line_count)
            ]
        return self._texts

    @property
    def text(self) -> str:
        """The text as shown (its rendered lines; empty before the first layout)."""
        return "\n".join(self._line_texts())

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selection.extract("\n".join(self._line_texts())), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()
