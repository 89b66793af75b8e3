"""The tail of a running command's output, as its tool block shows it.

:class:`LiveTail` keeps the last ``LIVE_LINES`` lines (each cut at ``LINE_CHARS``) of what the
agent's ``ToolOutput`` events carried and counts the rest, so memory and the cost of a frame
stay the same however much a command prints. Lines are sanitized when they are shown (SGR
colours kept, every other escape removed), so a sequence split across two events is joined
again before it is judged.
"""

from __future__ import annotations

from collections import deque

from rich.text import Text

from pitui.ui.sanitize import tool_output_text

LIVE_LINES = 200
LINE_CHARS = 2000


class LiveTail:
    def __init__(self, max_lines: int = LIVE_LINES, line_chars: int = LINE_CHARS) -> None:
        self._lines: deque[str] = deque(maxlen=max_lines)
        self._partial = ""  # the line being written (no line break yet)
        self._line_chars = line_chars
        self.breaks = 0  # line breaks received (or counted as left out)

    def feed(self, text: str, omitted_lines: int = 0, cut: bool = False) -> None:
        """Output received; ``cut``: it does not continue what came before."""
        if cut:
            self._lines.clear()
            self._partial = ""
        self.breaks += omitted_lines
        pieces = (self._partial + text).split("\n")
        last = pieces.pop()
        self._partial = last[-self._line_chars :]
        for piece in pieces[-(self._lines.maxlen or 1) :]:
            self._lines.append(piece[: self._line_chars])
        self.breaks += len(pieces)

    @property
    def line_count(self) -> int:
        """Lines of output so far (the one being written included)."""
        return self.breaks + (1 if self._partial else 0)

    @property
    def dropped(self) -> int:
        """Lines no longer kept (only counted)."""
        return self.breaks - len(self._lines)

    def tail(self, count: int) -> list[Text]:
        """The last ``count`` lines, sanitized, with colours."""
        raw = list(self._lines)
        if self._partial:
            raw.append(self._partial)
        raw = raw[-count:] if count > 0 else []
        while raw and not raw[-1].strip():
            raw.pop()
        if not raw:
            return []
        text = tool_output_text("\n".join(raw))
        text.expand_tabs(4)
        return list(text.split("\n", allow_blank=True))
