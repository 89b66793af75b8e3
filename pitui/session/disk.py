"""The on-disk side of a session: lazy first write, repairs before the first append, the lock.

Order is always disk first: :meth:`SessionDisk.persist` raises ``SessionWriteError`` before
the store changes anything in memory.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pitui.session import codec
from pitui.session.errors import SessionError
from pitui.session.loader import LoadResult, LoadWarning, TailState
from pitui.session.lock import SessionLock
from pitui.session.node import Node
from pitui.session.writer import (
    AppendWriter,
    create_exclusive,
    rewrite_atomically,
    set_aside_torn_tail,
)

CONVERSATION_ROLES = frozenset({"user", "assistant"})


class SessionDisk:
    """What is on disk for one session path, and how to add a line to it safely."""

    def __init__(self, path: Path | None, load: LoadResult | None) -> None:
        self.path = path
        self.on_disk = load is not None and load.header is not None
        self._empty_file = load is not None and load.header is None
        self._tail: TailState = load.tail if load else TailState()
        self.needs_rewrite = bool(load and load.migrated)
        self._prepared = False
        self._pending: list[Node] = []
        self._writer: AppendWriter | None = None
        self._lock: SessionLock | None = None
        self._read_fd: int | None = None
        self.preencoded: dict[str, bytes] = {}
        """Exact lines to write for buffered entries (copies keep their source bytes)."""
        self.reopen_leaf_id: str | None = None
        """The leaf the file would reopen on (its last entry, or a trailing marker's parent)."""

    # ------------------------------------------------------------------ reading

    def read_raw(self, node: Node) -> bytes:
        if node.offset < 0 or self.path is None or not self.on_disk:
            raise SessionError(f"Entry {node.id} has no stored line.")
        if self._read_fd is None:
            self._read_fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        return os.pread(self._read_fd, node.length, node.offset)

    def has_stored_line(self, node: Node) -> bool:
        """True when ``node``'s line on disk is exactly its current content."""
        return self.on_disk and node.offset >= 0 and not self.needs_rewrite

    # ------------------------------------------------------------------ locking

    def take_lock(self) -> str | None:
        """Lock the path for writing; returns who holds it when another process does."""
        if self._lock is not None or self.path is None:
            return None
        lock, holder = SessionLock.try_acquire(self.path)
        self._lock = lock
        return holder

    # ------------------------------------------------------------------ writing

    def persist(
        self,
        node: Node,
        header: dict[str, Any],
        all_nodes: Callable[[], Sequence[Node]],
        data_of: Callable[[Node], dict[str, Any]],
        warnings: list[LoadWarning],
    ) -> None:
        """Write ``node`` (or buffer it until the session has a user or assistant message)."""
        if self.path is None:
            return
        if not self.on_disk:
            pending = [*self._pending, node]
            if not any(n.type == "message" and n.role in CONVERSATION_ROLES for n in pending):
                self._pending.append(node)
                return
            self._materialize(header, pending)
            self._pending = []
            return
        self._prepare_existing(header, all_nodes, data_of, warnings)
        line = codec.dumps_line(node.data)
        prefix = b"\n" if self._tail.kind == "no_newline" else b""
        start = self._ensure_writer().append(prefix + line)
        self._tail = TailState()
        node.offset = start + len(prefix)
        node.length = len(line) - 1
        self.reopen_leaf_id = node.parent_id if node.hidden else node.id

    def _materialize(self, header: dict[str, Any], pending: list[Node]) -> None:
        """First write of a new session: header + buffered entries in one exclusive create."""
        assert self.path is not None
        parts = [codec.dumps_line(header)]
        placed: list[tuple[Node, int, int]] = []
        pos = len(parts[0])
        for n in pending:
            line = self.preencoded.pop(n.id, None) or codec.dumps_line(n.data)
            placed.append((n, pos, len(line) - 1))
            parts.append(line)
            pos += len(line)
        data = b"".join(parts)
        if self._empty_file:
            # The path exists as a 0-byte file (pi writes there too): append into it.
            self.take_lock()
            base = self._ensure_writer().append(data)
        else:
            create_exclusive(self.path, data)
            base = 0
            self.take_lock()
        for n, offset, length in placed:
            n.offset = base + offset
            n.length = length
        self.on_disk = True
        self._empty_file = False
        self._prepared = True
        last = pending[-1]
        self.reopen_leaf_id = last.parent_id if last.hidden else last.id

    def _prepare_existing(
        self,
        header: dict[str, Any],
        all_nodes: Callable[[], Sequence[Node]],
        data_of: Callable[[Node], dict[str, Any]],
        warnings: list[LoadWarning],
    ) -> None:
        """Before the first append to a loaded file: set aside a torn tail, migrate (rewrite)."""
        if self._prepared:
            return
        assert self.path is not None
        if self._tail.kind == "torn":
            side = set_aside_torn_tail(self.path, self._tail.offset)
            warnings.append(LoadWarning(None, f"the torn last line was moved to {side.name}"))
            self._tail = TailState()
        if self.needs_rewrite:
            nodes = all_nodes()
            parts = [codec.dumps_line(header)]
            pos = len(parts[0])
            placed: list[tuple[Node, int, int]] = []
            for n in nodes:
                line = codec.dumps_line(data_of(n))
                placed.append((n, pos, len(line) - 1))
                parts.append(line)
                pos += len(line)
            rewrite_atomically(self.path, b"".join(parts))
            for n, offset, length in placed:
                n.offset, n.length = offset, length
            self._close_fds()
            self.needs_rewrite = False
            self._tail = TailState()
        self._prepared = True

    def _ensure_writer(self) -> AppendWriter:
        if self._writer is None:
            assert self.path is not None
            self._writer = AppendWriter(self.path)
        return self._writer

    def _close_fds(self) -> None:
        if self._read_fd is not None:
            os.close(self._read_fd)
            self._read_fd = None
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def close(self) -> None:
        self._close_fds()
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def save_copy(self, dest: Path, header: dict[str, Any], lines: Sequence[bytes]) -> None:
        create_exclusive(dest, codec.dumps_line(header) + b"".join(lines))
