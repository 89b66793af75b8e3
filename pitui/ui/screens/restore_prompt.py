"""``RestorePrompt``: the files differ from the point you are moving to; restore them?

Shows what restoring would do (added, modified, deleted, each with its diff; files changed
outside pitui since the last checkpoint flagged ⚠) and offers: restore files and conversation
(``r``), conversation only (``c``), cancel (Esc). When flagged files would be overwritten, a
second question asks explicitly: overwrite them (``o``; they are saved first), keep them and
restore the rest (``k``), or go back (Esc).

A move in the tree that leaves a branch asks about its summary in the same dialog (one dialog
per move): the summary choice (no summary, summarize, with instructions) sits above the files.

Dismisses with a :class:`RestoreChoice`, or None when cancelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, OptionList, RadioButton, RadioSet, Static
from textual.widgets.option_list import Option

from pitui.agent.workspace import MovePreview
from pitui.checkpoint.diff import summary_text
from pitui.checkpoint.restore import Kept, OutsidePolicy
from pitui.checkpoint.store import display_path
from pitui.ui.key_routing import AnswersByKey
from pitui.ui.screens.summary_prompt import SummaryChoice, SummaryOffer
from pitui.ui.widgets.files_view import FilesView, clean

NO_SUMMARY = SummaryChoice(False)


def not_restorable_text(paths: list[Kept], shown: int = 4) -> str:
    """``Not restorable, left as they are: big.bin (…); …`` (names made inert)."""
    listed = "; ".join(f"{clean(display_path(k.path))} ({clean(k.reason)})" for k in paths[:shown])
    more = f" and {len(paths) - shown} more" if len(paths) > shown else ""
    return f"Not restorable, left as they are: {listed}{more}."


@dataclass(frozen=True)
class RestoreChoice:
    """``files``: restore the files too (else the conversation only); ``outside``: what to do
    with files changed outside pitui; ``summary``: what to do with the branch left behind."""

    files: bool
    outside: OutsidePolicy = "refuse"
    summary: SummaryChoice = NO_SUMMARY


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
    RestorePrompt #restore-summary-row { height: auto; margin: 1 0; }
    RestorePrompt #restore-summary-row > .-label { width: auto; padding: 0 1 0 0; }
    RestorePrompt RadioSet {
        layout: horizontal; height: auto; width: 1fr; border: none; padding: 0;
        background: $panel;
    }
    RestorePrompt RadioSet:focus { background: $boost; }
    RestorePrompt RadioSet > RadioButton { width: auto; margin-right: 1; background: $panel; }
    RestorePrompt #restore-summary-focus { margin-top: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "choose('files')", "Restore files and conversation"),
        Binding("c", "choose('conversation')", "Conversation only"),
        Binding("o", "choose('overwrite')", "Overwrite", show=False),
        Binding("k", "choose('keep')", "Keep them", show=False),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(
        self,
        preview: MovePreview,
        *,
        fork: bool = False,
        summary: SummaryOffer | None = None,
        cursor_blink: bool = True,
    ) -> None:
        super().__init__()
        self.preview = preview
        self.fork = fork
        self.summary = summary
        """Also ask about the summary of the branch being left (a move in the tree)."""
        self.cursor_blink = cursor_blink
        self._confirming = False

    @property
    def flagged(self) -> list[str]:
        return list(self.preview.plan.outside) if self.preview.plan else []

    def compose(self) -> ComposeResult:
        plan = self.preview.plan
        assert plan is not None
        with Vertical(id="restore-dialog"):
            yield Static(Content(self._title()), classes="-title", id="restore-title")
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
            if plan.not_restorable:
                yield Static(
                    Content(not_restorable_text(plan.not_restorable)),
                    classes="-warning",
                    id="restore-not-restorable",
                )
            yield FilesView(self.preview.diffs, self.flagged, id="restore-files")
            yield from self._summary_choice()
            yield OptionList(*self._main_options(), id="restore-options")
            keys = "Tab moves between the files, the summary and the choices"
            if self.summary is None or not self.summary.can_summarize:
                keys = "↑↓ files, Tab to the choices"
            yield Static(
                Content(
                    "The current files are saved first: moving back restores them. "
                    f"{keys}, Esc cancels."
                ),
                classes="-note",
            )
        yield Footer()

    def _title(self) -> str:
        plan = self.preview.plan
        assert plan is not None
        where = "the new session's starting point" if self.fork else "the point you are moving to"
        files = f"The files on disk differ from {where}. Restoring them: "
        files += f"{summary_text(plan.changes)}."
        if self.summary is None:
            return files
        return f"Moving here leaves a branch of {self.summary.entries}. {files}"

    def _summary_choice(self) -> ComposeResult:
        """The branch summary question (a move in the tree that leaves a branch)."""
        offer = self.summary
        if offer is None:
            return
        if not offer.can_summarize:
            yield Static(
                Content("No model is available: the branch is left without a summary."),
                classes="-note",
            )
            return
        with Horizontal(id="restore-summary-row"):
            yield Static(Content("Branch summary:"), classes="-label")
            with RadioSet(id="restore-summary"):
                yield RadioButton("None", value=True, id="summary-none")
                yield RadioButton("Summarize", id="summary-summarize")
                yield RadioButton("With instructions…", id="summary-custom")
        focus = Input(
            placeholder="Focus of the summary (optional; Tab to the choices)",
            id="restore-summary-focus",
        )
        focus.display = False
        focus.cursor_blink = self.cursor_blink
        yield focus

    @on(RadioSet.Changed, "#restore-summary")
    def _summary_changed(self, event: RadioSet.Changed) -> None:
        event.stop()
        focus = self.query_one("#restore-summary-focus", Input)
        custom = event.pressed.id == "summary-custom"
        focus.display = custom
        if custom:
            focus.focus()

    @on(Input.Submitted, "#restore-summary-focus")
    def _focus_given(self, event: Input.Submitted) -> None:
        event.stop()
        self.query_one("#restore-options", OptionList).focus()

    def summary_choice(self) -> SummaryChoice:
        """The summary chosen in the dialog (no summary when it does not ask)."""
        if self.summary is None or not self.summary.can_summarize:
            return SummaryChoice(False)
        pressed = self.query_one("#restore-summary", RadioSet).pressed_button
        chosen = pressed.id if pressed is not None else "summary-none"
        if chosen == "summary-summarize":
            return SummaryChoice(True)
        if chosen == "summary-custom":
            text = self.query_one("#restore-summary-focus", Input).value.strip()
            return SummaryChoice(True, text or None)
        return SummaryChoice(False)

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
        summary = self.summary_choice()
        if self._confirming:
            if what in ("overwrite", "keep"):
                outside: OutsidePolicy = "overwrite" if what == "overwrite" else "keep"
                self.dismiss(RestoreChoice(True, outside, summary))
            return
        if what == "conversation":
            self.dismiss(RestoreChoice(False, summary=summary))
        elif what == "files":
            if self.flagged:
                self._confirm_outside()
            else:
                self.dismiss(RestoreChoice(True, "refuse", summary))

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
            self.query_one("#restore-title", Static).update(Content(self._title()))
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
