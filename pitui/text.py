"""Pure text helpers every layer may use: JavaScript-compatible string measures (pi counts and
cuts strings as JavaScript does) and the terminal-text sanitizer.

Nothing here imports another pitui module (but the pure ``pitui.deepjson``), Rich, Textual or
litellm.

Sanitizing: no untrusted text reaches a terminal with control sequences. :func:`strip_escapes`
removes every escape sequence and control character (tabs and newlines stay);
:func:`keep_sgr_only` keeps SGR colour sequences, for callers that render them as styles
(Rich's ANSI decoder), and removes everything else (cursor moves, OSC titles, OSC 52 clipboard
writes, DCS, bells). :func:`terminal_line` is for plain-text command output, :func:`one_line`
for a short line made of any text (titles, previews, error messages).
"""

from __future__ import annotations

import os
import re
from typing import Any

from pitui.deepjson import dumps as deep_dumps

# ----------------------------------------------------------------------------- JavaScript strings


def js_len(text: str) -> int:
    """Length of ``text`` as JavaScript counts it (UTF-16 code units)."""
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def js_truncate(text: str, units: int) -> str:
    """The first ``units`` UTF-16 code units of ``text``, never splitting a surrogate pair."""
    if text.isascii():
        return text[:units]
    out: list[str] = []
    used = 0
    for ch in text:
        size = 2 if ord(ch) > 0xFFFF else 1
        if used + size > units:
            break
        out.append(ch)
        used += size
    return "".join(out)


def _js_value(value: Any) -> Any:
    """Integral floats as ints, as ``JSON.stringify`` writes them (iterative: any depth)."""
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) < 1e21 else value
    if not isinstance(value, dict | list):
        return value
    root: Any = {} if isinstance(value, dict) else []
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, target = stack.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in items:
            if isinstance(item, dict | list):
                child: Any = {} if isinstance(item, dict) else []
                stack.append((item, child))
            elif isinstance(item, float) and item.is_integer() and abs(item) < 1e21:
                child = int(item)
            else:
                child = item
            if isinstance(target, dict):
                target[key] = child
            else:
                target.append(child)
    return root


def js_stringify(value: Any) -> str:
    """``JSON.stringify`` for plain JSON data (compact, non-ASCII kept, integral floats as ints)."""
    if value is None:
        return "null"
    return deep_dumps(_js_value(value), separators=(",", ":"), ensure_ascii=False)


# ----------------------------------------------------------------------------- terminal text

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
# Bidirectional embeddings, overrides and isolates: they can make a line read as something
# else (terminals with BiDi support reorder text around them).
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
# Anything the sanitizers would change (their fast path: most text has none of these).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# An escape sequence that may still be incomplete at the end of a streamed chunk.
_OPEN_TAIL = re.compile(r"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*|[PX^_][^\x1b]*|[ -/]*)?$")
MAX_HELD = 512


def _carriage_returns(text: str) -> str:
    """``\\r\\n`` is a newline; a lone ``\\r`` (progress bars) keeps what was written last.
    Unicode line and paragraph separators are newlines too."""
    text = text.replace("\r\n", "\n")
    if "\u2028" in text or "\u2029" in text:
        text = text.replace("\u2028", "\n").replace("\u2029", "\n")
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
    """Remove every escape sequence, control character and bidi control (tabs and newlines
    stay). Text with none of them is returned as it is (the common case, and fast)."""
    if _UNSAFE.search(text) is None:
        return text
    return _BIDI.sub("", _CONTROLS.sub("", _ANY_ESCAPE.sub("", _carriage_returns(text))))


def keep_sgr_only(text: str) -> str:
    """Remove every escape sequence except SGR colour sequences.

    Afterwards every ESC left in the text starts an SGR sequence, which Rich's ANSI decoder
    turns into a style (the ESC never reaches the terminal).
    """

    def keep(match: re.Match[str]) -> str:
        return match.group(0) if _SGR.fullmatch(match.group(0)) else ""

    cleaned = _ANY_ESCAPE.sub(keep, _carriage_returns(text))
    cleaned = _BIDI.sub("", _CONTROLS_BUT_ESC.sub("", cleaned))
    return _STRAY_ESC.sub("", cleaned)


def terminal_text(text: str) -> str:
    """Untrusted text for plain terminal output (CLI text mode, stderr notes): no escape
    sequences, no control characters but tab and newline, no bidi controls."""
    return strip_escapes(text)


def terminal_line(text: str) -> str:
    """:func:`terminal_text` on one line: newlines and tabs become spaces, and the text keeps
    its own spacing otherwise (a path or a name must read exactly as it is)."""
    return terminal_text(text).replace("\n", " ").replace("\t", " ")


def one_line(text: str, limit: int | None = None, *, keep_escapes: bool = False) -> str:
    """Untrusted text as one short, safe line (a title, a preview, an error's words): escape
    sequences and control characters removed, every run of whitespace (newlines and tabs
    included) one space, none at either end; at most ``limit`` characters, the last of them
    ``…`` when something was cut. For text whose spacing matters, :func:`terminal_line`.

    ``keep_escapes``: leave escape sequences in, for a line that is data rather than something
    to show: JSON output is exact (``pitui context --diff --json``) and whoever shows it
    sanitizes it then."""
    line = " ".join((text if keep_escapes else strip_escapes(text)).split())
    if limit is not None and len(line) > limit:
        return line[: max(limit - 1, 0)] + "…"
    return line


def tilde_path(path: str) -> str:
    """``path`` with the home directory written ``~`` (for display), safe for the terminal."""
    home = os.path.expanduser("~")
    if home not in ("", "/") and (path == home or path.startswith(home + os.sep)):
        path = "~" + path[len(home) :]
    return terminal_line(path)


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
