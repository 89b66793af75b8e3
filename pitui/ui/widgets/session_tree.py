"""``SessionTree``: the session as pi's tree selector shows it, virtualized on the line API.

Textual's ``Tree`` rebuilds every visible line on each change and recurses once per level (it
crashes near depth 1,000), so this widget keeps flat rows instead and renders only the lines on
screen (``render_line``), as Rich ``Text`` (never markup).

Rows follow pi (pi-reference §7.2): pre-order, the child holding the active leaf first, nesting
only at branch points, ``├─ ``/``└─ `` connectors with ``│`` gutters, ``• `` on every entry of
the active path, ``[label] `` prefixes, pi's one-line texts. Filters and search hide entries and
their children re-attach to the nearest shown ancestor. Folding hides a segment's descendants; a
fold marker replaces the connector's ``─`` (``⊟`` foldable, ``⊞`` folded).

The widget only reads the store. Its owner tells it about changes: :meth:`leaf_moved` re-styles
the rows whose active-path state changed (no rebuild), :meth:`entry_appended` rebuilds (throttled)
when the new entry is shown.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from pitui.checkpoint.record import CheckpointIndex  # checkpoints wiring (issue 13)
from pitui.session.codec import loads
from pitui.session.errors import EntryNotFoundError
from pitui.session.flatten import FILTER_MODES
from pitui.session.flatten import make_filter as tree_filter
from pitui.session.node import Node
from pitui.session.oneline import entry_text
from pitui.session.shapes import message_text, tool_calls
from pitui.session.store import SessionStore
from pitui.text import strip_escapes
from pitui.ui.widgets.tree_rows import (
    _CALL_LOOKBACK,
    TreeRow,
    build_rows,
)

FILTER_TAGS: dict[str, str] = {
    "default": "",
    "no-tools": "[no-tools]",
    "user-only": "[user]",
    "labeled-only": "[labeled]",
    "all": "[all]",
}
"""The status tag of each filter mode (pi's wording; nothing for the default)."""

DISPLAY_LIMIT = 400
"""Characters of entry text kept for display (pi cuts most texts at 200 already)."""

SEARCH_DELAY = 0.12
"""Typing waits this long for the next key before searching, when a rebuild is slow."""

SLOW_BUILD = 0.03
"""A rebuild slower than this (seconds) makes typing in the search wait (:data:`SEARCH_DELAY`)."""

REBUILD_INTERVAL = 0.3
"""Seconds between two rebuilds caused by appends (an agent may append while the tree shows)."""


@dataclass
class _Styles:
    """Rich styles of the component classes, computed once per paint."""

    base: Style
    cursor: Style
    guides: Style
    fold: Style
    active: Style
    label: Style
    leaf: Style
    user: Style
    assistant: Style
    tool: Style
    meta: Style
    match: Style
    empty: Style


class SessionTree(ScrollView, can_focus=True):
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
        Binding("up", "cursor_up", "Up", show=False),
        Binding("down", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
        Binding("left", "fold", "Fold/prev fork", key_display="←"),
        Binding("right", "unfold", "Unfold/next fork", key_display="→"),
        Binding("ctrl+left,alt+left", "fold", "Fold or previous fork", show=False),
        Binding("ctrl+right,alt+right", "unfold", "Unfold or next fork", show=False),
        Binding("enter", "select", "Select"),
        Binding("f", "cycle_filter(1)", "Filter"),
        Binding("F", "cycle_filter(-1)", "Previous filter", show=False),
        Binding("ctrl+d", "filter('default')", "Default filter", show=False),
        Binding("ctrl+t", "toggle_filter('no-tools')", "No tools", show=False),
        Binding("ctrl+u", "toggle_filter('user-only')", "User only", show=False),
        Binding("ctrl+l", "toggle_filter('labeled-only')", "Labeled only", show=False),
        Binding("ctrl+a", "toggle_filter('all')", "All entries", show=False),
        Binding("slash", "start_search", "Search", key_display="/"),
        Binding("escape", "clear_search", "Clear search"),
    ]

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
        """``entry_id`` was chosen (Enter or a click)."""

        def __init__(self, entry_id: str, tree: SessionTree | None = None) -> None:
            super().__init__()
            self.entry_id = entry_id
            self.tree = tree

        @property
        def control(self) -> SessionTree | None:
            return self.tree

    class Changed(Message):
        """The rows, the filter or the search changed (the status text is new)."""

        def __init__(self, tree: SessionTree) -> None:
            super().__init__()
            self.tree = tree

        @property
        def control(self) -> SessionTree:
            return self.tree

    def __init__(
        self,
        store: SessionStore,
        *,
        mode: str = "default",
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._store = store
        self._checkpoints = CheckpointIndex(store)  # checkpoints wiring (issue 13)
        self._markers: dict[str, int] = {}
        self._mode = mode if mode in FILTER_MODES else "default"
        self._query = ""
        self._tokens: list[str] = []
        self._typing = False
        self._rows: list[TreeRow] = []
        self._row_of: dict[str, int] = {}
        self._lines: list[int] = []
        self._line_of: dict[str, int] = {}
        self._path_ids: set[str] = set()
        self._folded: set[str] = set()
        self._cursor = -1
        self._cursor_id: str | None = None
        self._leaf_row_id: str | None = None
        self._hscroll = 0
        self._texts: dict[str, str] = {}
        self._search_texts: dict[str, str] = {}
        self._styles: _Styles | None = None
        self._center_pending = True
        self._rebuild_timer: Any = None
        self._search_timer: Any = None
        self._last_rebuild = 0.0
        self._built = False
        # Timing hooks (benchmarks and tests): perf_counter() stamps, set by the widget.
        self.build_seconds = 0.0
        """Duration of the last rebuild (flatten + layout), in seconds."""
        self.last_key_at: float | None = None
        """When the last key event reached the tree."""
        self.render_hook: Callable[[float], None] | None = None
        """Called with perf_counter() at the end of every paint of the tree's lines."""

    # ------------------------------------------------------------------ public API

    @property
    def store(self) -> SessionStore:
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
    def cursor_entry_id(self) -> str | None:
        """The entry under the cursor (None when no row is shown)."""
        if 0 <= self._cursor < len(self._lines):
            return self._rows[self._lines[self._cursor]].node.id
        return None

    @property
    def cursor_line(self) -> int:
        return self._cursor

    @property
    def row_count(self) -> int:
        """Number of rows shown (after filters, search and folds)."""
        return len(self._lines)

    def visible_ids(self) -> list[str]:
        """Entry ids of the shown rows, top to bottom."""
        rows = self._rows
        return [rows[i].node.id for i in self._lines]

    def line_of(self, entry_id: str) -> int | None:
        """Display line of ``entry_id``, or None when it is not shown."""
        return self._line_of.get(entry_id)

    def is_on_path(self, entry_id: str) -> bool:
        index = self._row_of.get(entry_id)
        return index is not None and self._rows[index].on_path

    def is_folded(self, entry_id: str) -> bool:
        return entry_id in self._folded

    def row_text(self, line: int) -> str:
        """The plain text of display line ``line`` (what :meth:`render_line` draws)."""
        return self._line_text(line, self._compute_styles(plain=True)).plain

    def status_text(self) -> str:
        """``(i/N)``, the filter tag and the search, as pi's last line."""
        total = len(self._lines)
        parts = [f"({self._cursor + 1 if total else 0}/{total})"]
        tag = FILTER_TAGS.get(self._mode, "")
        if tag:
            parts.append(tag)
        if self._typing:
            parts.append(f"/{self._query}▏")
        elif self._query:
            parts.append(f"/{self._query}")
        return " ".join(parts)

    def set_store(self, store: SessionStore) -> None:
        """Show another session (the folds and the search are cleared)."""
        self._store = store
        self._checkpoints = CheckpointIndex(store)  # checkpoints wiring (issue 13)
        self._texts.clear()
        self._search_texts.clear()
        self._folded.clear()
        self._cursor_id = None
        self._built = False
        self._center_pending = True
        self.rebuild()

    def set_mode(self, mode: str) -> None:
        """Switch the filter; folds are cleared, the selection keeps its entry or an ancestor."""
        if mode not in FILTER_MODES:
            raise ValueError(f"unknown filter mode {mode!r}")
        self._mode = mode
        self._folded.clear()
        self.rebuild()

    def set_search(self, query: str) -> None:
        """Show only entries containing every whitespace-separated token (any case)."""
        if self._search_timer is not None:
            self._search_timer.stop()
            self._search_timer = None
        self._query = query
        tokens = query.lower().split()
        if tokens != self._tokens:
            self._tokens = tokens
            self._folded.clear()
            self.rebuild()
        else:
            self.post_message(self.Changed(self))

    def move_to(self, entry_id: str) -> bool:
        """Put the cursor on ``entry_id`` (or its nearest shown ancestor); False if neither."""
        line = self._nearest_line(entry_id)
        if line is None:
            return False
        self._set_cursor(line, center=True)
        return True

    def fold(self, entry_id: str) -> None:
        index = self._row_of.get(entry_id)
        if index is None or not self._foldable(index) or entry_id in self._folded:
            return
        self._folded.add(entry_id)
        self._relayout()

    def unfold(self, entry_id: str) -> None:
        if entry_id in self._folded:
            self._folded.discard(entry_id)
            self._relayout()

    def rebuild(self) -> None:
        """Flatten the store again (filters, search, order); the cursor keeps its entry."""
        if self._rebuild_timer is not None:
            self._rebuild_timer.stop()
            self._rebuild_timer = None
        started = time.perf_counter()
        # No garbage collection while 20k rows are made: none of it is cyclic garbage, and
        # collections would scan the new objects repeatedly (as SessionStore.open does).
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            rows, path_ids = build_rows(self._store, self._predicate())
        finally:
            if gc_was_enabled:
                gc.enable()
        self._rows = rows
        self._path_ids = path_ids
        self._markers = self._checkpoints.run_markers()  # checkpoints wiring (issue 13)
        self._row_of = {row.node.id: i for i, row in enumerate(rows)}
        self._folded &= self._row_of.keys()
        self._leaf_row_id = self._find_leaf_row()
        initial = not self._built
        if initial:
            self._cursor_id = self._leaf_row_id
        self._built = True
        self._relayout(initial=initial)
        self._last_rebuild = time.perf_counter()
        self.build_seconds = self._last_rebuild - started

    def leaf_moved(self) -> None:
        """The store's leaf moved: re-style only the rows whose path state changed."""
        store = self._store
        new_path = {n.id for n in store.path_to()}
        changed = self._path_ids ^ new_path
        self._path_ids = new_path
        dirty: set[str] = set()
        rows, row_of = self._rows, self._row_of
        for entry_id in changed:
            index = row_of.get(entry_id)
            if index is not None:
                rows[index].on_path = entry_id in new_path
                dirty.add(entry_id)
        old_leaf_row = self._leaf_row_id
        self._leaf_row_id = self._find_leaf_row()
        for marked in (old_leaf_row, self._leaf_row_id):
            if marked is not None:
                dirty.add(marked)
        self._refresh_ids(dirty)
        # The hidden-assistant rule depends on the leaf: a rebuild if that changes a row.
        shown = self._predicate()
        leaf = store.leaf
        if leaf is not None and leaf.id not in row_of and shown(leaf):
            self.schedule_rebuild()
        elif old_leaf_row is not None and old_leaf_row in row_of:
            try:
                old = store.node(old_leaf_row)
            except EntryNotFoundError:
                old = None
            if old is not None and not shown(old):
                self.schedule_rebuild()

    def entry_appended(self, entry_id: str) -> None:
        """An entry was appended: rebuild (throttled) if it is shown; labels re-style a row."""
        try:
            node = self._store.node(entry_id)
        except EntryNotFoundError:
            return
        if node.type == "custom" and node.parent_id is not None:  # checkpoints (issue 13)
            self._markers = self._checkpoints.run_markers()
            self._refresh_ids({node.parent_id})
        if node.type == "label":
            target = self._store.data(node).get("targetId")
            if isinstance(target, str):
                if self._mode == "labeled-only" or self._tokens:
                    self.schedule_rebuild()
                else:
                    self._refresh_ids({target})
        if self._predicate()(node):
            self.schedule_rebuild()

    def schedule_rebuild(self) -> None:
        """Rebuild soon, at most once per :data:`REBUILD_INTERVAL`."""
        if self._rebuild_timer is not None:
            return
        delay = max(0.0, REBUILD_INTERVAL - (time.perf_counter() - self._last_rebuild))
        self._rebuild_timer = self.set_timer(max(delay, 0.01), self._timed_rebuild)

    def _timed_rebuild(self) -> None:
        self._rebuild_timer = None
        self.rebuild()

    # ------------------------------------------------------------------ building

    def _predicate(self) -> Callable[[Node], bool]:
        base = tree_filter(self._store, self._mode)
        tokens = self._tokens
        if not tokens:
            return base
        matches = self._matches

        def shown(node: Node) -> bool:
            return base(node) and matches(node, tokens)

        return shown

    def _matches(self, node: Node, tokens: list[str]) -> bool:
        text = self._search_texts.get(node.id)
        if text is None:
            text = self._search_text(node)
            self._search_texts[node.id] = text
        label = self._store.label_of(node.id)
        if label:
            text = f"{label.lower()} {text}"
        return all(token in text for token in tokens)

    def _search_text(self, node: Node) -> str:
        """pi's searchable text, lowercased: role, one-line text, content start (no label)."""
        data = self._peek(node)
        parts = [node.role or "", self._entry_line(node)]
        message = data.get("message")
        if isinstance(message, dict):
            parts.append(message_text(message, " ")[:200])
            command = message.get("command")
            if isinstance(command, str):
                parts.append(command)
        kind = node.type
        if kind == "branch_summary":
            parts.append("branch summary")
        elif kind == "session_info":
            parts.append(f"title {data.get('name') or ''}")
        elif kind == "context_edit":
            verb = "omit" if data.get("replacement") is None else "replace"
            parts.append(f"context edit {verb} {data.get('targetId')}")
        custom_type = data.get("customType")
        if isinstance(custom_type, str):
            parts.append(custom_type)
        return " ".join(parts).lower()

    def _find_leaf_row(self) -> str | None:
        """The shown row standing for the leaf: the leaf or its nearest shown ancestor."""
        cur = self._store.leaf
        row_of = self._row_of
        while cur is not None:
            if cur.id in row_of:
                return cur.id
            cur = cur.parent
        return None

    def _relayout(self, *, initial: bool = False) -> None:
        """Recompute the shown lines from the rows and the folds; restore the cursor."""
        rows = self._rows
        folded = self._folded
        if folded:
            lines: list[int] = []
            i, n = 0, len(rows)
            while i < n:
                lines.append(i)
                i = rows[i].end if rows[i].node.id in folded else i + 1
        else:
            lines = list(range(len(rows)))
        self._lines = lines
        self._line_of = {rows[index].node.id: line for line, index in enumerate(lines)}
        self.virtual_size = Size(0, len(lines))
        old_cursor = self._cursor
        target: int | None = None
        if self._cursor_id is not None:
            target = self._nearest_line(self._cursor_id)
        if target is None and lines:
            target = len(lines) - 1 if initial else 0
        if target is None:
            # Nothing shown: the wanted entry is remembered for when rows come back.
            self._cursor = -1
            self.refresh()
            self.post_message(self.Changed(self))
            return
        self._cursor = target
        new_id = rows[lines[target]].node.id
        changed = new_id != self._cursor_id or old_cursor == -1
        self._cursor_id = new_id
        if self.size.height > 0:
            self._scroll_to_cursor(center=True, force=initial or self._center_pending)
            self._center_pending = False
        else:
            self._center_pending = self._center_pending or initial
        self.refresh()
        if changed or initial:
            self.post_message(self.Highlighted(new_id, self))
        self.post_message(self.Changed(self))

    def _nearest_line(self, entry_id: str) -> int | None:
        """Display line of ``entry_id`` or of its nearest shown ancestor."""
        line = self._line_of.get(entry_id)
        if line is not None:
            return line
        try:
            cur: Node | None = self._store.node(entry_id).parent
        except EntryNotFoundError:
            return None
        line_of = self._line_of
        while cur is not None:
            line = line_of.get(cur.id)
            if line is not None:
                return line
            cur = cur.parent
        return None

    def _foldable(self, index: int) -> bool:
        """Has shown children and is a top-level row or the first entry of a branch."""
        row = self._rows[index]
        return row.kids > 0 and (row.parent < 0 or self._rows[row.parent].kids > 1)

    # ------------------------------------------------------------------ texts

    def _entry_line(self, node: Node) -> str:
        """pi's one-line text of an entry, with escapes removed (cached per entry)."""
        text = self._texts.get(node.id)
        if text is None:
            data = self._peek(node)

            def find_call(call_id: str) -> dict[str, Any] | None:
                return self._find_call(node, call_id)

            raw = entry_text(data, find_call)
            text = strip_escapes(raw).replace("\n", " ").replace("\t", " ")[:DISPLAY_LIMIT]
            self._texts[node.id] = text
        return text

    def _peek(self, node: Node) -> dict[str, Any]:
        """The entry object, without keeping it parsed (the store caches what it parses)."""
        if node.data is not None:
            return node.data
        try:
            data = loads(self._store.raw_line(node))
        except (ValueError, OSError):
            return self._store.data(node)
        return data if isinstance(data, dict) else {}

    def _find_call(self, node: Node, call_id: str) -> dict[str, Any] | None:
        cur = node.parent
        for _ in range(_CALL_LOOKBACK):
            if cur is None:
                return None
            if cur.type == "message" and cur.role == "assistant":
                for block in tool_calls(self._peek(cur).get("message")):
                    if block.get("id") == call_id:
                        return block
            cur = cur.parent
        return None

    def _kind_style(self, node: Node, styles: _Styles) -> Style:
        if node.type == "message":
            role = node.role
            if role == "user":
                return styles.user
            if role == "assistant":
                return styles.assistant
            if role in ("toolResult", "bashExecution"):
                return styles.tool
        return styles.meta

    def _compute_styles(self, *, plain: bool = False) -> _Styles:
        if plain or not self.is_mounted:
            null = Style.null()
            return _Styles(*([null] * 13))
        get = self.get_component_rich_style
        return _Styles(
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

    def _line_text(self, line: int, styles: _Styles) -> Text:
        index = self._lines[line]
        row = self._rows[index]
        node = row.node
        is_cursor = line == self._cursor
        text = Text(style=styles.base, no_wrap=True, end="")
        append = text.append
        append("› " if is_cursor else "  ")
        if row.gutter:
            append(row.gutter, styles.guides)
        folded = node.id in self._folded
        connector = row.connector
        if connector:
            if folded or self._foldable(index):
                append(connector[0], styles.guides)
                append("⊞" if folded else "⊟", styles.fold)
                append(connector[2:], styles.guides)
            else:
                append(connector, styles.guides)
        elif folded:
            append("⊞ ", styles.fold)
        if row.on_path:
            append("• ", styles.active)
        label = self._store.label_of(node.id)
        if label:
            append(f"[{' '.join(strip_escapes(label).split())}] ", styles.label)
        body_start = len(text)
        append(self._entry_line(node), self._kind_style(node, styles))
        if self._tokens:
            lowered = text.plain.lower()
            for token in self._tokens:
                start = lowered.find(token, body_start)
                while start >= 0:
                    text.stylize(styles.match, start, start + len(token))
                    start = lowered.find(token, start + len(token))
        changed = self._markers.get(node.id)  # checkpoints wiring (issue 13)
        if changed:
            append(f"  ✎ {changed} file{'s' if changed != 1 else ''}", styles.label)
        if node.id == self._leaf_row_id:
            append("  ← leaf", styles.leaf)
        if is_cursor:
            text.stylize(styles.cursor)
        return text

    # ------------------------------------------------------------------ rendering

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = None

    def render_lines(self, crop: Any) -> list[Strip]:
        if self._center_pending and self.size.height > 0 and self._cursor >= 0:
            self._center_pending = False
            self._scroll_to_cursor(center=True, force=True)
        self._styles = self._compute_styles()
        strips = super().render_lines(crop)
        if self.render_hook is not None:
            self.render_hook(time.perf_counter())
        return strips

    def render_line(self, y: int) -> Strip:
        styles = self._styles or self._compute_styles()
        width = self.size.width
        line = self.scroll_offset.y + y
        if line >= len(self._lines) or line < 0:
            if line == 0 and not self._lines:
                message = "No entries match." if self._store.roots() else "No entries in session."
                text = Text.assemble("  ", (message, styles.empty), style=styles.base, end="")
                return Strip(list(text.render(self.app.console))).crop_extend(0, width, styles.base)
            return Strip.blank(width, styles.base)
        text = self._line_text(line, styles)
        pad = styles.base + styles.cursor if line == self._cursor else styles.base
        strip = Strip(list(text.render(self.app.console)))
        return strip.crop_extend(self._hscroll, self._hscroll + width, pad)

    def _refresh_ids(self, entry_ids: set[str]) -> None:
        top = self.scroll_offset.y
        bottom = top + self.size.height
        for entry_id in entry_ids:
            line = self._line_of.get(entry_id)
            if line is not None and top <= line < bottom:
                self.refresh_line(line)

    # ------------------------------------------------------------------ cursor

    def _set_cursor(self, line: int, *, center: bool = False) -> None:
        if not self._lines:
            return
        line = max(0, min(line, len(self._lines) - 1))
        old = self._cursor
        old_id = self._cursor_id
        self._cursor = line
        entry_id = self._rows[self._lines[line]].node.id
        self._cursor_id = entry_id
        if not self._scroll_to_cursor(center=center):
            if 0 <= old < len(self._lines):
                self.refresh_line(old)
            self.refresh_line(line)
        if entry_id != old_id or old != line:
            self.post_message(self.Highlighted(entry_id, self))
            self.post_message(self.Changed(self))

    def _scroll_to_cursor(self, *, center: bool = False, force: bool = False) -> bool:
        """Scroll so the cursor row (and its text) shows; True when everything repaints.

        ``center``: an off-screen cursor is centred (else the view moves just enough);
        ``force``: centre it even when it is already on screen.
        """
        line = self._cursor
        if line < 0:
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
            target = min(target, max(0, len(self._lines) - height))
            if target != top:
                self.scroll_to(y=target, animate=False, force=True)
                repaint = True
        if width > 0:
            indent = self._rows[self._lines[line]].indent + 2
            margin = min(30, width // 2)
            hscroll = self._hscroll
            if indent < hscroll or indent > hscroll + width - margin:
                hscroll = max(0, indent - width // 3)
            if hscroll != self._hscroll:
                self._hscroll = hscroll
                self.refresh()
                repaint = True
        return repaint

    # ------------------------------------------------------------------ events

    def on_mount(self) -> None:
        if not self._built:
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
        """Search as the user types; on a big session, only once typing pauses."""
        if self.build_seconds <= SLOW_BUILD:
            self.set_search(query)
            return
        self._query = query
        self.post_message(self.Changed(self))
        if self._search_timer is not None:
            self._search_timer.stop()
        self._search_timer = self.set_timer(SEARCH_DELAY, self._search_now)

    def _search_now(self) -> None:
        self._search_timer = None
        self.set_search(self._query)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        line = offset.y + self.scroll_offset.y
        if not 0 <= line < len(self._lines):
            return
        event.stop()
        index = self._lines[line]
        row = self._rows[index]
        column = offset.x + self._hscroll
        glyph = 2 + len(row.gutter) + (1 if row.connector else 0)
        folded = row.node.id in self._folded
        if (folded or (row.connector and self._foldable(index))) and column == glyph:
            self._toggle_fold(index)
            return
        self._set_cursor(line)
        self.post_message(self.Selected(row.node.id, self))

    def on_resize(self, event: events.Resize) -> None:
        if self._cursor >= 0:
            self._scroll_to_cursor(center=True, force=self._center_pending)
            self._center_pending = False

    def _toggle_fold(self, index: int) -> None:
        entry_id = self._rows[index].node.id
        if entry_id in self._folded:
            self._folded.discard(entry_id)
        else:
            self._folded.add(entry_id)
        self._cursor_id = entry_id
        self._relayout()

    # ------------------------------------------------------------------ actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear_search":
            return bool(self._typing or self._query)
        return True

    def action_cursor_up(self) -> None:
        if self._lines:
            self._set_cursor((self._cursor - 1) % len(self._lines))

    def action_cursor_down(self) -> None:
        if self._lines:
            self._set_cursor((self._cursor + 1) % len(self._lines))

    def action_page_up(self) -> None:
        self._set_cursor(self._cursor - max(1, self.size.height - 1))

    def action_page_down(self) -> None:
        self._set_cursor(self._cursor + max(1, self.size.height - 1))

    def action_first(self) -> None:
        self._set_cursor(0)

    def action_last(self) -> None:
        self._set_cursor(len(self._lines) - 1)

    def action_fold(self) -> None:
        """Fold the current segment, or jump to the start of the previous one."""
        if self._cursor < 0:
            return
        index = self._lines[self._cursor]
        rows = self._rows
        if self._foldable(index) and rows[index].node.id not in self._folded:
            self._toggle_fold(index)
            return
        parent = rows[index].parent
        while parent >= 0:
            grand = rows[parent].parent
            if grand < 0 or rows[grand].kids > 1:
                break
            parent = grand
        if parent >= 0:
            line = self._line_of.get(rows[parent].node.id)
            if line is not None:
                self._set_cursor(line)

    def action_unfold(self) -> None:
        """Unfold the current segment, or jump to the next branch point (or the branch end)."""
        if self._cursor < 0:
            return
        index = self._lines[self._cursor]
        rows = self._rows
        if rows[index].node.id in self._folded:
            self._toggle_fold(index)
            return
        current = index
        while True:
            row = rows[current]
            if row.kids == 0 or (current != index and row.node.id in self._folded):
                break
            if row.kids > 1:
                current += 1  # the first child follows its parent
                break
            current += 1  # the only child
        if current != index:
            line = self._line_of.get(rows[current].node.id)
            if line is not None:
                self._set_cursor(line)

    def action_select(self) -> None:
        if self._typing:
            self._typing = False
            if self._search_timer is not None:
                self._search_now()
            self.post_message(self.Changed(self))
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
        self.post_message(self.Changed(self))

    def action_clear_search(self) -> None:
        self._typing = False
        self.set_search("")
