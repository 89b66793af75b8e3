"""Reading many stored entry lines fast: whole blocks of the file instead of one read per entry.

The tree filter reads every assistant message (does it have text?) and the tree search reads
every entry; one ``pread`` per entry costs more than the work itself. Lines are read through a
small block cache (entries that are next to each other in the file are usually read one after
the other); entries not stored as-is (a migrated file, a session not written yet) come from
:meth:`SessionStore.raw_line`.

Safe to use from a worker thread: it has its own file descriptor and never changes the store.
"""

from __future__ import annotations

import os

from pitui.session.node import Node
from pitui.session.store import SessionStore

BLOCK = 1 << 18
"""Bytes read at a time (a block holds a few hundred typical entries)."""


class LineReader:
    """``reader.line(node)`` → the entry's stored line (no newline). Close it when done."""

    def __init__(self, store: SessionStore) -> None:
        self._store = store
        self._fd: int | None = None
        self._start = 0
        self._block = b""
        path = store.path
        if path is not None and store.persisted:
            try:
                self._fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            except OSError:
                self._fd = None

    def line(self, node: Node) -> bytes:
        span = self._store.stored_span(node) if self._fd is not None else None
        if span is None:
            return self._store.raw_line(node)
        offset, length = span
        start = offset - self._start
        if start < 0 or start + length > len(self._block):
            assert self._fd is not None
            if length > BLOCK // 2:
                return os.pread(self._fd, length, offset)
            self._start = offset
            self._block = os.pread(self._fd, BLOCK, offset)
            start = 0
            if length > len(self._block):
                return self._store.raw_line(node)
        return self._block[start : start + length]

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._block = b""

    def __enter__(self) -> LineReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
