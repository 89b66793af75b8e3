"""F1 / ``/help``: keys and commands."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

if TYPE_CHECKING:
    from pitui.ui.commands import Command

KEYS = [
    ("Enter", "send the prompt"),
    ("Shift+Enter, Ctrl+J", "new line in the prompt"),
    ("Up (empty prompt)", "recall earlier prompts"),
    ("Tab", "complete a /command"),
    ("Esc", "abort the reply; twice on an empty prompt: open the tree"),
    ("Ctrl+C", "abort the reply (when idle: copy the selection)"),
    ("Ctrl+T", "open the session tree"),
    ("Ctrl+P", "command palette"),
    ("Ctrl+Q", "quit"),
]


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS: ClassVar[str] = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 80; max-height: 90%; border: round $primary;
        background: $surface; padding: 1 2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f1,q", "dismiss", "Close"),
    ]

    def __init__(self, commands: dict[str, Command]) -> None:
        super().__init__()
        self.commands = commands

    def compose(self) -> ComposeResult:
        lines = ["Keys", ""]
        lines += [f"  {key:<22} {what}" for key, what in KEYS]
        lines += ["", "Commands", ""]
        for command in self.commands.values():
            usage = f"/{command.name} {command.usage}".strip()
            lines.append(f"  {usage:<32} {command.help}")
        lines += [
            "",
            "In the tree: ↑/↓ move, ←/→ fold or jump between branch points, Enter (or a",
            "second click) selects, / searches, f cycles filters, L labels, c copies,",
            "d compares the context with another entry, i shows or hides the details",
            "pane, Tab moves into it.",
        ]
        with VerticalScroll():
            yield Static(Content("\n".join(lines)))

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)
