"""Durable, all-or-nothing writes to a session file.

Appends are single ``write`` calls on an ``O_APPEND`` descriptor; if a write fails part-way the
file is truncated back, so no half line stays on disk. New files are created exclusively with
mode 0600 in folders made with mode 0700. Rewrites (legacy migration) go through
:func:`pitui.durable.replace_atomically` (temp file, fsync, rename, folder fsync) and keep the
original as ``.bak``.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from pathlib import Path

from pitui.durable import replace_atomically, write_all
from pitui.session.errors import SessionWriteError
from pitui.session.ids import file_timestamp, now_iso

_REASONS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EROFS: "the file system is read-only",
    errno.EFBIG: "the file size limit was reached",
    errno.EEXIST: "a file with that name already exists",
    errno.ENOENT: "its folder no longer exists",
}


def write_error(path: Path, exc: OSError) -> SessionWriteError:
    reason = _REASONS.get(exc.errno or 0, exc.strerror or str(exc))
    return SessionWriteError(f"Could not save the session to {path}: {reason}.")


def ensure_folder(folder: Path) -> None:
    """Create ``folder`` and any missing parents, each with mode 0700."""
    missing: list[Path] = []
    current = folder
    while not current.is_dir():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=0o700)


class AppendWriter:
    """An open ``O_APPEND`` descriptor on an existing session file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._fd: int | None = os.open(
                path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
            )
        except OSError as exc:
            raise write_error(path, exc) from None
        self.inode = os.fstat(self._fd).st_ino

    @property
    def fd(self) -> int:
        if self._fd is None:
            raise SessionWriteError(f"Could not save the session to {self.path}: it is closed.")
        return self._fd

    def append(self, data: bytes) -> int:
        """Append ``data``; return the offset it starts at. All or nothing."""
        fd = self._fd
        if fd is None:
            raise SessionWriteError(f"Could not save the session to {self.path}: it is closed.")
        try:
            start = os.fstat(fd).st_size
        except OSError as exc:
            raise write_error(self.path, exc) from None
        try:
            write_all(fd, data)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, start)
            raise write_error(self.path, exc) from None
        return start

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def create_exclusive(path: Path, data: bytes, *, keep_locked: bool = False) -> int | None:
    """Create ``path`` (which must not exist) holding ``data``; nothing is left on failure.

    With ``keep_locked`` the new file is ``flock``ed before any byte is written (no other
    process can lock it first) and the descriptor is returned, still locked; the caller owns it.
    """
    try:
        ensure_folder(path.parent)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise write_error(path, exc) from None
    try:
        if keep_locked:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        write_all(fd, data)
    except OSError as exc:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise write_error(path, exc) from None
    if keep_locked:
        return fd
    os.close(fd)
    return None


def rewrite_atomically(path: Path, data: bytes) -> int:
    """Replace ``path`` with ``data`` durably (:func:`pitui.durable.replace_atomically`), mode
    0600, keeping the original as ``<path>.bak``.

    Returns a read-only descriptor on the new file, ``flock``ed before the rename: the single
    writer's lock moves with the file, there is no moment where the new file is unlocked.
    """
    reader: int | None = None

    def lock_new_file(tmp: Path) -> None:
        nonlocal reader
        reader = os.open(tmp, os.O_RDONLY | os.O_CLOEXEC)
        fcntl.flock(reader, fcntl.LOCK_EX | fcntl.LOCK_NB)

    try:
        replace_atomically(
            path,
            data,
            mode=0o600,
            backup=path.with_name(path.name + ".bak"),
            before_rename=lock_new_file,
        )
    except OSError as exc:
        if reader is not None:
            os.close(reader)
        raise write_error(path, exc) from None
    assert reader is not None
    return reader


class TailMoved(Exception):
    """The file's end changed while a torn tail was being set aside (another writer)."""


def set_aside_torn_tail(path: Path, read_fd: int, write_fd: int, offset: int, size: int) -> Path:
    """Move bytes ``[offset, size)`` (a torn last line) into ``<path>.torn-<timestamp>`` and
    truncate the file back to ``offset``.

    Only those bytes are ever moved: if the file no longer ends at ``size`` (another writer
    appended meanwhile), nothing is changed and :class:`TailMoved` is raised. The side file is
    complete and synced before the session file is truncated; if anything fails, no partial
    side file is left and the session file is untouched.
    """
    try:
        torn = os.pread(read_fd, size - offset + 1, offset)
        current = os.fstat(write_fd).st_size
    except OSError as exc:
        raise write_error(path, exc) from None
    if len(torn) != size - offset or current != size:
        raise TailMoved()
    side = path.with_name(f"{path.name}.torn-{file_timestamp(now_iso())}")
    n = 0
    while side.exists():
        n += 1
        side = path.with_name(f"{path.name}.torn-{file_timestamp(now_iso())}-{n}")
    try:
        fd = os.open(side, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise write_error(side, exc) from None
    try:
        try:
            write_all(fd, torn)
            os.fsync(fd)
        finally:
            os.close(fd)
        if os.fstat(write_fd).st_size != size:
            raise TailMoved()
        os.ftruncate(write_fd, offset)
    except TailMoved:
        with contextlib.suppress(OSError):
            os.unlink(side)
        raise
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(side)
        raise write_error(path, exc) from None
    return side
