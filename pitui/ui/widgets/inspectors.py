"""The tree browser's details pane: one tab per registered :class:`DetailsTab` (see
:mod:`pitui.ui.widgets.details_tab`), for the highlighted entry. :data:`TABS` registers them:
:class:`EntryDetails` (the entry), :class:`ContextDetails` (the context the model would see if
the leaf were there), :class:`CompactionDetails` (the compaction in effect) and
:class:`FilesTab` (the files that entry's run changed, and the disk against it: checkpoints).

``DetailsPane.show(entry_id)`` is called on every cursor move: it only records the id and
restarts a short debounce timer. When the timer fires, only the visible tab is rebuilt; the
others are rebuilt when they are activated.
"""

from __future__ import annotations

import math
import time
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import TabbedContent, TabPane

from pitui.errors import UserError
from pitui.ui.widgets.compaction_details import CompactionDetails
from pitui.ui.widgets.context_details import ContextDetails
from pitui.ui.widgets.details_tab import DetailsTab, DetailsTabs, TabOptions
from pitui.ui.widgets.entry_details import EntryDetails
from pitui.ui.widgets.files_tab import FilesTab
from pitui.ui.widgets.inspector_views import (
    DEBOUNCE,
    ROW_CAP,
    ContextRow,
    build_compaction_view,
    build_context_view,
    entry_body,
    entry_meta,
)

__all__ = [
    "TABS",
    "CompactionDetails",
    "ContextDetails",
    "ContextRow",
    "DetailsPane",
    "DetailsTab",
    "DetailsTabs",
    "EntryDetails",
    "FilesTab",
    "TabOptions",
    "build_compaction_view",
    "build_context_view",
    "entry_body",
    "entry_meta",
]

TABS = DetailsTabs(EntryDetails, ContextDetails, CompactionDetails, FilesTab)
"""The details pane's tabs, in order. A new tab: a module with a :class:`DetailsTab` subclass,
and its class added here."""


class DetailsPane(Widget):
    """The details of the tree browser's highlighted entry, one tab per registered tab.

    ``show(entry_id)`` is cheap (debounced); ``set_tab(key)`` switches tabs; ``JumpTo`` is
    posted when a tab asks to go to another entry (the compaction's first kept entry, or a
    row of the context list).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        # In the footer whenever the pane has the focus (a click on a tab gives it): the way
        # back to the tree and its keys. The browser's Esc closes it only from the tree.
        Binding("escape", "screen.focus_tree", "Back to the tree"),
    ]
    DEFAULT_CSS: ClassVar[str] = """
    DetailsPane { height: 1fr; width: 1fr; }
    DetailsPane > TabbedContent { height: 1fr; }
    DetailsPane > TabbedContent > ContentSwitcher { height: 1fr; }
    DetailsPane TabPane { height: 1fr; padding: 0; }
    DetailsPane .-note { color: $text-muted; }
    """

    class JumpTo(Message):
        """The user asked to go to ``entry_id`` (move the tree cursor there)."""

        def __init__(self, pane: DetailsPane, entry_id: str) -> None:
            super().__init__()
            self.pane = pane
            self.entry_id = entry_id

        @property
        def control(self) -> DetailsPane:
            return self.pane

    def __init__(
        self,
        *,
        tab: str | None = None,
        tabs: DetailsTabs | None = None,
        tiktoken: bool = True,
        model_name: str | None = None,
        context_window: int | None = None,
        debounce: float = DEBOUNCE,
        row_cap: int = ROW_CAP,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.tabs = tabs if tabs is not None else TABS
        """The registry the tabs were made from."""
        self._initial_tab = self.tabs.check(tab) if tab is not None else self.tabs.first
        self.debounce = debounce
        self._options = TabOptions(tiktoken, model_name, context_window, row_cap)
        self.entry_id: str | None = None
        self._pending: str | None = None
        self._timer: Timer | None = None
        self._last_flush = -math.inf
        self._stale: set[str] = set(self.tabs.keys)
        self._widgets: dict[str, DetailsTab] = {}

    # ------------------------------------------------------------------ the tabs

    def tab(self, key: str) -> DetailsTab:
        """The widget of the tab called ``key`` (once composed)."""
        widget = self._widgets.get(self.tabs.check(key))
        if widget is None:
            raise NoMatches(f"The details pane has not made its {key!r} tab yet.")
        return widget

    @property
    def active_tab(self) -> str:
        try:
            active = self.query_one(TabbedContent).active
        except NoMatches:
            return self._initial_tab
        key = active.removeprefix("tab-")
        return key if key in self.tabs else self._initial_tab

    # ------------------------------------------------------------------ public API

    def show(self, entry_id: str | None) -> None:
        """Show ``entry_id``. Cheap: the first call after a pause applies at once, calls that
        follow within ``debounce`` seconds only restart a timer (the last one wins)."""
        self._pending = entry_id
        if not self.is_mounted:
            return  # applied on mount
        idle = self._timer is None and time.monotonic() - self._last_flush >= self.debounce
        if self.debounce <= 0 or idle:
            self._flush()
        else:
            # Restart the wait (Timer.reset only takes effect after the current interval).
            if self._timer is not None:
                self._timer.stop()
            self._timer = self.set_timer(self.debounce, self._debounced, name="details-debounce")

    def redraw_tab_underline(self) -> None:
        """Put the tab bar's underline under the active tab again. Textual places it when the
        bar is resized, which can come before the tabs are laid out when a hidden pane is
        shown (the underline was then missing)."""
        from textual.widgets import Tabs

        from pitui.ui.textual_patches.widgets import underline_active_tab

        for tabs in self.query(Tabs):
            underline_active_tab(tabs)

    def show_now(self, entry_id: str | None) -> None:
        """Show ``entry_id`` at once (no debounce)."""
        self._pending = entry_id
        if self.is_mounted:
            self._flush()

    def set_tab(self, tab: str) -> None:
        """Switch to the tab called ``tab`` (``ValueError`` when none is)."""
        self.tabs.check(tab)
        try:
            tabs = self.query_one(TabbedContent)
        except NoMatches:  # not composed yet
            self._initial_tab = tab
            return
        tabs.active = f"tab-{tab}"

    def refresh_entry(self) -> None:
        """Every tab forgets what it cached, and the visible one shows the entry again (after
        a label change, a model change, or a session switch)."""
        for widget in self._widgets.values():
            widget.forget()
        self._stale = set(self.tabs.keys)
        self._refresh_active()

    # ------------------------------------------------------------------ compose

    def compose(self) -> ComposeResult:
        self._widgets = {kind.key: kind(self._options) for kind in self.tabs}
        with TabbedContent(initial=f"tab-{self._initial_tab}"):
            for key, widget in self._widgets.items():
                with TabPane(widget.title, id=f"tab-{key}"):
                    yield widget

    def on_mount(self) -> None:
        if self._pending is not None:
            self._flush()

    # ------------------------------------------------------------------ refresh machinery

    def _debounced(self) -> None:
        self._timer = None
        self._flush()

    def _flush(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        entry_id = self._pending
        if entry_id != self.entry_id:
            self.entry_id = entry_id
            self._stale = set(self.tabs.keys)
        self._refresh_active()
        self._last_flush = time.monotonic()

    def _refresh_active(self) -> None:
        tab = self.active_tab
        widget = self._widgets.get(tab)
        if widget is not None and tab in self._stale:
            self._stale.discard(tab)
            try:
                widget.show(self.entry_id)
            except (UserError, OSError):
                # The session file was cut or replaced underneath: the app says so and offers
                # to reopen it; the pane keeps what it showed and tries again next time.
                self._stale.add(tab)

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        event.stop()
        self._refresh_active()
        self.refresh_bindings()

    @on(DetailsTab.JumpRequested)
    def _jump(self, event: DetailsTab.JumpRequested) -> None:
        event.stop()
        self.post_message(self.JumpTo(self, event.entry_id))
