"""``/resume`` and ``pitui --resume``: pick a session to open.

The sessions of this directory (Tab: every session), newest first, each with its name or first
message, its age and its message count. Typing filters (names, first messages, and once read,
the text of every user and assistant message). Enter opens, Ctrl+D deletes after a y/n
confirmation (never the session that is open), Esc cancels. The screen dismisses with the
chosen file's path, or None.

Files are read in thread workers (the listing, and the full texts once a filter is typed), so
the screen never waits on the disk.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar

import msgspec
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from pitui.config.paths import resolve_session_folder, sessions_root
from pitui.session.listing import SessionInfo, list_sessions
from pitui.session.lock import SessionLock
from pitui.session.shapes import message_text
from pitui.text import one_line
from pitui.ui.app_state import UsesApp
from pitui.ui.key_routing import AnswersByKey

MAX_SEARCH_CHARS = 1_000_000
"""Text kept per session for filtering (the beginning of the conversation)."""
TITLE_CHARS = 300


def format_age(then: float, now: float) -> str:
    """``just now``, ``3 min ago``, ``2 hours ago``, ``yesterday``, ``5 days ago``, ..."""
    seconds = max(0.0, now - then)
    if seconds < 60:
        return "just now"
    minutes = int(seconds // 60)
    if minutes < 60:
        return f"{minutes} min ago"
    hours = minutes // 60
    if hours < 24:
        return "1 hour ago" if hours == 1 else f"{hours} hours ago"
    days = hours // 24
    if days == 1:
        return "yesterday"
    if days < 30:
        return f"{days} days ago"
    if days < 365:
        months = days // 30
        return "1 month ago" if months == 1 else f"{months} months ago"
    years = days // 365
    return "1 year ago" if years == 1 else f"{years} years ago"


class _Skeleton(msgspec.Struct, gc=False):
    type: object = None
    name: object = None
    message: object = None


_decoder = msgspec.json.Decoder(_Skeleton)


def search_text(path: str | Path, limit: int = MAX_SEARCH_CHARS) -> str:
    """The text of a session's user and assistant messages and names (for filtering)."""
    parts: list[str] = []
    size = 0
    try:
        with open(path, "rb") as f:
            for raw in f:
                if b'"message"' not in raw and b'"session_info"' not in raw:
                    continue
                try:
                    entry = _decoder.decode(raw)
                except (msgspec.DecodeError, msgspec.ValidationError):
                    continue
                text = ""
                if entry.type == "message" and isinstance(entry.message, dict):
                    if entry.message.get("role") in ("user", "assistant"):
                        text = message_text(entry.message, " ")
                elif entry.type == "session_info" and isinstance(entry.name, str):
                    text = entry.name
                if text:
                    parts.append(text)
                    size += len(text)
                    if size >= limit:
                        break
    except OSError:
        return ""
    return "\n".join(parts)[:limit]


def matches(info: SessionInfo, terms: list[str], full_text: str | None) -> bool:
    """Every term (lower case) occurs in the name, the first message or the full text."""
    haystack = f"{info.name or ''}\n{info.firstMessage}\n{full_text or ''}".lower()
    return all(term in haystack for term in terms)


def _same_file(a: str | Path | None, b: str | Path | None) -> bool:
    if a is None or b is None:
        return False
    return os.path.abspath(a) == os.path.abspath(b)


class ConfirmDeleteScreen(AnswersByKey, ModalScreen[bool]):
    """A small y/n question; dismisses with True to delete."""

    DEFAULT_CSS: ClassVar[str] = """
    ConfirmDeleteScreen { align: center middle; }
    ConfirmDeleteScreen > Vertical {
        width: 64; height: auto; border: round $error; background: $surface; padding: 0 1;
    }
    ConfirmDeleteScreen #confirm-title { text-style: bold; color: $error; }
    ConfirmDeleteScreen #confirm-what { margin: 1 0; text-wrap: nowrap; text-overflow: ellipsis; }
    ConfirmDeleteScreen #confirm-keys { color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Delete"),
        Binding("n,escape", "answer(False)", "Keep"),
    ]

    def __init__(self, title: str, detail: str) -> None:
        super().__init__()
        self._title = title
        self._detail = detail

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Content("Delete this session?"), id="confirm-title")
            yield Static(Content(f"{self._title}\n{self._detail}"), id="confirm-what")
            yield Static(Content("y  delete the file    n  keep it"), id="confirm-keys")

    def action_answer(self, delete: bool) -> None:
        self.dismiss(delete)


class SessionPickerScreen(UsesApp, ModalScreen[str | None]):
    """Choose a session file; dismisses with its path (or None)."""

    DEFAULT_CSS: ClassVar[str] = """
    SessionPickerScreen { align: center middle; }
    SessionPickerScreen > #picker {
        width: 90%; max-width: 110; height: 80%;
        border: round $primary; background: $surface; padding: 0 1;
    }
    SessionPickerScreen #picker-title { text-style: bold; color: $text-primary; }
    SessionPickerScreen #picker-filter { margin: 1 0; }
    SessionPickerScreen #picker-list {
        height: 1fr; border: none; padding: 0; background: $surface;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    SessionPickerScreen #picker-list:focus { border: none; }
    SessionPickerScreen #picker-empty { height: 1fr; color: $text-muted; padding: 1 0; }
    SessionPickerScreen #picker-hint { color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("tab", "toggle_scope", "All / this directory", priority=True),
        Binding("ctrl+d", "delete", "Delete", priority=True),
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
    ]

    def __init__(self, *, show_all: bool = False) -> None:
        super().__init__()
        self.show_all = show_all
        self.infos: list[SessionInfo] = []
        self.shown: list[SessionInfo] = []
        self.loading_sessions = False
        self._generation = 0
        self._texts: dict[str, str] = {}
        self._texts_pending: set[str] = set()

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Static(id="picker-title")
            yield Input(
                placeholder="Type to filter (names and messages)",
                id="picker-filter",
                compact=True,
            )
            option_list = OptionList(id="picker-list")
            option_list.can_focus = False
            yield option_list
            yield Static(id="picker-empty")
            yield Static(id="picker-hint")

    def on_mount(self) -> None:
        self.query_one("#picker-empty").display = False
        filter_input = self.query_one(Input)
        if not self.pitui.settings.ui.cursor_blink:
            filter_input.cursor_blink = False
        filter_input.focus()
        self.reload()

    # ------------------------------------------------------------------ loading

    def this_folder(self) -> Path:
        app = self.pitui
        if app.session_folder is not None:
            return Path(app.session_folder)
        return resolve_session_folder(str(app.cwd))[0]

    def reload(self) -> None:
        """List the sessions of the current scope (in a thread)."""
        self._generation += 1
        self.loading_sessions = True
        self.query_one(OptionList).loading = True
        self._render_header()
        self._load(self._generation, self.show_all, self.this_folder())

    @work(thread=True, exclusive=True, group="session-picker-list", exit_on_error=False)
    def _load(self, generation: int, show_all: bool, folder: Path) -> None:
        folders: list[Path] = [folder]
        if show_all:
            root = sessions_root()
            try:
                subfolders = sorted(p for p in root.iterdir() if p.is_dir())
            except OSError:
                subfolders = []
            folders = list(dict.fromkeys([*subfolders, folder]))
        try:
            infos = list_sessions(folders)
        except Exception as exc:  # never leave the screen loading forever
            infos = []
            self._from_thread(self.notify, f"Could not list the sessions: {exc}", markup=False)
        unique = list({info.path: info for info in infos}.values())  # a folder given twice
        self._from_thread(self._loaded, generation, unique)

    def _from_thread(self, callback: Callable[..., object], *args: Any, **kwargs: Any) -> None:
        """Run ``callback`` on the UI thread, unless this worker was cancelled or the app left."""
        if get_current_worker().is_cancelled:
            return
        with contextlib.suppress(RuntimeError):  # the app is shutting down
            self.app.call_from_thread(callback, *args, **kwargs)

    def _loaded(self, generation: int, infos: list[SessionInfo]) -> None:
        if generation != self._generation or not self.is_attached:
            return
        self.infos = infos
        self.loading_sessions = False
        self.query_one(OptionList).loading = False
        self._apply_filter()

    def _want_texts(self, infos: Iterable[SessionInfo]) -> None:
        """Read the full text of sessions not read yet (once a filter is typed)."""
        paths = [
            i.path for i in infos if i.path not in self._texts and i.path not in self._texts_pending
        ]
        if paths:
            self._texts_pending.update(paths)
            self._load_texts(paths)

    @work(thread=True, group="session-picker-texts", exit_on_error=False)
    def _load_texts(self, paths: list[str]) -> None:
        texts = {path: search_text(path) for path in paths}
        self._from_thread(self._texts_loaded, texts)

    def _texts_loaded(self, texts: dict[str, str]) -> None:
        if not self.is_attached:
            return
        self._texts.update(texts)
        self._texts_pending.difference_update(texts)
        if self.filter_text:
            self._apply_filter()

    # ------------------------------------------------------------------ rows

    @property
    def filter_text(self) -> str:
        return self.query_one(Input).value.strip()

    def _is_current(self, info: SessionInfo) -> bool:
        return _same_file(info.path, self.pitui.store.path)

    def row(self, info: SessionInfo) -> Content:
        """Two lines: the name (or first message), then age, message count (and cwd)."""
        title = Content(one_line(info.name or info.firstMessage, TITLE_CHARS) or "(empty)")
        if info.name:
            title = title.stylize("bold")
        count = info.messageCount
        meta = [
            format_age(info.modified_ms / 1000, self.pitui.clock()),
            f"{count} message{'s' if count != 1 else ''}",
        ]
        if self.show_all and info.cwd:
            meta.append(one_line(info.cwd, 120))
        if self._is_current(info):
            meta.append("open now")
        return Content.assemble(title, "\n", ("  " + " · ".join(meta), "$foreground-muted"))

    def _apply_filter(self) -> None:
        option_list = self.query_one(OptionList)
        highlighted = self.highlighted_info()
        keep_path = highlighted.path if highlighted is not None else None
        terms = self.filter_text.lower().split()
        if terms:
            self._want_texts(self.infos)
            self.shown = [i for i in self.infos if matches(i, terms, self._texts.get(i.path))]
        else:
            self.shown = list(self.infos)
        option_list.clear_options()
        option_list.add_options([Option(self.row(i), id=i.path) for i in self.shown])
        if self.shown:
            index = next((n for n, i in enumerate(self.shown) if i.path == keep_path), 0)
            option_list.highlighted = index
        self._render_header()

    def _render_header(self) -> None:
        scope = "all sessions" if self.show_all else "this directory"
        title = f"Resume a session · {scope}"
        if not self.loading_sessions:
            total, shown = len(self.infos), len(self.shown)
            title += f" ({shown} of {total})" if self.filter_text else f" ({total})"
        self.query_one("#picker-title", Static).update(Content(title))
        other = "this directory" if self.show_all else "all sessions"
        hint = f"↑↓ move · Enter open · Tab {other} · Ctrl+D delete · Esc cancel"
        self.query_one("#picker-hint", Static).update(Content(hint))
        empty = self.query_one("#picker-empty", Static)
        option_list = self.query_one(OptionList)
        if self.loading_sessions or self.shown:
            empty.display = False
            option_list.display = True
            return
        if self.infos:
            message = "No session matches the filter."
        elif self.show_all:
            message = "No sessions yet."
        else:
            message = "No sessions in this directory yet. Tab shows all sessions."
        empty.update(Content(message))
        empty.display = True
        option_list.display = False

    def highlighted_info(self) -> SessionInfo | None:
        index = self.query_one(OptionList).highlighted
        if index is None or not 0 <= index < len(self.shown):
            return None
        return self.shown[index]

    # ------------------------------------------------------------------ events and actions

    @on(Input.Changed, "#picker-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        event.stop()
        if not self.loading_sessions:
            self._apply_filter()

    @on(Input.Submitted, "#picker-filter")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_open()

    @on(OptionList.OptionSelected, "#picker-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_open()

    def action_move(self, step: int) -> None:
        option_list = self.query_one(OptionList)
        if step < 0:
            option_list.action_cursor_up()
        else:
            option_list.action_cursor_down()

    def action_page(self, step: int) -> None:
        option_list = self.query_one(OptionList)
        if step < 0:
            option_list.action_page_up()
        else:
            option_list.action_page_down()

    def action_open(self) -> None:
        info = self.highlighted_info()
        if info is None:
            return
        if self._is_current(info):
            self.notify("That session is already open.", markup=False, timeout=3)
            self.dismiss(None)
            return
        self.dismiss(info.path)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_toggle_scope(self) -> None:
        self.show_all = not self.show_all
        self.reload()

    def action_delete(self) -> None:
        info = self.highlighted_info()
        if info is None:
            return
        if self._is_current(info):
            self.notify(
                "That session is open: switch to another one before deleting it.",
                severity="warning",
                markup=False,
            )
            return
        count = info.messageCount
        detail = (
            f"{format_age(info.modified_ms / 1000, self.pitui.clock())} · "
            f"{count} message{'s' if count != 1 else ''}"
        )
        if info.cwd:
            detail += f" · {one_line(info.cwd, 80)}"
        title = one_line(info.name or info.firstMessage, 60)

        def answered(delete: bool | None) -> None:
            if delete:
                self.delete_session(info)

        self.app.push_screen(ConfirmDeleteScreen(title, detail), answered)

    def delete_session(self, info: SessionInfo) -> bool:
        """Delete the file (unless it is open here or in another pitui); True when deleted."""
        if self._is_current(info):
            return False
        path = Path(info.path)
        lock, holder = SessionLock.try_acquire(path)
        if holder is not None:
            self.notify(
                f"That session is open in another pitui ({holder}); it was not deleted.",
                severity="warning",
                markup=False,
            )
            return False
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            self.notify(
                f"Could not delete {path.name}: {exc.strerror}.", severity="error", markup=False
            )
            return False
        finally:
            if lock is not None:
                lock.release()
        index = self.query_one(OptionList).highlighted or 0
        self.infos = [i for i in self.infos if i.path != info.path]
        self._texts.pop(info.path, None)
        self._apply_filter()
        if self.shown:
            self.query_one(OptionList).highlighted = min(index, len(self.shown) - 1)
        self.notify("Session deleted.", markup=False, timeout=3)
        return True
