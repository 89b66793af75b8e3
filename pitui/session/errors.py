"""Errors the session layer raises; each message is one sentence a user can act on."""

from __future__ import annotations

from pitui.errors import UserError


class SessionError(UserError):
    """Base class for session errors."""


class SessionFileError(SessionError):
    """The file cannot be opened as a session (missing, unreadable, or not a session)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind  # "missing" | "unreadable" | "invalid"


class SessionWriteError(SessionError):
    """An append could not be written; the store and the file are unchanged."""


class ReadOnlySessionError(SessionError):
    """An append was attempted on a session opened read-only."""


class EntryNotFoundError(SessionError, KeyError):
    """An entry id does not exist in the session."""

    def __init__(self, entry_id: str) -> None:
        super().__init__(f"Entry {entry_id} not found")
        self.entry_id = entry_id

    def __str__(self) -> str:
        return str(self.args[0])
