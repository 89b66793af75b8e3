"""Untrusted text as Rich ``Text`` for the TUI (the sanitizer itself is :mod:`pitui.text`).

Callers render the result as literal text (``Content(text)``, ``Text(text)`` or Markdown), never
as Textual or Rich markup. SGR colour sequences in tool output are rendered as colours; every
other escape or control sequence is removed.
"""

from __future__ import annotations

from rich.text import Text

from pitui.text import keep_sgr_only


def tool_output_text(text: str) -> Text:
    """Tool output as a Rich ``Text``: SGR colours kept, everything else inert."""
    return Text.from_ansi(keep_sgr_only(text))
