"""The prompt editor: multi-line; Enter submits, Alt+Enter or Ctrl+J (and Shift+Enter where the
terminal reports it) adds a newline; while a ``/`` command is typed, a dropdown
(:class:`CommandMenu`) lists the matching commands with their help: Up/Down move in it, Tab or
Enter complete, Esc closes it.

History (:mod:`pitui.ui.widgets.prompt_history`): Up on the first line walks back through this
project's earlier prompts, Down on the last line walks forward, and past the newest gives back
the draft that was being typed. Ctrl+R searches them as a shell does: type to narrow, Ctrl+R
for an older match, Ctrl+S for a newer one, Enter sends the match, Esc (or an arrow key) keeps
it to edit, Ctrl+G gives back what was typed before.

The newline hint: when the terminal is not known to report Shift+Enter
(:func:`pitui.ui.keys.reports_shift_enter`), the first prompt sent with Enter in a run of the
app shows a notice once ("Alt+Enter or Ctrl+J for a newline"); Enter still sends. A
``shift+enter`` key received at any time proves the terminal reports it (no hint, and the
placeholder names Shift+Enter)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import events, work
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, TextArea
from textual.widgets.option_list import Option
from textual.widgets.text_area import Selection

from pitui.ui.keys import NEWLINE_HINT, NEWLINE_KEYS, reports_shift_enter
from pitui.ui.widgets.file_picker import SHOWN, EditorMenu, Mention, completed, mention_at
from pitui.ui.widgets.prompt_history import HistoryWalk, ReverseSearch

if TYPE_CHECKING:
    from pitui.agent.project_files import ProjectFiles

MAX_HISTORY = 1000
SEARCH_HINT = "Ctrl+R older · Ctrl+S newer · Enter send · Esc edit · Ctrl+G cancel"


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
    PromptEditor.-searching { border: round $accent; }
    PromptEditor.-shell { border: round $warning; }
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
    class FilesChanged(Message):
        """The ``@`` file picker's content: ``query`` None when closed, ``matches`` None while
        the files are being listed."""

        editor: PromptEditor
        query: str | None
        matches: list[str] | None
        index: int
        truncated: bool = False

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
        files: Callable[[], ProjectFiles | None] | None = None,
        **kwargs: object,
    ) -> None:
        """``history(limit)`` gives the earlier prompts, oldest first; it is asked once, when the
        history is first needed (not before the first frame). ``files()`` gives the project's
        files for the ``@`` picker (None: no picker)."""
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
        self._walk: HistoryWalk | None = None
        self._search: ReverseSearch | None = None
        self._files_source = files
        self._file_query: str | None = None  # the @ word's query while the picker is open
        self._file_matches: list[str] | None = None
        self._file_index = 0
        self._file_closed_at: tuple[int, int] | None = None  # Esc closed it for this @ word
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
    def walk(self) -> HistoryWalk:
        """Up/Down through the history (loaded from its source on first use)."""
        if self._walk is None:
            source, self._history_source = self._history_source, None
            self._walk = HistoryWalk(_dedupe(source(MAX_HISTORY))[-MAX_HISTORY:] if source else [])
        return self._walk

    @property
    def prompt_history(self) -> list[str]:
        """Submitted prompts, oldest first."""
        return self.walk.entries

    @prompt_history.setter
    def prompt_history(self, value: list[str]) -> None:
        self._history_source = None
        self._walk = HistoryWalk(value)

    def _recalled(self) -> bool:
        """The editor shows an earlier prompt as it was (not edited)."""
        walk = self._walk
        return walk is not None and walk.walking and self.text == walk.shown()

    # ------------------------------------------------------------------ submitting

    def action_submit(self) -> None:
        if self._menu and self._take_menu_entry(run=True):
            return
        text = self.text.strip()
        if not text:
            return
        self._end_search()
        walk = self.walk
        walk.add(text)
        del walk.entries[:-MAX_HISTORY]
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
        if self._search is not None:
            return  # the search line is shown, and no dropdown
        self._update_files()
        matches = self.completions()
        if self._recalled() or self.text == self._menu_closed_for:
            matches = []  # a recalled prompt, or Esc closed the dropdown for this text
        else:
            self._menu_closed_for = None
        if matches != self._menu:
            self._menu = matches
            self._menu_index = 0
            self._menu_moved = False
            self.post_message(self.MenuChanged(self, list(matches), 0))
        shell = shell_hint(self.text)
        self.set_class(shell is not None, "-shell")
        if matches:
            self.border_subtitle = Content("↑↓ choose · Tab complete · Enter run · Esc close")
        elif self._file_query is not None:
            self.border_subtitle = Content("@ file: ↑↓ choose · Tab or Enter insert · Esc close")
        else:
            self.border_subtitle = Content(shell) if shell else None

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
        self._update_hint()

    # ------------------------------------------------------------------ history

    async def on_key(self, event: events.Key) -> None:
        # Enter and the newline keys are handled here, in the editor's own queue, after the
        # keys that came before them. As priority bindings they ran when the app read them,
        # before the editor had inserted the text of the same terminal read ("fix bug 2⏎" sent
        # nothing and left the text). The bindings stay for the footer and the help.
        if self._search is not None and self._search_key(event):
            event.stop()
            event.prevent_default()
            return
        if event.key == "ctrl+r" and not self.read_only:
            event.stop()
            event.prevent_default()
            self._start_search()
            return
        if self._file_query is not None and self._file_key(event.key):
            event.stop()
            event.prevent_default()
            return
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
        """Up on the first (visual) line walks back; Down on the last one walks forward while
        walking (past the newest: the draft). A prompt recalled with Up has the cursor at its
        start (Up again goes on), one recalled with Down at its end."""
        location = self.cursor_location
        if step < 0:
            if not self.navigator.is_first_wrapped_line(location):
                return False
            text = self.walk.older(self.text)
            if text is None:
                return bool(self.walk.entries)  # the oldest: stay
            self._set_text(text, at_start=True)
            return True
        if not self.navigator.is_last_wrapped_line(location):
            return False
        text = self.walk.newer(self.text)
        if text is None:
            return False
        self._set_text(text)
        return True

    # ------------------------------------------------------------------ the @ file picker

    def mention(self) -> Mention | None:
        """The ``@`` word at the cursor (the picker is for it unless Esc closed it)."""
        if self._files_source is None or self.selection.start != self.selection.end:
            return None
        if self._recalled():
            return None  # an earlier prompt as it was: no picker over it
        return mention_at(self.text, *self.cursor_location)

    def watch_selection(self) -> None:
        # (also called while TextArea sets itself up, before this editor's own fields)
        if getattr(self, "_file_query", None) is not None:
            self._update_files()  # the cursor left the @ word (or moved in it)

    def _update_files(self) -> None:
        found = self.mention()
        if found is None:
            self._file_closed_at = None
        if found is None or self._file_closed_at == (found.row, found.start):
            self._close_files()
            return
        if found.query == self._file_query:
            return
        opening = self._file_query is None
        self._file_query = found.query
        files = self._files_source() if self._files_source is not None else None
        if files is None:
            return
        if opening and not files.listed:
            self._file_matches = None
            self.post_message(self.FilesChanged(self, found.query, None, 0))
        self._find_files(files, found.query)

    @work(thread=True, exclusive=True, group="file-search", exit_on_error=False)
    def _find_files(self, files: ProjectFiles, query: str) -> None:
        matches = files.search(query, SHOWN)
        self.app.call_from_thread(self._files_found, query, matches, files.truncated)

    def _files_found(self, query: str, matches: list[str], truncated: bool) -> None:
        if query != self._file_query:
            return  # typed on meanwhile
        self._file_matches = matches
        self._file_index = 0
        self.post_message(self.FilesChanged(self, query, matches, 0, truncated))

    def _close_files(self) -> None:
        if self._file_query is not None:
            self._file_query = None
            self._file_matches = None
            self.post_message(self.FilesChanged(self, None, None, 0))
            if self._search is None and not self._menu:
                hint = shell_hint(self.text)
                self.border_subtitle = Content(hint) if hint else None

    def _file_key(self, key: str) -> bool:
        """Up/Down/Tab/Enter/Esc while the picker is open: True when it used the key."""
        if key == "escape":
            found = self.mention()
            if found is not None:
                self._file_closed_at = (found.row, found.start)
            self._close_files()
            return True
        matches = self._file_matches
        if key in ("up", "down"):
            if matches:
                step = -1 if key == "up" else 1
                self._file_index = (self._file_index + step) % len(matches)
                self.post_message(
                    self.FilesChanged(self, self._file_query, matches, self._file_index)
                )
            return True
        if key in ("tab", "enter"):
            if not matches:
                return key == "tab"  # Enter with nothing to choose sends the prompt
            self.pick_file(self._file_index)
            return True
        return False

    def pick_file(self, index: int) -> None:
        """Put the ``index``-th match in place of the ``@`` word (a click, Tab or Enter)."""
        matches = self._file_matches
        found = mention_at(self.text, *self.cursor_location)
        if not matches or found is None or not 0 <= index < len(matches):
            return
        inserted = completed(matches[index])
        self.replace(inserted, (found.row, found.start), (found.row, found.end))
        self.move_cursor((found.row, found.start + len(inserted)))
        self._close_files()
        self.focus()

    @property
    def file_matches(self) -> list[str] | None:
        """The picker's matches (None while listing or closed)."""
        return list(self._file_matches) if self._file_matches is not None else None

    @property
    def file_query(self) -> str | None:
        return self._file_query

    # ------------------------------------------------------------------ reverse search

    def _start_search(self) -> None:
        """Ctrl+R: search the history; Ctrl+R while searching finds an older match."""
        self._close_menu()
        self._search = ReverseSearch(self.walk.entries, self.text)
        self._show_search()

    def _search_key(self, event: events.Key) -> bool:
        """A key while searching: True when the search used it. Any other key ends the search
        (the match stays to edit) and does what it does."""
        search = self._search
        assert search is not None
        key = event.key
        if key == "ctrl+r":
            search.older()
        elif key == "ctrl+s":
            search.newer()
        elif key == "backspace":
            search.backspace()
        elif key == "ctrl+g":
            original = search.original
            self._end_search()
            self._set_text(original)
            return True
        elif key == "escape":
            self._end_search()
            return True
        elif key == "enter":
            self._end_search()
            return False  # sent as it is now shown
        elif event.is_printable and event.character is not None:
            search.type(event.character)
        else:
            self._end_search()
            return False
        self._show_search()
        return True

    def _show_search(self) -> None:
        search = self._search
        assert search is not None
        text = search.text
        if self.text != text:
            self._set_text(text)
        match = search.match
        if match is not None and search.query:
            start = _location(text, match.start)
            end = _location(text, match.start + len(search.query))
            self.selection = Selection(start, end)
        self.border_subtitle = Content(f"{search.prompt()} · {SEARCH_HINT}")
        self.set_class(True, "-searching")

    def _end_search(self) -> None:
        if self._search is None:
            return
        self._search = None
        self.set_class(False, "-searching")
        self.selection = Selection.cursor(self.selection.end)
        self.border_subtitle = None
        self._update_hint()

    @property
    def searching(self) -> ReverseSearch | None:
        """The Ctrl+R search under way, if any."""
        return self._search

    # ------------------------------------------------------------------ helpers

    def _set_text(self, text: str, *, at_start: bool = False) -> None:
        self.text = text
        self.move_cursor((0, 0) if at_start else self.document.end)
        self._update_hint()

    def set_text(self, text: str) -> None:
        """Replace the draft (the tree browser's "edit and resubmit") and focus the editor."""
        self.walk.stop()
        self._set_text(text)
        self.focus()


def shell_hint(text: str) -> str | None:
    """What Enter does with ``!command`` / ``!!command`` (None: not one)."""
    if text.startswith("!!") and text[2:].strip():
        return "!! runs it in the shell · its output is shown, not sent to the model"
    if text.startswith("!") and text[1:].strip():
        return "! runs it in the shell · its output goes into the conversation"
    return None


def _location(text: str, index: int) -> tuple[int, int]:
    """(row, column) of the character at ``index`` of ``text``."""
    row = text.count("\n", 0, index)
    return row, index - (text.rfind("\n", 0, index) + 1)


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


class CommandMenu(EditorMenu):
    """The slash-command dropdown: ``/name  help``, one line each; a click completes."""

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
