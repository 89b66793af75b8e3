"""Opening files that must be regular files, without ever blocking.

``open()`` on a FIFO waits for the other end forever, and a symlink to ``/dev/zero`` or
``/dev/urandom`` reads without end. :func:`open_regular` opens with ``O_NONBLOCK`` (so a FIFO
cannot block the open), checks what was opened with ``fstat`` (so a file swapped in between a
check and the open is still caught) and refuses anything that is not a regular file.

Pure: stdlib only, so every layer may use it. (Writing files durably, and the temp files that
takes, is :mod:`pitui.durable`.)
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from pathlib import Path

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str:
    """What a non-regular file is, for a sentence: ``"a named pipe (FIFO)"``, ``"a directory"``."""
    for check, name in _KINDS:
        if check(mode):
            return name
    return "not a regular file"


class NotRegularFileError(OSError):
    """The path exists but is not a regular file (``kind`` says what it is)."""

    def __init__(self, path: str | os.PathLike[str], kind: str) -> None:
        super().__init__(errno.EINVAL, f"{path} is {kind}, not a regular file")
        self.path = Path(path)
        self.kind = kind
        self.is_directory = kind == "a directory"


def check_regular(path: str | os.PathLike[str]) -> os.stat_result | None:
    """``stat`` of ``path`` (symlinks followed) or None if it does not exist or cannot be
    looked at (the open that follows reports why); raises :class:`NotRegularFileError` for
    anything but a regular file."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        raise NotRegularFileError(path, file_kind(info.st_mode))
    return info


def open_regular(
    path: str | os.PathLike[str], flags: int = os.O_RDONLY, mode: int = 0o666
) -> tuple[int, os.stat_result]:
    """``os.open`` that never blocks and only ever returns a regular file: ``(fd, fstat)``.

    Raises :class:`NotRegularFileError` for a directory, FIFO, device or socket (a FIFO opened
    for writing with no reader, ``ENXIO``, counts as one), else the ``OSError`` of the open.
    The descriptor is blocking again once returned (regular files never block anyway).
    """
    try:
        fd = os.open(path, flags | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise NotRegularFileError(path, "a named pipe (FIFO)") from None
        if exc.errno == errno.EISDIR:
            raise NotRegularFileError(path, "a directory") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFileError(path, file_kind(info.st_mode))
        status = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, status & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd, info
