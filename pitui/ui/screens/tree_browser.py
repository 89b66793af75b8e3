"""The tree browser (``/tree``, Esc Esc, Ctrl+T; ``/context`` opens it on the Context tab).

The session tree on the left, the details of the highlighted entry on the right. Selecting an
entry moves the leaf (pi-reference §7.1): a user or custom message moves it to the parent and
the screen dismisses with the message text for the editor (edit and resubmit); any other entry
becomes the leaf and the browser stays open. Leaving a branch first asks whether to summarize it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Footer, Static

from pitui.compaction.branch import collect_branch_entries
from pitui.session.errors import EntryNotFoundError, SessionError
from pitui.session.flatten import FILTER_MODES
from pitui.session.oneline import entry_text
from pitui.session.shapes import message_text
from pitui.ui import restore_flow  # checkpoints wiring (issue 13)
from pitui.ui.app_state import UsesApp
from pitui.ui.messages import EntryAppended, LeafMoved, SessionSwitched
from pitui.ui.screens.summary_prompt import LabelPrompt, SummaryChoice, SummaryPrompt
from pitui.ui.widgets.session_tree import SessionTree

if TYPE_CHECKING:
    from pitui.agent.navigation import NavigateResult
    from pitui.ui.widgets.inspectors import DetailsPane

log = logging.getLogger(__name__)

TABS = ("entry", "context", "compaction")


def copyable_text(entry: dict[str, Any]) -> str:
    """The full text of an entry, for copying (the one-line text when it has no body)."""
    kind = entry.get("type")
    if kind == "message":
        text = message_text(entry.get("message"), "\n")
        if text:
            return text
    elif kind == "custom_message":
        text = message_text({"content": entry.get("content")}, "\n")
        if text:
            return text
    elif kind in ("compaction", "branch_summary"):
        summary = entry.get("summary")
        if isinstance(summary, str) and summary:
            return summary
    return entry_text(entry)


class TreeBrowserScreen(UsesApp, Screen[str | None]):
    """Browse the session tree; dismisses with editor text (a user message was selected)."""

    DEFAULT_CSS: ClassVar[str] = """
    TreeBrowserScreen { layout: vertical; }
    TreeBrowserScreen > #tree-browser-body { height: 1fr; }
    TreeBrowserScreen #tree-column {
        width: 3fr;
        height: 1fr;
        border: round $border-blurred;
        border-title-color: $text-muted;
    }
    TreeBrowserScreen #tree-column:focus-within { border: round $border; }
    TreeBrowserScreen #tree-column > SessionTree { height: 1fr; }
    TreeBrowserScreen #tree-status {
        height: 1;
        padding: 0 1;
        color: $text-muted;
        background: $panel;
    }
    TreeBrowserScreen #tree-details { width: 2fr; height: 1fr; }
    """

    AUTO_FOCUS = "#session-tree"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("L", "label", "Label"),
        Binding("c", "copy", "Copy"),
    ]

    def __init__(self, initial_tab: str = "entry") -> None:
        super().__init__()
        self.initial_tab = initial_tab if initial_tab in TABS else "entry"
        self._busy = False
        self._summarizing = False

    @property
    def session_tree(self) -> SessionTree:
        return self.query_one(SessionTree)

    @property
    def details(self) -> DetailsPane:
        from pitui.ui.widgets.inspectors import DetailsPane

        return self.query_one(DetailsPane)

    @property
    def busy(self) -> bool:
        """A navigation (possibly summarizing) is running."""
        return self._busy

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        from pitui.ui.widgets.inspectors import DetailsPane

        app = self.pitui
        mode = app.settings.get("treeFilterMode", "default")
        with Horizontal(id="tree-browser-body"):
            column = Vertical(id="tree-column")
            column.border_title = "Session tree"
            with column:
                yield SessionTree(
                    app.store,
                    mode=mode if mode in FILTER_MODES else "default",
                    id="session-tree",
                )
                yield Static(Content(""), id="tree-status", markup=False)
            yield DetailsPane(tab=self.initial_tab, id="tree-details")  # type: ignore[arg-type]
        yield Footer()

    def on_mount(self) -> None:
        # The tree builds itself when it mounts and then posts Highlighted and Changed, which
        # fill the details pane and the status line (nested children may mount after this).
        self.pitui.bridge.signal.subscribe(self, self._on_session_event)

    def _update_status(self) -> None:
        self.query_one("#tree-status", Static).update(Content(self.session_tree.status_text()))

    # ------------------------------------------------------------------ store events

    def _on_session_event(self, message: object) -> None:
        try:
            tree = self.session_tree
        except NoMatches:
            return  # not mounted yet: it reads the store when it mounts
        if isinstance(message, EntryAppended):
            tree.entry_appended(message.entry_id)
        elif isinstance(message, LeafMoved):
            tree.leaf_moved()
        elif isinstance(message, SessionSwitched):
            tree.set_store(self.pitui.store)

    # ------------------------------------------------------------------ tree events

    @on(SessionTree.Highlighted)
    def _highlighted(self, event: SessionTree.Highlighted) -> None:
        event.stop()
        self.details.show(event.entry_id)
        self._update_status()

    @on(SessionTree.Changed)
    def _changed(self, event: SessionTree.Changed) -> None:
        event.stop()
        self._update_status()

    @on(SessionTree.Selected)
    def _selected(self, event: SessionTree.Selected) -> None:
        event.stop()
        self.select_entry(event.entry_id)

    def on_details_pane_jump_to(self, event: DetailsPane.JumpTo) -> None:
        """The details pane asks to go to an entry (a compaction's first kept entry)."""
        event.stop()
        entry_id = event.entry_id
        tree = self.session_tree
        if tree.line_of(entry_id) is None and (tree.search_query or tree.mode != "all"):
            # Hidden by the search or the filter: show everything, then go there.
            tree.set_search("")
            if tree.line_of(entry_id) is None:
                tree.set_mode("all")
        if not tree.move_to(entry_id):
            self.notify("That entry is not in the tree.", severity="warning", markup=False)
        tree.focus()

    # ------------------------------------------------------------------ selecting

    def select_entry(self, entry_id: str) -> None:
        """Move the leaf to ``entry_id`` as pi's tree selector does (asking about a summary)."""
        if self._busy:
            return
        app = self.pitui
        store = app.store
        if entry_id == store.leaf_id:
            self.notify("Already here.", markup=False, timeout=3)
            return
        agent = app.agent
        if agent is not None and agent.running:
            self.notify("The agent is busy: wait for it or press Esc first.", markup=False)
            return
        try:
            abandoned = collect_branch_entries(store, store.leaf_id, entry_id).entries
        except EntryNotFoundError:
            self.notify("That entry is no longer in the session.", markup=False)
            return
        if not abandoned or app.settings.get("branchSummary.skipPrompt", False):
            self._navigate(entry_id, SummaryChoice(False))
            return
        can_summarize = agent is not None and agent.problem() is None
        blink = app.settings.get("ui.cursorBlink", True) is not False

        def chosen(choice: SummaryChoice | None) -> None:
            if choice is None:
                self.session_tree.focus()
                return
            self._navigate(entry_id, choice)

        app.push_screen(
            SummaryPrompt(
                abandoned=len(abandoned), can_summarize=can_summarize, cursor_blink=blink
            ),
            chosen,
        )

    def _navigate(self, entry_id: str, choice: SummaryChoice) -> None:
        if self.pitui.agent is None:
            self._plain_move(entry_id)
            return
        self._busy = True
        self._run_navigation(entry_id, choice)

    @work(group="tree-navigate", exclusive=True, exit_on_error=False)
    async def _run_navigation(self, entry_id: str, choice: SummaryChoice) -> None:
        agent = self.pitui.agent
        assert agent is not None
        result: NavigateResult | None = None
        # --- checkpoints wiring (issue 13): offer to restore the files of the new point.
        pending = await restore_flow.offer_restore(self.pitui, entry_id)
        if pending is restore_flow.Cancelled.CANCELLED:
            self._busy = False
            self.notify("Navigation cancelled.", markup=False, timeout=3)
            self.session_tree.focus()
            return
        await restore_flow.save_current_files(pending)
        # --- end of checkpoints wiring
        self._summarizing = choice.summarize
        if choice.summarize:
            self.session_tree.loading = True
            self.notify("Summarizing the branch… Esc cancels.", markup=False, timeout=3)
        try:
            result = await agent.navigate(
                entry_id, summarize=choice.summarize, instructions=choice.instructions
            )
        except Exception as exc:  # shown, never fatal: the session is unchanged
            log.warning("tree navigation failed", exc_info=True)
            self.notify(str(exc) or type(exc).__name__, severity="error", markup=False, timeout=8)
        finally:
            self._summarizing = False
            if self.is_attached:
                self.session_tree.loading = False
        # --- checkpoints wiring (issue 13): the files follow once the leaf has moved.
        moved = result is not None and not result.cancelled and not result.already_here
        await restore_flow.finish_restore(self.pitui, pending, moved=moved)
        # --- end of checkpoints wiring
        self._busy = False
        if result is not None and self.is_attached:
            self._after_navigation(result, choice)

    def _after_navigation(self, result: NavigateResult, choice: SummaryChoice) -> None:
        if result.cancelled:
            text = (
                "Branch summarization cancelled." if choice.summarize else "Navigation cancelled."
            )
            self.notify(text, markup=False, timeout=3)
            self.session_tree.focus()
            return
        if result.already_here:
            self.notify("Already here.", markup=False, timeout=3)
            return
        if result.editor_text is not None:
            self.dismiss(result.editor_text)
            return
        self.notify("Navigated to the selected point.", markup=False, timeout=3)
        self.session_tree.focus()

    def _plain_move(self, entry_id: str) -> None:
        """Navigation without an agent (no model): the store's rules, no summary."""
        store = self.pitui.store
        try:
            node = store.node(entry_id)
        except EntryNotFoundError:
            self.notify("That entry is no longer in the session.", markup=False)
            return
        parent_id = node.parent.id if node.parent is not None else None
        text: str | None = None
        if node.type == "message" and node.role == "user":
            text = message_text(store.data(node).get("message"), "")
        elif node.type == "custom_message":
            text = message_text({"content": store.data(node).get("content")}, "")
        if text is None:
            store.branch(entry_id)
            self.notify("Navigated to the selected point.", markup=False, timeout=3)
            return
        if parent_id is None:
            store.reset_leaf()
        else:
            store.branch(parent_id)
        self.dismiss(text)

    # ------------------------------------------------------------------ keys

    def action_close(self) -> None:
        if self._busy:
            agent = self.pitui.agent
            if agent is not None:
                agent.abort()
            return
        self.dismiss(None)

    def action_label(self) -> None:
        entry_id = self.session_tree.cursor_entry_id
        if entry_id is None or self._busy:
            return
        app = self.pitui
        if app.agent is not None and app.agent.running:
            self.notify("The agent is busy: wait for it or press Esc first.", markup=False)
            return
        current = app.store.label_of(entry_id)
        blink = app.settings.get("ui.cursorBlink", True) is not False

        def done(value: str | None) -> None:
            self.session_tree.focus()
            if value is None:
                return
            try:
                app.store.append_label(entry_id, value or None)
            except (SessionError, EntryNotFoundError) as exc:
                self.notify(str(exc), severity="error", markup=False)
                return
            self.notify("Label set." if value else "Label cleared.", markup=False, timeout=3)
            self.details.refresh_entry()

        app.push_screen(LabelPrompt(current, cursor_blink=blink), done)

    def action_copy(self) -> None:
        entry_id = self.session_tree.cursor_entry_id
        if entry_id is None:
            return
        from pitui.ui.commands import copy_text

        entry = self.pitui.store.find(entry_id)
        if entry is None:
            return
        self.notify(copy_text(self.pitui, copyable_text(entry)), markup=False, timeout=4)
