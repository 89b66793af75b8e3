"""What the terminal tells pitui about Enter with a modifier, and pastes it did not bracket.

Most terminals send the same byte (CR) for Enter and Shift+Enter; only those speaking the kitty
keyboard protocol (CSI u, which Textual turns on) report ``shift+enter``. Alt+Enter is sent as
ESC CR by xterm, GNOME Terminal, tmux and the rest, which Textual reads as a plain Enter: the
sequence is taught to Textual's key table
(:func:`pitui.ui.textual_patches.keys.teach_textual_enter_keys`), so Alt+Enter is a newline
everywhere.

The rule for the one-time newline hint (see :class:`pitui.ui.widgets.prompt.PromptEditor`):
Shift+Enter counts as reported when the terminal is one known to speak the kitty protocol
(from ``TERM``, ``TERM_PROGRAM`` and friends, and not inside tmux or screen, which do not pass
it on), or as soon as a ``shift+enter`` key has been received.

A lone Esc is reported at once, without Textual's wait for a sequence that may follow it:
:func:`pitui.ui.textual_patches.keys.answer_lone_escape`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

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
