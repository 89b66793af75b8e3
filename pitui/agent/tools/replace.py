"""Replacing a file's content without ever leaving it half written.

:func:`replace_file` writes the new bytes to a temp file in the target's own folder, fsyncs it,
gives it the target's mode (and owner, where the process may), renames it over the target and
fsyncs the folder. A kill, a full disk or a crash at any moment leaves either the old content or
the new one, never a truncated file; on failure the temp file is removed. A temp file a killed
pitui left (``.NAME.PID-RANDOM.pitui-tmp``) is removed by the next write of that file and by
the next file checkpoint of the folder. The atomic write itself is
:func:`pitui.durable.replace_atomically`; this module decides which files must not be replaced
by a rename.

- A symlink is written through: its final target gets the new content, the link stays a link.
- A file with several hard links is rewritten in place (a rename would silently split it from
  its other names); so is a file whose folder pitui may not create files in (a writable file in
  a read-only folder). Those two cases are not atomic.
- Extended attributes and ACLs of the old file are not copied.
- A new file gets mode ``0666`` minus the umask, as ``open()`` would give it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pitui.durable import FolderClosedError, replace_atomically, write_in_place
from pitui.files import NotRegularFileError, file_kind


def write_target(path: Path) -> Path:
    """The file a write to ``path`` changes: ``path`` itself, or the end of its symlink chain."""
    if not path.is_symlink():
        return path
    return Path(os.path.realpath(path))


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
        write_in_place(target, data)
        return target
    try:
        replace_atomically(target, data)  # the project's modes and owner stay
    except FolderClosedError:
        if old is None:
            raise
        write_in_place(target, data)  # a writable file in a folder we may not create files in
    return target
