"""F1 / ``/help``: keys and commands."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

if TYPE_CHECKING:
    from pitui.ui.commands import Command

KEYS = [
    ("Enter", "send the prompt"),
    (
        "Alt+Enter, Ctrl+J",
        "new line in the prompt (also Shift+Enter where the terminal reports it: kitty, "
        "WezTerm, foot, Ghostty; not inside tmux)",
    ),
    (
        "Up, Down",
        "earlier prompts of this project (on the first/last line); Down past the newest: the draft",
    ),
    ("Ctrl+R", "search earlier prompts (again: older; Ctrl+S newer; Esc edit; Ctrl+G cancel)"),
    ("/", "command dropdown: Up/Down choose, Tab completes, Enter runs, Esc closes"),
    ("@", "file picker: the file's content goes with the prompt (Tab or Enter inserts)"),
    ("!cmd, !!cmd", "run a shell command; its output goes to the model (!!: only shown)"),
    ("Tab", "complete a /command (the common part, else the highlighted one)"),
    ("Esc", "stop a !command, abort the reply; twice on an empty prompt: open the tree"),
    ("Ctrl+C", "abort the reply; when idle: copy the mouse selection"),
    ("PgUp, PgDn", "scroll the chat (keys stay in the prompt)"),
    ("Ctrl+Home, Ctrl+End", "oldest shown / latest message (follows new output again)"),
    ("Ctrl+T", "open the session tree"),
    ("Ctrl+O", "expand or collapse all tool blocks"),
    ("Ctrl+P", "command palette"),
    ("Ctrl+Q", "quit"),
]

TREE_KEYS = [
    ("↑ ↓, PgUp PgDn", "move"),
    ("← →", "fold, or jump between branch points"),
    ("Enter, double click", "select (a click only highlights)"),
    ("/", "search"),
    ("f", "cycle the filters"),
    ("L", "label the entry"),
    ("c", "copy the entry"),
    ("d", "compare its context with another entry"),
    ("i", "show or hide the details pane (Tab moves into it, Esc comes back)"),
]

DIALOG_NOTE = (
    "Dialogs answered with one key take no key typed while they opened: keep typing and the "
    'keys go to the prompt; pause, then answer. An "always" answer takes Alt and its letter.'
)


class HelpRow(Horizontal):
    """A key and what it does; the description wraps in its own column."""

    DEFAULT_CSS: ClassVar[str] = """
    HelpRow { height: auto; }
    HelpRow > .-key { width: 26; color: $text-accent; }
    HelpRow > .-what { width: 1fr; }
    """

    def __init__(self, key: str, what: str) -> None:
        super().__init__()
        self.key, self.what = key, what

    def compose(self) -> ComposeResult:
        yield Static(Content(self.key), classes="-key")
        yield Static(Content(self.what), classes="-what")


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS: ClassVar[str] = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 96; max-width: 100%; max-height: 90%;
        border: round $primary; background: $surface; padding: 1 2; height: auto; }
    HelpScreen .-heading { text-style: bold; margin: 1 0 0 0; }
    HelpScreen .-heading.-first { margin: 0; }
    HelpScreen .-note { color: $text-muted; margin-top: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f1,q", "dismiss", "Close"),
    ]

    def __init__(self, commands: dict[str, Command]) -> None:
        super().__init__()
        self.commands = commands

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Content("Keys"), classes="-heading -first")
            for key, what in KEYS:
                yield HelpRow(key, what)
            yield Static(Content("Commands"), classes="-heading")
            for command in self.commands.values():
                yield HelpRow(f"/{command.name} {command.usage}".strip(), command.help)
            yield Static(Content("In the tree"), classes="-heading")
            for key, what in TREE_KEYS:
                yield HelpRow(key, what)
            yield Static(Content(DIALOG_NOTE), classes="-note")

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)
