"""Placeholder: the session picker (being written)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen
from textual.widgets import Static


class SessionPickerScreen(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]

    def compose(self) -> ComposeResult:
        yield Static("sessions")

    def action_close(self) -> None:
        self.dismiss(None)
