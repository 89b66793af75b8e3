"""Everything the command line writes goes through here.

Text meant for people (``pitui tree``, ``context``, ``sessions``, ``compact``, print mode's
reply and its notes) passes the terminal sanitizer of :mod:`pitui.text`: session files, model
replies and tool output are untrusted, and no escape sequence or control byte from them may
reach the terminal. JSON output stays exact: the same values, with the control characters JSON
itself leaves raw (DEL and C1) written as ``\\u`` escapes.
"""

from __future__ import annotations

import re
import sys
from typing import Any, TextIO

from pitui.session.codec import dumps_line, dumps_pretty
from pitui.text import StreamSanitizer, terminal_text

# Raw characters JSON leaves unescaped that a terminal may still act on. They can only occur
# inside JSON strings, so escaping them keeps the document's meaning.
_JSON_RAW_CONTROLS = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def terminal_json(text: str) -> str:
    """JSON text with DEL, C1 controls, line separators and bidi controls written as ``\\u``
    escapes (the same values)."""
    return _JSON_RAW_CONTROLS.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def json_text(obj: Any) -> str:
    """Indented JSON safe for a terminal (exact values)."""
    return terminal_json(dumps_pretty(obj))


def json_line(obj: Any) -> str:
    """One compact JSON line (newline included), safe for a terminal (exact values)."""
    return terminal_json(dumps_line(obj).decode("utf-8", errors="replace"))


def print_json(obj: Any, file: TextIO | None = None) -> None:
    """Indented JSON (exact values, terminal-safe) and a newline."""
    stream = file if file is not None else sys.stdout
    stream.write(json_text(obj) + "\n")


def say(text: str = "", file: TextIO | None = None) -> None:
    """Print untrusted text for people, sanitized, ending with one newline."""
    stream = file if file is not None else sys.stdout
    clean = terminal_text(text)
    stream.write(clean if clean.endswith("\n") else clean + "\n")


def note(text: str, file: TextIO | None = None) -> None:
    """A ``pitui: ...`` line on stderr (warnings, errors, progress), sanitized."""
    say(f"pitui: {text}", file if file is not None else sys.stderr)


class TerminalStream:
    """A streamed reply for people: chunks sanitized as they arrive (an escape sequence split
    across chunks is held back, then dropped)."""

    def __init__(self, file: TextIO) -> None:
        self.file = file
        self._sanitizer = StreamSanitizer()
        self.ended_with_newline = True

    def write(self, chunk: str) -> None:
        text = terminal_text(self._sanitizer.feed(chunk))
        if text:
            self.file.write(text)
            self.file.flush()
            self.ended_with_newline = text.endswith("\n")

    def finish(self) -> None:
        """Flush what was held back and end the line."""
        text = terminal_text(self._sanitizer.flush())
        if text:
            self.file.write(text)
            self.ended_with_newline = text.endswith("\n")
        if not self.ended_with_newline:
            self.file.write("\n")
            self.ended_with_newline = True
        self.file.flush()
