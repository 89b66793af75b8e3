"""One widget that shows a Markdown text as lines (Textual's line API).

Textual's own Markdown widget mounts a widget per paragraph, list item, code block and table
cell: a long reply is hundreds of widgets, and every update of a streamed reply makes Textual
lay all of them out again, so showing each chunk costs more than the one before. Here a text is
one widget: its blocks are rendered to lines by :mod:`pitui.ui.markdown_lines`, the complete
blocks once (at a given width), the last block again when text is appended. Only the lines on
screen are painted. Selecting text with the mouse and copying it works on the lines as shown.
"""

from __future__ import annotations

import time
from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region, Size
from textual.selection import Selection
from textual.strip import Strip
from textual.widget import Widget

from pitui.ui.markdown_lines import MarkdownRenderer, MarkdownStyle, block_starts
from pitui.ui.widgets.kept_lines import KeptLines

_renderers: dict[MarkdownStyle, MarkdownRenderer] = {}
_styles: dict[str, MarkdownStyle] = {}  # by theme name


def _renderer(style: MarkdownStyle) -> MarkdownRenderer:
    renderer = _renderers.get(style)
    if renderer is None:
        renderer = _renderers[style] = MarkdownRenderer(style)
    return renderer


class MarkdownView(KeptLines, Widget):
    """A Markdown text, rendered block by block; :meth:`append` re-renders the last block."""

    DEFAULT_CSS: ClassVar[str] = """
    MarkdownView { height: auto; width: 1fr; }
    """
    ALLOW_SELECT = True

    def __init__(self, markdown: str = "", **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._source = markdown
        self._width = -1  # the width the lines are rendered at (-1: not rendered)
        self._style: MarkdownStyle | None = None
        # Complete blocks, rendered: their lines (with the blank lines between them) and the
        # offset in the source where the first block not among them starts.
        self._done: list[Strip] = []
        self._done_end = 0
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
        return len(self._done) + len(self._open)

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
        before, first = self.line_count, len(self._done)
        self._render_lines(self._width)
        # Lines above the old last block are unchanged: only the rest is painted again.
        changed = Region(0, first, max(self._width, 1), max(before, self.line_count) - first)
        self.refresh(changed, layout=self._height(self.line_count) != self._height(before))

    def update(self, markdown: str) -> None:
        """Show another text (everything is rendered again)."""
        self._source = markdown
        self._width = -1
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

    def _render_lines(self, width: int) -> None:
        style = self._markdown_style()
        if width != self._width or style != self._style:
            self._width, self._style = width, style
            self._done, self._done_end = [], 0
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
        for index in range(complete):
            self._add(self._done, renderer.render(tail[starts[index] : starts[index + 1]], width))
        if complete:
            self._done_end += starts[complete]
            tail = tail[starts[complete] :]
        self._open = []
        if tail.strip():
            start = time.perf_counter()
            self._add(self._open, renderer.render(tail, width), after=self._done)
            self.open_cost = time.perf_counter() - start
        self._texts = None

    @staticmethod
    def _add(lines: list[Strip], block: list[Strip], after: list[Strip] | None = None) -> None:
        if not block:
            return
        if lines or after:
            lines.append(Strip([]))  # one blank line between blocks
        lines.extend(block)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if width != self._width or self._style != self._markdown_style():
            self._render_lines(width)
        return self._height(self.line_count)

    def render_lines(self, crop: Region) -> list[Strip]:
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
        done = len(self._done)
        if y < done:
            strip = self._done[y]
        elif y - done < len(self._open):
            strip = self._open[y - done]
        else:
            return Strip.blank(width, style)
        selection = self.text_selection
        if selection is not None:
            strip = self._select(strip, y, selection)
        return strip.apply_style(style).apply_offsets(0, y)

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
            self._texts = [strip.text.rstrip() for strip in (*self._done, *self._open)]
        return self._texts

    @property
    def text(self) -> str:
        """The text as shown (its rendered lines; empty before the first layout)."""
        return "\n".join(self._line_texts())

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selection.extract("\n".join(self._line_texts())), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()
