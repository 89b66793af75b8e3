"""The tail of a running command's output, as its tool block shows it.

:class:`LiveTail` keeps the last ``LIVE_LINES`` lines (each cut at ``LINE_CHARS``) of what the
agent's ``ToolOutput`` events carried and counts the rest, so memory and the cost of a frame
stay the same however much a command prints. Lines are sanitized when they are first shown
(SGR colours kept, every other escape removed; a sequence split across two events is joined
again before it is judged) and kept converted, so a frame converts only the lines that are new
on screen.
"""

from __future__ import annotations

from collections import deque

from rich.text import Text

from pitui.text import keep_sgr_only

LIVE_LINES = 200
LINE_CHARS = 1000


class LiveTail:
    def __init__(self, max_lines: int = LIVE_LINES, line_chars: int = LINE_CHARS) -> None:
        self._lines: deque[str] = deque(maxlen=max_lines)
        self._shown: dict[int, Text] = {}  # converted complete lines, by their line number
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
        if count <= 0:
            return []
        kept = len(self._lines)
        first = self.breaks - kept  # the line number of the oldest kept line
        complete = min(kept, count - (1 if self._partial else 0))
        shown: dict[int, Text] = {}
        lines: list[Text] = []
        for index in range(kept - complete, kept):
            number = first + index
            line = self._shown.get(number)
            if line is None:
                line = _convert(self._lines[index])
            shown[number] = line
            lines.append(line)
        self._shown = shown  # only what is on screen stays converted
        if self._partial:
            lines.append(_convert(self._partial))
        while lines and not lines[-1].plain.strip():
            lines.pop()
        return lines


def _convert(line: str) -> Text:
    """One line of output as ``Text``: SGR colours as styles, every other escape removed."""
    cleaned = keep_sgr_only(line)
    text = Text.from_ansi(cleaned) if "\x1b" in cleaned else Text(cleaned)
    text.expand_tabs(4)
    if "\n" in text.plain:  # a lone CR or a Unicode line separator became one
        text = Text(" ").join(text.split("\n"))
    return text
