"""The agent's workspace: checkpoints around runs, approval decisions, and restores.

:class:`Workspace` hooks into an :class:`~pitui.agent.session.AgentSession` at two points: the
tools' ``guard`` (just before a tool runs: the approval decision, then a checkpoint before the
run's first change) and the end of every run (a checkpoint of what the run left). Everything
git does runs in a thread (``asyncio.to_thread``); entries are appended on the event loop.

Restoring when the leaf moves is three steps the UI and the CLI drive: :meth:`preview_move`
(what would change, with diffs), :meth:`save_before_restore` (the folder now, recorded at the
current leaf so going back is one more move) and :meth:`restore_files`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pitui.agent.approval import (
    ApprovalPolicy,
    ApprovalRequest,
    Asker,
    Decision,
    build_request,
    preview_lines,
)
from pitui.agent.events import (
    AgentEvent,
    ApprovalDecided,
    CheckpointNote,
    MessageStart,
    ToolStart,
)
from pitui.agent.tools.base import Tool, ToolResult
from pitui.checkpoint.settings import CheckpointSettings, WorkspaceSettings
from pitui.config.paths import state_dir
from pitui.session.errors import SessionError
from pitui.session.shapes import APPROVAL_TYPE, CHECKPOINT_TYPE

if TYPE_CHECKING:
    # The checkpoint machinery (git, the store, restores, diffs) is imported where it is
    # first used: not on the path to the TUI's first frame (see pitui.ui.after_first_frame).
    from pitui.agent.session import AgentSession
    from pitui.checkpoint.diff import FileDiff
    from pitui.checkpoint.record import CheckpointIndex, CheckpointRef, StateAt
    from pitui.checkpoint.restore import OutsidePolicy, RestorePlan, RestoreResult
    from pitui.checkpoint.store import Capture, CheckpointStore
    from pitui.session.store import SessionStore

log = logging.getLogger(__name__)

WARM_UP_PATIENCE = 1.0
"""Seconds a checkpoint waits for the session's first capture before saying it is waiting."""


def _open_store(
    cwd: Path, settings: CheckpointSettings, root: Path
) -> tuple[CheckpointStore | None, str | None]:
    """Open the store (in a thread: it imports the store and runs git). ``(None, why)`` when
    checkpoints cannot run in this folder; other failures raise (tried again later)."""
    from pitui.checkpoint.git import GitUnavailable
    from pitui.checkpoint.store import CheckpointsOff, CheckpointStore

    if not settings.enabled:
        return None, "File checkpoints are off (checkpoint.enabled is false)."
    try:
        return CheckpointStore.open(cwd, settings, root), None
    except (GitUnavailable, CheckpointsOff) as exc:
        return None, str(exc)


@dataclass
class MovePreview:
    """What moving the leaf to ``target_leaf`` would do to the files."""

    target_leaf: str | None
    state: StateAt | None
    plan: RestorePlan | None = None
    diffs: list[FileDiff] = field(default_factory=list)
    baseline: CheckpointRef | None = None
    note: str = ""
    """Why there is nothing to restore (no checkpoint there, checkpoints off), or a caveat."""

    @property
    def differs(self) -> bool:
        return self.plan is not None and not self.plan.empty


def _entry_skips(ref: CheckpointRef) -> dict[str, str]:
    """The files a checkpoint entry says its checkpoint left out → why."""
    out: dict[str, str] = {}
    for item in ref.data.get("skipped") or ():
        if isinstance(item, dict) and isinstance(item.get("path"), str):
            out[item["path"]] = str(item.get("reason") or "not saved")
    return out


class Workspace:
    """Checkpoints and approvals for one agent session (one session store, one folder)."""

    def __init__(
        self,
        settings: WorkspaceSettings,
        cwd: str | Path,
        *,
        interactive: bool = True,
        state_root: Path | None = None,
    ) -> None:
        self.settings = settings
        self.cwd = Path(cwd)
        self.approvals = ApprovalPolicy(settings.approval, interactive=interactive)
        self.state_root = state_root
        self.agent: AgentSession | None = None
        self._session: SessionStore | None = None
        self.checkpoints_off: str | None = (
            None
            if settings.checkpoint.enabled
            else "File checkpoints are off (checkpoint.enabled)."
        )
        self._store: CheckpointStore | None = None
        self._opening: asyncio.Lock | None = None
        self._index: CheckpointIndex | None = None
        self._index_store: SessionStore | None = None
        self._call_id = ""
        self._changed_in_run = False
        self._pre_taken = False
        self._maintenance: asyncio.Future[None] | None = None
        self._warming: asyncio.Future[None] | None = None
        self._noted: set[str] = set()
        self._failing = False  # a failed capture was announced; said again after a success
        self._adopted = False  # a fork's checkpoints are kept under this session's id

    # ------------------------------------------------------------------ wiring

    def attach(self, agent: AgentSession) -> Callable[[], None]:
        """Follow ``agent``'s tool calls (their ids are recorded with each decision)."""
        self.agent = agent
        self._session = None
        return agent.subscribe(self._on_event)

    def attach_store(self, store: SessionStore) -> None:
        """Work on a session without an agent (``pitui restore``, the tree with no model)."""
        self._session = store

    def set_asker(self, asker: Asker | None) -> None:
        """Who answers ``ask`` mode's questions (the TUI's dialog); None: nobody can."""
        self.approvals.asker = asker

    def _on_event(self, event: AgentEvent) -> None:
        if isinstance(event, ToolStart):
            self._call_id = event.call_id
        elif isinstance(event, MessageStart) and event.role == "user":
            self.start_warm_up()  # if the session's opening did not (print mode)

    def start_warm_up(self) -> None:
        """Open the store and capture the folder once, in a thread, starting now: the TUI
        calls it as a session opens, so the first capture of a big folder (seconds) is done
        before the agent's first change needs it; later captures are incremental. Once;
        needs a running event loop."""
        if self._warming is None and self.checkpoints_off is None:
            self._warming = asyncio.ensure_future(self.warm_up())

    async def warmed(self) -> None:
        """Wait for the warm-up :meth:`start_warm_up` started, if any."""
        if self._warming is not None:
            await asyncio.shield(self._warming)

    async def warm_up(self) -> None:
        """Open the store and capture once (nothing is recorded in the session)."""
        store = await self.store()
        if store is None:
            return
        try:
            await asyncio.to_thread(store.capture)
        except Exception as exc:
            self._capture_failed(exc)
        else:
            self._capture_worked()

    def _capture_failed(self, exc: BaseException) -> None:
        """Say once (until a capture works again) that file checkpoints failed; the next
        checkpoint tries again."""
        log.warning("a file checkpoint failed", exc_info=exc)
        if self._failing:
            return
        self._failing = True
        from pitui.checkpoint.store import CheckpointsOff, failure_reason

        if isinstance(exc, CheckpointsOff):  # its sentence says why and what to do
            self._emit(CheckpointNote(str(exc)))
            return
        self._emit(
            CheckpointNote(
                f"A file checkpoint failed ({failure_reason(exc)}); pitui tries again at the "
                "next run."
            )
        )

    def _capture_worked(self) -> None:
        if self._failing:
            self._failing = False
            self._emit(CheckpointNote("File checkpoints work again."))

    @property
    def session(self) -> SessionStore:
        if self._session is not None:
            return self._session
        assert self.agent is not None, "attach() the workspace to an agent or a store first"
        return self.agent.store

    @property
    def index(self) -> CheckpointIndex:
        store = self.session
        if self._index is None or self._index_store is not store:
            from pitui.checkpoint.record import CheckpointIndex

            self._index = CheckpointIndex(store)
            self._index_store = store
        return self._index

    def _emit(self, event: AgentEvent) -> None:
        if self.agent is not None:
            self.agent.emit(event)

    async def store(self) -> CheckpointStore | None:
        """The folder's checkpoint store, opened on first use (None: checkpoints are off, and
        ``checkpoints_off`` says why, announced once; or the store could not be opened this
        time, said once, tried again at the next call)."""
        if self._store is not None or self.checkpoints_off is not None:
            return self._store
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            if self._store is not None or self.checkpoints_off is not None:
                return self._store
            root = self.state_root or (state_dir() / "checkpoints")
            for note in self.settings.notes:
                self._emit(CheckpointNote(note))
            self.settings = self.settings.without_notes()
            try:
                store, reason = await asyncio.to_thread(
                    _open_store, self.cwd, self.settings.checkpoint, root
                )
            except Exception as exc:
                self._capture_failed(exc)
                return None
            if store is None:
                self.checkpoints_off = reason
                self._emit(CheckpointNote(reason or "File checkpoints are off."))
                return None
            self._store = store
            return store

    async def _adopt(self, store: CheckpointStore) -> None:
        """Keep the checkpoints the session's entries name under its own id (a fork or clone
        adopts its parent's), once."""
        if self._adopted:
            return
        commits = self.index.commits()
        if commits:
            await asyncio.to_thread(store.keep, self.session.session_id, commits)
        self._adopted = True

    # ------------------------------------------------------------------ the run hooks

    async def guard(self, tool: Tool, arguments: dict[str, Any]) -> ToolResult | None:
        """Before a tool runs: decide (approval mode), then checkpoint before the first change."""
        read_only = getattr(tool, "read_only", False)
        if self.approvals.needs_decision(tool.name, read_only):
            request = await self._request(tool.name, arguments)
            decision = await self.approvals.decide(request)
            self._record_decision(request, decision)
            if not decision.allow:
                return ToolResult.error(decision.message, details={"pituiRefused": decision.by})
        if not read_only:
            self._changed_in_run = True
            if not self._pre_taken:
                self._pre_taken = True
                await self.checkpoint("before-change")
        return None

    async def after_run(self) -> None:
        """After a run (done, failed or aborted): checkpoint what it left; maintenance."""
        changed, self._changed_in_run, self._pre_taken = self._changed_in_run, False, False
        ref = await self.checkpoint("after-run" if changed else "outside")
        store = self._store
        if store is not None and ref is not None and self._maintenance is None:
            # Pruning can take a while on a big store: it never delays the end of a run.
            needed = self.index.path_commits(self.session.leaf_id)
            self._maintenance = asyncio.ensure_future(
                self._maintain(store, self.session.session_id, needed)
            )

    async def maintained(self) -> None:
        """Wait for the store's maintenance after the last run (pruning), if it runs."""
        if self._maintenance is not None:
            await asyncio.shield(self._maintenance)

    async def _maintain(self, store: CheckpointStore, current: str, needed: set[str]) -> None:
        try:
            await asyncio.to_thread(store.maintain, current=current, needed=needed)
        except Exception:
            log.exception("checkpoint store maintenance failed")
        finally:
            self._maintenance = None

    async def _request(self, tool: str, arguments: dict[str, Any]) -> ApprovalRequest:
        needs_preview = self.approvals.mode == "ask"
        lines = (
            await asyncio.to_thread(preview_lines, tool, arguments, self.cwd)
            if needs_preview
            else ()
        )
        return build_request(tool, self._call_id, arguments, self.cwd, lines)

    def _record_decision(self, request: ApprovalRequest, decision: Decision) -> None:
        self._emit(ApprovalDecided(request.tool, request.subject, decision.allow, decision.by))
        try:
            self.session.append_custom(APPROVAL_TYPE, decision.record(request, self.approvals.mode))
        except SessionError:
            log.warning("could not record an approval decision", exc_info=True)

    # ------------------------------------------------------------------ checkpoints

    async def checkpoint(
        self, reason: str, *, restore_to: str | None = None, force: bool = False
    ) -> CheckpointRef | None:
        """Capture the folder and record it at the leaf, unless it equals the leaf's state
        (then that checkpoint is returned). None: checkpoints are off, or the capture failed
        (logged; a run never fails because of a checkpoint)."""
        store = await self.store()
        if store is None:
            return None
        if self._warming is not None and not self._warming.done():
            try:
                await asyncio.wait_for(asyncio.shield(self._warming), WARM_UP_PATIENCE)
            except TimeoutError:
                self._emit(
                    CheckpointNote(
                        "Saving this folder's first file checkpoint before the first change "
                        "(a big folder takes a few seconds; later ones are quick)…",
                        progress=True,
                    )
                )
                await asyncio.shield(self._warming)
        session = self.session
        previous = self.index.previous_for_leaf()
        namespace = session.session_id
        try:
            await self._adopt(store)
            capture, same, changes = await asyncio.to_thread(
                self._capture_and_compare, store, namespace, previous
            )
        except Exception as exc:
            self._capture_failed(exc)
            return None
        self._capture_worked()
        self._note_skipped(capture)
        if same and previous is not None and not force:
            return previous
        if previous is None and reason == "outside":
            reason = "after-run"  # the first checkpoint of the session, not an outside change
        from pitui.checkpoint.record import entry_data

        data = entry_data(capture, reason, previous, changes, restore_to=restore_to)
        try:
            entry_id = session.append_custom(CHECKPOINT_TYPE, data)
        except SessionError as exc:
            self._emit(CheckpointNote(f"A file checkpoint could not be recorded: {exc}"))
            return None
        return self.index.get(entry_id)

    def _note_skipped(self, capture: Capture) -> None:
        """Say once per file that a checkpoint leaves it out (too large, churning, nested)."""
        fresh = [s for s in capture.skipped if s.path not in self._noted]
        if not fresh:
            return
        self._noted.update(s.path for s in fresh)
        from pitui.checkpoint.store import display_path

        shown = "; ".join(f"{display_path(s.path)} ({s.reason})" for s in fresh[:3])
        more = f" and {len(fresh) - 3} more" if len(fresh) > 3 else ""
        self._emit(CheckpointNote(f"Not saved in file checkpoints: {shown}{more}."))

    @staticmethod
    def _capture_and_compare(
        store: CheckpointStore, namespace: str, previous: CheckpointRef | None
    ) -> tuple[Capture, bool, list[Any]]:
        capture = store.capture(namespace)
        if previous is None or not store.exists(previous.commit):
            return capture, False, []  # the first checkpoint: nothing to compare with
        same = capture.commit == previous.commit or (
            capture.tree == store.tree_of(previous.commit)
            and capture.modes == store.modes(previous.commit)
        )
        return capture, same, [] if same else store.changes(previous.commit, capture.commit)

    # ------------------------------------------------------------------ restoring

    def state_at(self, entry_id: str | None) -> StateAt | None:
        return self.index.state_at(entry_id)

    async def preview_move(
        self, target_leaf: str | None, *, baseline: CheckpointRef | None = None
    ) -> MovePreview:
        """Compare the folder with the files at ``target_leaf`` (the leaf a move would set).

        ``baseline`` defaults to the current leaf's checkpoint: files that differ from it
        changed outside pitui and are flagged.
        """
        state = self.index.state_at(target_leaf)
        if state is None:
            return MovePreview(target_leaf, None, note="No checkpoint records the files there.")
        store = await self.store()
        if store is None:
            return MovePreview(target_leaf, state, note=self.checkpoints_off or "")
        if baseline is None:
            current = self.index.state_at(self.session.leaf_id)
            baseline = current.checkpoint if current is not None else None
        base_commit = baseline.commit if baseline is not None else None
        from pitui.checkpoint.diff import diffs
        from pitui.checkpoint.restore import preview

        try:
            plan = await asyncio.to_thread(
                preview,
                store,
                state.checkpoint.commit,
                baseline=base_commit,
                target_skipped=_entry_skips(state.checkpoint),
            )
        except Exception as exc:
            return MovePreview(target_leaf, state, baseline=baseline, note=str(exc))
        file_diffs = await asyncio.to_thread(diffs, store, plan.changes)
        note = (
            ""
            if state.exact
            else "That point is inside a run: these are the files from before the run's changes."
        )
        return MovePreview(target_leaf, state, plan, file_diffs, baseline, note)

    async def save_before_restore(self, move: MovePreview) -> CheckpointRef | None:
        """Record the folder as it is now at the current leaf (redo: moving back restores it)."""
        return await self.checkpoint(
            "before-restore", restore_to=move.target_leaf or "root", force=True
        )

    async def restore_files(
        self, move: MovePreview, outside: OutsidePolicy = "refuse"
    ) -> RestoreResult:
        """Make the folder what the preview showed (all or nothing). Raises ``RestoreRefused``
        when the folder changed since the preview, or for outside edits with ``refuse``."""
        store = await self.store()
        assert store is not None and move.state is not None and move.plan is not None
        base = move.baseline.commit if move.baseline is not None else None
        from pitui.checkpoint.restore import restore

        return await asyncio.to_thread(
            restore,
            store,
            move.state.checkpoint.commit,
            namespace=self.session.session_id,
            baseline=base,
            outside=outside,
            expected=move.plan.pre,
            target_skipped=_entry_skips(move.state.checkpoint),
        )
