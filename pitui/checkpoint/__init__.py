"""Workspace checkpoints: the project folder captured on the session tree, restored when the
leaf moves, in a private git object store that never touches the user's own repository.

- :mod:`.store`: capture, compare, keep and prune (``CheckpointStore``).
- :mod:`.restore`: preview and all-or-nothing restore with crash recovery.
- :mod:`.record`: checkpoint entries in a session and the files at any node.
- :mod:`.diff`: text diffs of changes.
- :mod:`.settings`: every setting checkpoints and approval modes read.

No Textual, no litellm; git runs in subprocesses (call from a thread, never the event loop).
"""

from pitui.checkpoint.git import GitUnavailable, find_git
from pitui.checkpoint.record import CheckpointIndex, CheckpointRef, StateAt
from pitui.checkpoint.restore import RestorePlan, RestoreRefused, RestoreResult
from pitui.checkpoint.settings import WorkspaceSettings, read_workspace_settings
from pitui.checkpoint.store import Capture, Change, CheckpointsOff, CheckpointStore

__all__ = [
    "Capture",
    "Change",
    "CheckpointIndex",
    "CheckpointRef",
    "CheckpointStore",
    "CheckpointsOff",
    "GitUnavailable",
    "RestorePlan",
    "RestoreRefused",
    "RestoreResult",
    "StateAt",
    "WorkspaceSettings",
    "find_git",
    "read_workspace_settings",
]
