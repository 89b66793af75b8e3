"""pi's tree-traversal tests (pi-reference §8 items 15–33), adapted to pi 1.6 and our API."""

from __future__ import annotations

import json
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
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-test",
        "stopReason": "stop",
        "timestamp": 1_700_000_000_001,
    }


def texts(store: SessionStore, leaf_id: str | None = None) -> list[str]:
    projection = store.project(leaf_id) if leaf_id is not None else store.project()
    out = []
    for m in projection.messages:
        content = m.get("content", m.get("summary"))
        if isinstance(content, list):
            content = "".join(b.get("text", "") for b in content)
        out.append(content)
    return out


def ids(nodes: list[Any]) -> list[str]:
    return [n.id for n in nodes]


@pytest.fixture
def store() -> SessionStore:
    return SessionStore.in_memory("/work/project")


# --------------------------------------------------------------------------- appends chain


def test_append_message_chains_parents(store: SessionStore) -> None:
    id1 = store.append_message(user("first"))
    id2 = store.append_message(assistant("second"))
    id3 = store.append_message(user("third"))
    entries = [store.get(i) for i in (id1, id2, id3)]
    assert [e["parentId"] for e in entries] == [None, id1, id2]
    assert [e["type"] for e in entries] == ["message"] * 3
    assert len({id1, id2, id3}) == 3


def test_thinking_level_change_is_chained(store: SessionStore) -> None:
    id1 = store.append_message(user("hello"))
    thinking_id = store.append_thinking_level_change("high")
    id3 = store.append_message(assistant("response"))
    assert store.get(thinking_id)["parentId"] == id1
    assert store.get(thinking_id)["thinkingLevel"] == "high"
    assert store.get(id3)["parentId"] == thinking_id


def test_model_change_stores_provider_and_model(store: SessionStore) -> None:
    id1 = store.append_message(user("hello"))
    model_id = store.append_model_change("openai", "gpt-4")
    id3 = store.append_message(assistant("response"))
    entry = store.get(model_id)
    assert entry["type"] == "model_change"
    assert (entry["provider"], entry["modelId"]) == ("openai", "gpt-4")
    assert entry["parentId"] == id1
    assert store.get(id3)["parentId"] == model_id


def test_compaction_is_chained_and_stores_fields(store: SessionStore) -> None:
    id1 = store.append_message(user("1"))
    id2 = store.append_message(assistant("2"))
    compaction_id = store.append_compaction("summary", id1, 1000)
    id4 = store.append_message(user("3"))
    entry = store.get(compaction_id)
    assert entry["type"] == "compaction"
    assert entry["parentId"] == id2
    assert entry["summary"] == "summary"
    assert entry["firstKeptEntryId"] == id1
    assert entry["tokensBefore"] == 1000
    assert store.get(id4)["parentId"] == compaction_id


def test_compaction_without_first_kept_is_retain_none(store: SessionStore) -> None:
    store.append_message(user("1"))
    store.append_message(assistant("2"))
    compaction_id = store.append_compaction("everything", None, 10)
    assert store.get(compaction_id)["firstKeptEntryId"] == compaction_id
    store.append_message(user("3"))
    assert texts(store) == ["everything", "3"]


def test_custom_entry_is_chained_and_stores_data(store: SessionStore) -> None:
    id1 = store.append_message(user("hello"))
    custom_id = store.append_custom("my_data", {"key": "value"})
    id3 = store.append_message(assistant("response"))
    entry = store.get(custom_id)
    assert entry["type"] == "custom"
    assert entry["customType"] == "my_data"
    assert entry["data"] == {"key": "value"}
    assert entry["parentId"] == id1
    assert store.get(id3)["parentId"] == custom_id


def test_leaf_follows_every_append(store: SessionStore) -> None:
    assert store.leaf_id is None
    assert store.leaf is None
    id1 = store.append_message(user("1"))
    assert store.leaf_id == id1
    id2 = store.append_message(assistant("2"))
    assert store.leaf_id == id2
    id3 = store.append_thinking_level_change("high")
    assert store.leaf_id == id3


# --------------------------------------------------------------------------- path and tree


def test_path_of_empty_session_is_empty(store: SessionStore) -> None:
    assert store.path_to() == []


def test_path_after_one_entry(store: SessionStore) -> None:
    id1 = store.append_message(user("1"))
    assert ids(store.path_to()) == [id1]


def test_path_is_root_first_and_includes_non_messages(store: SessionStore) -> None:
    id1 = store.append_message(user("1"))
    id2 = store.append_thinking_level_change("high")
    id3 = store.append_model_change("openai", "gpt-4")
    id4 = store.append_message(assistant("2"))
    assert ids(store.path_to()) == [id1, id2, id3, id4]
    assert ids(store.path_to(id2)) == [id1, id2]


def test_tree_of_empty_session(store: SessionStore) -> None:
    assert store.tree() == {}
    assert store.roots() == []
    assert store.children(None) == []


def test_linear_tree_is_one_root_with_single_children(store: SessionStore) -> None:
    id1 = store.append_message(user("1"))
    id2 = store.append_message(assistant("2"))
    id3 = store.append_message(user("3"))
    assert ids(store.roots()) == [id1]
    assert store.tree() == {"null": [id1], id1: [id2], id2: [id3]}
    assert store.children(id3) == []


def test_branching_gives_a_node_two_children(store: SessionStore) -> None:
    store.append_message(user("1"))
    id2 = store.append_message(assistant("2"))
    id3 = store.append_message(user("3"))
    store.branch(id2)
    id4 = store.append_message(user("4"))
    assert ids(store.children(id2)) == [id3, id4]
    assert store.tree()[id2] == [id3, id4]


def test_three_branches_from_one_node(store: SessionStore) -> None:
    id1 = store.append_message(user("root"))
    branch_ids = []
    for name in ("a", "b", "c"):
        store.branch(id1)
        branch_ids.append(store.append_message(assistant(name)))
    assert ids(store.children(id1)) == branch_ids


def test_deep_branching(store: SessionStore) -> None:
    store.append_message(user("1"))
    id2 = store.append_message(assistant("2"))
    id3 = store.append_message(user("3"))
    id4 = store.append_message(assistant("4"))
    store.branch(id2)
    id5 = store.append_message(user("5"))
    id6 = store.append_message(assistant("6"))
    store.branch(id5)
    id7 = store.append_message(assistant("7"))
    assert ids(store.children(id2)) == [id3, id5]
    assert ids(store.children(id5)) == [id6, id7]
    assert ids(store.children(id3)) == [id4]
    assert texts(store, id7) == ["1", "2", "5", "7"]


def test_tree_children_are_ordered_by_timestamp_ties_in_file_order(
    write_session: Any, open_session: Any
) -> None:
    def entry(entry_id: str, parent: str | None, ts: str) -> dict[str, Any]:
        return {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": ts,
            "message": user(entry_id),
        }

    path = write_session(
        [
            entry("r", None, "2025-01-01T00:00:00.000Z"),
            entry("late", "r", "2025-01-01T00:00:09.000Z"),
            entry("tie1", "r", "2025-01-01T00:00:05.000Z"),
            entry("early", "r", "2025-01-01T00:00:01.000Z"),
            entry("tie2", "r", "2025-01-01T00:00:05.000Z"),
        ]
    )
    store = open_session(path, read_only=True)
    assert ids(store.children("r")) == ["late", "tie1", "early", "tie2"]
    assert ids(store.tree_children("r")) == ["early", "tie1", "tie2", "late"]
    assert store.tree()["r"] == ["early", "tie1", "tie2", "late"]


def test_roots_in_file_order_include_self_parent_and_orphans(
    write_session: Any, open_session: Any
) -> None:
    def entry(entry_id: str, parent: str | None) -> dict[str, Any]:
        return {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": "2025-01-01T00:00:00.000Z",
            "message": user(entry_id),
        }

    path = write_session(
        [entry("a", None), entry("b", "b"), entry("c", "nowhere"), entry("d", "a")]
    )
    store = open_session(path, read_only=True)
    assert ids(store.roots()) == ["a", "b", "c"]
    assert store.tree()["null"] == ["a", "b", "c"]


# --------------------------------------------------------------------------- leaf movement


def test_branch_moves_leaf_and_next_append_is_its_child(store: SessionStore) -> None:
    id1 = store.append_message(user("1"))
    store.append_message(assistant("2"))
    store.branch(id1)
    assert store.leaf_id == id1
    id3 = store.append_message(assistant("3"))
    assert store.get(id3)["parentId"] == id1


def test_branch_to_unknown_entry_raises(store: SessionStore) -> None:
    id1 = store.append_message(user("1"))
    with pytest.raises(EntryNotFoundError, match="Entry nonexistent not found"):
        store.branch("nonexistent")
    assert store.leaf_id == id1


def test_reset_leaf_starts_a_new_root(store: SessionStore) -> None:
    id1 = store.append_message(user("1"))
    store.reset_leaf()
    assert store.leaf_id is None
    assert store.project().messages == []
    id2 = store.append_message(user("2"))
    assert store.get(id2)["parentId"] is None
    assert ids(store.roots()) == [id1, id2]
    assert texts(store) == ["2"]


def test_branch_with_summary(store: SessionStore) -> None:
    id1 = store.append_message(user("1"))
    id2 = store.append_message(assistant("2"))
    summary_id = store.branch_with_summary(id1, "Summary of abandoned work")
    entry = store.get(summary_id)
    assert store.leaf_id == summary_id
    assert entry["type"] == "branch_summary"
    assert entry["parentId"] == id1
    assert entry["summary"] == "Summary of abandoned work"
    # pi 1.6: fromId is the leaf before the call (the abandoned path), not the attach point.
    assert entry["fromId"] == id2
    assert texts(store) == ["1", "Summary of abandoned work"]


def test_branch_with_summary_at_root_records_old_leaf(store: SessionStore) -> None:
    store.append_message(user("1"))
    id2 = store.append_message(assistant("2"))
    summary_id = store.branch_with_summary(None, "Went back to the start")
    entry = store.get(summary_id)
    assert entry["parentId"] is None
    assert entry["fromId"] == id2
    assert summary_id in ids(store.roots())


def test_branch_with_summary_from_null_leaf_is_root(store: SessionStore) -> None:
    store.append_message(user("1"))
    store.reset_leaf()
    summary_id = store.branch_with_summary(None, "Fresh start")
    assert store.get(summary_id)["fromId"] == "root"


def test_branch_with_summary_to_unknown_entry_raises(store: SessionStore) -> None:
    id1 = store.append_message(user("1"))
    with pytest.raises(EntryNotFoundError, match="Entry nonexistent not found"):
        store.branch_with_summary("nonexistent", "summary")
    assert store.leaf_id == id1
    assert len(store) == 1


def test_leaf_entry_and_entry_lookup(store: SessionStore) -> None:
    assert store.leaf is None
    id1 = store.append_message(user("first"))
    id2 = store.append_message(assistant("second"))
    assert store.leaf is not None and store.leaf.id == id2
    assert store.find("unknown") is None
    with pytest.raises(EntryNotFoundError):
        store.get("unknown")
    assert store.get(id1)["message"]["content"] == "first"
    assert store.node(id1).role == "user"


def test_context_after_branching_excludes_abandoned_entry(store: SessionStore) -> None:
    store.append_message(user("msg1"))
    id2 = store.append_message(assistant("msg2"))
    store.append_message(user("msg3"))
    store.branch(id2)
    store.append_message(user("msg4-branch"))
    assert texts(store) == ["msg1", "msg2", "msg4-branch"]


# --------------------------------------------------------------------------- branched sessions


def test_create_branched_session_unknown_entry_raises(store: SessionStore) -> None:
    store.append_message(user("1"))
    with pytest.raises(EntryNotFoundError, match="Entry nonexistent not found"):
        create_branched_session(store, "nonexistent")


def test_in_memory_branched_session_holds_only_the_path(store: SessionStore) -> None:
    id1 = store.append_message(user("1"))
    id2 = store.append_message(assistant("2"))
    id3 = store.append_message(user("3"))
    store.append_message(assistant("4"))
    store.branch(id3)
    store.append_message(assistant("5"))
    new = create_branched_session(store, id2)
    assert new.path is None
    assert new.session_id != store.session_id
    assert [n.id for n in new.nodes()] == [id1, id2]
    assert new.leaf_id == id2
    assert texts(new) == ["1", "2"]
    # The source session is untouched.
    assert len(store) == 5


def test_branched_session_keeps_original_ids_of_the_path(store: SessionStore) -> None:
    id1 = store.append_message(user("1"))
    id2 = store.append_message(assistant("2"))
    store.append_message(user("3"))
    store.branch(id2)
    id4 = store.append_message(user("4"))
    id5 = store.append_message(assistant("5"))
    new = create_branched_session(store, id5)
    assert [n.id for n in new.nodes()] == [id1, id2, id4, id5]
    assert [new.get(i)["parentId"] for i in (id1, id2, id4, id5)] == [None, id1, id2, id4]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_persisted_branch_without_conversation_is_written_lazily(tmp_path: Path) -> None:
    """pi 1.6: the file appears at the first user or assistant message, with one header."""
    store = SessionStore.create(tmp_path, "/work/project")
    model_id = store.append_model_change("anthropic", "claude-test")
    store.append_thinking_level_change("off")
    store.append_message(user("hello"))
    store.append_message(assistant("hi"))
    new = create_branched_session(store, model_id)
    try:
        assert new.path is not None
        assert not new.path.exists()
        assert not new.persisted
        new.append_custom("test", {"k": 1})
        assert not new.path.exists()
        new.append_message(assistant("now there is a conversation"))
        assert new.path.exists()
        lines = _lines(new.path)
        assert [line["type"] for line in lines].count("session") == 1
        assert lines[0]["type"] == "session"
        entry_ids = [line["id"] for line in lines[1:]]
        assert len(entry_ids) == len(set(entry_ids)) == 3
        assert entry_ids[0] == model_id
    finally:
        new.close()
        store.close()


def test_persisted_branch_with_only_a_user_message_is_written_at_once(tmp_path: Path) -> None:
    """pi 1.6: a user message (not only an assistant) makes the file appear."""
    store = SessionStore.create(tmp_path, "/work/project")
    id1 = store.append_message(user("first message"))
    store.append_message(assistant("reply"))
    new = create_branched_session(store, id1)
    try:
        assert new.path is not None and new.path.exists()
        lines = _lines(new.path)
        assert [line["type"] for line in lines] == ["session", "message"]
        new.append_custom("test", {"k": 1})
        new.append_message(assistant("more"))
        lines = _lines(new.path)
        assert [line["type"] for line in lines].count("session") == 1
        entry_ids = [line["id"] for line in lines[1:]]
        assert len(entry_ids) == len(set(entry_ids)) == 3
    finally:
        new.close()
        store.close()


def test_persisted_branch_with_assistant_is_written_at_once(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, "/work/project")
    store.append_message(user("q"))
    id2 = store.append_message(assistant("a"))
    store.append_message(user("q2"))
    new = create_branched_session(store, id2)
    try:
        assert new.path is not None and new.path.exists()
        assert new.path.parent == tmp_path
        lines = _lines(new.path)
        assert [line["type"] for line in lines].count("session") == 1
        assert lines[0]["parentSession"] == str(store.path)
        assert [line["id"] for line in lines[1:]] == [n.id for n in store.path_to(id2)]
    finally:
        new.close()
        store.close()
