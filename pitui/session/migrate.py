"""In-memory migration of legacy session files (v1 → v2 → v3)."""

from __future__ import annotations

from typing import Any

from pitui.session.ids import deterministic_entry_id

CURRENT_VERSION = 3


def header_version(header: dict[str, Any]) -> int:
    version = header.get("version")
    if isinstance(version, bool) or not isinstance(version, int | float):
        return 1
    return int(version)


def migrate_entries(
    header: dict[str, Any], entries: list[tuple[int, dict[str, Any]]]
) -> list[tuple[int, dict[str, Any]]]:
    """Migrate parsed ``(line_no, entry)`` pairs in place to v3 and return them.

    v1 entries get ids derived from the header id and their line number, so ids (and
    anything that refers to them, like ``--leaf``) are the same every time the file is read.
    """
    version = header_version(header)
    if version >= CURRENT_VERSION:
        return entries
    if version < 2:
        seed = str(header.get("id", ""))
        used: set[str] = set()
        previous: str | None = None
        # firstKeptEntryIndex counts parsed objects of the file, header included (index 0).
        by_index: list[dict[str, Any]] = [header] + [entry for _, entry in entries]
        for line_no, entry in entries:
            if not isinstance(entry.get("id"), str):
                entry_id = deterministic_entry_id(seed, line_no, used)
                entry["id"] = entry_id
            used.add(entry["id"])
            entry["parentId"] = previous
            previous = entry["id"]
            if entry.get("type") == "compaction" and "firstKeptEntryIndex" in entry:
                index = entry.pop("firstKeptEntryIndex")
                if isinstance(index, int) and 0 < index < len(by_index):
                    target = by_index[index]
                    if isinstance(target.get("id"), str) and target is not header:
                        entry["firstKeptEntryId"] = target["id"]
        header["version"] = 2
    # v2 → v3: the hookMessage role became custom.
    for _, entry in entries:
        message = entry.get("message")
        if (
            entry.get("type") == "message"
            and isinstance(message, dict)
            and message.get("role") == "hookMessage"
        ):
            message["role"] = "custom"
    header["version"] = CURRENT_VERSION
    return entries
