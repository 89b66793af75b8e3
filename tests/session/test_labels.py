"""pi's label tests (pi-reference §8 items 34–41), adapted to pi 1.6 and our API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pitui.session import EntryNotFoundError, SessionStore, create_branched_session


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": 1_700_000_000_000}


def assistant(text: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "provider": "anthropic",
        "model": "claude-test",
        "stopReason": "stop",
        "timestamp": 1_700_000_000_001,
    }


@pytest.fixture
def store() -> SessionStore:
    return SessionStore.in_memory("/work/project")


def test_set_label(store: SessionStore) -> None:
    msg_id = store.append_message(user("hello"))
    label_id = store.append_label(msg_id, "checkpoint")
    assert store.label_of(msg_id) == "checkpoint"
    assert store.labels == {msg_id: "checkpoint"}
    entry = store.get(label_id)
    assert entry["type"] == "label"
    assert entry["id"] == label_id
    assert entry["targetId"] == msg_id
    assert entry["label"] == "checkpoint"


def test_label_entry_moves_the_leaf(store: SessionStore) -> None:
    msg_id = store.append_message(user("hello"))
    label_id = store.append_label(msg_id, "checkpoint")
    assert store.leaf_id == label_id
    assert store.get(label_id)["parentId"] == msg_id


@pytest.mark.parametrize("cleared", [None, ""])
def test_clear_label(store: SessionStore, cleared: str | None) -> None:
    msg_id = store.append_message(user("hello"))
    store.append_label(msg_id, "checkpoint")
    label_id = store.append_label(msg_id, cleared)
    assert store.label_of(msg_id) is None
    assert msg_id not in store.labels
    if cleared is None:
        # JSON.stringify drops undefined: a cleared label entry has no "label" key.
        assert "label" not in store.get(label_id)


def test_last_label_wins(store: SessionStore) -> None:
    msg_id = store.append_message(user("hello"))
    store.append_label(msg_id, "first")
    store.append_label(msg_id, "second")
    store.append_label(msg_id, "third")
    assert store.label_of(msg_id) == "third"


def test_labels_of_nested_tree_nodes(store: SessionStore) -> None:
    id1 = store.append_message(user("1"))
    id2 = store.append_message(assistant("2"))
    id3 = store.append_message(user("3"))
    store.append_label(id1, "start")
    store.append_label(id3, "nested")
    tree = store.tree()
    assert tree["null"] == [id1]
    assert tree[id1] == [id2]
    assert tree[id2] == [id3]
    assert store.label_of(id1) == "start"
    assert store.label_of(id2) is None
    assert store.label_of(id3) == "nested"
    assert store.labels == {id1: "start", id3: "nested"}


def test_labels_survive_branching_for_targets_on_the_path(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, "/work/project")
    id1 = store.append_message(user("1"))
    id2 = store.append_message(assistant("2"))
    store.append_message(user("3"))
    first = store.append_label(id1, "first")
    second = store.append_label(id2, "second")
    original_times = {store.get(first)["timestamp"], store.get(second)["timestamp"]}
    new = create_branched_session(store, id2)
    try:
        assert new.labels == {id1: "first", id2: "second"}
        label_entries = [new.get(n.id) for n in new.nodes() if n.type == "label"]
        assert len(label_entries) == 2
        assert {e["targetId"] for e in label_entries} == {id1, id2}
        assert {e["id"] for e in label_entries}.isdisjoint({first, second})
        # pi 1.6: re-created labels keep the original label timestamps.
        assert {e["timestamp"] for e in label_entries} == original_times
        # Reopening the written file gives the same labels.
        assert new.path is not None
        reopened = SessionStore.open(new.path, read_only=True)
        assert reopened.labels == {id1: "first", id2: "second"}
        reopened.close()
    finally:
        new.close()
        store.close()


def test_labels_off_the_branched_path_are_dropped(store: SessionStore) -> None:
    id1 = store.append_message(user("1"))
    id2 = store.append_message(assistant("2"))
    id3 = store.append_message(user("3"))
    store.append_label(id1, "kept")
    store.append_label(id3, "dropped")
    new = create_branched_session(store, id2)
    assert new.label_of(id1) == "kept"
    assert new.label_of(id3) is None
    assert id3 not in new


def test_cleared_labels_are_not_recreated(store: SessionStore) -> None:
    id1 = store.append_message(user("1"))
    id2 = store.append_message(assistant("2"))
    store.append_label(id1, "temporary")
    store.append_label(id1, None)
    new = create_branched_session(store, id2)
    assert new.labels == {}
    assert [n.type for n in new.nodes()] == ["message", "message"]


def test_label_entries_produce_no_context_messages(store: SessionStore) -> None:
    msg_id = store.append_message(user("hello"))
    store.append_label(msg_id, "checkpoint")
    projection = store.project()
    assert [m["role"] for m in projection.messages] == ["user"]
    assert projection.source_entry_ids == [msg_id]


def test_label_unknown_entry_raises(store: SessionStore) -> None:
    store.append_message(user("hello"))
    with pytest.raises(EntryNotFoundError, match="Entry non-existent not found"):
        store.append_label("non-existent", "x")
    assert len(store) == 1


def test_labels_replay_in_file_order_on_reopen(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, "/work/project")
    id1 = store.append_message(user("1"))
    id2 = store.append_message(assistant("2"))
    store.append_label(id1, "one")
    store.append_label(id2, "two")
    store.append_label(id1, "uno")
    store.append_label(id2, "")
    path = store.path
    store.close()
    assert path is not None
    reopened = SessionStore.open(path, read_only=True)
    try:
        assert reopened.labels == {id1: "uno"}
    finally:
        reopened.close()


def test_label_written_on_a_side_branch_applies_everywhere(
    write_session: Any, open_session: Any
) -> None:
    def entry(entry_id: str, parent: str | None, **fields: Any) -> dict[str, Any]:
        base: dict[str, Any] = {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": "2025-01-01T00:00:00.000Z",
        }
        base.update(fields)
        return base

    path = write_session(
        [
            entry("1", None, message=user("1")),
            entry("2", "1", message=assistant("2")),
            entry("side", "1", message=assistant("side")),
            entry("L", "side", type="label", targetId="2", label="from the side"),
            entry("3", "2", message=user("3")),
        ]
    )
    store = open_session(path, read_only=True)
    assert store.leaf_id == "3"
    assert "L" not in [n.id for n in store.path_to()]
    assert store.label_of("2") == "from the side"
