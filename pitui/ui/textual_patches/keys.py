"""Textual's input: its key table, its escape-sequence parser, and how a key is handed on.

* **Alt+Enter.** xterm, GNOME Terminal, tmux and the rest send Alt+Enter as ESC CR, which
  Textual's key table reads as a plain Enter. :func:`teach_textual_enter_keys` adds the
  sequence to the table (``textual._ansi_sequences.ANSI_SEQUENCES_KEYS``), so Alt+Enter is a
  newline everywhere (the key policy is :mod:`pitui.ui.keys`).
* **A lone Esc at once.** An ESC byte also starts every escape sequence, so Textual's parser
  waits for what may follow before it reports Esc (``ESCDELAY``, 100 ms, and its input thread
  looks again only every 100 ms): every Esc (closing the tree, clearing a search, aborting)
  came at least 100 ms late. A terminal writes a key's whole sequence at once, so a read
  holding nothing but ESC bytes is the Esc key: :func:`lone_escape_parser` reports it at once
  by ending the parser's wait (its ``_timeout_time``), and :func:`answer_lone_escape` puts
  that parser where Textual's Linux driver looks for it. Setting ``ESCDELAY`` keeps Textual's
  wait (for a link that splits sequences).
* :func:`forward_event`: Textual's own way of handing an input event to a widget.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from textual import events
    from textual.widget import Widget


@dataclass(frozen=True)
class _KeyName:
    """Stands in for a ``textual.keys.Keys`` member in Textual's sequence table."""

    value: str


EXTRA_SEQUENCES = {
    "\x1b\r": "alt+enter",  # ESC CR: Alt+Enter in xterm, GNOME Terminal, tmux, ...
}
"""Sequences taught to Textual's key table, and the key each one is."""


def _key_table() -> dict[str, Any] | None:
    try:
        from textual._ansi_sequences import ANSI_SEQUENCES_KEYS
    except ImportError:  # pragma: no cover - Textual moved its table: Ctrl+J still works
        return None
    return cast(dict[str, Any], ANSI_SEQUENCES_KEYS)


def teach_textual_enter_keys() -> None:
    """Add :data:`EXTRA_SEQUENCES` to Textual's key table (idempotent; does not override)."""
    table = _key_table()
    if table is None:  # pragma: no cover
        return
    for sequence, name in EXTRA_SEQUENCES.items():
        table.setdefault(sequence, (_KeyName(name),))


def enter_keys_taught() -> bool:
    """Every sequence of :data:`EXTRA_SEQUENCES` is read as its key."""
    table = _key_table() or {}
    return all(
        [getattr(key, "value", key) for key in table.get(sequence, ())] == [name]
        for sequence, name in EXTRA_SEQUENCES.items()
    )


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


def lone_escape_answered() -> bool:
    """The terminal driver's parser reports a lone Esc at once."""
    try:
        from textual.drivers import linux_driver
    except ImportError:  # pragma: no cover
        return False
    return bool(getattr(linux_driver.XTermParser, "answers_lone_escape", False))


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


def waiting_for_sequence(parser: Any) -> bool:
    """``parser`` (Textual's input parser) has read the start of an escape sequence and waits,
    until a deadline, for the rest of it."""
    return getattr(parser, "_timeout_time", None) is not None


def forward_event(widget: Widget, event: events.Event) -> None:
    """Hand ``event`` (an input event) to ``widget`` as Textual does for the focused widget:
    marked as forwarded, so the event bubbling back up is not taken for new input."""
    widget._forward_event(event)
