"""Making untrusted text safe to show: no terminal escapes reach the terminal, no markup is
parsed. SGR colour sequences in tool output may be rendered as colours (through Rich's ANSI
decoder); every other escape or control sequence (cursor moves, OSC titles, OSC 52 clipboard
writes, DCS, bells) is removed."""

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
# Control characters except tab and newline.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def strip_escapes(text: str) -> str:
    """Remove every escape sequence and control character (tabs and newlines stay)."""
    return _CONTROLS.sub("", _ANY_ESCAPE.sub("", text.replace("\r\n", "\n")))


def keep_sgr_only(text: str) -> str:
    """Remove every escape sequence except SGR colour sequences."""

    def keep(match: re.Match[str]) -> str:
        return match.group(0) if _SGR.fullmatch(match.group(0)) else ""

    cleaned = _ANY_ESCAPE.sub(keep, text.replace("\r\n", "\n"))
    # Controls other than ESC (which now only starts SGR sequences).
    return re.sub(r"[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f]", "", cleaned)


def tool_output_text(text: str) -> Text:
    """Tool output as a Rich ``Text``: SGR colours kept, everything else inert."""
    return Text.from_ansi(keep_sgr_only(text))


def plain_text(text: str) -> Text:
    """Untrusted text as a Rich ``Text`` with no styles and no escapes."""
    return Text(strip_escapes(text))
