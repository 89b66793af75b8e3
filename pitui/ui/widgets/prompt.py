"""The prompt editor: multi-line; Enter submits, Alt+Enter or Ctrl+J (and Shift+Enter where the
terminal reports it) adds a newline; Up on an empty editor recalls earlier prompts (Down walks
back); while a ``/`` command is typed, a dropdown (:class:`CommandMenu`) lists the matching
commands with their help: Up/Down move in it, Tab or Enter complete, Esc closes it.

The newline hint: when the terminal is not known to report Shift+Enter
(:func:`pitui.ui.keys.reports_shift_enter`), the first prompt sent with Enter in a run of the
app shows a notice once ("Alt+Enter or Ctrl+J for a newline"); Enter still sends. A
``shift+enter`` key received at any time proves the terminal reports it (no hint, and the
placeholder names Shift+Enter)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, TextArea
from textual.widgets.option_list import Option

from pitui.ui.keys import NEWLINE_HINT, NEWLINE_KEYS, reports_shift_enter

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
        Binding("enter", "submit", "Send"),
        Binding(NEWLINE_KEYS, "newline", "Newline"),
        Binding("shift+enter", "shift_newline", "Newline", show=False),
        Binding("tab", "complete", "Complete command", show=False),
    ]

    @dataclass
    class Submitted(Message):
        text: str

    @dataclass
    class MenuChanged(Message):
        """The command dropdown's content: ``/name`` matches and the highlighted index
        (no matches: the dropdown is closed)."""

        editor: PromptEditor
        matches: list[str]
        index: int

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
        self.command_help: dict[str, str] = (
            dict(commands) if isinstance(commands, Mapping) else _known_help(commands or [])
        )
        self.commands = sorted(self.command_help)
        self._history_source = history
        self._history: list[str] | None = None
        self._history_index: int | None = None
        self.shift_enter_reported = reports_shift_enter()
        """The terminal tells Shift+Enter from Enter (kitty protocol, or one was received)."""
        self.newline_hint_shown = False
        self._menu: list[str] = []  # the dropdown's /name matches (empty: closed)
        self._menu_index = 0
        self._menu_moved = False  # Up/Down chose an entry (Tab then takes it)
        self._menu_closed_for: str | None = None  # Esc closed the dropdown for this text
        self._set_placeholder()

    def _set_placeholder(self) -> None:
        newline = "Shift+Enter" if self.shift_enter_reported else "Alt+Enter"
        self.placeholder = f"Ask anything · / commands · {newline} newline · Esc Esc tree"

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
        if self._menu and self._take_menu_entry(run=True):
            return
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

    def hint_newline(self) -> None:
        """Once per run of the app, when the terminal sends Shift+Enter as Enter (the screen
        calls it for a prompt it takes, not for a /command or a refused prompt)."""
        if self.shift_enter_reported or self.newline_hint_shown:
            return
        self.newline_hint_shown = True
        self.notify(
            f"Enter sends the prompt. {NEWLINE_HINT} (this terminal sends Shift+Enter as Enter).",
            title="Newline",
            timeout=8,
            markup=False,
        )

    def action_shift_newline(self) -> None:
        if not self.shift_enter_reported:
            self.shift_enter_reported = True  # the terminal reports it after all
            self._set_placeholder()
        self.action_newline()

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
        """Tab: the common part of the matches when it is longer than what is typed, else the
        highlighted entry of the dropdown (the first one unless Up/Down moved)."""
        matches = [m[1:] for m in self.completions()]
        if not matches:
            return
        if len(matches) == 1:
            self._set_text(f"/{matches[0]} ")
            return
        prefix = common_prefix(matches)
        if len(prefix) > len(self.text) - 1 and not self._menu_moved:
            self._set_text(f"/{prefix}")
            return
        self._take_menu_entry(run=False)

    def complete_to(self, name: str, *, run: bool = False) -> None:
        """Put ``/name`` in the editor (a click in the dropdown); ``run``: send it too, when the
        command takes no argument."""
        usage = self.command_usage.get(name, "")
        if run and not usage:
            self._set_text(f"/{name}")
            self.action_submit_text()
        else:
            self._set_text(f"/{name} ")
        self.focus()

    def action_submit_text(self) -> None:
        """Submit what is typed, whatever the dropdown shows."""
        self._close_menu()
        self.action_submit()

    def _take_menu_entry(self, *, run: bool) -> bool:
        """Complete to the highlighted dropdown entry. With ``run`` (Enter): a command typed in
        full, or one that takes no argument, is sent; False: nothing was taken."""
        if not self._menu:
            return False
        name = self._menu[min(self._menu_index, len(self._menu) - 1)][1:]
        typed = self.text.strip()[1:]
        if run and typed == name:
            self._close_menu()
            return False  # the command as typed: send it
        self.complete_to(name, run=run)
        return True

    @property
    def command_usage(self) -> dict[str, str]:
        return _known_usage(self.commands)

    @property
    def menu(self) -> list[str]:
        """The dropdown's entries (``/name``); empty when it is closed."""
        return list(self._menu)

    @property
    def menu_index(self) -> int:
        return self._menu_index

    def _update_hint(self) -> None:
        matches = self.completions()
        if self._history_index is not None or self.text == self._menu_closed_for:
            matches = []  # a recalled prompt, or Esc closed the dropdown for this text
        else:
            self._menu_closed_for = None
        if matches != self._menu:
            self._menu = matches
            self._menu_index = 0
            self._menu_moved = False
            self.post_message(self.MenuChanged(self, list(matches), 0))
        self.border_subtitle = (
            Content("↑↓ choose · Tab complete · Enter run · Esc close") if matches else None
        )

    def _move_menu(self, step: int) -> None:
        self._menu_index = (self._menu_index + step) % len(self._menu)
        self._menu_moved = True
        self.post_message(self.MenuChanged(self, list(self._menu), self._menu_index))

    def _close_menu(self) -> None:
        if self._menu:
            self._menu = []
            self._menu_closed_for = self.text
            self.border_subtitle = None
            self.post_message(self.MenuChanged(self, [], 0))

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if self._history_index is not None and (
            self._history_index >= len(self.prompt_history)
            or self.text != self.prompt_history[self._history_index]
        ):
            # Editing a recalled prompt makes it a new draft.
            self._history_index = None
        self._update_hint()

    # ------------------------------------------------------------------ history

    async def on_key(self, event: events.Key) -> None:
        # Enter and the newline keys are handled here, in the editor's own queue, after the
        # keys that came before them. As priority bindings they ran when the app read them,
        # before the editor had inserted the text of the same terminal read ("fix bug 2⏎" sent
        # nothing and left the text). The bindings stay for the footer and the help.
        action = self._editing_action(event.key)
        if action is not None:
            event.stop()
            event.prevent_default()
            action()
            return
        if self._menu and event.key in ("up", "down", "escape"):
            event.stop()
            event.prevent_default()
            if event.key == "escape":
                self._close_menu()
            else:
                self._move_menu(-1 if event.key == "up" else 1)
            return
        if event.key == "up" and self._recall(-1):
            event.stop()
            event.prevent_default()
            return
        if event.key == "down" and self._recall(1):
            event.stop()
            event.prevent_default()
            return
        # Not handled here: Textual goes on to the TextArea's own key handler (it calls each
        # class's handler in turn, from this one down, until one prevents the default).

    def _editing_action(self, key: str) -> Callable[[], None] | None:
        if key == "enter":
            return self.action_submit
        if key == "shift+enter":
            return self.action_shift_newline
        if key in NEWLINE_KEYS.split(","):
            return self.action_newline
        return None

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


def common_prefix(names: list[str]) -> str:
    """The longest common beginning of ``names``."""
    prefix = names[0] if names else ""
    for name in names[1:]:
        while not name.startswith(prefix):
            prefix = prefix[:-1]
    return prefix


def _known_usage(names: Iterable[str]) -> dict[str, str]:
    """The argument synopsis of each of the app's slash commands ("" when it takes none)."""
    try:
        from pitui.ui.commands import COMMANDS
    except ImportError:  # pragma: no cover - the commands module is part of the app
        return {}
    return {name: COMMANDS[name].usage for name in names if name in COMMANDS}


class CommandMenu(OptionList, can_focus=False):
    """The slash-command dropdown above the editor: ``/name  help``, one line each. It never
    takes the focus (keys stay in the editor, which drives it); a click completes."""

    DEFAULT_CSS: ClassVar[str] = """
    CommandMenu {
        display: none; height: auto; max-height: 8;
        border: none; padding: 0 1; margin: 0 1;
        background: $panel;
    }
    CommandMenu.-open { display: block; }
    CommandMenu > .option-list--option-highlighted {
        color: $block-cursor-foreground; background: $block-cursor-background;
        text-style: $block-cursor-text-style;
    }
    """

    def __init__(self, help_text: Mapping[str, str], **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.help_text = dict(help_text)
        self.editor: PromptEditor | None = None

    def show(self, editor: PromptEditor, matches: list[str], index: int) -> None:
        self.editor = editor
        names = [m[1:] for m in matches]
        if [o.id for o in self.options] != names:
            width = max((len(m) for m in matches), default=0) + 2
            self.set_options(
                Option(
                    Content.assemble(
                        (match.ljust(width), "bold"),
                        (self.help_text.get(match[1:], ""), "dim"),
                    ),
                    id=match[1:],
                )
                for match in matches
            )
        self.set_class(bool(matches), "-open")
        if matches:
            self.highlighted = index

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.editor is not None and event.option.id:
            self.editor.complete_to(event.option.id)


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
