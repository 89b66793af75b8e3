"""The prompt editor: multi-line; Enter submits, Shift+Enter or Ctrl+J adds a newline; Up on an
empty editor recalls earlier prompts; ``/`` commands complete with Tab."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import TextArea


class PromptEditor(TextArea):
    """Posts :class:`PromptEditor.Submitted`; keeps a history of submitted prompts."""

    DEFAULT_CSS: ClassVar[str] = """
    PromptEditor { height: auto; min-height: 3; max-height: 12; border: round $primary 50%; }
    PromptEditor:focus { border: round $primary; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "submit", "Send", priority=True),
        Binding("ctrl+j,shift+enter", "newline", "Newline", priority=True),
        Binding("tab", "complete", "Complete command", show=False),
    ]

    @dataclass
    class Submitted(Message):
        text: str

    def __init__(self, commands: list[str] | None = None, **kwargs: object) -> None:
        super().__init__(
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            **kwargs,  # type: ignore[arg-type]
        )
        self.placeholder = "Ask anything · / for commands · Esc Esc for the tree"
        self.commands = sorted(commands or [])
        self.prompt_history: list[str] = []
        self._history_index: int | None = None

    def on_mount(self) -> None:
        settings = getattr(self.app, "settings", None)
        if settings is not None and settings.get("ui.cursorBlink", True) is False:
            self.cursor_blink = False

    def action_submit(self) -> None:
        text = self.text.strip()
        if not text:
            return
        if not self.prompt_history or self.prompt_history[-1] != text:
            self.prompt_history.append(text)
        self._history_index = None
        self.text = ""
        self.post_message(self.Submitted(text))

    def action_newline(self) -> None:
        self.insert("\n")

    def action_complete(self) -> None:
        text = self.text
        if not text.startswith("/") or " " in text:
            return
        matches = [c for c in self.commands if c.startswith(text[1:])]
        if len(matches) == 1:
            self.text = f"/{matches[0]} "
            self.move_cursor(self.document.end)
        elif matches:
            prefix = matches[0]
            for match in matches[1:]:
                while not match.startswith(prefix):
                    prefix = prefix[:-1]
            if len(prefix) > len(text) - 1:
                self.text = f"/{prefix}"
                self.move_cursor(self.document.end)
            self.notify("  ".join(f"/{m}" for m in matches), markup=False, timeout=3)

    def completions(self) -> list[str]:
        text = self.text
        if not text.startswith("/") or " " in text:
            return []
        return [f"/{c}" for c in self.commands if c.startswith(text[1:])]

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "up" and self._recall(-1):
            event.stop()
            event.prevent_default()
            return
        if event.key == "down" and self._history_index is not None and self._recall(1):
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)

    def _recall(self, step: int) -> bool:
        """Walk the history when the editor is empty or showing a recalled prompt."""
        if not self.prompt_history:
            return False
        if self._history_index is None:
            if self.text or step > 0:
                return False
            self._history_index = len(self.prompt_history)
        elif self.text != self.prompt_history[self._history_index]:
            return False
        index = self._history_index + step
        if index >= len(self.prompt_history):
            self._history_index = None
            self.text = ""
            return True
        if index < 0:
            return True
        self._history_index = index
        self.text = self.prompt_history[index]
        self.move_cursor(self.document.end)
        return True

    def set_text(self, text: str) -> None:
        self.text = text
        self.move_cursor(self.document.end)
        self.focus()
