"""Small events a store sends its subscribers (the UI bridge turns them into messages)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EntryAppended:
    entry_id: str
    parent_id: str | None


@dataclass(frozen=True)
class LeafMoved:
    old_leaf_id: str | None
    new_leaf_id: str | None


@dataclass(frozen=True)
class SessionSwitched:
    old_path: str | None
    new_path: str | None


@dataclass(frozen=True)
class EntriesReloaded:
    """Another writer (pi, a second tool) appended these entries to the file; they are now in
    the store. The leaf does not move."""

    entry_ids: tuple[str, ...]


@dataclass(frozen=True)
class FileChanged:
    """The file was replaced, truncated, deleted or rewritten under the open session: the store
    stopped writing (``message`` is the sentence to show, ``kind`` as in SessionChangedError)."""

    kind: str
    message: str
    can_reopen: bool


SessionEvent = EntryAppended | LeafMoved | SessionSwitched | EntriesReloaded | FileChanged
