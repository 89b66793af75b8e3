"""A private read-only copy of the session for work in a thread (exports, statistics).

The live store belongs to the event loop (the agent appends to it); a thread must not read its
caches while they change. A persisted session is reopened read-only from its file (every entry
is on disk the moment it is appended); one that is not on disk yet is copied to a temporary
file first (fast, on the event loop). The snapshot's leaf is the live leaf.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from pitui.session.store import SessionStore


@dataclass
class Snapshot:
    path: Path
    leaf_id: str | None
    _tmp: Path | None = field(default=None, repr=False)

    def open(self) -> SessionStore:
        """Open the copy (call it in the thread that uses it); its leaf is the live leaf."""
        store = SessionStore.open(self.path, read_only=True)
        if self.leaf_id is None:
            store.reset_leaf()
        elif self.leaf_id in store:
            store.branch(self.leaf_id)
        return store

    def discard(self) -> None:
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)


def take_snapshot(store: SessionStore) -> Snapshot:
    if store.persisted and store.path is not None:
        return Snapshot(store.path, store.leaf_id)
    folder = Path(tempfile.mkdtemp(prefix="pitui-snapshot-"))
    copy = folder / "session.jsonl"
    store.save_copy(copy)
    return Snapshot(copy, store.leaf_id, folder)


def resolve_entry_id(store: SessionStore, value: str) -> str | None:
    """An exact entry id or a unique prefix of one (None: no such entry, or ambiguous)."""
    if value in store:
        return value
    matches = [n.id for n in store.nodes() if n.id.startswith(value)]
    return matches[0] if len(matches) == 1 else None
