"""Replacing a file's content without ever leaving it half written.

:func:`replace_file` writes the new bytes to a temp file in the target's own folder, fsyncs it,
gives it the target's mode (and owner, where the process may), renames it over the target and
fsyncs the folder. A kill, a full disk or a crash at any moment leaves either the old content or
the new one, never a truncated file; on failure the temp file is removed. A temp file a killed
pitui left (``.NAME.PID-RANDOM.pitui-tmp``) is removed by the next write of that file and by
the next file checkpoint of the folder (:func:`pitui.files.remove_stale_temps`).

- A symlink is written through: its final target gets the new content, the link stays a link.
- A file with several hard links is rewritten in place (a rename would silently split it from
  its other names); so is a file whose folder pitui may not create files in (a writable file in
  a read-only folder). Those two cases are not atomic.
- Extended attributes and ACLs of the old file are not copied.
- A new file gets mode ``0666`` minus the umask, as ``open()`` would give it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path

from pitui.files import (
    TEMP_SUFFIX,
    NotRegularFileError,
    file_kind,
    remove_stale_temps,
    short_name,
    temp_prefix,
)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.EIO, "short write")
        view = view[written:]


def _umask() -> int:
    """The process umask, read without changing it (``os.umask`` would, for a moment, for
    every thread); 0o022 where ``/proc`` cannot tell."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def _fsync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_target(path: Path) -> Path:
    """The file a write to ``path`` changes: ``path`` itself, or the end of its symlink chain."""
    if not path.is_symlink():
        return path
    return Path(os.path.realpath(path))


def _write_in_place(target: Path, data: bytes) -> None:
    fd = os.open(target, os.O_WRONLY | os.O_TRUNC | os.O_CLOEXEC | os.O_NOCTTY)
    try:
        _write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_file(path: Path, data: bytes) -> Path:
    """Make ``data`` the content of ``path`` (a regular file or none yet; see the module
    docstring). Returns the file actually written (the symlink's target for a symlink).

    Raises ``OSError`` (the old content is then intact and no temp file is left).
    """
    target = write_target(path)
    try:
        old: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        old = None
    if old is not None and not stat.S_ISREG(old.st_mode):
        raise NotRegularFileError(target, file_kind(old.st_mode))
    if old is not None and old.st_nlink > 1:
        _write_in_place(target, data)
        return target
    # What a write of this file that was killed half way left here goes first.
    remove_stale_temps(target.parent, short_name(target.name))
    try:
        fd, tmp_name = tempfile.mkstemp(
            prefix=temp_prefix(target.name), suffix=TEMP_SUFFIX, dir=target.parent
        )
    except PermissionError:
        if old is None:
            raise
        _write_in_place(target, data)  # a writable file in a folder we may not create files in
        return target
    tmp = Path(tmp_name)
    try:
        try:
            _write_all(fd, data)
            if old is not None:
                os.fchmod(fd, stat.S_IMODE(old.st_mode))
                if (old.st_uid, old.st_gid) != (os.getuid(), os.getgid()):
                    with contextlib.suppress(OSError):  # only root may give a file away
                        os.fchown(fd, old.st_uid, old.st_gid)
            else:
                os.fchmod(fd, 0o666 & ~_umask())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_folder(target.parent)
    return target
