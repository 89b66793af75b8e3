"""Folder helpers for checkpoint tests: write files, and exact pictures of a folder (every
path, its type, bytes, mode) to compare states byte for byte."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pitui.checkpoint.store import CheckpointStore

OpenStore = Callable[..., CheckpointStore]


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            content = content.encode()
        path.write_bytes(content)


def picture(root: Path, *, skip: tuple[str, ...] = (".git",)) -> dict[str, tuple[str, Any, int]]:
    """Every path under ``root`` → (kind, content digest or link target, permission bits)."""
    out: dict[str, tuple[str, Any, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        dirnames[:] = [d for d in dirnames if d not in skip or rel_dir != "."]
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(full), 0)
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", None, 0)
            else:
                digest = hashlib.sha256(Path(full).read_bytes()).hexdigest()
                out[rel] = ("file", digest, stat.S_IMODE(st.st_mode))
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
    return out


def tree_bytes(root: Path) -> dict[str, tuple[int, bytes | str]]:
    """Every path under ``root`` (a ``.git`` folder) with its mode and exact bytes."""
    out: dict[str, tuple[int, bytes | str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            st = os.lstat(full)
            rel = os.path.relpath(full, root)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = (st.st_mode, os.readlink(full))
            elif stat.S_ISREG(st.st_mode):
                out[rel] = (st.st_mode, Path(full).read_bytes())
            else:
                out[rel] = (st.st_mode, b"")
    return out
