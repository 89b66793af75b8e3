"""Workspace checkpoints: the project folder captured on the session tree, restored when the
leaf moves, in a private git object store that never touches the user's own repository.

- :mod:`.store`: capture, compare, keep and prune (``CheckpointStore``).
- :mod:`.restore`: preview and all-or-nothing restore with crash recovery.
- :mod:`.record`: checkpoint entries in a session and the files at any node.
- :mod:`.diff`: text diffs of changes.
- :mod:`.settings`: every setting checkpoints and approval modes read.

No Textual, no litellm; git runs in subprocesses (call from a thread, never the event loop).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pitui.checkpoint.git import GitUnavailable, find_git
    from pitui.checkpoint.record import CheckpointIndex, CheckpointRef, StateAt
    from pitui.checkpoint.restore import RestorePlan, RestoreRefused, RestoreResult
    from pitui.checkpoint.settings import WorkspaceSettings, read_workspace_settings
    from pitui.checkpoint.store import Capture, Change, CheckpointsOff, CheckpointStore

# The names below, imported from their modules when first asked for: importing the package
# (``pitui.checkpoint.settings`` does) no longer loads git, the store and restores, which the
# TUI's first frame does not need.
_HOMES = {
    "GitUnavailable": "git",
    "find_git": "git",
    "CheckpointIndex": "record",
    "CheckpointRef": "record",
    "StateAt": "record",
    "RestorePlan": "restore",
    "RestoreRefused": "restore",
    "RestoreResult": "restore",
    "WorkspaceSettings": "settings",
    "read_workspace_settings": "settings",
    "Capture": "store",
    "Change": "store",
    "CheckpointsOff": "store",
    "CheckpointStore": "store",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = f"{__name__}.{home}"
    # An import statement's path (importlib's own is not in ``-X importtime``'s log, which
    # tests/cli/test_headless_imports.py reads to check what the first frame imports).
    __import__(module)
    return getattr(sys.modules[module], name)


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
