"""A session this pitui cannot write (another pitui has it open, the disk is full, the file
changed): a write says so in one sentence and offers a fork or a clone, and, once the other
pitui has closed the session, to take it over."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label

from pitui.session import SessionStore
from pitui.text import terminal_line
from pitui.ui.app_state import UsesApp
from pitui.ui.key_routing import AnswersByKey


def refusal_sentence(store: SessionStore) -> str:
    """What a write to a read-only ``store`` is told (one sentence)."""
    if store.held_elsewhere:
        return (
            f"This session is open in another pitui ({store.holder}), so it cannot be changed "
            "here: fork it (/fork) or clone it (/clone) to continue in a new session."
        )
    reason = store.read_only_reason or "This session is open read-only."
    return f"{reason.rstrip('.')}: fork it (/fork) or clone it (/clone) to continue."


def freed_sentence() -> str:
    return "The other pitui has closed this session: take it over to write to it here."


class ReadOnlyScreen(AnswersByKey, UsesApp, ModalScreen[None]):
    """The sentence, then f fork · c clone · t take over (when the lock is free) · Esc."""

    DEFAULT_CSS: ClassVar[str] = """
    ReadOnlyScreen { align: center middle; }
    ReadOnlyScreen > Vertical {
        width: 80%; height: auto; border: round $warning; padding: 1 2; background: $surface;
    }
    ReadOnlyScreen Label { width: 100%; }
    ReadOnlyScreen #read-only-keys { color: $text-muted; margin-top: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "fork", "Fork"),
        Binding("c", "clone", "Clone"),
        Binding("t", "take_over", "Take over"),
        Binding("escape", "close", "Keep viewing (read-only)"),
    ]

    def __init__(self, message: str, can_take_over: bool) -> None:
        super().__init__()
        self.message = message
        self.can_take_over = can_take_over

    def compose(self) -> ComposeResult:
        take_over = "t take over · " if self.can_take_over else ""
        with Vertical():
            yield Label(Content(terminal_line(self.message)), id="read-only-message")
            yield Label(
                Content(f"{take_over}f fork · c clone · Esc keep viewing (read-only)"),
                id="read-only-keys",
            )

    def action_fork(self) -> None:
        self.dismiss(None)
        self.pitui.run_slash("/fork")

    def action_clone(self) -> None:
        self.dismiss(None)
        self.pitui.run_slash("/clone")

    def action_take_over(self) -> None:
        if not self.can_take_over:
            return
        self.dismiss(None)
        self.pitui.take_over()

    def action_close(self) -> None:
        self.dismiss(None)


class MissingCwdScreen(AnswersByKey, ModalScreen[str | None]):
    """A session whose working directory no longer exists: continue here, fork here, or
    cancel (pi 1.6's question). Dismisses with ``"continue"``, ``"fork"`` or None."""

    DEFAULT_CSS: ClassVar[str] = """
    MissingCwdScreen { align: center middle; }
    MissingCwdScreen > Vertical {
        width: 80%; height: auto; border: round $warning; padding: 1 2; background: $surface;
    }
    MissingCwdScreen Label { width: 100%; }
    MissingCwdScreen .missing-cwd-option { margin-top: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "choose('continue')", "Continue here"),
        Binding("f", "choose('fork')", "Fork here"),
        Binding("escape,q", "choose('')", "Cancel"),
    ]

    def __init__(self, stored_cwd: str, here: str, cancel_text: str) -> None:
        super().__init__()
        self.stored_cwd = terminal_line(stored_cwd)
        self.here = terminal_line(here)
        self.cancel_text = cancel_text

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(
                Content(f"This session's working directory no longer exists: {self.stored_cwd}"),
                id="missing-cwd-message",
            )
            yield Label(
                Content(f"c  continue in {self.here} (asks again next time)"),
                classes="missing-cwd-option",
            )
            yield Label(Content(f"f  fork into {self.here} (a new session; the original is kept)"))
            yield Label(Content(f"Esc  {self.cancel_text}"))

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice or None)
