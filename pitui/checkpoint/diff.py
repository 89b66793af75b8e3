"""Text diffs of checkpoint changes (for the restore prompt, the Files tab and the CLI).

The lines are plain text: callers render them (never as markup) and strip terminal escapes.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from dataclasses import dataclass

from pitui.checkpoint.store import Change, CheckpointStore, display_path

MAX_DIFF_BYTES = 512 * 1024
MAX_DIFF_LINES = 2000


@dataclass(frozen=True)
class FileDiff:
    """A change with its diff: ``lines`` start with ``+``, ``-``, `` `` or ``@@``; ``note``
    describes what a line diff cannot (binary, symlink, permissions, too large)."""

    change: Change
    lines: tuple[str, ...]
    note: str = ""
    added: int = 0
    removed: int = 0


STATUS_WORDS = {"A": "added", "M": "modified", "D": "deleted"}


def _perm_text(mode: int, perm: int | None) -> str:
    if perm is not None:
        return f"{perm:04o}"
    return "0755" if mode == 0o100755 else "0644"


def _text(data: bytes) -> str | None:
    if b"\0" in data[:8000]:
        return None
    return data.decode("utf-8", "replace")


def file_diff(change: Change, blobs: dict[str, bytes], context: int = 3) -> FileDiff:
    """The diff of one change, from blob contents (``blobs`` by id)."""
    old = blobs.get(change.old_sha or "", b"") if change.old_sha else b""
    new = blobs.get(change.new_sha or "", b"") if change.new_sha else b""
    notes: list[str] = []
    old_link = change.old_mode == 0o120000
    new_link = change.new_mode == 0o120000
    if old_link or new_link:
        if old_link and change.status != "A":
            notes.append(f"was a symlink to {display_path(os.fsdecode(old))}")
        if new_link and change.status != "D":
            notes.append(f"symlink to {display_path(os.fsdecode(new))}")
        return FileDiff(change, (), "; ".join(notes))
    if change.status == "M":
        old_perm = _perm_text(change.old_mode, change.old_perm)
        new_perm = _perm_text(change.new_mode, change.new_perm)
        if old_perm != new_perm:
            notes.append(f"mode {old_perm} → {new_perm}")
        if change.old_sha == change.new_sha:
            return FileDiff(change, (), "; ".join(notes))
    if max(len(old), len(new)) > MAX_DIFF_BYTES:
        notes.append(f"too large to show ({len(old):,} → {len(new):,} bytes)")
        return FileDiff(change, (), "; ".join(notes))
    old_text, new_text = _text(old), _text(new)
    if old_text is None or new_text is None:
        notes.append(f"binary ({len(old):,} → {len(new):,} bytes)")
        return FileDiff(change, (), "; ".join(notes))
    lines: list[str] = []
    added = removed = 0
    for line in difflib.unified_diff(
        old_text.splitlines(), new_text.splitlines(), lineterm="", n=context
    ):
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("+"):
            added += 1
        elif line.startswith("-"):
            removed += 1
        if len(lines) < MAX_DIFF_LINES:
            lines.append(line)
    if added + removed > MAX_DIFF_LINES:
        notes.append(f"diff cut at {MAX_DIFF_LINES:,} lines")
    if not lines and change.status == "A":
        notes.append("empty file")
    return FileDiff(change, tuple(lines), "; ".join(notes), added, removed)


def diffs(store: CheckpointStore, changes: Iterable[Change], context: int = 3) -> list[FileDiff]:
    """Diffs of many changes, reading their blobs in one go."""
    items = list(changes)
    blobs = store.read_blobs(
        sha for c in items for sha in (c.old_sha, c.new_sha) if sha is not None
    )
    return [file_diff(c, blobs, context) for c in items]


def summary_counts(changes: Iterable[Change]) -> dict[str, int]:
    counts = {"added": 0, "modified": 0, "deleted": 0}
    for change in changes:
        counts[STATUS_WORDS[change.status]] += 1
    return counts


def summary_text(changes: Iterable[Change]) -> str:
    """``2 added, 3 modified, 1 deleted`` (only the non-zero parts; ``no changes``)."""
    counts = summary_counts(changes)
    parts = [f"{n} {word}" for word, n in counts.items() if n]
    return ", ".join(parts) or "no changes"
