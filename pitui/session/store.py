"""``SessionStore``: the session tree in memory, its leaf, appends, and the projection.

The file is the only truth. The store keeps a skeleton per entry (see :mod:`node`), parses
full entries on demand, and writes every change as one appended line, disk first, memory
second: if the write fails the store is unchanged and the caller gets ``SessionWriteError``.
"""

from __future__ import annotations

import os
import re
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pitui.session import codec
from pitui.session.errors import (
    EntryNotFoundError,
    ReadOnlySessionError,
    SessionError,
    SessionFileError,
)
from pitui.session.events import EntryAppended, LeafMoved, SessionEvent
from pitui.session.ids import file_timestamp, is_valid_session_id, iso_to_ms, new_entry_id
from pitui.session.ids import new_session_id, now_iso, now_ms
from pitui.session.index import link_nodes
from pitui.session.loader import LoadResult, LoadWarning, TailState, load_session_file
from pitui.session.lock import SessionLock
from pitui.session.node import LEAF_MARKER_TYPE, UNSET, Node
from pitui.session.projection import Projection, build_projection, entry_messages, model_from_entry
from pitui.session.system_prompt import replay_system_messages
from pitui.session.writer import AppendWriter, create_exclusive, rewrite_atomically
from pitui.session.writer import set_aside_torn_tail

CONVERSATION_ROLES = frozenset({"user", "assistant"})
EDIT_TARGET_ROLES = frozenset({"user", "assistant", "toolResult"})
_PROJECTION_CACHE_SIZE = 16
_NEWLINES = re.compile(r"[\r\n]+")


def session_file_name(header: dict[str, Any]) -> str:
    return f"{file_timestamp(str(header['timestamp']))}_{header['id']}.jsonl"


def _is_compaction(node: Node) -> bool:
    return node.type == "compaction"


def _is_model_source(node: Node) -> bool:
    return node.type == "model_change" or (node.type == "message" and node.role == "assistant")


def _is_thinking_source(node: Node) -> bool:
    return node.type == "thinking_level_change"


def _timestamp_key(node: Node) -> float:
    ms = iso_to_ms(node.timestamp)
    return ms if ms is not None else float("inf")


class SessionStore:
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
        self.path = path
        self.folder = folder if folder is not None else (path.parent if path else None)
        self.read_only = read_only
        self.read_only_reason: str | None = None
        self.warnings: list[LoadWarning] = list(load.warnings) if load else []
        self._nodes: list[Node] = []
        self._by_id: dict[str, Node] = {}
        self._roots: list[Node] = []
        self._labels: dict[str, str] = {}
        self._label_times: dict[str, Any] = {}
        self._name: str | None = None
        self._listeners: list[Callable[[SessionEvent], None]] = []
        self._projections: OrderedDict[str | None, Projection] = OrderedDict()
        self._read_fd: int | None = None
        self._writer: AppendWriter | None = None
        self._lock: SessionLock | None = None
        # Disk state: is the file there, and what must happen before the first append.
        self._on_disk = load is not None and load.header is not None
        self._empty_file = load is not None and load.header is None
        self._tail: TailState = load.tail if load else TailState()
        self._needs_rewrite = bool(load and load.migrated)
        self._prepared = False
        self._pending: list[Node] = []
        self.leaf: Node | None = None
        self._reopen_leaf_id: str | None = None
        if load is not None:
            self._index(load)

    # ------------------------------------------------------------------ construction

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], *, read_only: bool = False, folder: Path | None = None
    ) -> SessionStore:
        """Open an existing session file. Never writes to it.

        Raises :class:`SessionFileError` when it is missing, unreadable or not a session. When
        another process holds it for writing, the store opens read-only and says why in
        ``read_only_reason``.
        """
        file_path = Path(path)
        load = load_session_file(file_path)
        header = load.header
        if header is None:
            # An empty (0-byte) file: a new session that will be written to this path.
            store = cls(_new_header(os.getcwd(), None), path=file_path, folder=folder, load=load)
        else:
            store = cls(header, path=file_path, folder=folder, load=load)
        store.read_only = read_only
        if not read_only:
            store._take_lock()
        return store

    @classmethod
    def open_or_create(
        cls, path: str | os.PathLike[str], cwd: str, *, folder: Path | None = None
    ) -> SessionStore:
        """Open ``path``, or start a new session that will be written there (as pi's --session)."""
        file_path = Path(path)
        if not file_path.exists() and not file_path.is_symlink():
            return cls.create_at(file_path, cwd)
        return cls.open(file_path, folder=folder)

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
        header = _new_header(cwd, parent_session, session_id)
        folder_path = Path(folder)
        return cls(header, path=folder_path / session_file_name(header), folder=folder_path)

    @classmethod
    def create_at(cls, path: str | os.PathLike[str], cwd: str) -> SessionStore:
        file_path = Path(path)
        return cls(_new_header(cwd, None), path=file_path, folder=file_path.parent)

    @classmethod
    def in_memory(cls, cwd: str) -> SessionStore:
        """A session that is never written anywhere (``--no-session``)."""
        return cls(_new_header(cwd, None), path=None, folder=None)

    def _index(self, load: LoadResult) -> None:
        by_id, nodes = link_nodes(load.nodes, self.warnings)
        self._by_id = by_id
        self._nodes = nodes
        for node in nodes:
            if node.parent is None:
                self._roots.append(node)
            if node.type == "label":
                self._apply_label(node)
            elif node.type == "session_info":
                self._apply_name(node)
        if nodes:
            last = nodes[-1]
            if last.hidden:
                self.leaf = last.parent
                self._reopen_leaf_id = last.parent.id if last.parent else None
            else:
                self.leaf = last
                self._reopen_leaf_id = last.id

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
    def leaf_id(self) -> str | None:
        return self.leaf.id if self.leaf is not None else None

    @property
    def persisted(self) -> bool:
        """True when the session file exists on disk."""
        return self._on_disk

    @property
    def session_name(self) -> str | None:
        return self._name

    @property
    def labels(self) -> dict[str, str]:
        return dict(self._labels)

    def label_of(self, entry_id: str) -> str | None:
        return self._labels.get(entry_id)

    def __len__(self) -> int:
        return sum(1 for n in self._nodes if not n.hidden)

    def __contains__(self, entry_id: object) -> bool:
        return isinstance(entry_id, str) and entry_id in self._by_id

    def nodes(self) -> Iterator[Node]:
        """Every visible entry in file order."""
        return (n for n in self._nodes if not n.hidden)

    def node(self, entry_id: str) -> Node:
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
        if node.data is None:
            node.data = codec.loads(self._read_raw(node))
        return node.data

    def raw_line(self, node: Node) -> bytes:
        """The entry's line exactly as stored (without the newline)."""
        if node.offset < 0 or not self._on_disk:
            return codec.dumps_line(self.data(node))[:-1]
        return self._read_raw(node)

    def _read_raw(self, node: Node) -> bytes:
        if node.offset < 0 or self.path is None:
            raise SessionError(f"Entry {node.id} has no stored line.")
        if self._read_fd is None:
            self._read_fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        return os.pread(self._read_fd, node.length, node.offset)

    # ------------------------------------------------------------------ tree

    def path_to(self, leaf_id: str | None | Any = UNSET) -> list[Node]:
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

    @staticmethod
    def is_on_path(node: Node, leaf: Node | None) -> bool:
        """True when ``node`` is ``leaf`` or one of its ancestors."""
        cur = leaf
        while cur is not None and cur.depth > node.depth:
            cur = cur.parent
        return cur is node

    def roots(self) -> list[Node]:
        """Roots in file order (null parent, self-parent, orphan, cycle break)."""
        return self._lift_hidden(self._roots)

    def children(self, entry_id: str | None) -> list[Node]:
        """Children in file order (``None`` for the roots)."""
        if entry_id is None:
            return self.roots()
        return self._lift_hidden(self.node(entry_id).children or [])

    def tree_children(self, entry_id: str | None) -> list[Node]:
        """Children in pi's tree order: by timestamp, ties in file order."""
        kids = self.children(entry_id)
        if entry_id is None or len(kids) < 2:
            return kids
        return sorted(kids, key=_timestamp_key)

    def _lift_hidden(self, nodes: list[Node]) -> list[Node]:
        if not any(n.hidden for n in nodes):
            return list(nodes)
        out: list[Node] = []
        for n in nodes:
            if n.hidden:
                out.extend(self._lift_hidden(n.children or []))
            else:
                out.append(n)
        return out

    def tree(self) -> dict[str, list[str]]:
        """Parent id → ordered child ids (``"null"`` for roots); only parents with children."""
        out: dict[str, list[str]] = {}
        roots = self.roots()
        if roots:
            out["null"] = [n.id for n in roots]
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

    def project(self, leaf_id: str | None | Any = UNSET) -> Projection:
        """The model-visible context at ``leaf_id`` (default: the current leaf). Cached per leaf."""
        leaf = self.leaf if leaf_id is UNSET else (None if leaf_id is None else self.node(leaf_id))
        key = leaf.id if leaf is not None else None
        cached = self._projections.get(key)
        if cached is not None:
            self._projections.move_to_end(key)
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
        if first is not None and first.depth < anchor.depth:
            chain: list[Node] = []
            cur = anchor.parent
            while cur is not None and cur.depth >= first.depth:
                chain.append(cur)
                if cur is first:
                    break
                cur = cur.parent
            if chain and chain[-1] is first:
                kept = [
                    n
                    for n in reversed(chain)
                    if not n.hidden and not (n.type == "message" and n.role == "system")
                ]
        return [anchor, *kept, *after], True

    def _compute_projection(self, leaf: Node | None) -> Projection:
        if leaf is None:
            return Projection(None)
        context, head = self.context_nodes(leaf)
        return build_projection(
            leaf.id, context, self.data, head, self._model_at(leaf), self._thinking_at(leaf)
        )

    def _model_at(self, leaf: Node) -> dict[str, str] | None:
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
        self._projections[key] = projection
        self._projections.move_to_end(key)
        while len(self._projections) > _PROJECTION_CACHE_SIZE:
            self._projections.popitem(last=False)

    def _extend_projection(self, node: Node) -> None:
        """Update the cached projection of the parent incrementally for a plain append."""
        parent = node.parent
        key = parent.id if parent is not None else None
        base = self._projections.get(key)
        if base is None or node.type in ("compaction", "context_edit") or node.hidden:
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

    # ------------------------------------------------------------------ appends

    def _base(self, entry_type: str) -> dict[str, Any]:
        return {
            "type": entry_type,
            "id": new_entry_id(self._by_id),
            "parentId": self.leaf_id,
            "timestamp": now_iso(),
        }

    def append_message(self, message: dict[str, Any]) -> str:
        """Append a message entry (user, assistant, toolResult, bashExecution, custom, system)."""
        entry = self._base("message")
        entry["message"] = message
        return self._append(entry)

    def append_thinking_level_change(self, level: str) -> str:
        entry = self._base("thinking_level_change")
        entry["thinkingLevel"] = level
        return self._append(entry)

    def append_model_change(self, provider: str, model_id: str) -> str:
        entry = self._base("model_change")
        entry["provider"] = provider
        entry["modelId"] = model_id
        return self._append(entry)

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str | None,
        tokens_before: int,
        details: Any = None,
        from_hook: bool = False,
        usage: dict[str, Any] | None = None,
    ) -> str:
        """Append a compaction; ``first_kept_entry_id=None`` keeps nothing (retain-none).

        The replayed system state at this point is stored as ``systemMessage`` (checkpoint).
        """
        entry = self._base("compaction")
        entry["summary"] = summary
        entry["firstKeptEntryId"] = (
            first_kept_entry_id if first_kept_entry_id is not None else entry["id"]
        )
        entry["tokensBefore"] = tokens_before
        if details is not None:
            entry["details"] = details
        if usage is not None:
            entry["usage"] = usage
        entry["fromHook"] = from_hook
        checkpoint = replay_system_messages(self.project().messages)
        if checkpoint is not None:
            checkpoint["timestamp"] = now_ms()
            entry["systemMessage"] = checkpoint
        return self._append(entry)

    def append_custom(self, custom_type: str, data: Any = None) -> str:
        entry = self._base("custom")
        entry["customType"] = custom_type
        if data is not None:
            entry["data"] = data
        return self._append(entry)

    def append_custom_message(
        self, custom_type: str, content: Any, display: bool = True, details: Any = None
    ) -> str:
        entry = self._base("custom_message")
        entry["customType"] = custom_type
        entry["content"] = content
        entry["display"] = display
        if details is not None:
            entry["details"] = details
        return self._append(entry)

    def append_label(self, target_id: str, label: str | None) -> str:
        """Set (or with ``None``/``""`` clear) the label of ``target_id``; moves the leaf."""
        self.node(target_id)
        entry = self._base("label")
        entry["targetId"] = target_id
        if label is not None:
            entry["label"] = label
        return self._append(entry)

    def append_session_info(self, name: str) -> str:
        """Rename the session; an empty name clears it."""
        entry = self._base("session_info")
        entry["name"] = _NEWLINES.sub(" ", name).strip()
        return self._append(entry)

    def append_context_edit(self, target_id: str, replacement: dict[str, Any] | None) -> str:
        """Omit (``None``) or replace the content of a message on the active branch."""
        if replacement is not None and (
            not isinstance(replacement, dict)
            or not isinstance(replacement.get("content"), str | list)
        ):
            raise SessionError("A context edit replacement must be null or {content: string|array}.")
        target = self.node(target_id)
        if not self.is_on_path(target, self.leaf):
            raise SessionError(f"Entry {target_id} is not on the active branch.")
        allowed = target.type == "custom_message" or (
            target.type == "message" and target.role in EDIT_TARGET_ROLES
        )
        if not allowed:
            raise SessionError(f"Entry {target_id} does not contribute editable model content.")
        if (
            replacement is not None
            and target.role in ("assistant", "toolResult")
            and isinstance(replacement["content"], str)
        ):
            replacement = {**replacement, "content": [{"type": "text", "text": replacement["content"]}]}
        entry = self._base("context_edit")
        entry["targetId"] = target_id
        entry["replacement"] = replacement
        return self._append(entry)

    def append_usage(
        self, kind: str, provider: str, model: str, usage: dict[str, Any], note: str | None = None
    ) -> str:
        entry = self._base("usage")
        entry.update(kind=kind, provider=provider, model=model, usage=usage)
        if note:
            entry["note"] = note
        return self._append(entry)

    def append_entry(self, entry: dict[str, Any]) -> str:
        """Append a pre-built entry (any type, unknown ones included) as a child of the leaf."""
        full = self._base(str(entry.get("type")))
        for key, value in entry.items():
            if key not in ("id", "parentId", "timestamp"):
                full[key] = value
        return self._append(full)

    def branch_with_summary(
        self,
        parent_id: str | None,
        summary: str,
        details: Any = None,
        from_hook: bool = False,
        usage: dict[str, Any] | None = None,
    ) -> str:
        """Attach a branch summary under ``parent_id`` (None: a new root).

        ``fromId`` is the leaf before the call (the abandoned path), ``"root"`` when there was none.
        """
        if parent_id is not None:
            self.node(parent_id)
        from_id = self.leaf_id if self.leaf_id is not None else "root"
        entry = {
            "type": "branch_summary",
            "id": new_entry_id(self._by_id),
            "parentId": parent_id,
            "timestamp": now_iso(),
            "fromId": from_id,
            "summary": summary,
        }
        if details is not None:
            entry["details"] = details
        if usage is not None:
            entry["usage"] = usage
        entry["fromHook"] = from_hook
        return self._append(entry)

    def _append(self, entry: dict[str, Any]) -> str:
        if self.read_only:
            raise ReadOnlySessionError(
                self.read_only_reason or "This session is open read-only; fork it to continue."
            )
        message = entry.get("message")
        role = message.get("role") if isinstance(message, dict) else None
        node = Node(
            entry["id"],
            entry["parentId"],
            entry["type"],
            role if isinstance(role, str) else None,
            entry["timestamp"],
            line=-1,
            offset=-1,
            length=0,
            data=entry,
        )
        if entry["type"] == "custom" and entry.get("customType") == LEAF_MARKER_TYPE:
            node.hidden = True
        parent = self._by_id.get(entry["parentId"]) if entry["parentId"] is not None else None
        self._persist(node)  # raises before anything changes in memory
        old_leaf = self.leaf_id
        node.parent = parent
        node.depth = parent.depth + 1 if parent is not None else 0
        node.seq = self._nodes[-1].seq + 1 if self._nodes else 0
        self._nodes.append(node)
        self._by_id[node.id] = node
        if parent is None:
            self._roots.append(node)
        else:
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
            self._labels.pop(target, None)
            self._labels[target] = label
            self._label_times[target] = data.get("timestamp")
        else:
            self._labels.pop(target, None)
            self._label_times.pop(target, None)

    def _apply_name(self, node: Node) -> None:
        name = self.data(node).get("name")
        self._name = name.strip() if isinstance(name, str) and name.strip() else None

    # ------------------------------------------------------------------ writing

    def _persist(self, node: Node) -> None:
        """Write ``node`` to disk (or buffer it until the session has a conversation)."""
        if self.path is None:
            return
        line = codec.dumps_line(node.data)
        if self._on_disk:
            self._prepare_existing()
            prefix = b"\n" if self._tail.kind == "no_newline" else b""
            writer = self._ensure_writer()
            start = writer.append(prefix + line)
            if prefix:
                self._tail = TailState()
            node.offset = start + len(prefix)
            node.length = len(line) - 1
            self._reopen_leaf_id = node.parent_id if node.hidden else node.id
            return
        pending = [*self._pending, node]
        if not any(n.type == "message" and n.role in CONVERSATION_ROLES for n in pending):
            self._pending.append(node)
            return
        self._materialize(pending)
        self._pending = []

    def _materialize(self, pending: list[Node]) -> None:
        """First write of a new session: header + buffered entries in one exclusive create."""
        assert self.path is not None
        header_line = codec.dumps_line(self.header)
        parts = [header_line]
        offsets: list[tuple[Node, int, int]] = []
        pos = len(header_line)
        for n in pending:
            line = codec.dumps_line(n.data)
            offsets.append((n, pos, len(line) - 1))
            parts.append(line)
            pos += len(line)
        data = b"".join(parts)
        if self._empty_file:
            # The path exists as a 0-byte file (pi writes there too): append into it.
            self._take_lock()
            writer = self._ensure_writer()
            base = writer.append(data)
        else:
            create_exclusive(self.path, data)
            base = 0
            self._take_lock()
        for n, offset, length in offsets:
            n.offset = base + offset
            n.length = length
        self._on_disk = True
        self._empty_file = False
        self._prepared = True
        last = pending[-1]
        self._reopen_leaf_id = last.parent_id if last.hidden else last.id

    def _prepare_existing(self) -> None:
        """Before the first append to a loaded file: migrate (rewrite) or set aside a torn tail."""
        if self._prepared:
            return
        assert self.path is not None
        if self._tail.kind == "torn":
            side = set_aside_torn_tail(self.path, self._tail.offset)
            self.warnings.append(LoadWarning(None, f"torn last line moved to {side.name}"))
            self._tail = TailState()
        if self._needs_rewrite:
            parts = [codec.dumps_line(self.header)]
            pos = len(parts[0])
            placed: list[tuple[Node, int, int]] = []
            for n in self._nodes:
                line = codec.dumps_line(self.data(n))
                placed.append((n, pos, len(line) - 1))
                parts.append(line)
                pos += len(line)
            rewrite_atomically(self.path, b"".join(parts))
            for n, offset, length in placed:
                n.offset, n.length = offset, length
            self._close_read_fd()
            if self._writer is not None:
                self._writer.close()
                self._writer = None
            self._needs_rewrite = False
            self._tail = TailState()
        self._prepared = True

    def _ensure_writer(self) -> AppendWriter:
        if self._writer is None:
            assert self.path is not None
            self._writer = AppendWriter(self.path)
        return self._writer

    def _take_lock(self) -> None:
        if self._lock is not None or self.path is None:
            return
        lock, holder = SessionLock.try_acquire(self.path)
        if lock is not None:
            self._lock = lock
        elif holder is not None:
            self.read_only = True
            self.read_only_reason = (
                f"This session is open in another pitui ({holder}); it is shown read-only. "
                "Fork or clone it to continue here."
            )

    def _close_read_fd(self) -> None:
        if self._read_fd is not None:
            os.close(self._read_fd)
            self._read_fd = None

    # ------------------------------------------------------------------ closing

    def close(self) -> None:
        """Release the file. If the leaf moved without an append, record it with a marker."""
        try:
            if (
                not self.read_only
                and self._on_disk
                and self.path is not None
                and self.leaf_id != self._reopen_leaf_id
            ):
                leaf = self.leaf
                entry = self._base("custom")
                entry["customType"] = LEAF_MARKER_TYPE
                self._append(entry)
                self.leaf = leaf
        finally:
            if self._writer is not None:
                self._writer.close()
                self._writer = None
            self._close_read_fd()
            if self._lock is not None:
                self._lock.release()
                self._lock = None

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ copies

    def save_copy(self, dest: str | os.PathLike[str]) -> None:
        """Write header + every entry to ``dest``; stored lines are copied byte for byte."""
        parts = [codec.dumps_line(self.header)]
        parts.extend(self.raw_line(n) + b"\n" for n in self._nodes)
        create_exclusive(Path(dest), b"".join(parts))

    def user_messages(self) -> list[tuple[str, str]]:
        """(entry id, text) of every user message on every branch, in file order (fork picker)."""
        out: list[tuple[str, str]] = []
        for node in self.nodes():
            if node.type == "message" and node.role == "user":
                text = message_text(self.data(node).get("message"), "")
                if text:
                    out.append((node.id, text))
        return out


def message_text(message: Any, joiner: str = "") -> str:
    """Text of a message's content: a string, or its text blocks joined."""
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return joiner.join(
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


def _new_header(cwd: str, parent_session: str | None, session_id: str | None = None) -> dict[str, Any]:
    if session_id is not None and not is_valid_session_id(session_id):
        raise SessionError(f"Invalid session id {session_id!r}.")
    header: dict[str, Any] = {
        "type": "session",
        "version": 3,
        "id": session_id or new_session_id(),
        "timestamp": now_iso(),
        "cwd": cwd,
    }
    if parent_session:
        header["parentSession"] = parent_session
    return header


__all__ = ["SessionFileError", "SessionStore", "message_text", "session_file_name"]
