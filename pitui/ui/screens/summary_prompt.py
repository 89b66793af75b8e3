"""Small modals of the tree browser: "Summarize the branch you are leaving?" and the label editor.

``SummaryPrompt`` dismisses with a :class:`SummaryChoice` (or None when cancelled): No summary /
Summarize / Summarize with instructions (an input for the focus text; Esc there goes back to the
choices, as pi's editor does). Without a model only "No summary" is offered.
``LabelPrompt`` dismisses with the new label ("" clears it) or None when cancelled.
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
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from pitui.ui.key_routing import AnswersByKey


@dataclass(frozen=True)
class SummaryChoice:
    """What to do with the branch being left."""

    summarize: bool
    instructions: str | None = None


@dataclass(frozen=True)
class SummaryOffer:
    """The question about the branch being left: how many entries it has (as the tree shows
    them), and whether a model can summarize it."""

    abandoned: int
    can_summarize: bool = True

    @property
    def entries(self) -> str:
        return f"{self.abandoned} {'entry' if self.abandoned == 1 else 'entries'}"


_DIALOG_CSS = """
    align: center middle;
    & > Vertical {
        width: 64;
        max-width: 90%;
        height: auto;
        border: round $primary;
        background: $panel;
        padding: 0 1;
    }
    & .-title { text-style: bold; margin-bottom: 1; }
    & .-note { color: $text-muted; margin-top: 1; }
    & OptionList, & OptionList:focus {
        height: auto;
        border: none;
        padding: 0;
        background: $panel;
    }
    & Input { margin-top: 1; }
"""


class SummaryPrompt(AnswersByKey, ModalScreen[SummaryChoice | None]):
    """Ask whether to summarize the branch being left (pi's "Summarize branch?")."""

    DEFAULT_CSS: ClassVar[str] = "SummaryPrompt {" + _DIALOG_CSS + "}"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(
        self, *, abandoned: int, can_summarize: bool = True, cursor_blink: bool = True
    ) -> None:
        super().__init__()
        self.abandoned = abandoned
        self.can_summarize = can_summarize
        self.cursor_blink = cursor_blink

    def compose(self) -> ComposeResult:
        entries = "entry" if self.abandoned == 1 else "entries"
        with Vertical(id="summary-dialog"):
            yield Static(
                Content(f"Summarize the branch you are leaving? ({self.abandoned} {entries})"),
                classes="-title",
            )
            options = [Option(Content("No summary"), id="none")]
            if self.can_summarize:
                options.append(Option(Content("Summarize"), id="summarize"))
                options.append(Option(Content("Summarize with instructions…"), id="custom"))
            yield OptionList(*options, id="summary-options")
            focus = Input(placeholder="Focus of the summary (Enter to start)", id="summary-focus")
            focus.display = False
            focus.cursor_blink = self.cursor_blink
            yield focus
            note = "Enter chooses, Esc cancels."
            if not self.can_summarize:
                note = "No model is available, so the branch cannot be summarized. " + note
            yield Static(Content(note), classes="-note")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    @on(OptionList.OptionSelected, "#summary-options")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        choice = event.option.id
        if choice == "none":
            self.dismiss(SummaryChoice(False))
        elif choice == "summarize":
            self.dismiss(SummaryChoice(True))
        elif choice == "custom":
            focus = self.query_one("#summary-focus", Input)
            focus.display = True
            focus.focus()

    @on(Input.Submitted, "#summary-focus")
    def _instructions(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        self.dismiss(SummaryChoice(True, text or None))

    def action_cancel(self) -> None:
        focus = self.query_one("#summary-focus", Input)
        if focus.display:
            # Like pi: leaving the instructions editor goes back to the choices.
            focus.display = False
            focus.value = ""
            self.query_one(OptionList).focus()
            return
        self.dismiss(None)


class LabelPrompt(ModalScreen[str | None]):
    """Edit an entry's label; an empty value clears it."""

    DEFAULT_CSS: ClassVar[str] = "LabelPrompt {" + _DIALOG_CSS + "}"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, current: str | None = None, *, cursor_blink: bool = True) -> None:
        super().__init__()
        self.current = current or ""
        self.cursor_blink = cursor_blink

    def compose(self) -> ComposeResult:
        with Vertical(id="label-dialog"):
            yield Static(Content("Label for this entry"), classes="-title")
            field = Input(value=self.current, placeholder="label", id="label-input")
            field.cursor_blink = self.cursor_blink
            yield field
            yield Static(Content("Enter saves (empty clears), Esc cancels."), classes="-note")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted, "#label-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(" ".join(event.value.split()))

    def action_cancel(self) -> None:
        self.dismiss(None)
