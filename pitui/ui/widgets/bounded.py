"""Bounded text in the chat: a long message shows its start and a note saying how much is
hidden; "show more" (click, or Enter when focused) reveals the next part.

A session can hold a reply of megabytes, a message of hundreds of thousands of text blocks, a
user prompt of a whole log: rendering all of it (Markdown, wrapped lines) costs seconds
and gigabytes before the first frame. What one entry shows at first is bounded in characters,
lines and widgets (``TEXT_CHARS``, ``MARKDOWN_CHARS``, ``TEXT_LINES``, ``TEXT_BLOCKS``), and
every "show more" reveals one more part of the same size: the cost follows what the reader
asks to see.
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

TEXT_CHARS = 16_000
"""Characters of one entry's text shown at first, and revealed by each "show more"."""
TEXT_LINES = 300
"""Lines likewise (a text of short lines is cut at this many)."""
MARKDOWN_CHARS = 6_000
"""Characters of one entry's Markdown (replies, summaries) shown at first and revealed by each
"show more": Markdown costs more per character than plain text (parsing, wrapping, highlighting)."""
TEXT_BLOCKS = 40
"""Text and thinking blocks of one message shown as their own widgets; the text of the rest is
hidden behind the last text block's "show more"."""
MORE_STYLE = "italic $text-muted"


def cut_at(text: str, start: int = 0, chars: int = TEXT_CHARS, lines: int = TEXT_LINES) -> int:
    """Where the part of ``text`` that starts at ``start`` ends: at most ``chars`` characters
    and ``lines`` lines, cut after a line end when there is one in the second half of the part
    (a paragraph is not split in the middle of a line), else at ``chars``."""
    end = min(len(text), start + chars)
    at = start - 1
    for _ in range(lines):
        at = text.find("\n", at + 1, end)
        if at < 0:
            break
    else:
        return at + 1
    if end >= len(text):
        return end
    newline = text.rfind("\n", start + chars // 2, end)
    return newline + 1 if newline >= 0 else end


def hidden_note(chars: int, blocks: int = 0) -> str:
    """``▼ 9,984,000 more characters hidden (12 more blocks) · click or Enter: show more``."""
    extra = f" ({blocks:,} more block{'s' if blocks != 1 else ''})" if blocks else ""
    return f"▼ {chars:,} more characters hidden{extra} · click or Enter: show more"


class MoreLine(Static, can_focus=True):
    """The note under a cut text; clicking it (or Enter when focused) asks for more."""

    DEFAULT_CSS: ClassVar[str] = """
    MoreLine { color: $text-muted; text-style: italic; }
    MoreLine:focus { background: $boost; color: $text; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "show_more", "Show more", show=False),
    ]
    FOCUS_ON_CLICK: ClassVar[bool] = False  # clicking shows more; typing stays in the editor

    class Pressed(Message):
        """The reader asked for more of the text above this line."""

        def __init__(self, line: MoreLine) -> None:
            super().__init__()
            self.line = line

        @property
        def control(self) -> MoreLine:
            return self.line

    def __init__(self, chars: int, blocks: int = 0, **kwargs: object) -> None:
        super().__init__(Content(hidden_note(chars, blocks)), markup=False, **kwargs)  # type: ignore[arg-type]

    def set_hidden(self, chars: int, blocks: int = 0) -> None:
        self.update(Content(hidden_note(chars, blocks)))

    def action_show_more(self) -> None:
        self.post_message(self.Pressed(self))

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.action_show_more()


class BoundedText(Static):
    """Literal text (no markup, no escapes: the caller sanitizes) shown a part at a time: the
    note on its last line says how much is hidden; a click (or Enter when focused) shows the
    next part."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "show_more", "Show more", show=False),
    ]
    FOCUS_ON_CLICK: ClassVar[bool] = False

    def __init__(self, text: str | Content = "", **kwargs: object) -> None:
        self._text = text.plain if isinstance(text, Content) else text
        self._end = cut_at(self._text)
        super().__init__(self._content(), markup=False, **kwargs)  # type: ignore[arg-type]
        self.can_focus = self.hidden_chars > 0

    @property
    def text(self) -> str:
        return self._text

    @property
    def hidden_chars(self) -> int:
        return len(self._text) - self._end

    def _content(self) -> Content:
        shown = Content(self._text[: self._end])
        if self.hidden_chars:
            gap = "" if self._text[: self._end].endswith("\n") else "\n"
            shown = shown + Content.styled(f"{gap}{hidden_note(self.hidden_chars)}", MORE_STYLE)
        return shown

    def set_text(self, text: str) -> None:
        """Show ``text`` instead (what was revealed stays revealed)."""
        self._text = text
        self._end = max(cut_at(text), min(self._end, len(text)))
        self.can_focus = self.hidden_chars > 0
        self.update(self._content())

    def show_more(self) -> bool:
        """Reveal the next part; False when everything is shown."""
        if not self.hidden_chars:
            return False
        self._end = cut_at(self._text, self._end)
        self.can_focus = self.hidden_chars > 0
        self.update(self._content())
        return True

    def action_show_more(self) -> None:
        self.show_more()

    def on_click(self, event: events.Click) -> None:
        if self.show_more():
            event.stop()
