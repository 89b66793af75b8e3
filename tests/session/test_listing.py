"""Session listing and discovery (pi's SessionInfo, findMostRecentSession; catalog 46, 47, 54)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pitui.session import SessionStore
from pitui.session.listing import find_most_recent, list_sessions, read_session_info

HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "1970-01-01T00:00:00.000Z"}


def write(path: Path, *objs: dict[str, object]) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objs))
    return path


def message(entry_id: str, parent: str | None, role: str, ts: int, text: str = "hi") -> dict:
    body: dict[str, object] = {"role": role, "content": [{"type": "text", "text": text}]}
    body["timestamp"] = ts
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": body,
    }


def test_find_most_recent_on_empty_missing_and_invalid_folders(tmp_path: Path) -> None:
    assert find_most_recent(tmp_path) is None
    assert find_most_recent(tmp_path / "missing") is None
    (tmp_path / "a.txt").write_text("x")
    (tmp_path / "b.json").write_text("{}")
    (tmp_path / "c.jsonl").write_text('{"type":"message"}\n')
    assert find_most_recent(tmp_path) is None


def test_find_most_recent_picks_newest_valid_file(tmp_path: Path) -> None:
    old = write(tmp_path / "old.jsonl", {**HEADER, "id": "old"})
    new = write(tmp_path / "new.jsonl", {**HEADER, "id": "new"})
    invalid = tmp_path / "newest-invalid.jsonl"
    invalid.write_text("not a session\n")
    os.utime(old, (1000, 1000))
    os.utime(new, (2000, 2000))
    os.utime(invalid, (3000, 3000))
    assert find_most_recent(tmp_path) == new


def test_find_most_recent_filters_by_cwd(tmp_path: Path) -> None:
    mine = write(tmp_path / "a.jsonl", {**HEADER, "cwd": "/me"})
    other = write(tmp_path / "b.jsonl", {**HEADER, "cwd": "/other"})
    os.utime(mine, (1000, 1000))
    os.utime(other, (2000, 2000))
    assert find_most_recent(tmp_path, cwd="/me") == mine


def test_modified_is_the_last_message_timestamp_not_mtime(tmp_path: Path) -> None:
    path = write(
        tmp_path / "s.jsonl",
        HEADER,
        message("u1", None, "user", 1_700_000_000_000),
        message("a1", "u1", "assistant", 1_700_000_005_000),
    )
    os.utime(path, (5, 5))
    info = read_session_info(path)
    assert info is not None
    assert info.modified == "2023-11-14T22:13:25.000Z"


def test_info_fields_count_all_branches_and_latest_name(tmp_path: Path) -> None:
    path = write(
        tmp_path / "s.jsonl",
        {**HEADER, "cwd": "/p", "parentSession": "/x/old.jsonl"},
        message("u1", None, "user", 1, "first question"),
        message("a1", "u1", "assistant", 2),
        message("u2", "u1", "user", 3, "side branch"),
        {"type": "session_info", "id": "n1", "parentId": "u2", "timestamp": "t", "name": "One"},
        {"type": "session_info", "id": "n2", "parentId": "a1", "timestamp": "t", "name": "Two"},
    )
    info = read_session_info(path)
    assert info is not None
    assert info.messageCount == 3
    assert info.firstMessage == "first question"
    assert info.name == "Two"
    assert info.cwd == "/p" and info.parentSession == "/x/old.jsonl"


def test_empty_name_clears_and_no_messages_placeholder(tmp_path: Path) -> None:
    path = write(
        tmp_path / "s.jsonl",
        HEADER,
        {"type": "session_info", "id": "n1", "parentId": None, "timestamp": "t", "name": "A"},
        {"type": "session_info", "id": "n2", "parentId": "n1", "timestamp": "t", "name": " "},
    )
    info = read_session_info(path)
    assert info is not None
    assert info.name is None and info.firstMessage == "(no messages)" and info.messageCount == 0


def test_list_sessions_newest_first_and_skips_non_sessions(tmp_path: Path) -> None:
    for i, ts in enumerate((3_000, 1_000, 2_000)):
        store = SessionStore.create(tmp_path, "/proj")
        store.append_message(
            {"role": "user", "content": [{"type": "text", "text": f"s{i}"}], "timestamp": ts}
        )
        store.close()
    (tmp_path / "junk.jsonl").write_text("garbage\n")
    infos = list_sessions([tmp_path], cwd="/proj")
    assert [i.firstMessage for i in infos] == ["s0", "s2", "s1"]
    assert list_sessions([tmp_path], cwd="/elsewhere") == []


def test_empty_explicit_file_keeps_its_path(tmp_path: Path) -> None:
    """Catalog 50: opening an empty explicit path writes to exactly that path later."""
    path = tmp_path / "explicit.jsonl"
    path.write_bytes(b"")
    store = SessionStore.open(path, cwd="/proj")
    assert store.path == path and path.read_bytes() == b""
    store.append_message({"role": "user", "content": "hi", "timestamp": 1})
    store.close()
    first = json.loads(path.read_text().splitlines()[0])
    assert first["type"] == "session" and first["cwd"] == "/proj"
