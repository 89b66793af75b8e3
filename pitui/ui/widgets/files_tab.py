"""The details pane's Files tab: what a node's run changed, and the disk against that node.

``FilesTab.show(entry_id)`` finds the checkpoint holding the files at the entry; "This run"
lists the changes of the run that ended there (a diff per file), "Disk vs here" what restoring
to that point would change now (files changed outside pitui flagged). Both are computed in a
worker (git runs in a thread); the latest request wins.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, ClassVar, Literal

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Button, Static

from pitui.checkpoint.diff import FileDiff, diffs, summary_text
from pitui.checkpoint.record import CheckpointRef
from pitui.ui.widgets.details_tab import DetailsTab, TabOptions
from pitui.ui.widgets.files_view import FilesView

if TYPE_CHECKING:
    from pitui.agent.workspace import Workspace

View = Literal["run", "disk"]
REASONS = {
    "before-change": "before a run's changes",
    "after-run": "after a run",
    "outside": "changed outside pitui",
    "before-restore": "saved before a restore",
}


class FilesTab(DetailsTab):
    """The files at the highlighted entry: "This run" and "Disk vs here" (in a worker)."""

    key = "files"
    title = "Files"

    DEFAULT_CSS: ClassVar[str] = """
    FilesTab { height: 1fr; }
    FilesTab #files-head { padding: 0 1; height: auto; }
    FilesTab #files-switch { height: auto; padding: 0 1; }
    FilesTab #files-switch Button { min-width: 16; margin-right: 1; }
    FilesTab #files-switch Button.-on { text-style: bold reverse; }
    FilesTab FilesView { height: 1fr; }
    """

    def __init__(self, options: TabOptions | None = None, *, id: str | None = None) -> None:
        super().__init__(options, id=id)
        self.view: View = "run"
        self._own_workspace: Workspace | None = None
        self._run: tuple[list[FileDiff], str] | None = None
        self._disk: tuple[list[FileDiff], list[str], str] | None = None

    def compose(self) -> ComposeResult:
        yield Static(Content("Nothing selected."), id="files-head", markup=False)
        with Horizontal(id="files-switch"):
            yield Button("This run", id="files-run", classes="-on", compact=True)
            yield Button("Disk vs here", id="files-disk", compact=True)
        yield FilesView(id="files-view", empty_text="")

    # ------------------------------------------------------------------ data

    def workspace(self) -> Workspace:
        """The agent's workspace; without an agent, one of our own over the store."""
        agent = self.pitui.agent
        if agent is not None and agent.workspace is not None:
            return agent.workspace
        store = self.pitui.store
        if self._own_workspace is None or self._own_workspace.session is not store:
            from pitui.agent.workspace import Workspace
            from pitui.checkpoint.settings import read_workspace_settings

            workspace = Workspace(
                read_workspace_settings(self.pitui.settings),
                store.cwd or str(self.pitui.cwd),
                interactive=False,
            )
            workspace.attach_store(store)
            self._own_workspace = workspace
        return self._own_workspace

    def show(self, entry_id: str | None) -> None:
        self.entry_id = entry_id
        self._run = self._disk = None
        self._head("Looking at the files…")
        self.query_one(FilesView).set_diffs([])
        self._load(entry_id, self.view)

    def _head(self, text: str) -> None:
        self.query_one("#files-head", Static).update(Content(text))

    @work(group="files-tab", exclusive=True, exit_on_error=False)
    async def _load(self, entry_id: str | None, view: View) -> None:
        workspace = self.workspace()
        if entry_id is None:
            self._head("Nothing selected.")
            return
        state = workspace.state_at(entry_id)
        if state is None:
            self._head("No checkpoint records the files at this point.")
            return
        store = await workspace.store()
        if store is None:
            self._head(workspace.checkpoints_off or "File checkpoints are off.")
            return
        ref = state.checkpoint
        kind = REASONS.get(ref.reason, ref.reason)
        exact = "" if state.exact else " (approximately: this point is inside a run)"
        head = f"Files at this point: checkpoint {ref.entry_id}, {kind}{exact}."
        if view == "run":
            if self._run is None:
                self._run = await self._run_changes(workspace, ref, entry_id)
            file_diffs, note = self._run
            self._head(f"{head}\n{note}")
            self.query_one(FilesView).set_diffs(file_diffs)
        else:
            if self._disk is None:
                self._head(f"{head}\nComparing the disk with this point…")
                move = await workspace.preview_move(entry_id)
                if move.plan is None:
                    self._disk = ([], [], move.note)
                else:
                    text = (
                        f"Restoring here would change: {summary_text(move.plan.changes)}."
                        if move.differs
                        else "The disk matches this point."
                    )
                    self._disk = (move.diffs, list(move.plan.outside), text)
            file_diffs, flagged, note = self._disk
            self._head(f"{head}\n{note}")
            self.query_one(FilesView).set_diffs(file_diffs, flagged)

    async def _run_changes(
        self, workspace: Workspace, state_ref: CheckpointRef, entry_id: str
    ) -> tuple[list[FileDiff], str]:
        """The changes of the run whose end this entry is (or the checkpoint itself)."""
        index = workspace.index
        run = next((r for r in reversed(index.attached(entry_id)) if r.reason == "after-run"), None)
        ref = run or index.get(entry_id) or (state_ref if state_ref.entry_id == entry_id else None)
        if ref is None:
            return [], "No run ended here; see Disk vs here."
        previous_id = ref.data.get("previous")
        previous = index.get(previous_id) if isinstance(previous_id, str) else None
        store = await workspace.store()
        assert store is not None
        old = previous.commit if previous is not None else None

        def compute() -> list[FileDiff]:
            missing = store.missing([c for c in (old, ref.commit) if c])
            if missing:
                return []
            return diffs(store, store.changes(old, ref.commit))

        file_diffs = await asyncio.to_thread(compute)
        if not file_diffs:
            listed = ref.changed_count
            note = "The run changed no files." if not listed else "Pruned from the store."
            return [], note
        what = "Changed by this run" if ref.reason == "after-run" else "Changed since the last one"
        return file_diffs, f"{what}: {summary_text(d.change for d in file_diffs)}."

    # ------------------------------------------------------------------ switching

    @on(Button.Pressed, "#files-run, #files-disk")
    def _switch(self, event: Button.Pressed) -> None:
        event.stop()
        self.set_view("disk" if event.button.id == "files-disk" else "run")

    def set_view(self, view: View) -> None:
        self.view = view
        self.query_one("#files-run", Button).set_class(view == "run", "-on")
        self.query_one("#files-disk", Button).set_class(view == "disk", "-on")
        self._load(self.entry_id, view)
