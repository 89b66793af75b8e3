"""Files and folders pitui writes for the user alone: folders 0700, files 0600.

Logs, exports, saved tool outputs, the trust list, session backups (``.bak``) and torn tails
(``.torn-*``) may quote session content, so nobody else on the machine may read them. Files
pitui writes *for the project* (the write and edit tools) keep the project's modes instead.

Pure: stdlib only, so every layer may use it.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

FILE_MODE = 0o600
FOLDER_MODE = 0o700


def ensure_private_folder(folder: Path) -> None:
    """Create ``folder`` and each missing parent with mode 0700 (folders that exist keep
    theirs)."""
    missing: list[Path] = []
    current = folder
    while not current.is_dir():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=FOLDER_MODE)


def open_private_append(path: Path) -> int:
    """A descriptor appending to ``path``, created 0600 (an existing file is made 0600)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    with contextlib.suppress(OSError):  # not ours (a shared log folder): still append
        os.fchmod(fd, FILE_MODE)
    return fd
