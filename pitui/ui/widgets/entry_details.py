"""``EntryDetails``: the details pane's Entry tab: one entry's metadata, its whole body, and its
raw JSON (built only when the collapsible is opened).

Everything shown comes from the session file and is untrusted: see
:mod:`pitui.ui.widgets.inspector_views`, which builds the text.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Collapsible, Static

from pitui.session.errors import EntryNotFoundError
from pitui.ui.widgets.details_tab import DetailsTab, TabOptions
from pitui.ui.widgets.inspector_views import entry_body, entry_meta, raw_json


class EntryDetails(DetailsTab):
    """The highlighted entry, in full. ``show(entry_id)`` rebuilds it."""

    key = "entry"
    title = "Entry"

    DEFAULT_CSS: ClassVar[str] = """
    EntryDetails { height: 1fr; }
    EntryDetails > VerticalScroll { height: 1fr; padding: 0 1; }
    EntryDetails #entry-meta { margin-bottom: 1; }
    EntryDetails #entry-raw { margin-top: 1; }
    """

    def __init__(self, options: TabOptions | None = None, *, id: str | None = None) -> None:
        super().__init__(options, id=id)
        self._entry: dict[str, Any] | None = None

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="entry-scroll"):
            yield Static(Content("Nothing selected."), id="entry-meta", markup=False)
            yield Static(Content(""), id="entry-body", markup=False)
            with Collapsible(title="Raw JSON", id="entry-raw"):
                yield Static(Content(""), id="entry-raw-text", markup=False)

    def show(self, entry_id: str | None) -> None:
        self.entry_id = entry_id
        store = self.pitui.store
        meta = self.query_one("#entry-meta", Static)
        body = self.query_one("#entry-body", Static)
        raw = self.query_one("#entry-raw", Collapsible)
        entry: dict[str, Any] | None = None
        if entry_id is not None:
            try:
                entry = store.get(entry_id)
            except EntryNotFoundError:
                entry = None
        self._entry = entry
        if entry is None:
            missing = "Nothing selected." if entry_id is None else "Entry not found: "
            meta.update(Content(missing + (entry_id or "")))
            body.update(Content(""))
            raw.display = False
            return
        meta.update(entry_meta(entry, store.label_of(str(entry.get("id")))))
        body.update(entry_body(entry))
        raw.display = True
        text = self.query_one("#entry-raw-text", Static)
        text.update(raw_json(entry) if not raw.collapsed else Content(""))
        self.query_one("#entry-scroll", VerticalScroll).scroll_home(animate=False)

    @on(Collapsible.Expanded, "#entry-raw")
    def _raw_expanded(self, event: Collapsible.Expanded) -> None:
        event.stop()
        if self._entry is not None:
            self.query_one("#entry-raw-text", Static).update(raw_json(self._entry))
