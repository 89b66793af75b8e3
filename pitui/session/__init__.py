"""Session core: pi's session format v3, the tree store, and the projection.

Pure and fast to import: no Textual, no litellm, no network, no threads.
"""

from pitui.session.branching import clone, create_branched_session, fork
from pitui.session.errors import (
    EntryNotFoundError,
    ReadOnlySessionError,
    SessionChangedError,
    SessionError,
    SessionFileError,
    SessionWriteError,
)
from pitui.session.events import (
    EntriesReloaded,
    EntryAppended,
    FileChanged,
    LeafMoved,
    SessionEvent,
    SessionSwitched,
)
from pitui.session.loader import LoadWarning
from pitui.session.node import LEAF_MARKER_TYPE, Node
from pitui.session.projection import Projection
from pitui.session.shapes import message_text
from pitui.session.store import SessionStore

__all__ = [
    "LEAF_MARKER_TYPE",
    "EntriesReloaded",
    "EntryAppended",
    "EntryNotFoundError",
    "FileChanged",
    "LeafMoved",
    "LoadWarning",
    "Node",
    "Projection",
    "ReadOnlySessionError",
    "SessionChangedError",
    "SessionError",
    "SessionEvent",
    "SessionFileError",
    "SessionStore",
    "SessionSwitched",
    "SessionWriteError",
    "clone",
    "create_branched_session",
    "fork",
    "message_text",
]
