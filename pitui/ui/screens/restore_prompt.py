"""``RestorePrompt``: the files differ from the point you are moving to; restore them?

Shows what restoring would do (added, modified, deleted, each with its diff; files changed
outside pitui since the last checkpoint flagged ⚠) and offers: restore files and conversation
(``r``), conversation only (``c``), cancel (Esc). When flagged files would be overwritten, a
second question asks explicitly: overwrite them (``o``; they are saved first), keep them and
restore the rest (``k``), or go back (Esc).

Dismisses with a :class:`RestoreChoice`, or None when cancelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from pitui.agent.workspace import MovePreview
from pitui.checkpoint.diff import summary_text
from pitui.checkpoint.restore import OutsidePolicy
from pitui.checkpoint.store import display_path
from pitui.ui.key_routing import AnswersByKey
from pitui.ui.widgets.files_view import FilesView, clean


@dataclass(frozen=True)
class RestoreChoice:
    """``files``: restore the files too (else the conversation only); ``outside``: what to do
    with files changed outside pitui."""

    files: bool
    outside: OutsidePolicy = "refuse"


class RestorePrompt(AnswersByKey, ModalScreen[RestoreChoice | None]):
    """Ask whether moving to another point should bring the files back too."""

    DEFAULT_CSS: ClassVar[str] = """
    RestorePrompt { align: center middle; }
    RestorePrompt > #restore-dialog {
        width: 92%;
        height: 85%;
        border: round $primary;
        background: $panel;
        padding: 0 1;
    }
    RestorePrompt .-title { text-style: bold; }
    RestorePrompt .-note { color: $text-muted; }
    RestorePrompt .-warning { color: $text-warning; }
    RestorePrompt FilesView { height: 1fr; margin: 1 0; }
    RestorePrompt OptionList, RestorePrompt OptionList:focus {
        height: auto; border: none; padding: 0; background: $panel;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "choose('files')", "Restore files and conversation"),
        Binding("c", "choose('conversation')", "Conversation only"),
        Binding("o", "choose('overwrite')", "Overwrite", show=False),
        Binding("k", "choose('keep')", "Keep them", show=False),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, preview: MovePreview, *, fork: bool = False) -> None:
        super().__init__()
        self.preview = preview
        self.fork = fork
        self._confirming = False

    @property
    def flagged(self) -> list[str]:
        return list(self.preview.plan.outside) if self.preview.plan else []

    def compose(self) -> ComposeResult:
        plan = self.preview.plan
        assert plan is not None
        where = "the new session's starting point" if self.fork else "the point you are moving to"
        with Vertical(id="restore-dialog"):
            yield Static(
                Content(
                    f"The files on disk differ from {where}. Restoring them: "
                    f"{summary_text(plan.changes)}."
                ),
                classes="-title",
                id="restore-title",
            )
            if self.preview.note:
                yield Static(Content(self.preview.note), classes="-note")
            if self.flagged:
                yield Static(
                    Content(
                        f"⚠ {len(self.flagged)} of them changed outside pitui since the last "
                        "checkpoint."
                    ),
                    classes="-warning",
                    id="restore-outside",
                )
            if plan.kept:
                kept = "; ".join(
                    f"{clean(display_path(k.path))} ({k.reason})" for k in plan.kept[:4]
                )
                more = f" and {len(plan.kept) - 4} more" if len(plan.kept) > 4 else ""
                yield Static(Content(f"Left as they are: {kept}{more}."), classes="-note")
            yield FilesView(self.preview.diffs, self.flagged, id="restore-files")
            yield OptionList(*self._main_options(), id="restore-options")
            yield Static(
                Content(
                    "The current files are saved first: moving back restores them. "
                    "↑↓ files, Tab to the choices, Esc cancels."
                ),
                classes="-note",
            )
        yield Footer()

    def _main_options(self) -> list[Option]:
        if self.fork:
            return [
                Option(Content("r  Fork and restore the files"), id="files"),
                Option(Content("c  Fork, keep the files as they are"), id="conversation"),
            ]
        return [
            Option(Content("r  Restore files and conversation"), id="files"),
            Option(Content("c  Conversation only (keep the files as they are)"), id="conversation"),
        ]

    def on_mount(self) -> None:
        self.query_one("#files-list", OptionList).focus()

    @on(OptionList.OptionSelected, "#restore-options")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.action_choose(event.option.id)

    def action_choose(self, what: str) -> None:
        if self._confirming:
            if what in ("overwrite", "keep"):
                self.dismiss(RestoreChoice(True, "overwrite" if what == "overwrite" else "keep"))
            return
        if what == "conversation":
            self.dismiss(RestoreChoice(False))
        elif what == "files":
            if self.flagged:
                self._confirm_outside()
            else:
                self.dismiss(RestoreChoice(True, "refuse"))

    def _confirm_outside(self) -> None:
        """The explicit confirmation before overwriting files changed outside pitui."""
        self._confirming = True
        shown = ", ".join(clean(display_path(p)) for p in self.flagged[:5])
        more = " …" if len(self.flagged) > 5 else ""
        self.query_one("#restore-title", Static).update(
            Content(
                f"{len(self.flagged)} file(s) changed outside pitui since the last checkpoint "
                f"would be overwritten: {shown}{more}."
            )
        )
        options = self.query_one("#restore-options", OptionList)
        options.clear_options()
        options.add_options(
            [
                Option(Content("o  Overwrite them too (they are saved first)"), id="overwrite"),
                Option(Content("k  Keep them, restore the rest"), id="keep"),
            ]
        )
        options.focus()
        options.highlighted = 1

    def action_cancel(self) -> None:
        if self._confirming:
            self._confirming = False
            plan = self.preview.plan
            assert plan is not None
            self.query_one("#restore-title", Static).update(
                Content(f"The files on disk differ. Restoring them: {summary_text(plan.changes)}.")
            )
            options = self.query_one("#restore-options", OptionList)
            options.clear_options()
            options.add_options(self._main_options())
            return
        self.dismiss(None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "choose" and parameters:
            second = parameters[0] in ("overwrite", "keep")
            return second == self._confirming
        return True
