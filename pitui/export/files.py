"""Writing an export: atomically and durably, private (0600), folders created 0700."""

from __future__ import annotations

from pathlib import Path

from pitui.durable import replace_atomically
from pitui.private import FILE_MODE, ensure_private_folder


def write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` all at once (:func:`pitui.durable.replace_atomically`); the file
    is 0600 whatever the umask, as an export may quote anything the session holds."""
    ensure_private_folder(path.parent)
    replace_atomically(path, data, mode=FILE_MODE)
