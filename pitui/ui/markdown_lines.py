"""Markdown rendered to terminal lines, one top-level block at a time.

A reply is split into its top-level blocks (paragraphs, headings, lists, fences, tables,
quotes); each block is rendered on its own with Rich's Markdown renderer and the lines are
kept. While a reply streams, every block but the last is complete (what follows cannot change
it), so an update re-renders only the last block: the cost of showing a chunk does not grow
with the reply. Rendering the blocks one by one gives the same lines as rendering the whole
text at once, with one blank line between blocks.

The text is literal: Rich's Markdown never reads console markup or emoji codes in it, links
are shown as ``text (url)`` (no terminal hyperlinks), and the callers strip control sequences
before the text gets here (:mod:`pitui.text`).
"""

from __future__ import annotations

import copy
import io
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

from markdown_it import MarkdownIt
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Heading, HorizontalRule, ListItem, Markdown
from rich.rule import Rule
from rich.segment import Segment
from rich.syntax import Syntax
from rich.theme import Theme
from textual.color import Color
from textual.strip import Strip


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # The parser Rich's Markdown uses (CommonMark with strikethrough and tables): the blocks
    # found here are the blocks Rich renders.
    return MarkdownIt().enable("strikethrough").enable("table")


@lru_cache(maxsize=1)
def _block_parser() -> MarkdownIt:
    # The same parser without the inline pass (emphasis, links, code spans inside each
    # block): where blocks start depends only on the block rules, and the inline pass was
    # about 45% of a parse (85 KB of Markdown: 16 ms, 9 ms without it).
    return MarkdownIt().enable("strikethrough").enable("table").disable("inline")


def block_starts(text: str) -> list[int]:
    """Character offsets where the top-level blocks of ``text`` start (in order)."""
    starts: list[int] = []
    line_offsets: list[int] | None = None
    for token in _block_parser().parse(text):
        if token.level != 0 or token.nesting < 0 or token.map is None:
            continue
        line = token.map[0]
        if line_offsets is None:
            line_offsets = _line_offsets(text)
        offset = line_offsets[line] if line < len(line_offsets) else len(text)
        if not starts or offset > starts[-1]:
            starts.append(offset)
    return starts


def estimated_height(block: str, width: int) -> int:
    """About how many lines ``block`` (one top-level block) renders to at ``width``: each of
    its source lines wrapped at the width. Exact for a fence (its two fence lines stand for
    the padding above and below the code) and for a short paragraph, a line or so off for
    tables and for paragraphs whose source lines are joined and wrapped again. For blocks
    not rendered yet (:class:`pitui.ui.widgets.markdown_view.MarkdownView`), never 0."""
    width = max(1, width)
    lines = block.strip("\n").split("\n")
    return max(1, sum(max(1, -(-len(line) // width)) for line in lines))


def _line_offsets(text: str) -> list[int]:
    offsets = [0]
    at = text.find("\n")
    while at >= 0:
        offsets.append(at + 1)
        at = text.find("\n", at + 1)
    return offsets


class _LeftHeading(Heading):
    """Headings start at the left margin (a chat is read down its left edge)."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        text = self.text.copy()
        text.justify = "left"
        yield text


class _SolidRule(HorizontalRule):
    """A thematic break as a solid line."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Rule(style=console.get_style("markdown.hr", default="none"), characters="─")


class _NumberedItem(ListItem):
    """Ordered list items numbered ``1.``, ``2.``, as they were written."""

    def render_number(
        self, console: Console, options: ConsoleOptions, number: int, last_number: int
    ) -> RenderResult:
        width = len(str(last_number)) + 3
        lines = console.render_lines(
            self.elements, options.update(width=options.max_width - width), style=self.style
        )
        style = console.get_style("markdown.item.number", default="none")
        numeral = Segment(f"{number}.".rjust(width - 1) + " ", style)
        padding = Segment(" " * width, style)
        for index, line in enumerate(lines):
            yield padding if index else numeral
            yield from line
            yield Segment.line()


class _CodeBlock(CodeBlock):
    """A fenced or indented code block, highlighted as Rich does it, but without asking Rich
    to wrap its lines when every line fits: Rich's wrapping lays out each line on its own and
    took 2-4 ms a line (a streamed code block is rendered again at every update). The lines
    are the same either way when none is longer than the width (tests compare them)."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip()
        # 2: the padding of one column either side; tabs counted at their widest.
        fits = all(
            cell_len(line.expandtabs(8)) + 2 <= options.max_width for line in code.split("\n")
        )
        lexer = _lexer(self.lexer_name) or self.lexer_name
        yield Syntax(code, lexer, theme=self.theme, word_wrap=not fits, padding=1)


@lru_cache(maxsize=64)
def _lexer(name: str) -> Lexer | None:
    """The lexer Rich would look up for ``name`` (Rich looks it up again several times per
    code block, a millisecond or more each); None when Pygments has none of that name."""
    try:
        return get_lexer_by_name(name, stripnl=False, ensurenl=True, tabsize=4)
    except ClassNotFound:
        return None


class _ChatMarkdown(Markdown):
    elements: ClassVar[dict[str, Any]] = {
        **Markdown.elements,
        "heading_open": _LeftHeading,
        "hr": _SolidRule,
        "list_item_open": _NumberedItem,
        "fence": _CodeBlock,
        "code_block": _CodeBlock,
    }


@lru_cache(maxsize=4)
def _empty_markdown(code_theme: str) -> _ChatMarkdown:
    return _ChatMarkdown("", code_theme=code_theme, hyperlinks=False)


def _markdown(text: str, code_theme: str) -> _ChatMarkdown:
    """Rich's Markdown of ``text``. Rich builds a new parser for every text, a third of what
    rendering a block cost: this copies an empty one (whatever Rich's constructor set) and
    parses with the shared parser, which Rich's is configured like."""
    markdown = copy.copy(_empty_markdown(code_theme))
    markdown.markup = text
    markdown.parsed = _parser().parse(text)
    return markdown


@dataclass(frozen=True)
class MarkdownStyle:
    """Colours and code theme of rendered Markdown (from the app's theme)."""

    styles: tuple[tuple[str, str], ...]
    code_theme: str

    @classmethod
    def from_theme(cls, variables: Mapping[str, str], dark: bool = True) -> MarkdownStyle:
        background = Color.parse(variables.get("background", "#000000"))

        def colour(name: str, fallback: str) -> str:
            try:
                value = Color.parse(variables.get(name, fallback))
            except Exception:
                value = Color.parse(fallback)
            return (background + value).hex6

        accent = colour("accent", "#ffa62b")
        muted = colour("foreground-muted", "#a0a0a0")
        foreground = colour("foreground", "#e0e0e0")
        # Headings bold in the text's colour (the theme's blue and underline made them look
        # like links); the small ones muted. The app's CSS does the same for Markdown widgets.
        styles: dict[str, str] = {
            f"markdown.h{level}": f"bold {foreground if level <= 3 else muted}"
            for level in range(1, 7)
        }
        surface = colour("surface", "#1e1e1e")
        styles.update(
            {
                "markdown.code": f"bold {accent} on {surface}",
                "markdown.block_quote": f"italic {muted}",
                "markdown.list": colour("primary", "#0178D4"),
                "markdown.item.bullet": f"bold {colour('primary', '#0178D4')}",
                "markdown.item.number": colour("primary", "#0178D4"),
                "markdown.hr": muted,
                "markdown.link": f"underline {accent}",
                "markdown.link_url": muted,
                "markdown.table.border": muted,
                "markdown.table.header": "bold",
                "markdown.kbd": f"bold {accent}",
            }
        )
        return cls(tuple(sorted(styles.items())), "monokai" if dark else "default")


class MarkdownRenderer:
    """Renders Markdown blocks to :class:`Strip` lines at a given width."""

    def __init__(self, style: MarkdownStyle) -> None:
        self.style = style
        self._console = Console(
            file=io.StringIO(),
            width=80,
            color_system="truecolor",
            force_terminal=True,
            legacy_windows=False,
            markup=False,
            emoji=False,
            highlight=False,
            theme=Theme(dict(style.styles), inherit=True),
        )

    def render(self, text: str, width: int) -> list[Strip]:
        """The lines of one block (no blank lines around it)."""
        width = max(1, width)
        markdown = _markdown(text, self.style.code_theme)
        options = self._console.options.update(width=width, height=None)
        lines = self._console.render_lines(markdown, options, pad=False, new_lines=False)
        while lines and _blank(lines[-1]):
            lines.pop()
        start = 0
        while start < len(lines) and _blank(lines[start]):
            start += 1
        return [Strip(line) for line in lines[start:]]


def _blank(line: list[Segment]) -> bool:
    return all(not segment.text.strip() for segment in line if not segment.control) and not any(
        segment.style is not None and segment.style.bgcolor is not None
        for segment in line
        if segment.text
    )


_WARM_UP = "# a\n\nSome `code`, **bold**, a [link](x).\n\n- one\n1. two\n\n```python\nx = 1\n```\n"


def warm_up() -> None:
    """Render a small reply once (any thread): the first reply of a run then does not wait for
    what rendering imports and builds on first use (pygments' lexer and style tables, Rich's
    Markdown elements), which took 0.3 s and more on the event loop."""
    MarkdownRenderer(MarkdownStyle.from_theme({})).render(_WARM_UP, 80)
