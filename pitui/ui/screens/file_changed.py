"""The session file changed under pitui (replaced, truncated, deleted or rewritten): say so in
one sentence and offer to reopen it or save a copy of what pitui holds."""

from __future__ import annotations

import os
from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label

from pitui.errors import UserError
from pitui.session import SessionStore
from pitui.session.ids import file_timestamp, now_iso
from pitui.ui.app_state import UsesApp
from pitui.ui.key_routing import AnswersByKey


def copy_path(path: Path) -> Path:
    """Where to save the copy: the original path if the file is gone, else a sibling."""
    if not os.path.lexists(path):
        return path
    return path.with_name(f"{path.stem}.copy-{file_timestamp(now_iso())}{path.suffix}")


class FileChangedScreen(AnswersByKey, UsesApp, ModalScreen[None]):
    DEFAULT_CSS: ClassVar[str] = """
    FileChangedScreen { align: center middle; }
    FileChangedScreen > Vertical {
        width: 80%; height: auto; border: round $warning; padding: 1 2; background: $surface;
    }
    FileChangedScreen #file-changed-keys { color: $text-muted; margin-top: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "reopen", "Reopen"),
        Binding("s", "save_copy", "Save a copy"),
        Binding("escape", "close", "Keep viewing (read-only)"),
    ]

    def __init__(self, message: str, can_reopen: bool) -> None:
        super().__init__()
        self.message = message
        self.can_reopen = can_reopen

    def compose(self) -> ComposeResult:
        keys = "r reopen the file · " if self.can_reopen else ""
        with Vertical():
            yield Label(Content(self.message), id="file-changed-message")
            yield Label(
                Content(f"{keys}s save a copy · Esc keep viewing (read-only)"),
                id="file-changed-keys",
            )

    def action_reopen(self) -> None:
        if not self.can_reopen:
            return
        app = self.pitui
        path = app.store.path
        if path is None:
            return
        try:
            store = SessionStore.open(path, folder=app.store.folder, cwd=app.store.cwd)
        except UserError as exc:
            app.say(str(exc), "error")
            return
        self.dismiss(None)
        app.switch_session(store)
        if store.read_only and store.read_only_reason:
            app.say(store.read_only_reason, "warning")

    def action_save_copy(self) -> None:
        app = self.pitui
        path = app.store.path
        if path is None:
            return
        dest = copy_path(path)
        try:
            lost = app.store.save_copy(dest)
        except UserError as exc:
            app.say(str(exc), "error")
            return
        note = (
            f" ({lost} entries were no longer in the file and could not be saved)" if lost else ""
        )
        app.say(f"Saved a copy to {dest}{note}.")
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)
