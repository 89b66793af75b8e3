"""pi's migration tests (pi-reference §8 items 42–43) plus the v1 details of §1.4."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pitui.session import SessionStore

WriteSession = Callable[..., Path]
OpenSession = Callable[..., SessionStore]

V1_HEADER = {
    "type": "session",
    "id": "sess-1",
    "timestamp": "2025-01-01T00:00:00.000Z",
    "cwd": "/tmp",
}


def v1_message(role: str, text: str, second: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}]}
    if role == "assistant":
        message.update(provider="anthropic", model="claude-test", stopReason="stop")
    message["timestamp"] = 1_735_689_600_000 + second * 1000
    return {
        "type": "message",
        "timestamp": f"2025-01-01T00:00:{second:02d}.000Z",
        "message": message,
    }


def _texts(store: SessionStore, leaf_id: str | None = None) -> list[str]:
    projection = store.project() if leaf_id is None else store.project(leaf_id)
    out = []
    for m in projection.messages:
        if "summary" in m:
            out.append(m["summary"])
        elif isinstance(m["content"], str):
            out.append(m["content"])
        else:
            out.append("".join(b["text"] for b in m["content"]))
    return out


def test_v1_entries_get_ids_and_a_linear_chain(
    write_session: WriteSession, open_session: OpenSession
) -> None:
    path = write_session(
        [v1_message("user", "hello", 1), v1_message("assistant", "hi", 2)], header=V1_HEADER
    )
    store = open_session(path, read_only=True)
    assert store.header["version"] == 3
    first, second = list(store.nodes())
    assert re.fullmatch(r"[0-9a-f]{8}", first.id)
    assert re.fullmatch(r"[0-9a-f]{8}", second.id)
    assert first.id != second.id
    assert store.get(first.id)["parentId"] is None
    assert store.get(second.id)["parentId"] == first.id
    assert store.leaf_id == second.id
    assert _texts(store) == ["hello", "hi"]


def test_v1_ids_are_the_same_on_every_load(
    write_session: WriteSession, open_session: OpenSession
) -> None:
    path = write_session(
        [v1_message("user", "hello", 1), v1_message("assistant", "hi", 2)], header=V1_HEADER
    )
    one = [n.id for n in open_session(path, read_only=True).nodes()]
    two = [n.id for n in open_session(path, read_only=True).nodes()]
    assert one == two


def test_opening_a_v1_file_does_not_write_it(
    write_session: WriteSession, open_session: OpenSession
) -> None:
    path = write_session(
        [v1_message("user", "hello", 1), v1_message("assistant", "hi", 2)], header=V1_HEADER
    )
    before = path.read_bytes()
    store = open_session(path)
    store.project()
    store.close()
    assert path.read_bytes() == before


def test_first_append_rewrites_a_v1_file_as_v3_with_the_same_ids(
    write_session: WriteSession, open_session: OpenSession
) -> None:
    path = write_session(
        [v1_message("user", "hello", 1), v1_message("assistant", "hi", 2)], header=V1_HEADER
    )
    original = path.read_bytes()
    store = open_session(path)
    migrated_ids = [n.id for n in store.nodes()]
    new_id = store.append_message({"role": "user", "content": "more", "timestamp": 1})
    store.close()

    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["type"] == "session"
    assert lines[0]["version"] == 3
    assert lines[0]["id"] == "sess-1"
    assert [line["id"] for line in lines[1:]] == [*migrated_ids, new_id]
    assert [line["parentId"] for line in lines[1:]] == [None, *migrated_ids]
    # The original is kept next to it.
    backup = path.with_name(path.name + ".bak")
    assert backup.read_bytes() == original

    reopened = open_session(path, read_only=True)
    assert [n.id for n in reopened.nodes()] == [*migrated_ids, new_id]
    assert _texts(reopened) == ["hello", "hi", "more"]


def test_v1_compaction_index_becomes_first_kept_entry_id(
    write_session: WriteSession, open_session: OpenSession
) -> None:
    # File entries including the header: 0 header, 1 u, 2 a, 3 u, 4 a, 5 compaction, 6 u.
    compaction = {
        "type": "compaction",
        "timestamp": "2025-01-01T00:00:05.000Z",
        "summary": "Summary so far",
        "firstKeptEntryIndex": 3,
        "tokensBefore": 500,
    }
    path = write_session(
        [
            v1_message("user", "q1", 1),
            v1_message("assistant", "a1", 2),
            v1_message("user", "q2", 3),
            v1_message("assistant", "a2", 4),
            compaction,
            v1_message("user", "q3", 6),
        ],
        header=V1_HEADER,
    )
    store = open_session(path, read_only=True)
    nodes = list(store.nodes())
    entry = store.get(nodes[4].id)
    assert entry["firstKeptEntryId"] == nodes[2].id
    assert "firstKeptEntryIndex" not in entry
    assert _texts(store) == ["Summary so far", "q2", "a2", "q3"]


def test_v1_compaction_index_pointing_at_the_header_keeps_nothing(
    write_session: WriteSession, open_session: OpenSession
) -> None:
    compaction = {
        "type": "compaction",
        "timestamp": "2025-01-01T00:00:03.000Z",
        "summary": "Summary",
        "firstKeptEntryIndex": 0,
        "tokensBefore": 500,
    }
    path = write_session(
        [v1_message("user", "q1", 1), v1_message("assistant", "a1", 2), compaction],
        header=V1_HEADER,
    )
    store = open_session(path, read_only=True)
    entry = store.get(list(store.nodes())[2].id)
    assert "firstKeptEntryIndex" not in entry
    assert "firstKeptEntryId" not in entry
    assert _texts(store) == ["Summary"]


def test_v2_file_keeps_its_ids(write_session: WriteSession, open_session: OpenSession) -> None:
    header = {**V1_HEADER, "version": 2}
    entries = [
        {**v1_message("user", "hello", 1), "id": "abc", "parentId": None},
        {**v1_message("assistant", "hi", 2), "id": "def", "parentId": "abc"},
        {**v1_message("user", "branch", 3), "id": "ghi", "parentId": "abc"},
    ]
    store = open_session(write_session(entries, header=header), read_only=True)
    assert store.header["version"] == 3
    assert [(n.id, n.parent_id) for n in store.nodes()] == [
        ("abc", None),
        ("def", "abc"),
        ("ghi", "abc"),
    ]
    assert store.leaf_id == "ghi"
    assert _texts(store) == ["hello", "branch"]


def test_v2_hook_message_becomes_custom(
    write_session: WriteSession, open_session: OpenSession
) -> None:
    header = {**V1_HEADER, "version": 2}
    hook = {
        "type": "message",
        "id": "h1",
        "parentId": None,
        "timestamp": "2025-01-01T00:00:01.000Z",
        "message": {
            "role": "hookMessage",
            "customType": "note",
            "content": "from a hook",
            "display": True,
            "timestamp": 1,
        },
    }
    store = open_session(write_session([hook], header=header), read_only=True)
    assert store.get("h1")["message"]["role"] == "custom"
    assert [m["role"] for m in store.project().messages] == ["custom"]


def test_v3_file_is_not_touched(write_session: WriteSession, open_session: OpenSession) -> None:
    header = {**V1_HEADER, "version": 3}
    entry = {**v1_message("user", "hello", 1), "id": "abc", "parentId": None}
    path = write_session([entry], header=header)
    before = path.read_bytes()
    store = open_session(path)
    store.append_message({"role": "assistant", "content": [], "timestamp": 2})
    store.close()
    assert path.read_bytes().startswith(before)
    assert not path.with_name(path.name + ".bak").exists()
