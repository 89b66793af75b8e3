"""Single writer per session: an advisory ``flock`` on ``<session>.lock``.

flock locks die with their process, so a lock left by a killed process is simply taken over.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path


def lock_path_for(session_path: Path) -> Path:
    return session_path.with_name(session_path.name + ".lock")


class SessionLock:
    """An exclusive advisory lock held while a session is open for writing."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def try_acquire(cls, session_path: Path) -> tuple[SessionLock | None, str | None]:
        """Take the lock; returns ``(lock, None)``, or ``(None, holder description)`` if held."""
        path = lock_path_for(session_path)
        for _ in range(5):
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError:
                # Cannot create a lock file (read-only folder): run unlocked rather than refuse.
                return None, None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = _read_holder(fd)
                os.close(fd)
                return None, holder
            # The file may have been unlinked by its previous holder between open and flock.
            try:
                same = os.fstat(fd).st_ino == os.stat(path).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            return cls(path, fd), None
        return None, None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        with contextlib.suppress(OSError):
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None


def _read_holder(fd: int) -> str:
    try:
        text = os.pread(fd, 64, 0).decode(errors="replace").strip()
    except OSError:
        text = ""
    return f"pid {text}" if text.isdigit() else "another process"
