"""One writer at a time on a checkpoint store: an exclusive ``flock`` on ``<store>/lock``.

Every operation that writes the store (capture, restore, prune) or the project's files (restore)
holds it, in any pitui process and any thread (each holder opens its own descriptor, and flock
locks belong to the open file, so two threads of one process exclude each other too). A lock
left by a killed process is released by the kernel.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from pitui.errors import UserError


class StoreBusy(UserError):
    """Another pitui has held the store for longer than we wait."""


@contextlib.contextmanager
def store_lock(path: Path, timeout: float = 60.0) -> Iterator[None]:
    """Hold the store's lock for the ``with`` block (waits up to ``timeout`` seconds)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        deadline = time.monotonic() + timeout
        delay = 0.002
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise StoreBusy(
                        "Another pitui is using this folder's checkpoints; try again in a moment."
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
