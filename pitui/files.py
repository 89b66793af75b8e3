"""Opening files that must be regular files, without ever blocking; atomic writes' temp files.

``open()`` on a FIFO waits for the other end forever, and a symlink to ``/dev/zero`` or
``/dev/urandom`` reads without end. :func:`open_regular` opens with ``O_NONBLOCK`` (so a FIFO
cannot block the open), checks what was opened with ``fstat`` (so a file swapped in between a
check and the open is still caught) and refuses anything that is not a regular file.

Pure: stdlib only, so every layer may use it.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import time
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


# ----------------------------------------------------------------------------- atomic writes' temps

TEMP_SUFFIX = ".pitui-tmp"
"""The temp file of an atomic write (:mod:`pitui.agent.tools.replace`) is named
``.NAME.PID-RANDOM.pitui-tmp`` beside the file it replaces (``.NAME.RANDOM.pitui-tmp`` before
the process id was in the name)."""
STALE_UNNAMED_SECONDS = 600.0
"""A temp file without a process id is left over once untouched this long."""
STALE_REUSED_SECONDS = 3600.0
"""A temp file whose process id runs again (reused, or another machine's) after this long."""


def short_name(name: str) -> str:
    """At most 80 bytes of ``name`` (a temp file's name must fit the 255-byte limit)."""
    return os.fsdecode(os.fsencode(name)[:80]).encode("utf-8", "ignore").decode("utf-8", "ignore")


def temp_prefix(name: str) -> str:
    """The start of an atomic write's temp name for a file named ``name`` (mkstemp adds the
    random part and :data:`TEMP_SUFFIX`)."""
    return f".{short_name(name)}.{os.getpid()}-"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists (another user's)
    return True


def is_stale_temp(name: str | bytes, info: os.stat_result, now: float | None = None) -> bool:
    """Is ``name`` (a file's name, with ``info`` its ``lstat``) an atomic write's temp file
    that its writer left behind (killed mid-write)? A temp file of a running pitui is not."""
    text = os.fsdecode(name)
    if not (text.startswith(".") and text.endswith(TEMP_SUFFIX)) or not stat.S_ISREG(info.st_mode):
        return False
    token = text[: -len(TEMP_SUFFIX)].rpartition(".")[2]
    age = (now if now is not None else time.time()) - info.st_mtime
    pid_text, dash, _ = token.partition("-")
    if not dash or not pid_text.isdigit():
        return age > STALE_UNNAMED_SECONDS
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    return not _pid_alive(pid) or age > STALE_REUSED_SECONDS


def remove_stale_temps(folder: Path, name: str | None = None) -> list[Path]:
    """Remove the atomic writes' temp files left behind in ``folder`` (only those of files
    named ``name``, when given); returns what was removed. Errors are ignored."""
    start = f".{name}." if name is not None else "."
    removed = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if not (entry.name.startswith(start) and entry.name.endswith(TEMP_SUFFIX)):
                    continue
                try:
                    info = entry.stat(follow_symlinks=False)
                    if is_stale_temp(entry.name, info):
                        os.unlink(entry.path)
                        removed.append(Path(entry.path))
                except OSError:
                    continue
    except OSError:
        pass
    return removed
