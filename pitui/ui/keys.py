"""What the terminal tells pitui about Enter with a modifier, and about a lone Esc.

Most terminals send the same byte (CR) for Enter and Shift+Enter; only those speaking the kitty
keyboard protocol (CSI u, which Textual turns on) report ``shift+enter``. Alt+Enter is sent as
ESC CR by xterm, GNOME Terminal, tmux and the rest, which Textual reads as a plain Enter: the
sequence is taught to Textual's key table here, so Alt+Enter is a newline everywhere.

The rule for the one-time newline hint (see :class:`pitui.ui.widgets.prompt.PromptEditor`):
Shift+Enter counts as reported when the terminal is one known to speak the kitty protocol
(from ``TERM``, ``TERM_PROGRAM`` and friends, and not inside tmux or screen, which do not pass
it on), or as soon as a ``shift+enter`` key has been received.

Esc: an ESC byte also starts every escape sequence, so Textual waits for what may follow before
it reports Esc (``ESCDELAY``, 100 ms, and its input thread looks again only every 100 ms): every
Esc (closing the tree, clearing a search, aborting) came at least 100 ms late. A terminal writes
a key's whole sequence at once, so a read holding nothing but ESC bytes is the Esc key: it is
reported at once (:func:`answer_lone_escape`). Setting ``ESCDELAY`` keeps Textual's wait (for a
link that splits sequences).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

NEWLINE_KEYS = "ctrl+j,alt+enter"  # and shift+enter (PromptEditor notes that it came)
NEWLINE_HINT = "Alt+Enter or Ctrl+J for a newline"

# Terminals that speak the kitty keyboard protocol (they report Shift+Enter as such).
_KITTY_TERMS = ("kitty", "ghostty", "foot", "wezterm", "alacritty", "rio")
_KITTY_PROGRAMS = ("wezterm", "ghostty", "kitty", "rio", "alacritty")
_KITTY_VARIABLES = ("KITTY_WINDOW_ID", "WEZTERM_PANE", "GHOSTTY_RESOURCES_DIR")


def reports_shift_enter(env: Mapping[str, str] | None = None) -> bool:
    """True when the terminal is known to tell Shift+Enter from Enter (kitty protocol)."""
    env = os.environ if env is None else env
    term = env.get("TERM", "").lower()
    if env.get("TMUX") or term.startswith(("screen", "tmux")):
        return False  # the multiplexer sends CR for both, whatever the outer terminal does
    program = env.get("TERM_PROGRAM", "").lower()
    return (
        any(name in term for name in _KITTY_TERMS)
        or any(name in program for name in _KITTY_PROGRAMS)
        or any(env.get(name) for name in _KITTY_VARIABLES)
    )


@dataclass(frozen=True)
class _KeyName:
    """Stands in for a ``textual.keys.Keys`` member in Textual's sequence table."""

    value: str


_EXTRA_SEQUENCES = {
    "\x1b\r": "alt+enter",  # ESC CR: Alt+Enter in xterm, GNOME Terminal, tmux, ...
}


def teach_textual_enter_keys() -> None:
    """Add the sequences above to Textual's key table (idempotent; does not override)."""
    try:
        from textual._ansi_sequences import ANSI_SEQUENCES_KEYS
    except ImportError:  # pragma: no cover - Textual moved its table: Ctrl+J still works
        return
    table = cast(dict[str, Any], ANSI_SEQUENCES_KEYS)
    for sequence, name in _EXTRA_SEQUENCES.items():
        table.setdefault(sequence, (_KeyName(name),))


def answer_lone_escape(env: Mapping[str, str] | None = None) -> None:
    """Report a lone Esc at once in the terminal driver (see the module doc; idempotent; not
    when ``ESCDELAY`` is set)."""
    if "ESCDELAY" in (os.environ if env is None else env):
        return
    try:
        from textual.drivers import linux_driver
    except ImportError:  # pragma: no cover - not a POSIX terminal
        return
    parser = linux_driver.XTermParser
    if not getattr(parser, "answers_lone_escape", False):
        linux_driver.XTermParser = lone_escape_parser(parser)  # type: ignore[misc]


def lone_escape_parser(base: type[Any]) -> type[Any]:
    """``base`` (Textual's input parser) reporting a read of only ESC bytes as Esc at once."""

    class LoneEscapeParser(base):
        answers_lone_escape = True

        def feed(self, data: str) -> Any:
            yield from super().feed(data)
            waiting: float | None = getattr(self, "_timeout_time", None)
            if data and not data.strip("\x1b") and waiting is not None:
                # Waiting to see whether a sequence follows: nothing does (a terminal sends a
                # sequence in one write), so the next tick, right after this feed, reports Esc.
                self._timeout_time = 0.0

    return LoneEscapeParser


PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"
_LINE_BREAKS = "\r\n"


class UnbracketedPaste:
    """Tells a paste the terminal did not bracket from typing, one terminal read at a time.

    A terminal (or tmux's ``paste-buffer``) without bracketed paste sends pasted lines as typed
    text with a CR for each line break: read by read, each CR would be Enter and send one
    prompt per line. A person types one key at a time, and a read that coalesced keys (a slow
    link, a busy machine) ends with the Enter that sent them; so a read of plain text with a
    line break *inside* it (more text follows the CR or LF) is a paste: one insertion, every
    line break a newline. Bracketed pastes are left to Textual (they come as one paste event),
    also when their text is split over several reads.
    """

    def __init__(self) -> None:
        self._inside_brackets = False
        self._tail = ""  # the end of the last read: a bracket marker split over two reads

    def text(self, data: str, *, mid_sequence: bool = False) -> str | None:
        """The pasted text when ``data`` (one read) is an unbracketed paste, else None;
        ``mid_sequence``: the read continues an escape sequence (never a paste)."""
        seen = self._tail + data
        self._tail = seen[-(len(PASTE_START) - 1) :]
        was_inside = self._inside_brackets
        start, end = seen.rfind(PASTE_START), seen.rfind(PASTE_END)
        if start > end:
            self._inside_brackets = True
        elif end > start:
            self._inside_brackets = False
        if mid_sequence or was_inside or self._inside_brackets or "\x1b" in data:
            return None
        if not any(c in _LINE_BREAKS for c in data.strip(_LINE_BREAKS)):
            return None  # typing, and the Enter that ends (or starts) it
        if not all(c.isprintable() or c in "\r\n\t" for c in data):
            return None  # control keys (Ctrl+...) typed in one go, not a paste
        return data.replace("\r\n", "\n").replace("\r", "\n")
