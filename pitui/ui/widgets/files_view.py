"""``FilesView``: a list of changed files beside the diff of the highlighted one.

Used by the restore prompt and the details pane's Files tab. Paths and file contents are
untrusted: escapes are stripped and everything is rendered as ``Content`` (never markup).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal, ScrollableContainer
from textual.content import Content
from textual.widget import Widget
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from pitui.checkpoint.diff import STATUS_WORDS, FileDiff
from pitui.checkpoint.store import display_path
from pitui.text import strip_escapes

STATUS_STYLE = {"A": "bold $text-success", "M": "bold $text-warning", "D": "bold $text-error"}
MAX_SHOWN_LINES = 1500


def clean(text: str) -> str:
    """One line of untrusted text: escapes and control characters removed, tabs kept wide."""
    return strip_escapes(text).replace("\t", "    ").replace("\r", "")


def file_label(diff: FileDiff, flagged: bool) -> Content:
    change = diff.change
    parts: list[tuple[str, str] | str] = [
        (change.status, STATUS_STYLE[change.status]),
        " ",
        clean(display_path(change.path)),
    ]
    if diff.added or diff.removed:
        parts += [
            "  ",
            (f"+{diff.added}", "$text-success"),
            " ",
            (f"-{diff.removed}", "$text-error"),
        ]
    if flagged:
        parts += ["  ", ("⚠ changed outside pitui", "bold $text-warning")]
    return Content.assemble(*parts)


def diff_content(diff: FileDiff, flagged: bool = False) -> Content:
    """The whole diff of one file as styled content."""
    change = diff.change
    word = STATUS_WORDS[change.status]
    lines: list[tuple[str, str] | str] = [
        (f"{clean(display_path(change.path))} ({word})", "bold"),
    ]
    if flagged:
        lines += [
            "\n",
            (
                "Changed outside pitui since the last checkpoint: restoring overwrites it "
                "(the current version is saved first).",
                "$text-warning",
            ),
        ]
    if diff.note:
        lines += ["\n", (clean(diff.note), "italic $text-muted")]
    for line in diff.lines[:MAX_SHOWN_LINES]:
        text = clean(line)
        style = (
            "$text-success"
            if text.startswith("+")
            else "$text-error"
            if text.startswith("-")
            else "$text-accent"
            if text.startswith("@@")
            else ""
        )
        lines += ["\n", (text, style) if style else text]
    if len(diff.lines) > MAX_SHOWN_LINES:
        lines += ["\n", (f"… {len(diff.lines) - MAX_SHOWN_LINES:,} more lines", "$text-muted")]
    if not diff.lines and not diff.note:
        lines += ["\n", ("(no content changes)", "$text-muted")]
    return Content.assemble(*lines)


class FilesView(Widget):
    """Changed files (status, path, +/-, outside-change flag) and the highlighted file's diff."""

    DEFAULT_CSS: ClassVar[str] = """
    FilesView { height: 1fr; }
    FilesView > Horizontal { height: 1fr; }
    FilesView #files-list {
        width: 2fr;
        min-width: 24;
        height: 1fr;
        border: none;
        padding: 0;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    FilesView #files-diff {
        width: 3fr; height: 1fr; padding: 0 1; border-left: vkey $border; overflow: auto auto;
    }
    FilesView #files-diff-text { width: auto; }
    FilesView.-stacked > Horizontal { layout: vertical; }
    FilesView.-stacked #files-list { width: 1fr; height: auto; max-height: 8; }
    FilesView.-stacked #files-diff {
        width: 1fr; height: 1fr; border-left: none; border-top: hkey $border;
    }
    FilesView #files-empty { color: $text-muted; padding: 0 1; }
    """
    STACK_BELOW: ClassVar[int] = 60
    """Narrower than this (the tree browser's details pane), the diff goes under the list and
    gets the whole width; its lines never wrap (they scroll sideways)."""

    def __init__(
        self,
        diffs: Sequence[FileDiff] = (),
        flagged: Iterable[str] = (),
        *,
        empty_text: str = "No files differ.",
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.diffs: list[FileDiff] = list(diffs)
        self.flagged = set(flagged)
        self.empty_text = empty_text

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield OptionList(id="files-list", markup=False)
            with ScrollableContainer(id="files-diff"):
                yield Static(Content(""), id="files-diff-text", markup=False)
        yield Static(Content(self.empty_text), id="files-empty", markup=False)

    def on_mount(self) -> None:
        self._fill()

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < self.STACK_BELOW, "-stacked")

    def set_diffs(self, diffs: Sequence[FileDiff], flagged: Iterable[str] = ()) -> None:
        self.diffs = list(diffs)
        self.flagged = set(flagged)
        if self.is_mounted:
            self._fill()

    def _fill(self) -> None:
        options = self.query_one("#files-list", OptionList)
        options.clear_options()
        options.add_options(
            Option(file_label(d, d.change.path in self.flagged), id=str(i))
            for i, d in enumerate(self.diffs)
        )
        has_files = bool(self.diffs)
        self.query_one(Horizontal).display = has_files
        self.query_one("#files-empty", Static).display = not has_files
        if has_files:
            options.highlighted = 0
            self._show(0)

    @property
    def shown_path(self) -> str | None:
        """The path whose diff is on screen."""
        index = self.query_one("#files-list", OptionList).highlighted
        return self.diffs[index].change.path if index is not None and self.diffs else None

    def _show(self, index: int) -> None:
        diff = self.diffs[index]
        text = diff_content(diff, diff.change.path in self.flagged)
        self.query_one("#files-diff-text", Static).update(text)
        self.query_one("#files-diff", ScrollableContainer).scroll_home(animate=False)

    @on(OptionList.OptionHighlighted, "#files-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        if event.option_index is not None and event.option_index < len(self.diffs):
            self._show(event.option_index)

    @on(OptionList.OptionSelected, "#files-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()  # Enter in the list must not reach the screen's bindings
