"""``SessionStore``: the session tree in memory, its leaf, appends, and the projection.

The file is the only truth. The store keeps a skeleton per entry (see :mod:`node`), parses
full entries on demand, and writes every change as one appended line, disk first, memory
second: if the write fails the store is unchanged and the caller gets ``SessionWriteError``.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import weakref
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import compress, repeat
from operator import attrgetter, is_, not_
from pathlib import Path
from typing import Any

from pitui.lru import LruCache
from pitui.session import codec
from pitui.session.appends import EntryAppends
from pitui.session.disk import SessionDisk
from pitui.session.entries import new_header, session_file_name
from pitui.session.errors import (
    EntryNotFoundError,
    ReadOnlySessionError,
    SessionChangedError,
    SessionError,
)
from pitui.session.events import (
    EntriesReloaded,
    EntryAppended,
    FileChanged,
    LeafMoved,
    SessionEvent,
    WriterChanged,
)
from pitui.session.ids import iso_to_ms, new_entry_id
from pitui.session.index import build_children, link_nodes
from pitui.session.loader import LoadResult, LoadWarning, MoreLines, load_session_file
from pitui.session.lock import SessionLock
from pitui.session.node import (
    LEAF_MARKER_TYPE,
    UNSET,
    Node,
    depth_of,
    make_node,
    release,
    unlink_parents,
)
from pitui.session.projection import (
    Projection,
    build_projection,
    entry_messages,
    extends_parent_projection,
    model_from_entry,
)
from pitui.session.shapes import message_text
from pitui.session.writer import create_exclusive

_PROJECTION_CACHE_SIZE = 16
_parent_of = attrgetter("parent")
_hidden_of = attrgetter("hidden")


def _is_compaction(node: Node) -> bool:
    return node.type == "compaction"


def _is_model_source(node: Node) -> bool:
    return node.type == "model_change" or (node.type == "message" and node.role == "assistant")


def _is_thinking_source(node: Node) -> bool:
    return node.type == "thinking_level_change"


def _visible(node: Node | None) -> Node | None:
    """``node`` or its nearest ancestor that is not a hidden marker."""
    while node is not None and node.hidden:
        node = node.parent
    return node


@dataclass(frozen=True)
class BranchPosition:
    """See :meth:`SessionStore.branch_position`."""

    branch: tuple[int, int] | None
    """(1-based index, sibling count) at the nearest fork above, or None on a linear path."""
    leaf_children: int

    def text(self) -> str:
        return f"branch {self.branch[0]} of {self.branch[1]}" if self.branch else ""


def _timestamp_key(node: Node) -> float:
    ms = iso_to_ms(node.timestamp)
    return ms if ms is not None else float("inf")


_OPEN_STORES: weakref.WeakSet[SessionStore] = weakref.WeakSet()
"""Every store still alive, for ``_unlink_open_stores``."""


@atexit.register
def _unlink_open_stores() -> None:
    """At interpreter exit, drop the parent links of every store still alive.

    Their nodes are freed when the interpreter clears the modules, in whatever order it takes:
    a store's branch freed from its leaf would recurse once per entry and overflow the C stack
    (a segfault at exit on a 200k-entry session). Runs after the atexit handlers registered
    later than this module's import, which may still use a store."""
    for store in list(_OPEN_STORES):
        unlink_parents(store.all_nodes())


class SessionStore(EntryAppends):
    """One session: header, entries (a tree), the leaf, labels, name, and projections."""

    def __init__(
        self,
        header: dict[str, Any],
        *,
        path: Path | None,
        folder: Path | None,
        load: LoadResult | None = None,
        read_only: bool = False,
    ) -> None:
        self.header = header
        self._header_raw = load.header_raw if load is not None else b""
        self.path = path
        self.folder = folder if folder is not None else (path.parent if path else None)
        self.read_only = read_only
        self.read_only_reason: str | None = None
        self.holder: str | None = None
        """Who holds the lock (``"pid N"``) when the store is read-only because another
        process has the session open for writing; None otherwise."""
        self.warnings: list[LoadWarning] = list(load.warnings) if load else []
        self._nodes: list[Node] = []
        self._by_id: dict[str, Node] = {}
        self._roots: list[Node] = []
        self._labels: dict[str, str] = {}
        self._label_times: dict[str, Any] = {}
        self._name: str | None = None
        self._listeners: list[Callable[[SessionEvent], None]] = []
        self._projections: LruCache[str | None, Projection] = LruCache(_PROJECTION_CACHE_SIZE)
        self._disk = SessionDisk(path, load)
        self.leaf: Node | None = None
        self._children_built = False
        if load is not None:
            self._index(load)
        # Nodes are not tracked by the garbage collector: break their links when we go.
        # (Not at interpreter exit: the process is going away and the loop would only cost
        # time; only the parent links are dropped then, see _unlink_open_stores.)
        weakref.finalize(self, release, self._nodes).atexit = False
        _OPEN_STORES.add(self)

    # ------------------------------------------------------------------ construction

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        read_only: bool = False,
        folder: Path | None = None,
        cwd: str | None = None,
    ) -> SessionStore:
        """Open an existing session file. Never writes to it.

        Raises :class:`SessionFileError` when it is missing, unreadable, not a regular file or
        not a session. When it cannot be locked for writing (another process holds it, the disk
        is full, the file is not writable) the store opens read-only and says why in
        ``read_only_reason``.
        """
        file_path = Path(path)
        # No garbage collection while 200k skeletons are created and linked: nothing here is
        # cyclic garbage, and collections would scan every new object repeatedly.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            return cls._open(file_path, read_only, folder, cwd)
        finally:
            if gc_was_enabled:
                gc.enable()

    @classmethod
    def _open(
        cls, file_path: Path, read_only: bool, folder: Path | None, cwd: str | None
    ) -> SessionStore:
        load = load_session_file(file_path, keep_open=True)
        header = load.header
        if header is None:
            # An empty (0-byte) file: a new session that will be written to this path.
            store = cls(
                new_header(cwd or os.getcwd(), None), path=file_path, folder=folder, load=load
            )
        else:
            store = cls(header, path=file_path, folder=folder, load=load)
        store.read_only = read_only
        if not read_only:
            store._take_lock()
        return store

    def _take_lock(self) -> None:
        """Lock the file; if it cannot be locked it is never written: read-only, with why."""
        attempt = self._disk.take_lock()
        if attempt.lock is not None:
            return
        self.read_only = True
        self.holder = attempt.holder
        if attempt.holder is not None:
            self.read_only_reason = (
                f"This session is open in another pitui ({attempt.holder}), so it is open "
                "read-only here."
            )
        else:
            self.read_only_reason = attempt.problem

    @property
    def held_elsewhere(self) -> bool:
        """Read-only only because another process holds the lock (see :meth:`take_over`)."""
        return self.read_only and self.holder is not None and self._disk.changed is None

    def lock_is_free(self) -> bool:
        """For a store :attr:`held_elsewhere`: True once the other process let go of the lock
        (a probe; nothing is taken)."""
        if not self.held_elsewhere or self.path is None:
            return False
        return SessionLock.is_free(self.path)

    def take_over(self) -> bool:
        """Become the writer of a session another process held (it has closed it): take in
        what it appended, then take the lock. True when this store may write now; False (with
        :attr:`read_only_reason` saying why) when the lock is still held or cannot be taken."""
        if not self.held_elsewhere:
            return not self.read_only
        self._sync_file()
        if self._disk.changed is not None:
            return False
        holder = self.holder
        self.read_only = False
        self._take_lock()  # read-only again, with why, if it cannot be taken
        if self.read_only:
            return False
        self.read_only_reason = None
        self.holder = None
        self._emit(WriterChanged(holder))
        return True

    @property
    def stored_cwd_missing(self) -> bool:
        """The saved session's working directory is set but no longer a directory here
        (another machine, a deleted checkout): the caller asks where to work."""
        cwd = self.cwd
        return bool(self.path is not None and self.persisted and cwd) and not os.path.isdir(cwd)

    @classmethod
    def open_or_create(
        cls, path: str | os.PathLike[str], cwd: str, *, folder: Path | None = None
    ) -> SessionStore:
        """Open ``path``, or start a new session that will be written there (as pi's --session)."""
        file_path = Path(path)
        if not file_path.exists() and not file_path.is_symlink():
            return cls.create_at(file_path, cwd)
        return cls.open(file_path, folder=folder, cwd=cwd)

    @classmethod
    def create(
        cls,
        folder: str | os.PathLike[str],
        cwd: str,
        *,
        session_id: str | None = None,
        parent_session: str | None = None,
    ) -> SessionStore:
        """A new session in ``folder``; the file appears at the first user or assistant message."""
        header = new_header(cwd, parent_session, session_id)
        folder_path = Path(folder)
        return cls(header, path=folder_path / session_file_name(header), folder=folder_path)

    @classmethod
    def create_at(cls, path: str | os.PathLike[str], cwd: str) -> SessionStore:
        file_path = Path(path)
        return cls(new_header(cwd, None), path=file_path, folder=file_path.parent)

    @classmethod
    def in_memory(cls, cwd: str) -> SessionStore:
        """A session that is never written anywhere (``--no-session``)."""
        return cls(new_header(cwd, None), path=None, folder=None)

    def _index(self, load: LoadResult) -> None:
        by_id, nodes = link_nodes(load.nodes, self.warnings)
        self._by_id = by_id
        self._nodes = nodes
        self._roots = list(compress(nodes, map(not_, map(_parent_of, nodes))))
        # Labels and names replay in file order (the loader parsed those lines already).
        eager = load.eager if not load.migrated else nodes
        for node in eager:
            if by_id.get(node.id) is not node:
                continue  # a duplicate id: the later line won
            if node.type == "label":
                self._apply_label(node)
            elif node.type == "session_info":
                self._apply_name(node)
        if nodes:
            last = nodes[-1]
            if last.hidden:
                self.leaf = last.parent
                self._disk.reopen_leaf_id = last.parent.id if last.parent else None
            else:
                self.leaf = last
                self._disk.reopen_leaf_id = last.id

    # ------------------------------------------------------------------ properties

    @property
    def session_id(self) -> str:
        return str(self.header.get("id"))

    @property
    def cwd(self) -> str:
        cwd = self.header.get("cwd")
        return cwd if isinstance(cwd, str) else ""

    @property
    def parent_session(self) -> str | None:
        value = self.header.get("parentSession")
        return value if isinstance(value, str) else None

    @property
    def persisted(self) -> bool:
        """True when the session file exists on disk."""
        return self._disk.on_disk

    @property
    def session_name(self) -> str | None:
        return self._name

    @property
    def labels(self) -> dict[str, str]:
        return dict(self._labels)

    def label_of(self, entry_id: str) -> str | None:
        return self._labels.get(entry_id)

    @property
    def label_times(self) -> dict[str, Any]:
        """When each label was set: target id -> the timestamp of its label entry."""
        return dict(self._label_times)

    def append_entries(
        self, entries: list[dict[str, Any]], lines: list[bytes] | None = None
    ) -> None:
        """Append whole entries as they are (ids and parents set: a copied path); ``lines``:
        each one's JSONL line, already encoded, written as it is."""
        if lines is not None:
            self._disk.preencoded = {
                str(e["id"]): line for e, line in zip(entries, lines, strict=True)
            }
        for entry in entries:
            self._append(entry)

    @property
    def entry_count(self) -> int:
        """Entries in memory, hidden leaf markers included (O(1); ``len()`` counts visible)."""
        return len(self._nodes)

    def __len__(self) -> int:
        return sum(1 for n in self._nodes if not n.hidden)

    def __contains__(self, entry_id: object) -> bool:
        return isinstance(entry_id, str) and entry_id in self._by_id

    def nodes(self) -> Iterator[Node]:
        """Every visible entry in file order."""
        return (n for n in self._nodes if not n.hidden)

    def all_nodes(self) -> list[Node]:
        """Every entry in file order, hidden leaf markers included (a snapshot)."""
        return list(self._nodes)

    def nodes_from(self, start: int) -> list[Node]:
        """The entries from index ``start`` on (file order, hidden ones included): what was
        appended since a reader saw ``entry_count`` entries, in O(new entries)."""
        return self._nodes[start:]

    def node(self, entry_id: str) -> Node:
        node = self._by_id.get(entry_id)
        if node is None:
            self._sync_file()  # another writer may have appended it
            node = self._by_id.get(entry_id)
            if node is None:
                raise EntryNotFoundError(entry_id)
        return node

    def get(self, entry_id: str) -> dict[str, Any]:
        """The full entry object (parsed on first use, then cached)."""
        return self.data(self.node(entry_id))

    def find(self, entry_id: str) -> dict[str, Any] | None:
        node = self._by_id.get(entry_id)
        return self.data(node) if node is not None else None

    def data(self, node: Node) -> dict[str, Any]:
        """The full entry of ``node``, parsed from its line on first use.

        Raises :class:`SessionChangedError` (one sentence) if the line is no longer in the file
        because another program truncated or rewrote it.
        """
        if node.data is None:
            self._sync_file(for_read=True)
            raw = self._disk.read_raw(node)
            try:
                data: Any = codec.loads(raw)
            except ValueError:
                data = None
            problem = self._disk.check_read(node, data)
            if problem is not None:
                self._file_changed()
                raise problem
            node.data = data
        return node.data

    def read(self, node: Node) -> dict[str, Any]:
        """The full entry, parsed on demand but not kept (views of far-off entries)."""
        if node.data is not None:
            return node.data
        return codec.loads(self._disk.read_raw(node))

    @property
    def lines_as_stored(self) -> bool:
        """Every entry with a file offset is stored in :attr:`path` exactly as it is (false
        for a migrated file until it is rewritten, and for a session not written yet)."""
        return self._disk.on_disk and not self._disk.needs_rewrite

    def stored_span(self, node: Node) -> tuple[int, int] | None:
        """``(offset, length)`` of ``node``'s line in :attr:`path` when the file holds it exactly
        as it is (for bulk readers such as :class:`pitui.session.line_reader.LineReader`)."""
        if self._disk.has_stored_line(node):
            return node.offset, node.length
        return None

    def raw_line(self, node: Node) -> bytes:
        """The entry's line as stored (without the newline); re-encoded if not stored as-is."""
        if self._disk.has_stored_line(node):
            self._sync_file(for_read=True)
            changed = self._disk.changed
            if changed is None or changed.kind in ("replaced", "deleted"):
                # (A replaced or deleted file is still read whole from the descriptor we hold.)
                raw = self._disk.read_raw(node)
                if len(raw) == node.length:
                    return raw
                self._disk.check_read(node, None)  # shorter: the file was cut
                self._file_changed()
            # The bytes at the old place may be anything now: only what parses is copied.
            return codec.dumps_line(self.data(node))[:-1]
        return codec.dumps_line(self.data(node))[:-1]

    # ------------------------------------------------------------------ the file changing

    @property
    def file_change(self) -> SessionChangedError | None:
        """How the file changed under this store (it is read-only since), or None."""
        return self._disk.changed

    def refresh(self) -> None:
        """Look at the file now: take in what another writer appended, or notice that it was
        replaced, truncated or deleted (subscribers get ``EntriesReloaded`` / ``FileChanged``)."""
        self._sync_file()

    def reopen(self) -> SessionStore:
        """Close this store and open the file as it is now (after :attr:`file_change`)."""
        if self.path is None:
            raise SessionError("This session has no file to reopen.")
        self.close()
        return type(self).open(self.path, folder=self.folder, cwd=self.cwd)

    def _sync_file(self, for_read: bool = False) -> None:
        disk = self._disk
        if disk.changed is not None:
            return
        more = disk.sync(self.header, for_read=for_read)
        if more is not None:
            self._adopt(more)
        if disk.changed is not None:
            self._file_changed()

    def _file_changed(self) -> None:
        change = self._disk.changed
        if change is None or self.read_only_reason == str(change):
            return
        self.read_only = True
        self.read_only_reason = str(change)
        self._emit(FileChanged(change.kind, str(change), change.can_reopen))

    def _adopt(self, more: MoreLines, last_line: bool = True) -> None:
        """Add entries another writer appended: linked, indexed, labels and names applied.

        The leaf stays where it is (the user's branch does not jump to the other writer's).
        ``last_line``: these are the file's last lines (else one of ours follows them)."""
        self.warnings.extend(more.warnings)
        added: list[Node] = []
        children_built = self._children_built
        for node in more.nodes:
            if node.id in self._by_id:
                self.warnings.append(
                    LoadWarning(node.line, f"entry {node.id} was appended again; ignored")
                )
                continue
            parent = self._by_id.get(node.parent_id) if node.parent_id is not None else None
            if node.parent_id is not None and parent is None:
                self.warnings.append(
                    LoadWarning(
                        node.line,
                        f"entry {node.id} has a missing parent {node.parent_id}; shown as a root",
                    )
                )
            node.parent = parent
            node.depth = 0 if parent is None else (parent.depth + 1 if parent.depth >= 0 else -1)
            self._nodes.append(node)
            self._by_id[node.id] = node
            if parent is None:
                self._roots.append(node)
            elif children_built:
                parent.add_child(node)
            if node.type == "label":
                self._apply_label(node)
            elif node.type == "session_info":
                self._apply_name(node)
            added.append(node)
        if not added:
            return
        last = self._nodes[-1]
        if last_line:
            self._disk.reopen_leaf_id = (
                (last.parent.id if last.parent else None) if last.hidden else last.id
            )
        self._emit(EntriesReloaded(tuple(n.id for n in added if not n.hidden)))

    # ------------------------------------------------------------------ tree

    def path_to(self, leaf_id: str | Any | None = UNSET) -> list[Node]:
        """Root → leaf (the current leaf by default), hidden markers left out."""
        leaf = self.leaf if leaf_id is UNSET else (None if leaf_id is None else self.node(leaf_id))
        out: list[Node] = []
        cur = leaf
        while cur is not None:
            if not cur.hidden:
                out.append(cur)
            cur = cur.parent
        out.reverse()
        return out

    def roots(self) -> list[Node]:
        """Roots in file order (null parent, self-parent, orphan, cycle break)."""
        return self._lift_hidden(self._roots)

    def children(self, entry_id: str | None) -> list[Node]:
        """Children in file order (``None`` for the roots)."""
        if entry_id is None:
            return self.roots()
        node = self.node(entry_id)
        self._ensure_children()
        return self._lift_hidden(node.children or [])

    def tree_children(self, entry_id: str | None) -> list[Node]:
        """Children in pi's tree order: by timestamp, ties in file order."""
        kids = self.children(entry_id)
        if entry_id is None or len(kids) < 2:
            return kids
        return sorted(kids, key=_timestamp_key)

    def branch_position(self, leaf_id: str | Any | None = UNSET) -> BranchPosition:
        """Where ``leaf_id`` (default: the leaf) is in the tree: ``(index, count)`` among the
        siblings at the fork nearest to it on its path (pi's tree order, as
        :meth:`tree_children`), and how many children the leaf itself has (its next append
        makes a new branch when it has some).

        Never builds the whole-tree children index: with it already built the walk stops at
        the nearest fork; without it, read-only passes over the skeletons count children (in
        C, ~0.1 s at 1M entries), so it may run in a worker thread while the UI appends.
        """
        leaf = self.leaf if leaf_id is UNSET else (None if leaf_id is None else self.node(leaf_id))
        leaf = _visible(leaf)
        if leaf is None:
            return BranchPosition(None, 0)
        kids: Callable[[Node], list[Node]]
        roots: Callable[[], list[Node]]
        if self._children_built:
            kids = self._indexed_children
            count: Callable[[Node], int] = lambda n: len(self._indexed_children(n))  # noqa: E731
            roots = self.roots
        else:
            nodes = list(self._nodes)  # a snapshot: the UI thread may append meanwhile
            hidden = list(compress(nodes, map(_hidden_of, nodes)))
            watch = {id(n) for n in self.path_to(leaf.id)} | {id(h) for h in hidden}
            direct = Counter(filter(watch.__contains__, map(id, map(_parent_of, nodes))))
            # Children of hidden markers (a chain of thousands is fine: nothing recurses).
            hidden_ids = {id(h) for h in hidden}
            under_hidden: dict[int, list[Node]] = {}
            for n in nodes:
                if n.parent is not None and id(n.parent) in hidden_ids:
                    under_hidden.setdefault(id(n.parent), []).append(n)

            def count(node: Node) -> int:
                # Direct children, a hidden child standing for its own (visible) children.
                total, stack = 0, [node]
                while stack:
                    current = stack.pop()
                    total += direct.get(id(current), 0)
                    for h in under_hidden_markers(current):
                        total -= 1
                        stack.append(h)
                return total

            def under_hidden_markers(node: Node) -> list[Node]:
                if not hidden:
                    return []
                return [c for c in direct_children(node) if c.hidden]

            def direct_children(node: Node) -> list[Node]:
                if id(node) in hidden_ids:
                    return under_hidden.get(id(node), [])
                if direct.get(id(node), 0) == 0:
                    return []
                return list(compress(nodes, map(is_, map(_parent_of, nodes), repeat(node))))

            def lift(start: list[Node]) -> list[Node]:
                out: list[Node] = []
                stack = list(reversed(start))
                while stack:
                    n = stack.pop()
                    if n.hidden:
                        stack.extend(reversed(under_hidden.get(id(n), [])))
                    else:
                        out.append(n)
                return out

            def kids(node: Node) -> list[Node]:
                return lift(direct_children(node))

            def roots() -> list[Node]:
                return lift(list(self._roots))

        leaf_children = count(leaf)
        cur = leaf
        while True:
            parent = _visible(cur.parent)
            if parent is None:
                siblings = roots()
            elif count(parent) > 1:
                siblings = sorted(kids(parent), key=_timestamp_key)
            else:
                cur = parent
                continue
            if len(siblings) > 1:
                index = next((i for i, s in enumerate(siblings) if s is cur), 0)
                return BranchPosition((index + 1, len(siblings)), leaf_children)
            if parent is None:
                return BranchPosition(None, leaf_children)
            cur = parent

    def _indexed_children(self, node: Node) -> list[Node]:
        return self._lift_hidden(node.children or [])

    def _ensure_children(self) -> None:
        """Children lists are built on first use (the projection never needs them)."""
        if not self._children_built:
            build_children(self._nodes)
            self._children_built = True

    def _lift_hidden(self, nodes: list[Node]) -> list[Node]:
        """``nodes`` with each hidden marker replaced by its children, in order (iterative: a
        chain of thousands of markers is fine)."""
        if not any(n.hidden for n in nodes):
            return list(nodes)
        self._ensure_children()
        out: list[Node] = []
        stack: list[Node] = list(reversed(nodes))
        while stack:
            n = stack.pop()
            if n.hidden:
                stack.extend(reversed(n.children or []))
            else:
                out.append(n)
        return out

    def tree(self) -> dict[str, list[str]]:
        """Parent id → ordered child ids (``"null"`` for roots); only parents with children."""
        out: dict[str, list[str]] = {}
        roots = self.roots()
        if roots:
            out["null"] = [n.id for n in roots]
        self._ensure_children()
        for node in self._nodes:
            if node.hidden or not node.children:
                continue
            kids = self.tree_children(node.id)
            if kids:
                out[node.id] = [n.id for n in kids]
        return out

    # ------------------------------------------------------------------ leaf movement

    def branch(self, entry_id: str) -> None:
        """Move the leaf to ``entry_id``; nothing is written."""
        self._move_leaf(self.node(entry_id))

    def reset_leaf(self) -> None:
        """Leaf = nothing: the next append starts a new root."""
        self._move_leaf(None)

    def _move_leaf(self, node: Node | None) -> None:
        old = self.leaf_id
        self.leaf = node
        new = self.leaf_id
        if old != new:
            self._emit(LeafMoved(old, new))

    # ------------------------------------------------------------------ projection

    def project(self, leaf_id: str | Any | None = UNSET) -> Projection:
        """The model-visible context at ``leaf_id`` (default: the current leaf). Cached per leaf."""
        leaf = self.leaf if leaf_id is UNSET else (None if leaf_id is None else self.node(leaf_id))
        key = leaf.id if leaf is not None else None
        cached = self._projections.get(key)
        if cached is not None:
            return cached
        projection = self._compute_projection(leaf)
        self._remember(key, projection)
        return projection

    def context_nodes(self, leaf: Node | None) -> tuple[list[Node], bool]:
        """pi's ``buildContextEntries``: (entries, whether the first one is the head compaction)."""
        if leaf is None:
            return [], False
        anchor = self._nearest(leaf, "anchor", _is_compaction)
        after: list[Node] = []
        cur: Node | None = leaf
        while cur is not None and cur is not anchor:
            if not cur.hidden:
                after.append(cur)
            cur = cur.parent
        after.reverse()
        if anchor is None:
            return after, False
        kept: list[Node] = []
        first_kept_id = self.data(anchor).get("firstKeptEntryId")
        first = self._by_id.get(first_kept_id) if isinstance(first_kept_id, str) else None
        if first is not None and first is not anchor:
            chain = self._chain_up_to(anchor.parent, first)
            if chain:
                kept = [
                    n
                    for n in reversed(chain)
                    if not n.hidden and not (n.type == "message" and n.role == "system")
                ]
        return [anchor, *kept, *after], True

    @staticmethod
    def _chain_up_to(start: Node | None, target: Node) -> list[Node]:
        """``start`` and its ancestors up to ``target`` (inclusive), or [] if it is not one."""
        chain: list[Node] = []
        cur = start
        # The kept range is short: walk a little first, and only use depths when it is not.
        for _ in range(2048):
            if cur is None:
                return []
            chain.append(cur)
            if cur is target:
                return chain
            cur = cur.parent
        if cur is None or depth_of(target) >= depth_of(cur):
            return [] if cur is not target else [*chain, cur]
        while cur is not None and cur.depth >= target.depth:
            chain.append(cur)
            if cur is target:
                return chain
            cur = cur.parent
        return []

    def _compute_projection(self, leaf: Node | None) -> Projection:
        if leaf is None:
            return Projection(None)
        context, head = self.context_nodes(leaf)
        return build_projection(
            leaf.id, context, self.data, head, self._model_at(leaf), self._thinking_at(leaf)
        )

    def _model_at(self, leaf: Node) -> dict[str, Any] | None:
        source = self._nearest(leaf, "model_src", _is_model_source)
        return model_from_entry(self.data(source)) if source is not None else None

    def _thinking_at(self, leaf: Node) -> str:
        source = self._nearest(leaf, "think_src", _is_thinking_source)
        if source is None:
            return "off"
        level = self.data(source).get("thinkingLevel")
        return level if isinstance(level, str) else "off"

    @staticmethod
    def _nearest(node: Node, attr: str, predicate: Callable[[Node], bool]) -> Node | None:
        """Nearest ancestor-or-self matching ``predicate``, memoized on every node walked."""
        stack: list[Node] = []
        cur: Node | None = node
        result: Node | None = None
        while cur is not None:
            memo = getattr(cur, attr)
            if memo is not UNSET:
                result = memo
                break
            if predicate(cur):
                result = cur
                setattr(cur, attr, cur)
                break
            stack.append(cur)
            cur = cur.parent
        for n in stack:
            setattr(n, attr, result)
        return result

    def _remember(self, key: str | None, projection: Projection) -> None:
        self._projections.put(key, projection)

    def _extend_projection(self, node: Node) -> None:
        """Update the cached projection of the parent incrementally for a plain append."""
        parent = node.parent
        key = parent.id if parent is not None else None
        base = self._projections.peek(key)
        if base is None or not extends_parent_projection(node):
            return
        projection = base.extended()
        projection.leaf_id = node.id
        data = self.data(node)
        for message in entry_messages(data, False):
            projection.messages.append(message)
            projection.source_entry_ids.append(node.id)
        projection.context_entry_ids.append(node.id)
        if _is_model_source(node):
            projection.model = model_from_entry(data)
        elif node.type == "thinking_level_change":
            level = data.get("thinkingLevel")
            projection.thinking_level = level if isinstance(level, str) else "off"
        self._remember(node.id, projection)

    # ------------------------------------------------------------------ events

    def subscribe(self, listener: Callable[[SessionEvent], None]) -> Callable[[], None]:
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def _emit(self, event: SessionEvent) -> None:
        for listener in list(self._listeners):
            listener(event)

    def _append(self, entry: dict[str, Any]) -> str:
        if self.read_only:
            if self._disk.changed is not None:
                raise self._disk.changed
            raise ReadOnlySessionError(
                self.read_only_reason or "This session is open read-only; fork it to continue."
            )
        # What another writer appended comes first; a file that changed otherwise stops here.
        self._sync_file()
        if self._disk.changed is not None:
            raise self._disk.changed
        if entry["id"] in self._by_id:  # the other writer took this id meanwhile
            entry["id"] = new_entry_id(self._by_id)
        message = entry.get("message")
        role = message.get("role") if isinstance(message, dict) else None
        node = make_node(
            entry["id"],
            entry["parentId"],
            entry["type"],
            role if isinstance(role, str) else None,
            entry["timestamp"],
            data=entry,
        )
        if entry["type"] == "custom" and entry.get("customType") == LEAF_MARKER_TYPE:
            node.hidden = True
        parent = self._by_id.get(entry["parentId"]) if entry["parentId"] is not None else None
        # Disk first: raises before anything changes in memory.
        late = self._disk.persist(node, self.header, lambda: self._nodes, self.data, self.warnings)
        if late is not None:
            self._adopt(late, last_line=False)
        old_leaf = self.leaf_id
        node.parent = parent
        # Depth stays unknown (-1) until someone asks, if the parent's is not known yet.
        if parent is None:
            node.depth = 0
        elif parent.depth >= 0:
            node.depth = parent.depth + 1
        self._nodes.append(node)
        self._by_id[node.id] = node
        if parent is None:
            self._roots.append(node)
        elif self._children_built:
            parent.add_child(node)
        if node.type == "label":
            self._apply_label(node)
        elif node.type == "session_info":
            self._apply_name(node)
        self.leaf = node
        self._extend_projection(node)
        self._emit(EntryAppended(node.id, node.parent_id))
        if old_leaf != node.id:
            self._emit(LeafMoved(old_leaf, node.id))
        return node.id

    def _apply_label(self, node: Node) -> None:
        data = self.data(node)
        target = data.get("targetId")
        if not isinstance(target, str):
            return
        label = data.get("label")
        if isinstance(label, str) and label:
            # A relabelled entry keeps its position (pi's Map.set); a cleared one leaves.
            self._labels[target] = label
            self._label_times[target] = data.get("timestamp")
        else:
            self._labels.pop(target, None)
            self._label_times.pop(target, None)

    def _apply_name(self, node: Node) -> None:
        name = self.data(node).get("name")
        self._name = name.strip() if isinstance(name, str) and name.strip() else None

    # ------------------------------------------------------------------ closing

    def close(self) -> None:
        """Release the file. If the leaf moved without an append, record it with a marker.

        A file that changed underneath (see :attr:`file_change`) is left alone."""
        try:
            if (
                not self.read_only
                and self._disk.on_disk
                and self.leaf_id != self._disk.reopen_leaf_id
            ):
                leaf = self.leaf
                entry = self._base("custom")
                entry["customType"] = LEAF_MARKER_TYPE
                # A changed file was reported once already; nothing may be written to it now.
                with contextlib.suppress(SessionChangedError):
                    self._append(entry)
                self.leaf = leaf
        finally:
            self._disk.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ copies

    def save_copy(self, dest: str | os.PathLike[str]) -> int:
        """Write header + every entry to ``dest`` (a new file); stored lines are copied byte for
        byte. Returns how many entries could not be copied (0 unless the file was truncated or
        rewritten by another program and their lines were never read)."""
        if self._header_raw and not self._disk.needs_rewrite:
            parts = [self._header_raw.removesuffix(b"\r") + b"\n"]
        else:
            parts = [codec.dumps_line(self.header)]
        lost = 0
        for n in self._nodes:
            try:
                parts.append(self.raw_line(n) + b"\n")
            except SessionChangedError:
                lost += 1
        create_exclusive(Path(dest), b"".join(parts))
        return lost

    def recent_user_texts(self, limit: int) -> list[str]:
        """The texts of the newest ``limit`` user messages on every branch, oldest first
        (stripped, empty ones left out, consecutive repeats once): the prompt history.

        Walks back from the end of the file and parses only what it returns.
        """
        newest_first: list[str] = []
        for node in reversed(self._nodes):
            if len(newest_first) >= limit:
                break
            if node.type != "message" or node.role != "user" or node.hidden:
                continue
            text = message_text(self.data(node).get("message"), "").strip()
            if text and (not newest_first or newest_first[-1] != text):
                newest_first.append(text)
        newest_first.reverse()
        return newest_first

    def user_messages(self) -> list[tuple[str, str]]:
        """(entry id, text) of every user message on every branch, in file order (fork picker)."""
        out: list[tuple[str, str]] = []
        for node in self.nodes():
            if node.type == "message" and node.role == "user":
                text = message_text(self.data(node).get("message"), "")
                if text:
                    out.append((node.id, text))
        return out
