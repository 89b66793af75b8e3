"""The bridge: store and agent events become Textual messages, published on the app's
``session_events`` signal (widgets subscribe in ``on_mount``).

Widgets re-render from the store. When the leaf moves, the projection
is computed once by the store (it caches per leaf) and every view reads that same projection.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.message import Message
from textual.signal import Signal

from pitui.agent.events import AgentEvent
from pitui.session import SessionStore
from pitui.session.events import (
    EntriesReloaded,
    EntryAppended,
    FileChanged,
    LeafMoved,
    SessionEvent,
    WriterChanged,
)
from pitui.ui import messages

if TYPE_CHECKING:
    from textual.app import App

    from pitui.agent.session import AgentSession


class StoreBridge:
    def __init__(self, app: App[int]) -> None:
        self.app = app
        self.signal: Signal[Message] = Signal(app, "session-events")
        self._unsubscribe: list[Callable[[], None]] = []
        self._agent: AgentSession | None = None
        self._store: SessionStore | None = None

    def attach(self, store: SessionStore, agent: AgentSession | None) -> None:
        self.detach()
        self._agent = agent
        self._store = store
        self._unsubscribe.append(store.subscribe(self.on_store_event))
        if agent is not None:
            self._unsubscribe.append(agent.subscribe(self.on_agent_event))

    def detach(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()

    def on_store_event(self, event: SessionEvent) -> None:
        if isinstance(event, EntryAppended):
            self.publish(messages.EntryAppended(event.entry_id, event.parent_id))
        elif isinstance(event, LeafMoved):
            self.publish(messages.LeafMoved(event.old_leaf_id, event.new_leaf_id))
        elif isinstance(event, EntriesReloaded):
            # Another writer appended: every view reads the store again (not in the middle of
            # a run, whose streamed reply a rebuild would cut; the tree reads it when opened).
            # Entries that continue the active branch are shown: the leaf follows them.
            idle = self._agent is None or not self._agent.running
            store = self._store
            continues = store is not None and idle and follow_appends(store, event.entry_ids)
            if idle:
                path = store.path if store is not None else None
                self.publish(messages.SessionSwitched(str(path) if path else None))
            # After the views re-read the store: the notice goes under what they show. Not for
            # bookkeeping (a leaf marker), nor in a second view of a session another pitui
            # writes (its banner says so, and it would be a line per tool round).
            shown = [i for i in event.entry_ids if store is not None and _visible(store, i)]
            if shown and store is not None and not store.held_elsewhere:
                self.publish(messages.OthersAppended(len(shown), continues))
        elif isinstance(event, FileChanged):
            self.app.post_message(messages.FileChanged(event.kind, event.message, event.can_reopen))
            self.publish(messages.FileChanged(event.kind, event.message, event.can_reopen))
        elif isinstance(event, WriterChanged):
            self.publish(messages.WriterChanged(event.previous_holder))

    def on_agent_event(self, event: AgentEvent) -> None:
        self.publish(messages.AgentUpdate(event))

    def publish(self, message: Message) -> None:
        self.signal.publish(message)


def follow_appends(store: SessionStore, entry_ids: tuple[str, ...]) -> bool:
    """Move the leaf to the newest of ``entry_ids`` (another writer's appends) that continues
    the active branch (the leaf is among its ancestors; any, when there is no leaf yet); True
    when it moved. Nothing is written: the leaf only follows."""
    leaf = store.leaf
    for entry_id in reversed(entry_ids):
        if entry_id not in store:
            continue
        node = store.node(entry_id)
        if node.hidden:
            continue
        if leaf is None:
            store.branch(entry_id)
            return True
        cur = node.parent
        while cur is not None and cur is not leaf:
            cur = cur.parent
        if cur is leaf:
            store.branch(entry_id)
            return True
    return False


def _visible(store: SessionStore, entry_id: str) -> bool:
    return entry_id in store and not store.node(entry_id).hidden
