"""Single writer per session: an exclusive ``flock`` on the session file itself.

The lock lives on the session file's own inode, so it works wherever the file can be opened,
even in a folder this process cannot write to. ``<session>.lock`` is only a note naming the
holder's pid for the "open in another pitui (pid N)" message: written when the folder allows,
removed on release, and replaced (or removed) when a dead holder's note is found on takeover.

flock locks die with their process, so the lock of a killed process is simply taken over.
A session that cannot be locked is never written: the caller opens it read-only and says why.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

from pitui.files import open_regular

_FULL = (errno.ENOSPC, errno.EDQUOT)
_NOT_WRITABLE = (errno.EACCES, errno.EPERM, errno.EROFS)


def lock_path_for(session_path: Path) -> Path:
    return session_path.with_name(session_path.name + ".lock")


@dataclass(frozen=True)
class LockAttempt:
    """How taking the lock went: ``lock`` when held; else ``holder`` (another process has it)
    or ``problem`` (one sentence: why it cannot be locked, e.g. the disk is full)."""

    lock: SessionLock | None
    holder: str | None = None
    problem: str | None = None


class SessionLock:
    """An exclusive advisory lock on a session file, held while it is open for writing."""

    def __init__(self, session_path: Path, fd: int, note_fd: int | None) -> None:
        self.session_path = session_path
        self.path = lock_path_for(session_path)
        self._fd: int | None = fd
        self._note_fd = note_fd

    @classmethod
    def acquire(cls, session_path: Path, fd: int | None = None) -> LockAttempt:
        """Lock ``session_path`` (``fd``: a descriptor on the exact file to lock; default: open
        the path). Never raises for an expected failure: see :class:`LockAttempt`."""
        try:
            lock_fd = os.dup(fd) if fd is not None else open_regular(session_path)[0]
        except OSError as exc:
            return LockAttempt(None, problem=_problem(session_path, exc))
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(lock_fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                return LockAttempt(None, holder=_read_holder(lock_path_for(session_path)))
            return LockAttempt(None, problem=_problem(session_path, exc))
        note_fd, error = _write_note(lock_path_for(session_path))
        if error is not None and error.errno in _FULL:
            os.close(lock_fd)  # the flock goes with it
            return LockAttempt(None, problem=_problem(session_path, error))
        # Any other failure to write the note (a read-only folder) leaves the lock held: the
        # session file itself is locked, only the pid in messages is missing.
        return LockAttempt(cls(session_path, lock_fd, note_fd))

    @classmethod
    def try_acquire(cls, session_path: Path) -> tuple[SessionLock | None, str | None]:
        """Take the lock; returns ``(lock, None)``, or ``(None, holder description)`` if held,
        or ``(None, None)`` if it cannot be taken for another reason."""
        attempt = cls.acquire(session_path)
        return attempt.lock, attempt.holder

    def adopt(self, fd: int) -> None:
        """Move the lock to ``fd``, already flocked (the file was atomically replaced by ours)."""
        old, self._fd = self._fd, fd
        if old is not None:
            os.close(old)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is None:
            return
        if self._note_fd is not None:
            with contextlib.suppress(OSError):
                if os.fstat(self._note_fd).st_ino == os.stat(self.path).st_ino:
                    os.unlink(self.path)
            os.close(self._note_fd)
            self._note_fd = None
        with contextlib.suppress(OSError):
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None


def _write_note(path: Path) -> tuple[int | None, OSError | None]:
    """Write this process's pid into ``path`` (replacing a dead holder's note)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        return None, exc
    try:
        os.ftruncate(fd, 0)
        data = f"{os.getpid()}\n".encode()
        if os.pwrite(fd, data, 0) != len(data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    except OSError as exc:
        # A stale note (or a half-written one) must not stay behind naming a dead process.
        with contextlib.suppress(OSError):
            os.unlink(path)
        os.close(fd)
        return None, exc
    return fd, None


def _problem(session_path: Path, exc: OSError) -> str:
    if exc.errno in _FULL:
        return (
            f"The disk holding {session_path} is full, so the session is open read-only: "
            "free some space and open it again."
        )
    if exc.errno in _NOT_WRITABLE:
        return f"pitui cannot write to {session_path} (permission denied), so it is open read-only."
    reason = exc.strerror or str(exc)
    return f"pitui cannot lock {session_path} ({reason}), so it is open read-only."


def _read_holder(note: Path) -> str:
    try:
        fd, _ = open_regular(note)
    except OSError:
        return "another process"
    try:
        text = os.pread(fd, 64, 0).decode(errors="replace").strip()
    except OSError:
        text = ""
    finally:
        os.close(fd)
    return f"pid {text}" if text.isdigit() else "another process"
