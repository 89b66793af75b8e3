"""Placeholder: the session tree browser (being written)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Static


class TreeBrowserScreen(Screen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]

    def __init__(self, initial_tab: str = "entry") -> None:
        super().__init__()
        self.initial_tab = initial_tab

    def compose(self) -> ComposeResult:
        yield Static("tree")

    def action_close(self) -> None:
        self.dismiss(None)
