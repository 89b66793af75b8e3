"""``SessionTree``: the session as pi's tree selector shows it, virtualized on the line API.

Textual's ``Tree`` rebuilds every visible line on each change and recurses once per level (it
crashes near depth 1,000), so this widget renders a :class:`~pitui.session.tree_layout.
TreeLayout` (the one layout ``pitui tree`` uses too) and draws only the lines on screen
(``render_line``), as Rich ``Text`` (never markup; see :mod:`pitui.ui.widgets.tree_rows`).

Nothing slow runs on the UI thread. A large session is laid out in a worker thread (the status
shows progress; the old rows stay usable meanwhile). A search runs in a worker too, over the rows
already laid out (typing on narrows the last results), cancelled by the next key; clearing it
shows the rows it was made from again, without a rebuild. Appends and leaf moves are applied to
the layout incrementally (a rebuild only when the change is not a plain append).

The widget only reads the store; its owner tells it about changes (:meth:`entry_appended`,
:meth:`leaf_moved`, :meth:`set_store`).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer
from textual.worker import get_current_worker

from pitui import collector
from pitui.checkpoint.record import CheckpointIndex
from pitui.errors import UserError
from pitui.lru import LruCache
from pitui.session.errors import EntryNotFoundError
from pitui.session.flatten import FILTER_MODES, layout_tree
from pitui.session.line_reader import LineReader
from pitui.session.node import Node, depth_of
from pitui.session.store import SessionStore
from pitui.session.tree_layout import Segment, TreeLayout
from pitui.session.tree_search import FileIndex, Matcher, entry_line, query_tokens
from pitui.ui.app_state import UsesApp
from pitui.ui.widgets.tree_rows import (
    RowContent,
    RowStyles,
    fold_glyph_column,
    leaf_marker,
    row_markers,
    row_strip,
    row_text,
)

FILTER_TAGS: dict[str, str] = {
    "default": "",
    "no-tools": "[no-tools]",
    "user-only": "[user]",
    "labeled-only": "[labeled]",
    "all": "[all]",
}
"""The status tag of each filter mode (pi's wording; nothing for the default)."""

SYNC_BUILD_BYTES = 24 << 20
"""Sessions up to this size (about 35k entries) are laid out at once, larger ones in a worker."""

TEXT_CACHE = 4096
"""One-line texts kept (the rows on screen and those near them)."""
STRIP_CACHE = 512
"""Painted rows kept (a few screens' worth)."""

SCAN_ROWS = 2000
"""A search over more rows than this first scans the session file in large blocks."""

PROGRESS_EVERY = 0.1
"""Seconds between two progress updates of a build or a search."""

SEARCH_DELAY = 0.06
"""Seconds without a key before the search for what was typed starts."""

INDEX_AHEAD_ROWS = 50_000
"""From this many rows on, the file's search index is made in the background when the rows
are ready (a first search would take seconds longer otherwise)."""

INDEX_AHEAD_MAX_ROWS = 500_000
"""Up to this many rows the index is made ahead; above, by the first search (5 s at 1M
entries, not spent on a tree opened only to move in it). Once made it is kept for the
session's next searches (71 MiB at 1M entries)."""


UNSET_LEAF: Any = object()


class _Cancelled(Exception):
    """A worker's build or search was superseded."""


def _narrows(tokens: list[str], previous: list[str]) -> bool:
    """Every entry matching ``tokens`` also matches ``previous`` (typing on)."""
    return all(any(old in new for new in tokens) for old in previous)


class SessionTree(UsesApp, ScrollView, can_focus=True):
    """The session tree, one row per shown entry; only the rows on screen are rendered."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "session-tree--cursor",
        "session-tree--guides",
        "session-tree--fold",
        "session-tree--active",
        "session-tree--label",
        "session-tree--leaf",
        "session-tree--user",
        "session-tree--assistant",
        "session-tree--tool",
        "session-tree--meta",
        "session-tree--match",
        "session-tree--empty",
    }

    DEFAULT_CSS: ClassVar[str] = """
    SessionTree {
        background: $surface;
        color: $foreground;
        overflow-x: hidden;
        overflow-y: auto;
    }
    SessionTree > .session-tree--cursor {
        background: $block-cursor-blurred-background;
        color: $block-cursor-blurred-foreground;
        text-style: bold;
    }
    SessionTree:focus > .session-tree--cursor {
        background: $block-cursor-background;
        color: $block-cursor-foreground;
        text-style: $block-cursor-text-style;
    }
    SessionTree > .session-tree--guides { color: $text-muted; }
    SessionTree > .session-tree--fold { color: $text-accent; }
    SessionTree > .session-tree--active { color: $text-success; text-style: bold; }
    SessionTree > .session-tree--label { color: $text-warning; }
    SessionTree > .session-tree--leaf { color: $text-success; text-style: italic; }
    SessionTree > .session-tree--user { color: $text-primary; }
    SessionTree > .session-tree--assistant { color: $foreground; }
    SessionTree > .session-tree--tool { color: $text-muted; }
    SessionTree > .session-tree--meta { color: $text-secondary; }
    SessionTree > .session-tree--match { text-style: reverse; }
    SessionTree > .session-tree--empty { color: $text-muted; text-style: italic; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        # Esc first: the footer shows bindings in order and must always say how to close.
        Binding("escape", "clear_search", "Clear search"),
        Binding("escape", "screen.close", "Close"),
        Binding("enter", "select", "Select"),
        Binding("up", "cursor_up", "Up", show=False),
        Binding("down", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
        Binding("left", "fold", "Fold/prev fork", key_display="←", show=False),
        Binding("right", "unfold", "Unfold/next fork", key_display="→", show=False),
        Binding("ctrl+left,alt+left", "fold", "Fold or previous fork", show=False),
        Binding("ctrl+right,alt+right", "unfold", "Unfold or next fork", show=False),
        Binding("slash", "start_search", "Search", key_display="/"),
        Binding("f", "cycle_filter(1)", "Filter"),
        Binding("F", "cycle_filter(-1)", "Previous filter", show=False),
        Binding("ctrl+d", "filter('default')", "Default filter", show=False),
        Binding("ctrl+t", "toggle_filter('no-tools')", "No tools", show=False),
        Binding("ctrl+u", "toggle_filter('user-only')", "User only", show=False),
        Binding("ctrl+l", "toggle_filter('labeled-only')", "Labeled only", show=False),
        Binding("ctrl+a", "toggle_filter('all')", "All entries", show=False),
    ]

    revision: reactive[int] = reactive(0, repaint=False, init=False)
    """Bumped with every ``Changed`` message. A watcher (``watch(tree, "revision", ...)``) runs
    at once, before the next frame: what it shows (the status line) paints with the rows of the
    same key, not a frame later as a handler of the bubbling message would."""

    class Highlighted(Message):
        """The cursor moved onto ``entry_id``."""

        def __init__(self, entry_id: str, tree: SessionTree | None = None) -> None:
            super().__init__()
            self.entry_id = entry_id
            self.tree = tree

        @property
        def control(self) -> SessionTree | None:
            return self.tree

    class Selected(Message):
        """``entry_id`` was chosen (Enter, or a click on the highlighted row)."""

        def __init__(self, entry_id: str, tree: SessionTree | None = None) -> None:
            super().__init__()
            self.entry_id = entry_id
            self.tree = tree

        @property
        def control(self) -> SessionTree | None:
            return self.tree

    class Changed(Message):
        """The rows, the filter, the search or the progress changed (the status is new)."""

        def __init__(self, tree: SessionTree) -> None:
            super().__init__()
            self.tree = tree

        @property
        def control(self) -> SessionTree:
            return self.tree

    class _Built(Message):
        """A worker laid out the session (``layout``) for ``key``."""

        def __init__(self, key: tuple[Any, ...], layout: TreeLayout, seconds: float) -> None:
            super().__init__()
            self.key = key
            self.layout = layout
            self.seconds = seconds

    class _Found(Message):
        """A worker finished the search for ``tokens``."""

        def __init__(self, key: tuple[Any, ...], tokens: list[str], layout: TreeLayout) -> None:
            super().__init__()
            self.key = key
            self.tokens = tokens
            self.layout = layout

    class _Released(Message):
        """A search worker no longer reads the rows (finished or cancelled)."""

        def __init__(self, key: tuple[Any, ...]) -> None:
            super().__init__()
            self.key = key

    class _Progress(Message):
        def __init__(self, key: tuple[Any, ...], text: str) -> None:
            super().__init__()
            self.key = key
            self.text = text

    def __init__(
        self,
        store: SessionStore | None = None,
        *,
        mode: str = "default",
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._explicit_store = store
        self._store: SessionStore | None = None
        self._checkpoints: CheckpointIndex | None = None
        self._markers: dict[str, int] = {}
        """Entry id → files its run changed (the ``✎`` marker; see pitui.checkpoint.record)."""
        self._mode = mode if mode in FILTER_MODES else "default"
        self._query = ""
        self._tokens: list[str] = []
        self._typing = False
        self._layout: TreeLayout | None = None
        """The rows of the filter mode."""
        self._found: TreeLayout | None = None
        """The search results (for ``_found_tokens``), laid out like ``_layout``."""
        self._found_tokens: list[str] = []
        self._build_key: tuple[Any, ...] | None = None
        self._search_key: tuple[Any, ...] | None = None
        self._during_build: list[tuple[str, str | None]] = []
        """Store events since a layout worker started (applied to its layout when it ends)."""
        self._readers: set[tuple[Any, ...]] = set()
        """Search workers reading the rows; store events are held until there are none."""
        self._held: list[tuple[str, str | None]] = []
        self._progress: str | None = None
        self._generation = 0
        self._cursor = -1
        self._cursor_node: Node | None = None
        self._cursor_at: tuple[TreeLayout, Segment, int] | None = None
        """Where the cursor's entry is in the rows shown (checked before use)."""
        self._hscroll = 0
        self._texts: LruCache[str, str] = LruCache(TEXT_CACHE)
        self._styles: RowStyles | None = None
        self._mark: tuple[Segment, int, str] | None = None
        self._paint: tuple[int, int] | None = None
        """(width, top line) during a paint of the lines."""
        self._strips: LruCache[tuple[Any, ...], Strip] = LruCache(STRIP_CACHE)
        """Painted rows by everything they show (the rows a cleared search brings back, the
        row the cursor left): repainting one is a lookup."""
        self._styles_key: tuple[Any, ...] = ()
        self._center_pending = True
        self._initial = True
        # Timing hooks (benchmarks and tests): perf_counter() stamps, set by the widget.
        self.build_seconds = 0.0
        """Duration of the last layout of the session (the build), in seconds."""
        self.search_seconds = 0.0
        """Duration of the last search, from the key to the results, in seconds."""
        self.last_key_at: float | None = None
        """When the last key event reached the tree."""
        self.render_hook: Callable[[float], None] | None = None
        """Called with perf_counter() at the end of every paint of the tree's lines."""
        self._search_started = 0.0
        self._search_timer: Timer | None = None
        """Starts the search for what was typed once the keys stop coming (a burst of keys
        is one search)."""
        self.search_delay = SEARCH_DELAY
        """Seconds without a key before the search for what was typed starts."""
        self.searches_started = 0
        """How many searches ran (for tests: typing in one burst starts one)."""
        self._index: tuple[SessionStore, FileIndex | None] | None = None
        self._index_lock = threading.Lock()
        self._search_lock = threading.Lock()
        self._search_ran: set[tuple[Any, ...]] = set()
        """Searches whose thread started (it posts _Released when done)."""
        self._search_abandoned: set[tuple[Any, ...]] = set()
        """Searches released before their thread started (it must not read the rows)."""

    # ------------------------------------------------------------------ public API

    @property
    def store(self) -> SessionStore:
        if self._store is None:
            self._store = self._explicit_store or self.pitui.store
        return self._store

    @property
    def mode(self) -> str:
        return self._mode

    @property
    def search_query(self) -> str:
        """The search as typed (matching ignores case)."""
        return self._query

    @property
    def searching(self) -> bool:
        """Typing goes to the search query (after ``/``, until Enter or Esc)."""
        return self._typing

    @property
    def busy(self) -> bool:
        """A layout or a search is being computed (see :attr:`progress`)."""
        return self._progress is not None

    @property
    def progress(self) -> str | None:
        return self._progress

    @property
    def view(self) -> TreeLayout | None:
        """The rows shown: the search results, or the filter's rows."""
        if self._tokens and self._found is not None and self._found_tokens == self._tokens:
            return self._found
        if self._tokens and self._found is not None:
            return self._found  # older results stay until the new ones are ready
        return self._layout

    @property
    def cursor_entry_id(self) -> str | None:
        """The entry under the cursor (None when no row is shown)."""
        view = self.view
        if view is None or not 0 <= self._cursor < view.line_count:
            return None
        return view.node_at(self._cursor).id

    @property
    def cursor_line(self) -> int:
        return self._cursor

    @property
    def row_count(self) -> int:
        """Number of lines shown (after filters, search and folds)."""
        view = self.view
        return view.line_count if view is not None else 0

    def visible_ids(self) -> list[str]:
        """Entry ids of the shown lines, top to bottom (for tests: it walks every line)."""
        view = self.view
        if view is None:
            return []
        return [view.node_at(line).id for line in range(view.line_count)]

    def line_of(self, entry_id: str) -> int | None:
        """Display line of ``entry_id``, or None when it is not shown."""
        view = self.view
        node = self._node(entry_id)
        if view is None or node is None:
            return None
        found = view.locate(node)
        return view.line_of(*found) if found is not None else None

    def is_on_path(self, entry_id: str) -> bool:
        view = self.view
        node = self._node(entry_id)
        found = view.locate(node) if view is not None and node is not None else None
        return found is not None and found[1] < found[0].path

    def is_folded(self, entry_id: str) -> bool:
        view = self.view
        node = self._node(entry_id)
        found = view.locate(node) if view is not None and node is not None else None
        return found is not None and found[1] == 0 and found[0].folded

    def row_text(self, line: int) -> str:
        """The plain text of display line ``line``, leaf marker included (not cut to width)."""
        view = self.view
        assert view is not None
        seg, k = view.at(line)
        content = self._content(view, seg, k, line == self._cursor)
        text = row_text(view, seg, k, content, RowStyles.plain()).plain
        return text + "".join(marker for marker, _ in row_markers(content, RowStyles.plain()))

    def status_text(self) -> str:
        """``(i/N)``, the filter tag and the search, as pi's last line; progress when busy."""
        view = self.view
        if view is None:
            return self._progress or "Loading the tree…"
        total = view.line_count
        parts = [f"({self._cursor + 1 if total else 0}/{total})"]
        tag = FILTER_TAGS.get(self._mode, "")
        if tag:
            parts.append(tag)
        if self._typing:
            parts.append(f"/{self._query}▏")
        elif self._query:
            parts.append(f"/{self._query}")
        if self._progress:
            parts.append(self._progress)
        elif total and view.leaf_row() is None and self.store.leaf is not None:
            parts.append("· the leaf is hidden by the " + ("search" if self._tokens else "filter"))
        return " ".join(parts)

    def set_store(self, store: SessionStore) -> None:
        """Show another session (the folds and the search are cleared)."""
        self._explicit_store = store
        self._store = store
        self._index = None
        self._checkpoints = None
        self._markers = {}
        self._texts.clear()
        self._cursor_node = None
        self._initial = True
        self._center_pending = True
        self._query = ""
        self._tokens = []
        self._typing = False
        self._found = None
        self._layout = None
        self._held = []
        self.rebuild()

    def reset(self, mode: str) -> None:
        """As if opened afresh: no search, no folds, filter ``mode``, the cursor on the leaf."""
        self._typing = False
        self._query = ""
        self._tokens = []
        self._found = None
        self._found_tokens = []
        self._search_key = None
        self._initial = True
        self._center_pending = True
        self._cursor_node = None
        self._hscroll = 0
        mode = mode if mode in FILTER_MODES else "default"
        layout = self._layout
        if (
            layout is None
            or mode != self._mode
            or not layout.order_exact
            or self._store is not self.pitui.store
        ):
            self._mode = mode
            if self._explicit_store is None or self._store is not self.pitui.store:
                self._explicit_store = self.pitui.store
                self._store = self.pitui.store
                self._checkpoints = None
                self._texts.clear()
            self._layout = None
            self.rebuild()
            return
        layout.clear_folds()
        self._show(layout)

    def set_mode(self, mode: str) -> None:
        """Switch the filter; folds are cleared, the selection keeps its entry or an ancestor."""
        if mode not in FILTER_MODES:
            raise ValueError(f"unknown filter mode {mode!r}")
        self._mode = mode
        self.rebuild()

    def set_search(self, query: str) -> None:
        """Show only entries containing every whitespace-separated token (any case)."""
        self._query = query
        tokens = query_tokens(query)
        if self._search_timer is not None:
            self._search_timer.stop()
            self._search_timer = None
            if self._search_key is None:
                self._set_progress(None)  # typed, not started yet
        if tokens == self._tokens and (not tokens or self._found_tokens == tokens):
            self._post_changed()
            return
        previous = self._found_tokens if self._found is not None else []
        self._tokens = tokens
        if not tokens:
            # Clearing: the rows the search was made from, as they were (folds cleared).
            self._found = None
            self._found_tokens = []
            self._stop_search()
            self._set_progress(None)
            if self._layout is not None:
                self._layout.clear_folds()
                self._show(self._layout)
            return
        if self._layout is None:
            self._post_changed()
            return  # searched when the layout is ready
        base = self._layout
        if previous and self._found is not None and _narrows(tokens, previous):
            base = self._found
        self._start_search(base, tokens)
        self._post_changed()

    def move_to(self, entry_id: str) -> bool:
        """Put the cursor on ``entry_id`` (or its nearest shown ancestor); False if neither."""
        view = self.view
        node = self._node(entry_id)
        if node is None:
            return False
        if self._build_key is not None or self._search_key is not None:
            # The rows are being made: the cursor goes there when they are ready.
            self._cursor_node = node
            self._center_pending = True
            return True
        if view is None:
            return False
        line = self._visible_line(view, node)
        if line is None:
            return False
        self._set_cursor(line, center=True)
        return True

    def fold(self, entry_id: str) -> None:
        view = self.view
        node = self._node(entry_id)
        found = view.locate(node) if view is not None and node is not None else None
        if view is not None and found is not None and found[1] == 0 and view.fold(found[0]):
            self._relayout()

    def unfold(self, entry_id: str) -> None:
        view = self.view
        node = self._node(entry_id)
        found = view.locate(node) if view is not None and node is not None else None
        if view is not None and found is not None and found[1] == 0 and view.unfold(found[0]):
            self._relayout()

    def rebuild(self) -> None:
        """Lay the session out again (filter, order); the cursor keeps its entry. A search is
        run again on the new rows."""
        self._generation += 1
        key = (self._generation, self.store, self._mode)
        self._build_key = key
        self._during_build = []
        store = self.store
        if self._build_in_worker(store):
            self._set_progress("Loading the tree…")
            self.run_worker(
                lambda: self._build_thread(key, store, self._mode),
                thread=True,
                group="tree-build",
                exclusive=True,
                exit_on_error=False,
                description="lay out the session tree",
            )
            return
        started = time.perf_counter()
        layout = self._lay_out(store, self._mode)
        self.build_seconds = time.perf_counter() - started
        self._install(layout)

    def leaf_moved(self, new_leaf_id: str | None = UNSET_LEAF) -> None:
        """The leaf moved to ``new_leaf_id`` (default: where the store's leaf is now): the
        path marks follow (no rebuild unless rows change). Events are applied in the order
        they happened, so the id of each move matters, not where the leaf is by then."""
        if new_leaf_id is UNSET_LEAF:
            leaf = self.store.leaf
            new_leaf_id = leaf.id if leaf is not None else None
        self._event(("leaf", new_leaf_id))

    def entry_appended(self, entry_id: str) -> None:
        """An entry was appended: it joins the rows in place (a label restyles its target)."""
        self._event(("append", entry_id))

    def _event(self, event: tuple[str, str | None]) -> None:
        if self._build_key is not None:
            self._during_build.append(event)
        if self._readers:
            # A search worker reads the rows: they change once it is done.
            self._held.append(event)
            return
        if self._apply(event):
            self._after_change()

    def _apply(self, event: tuple[str, str | None]) -> bool:
        """Apply one store event to the rows (and the search results); False if it started a
        rebuild or a new search instead."""
        kind, entry_id = event
        node = self._node(entry_id) if entry_id is not None else None
        if kind == "leaf":
            for layout in (self._layout, self._found):
                if layout is not None and not layout.move_leaf(node):
                    self.rebuild()
                    return False
            return True
        if node is None:
            return True
        if node.type == "custom" and node.parent_id is not None:
            self._refresh_markers()  # a checkpoint gives its run's row a marker
        if node.type == "label":
            target = self.store.data(node).get("targetId")
            if isinstance(target, str):
                self._texts.pop(target)
                if self._mode == "labeled-only":
                    self.rebuild()
                    return False
                if self._tokens:
                    if self._layout is not None:
                        self._layout.appended(node)
                    self._search_again()
                    return False
        for layout in (self._layout, self._found):
            if layout is not None and not layout.appended(node):
                self.rebuild()
                return False
        return True

    # ------------------------------------------------------------------ building

    def _build_in_worker(self, store: SessionStore) -> bool:
        path = store.path
        if path is None or not store.persisted:
            return False
        try:
            return path.stat().st_size > SYNC_BUILD_BYTES
        except OSError:
            return False

    @staticmethod
    def _lay_out(
        store: SessionStore, mode: str, tick: Callable[[int, int], None] | None = None
    ) -> TreeLayout:
        # No garbage collection while segments are made: none of it is cyclic garbage, and
        # collections would scan the new objects repeatedly (as SessionStore.open does).
        with collector.paused():
            return layout_tree(store, mode, tick=tick)

    def _ticker(self, key: tuple[Any, ...], what: str) -> Callable[[int, int], None]:
        worker = get_current_worker()
        last = [time.perf_counter()]

        def tick(done: int, total: int) -> None:
            if worker.is_cancelled:
                raise _Cancelled
            now = time.perf_counter()
            if now - last[0] >= PROGRESS_EVERY and total:
                last[0] = now
                self.post_message(self._Progress(key, f"{what} {100 * done // total}%"))

        return tick

    def _build_thread(self, key: tuple[Any, ...], store: SessionStore, mode: str) -> None:
        started = time.perf_counter()
        try:
            layout = self._lay_out(store, mode, self._ticker(key, "Loading the tree…"))
        except _Cancelled:
            return
        layout.reindex()
        self.post_message(self._Built(key, layout, time.perf_counter() - started))

    def on_session_tree__built(self, message: SessionTree._Built) -> None:
        message.stop()
        if message.key != self._build_key:
            return
        self.build_seconds = message.seconds
        self._install(message.layout)

    def _install(self, layout: TreeLayout) -> None:
        """A new layout of the filter's rows: catch up with what happened meanwhile."""
        events = self._during_build
        self._build_key = None
        self._during_build = []
        self._layout = layout
        self._refresh_markers()
        for kind, entry_id in events:
            node = self._node(entry_id) if entry_id is not None else None
            ok = layout.move_leaf(node) if kind == "leaf" else node is None or layout.appended(node)
            if not ok:
                self.rebuild()
                return
        self._set_progress(None)
        if self._tokens:
            self._found = None
            self._start_search(layout, self._tokens)
        else:
            self._show(layout)
        self._prepare_search(layout)

    def _prepare_search(self, layout: TreeLayout) -> None:
        """On a large session, make the file's search index in the background now, so that
        the first search does not wait for it."""
        store = self.store
        cached = self._index
        rows = layout.row_count
        if not INDEX_AHEAD_ROWS <= rows <= INDEX_AHEAD_MAX_ROWS or (
            cached is not None and cached[0] is store
        ):
            return
        self.run_worker(
            lambda: self._index_thread(store),
            thread=True,
            group="tree-index",
            exclusive=True,
            exit_on_error=False,
            description="index the session file for searches",
        )

    def _index_thread(self, store: SessionStore) -> None:
        worker = get_current_worker()

        def tick(done: int, total: int) -> None:
            if worker.is_cancelled:
                raise _Cancelled
            time.sleep(0)  # let the UI thread have the interpreter first

        with contextlib.suppress(_Cancelled), collector.paused():  # as a search (below)
            self._file_index(store, tick)

    # ------------------------------------------------------------------ searching

    def _search_again(self) -> None:
        if self._layout is not None and self._tokens:
            self._found = None
            self._start_search(self._layout, self._tokens)

    def _start_search(self, base: TreeLayout, tokens: list[str]) -> None:
        self._abandon(self._search_key)  # the worker started below cancels it
        self._generation += 1
        key = (self._generation, tuple(tokens))
        self._search_key = key
        self._search_started = time.perf_counter()
        self.searches_started += 1
        self._set_progress("searching…")
        base.ensure_rows()  # the worker only reads (store events wait until it is done)
        self._readers.add(key)
        store = self.store
        self.run_worker(
            lambda: self._search_thread(key, store, base, tokens),
            thread=True,
            group="tree-search",
            exclusive=True,
            exit_on_error=False,
            description="search the session tree",
        )

    def _abandon(self, key: tuple[Any, ...] | None) -> None:
        """The search ``key`` is being cancelled: if its thread has not started yet (a worker
        cancelled that early never runs), release the rows now; a thread that starts after
        this does nothing."""
        if key is None:
            return
        with self._search_lock:
            if key in self._search_ran:
                return  # it posts _Released when it stops
            self._search_abandoned.add(key)
        self._release(key)

    def _file_index(
        self, store: SessionStore, tick: Callable[[int, int], None]
    ) -> FileIndex | None:
        """The session file's search index, made by the first search that needs it and kept
        for the next ones (one at a time: a search started meanwhile waits for it). A search
        superseded by the next key finishes the index first (the next search needs it): at
        1M entries, a query typed slowly made it again at every key, 5 s each."""

        def build_tick(done: int, total: int) -> None:
            try:
                tick(done, total)
            except _Cancelled:
                if store is not self.store:
                    raise  # another session is shown: this index is not needed any more

        worker = get_current_worker()
        while not self._index_lock.acquire(timeout=0.05):
            if worker.is_cancelled:
                raise _Cancelled
        try:
            cached = self._index
            if cached is not None and cached[0] is store:
                return cached[1]
            index = FileIndex.build(store, build_tick)
            if store is self.store:
                self._index = (store, index)
            return index
        finally:
            self._index_lock.release()

    def _search_thread(
        self, key: tuple[Any, ...], store: SessionStore, base: TreeLayout, tokens: list[str]
    ) -> None:
        with self._search_lock:
            if key in self._search_abandoned:
                self._search_abandoned.discard(key)
                return  # cancelled before it started, and already released
            self._search_ran.add(key)
        tick = self._ticker(key, "searching…")
        reader = LineReader(store)
        # No garbage collection while the search runs: it makes up to millions of objects and
        # no cyclic garbage, and each full collection it set off walked the whole heap while
        # holding the interpreter (170-270 ms each at 1M entries, a dozen per search, some on
        # the UI thread: keys waited that long).
        collector.pause(key)
        try:
            matcher = Matcher(store, tokens, reader.line)
            rows = base.row_count
            if rows > SCAN_ROWS:
                # The file's index (once), the whole file at once, then the rows.
                index = self._file_index(store, lambda done, total: tick(done, 3 * total))
                matcher.scan_file(lambda done, total: tick(total + done, 3 * total), index)
                found = base.restrict(
                    matcher,
                    tick=lambda done, _: tick(2 * rows + done, 3 * rows),
                    candidates=matcher.candidates,
                )
            else:
                found = base.restrict(matcher, tick=tick)
            found.reindex()
            self.post_message(self._Found(key, tokens, found))
        except _Cancelled:
            pass
        finally:
            collector.resume(key)
            reader.close()
            with self._search_lock:
                self._search_ran.discard(key)
            self.post_message(self._Released(key))

    def on_session_tree__found(self, message: SessionTree._Found) -> None:
        message.stop()
        if message.key != self._search_key:
            return
        self._search_key = None
        self.search_seconds = time.perf_counter() - self._search_started
        self._found = message.layout
        self._found_tokens = message.tokens
        self._set_progress(None)
        self._show(message.layout)

    def on_session_tree__released(self, message: SessionTree._Released) -> None:
        """A search worker stopped reading the rows: apply the store events held meanwhile
        (to the rows and to its results alike)."""
        message.stop()
        self._release(message.key)

    def _release(self, key: tuple[Any, ...]) -> None:
        self._readers.discard(key)
        if self._readers or not self._held:
            return
        held, self._held = self._held, []
        for event in held:
            if not self._apply(event):
                return
        self._after_change()

    def on_session_tree__progress(self, message: SessionTree._Progress) -> None:
        message.stop()
        if message.key in (self._build_key, self._search_key):
            self._set_progress(message.text)

    def _set_progress(self, text: str | None) -> None:
        if text != self._progress:
            self._progress = text
            self._post_changed()

    def _post_changed(self) -> None:
        self.revision += 1
        self.post_message(self.Changed(self))

    # ------------------------------------------------------------------ showing

    def _show(self, view: TreeLayout) -> None:
        """``view`` is now what is shown: size, cursor (same entry or its nearest shown
        ancestor), scroll."""
        self._relayout()

    def _after_change(self) -> None:
        """Rows or path marks changed in place: keep the cursor on its entry, repaint."""
        self._relayout()

    def _relayout(self) -> None:
        view = self.view
        count = view.line_count if view is not None else 0
        self._set_line_count(count)
        self._prune_strips()
        old = self._cursor
        previous = self._cursor_node
        initial = self._initial and view is not None and self._build_key is None
        target: int | None = None
        if view is not None and count:
            node = previous
            if initial or node is None:
                found = view.leaf_row()
                node = found[0].nodes[found[1]] if found is not None else None
            if node is not None:
                target = self._visible_line(view, node)
            if target is None:
                target = count - 1 if initial else 0
        if target is None:
            # Nothing shown: the wanted entry is remembered for when rows come back.
            self._cursor = -1
            self.refresh()
            self._post_changed()
            return
        assert view is not None
        seg, k = view.at(target)
        new_node = seg.nodes[k]
        self._cursor = target
        self._cursor_node = new_node
        self._cursor_at = (view, seg, k)
        if initial:
            self._initial = False
        if self.size.height > 0:
            self._scroll_to_cursor(center=True, force=initial or self._center_pending)
            self._center_pending = False
        else:
            self._center_pending = self._center_pending or initial
        self.refresh()
        if new_node is not previous or old == -1 or initial:
            self.post_message(self.Highlighted(new_node.id, self))
        self._post_changed()

    def _prune_strips(self) -> None:
        """Forget painted rows of layouts no longer kept (an old search, a rebuilt tree)."""
        layout, found = self._layout, self._found
        stale = [key for key in self._strips if key[0] is not layout and key[0] is not found]
        for key in stale:
            self._strips.pop(key)

    def _set_line_count(self, count: int) -> None:
        """The scrollable height. Setting ``virtual_size`` re-lays out the whole screen (and so
        repaints every widget on it), which is only needed when the scrollbar appears or goes:
        otherwise only the scrollbar's thumb and this widget change (Esc on a search of a big
        session repainted the details pane, its tabs and the footer with the rows)."""
        size = Size(0, count)
        if size == self.virtual_size:
            return
        height = self.container_size.height
        shown = self.show_vertical_scrollbar
        if (
            not self.is_mounted
            or height <= 0
            or self.styles.overflow_y != "auto"
            or (count > height) != shown
        ):
            self.virtual_size = size  # the scrollbar appears or goes: a layout is needed
            return
        self.set_reactive(SessionTree.virtual_size, size)
        if shown:
            bar = self.vertical_scrollbar
            bar.window_virtual_size = count
            bar.refresh()
        self.scroll_y = self.validate_scroll_y(self.scroll_y)
        self.refresh()

    def _visible_line(self, view: TreeLayout, node: Node) -> int | None:
        """Line of ``node`` or of its nearest shown ancestor; a fold shows its head."""
        found: tuple[Segment, int] | None = None
        known = self._cursor_at
        if known is not None and known[0] is view:
            _, seg, k = known
            if k < len(seg.nodes) and seg.nodes[k] is node:
                found = seg, k  # where the cursor was: still there (appends do not move rows)
        if found is None:
            found = view.nearest(node)
        if found is None:
            return None
        seg, k = found
        line = view.line_of(seg, k)
        while line is None:
            if seg.folded and seg.slot >= 0:
                return view.seg_line(seg)
            parent = seg.parent
            if parent is None or parent is view.root:
                return None
            seg, k = parent, len(parent.nodes) - 1
            line = view.line_of(seg, k)
        return line

    def _node(self, entry_id: str) -> Node | None:
        try:
            return self.store.node(entry_id)
        except EntryNotFoundError:
            return None

    def _refresh_markers(self) -> None:
        """Which rows changed files (the checkpoint entries of the session, read as they come)."""
        index = self._checkpoints
        if index is None or index.store is not self.store:
            index = self._checkpoints = CheckpointIndex(self.store)
        self._markers = index.run_markers()

    # ------------------------------------------------------------------ texts

    def _text(self, node: Node) -> str:
        """pi's one-line text of an entry (cached for the rows near the screen)."""
        texts = self._texts
        text = texts.get(node.id)
        if text is None:
            try:
                text = entry_line(self.store, node)
            except (UserError, OSError, ValueError):
                # The file was cut or replaced underneath (the app offers to reopen it): the
                # row says so instead of taking the tree down, and is read again next time.
                return "[entry unavailable: the session file changed]"
            texts.put(node.id, text)
        return text

    def _leaf_mark(self, view: TreeLayout) -> tuple[Segment, int, str] | None:
        """Which row says where the leaf is, and what it says: the leaf's own row; else its
        nearest shown ancestor (how far below, hidden); else the fold that hides it."""
        found = view.leaf_row()
        if found is None:
            return None
        seg, k = found
        node = seg.nodes[k]
        leaf = self.store.leaf
        below = 0
        if leaf is not None and leaf is not node:
            below = _entries_below(node, leaf)
        if view.line_of(seg, k) is not None:
            return seg, k, leaf_marker(below)
        while seg.parent is not None and seg.parent is not view.root and seg.slot < 0:
            seg = seg.parent
        return seg, 0, "  ← leaf is inside (folded)"

    def _content(
        self,
        view: TreeLayout,
        seg: Segment,
        k: int,
        cursor: bool,
        mark: Any = UNSET_LEAF,
    ) -> RowContent:
        node = seg.nodes[k]
        if mark is UNSET_LEAF:
            mark = self._leaf_mark(view)
        marker = mark[2] if mark is not None and mark[0] is seg and mark[1] == k else None
        return RowContent(
            self._text(node),
            self.store.label_of(node.id),
            self._tokens,
            cursor,
            marker,
            self._markers.get(node.id, 0),
        )

    # ------------------------------------------------------------------ rendering

    def _compute_styles(self) -> RowStyles:
        if not self.is_mounted:
            return RowStyles.plain()
        get = self.get_component_rich_style
        return RowStyles(
            base=self.rich_style,
            cursor=get("session-tree--cursor"),
            guides=get("session-tree--guides"),
            fold=get("session-tree--fold"),
            active=get("session-tree--active"),
            label=get("session-tree--label"),
            leaf=get("session-tree--leaf"),
            user=get("session-tree--user"),
            assistant=get("session-tree--assistant"),
            tool=get("session-tree--tool"),
            meta=get("session-tree--meta"),
            match=get("session-tree--match"),
            empty=get("session-tree--empty"),
        )

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = None

    def render_lines(self, crop: Any) -> list[Strip]:
        if self._center_pending and self.size.height > 0 and self._cursor >= 0:
            self._center_pending = False
            self._scroll_to_cursor(center=True, force=True)
        self._styles = styles = self._compute_styles()
        self._styles_key = tuple(vars(styles).values())
        view = self.view
        self._mark = self._leaf_mark(view) if view is not None else None
        # The width and the top line, once per paint (``size`` looks the widget up in the
        # screen's map: a noticeable part of each row's cost).
        self._paint = (self.size.width, self.scroll_offset.y)
        try:
            strips = super().render_lines(crop)
        finally:
            self._paint = None
        if self.render_hook is not None:
            self.render_hook(time.perf_counter())
        return strips

    def render_line(self, y: int) -> Strip:
        styles = self._styles or self._compute_styles()
        width, top = self._paint or (self.size.width, self.scroll_offset.y)
        view = self.view
        line = top + y
        count = view.line_count if view is not None else 0
        if not 0 <= line < count:
            if line == 0 and not count:
                if view is None or (self._tokens and self._found is None):
                    message = self._progress or "Loading the tree…"
                elif self.store.roots():
                    message = "No entries match."
                else:
                    message = "No entries in session."
                text = Text.assemble("  ", (message, styles.empty), style=styles.base, end="")
                return Strip(list(text.render(self.app.console))).crop_extend(0, width, styles.base)
            return Strip.blank(width, styles.base)
        assert view is not None
        seg, k = view.at(line)
        cursor = line == self._cursor
        content = self._content(view, seg, k, cursor, self._mark)
        key = (
            view,
            view.version,
            seg,
            k,
            seg.folded,
            content.text,
            content.label,
            tuple(content.tokens),
            cursor,
            content.marker,
            content.changed,
            width,
            self._hscroll,
            self._styles_key if self._paint is not None else tuple(vars(styles).values()),
        )
        strips = self._strips
        strip = strips.get(key)
        if strip is not None:
            return strip
        text = row_text(view, seg, k, content, styles, skip=self._hscroll)
        markers = row_markers(content, styles)
        strip = row_strip(text, markers, width, styles, cursor, self.app.console)
        strips.put(key, strip)
        return strip

    def _refresh_line(self, line: int) -> None:
        top = self.scroll_offset.y
        if top <= line < top + self.size.height:
            self.refresh_line(line)

    # ------------------------------------------------------------------ cursor

    def _set_cursor(self, line: int, *, center: bool = False) -> None:
        view = self.view
        if view is None or not view.line_count:
            return
        line = max(0, min(line, view.line_count - 1))
        old = self._cursor
        old_node = self._cursor_node
        self._cursor = line
        seg, k = view.at(line)
        node = seg.nodes[k]
        self._cursor_node = node
        self._cursor_at = (view, seg, k)
        if not self._scroll_to_cursor(center=center):
            if 0 <= old < view.line_count:
                self._refresh_line(old)
            self._refresh_line(line)
        if node is not old_node or old != line:
            self.post_message(self.Highlighted(node.id, self))
            self._post_changed()

    def _scroll_to_cursor(self, *, center: bool = False, force: bool = False) -> bool:
        """Scroll so the cursor row (and its text) shows; True when everything repaints.

        ``center``: an off-screen cursor is centred (else the view moves just enough);
        ``force``: centre it even when it is already on screen.
        """
        line = self._cursor
        view = self.view
        if line < 0 or view is None:
            return False
        height = self.size.height
        width = self.size.width
        repaint = False
        if height > 0:
            top = round(self.scroll_offset.y)
            if force or (center and not top <= line < top + height):
                target = max(0, line - height // 2)
            elif line < top:
                target = line
            elif line >= top + height:
                target = line - height + 1
            else:
                target = top
            target = min(target, max(0, view.line_count - height))
            if target != top:
                self.scroll_to(y=target, animate=False, force=True)
                repaint = True
        if width > 0:
            seg, _k = view.at(line)
            indent = TreeLayout.indent(seg) + 2
            margin = min(30, width // 2)
            hscroll = self._hscroll
            if indent < hscroll or indent > hscroll + width - margin:
                hscroll = max(0, indent - width // 3)
            if hscroll != self._hscroll:
                self._hscroll = hscroll
                self.refresh()
                repaint = True
        return repaint

    @property
    def hscroll(self) -> int:
        """Columns scrolled off on the left (deep rows are scrolled into view)."""
        return self._hscroll

    # ------------------------------------------------------------------ events

    def on_mount(self) -> None:
        if self._layout is None and self._build_key is None:
            self.rebuild()

    def on_key(self, event: events.Key) -> None:
        self.last_key_at = time.perf_counter()
        if not self._typing:
            return
        if event.key == "backspace":
            event.stop()
            event.prevent_default()
            self._typed(self._query[:-1])
        elif event.is_printable and event.character:
            event.stop()
            event.prevent_default()
            self._typed(self._query + event.character)

    def _typed(self, query: str) -> None:
        """A key changed the query: it shows at once; the search for it starts once the keys
        stop for ``SEARCH_DELAY`` (keys typed in one burst start one search), and a search
        still running for an earlier query stops now."""
        tokens = query_tokens(query)
        if not tokens or tokens == self._tokens:
            self.set_search(query)  # cleared (the rows come back at once), or the same search
            return
        self._query = query
        self._stop_search()
        self._set_progress("searching…")
        self._search_timer = self.set_timer(
            self.search_delay, self._search_typed, name="tree-search"
        )
        self._post_changed()

    def _search_typed(self) -> None:
        self._search_timer = None
        self.set_search(self._query)

    def _stop_search(self) -> None:
        """No search runs or waits to run (a running worker stops at its next check)."""
        if self._search_timer is not None:
            self._search_timer.stop()
            self._search_timer = None
        if self._search_key is not None:
            self._abandon(self._search_key)
            self._search_key = None
            self.workers.cancel_group(self, "tree-search")

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        view = self.view
        if offset is None or view is None:
            return
        line = offset.y + self.scroll_offset.y
        if not 0 <= line < view.line_count:
            return
        event.stop()
        seg, k = view.at(line)
        glyph = fold_glyph_column(view, seg, k)
        if glyph is not None and offset.x + self._hscroll == glyph:
            self._toggle_fold(seg)
            return
        self._set_cursor(line)
        if event.chain >= 2:
            # A double click selects. One click only highlights, also on the highlighted row
            # (a click that takes the focus back from the details pane must not move the leaf).
            self.post_message(self.Selected(seg.nodes[k].id, self))

    def on_resize(self, event: events.Resize) -> None:
        if self._cursor >= 0:
            self._scroll_to_cursor(center=True, force=self._center_pending)
            self._center_pending = False

    def _toggle_fold(self, seg: Segment) -> None:
        view = self.view
        if view is None:
            return
        if seg.folded:
            view.unfold(seg)
        else:
            view.fold(seg)
        self._cursor_node = seg.nodes[0]
        self._relayout()

    # ------------------------------------------------------------------ actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear_search":
            return bool(self._typing or self._query)
        if action == "close":
            return not (self._typing or self._query)
        return True

    def action_cursor_up(self) -> None:
        count = self.row_count
        if count:
            self._set_cursor((self._cursor - 1) % count)

    def action_cursor_down(self) -> None:
        count = self.row_count
        if count:
            self._set_cursor((self._cursor + 1) % count)

    def action_page_up(self) -> None:
        self._set_cursor(self._cursor - max(1, self.size.height - 1))

    def action_page_down(self) -> None:
        self._set_cursor(self._cursor + max(1, self.size.height - 1))

    def action_first(self) -> None:
        self._set_cursor(0)

    def action_last(self) -> None:
        self._set_cursor(self.row_count - 1)

    def action_fold(self) -> None:
        """Fold the current segment, or jump to the start of the previous one."""
        view = self.view
        if view is None or self._cursor < 0:
            return
        seg, k = view.at(self._cursor)
        if k == 0 and seg.foldable and not seg.folded:
            self._toggle_fold(seg)
            return
        target = seg if k > 0 else seg.parent
        if target is None or target is view.root:
            return
        line = view.line_of(target, 0)
        if line is not None:
            self._set_cursor(line)

    def action_unfold(self) -> None:
        """Unfold the current segment, or jump to the next branch point (or the branch end)."""
        view = self.view
        if view is None or self._cursor < 0:
            return
        seg, k = view.at(self._cursor)
        if k == 0 and seg.folded:
            self._toggle_fold(seg)
            return
        target = (seg.children[0], 0) if seg.children else (seg, len(seg.nodes) - 1)
        if target != (seg, k):
            line = view.line_of(*target)
            if line is not None:
                self._set_cursor(line)

    def action_select(self) -> None:
        if self._typing:
            self._typing = False
            if self._search_timer is not None:
                self._search_typed()  # what was typed is searched now
            self._post_changed()
            self.refresh_bindings()
            return
        entry_id = self.cursor_entry_id
        if entry_id is not None:
            self.post_message(self.Selected(entry_id, self))

    def action_cycle_filter(self, step: int) -> None:
        index = FILTER_MODES.index(self._mode)
        self.set_mode(FILTER_MODES[(index + step) % len(FILTER_MODES)])

    def action_filter(self, mode: str) -> None:
        self.set_mode(mode)

    def action_toggle_filter(self, mode: str) -> None:
        self.set_mode("default" if self._mode == mode else mode)

    def action_start_search(self) -> None:
        self._typing = True
        self._post_changed()
        self.refresh_bindings()

    def action_clear_search(self) -> None:
        self._typing = False
        self.set_search("")
        self.refresh_bindings()


def _entries_below(row: Node, leaf: Node, limit: int = 10_000) -> int:
    """How many entries the leaf is below ``row`` (its nearest shown ancestor). Custom entries
    do not count: they are bookkeeping (pitui's checkpoint after every run, approvals,
    extensions' notes), so a leaf on one of them is marked on the row above as ``← leaf``."""
    count, steps, node = 0, 0, leaf
    while node is not None and node is not row:
        if steps >= limit:
            return max(1, depth_of(leaf) - depth_of(row))
        if node.type != "custom":
            count += 1
        node, steps = node.parent, steps + 1
    return count if node is row else max(1, depth_of(leaf) - depth_of(row))
