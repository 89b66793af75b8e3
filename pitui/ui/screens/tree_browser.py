"""The tree browser (``/tree``, Esc Esc, Ctrl+T; ``/context`` opens it on the Context tab).

The session tree on the left, the details of the highlighted entry on the right (``i`` hides
or shows them, hidden at first on a narrow terminal; ``w`` widens them, for diffs). Selecting
an entry moves the leaf (pi-reference §7.1): a user or custom message moves it to the parent
and the screen dismisses with the message text for the editor (edit and resubmit); any other
entry becomes the leaf and the browser stays open. A move asks once: whether to summarize
the branch it leaves and, when the files on disk differ from the new point, whether to restore
them, in one dialog.

The app keeps one browser (:func:`tree_browser`): closing it keeps its widgets and the tree's
layout, which follows the session while closed, so opening it again costs almost nothing. Each
opening starts afresh (no search, no folds, the cursor on the leaf).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.css.query import NoMatches
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import Widget

from pitui.compaction.branch import collect_branch_entries
from pitui.session.errors import EntryNotFoundError, SessionError
from pitui.session.flatten import FILTER_MODES, make_filter
from pitui.session.oneline import entry_text
from pitui.session.shapes import message_text
from pitui.ui import restore_flow  # checkpoints wiring (issue 13)
from pitui.ui.app_state import UsesApp
from pitui.ui.messages import EntryAppended, LeafMoved, SessionSwitched
from pitui.ui.screens.restore_prompt import RestorePrompt
from pitui.ui.screens.summary_prompt import (
    LabelPrompt,
    SummaryChoice,
    SummaryOffer,
    SummaryPrompt,
)
from pitui.ui.widgets.footer import KeyFooter
from pitui.ui.widgets.session_tree import SessionTree

if TYPE_CHECKING:
    from pitui.agent.navigation import NavigateResult
    from pitui.ui.app import PituiApp
    from pitui.ui.widgets.inspectors import DetailsPane

log = logging.getLogger(__name__)

DETAILS_MIN_WIDTH = 100
"""Below this many columns the details pane starts hidden (the tree needs the width)."""

SCREEN_NAME = "tree-browser"


def tree_browser(app: PituiApp, initial_tab: str = "entry") -> TreeBrowserScreen:
    """The app's tree browser, made once and kept (see the module doc), set to open on
    ``initial_tab``."""
    if app.is_screen_installed(SCREEN_NAME):
        screen = app.get_screen(SCREEN_NAME)
        assert isinstance(screen, TreeBrowserScreen)
    else:
        screen = TreeBrowserScreen(initial_tab)
        app.install_screen(screen, SCREEN_NAME)
    screen.initial_tab = known_tab(initial_tab)
    screen.reopening = screen.is_mounted
    return screen


def known_tab(key: str) -> str:
    """``key`` when the details pane has a tab of that name, else its first tab."""
    from pitui.ui.widgets.inspectors import TABS

    return key if key in TABS else TABS.first


class TreeStatus(Widget):
    """The line under the tree (``(i/N)``, filter, search, progress). Repainting it never
    re-lays out the screen (a ``Static`` update would, on every key)."""

    DEFAULT_CSS: ClassVar[str] = "TreeStatus { height: 1; }"

    text: reactive[str] = reactive("", layout=False)

    def render(self) -> Content:
        return Content(self.text)


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
    TreeBrowserScreen.-narrow #tree-column { width: 1fr; }
    TreeBrowserScreen.-narrow #tree-details { width: 1fr; }
    TreeBrowserScreen.-wide-details #tree-column { width: 1fr; }
    TreeBrowserScreen.-wide-details #tree-details { width: 3fr; }
    """

    AUTO_FOCUS = "#session-tree"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("L", "label", "Label"),
        Binding("c", "copy", "Copy"),
        Binding("d", "compare", "Compare with…", show=False),
        Binding("i", "toggle_details", "Details"),
        Binding("w", "widen_details", "Wide details"),
    ]

    def __init__(self, initial_tab: str = "entry") -> None:
        super().__init__()
        self.initial_tab = known_tab(initial_tab)
        self._busy = False
        self._summarizing = False
        self.reopening = False
        """Set when the kept browser is about to be shown again (it then starts afresh)."""
        self._details_choice: bool | None = None
        """Shown or hidden by the user (``d``); None: by the terminal's width."""
        self._style_state: tuple[object, ...] | None = None
        """The app's style state when the browser was last hidden (see on_screen_resume)."""

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

        with Horizontal(id="tree-browser-body"):
            column = Vertical(id="tree-column")
            column.border_title = "Session tree"
            with column:
                yield SessionTree(mode=self._filter_mode(), id="session-tree")
                yield TreeStatus(id="tree-status")
            details = DetailsPane(tab=self.initial_tab, id="tree-details")
            details.display = self._details_wanted(self.app.size.width)
            yield details
        yield KeyFooter()

    def _filter_mode(self) -> str:
        mode = self.pitui.settings.tree_filter_mode
        return mode if mode in FILTER_MODES else "default"

    def _details_wanted(self, width: int) -> bool:
        if self._details_choice is not None:
            return self._details_choice
        return width >= DETAILS_MIN_WIDTH

    def on_mount(self) -> None:
        # The tree builds itself when it mounts and then posts Highlighted and Changed, which
        # fill the details pane and the status line (nested children may mount after this).
        self.pitui.bridge.signal.subscribe(self, self._on_session_event)
        # The status line follows the tree at once (in the frame that paints the cursor row).
        self.watch(self.session_tree, "revision", self._update_status, init=False)

    def _app_style_state(self) -> tuple[object, ...]:
        """What the app's styles depend on besides each widget's own classes (Textual restyles
        only the screens on display when it changes)."""
        app = self.app
        return (app.theme, app.app_focus, app.native_ansi_color, app.no_color, app.is_inline)

    def on_screen_suspend(self) -> None:
        self._style_state = self._app_style_state()

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        if self._style_state is not None and self._style_state == self._app_style_state():
            # Nothing the styles depend on changed while hidden: showing the kept browser
            # again does not restyle each of its widgets (a large part of opening it).
            event.refresh_styles = False
        if not self.reopening:
            return  # just composed, or back from one of its own prompts
        self.reopening = False
        # Opened again: start afresh, as a new browser would.
        details = self.details
        self._show_details(self._details_wanted(self.app.size.width))
        details.set_tab(self.initial_tab)
        tree = self.session_tree
        tree.reset(self._filter_mode())
        tree.focus()

    def on_resize(self, event: events.Resize) -> None:
        # Narrow: the details pane, when shown, gets half the width (its tabs and diffs fit).
        self.set_class(event.size.width < DETAILS_MIN_WIDTH, "-narrow")
        if self._details_choice is None:
            self._show_details(self._details_wanted(event.size.width))
        self.refresh_bindings()

    def _show_details(self, shown: bool) -> None:
        """Show or hide the details pane; shown, it shows the highlighted entry at once (it
        said "Nothing selected." when it appeared on a selected row)."""
        details = self.details
        was = details.display
        details.display = shown
        if shown and not was and self.session_tree.cursor_entry_id is not None:
            details.show_now(self.session_tree.cursor_entry_id)
            self.call_after_refresh(details.redraw_tab_underline)

    def action_widen_details(self) -> None:
        """``w``: the details pane takes most of the width (diffs, long contexts), or back."""
        self.toggle_class("-wide-details")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "widen_details":
            try:
                return bool(self.details.display)
            except NoMatches:
                return False
        return True

    def action_toggle_details(self) -> None:
        details = self.details
        self._show_details(not details.display)
        self.refresh_bindings()
        self._details_choice = details.display
        if not details.display and self.focused not in (None, self.session_tree):
            self.session_tree.focus()

    def _update_status(self) -> None:
        self.query_one(TreeStatus).text = self.session_tree.status_text()

    # ------------------------------------------------------------------ store events

    def _on_session_event(self, message: object) -> None:
        try:
            tree = self.session_tree
        except NoMatches:
            return  # not mounted yet: it reads the store when it mounts
        if isinstance(message, EntryAppended):
            tree.entry_appended(message.entry_id)
        elif isinstance(message, LeafMoved):
            tree.leaf_moved(message.new_leaf_id)
        elif isinstance(message, SessionSwitched):
            tree.set_store(self.pitui.store)

    # ------------------------------------------------------------------ tree events

    @on(SessionTree.Highlighted)
    def _highlighted(self, event: SessionTree.Highlighted) -> None:
        event.stop()
        details = self.details
        if details.display:
            # After the tree has painted the cursor: the details of a long entry take longer.
            self.call_after_refresh(details.show, event.entry_id)
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
        """Move the leaf to ``entry_id`` as pi's tree selector does: one dialog asks whether to
        summarize the branch left behind and, when the files differ, whether to restore them."""
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
            abandoned = self._abandoned_entries(entry_id)
        except EntryNotFoundError:
            self.notify("That entry is no longer in the session.", markup=False)
            return
        offer: SummaryOffer | None = None
        if abandoned and not app.settings.branch_summary.skip_prompt:
            if store.read_only:
                # A summary would be appended: a read-only view only moves (nothing written).
                self.notify(
                    "Read-only: moved without a branch summary (fork or clone to write).",
                    markup=False,
                    timeout=4,
                )
            else:
                can_summarize = agent is not None and agent.problem() is None
                offer = SummaryOffer(abandoned, can_summarize)
        if agent is None and offer is None:
            self._plain_move(entry_id)
            return
        self._busy = True
        self._run_navigation(entry_id, offer)

    def _abandoned_entries(self, entry_id: str) -> int:
        """How many entries of the branch being left the tree shows (bookkeeping, such as
        checkpoints and approvals, not counted: the dialog counts what the user sees)."""
        store = self.pitui.store
        entries = collect_branch_entries(store, store.leaf_id, entry_id).entries
        shown = make_filter(store, "default")
        leaf = store.leaf
        return sum(1 for node in entries if shown(node, leaf))

    def _ask_summary(self, offer: SummaryOffer) -> SummaryPrompt:
        return SummaryPrompt(
            abandoned=offer.abandoned,
            can_summarize=offer.can_summarize,
            cursor_blink=self.pitui.settings.ui.cursor_blink,
        )

    @work(group="tree-navigate", exclusive=True, exit_on_error=False)
    async def _run_navigation(self, entry_id: str, offer: SummaryOffer | None) -> None:
        app = self.pitui
        try:
            chosen = await self._choose(entry_id, offer)
        except Exception:
            self._busy = False
            raise
        if chosen is None:
            self._busy = False
            if self.is_attached:
                self.session_tree.focus()
            return
        choice, pending = chosen
        if app.agent is None:
            self._busy = False
            self._plain_move(entry_id)  # no model: the dialog asked no summary
            return
        await self._move(entry_id, choice, pending)

    async def _choose(
        self, entry_id: str, offer: SummaryOffer | None
    ) -> tuple[SummaryChoice, restore_flow.PendingRestore | None] | None:
        """Ask what the move does (one dialog); None when the user cancelled."""
        app = self.pitui
        # --- checkpoints wiring (issue 13): the files may differ at the new point.
        preview = await restore_flow.files_differ(app, entry_id)
        if preview is not None:
            blink = app.settings.ui.cursor_blink
            prompt = RestorePrompt(preview, summary=offer, cursor_blink=blink)
            restore = await app.push_screen_wait(prompt)
            if restore is None:
                self.notify("Navigation cancelled.", markup=False, timeout=3)
                return None
            return restore.summary, restore_flow.pending(app, preview, restore)
        # --- end of checkpoints wiring
        if offer is None:
            return SummaryChoice(False), None
        summary = await app.push_screen_wait(self._ask_summary(offer))
        return None if summary is None else (summary, None)

    async def _move(
        self,
        entry_id: str,
        choice: SummaryChoice,
        pending: restore_flow.PendingRestore | None,
    ) -> None:
        agent = self.pitui.agent
        assert agent is not None
        result: NavigateResult | None = None
        await restore_flow.save_current_files(pending)  # checkpoints wiring (issue 13)
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

    def action_focus_tree(self) -> None:
        """Esc in the details pane: back to the tree (and its keys in the footer)."""
        self.session_tree.focus()

    def action_compare(self) -> None:  # "compare with…" (Context tab)
        from pitui.ui.screens.context_compare import compare_from

        compare_from(self, self.session_tree.cursor_entry_id)

    def action_label(self) -> None:
        entry_id = self.session_tree.cursor_entry_id
        if entry_id is None or self._busy:
            return
        app = self.pitui
        if app.agent is not None and app.agent.running:
            self.notify("The agent is busy: wait for it or press Esc first.", markup=False)
            return
        if app.refuse_write():
            return
        current = app.store.label_of(entry_id)
        blink = app.settings.ui.cursor_blink

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
