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


SessionEvent = EntryAppended | LeafMoved | SessionSwitched
