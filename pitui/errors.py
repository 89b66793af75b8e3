"""The root of every error a user can cause and act on.

A :class:`UserError` carries one sentence saying what went wrong and what to do; the TUI shows
it as a notice and goes on, the CLI prints it on one line. Anything else that escapes is an
internal error: logged with its traceback, shown as one sentence naming the log.

Pure: imports nothing from pitui, so every layer may derive from it.
"""

from __future__ import annotations


class UserError(Exception):
    """An error the user can act on; ``str(error)`` is the one-sentence message."""

    @property
    def message(self) -> str:
        return str(self)
