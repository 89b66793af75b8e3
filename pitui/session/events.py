"""Small events a store sends its subscribers (the UI bridge turns them into messages).

Frozen ``msgspec`` structs (as :mod:`pitui.agent.events`): defined in microseconds, where a
dataclass costs a millisecond of start-up each."""

from __future__ import annotations

import msgspec


class EntryAppended(msgspec.Struct, frozen=True):
    entry_id: str
    parent_id: str | None


class LeafMoved(msgspec.Struct, frozen=True):
    old_leaf_id: str | None
    new_leaf_id: str | None


class SessionSwitched(msgspec.Struct, frozen=True):
    old_path: str | None
    new_path: str | None


class EntriesReloaded(msgspec.Struct, frozen=True):
    """Another writer (pi, a second tool) appended these entries to the file; they are now in
    the store. The leaf does not move."""

    entry_ids: tuple[str, ...]


class FileChanged(msgspec.Struct, frozen=True):
    """The file was replaced, truncated, deleted or rewritten under the open session: the store
    stopped writing (``message`` is the sentence to show, ``kind`` as in SessionChangedError)."""

    kind: str
    message: str
    can_reopen: bool


class WriterChanged(msgspec.Struct, frozen=True):
    """The store became the session's writer: the process that held it (``previous_holder``)
    closed it and this store took the lock over."""

    previous_holder: str | None


SessionEvent = (
    EntryAppended | LeafMoved | SessionSwitched | EntriesReloaded | FileChanged | WriterChanged
)
