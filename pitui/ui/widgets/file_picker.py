"""The ``@`` file picker: typing ``@`` at the start of a word opens a dropdown above the editor
with the project's files that best match what follows it (:mod:`pitui.agent.path_search`);
Up/Down move in it, Tab or Enter put the highlighted path in the prompt (``@path``, quoted
when it has spaces), Esc closes it. The list is made and searched in a thread
(:class:`pitui.agent.project_files.ProjectFiles`), never on the event loop.

This module holds what the picker shows (:class:`FileMenu`) and how the editor finds the word
being typed (:func:`mention_at`) and replaces it (:func:`completed`); the editor drives both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from pitui.text import strip_escapes

if TYPE_CHECKING:
    from pitui.ui.widgets.prompt import PromptEditor

SHOWN = 50
"""Matches listed (the dropdown shows about ten at a time)."""
_WORD_START = " \t([{<\"'`"
_NEEDS_QUOTES = re.compile(r"\s")


@dataclass(frozen=True)
class Mention:
    """The ``@`` word at the cursor: ``query`` is what follows the ``@`` up to the cursor;
    ``start``/``end`` the columns the word spans on ``row`` (``@`` included, to the end of the
    word after the cursor)."""

    row: int
    start: int
    end: int
    query: str


def mention_at(text: str, row: int, column: int) -> Mention | None:
    """The ``@`` word being typed at (row, column), or None."""
    lines = text.split("\n")
    if row >= len(lines):
        return None
    line = lines[row]
    before = line[:column]
    at = before.rfind("@")
    if at < 0:
        return None
    if at > 0 and line[at - 1] not in _WORD_START:
        return None  # user@example.com
    typed = before[at + 1 :]
    if typed.startswith('"'):
        if '"' in typed[1:]:
            return None  # a quoted path already closed
        query = typed[1:]
    elif any(c.isspace() for c in typed):
        return None
    else:
        query = typed
    end = column
    while end < len(line) and not line[end].isspace():
        end += 1
    return Mention(row, at, end, query)


def completed(path: str) -> str:
    """What replaces the ``@`` word: ``@path `` (quoted when the path has spaces)."""
    return f'@"{path}" ' if _NEEDS_QUOTES.search(path) else f"@{path} "


class EditorMenu(OptionList, can_focus=False):
    """A dropdown above the editor (the files for ``@``, the slash commands): it never takes
    the focus (keys stay in the editor, which drives it) and shows while it has the ``-open``
    class."""

    DEFAULT_CSS: ClassVar[str] = """
    EditorMenu {
        display: none; height: auto; max-height: 8;
        border: none; padding: 0 1; margin: 0 1;
        background: $panel;
    }
    EditorMenu.-open { display: block; }
    EditorMenu > .option-list--option-highlighted {
        color: $block-cursor-foreground; background: $block-cursor-background;
        text-style: $block-cursor-text-style;
    }
    """


class FileMenu(EditorMenu):
    """The dropdown of matching files; a click puts the file in the prompt."""

    DEFAULT_CSS: ClassVar[str] = "FileMenu { max-height: 10; }"

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.editor: PromptEditor | None = None
        self.paths: list[str] = []

    def show(
        self,
        editor: PromptEditor,
        query: str | None,
        matches: list[str] | None,
        index: int,
        *,
        truncated: bool = False,
    ) -> None:
        """``query`` None: closed; ``matches`` None: the files are still being listed."""
        self.editor = editor
        self.set_class(query is not None, "-open")
        if query is None:
            self.paths = []
            self.clear_options()
            return
        if matches is None:
            self.paths = []
            self.set_options([Option(Content("Listing the project's files…"), disabled=True)])
            return
        if not matches:
            self.paths = []
            note = f"No file matches {strip_escapes(query)!r}"
            if truncated:
                note += " (only the first 200,000 files are searched)"
            self.set_options([Option(Content(note), disabled=True)])
            return
        if matches != self.paths:
            self.paths = list(matches)
            self.set_options(Option(_label(path), id=str(i)) for i, path in enumerate(matches))
        self.highlighted = index

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.editor is not None and event.option.id is not None:
            self.editor.pick_file(int(event.option.id))


def _label(path: str) -> Content:
    """``folder/`` dim, the file's name bold (plain text: a name is never markup)."""
    shown = strip_escapes(path).replace("\n", "␤").replace("\t", " ")
    folder, slash, name = shown.rpartition("/")
    return Content.assemble((folder + slash, "dim"), (name, "bold"))
