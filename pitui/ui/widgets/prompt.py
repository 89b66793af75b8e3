"""The prompt editor: multi-line; Enter submits, Shift+Enter or Ctrl+J adds a newline; Up on an
empty editor recalls earlier prompts (Down walks back); ``/`` commands complete with Tab, and
the matching commands are listed in the editor's bottom border while typing one."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.widgets import TextArea

MAX_HISTORY = 500


class PromptEditor(TextArea):
    """Posts :class:`PromptEditor.Submitted`; keeps a history of submitted prompts."""

    DEFAULT_CSS: ClassVar[str] = """
    PromptEditor {
        height: auto; min-height: 3; max-height: 12;
        border: round $primary 50%;
        border-subtitle-align: left;
        border-subtitle-color: $text-muted;
    }
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

    def __init__(
        self,
        commands: Iterable[str] | Mapping[str, str] | None = None,
        history: Callable[[int], list[str]] | None = None,
        **kwargs: object,
    ) -> None:
        """``history(limit)`` gives the session's earlier prompts, oldest first; it is asked
        once, when the history is first needed (not before the first frame)."""
        super().__init__(
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            **kwargs,  # type: ignore[arg-type]
        )
        self.placeholder = "Ask anything · / for commands · Esc Esc for the tree"
        self.command_help: dict[str, str] = (
            dict(commands) if isinstance(commands, Mapping) else _known_help(commands or [])
        )
        self.commands = sorted(self.command_help)
        self._history_source = history
        self._history: list[str] | None = None
        self._history_index: int | None = None

    @property
    def prompt_history(self) -> list[str]:
        """Submitted prompts, oldest first (the session's own, loaded on first use)."""
        if self._history is None:
            source, self._history_source = self._history_source, None
            self._history = _dedupe(source(MAX_HISTORY))[-MAX_HISTORY:] if source else []
        return self._history

    @prompt_history.setter
    def prompt_history(self, value: list[str]) -> None:
        self._history_source = None
        self._history = value

    # ------------------------------------------------------------------ submitting

    def action_submit(self) -> None:
        text = self.text.strip()
        if not text:
            return
        history = self.prompt_history
        if not history or history[-1] != text:
            history.append(text)
            del history[:-MAX_HISTORY]
        self._history_index = None
        self.text = ""
        self.post_message(self.Submitted(text))

    def action_newline(self) -> None:
        if self.read_only:
            return
        start, end = self.selection
        self.replace("\n", start, end, maintain_selection_offset=False)

    # ------------------------------------------------------------------ completion

    def completions(self) -> list[str]:
        """``/name`` of every command matching what is typed (nothing unless typing one)."""
        text = self.text
        if not text.startswith("/") or " " in text or "\n" in text:
            return []
        return [f"/{c}" for c in self.commands if c.startswith(text[1:])]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "complete":
            # Tab moves the focus unless a command is being typed.
            return bool(self.completions())
        return super().check_action(action, parameters)

    def action_complete(self) -> None:
        matches = [m[1:] for m in self.completions()]
        if not matches:
            return
        if len(matches) == 1:
            self._set_text(f"/{matches[0]} ")
            return
        prefix = matches[0]
        for match in matches[1:]:
            while not match.startswith(prefix):
                prefix = prefix[:-1]
        if len(prefix) > len(self.text) - 1:
            self._set_text(f"/{prefix}")

    def _update_hint(self) -> None:
        matches = self.completions()
        if not matches:
            self.border_subtitle = None
            return
        if len(matches) == 1:
            name = matches[0][1:]
            help_text = self.command_help.get(name, "")
            hint = f"{matches[0]} · {help_text}" if help_text else matches[0]
            if self.text.rstrip() != matches[0]:
                hint += " · Tab completes"
        else:
            hint = " ".join(matches)
        self.border_subtitle = Content(hint)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self._update_hint()
        if self._history_index is not None and (
            self._history_index >= len(self.prompt_history)
            or self.text != self.prompt_history[self._history_index]
        ):
            # Editing a recalled prompt makes it a new draft.
            self._history_index = None

    # ------------------------------------------------------------------ history

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "up" and self._recall(-1):
            event.stop()
            event.prevent_default()
            return
        if event.key == "down" and self._recall(1):
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)

    def _recall(self, step: int) -> bool:
        """Walk the history when the editor is empty, or shows an unedited recalled prompt and
        the cursor is on its first line (Up) or last line (Down)."""
        if not self.prompt_history:
            return False
        row = self.cursor_location[0]
        if self._history_index is None:
            if self.text or step > 0:
                return False
            self._history_index = len(self.prompt_history)
        elif (step < 0 and row != 0) or (step > 0 and row != self.document.line_count - 1):
            return False
        index = self._history_index + step
        if index < 0:
            return True
        if index >= len(self.prompt_history):
            self._history_index = None
            self._set_text("")
            return True
        self._history_index = index
        self._set_text(self.prompt_history[index])
        return True

    # ------------------------------------------------------------------ helpers

    def _set_text(self, text: str) -> None:
        index = self._history_index
        self.text = text
        self._history_index = index
        self.move_cursor(self.document.end)
        self._update_hint()

    def set_text(self, text: str) -> None:
        """Replace the draft (the tree browser's "edit and resubmit") and focus the editor."""
        self._history_index = None
        self._set_text(text)
        self.focus()


def _dedupe(texts: list[str]) -> list[str]:
    """Consecutive duplicates collapse to one."""
    out: list[str] = []
    for text in texts:
        text = text.strip()
        if text and (not out or out[-1] != text):
            out.append(text)
    return out


def _known_help(names: Iterable[str]) -> dict[str, str]:
    """Help text for the given command names, from the app's slash commands."""
    try:
        from pitui.ui.commands import COMMANDS
    except ImportError:  # pragma: no cover - the commands module is part of the app
        return dict.fromkeys(names, "")
    out: dict[str, str] = {}
    for name in names:
        command = COMMANDS.get(name)
        out[name] = (
            f"{command.usage + ' · ' if command.usage else ''}{command.help}" if command else ""
        )
    return out
