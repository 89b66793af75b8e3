"""Making untrusted text safe to show: no terminal escapes reach the terminal, no markup is
parsed. SGR colour sequences in tool output may be rendered as colours (through Rich's ANSI
decoder); every other escape or control sequence (cursor moves, OSC titles, OSC 52 clipboard
writes, DCS, bells) is removed.

Callers still render the result as literal text (``Content(text)``, ``Text(text)`` or Markdown),
never as Textual or Rich markup.
"""

from __future__ import annotations

import re

from rich.text import Text

# CSI sequences (ESC [ ... final byte), OSC (ESC ] ... BEL or ST), DCS/SOS/PM/APC (ESC P/X/^/_
# ... ST), other two-byte escapes, and C1 controls.
_OSC = r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
_STRING = r"\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
_CSI = r"\x1b\[[0-?]*[ -/]*[@-~]"
_ESC = r"\x1b[@-Z\\-_]|\x1b[ -/]*[0-~]"
_C1 = r"[\x80-\x9f]"
_ANY_ESCAPE = re.compile(f"{_OSC}|{_STRING}|{_CSI}|{_ESC}|{_C1}")
_SGR = re.compile(r"\x1b\[[0-9;:]*m")
# An ESC that does not start an SGR sequence.
_STRAY_ESC = re.compile(r"\x1b(?!\[[0-9;:]*m)")
# Control characters except tab and newline (and except ESC, for the SGR-keeping variant).
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_CONTROLS_BUT_ESC = re.compile(r"[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f]")
# An escape sequence that may still be incomplete at the end of a streamed chunk.
_OPEN_TAIL = re.compile(r"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*|[PX^_][^\x1b]*|[ -/]*)?$")
MAX_HELD = 512


def _carriage_returns(text: str) -> str:
    """``\\r\\n`` is a newline; a lone ``\\r`` (progress bars) keeps what was written last."""
    text = text.replace("\r\n", "\n")
    if "\r" not in text:
        return text
    lines = []
    for line in text.split("\n"):
        if "\r" in line:
            parts = [p for p in line.split("\r") if p]
            line = parts[-1] if parts else ""
        lines.append(line)
    return "\n".join(lines)


def strip_escapes(text: str) -> str:
    """Remove every escape sequence and control character (tabs and newlines stay)."""
    return _CONTROLS.sub("", _ANY_ESCAPE.sub("", _carriage_returns(text)))


def keep_sgr_only(text: str) -> str:
    """Remove every escape sequence except SGR colour sequences.

    Afterwards every ESC left in the text starts an SGR sequence, which Rich's ANSI decoder
    turns into a style (the ESC never reaches the terminal).
    """

    def keep(match: re.Match[str]) -> str:
        return match.group(0) if _SGR.fullmatch(match.group(0)) else ""

    cleaned = _ANY_ESCAPE.sub(keep, _carriage_returns(text))
    cleaned = _CONTROLS_BUT_ESC.sub("", cleaned)
    return _STRAY_ESC.sub("", cleaned)


def tool_output_text(text: str) -> Text:
    """Tool output as a Rich ``Text``: SGR colours kept, everything else inert."""
    return Text.from_ansi(keep_sgr_only(text))


def plain_text(text: str) -> Text:
    """Untrusted text as a Rich ``Text`` with no styles and no escapes."""
    return Text(strip_escapes(text))


class StreamSanitizer:
    """:func:`strip_escapes` for text arriving in chunks: an escape sequence split across two
    chunks is held back until it is complete (and then dropped), instead of leaking its tail
    as visible text."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, chunk: str) -> str:
        text = self._held + chunk
        self._held = ""
        tail = _OPEN_TAIL.search(text)
        if tail is not None and len(text) - tail.start() <= MAX_HELD:
            self._held = text[tail.start() :]
            text = text[: tail.start()]
        # A trailing "\r" may be the first half of "\r\n".
        if text.endswith("\r"):
            self._held = "\r" + self._held
            text = text[:-1]
        return strip_escapes(text)

    def flush(self) -> str:
        held, self._held = self._held, ""
        return strip_escapes(held)
