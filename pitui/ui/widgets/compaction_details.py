"""``CompactionDetails``: the details pane's Compaction tab: the compaction in effect at the
highlighted entry (its numbers, files, summary) with a jump to its first kept entry.

The summary is Markdown, shown by :class:`~pitui.ui.widgets.markdown_view.MarkdownView` (the
chat's renderer: console markup and brackets stay literal, escapes are stripped first); every
other text is literal (see :mod:`pitui.ui.widgets.inspector_views`).
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Button, Static

from pitui.text import strip_escapes
from pitui.ui.widgets.details_tab import DetailsTab, TabOptions
from pitui.ui.widgets.inspector_views import (
    KEY_STYLE,
    CompactionView,
    build_compaction_view,
    compaction_facts,
    compaction_files,
    heading,
)
from pitui.ui.widgets.markdown_view import MarkdownView

_PARTS = (
    "#compaction-facts",
    "#jump-first-kept",
    "#compaction-files",
    "#compaction-summary-title",
    "#compaction-summary",
)


class CompactionDetails(DetailsTab):
    """The latest compaction on the path to the highlighted entry."""

    key = "compaction"
    title = "Compaction"

    DEFAULT_CSS: ClassVar[str] = """
    CompactionDetails { height: 1fr; }
    CompactionDetails > VerticalScroll { height: 1fr; padding: 0 1; }
    CompactionDetails #jump-first-kept { margin: 1 0; }
    CompactionDetails #compaction-summary { margin: 1 0 0 0; padding: 0; }
    CompactionDetails #compaction-summary-title { margin-top: 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "jump_first_kept", "Jump to first kept", show=False),
    ]

    def __init__(self, options: TabOptions | None = None, *, id: str | None = None) -> None:
        super().__init__(options, id=id)
        self.view: CompactionView | None = None
        """The compaction shown (``None``: none on the path)."""

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="compaction-scroll"):
            yield Static(Content(""), id="compaction-head", markup=False)
            yield Static(Content(""), id="compaction-facts", markup=False)
            yield Button("Jump to first kept entry (j)", id="jump-first-kept")
            yield Static(Content(""), id="compaction-files", markup=False)
            yield Static(heading("Summary"), id="compaction-summary-title", markup=False)
            yield MarkdownView(id="compaction-summary")

    def on_mount(self) -> None:
        self._set_parts_visible(False)

    def _set_parts_visible(self, visible: bool) -> None:
        for selector in _PARTS:
            self.query_one(selector).display = visible

    def show(self, entry_id: str | None) -> None:
        self.entry_id = entry_id
        store = self.pitui.store
        head = self.query_one("#compaction-head", Static)
        view: CompactionView | None = None
        if entry_id is not None and entry_id in store:
            view = build_compaction_view(store, entry_id)
        self.view = view
        self.refresh_bindings()
        if view is None:
            if entry_id is None:
                text = "Nothing selected."
            elif entry_id not in store:
                text = f"Entry not found: {entry_id}"
            else:
                text = f"No compaction on the path to {entry_id}."
            head.update(Content(text))
            self._set_parts_visible(False)
            return
        where = "this entry" if view.is_entry else f"the latest on the path to {entry_id}"
        head.update(
            Content.assemble(
                heading(f"Compaction {view.compaction_id}"), (f" · {where}", KEY_STYLE)
            )
        )
        self.query_one("#compaction-facts", Static).update(compaction_facts(view))
        self.query_one("#compaction-files", Static).update(compaction_files(view.entry))
        button = self.query_one("#jump-first-kept", Button)
        button.disabled = not view.first_kept or view.first_kept_text is None
        summary = view.entry.get("summary")
        self.query_one("#compaction-summary", MarkdownView).update(
            strip_escapes(summary) if isinstance(summary, str) else "*(no summary)*"
        )
        self._set_parts_visible(True)
        self.query_one("#compaction-scroll", VerticalScroll).scroll_home(animate=False)

    def jump_to_first_kept(self) -> bool:
        """Ask to go to the compaction's first kept entry; False when there is none."""
        view = self.view
        if view is None or not view.first_kept or view.first_kept_text is None:
            return False
        self.post_message(self.JumpRequested(view.first_kept))
        return True

    @on(Button.Pressed, "#jump-first-kept")
    def _jump_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.jump_to_first_kept()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "jump_first_kept":
            return self.view is not None
        return True

    def action_jump_first_kept(self) -> None:
        self.jump_to_first_kept()
