"""The on-disk side of a session: lazy first write, repairs before an append, the lock, and
noticing a file that changes underneath.

Order is always disk first: :meth:`SessionDisk.persist` raises ``SessionWriteError`` before
the store changes anything in memory.

The file as it was read is remembered (:class:`FileSnapshot`: device, inode, size, mtime and
the last bytes). Before each append, and before reading entry data, :meth:`SessionDisk.sync`
compares it with the file as it is now:

- unchanged: nothing to do (one ``stat``);
- longer, with the known bytes still in place: another writer appended (pi does, without any
  locking). Its complete lines are parsed and handed to the store;
- replaced (another inode), deleted, shorter, or rewritten in place: appends can no longer be
  placed correctly. The disk stops writing for good and :attr:`SessionDisk.changed` holds the
  one-sentence :class:`SessionChangedError`. Reads keep working from the descriptor of the file
  that was read (for a replaced or deleted file that is all of it).

What is torn is decided at append time from the file as it is then: only bytes after the last
newline that do not parse are ever set aside; complete lines, even unparseable ones another
writer terminated, stay where they are.
"""

from __future__ import annotations

import contextlib
import os
import time
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pitui.session import codec
from pitui.session.errors import SessionChangedError, SessionError, SessionWriteError
from pitui.session.loader import (
    FileSnapshot,
    LoadResult,
    LoadWarning,
    MoreLines,
    TailState,
    read_more,
    snapshot_of,
)
from pitui.session.lock import LockAttempt, SessionLock
from pitui.session.node import Node
from pitui.session.writer import (
    AppendWriter,
    TailMoved,
    create_exclusive,
    rewrite_atomically,
    set_aside_torn_tail,
)

CONVERSATION_ROLES = frozenset({"user", "assistant"})
READ_CHECK_INTERVAL = 0.05
"""Seconds between two file checks triggered by reads (appends always check)."""


def _close_quietly(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)


class SessionDisk:
    """What is on disk for one session path, and how to add a line to it safely."""

    def __init__(self, path: Path | None, load: LoadResult | None) -> None:
        self.path = path
        self.on_disk = load is not None and load.header is not None
        self._empty_file = load is not None and load.header is None
        self._tail: TailState = load.tail if load else TailState()
        self._end = load.end if load else 0
        self._lines = load.lines if load else 0
        self._snapshot: FileSnapshot | None = load.snapshot if load else None
        self.needs_rewrite = bool(load and load.migrated)
        self._prepared = False
        self._pending: list[Node] = []
        self._writer: AppendWriter | None = None
        self._lock: SessionLock | None = None
        self._fd: int | None = load.fd if load else None
        self._fd_finalizer: weakref.finalize[Any, Any] | None = None
        self._track_fd()
        self._last_check = time.monotonic()
        self.changed: SessionChangedError | None = None
        """Set once the file changed in a way appends cannot follow (the store is read-only)."""
        self.preencoded: dict[str, bytes] = {}
        """Exact lines to write for buffered entries (copies keep their source bytes)."""
        self.reopen_leaf_id: str | None = None
        """The leaf the file would reopen on (its last entry, or a trailing marker's parent)."""

    def _track_fd(self) -> None:
        if self._fd_finalizer is not None:
            self._fd_finalizer.detach()
            self._fd_finalizer = None
        if self._fd is not None:
            # A store dropped without close() must not leak its descriptor.
            self._fd_finalizer = weakref.finalize(self, _close_quietly, self._fd)

    def _set_fd(self, fd: int | None) -> None:
        old = self._fd
        self._fd = fd
        self._track_fd()
        if old is not None and old != fd:
            _close_quietly(old)

    # ------------------------------------------------------------------ reading

    def read_raw(self, node: Node) -> bytes:
        if node.offset < 0 or self.path is None or not self.on_disk:
            raise SessionError(f"Entry {node.id} has no stored line.")
        if self._fd is None:
            self._fd = self._open_for_reading()
            self._track_fd()
        return os.pread(self._fd, node.length, node.offset)

    def _open_for_reading(self) -> int:
        assert self.path is not None
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
        except FileNotFoundError:
            raise self._stop("deleted") from None
        except OSError as exc:
            raise SessionError(f"Cannot read {self.path}: {exc.strerror}.") from None
        snapshot = self._snapshot
        if snapshot is not None and os.fstat(fd).st_ino != snapshot.inode:
            os.close(fd)
            raise self._stop("replaced")
        return fd

    def has_stored_line(self, node: Node) -> bool:
        """True when ``node``'s line on disk is exactly its current content."""
        return self.on_disk and node.offset >= 0 and not self.needs_rewrite

    # ------------------------------------------------------------------ noticing changes

    def sync(self, header: dict[str, Any], *, for_read: bool = False) -> MoreLines | None:
        """Compare the file with what was last read or written (see the module docstring).

        Returns lines another writer appended (to be added to the store), or None. A change
        appends cannot follow sets :attr:`changed` (check it after the call). ``for_read``
        checks at most every ``READ_CHECK_INTERVAL`` seconds.
        """
        path, snapshot = self.path, self._snapshot
        if path is None or not self.on_disk or self.changed is not None or snapshot is None:
            return None
        now = time.monotonic()
        if for_read and now - self._last_check < READ_CHECK_INTERVAL:
            return None
        self._last_check = now
        try:
            info = os.stat(path)
        except FileNotFoundError:
            self._stop("deleted")
            return None
        except OSError:
            return None  # cannot tell (a folder lost its permissions): the next append says so
        if (info.st_dev, info.st_ino) != (snapshot.device, snapshot.inode):
            self._stop("replaced")
            return None
        if info.st_size < snapshot.size:
            self._stop("truncated")
            return None
        if info.st_size == snapshot.size and info.st_mtime_ns == snapshot.mtime_ns:
            return None
        fd = self._reading_fd()
        if fd is None:
            return None
        start = snapshot.size - len(snapshot.signature)
        if os.pread(fd, len(snapshot.signature), start) != snapshot.signature:
            self._stop("modified")
            return None
        if info.st_size == snapshot.size:  # touched, not changed
            self._snapshot = snapshot_of(fd, info, info.st_size)
            return None
        if self.needs_rewrite:
            # Another program appended to a legacy file we have not migrated yet: the lines
            # cannot be merged into the in-memory migration. Start over from the file.
            self._stop("modified")
            return None
        more = read_more(fd, path, header, self._end, info.st_size, self._lines)
        self._end, self._lines, self._tail = more.end, more.lines, more.tail
        self._snapshot = snapshot_of(fd, info, info.st_size)
        return more

    def _reading_fd(self) -> int | None:
        if self._fd is None:
            try:
                self._fd = self._open_for_reading()
            except SessionError:
                return None
            self._track_fd()
        return self._fd

    def _stop(self, kind: str) -> SessionChangedError:
        """The file can no longer be written safely: close the writer, release the lock."""
        if self.changed is None:
            self.changed = SessionChangedError(kind, self.path)
            if self._writer is not None:
                self._writer.close()
                self._writer = None
            if self._lock is not None:
                self._lock.release()
                self._lock = None
        return self.changed

    def check_read(self, node: Node, data: Any) -> SessionChangedError | None:
        """After reading ``node``'s line: if it is not that entry any more, say how the file
        changed (the caller raises it). None when the data is the entry."""
        if isinstance(data, dict) and data.get("id") == node.id:
            return None
        self._last_check = 0.0
        if self.changed is None:
            self._stop_if_changed()
        return self.changed or self._stop("modified")

    def _stop_if_changed(self) -> None:
        snapshot, path = self._snapshot, self.path
        if snapshot is None or path is None:
            return
        try:
            info = os.stat(path)
        except FileNotFoundError:
            self._stop("deleted")
            return
        except OSError:
            return
        if (info.st_dev, info.st_ino) != (snapshot.device, snapshot.inode):
            self._stop("replaced")
        elif self._fd is not None and os.fstat(self._fd).st_size < snapshot.size:
            self._stop("truncated")

    # ------------------------------------------------------------------ locking

    def take_lock(self) -> LockAttempt:
        """Lock the file for writing. Never raises: see :class:`LockAttempt`."""
        if self._lock is not None or self.path is None:
            return LockAttempt(self._lock)
        attempt = SessionLock.acquire(self.path, self._fd)
        self._lock = attempt.lock
        if attempt.lock is not None and (self.on_disk or self._empty_file):
            try:
                self._ensure_writer()
            except SessionError as exc:
                self._lock = None
                if attempt.lock is not None:
                    attempt.lock.release()
                return LockAttempt(None, problem=_unwritable(self.path, exc))
        return attempt

    @property
    def locked(self) -> bool:
        return self._lock is not None

    # ------------------------------------------------------------------ writing

    def persist(
        self,
        node: Node,
        header: dict[str, Any],
        all_nodes: Callable[[], Sequence[Node]],
        data_of: Callable[[Node], dict[str, Any]],
        warnings: list[LoadWarning],
    ) -> MoreLines | None:
        """Write ``node`` (or buffer it until the session has a user or assistant message).

        The caller has called :meth:`sync` just before and found no change. Returns lines
        another writer appended in the instant between that check and this write (they come
        before ``node`` in the file), or None.
        """
        if self.path is None:
            return None
        if self.changed is not None:
            raise self.changed
        if not self.on_disk:
            pending = [*self._pending, node]
            if not any(n.type == "message" and n.role in CONVERSATION_ROLES for n in pending):
                self._pending.append(node)
                return None
            self._materialize(header, pending)
            self._pending = []
            return None
        if self._lock is None:
            raise SessionWriteError(f"Could not save the session to {self.path}: it is not locked.")
        self._prepare_existing(header, all_nodes, data_of, warnings)
        self._set_aside_torn_tail(warnings)
        line = codec.dumps_line(node.data)
        prefix = b"\n" if self._tail.kind == "no_newline" else b""
        writer = self._ensure_writer()
        believed = self._snapshot.size if self._snapshot is not None else self._end
        start = writer.append(prefix + line)
        late: MoreLines | None = None
        if start > believed and self._fd is not None and not prefix:
            # Another writer appended after the check: its lines sit before ours.
            late = read_more(self._fd, self.path, header, self._end, start, self._lines)
            self._lines = late.lines
        self._tail = TailState()
        node.offset = start + len(prefix)
        node.length = len(line) - 1
        self._lines += 1
        node.line = self._lines
        self._after_write(start + len(prefix) + len(line))
        self.reopen_leaf_id = node.parent_id if node.hidden else node.id
        return late

    def _after_write(self, end: int) -> None:
        """Remember the file as this process just left it."""
        self._end = end
        fd = self._fd
        writer = self._writer
        if fd is None or writer is None:
            self._snapshot = None
            return
        info = os.fstat(writer.fd)
        if info.st_size != end:
            # Someone else wrote at the same moment; the next check sorts it out.
            end = min(end, info.st_size)
        self._snapshot = snapshot_of(fd, info, end)

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
            # The path exists as a 0-byte file (pi writes there too): append into it, locked.
            if self._lock is None:
                attempt = self.take_lock()
                if attempt.lock is None:
                    raise SessionWriteError(
                        attempt.problem
                        or f"Could not save the session to {self.path}: it is open in another "
                        f"pitui ({attempt.holder})."
                    )
            base = self._ensure_writer().append(data)
        else:
            created = create_exclusive(self.path, data, keep_locked=True)
            assert created is not None
            try:
                self._set_fd(os.open(self.path, os.O_RDONLY | os.O_CLOEXEC))
                attempt = SessionLock.acquire(self.path, created)
            finally:
                os.close(created)
            self._lock = attempt.lock
            base = 0
        for n, offset, length in placed:
            n.offset = base + offset
            n.length = length
        self.on_disk = True
        self._empty_file = False
        self._prepared = True
        self._lines = len(placed) + 1
        self._ensure_writer()
        self._after_write(base + len(data))
        last = pending[-1]
        self.reopen_leaf_id = last.parent_id if last.hidden else last.id

    def _prepare_existing(
        self,
        header: dict[str, Any],
        all_nodes: Callable[[], Sequence[Node]],
        data_of: Callable[[Node], dict[str, Any]],
        warnings: list[LoadWarning],
    ) -> None:
        """Before the first append to a loaded legacy file: migrate (rewrite)."""
        if self._prepared:
            return
        assert self.path is not None
        if self.needs_rewrite:
            self._set_aside_torn_tail(warnings)
            nodes = all_nodes()
            parts = [codec.dumps_line(header)]
            pos = len(parts[0])
            placed: list[tuple[Node, int, int]] = []
            for n in nodes:
                line = codec.dumps_line(data_of(n))
                placed.append((n, pos, len(line) - 1))
                parts.append(line)
                pos += len(line)
            fd = rewrite_atomically(self.path, b"".join(parts))
            for number, (n, offset, length) in enumerate(placed, start=2):
                n.offset, n.length, n.line = offset, length, number
            if self._lock is not None:
                self._lock.adopt(os.dup(fd))
            if self._writer is not None:
                self._writer.close()
                self._writer = None
            self._set_fd(fd)
            self._snapshot = None  # a new file: known again once written below
            self.needs_rewrite = False
            self._tail = TailState()
            self._lines = len(placed) + 1
            self._ensure_writer()
            self._after_write(pos)
        self._prepared = True

    def _set_aside_torn_tail(self, warnings: list[LoadWarning]) -> None:
        """If the file ends with bytes that are not a line, move exactly those aside."""
        if self._tail.kind != "torn" or self.path is None:
            return
        snapshot = self._snapshot
        fd = self._reading_fd()
        if snapshot is None or fd is None:
            return
        writer = self._ensure_writer()
        try:
            side = set_aside_torn_tail(self.path, fd, writer.fd, self._end, snapshot.size)
        except TailMoved:
            raise SessionWriteError(
                f"Could not save the session to {self.path}: another program is writing to it; "
                "try again."
            ) from None
        warnings.append(LoadWarning(None, f"the torn last line was moved to {side.name}"))
        self._tail = TailState()
        self._after_write(self._end)

    def _ensure_writer(self) -> AppendWriter:
        if self._writer is None:
            assert self.path is not None
            writer = AppendWriter(self.path)
            snapshot = self._snapshot
            if snapshot is not None and self.on_disk and writer.inode != snapshot.inode:
                writer.close()
                raise self._stop("replaced")
            self._writer = writer
        return self._writer

    def _close_fds(self) -> None:
        self._set_fd(None)
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


def _unwritable(path: Path, exc: SessionError) -> str:
    text = str(exc)
    if "permission denied" in text or "read-only" in text:
        return f"pitui cannot write to {path} (permission denied), so it is open read-only."
    if "disk is full" in text or "quota" in text:
        return (
            f"The disk holding {path} is full, so the session is open read-only: free some "
            "space and open it again."
        )
    return f"pitui cannot write to {path}, so it is open read-only."
