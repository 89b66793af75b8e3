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


_CHANGES = {
    "replaced": "was replaced by another program",
    "truncated": "was cut short by another program",
    "deleted": "was deleted by another program",
    "modified": "was changed by another program",
}
_OFFERS = {
    "replaced": "reopen it to see the new version, or save a copy of this one",
    "truncated": "reopen it, or save a copy of what pitui still holds",
    "deleted": "save a copy to keep this session",
    "modified": "reopen it, or save a copy of what pitui still holds",
}


class SessionChangedError(ReadOnlySessionError):
    """The file changed under an open session in a way appends cannot follow (replaced,
    truncated, deleted or rewritten): the store stopped writing and is read-only from now on.

    ``kind`` is ``"replaced"``, ``"truncated"``, ``"deleted"`` or ``"modified"``. What to offer:
    :meth:`SessionStore.reopen` (not for ``"deleted"``) and :meth:`SessionStore.save_copy`.
    """

    def __init__(self, kind: str, path: object) -> None:
        super().__init__(
            f"The session file {path} {_CHANGES[kind]}, so pitui stopped saving to it: "
            f"{_OFFERS[kind]}."
        )
        self.kind = kind
        self.path = path

    @property
    def can_reopen(self) -> bool:
        return self.kind != "deleted"
