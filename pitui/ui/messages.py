"""App-wide messages: store events and agent events, posted by the bridge."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from pitui.agent.events import AgentEvent


@dataclass
class EntryAppended(Message):
    entry_id: str
    parent_id: str | None


@dataclass
class LeafMoved(Message):
    old_leaf_id: str | None
    new_leaf_id: str | None


@dataclass
class SessionSwitched(Message):
    path: str | None


@dataclass
class AgentUpdate(Message):
    """One agent event (streaming delta, message end, tool start/end, retry, compaction, ...)."""

    event: AgentEvent


@dataclass
class FileChanged(Message):
    """The session file was replaced, truncated, deleted or rewritten by another program: the
    store stopped writing (``message`` is the sentence to show)."""

    kind: str
    message: str
    can_reopen: bool


@dataclass
class WriterChanged(Message):
    """This pitui became the session's writer (another pitui had it open and closed it)."""

    previous_holder: str | None


@dataclass
class OthersAppended(Message):
    """Another program (pi, a second tool) appended ``count`` entries to the open session;
    ``continues``: they continue the active branch, and the leaf followed them."""

    count: int
    continues: bool
