"""Offering to restore the files when the leaf moves (tree browser, edit and resubmit, /fork).

Three calls around the move, each awaited from a worker:

1. :func:`offer_restore` before moving: compares the disk with the files at the landing point
   and, when they differ, asks (:class:`RestorePrompt`). Returns :data:`CANCELLED`, None (move
   the conversation only) or a :class:`PendingRestore`.
2. :func:`save_current_files`: the folder as it is now is recorded at the current leaf, so
   moving back restores it (redo).
3. :func:`finish_restore` after the move succeeded: the files are restored (all or nothing).

Nothing here runs git on the event loop: the workspace does that in threads.
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from pitui.agent.navigation import landing_point
from pitui.agent.workspace import MovePreview, Workspace
from pitui.checkpoint.diff import summary_text
from pitui.checkpoint.record import CheckpointRef
from pitui.checkpoint.restore import RestoreFailed, RestoreRefused
from pitui.ui.screens.restore_prompt import RestoreChoice, RestorePrompt, not_restorable_text

if TYPE_CHECKING:
    from pitui.ui.app import PituiApp

log = logging.getLogger(__name__)


class Cancelled(enum.Enum):
    """The user cancelled the move (Esc in the restore prompt)."""

    CANCELLED = "cancelled"


CANCELLED: Final = Cancelled.CANCELLED


@dataclass
class PendingRestore:
    workspace: Workspace
    preview: MovePreview
    choice: RestoreChoice
    saved: CheckpointRef | None = None


def workspace_of(app: PituiApp) -> Workspace | None:
    agent = app.agent
    return agent.workspace if agent is not None else None


async def files_differ(
    app: PituiApp, target_id: str, *, landing: str | None = None
) -> MovePreview | None:
    """What restoring the files of ``target_id`` would change, when they differ from the disk
    (None: they do not, or there are no checkpoints). ``landing`` overrides where the leaf will
    be (a fork lands before the selected message)."""
    workspace = workspace_of(app)
    if workspace is None:
        return None
    if landing is None:
        landing, _ = landing_point(app.store, target_id)
    if landing == app.store.leaf_id:
        return None
    preview = await workspace.preview_move(landing)
    if not preview.differs:
        reason = _why_not_restored(workspace, preview)
        if reason:
            app.say(reason)
        return None
    return preview


def pending(app: PituiApp, preview: MovePreview, choice: RestoreChoice) -> PendingRestore | None:
    """The restore to carry out for ``choice`` (None: the conversation only)."""
    workspace = workspace_of(app)
    if workspace is None or not choice.files:
        return None
    return PendingRestore(workspace, preview, choice)


async def offer_restore(
    app: PituiApp,
    target_id: str,
    *,
    fork: bool = False,
    landing: str | None = None,
) -> PendingRestore | Cancelled | None:
    """Ask whether selecting ``target_id`` should restore the files too (see the module doc).
    The tree browser asks this and the branch summary in one dialog (its own flow)."""
    preview = await files_differ(app, target_id, landing=landing)
    if preview is None:
        return None
    choice = await app.push_screen_wait(RestorePrompt(preview, fork=fork))
    if choice is None:
        return CANCELLED
    return pending(app, preview, choice)


def _why_not_restored(workspace: Workspace, preview: MovePreview) -> str | None:
    """One sentence when the files cannot follow the move (None: they already match, or the
    session never had file checkpoints)."""
    if preview.plan is not None:
        # Files that differ from that point but cannot be put back (a file too large to save
        # there, since shrunk): said, since no dialog shows them.
        differing = [k for k in preview.plan.not_restorable if k.differs]
        if differing:
            return "Only the conversation moves. " + not_restorable_text(differing)
        return None
    if preview.state is None:
        if not workspace.index.all():
            return None
        return "No file checkpoint records that point, so only the conversation moves."
    note = preview.note or "File checkpoints are off"
    return f"The files stay as they are: {note[0].lower()}{note[1:]}"


async def save_current_files(pending: PendingRestore | None) -> None:
    """Record the folder as it is at the current leaf (before the leaf moves)."""
    if pending is not None:
        pending.saved = await pending.workspace.save_before_restore(pending.preview)


async def finish_restore(app: PituiApp, pending: PendingRestore | None, *, moved: bool) -> None:
    """Restore the files once the move happened (``moved``); says what happened."""
    if pending is None:
        return
    if not moved:
        app.say("The files were not restored (the move did not happen).")
        return
    try:
        result = await pending.workspace.restore_files(pending.preview, pending.choice.outside)
    except RestoreRefused as exc:
        app.say(f"Files not restored: {exc}", "warning")
        return
    except RestoreFailed as exc:
        app.say(str(exc), "error")
        return
    except Exception as exc:
        log.exception("restoring files failed")
        app.say(f"Files not restored ({type(exc).__name__}: {exc}); they are unchanged.", "error")
        return
    plan = result.plan
    kept = f" {len(result.kept)} left as they were." if result.kept else ""
    app.say(
        f"Files restored ({summary_text(plan.changes)}).{kept} The previous files are saved: "
        "moving back restores them."
    )
