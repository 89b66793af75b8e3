"""/fork and /clone (pi 1.6's createBranchedSession): a new file holding one path."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pitui.session import EntryNotFoundError, SessionError, SessionStore, clone, fork


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def assistant(text: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-test",
        "stopReason": "stop",
        "timestamp": 2,
    }


def raw(entry_id: str, parent: str | None, second: int, **fields: Any) -> dict[str, Any]:
    """An entry as written by hand: ``type`` and the rest come from ``fields``."""
    entry: dict[str, Any] = {"type": fields.pop("type"), "id": entry_id, "parentId": parent}
    entry["timestamp"] = f"2025-01-01T00:00:{second:02d}.000Z"
    entry.update(fields)
    return entry


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def entries_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines_of(path)]


class Stores:
    """Opens and creates stores in a tmp folder and closes them all at the end."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._open: list[SessionStore] = []

    def keep(self, store: SessionStore) -> SessionStore:
        self._open.append(store)
        return store

    def create(self) -> SessionStore:
        return self.keep(SessionStore.create(self.folder, "/work/project"))

    def open(self, path: Path, **kwargs: Any) -> SessionStore:
        return self.keep(SessionStore.open(path, **kwargs))

    def close_all(self) -> None:
        for store in reversed(self._open):
            store.close()


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[Stores]:
    s = Stores(tmp_path / "sessions")
    yield s
    s.close_all()


def conversation(stores: Stores) -> tuple[SessionStore, dict[str, str]]:
    """model, thinking, u1 a1 u2 a2 u3 a3 on the main path, and a side branch under a1."""
    store = stores.create()
    ids = {
        "model": store.append_model_change("anthropic", "claude-test"),
        "thinking": store.append_thinking_level_change("medium"),
        "u1": store.append_message(user("first question")),
        "a1": store.append_message(assistant("first answer")),
    }
    ids["u2"] = store.append_message(user("second question"))
    ids["a2"] = store.append_message(assistant("second answer"))
    ids["u3"] = store.append_message(user("third question"))
    ids["a3"] = store.append_message(assistant("third answer"))
    store.branch(ids["a1"])
    ids["side"] = store.append_message(user("side question"))
    store.branch(ids["a3"])
    return store, ids


# --------------------------------------------------------------------------- fork


def test_fork_at_root_user_message_starts_an_empty_session(stores: Stores) -> None:
    store = stores.create()
    u1 = store.append_message(user("very first"))
    store.append_message(assistant("reply"))
    new, text = fork(store, u1)
    stores.keep(new)
    assert text == "very first"
    assert len(new) == 0
    assert new.leaf_id is None
    assert new.project().messages == []
    assert new.session_id != store.session_id
    assert new.parent_session == str(store.path)
    assert new.path is not None and new.path.parent == stores.folder
    assert not new.path.exists()
    new.append_message(user("edited first"))
    header = entries_of(new.path)[0]
    assert header["type"] == "session"
    assert header["parentSession"] == str(store.path)


def test_fork_at_later_user_message_copies_the_path_to_its_parent(stores: Stores) -> None:
    store, ids = conversation(stores)
    new, text = fork(store, ids["u3"])
    stores.keep(new)
    assert text == "third question"
    expected = [ids[k] for k in ("model", "thinking", "u1", "a1", "u2", "a2")]
    assert [n.id for n in new.nodes()] == expected
    assert new.leaf_id == ids["a2"]
    assert ids["side"] not in new and ids["u3"] not in new
    assert new.path is not None and new.path.exists()
    written = entries_of(new.path)
    assert written[0]["parentSession"] == str(store.path)
    assert [e["id"] for e in written[1:]] == expected
    assert [e["type"] for e in written].count("session") == 1


def test_fork_joins_text_blocks_without_separator(stores: Stores) -> None:
    store = stores.create()
    store.append_message(user("q"))
    store.append_message(assistant("a"))
    u2 = store.append_message(
        {
            "role": "user",
            "content": [{"type": "text", "text": "one"}, {"type": "text", "text": " two"}],
            "timestamp": 3,
        }
    )
    new, text = fork(store, u2)
    stores.keep(new)
    assert text == "one two"


def test_forked_file_projects_like_the_source_at_that_point(stores: Stores) -> None:
    store, ids = conversation(stores)
    new, _ = fork(store, ids["u3"])
    assert new.path is not None
    path = new.path
    new.close()
    reopened = stores.open(path)
    source = store.project(ids["a2"])
    projected = reopened.project()
    assert reopened.leaf_id == ids["a2"]
    assert projected.messages == source.messages
    assert projected.model == source.model
    assert projected.thinking_level == source.thinking_level == "medium"


def test_fork_leaves_the_source_file_unchanged(stores: Stores) -> None:
    store, ids = conversation(stores)
    assert store.path is not None
    before = store.path.read_bytes()
    new, _ = fork(store, ids["u2"])
    stores.keep(new)
    stores.keep(clone(store))
    assert store.path.read_bytes() == before
    assert store.leaf_id == ids["a3"]


def test_fork_of_a_path_without_conversation_has_no_file_yet(stores: Stores) -> None:
    store, ids = conversation(stores)
    new, text = fork(store, ids["u1"])
    stores.keep(new)
    assert text == "first question"
    assert [n.id for n in new.nodes()] == [ids["model"], ids["thinking"]]
    assert new.path is not None
    assert not new.path.exists()
    assert not new.persisted
    new.append_custom("state", {"x": 1})
    assert not new.path.exists()
    u = new.append_message(user("rephrased first question"))
    written = entries_of(new.path)
    assert [e["type"] for e in written] == [
        "session",
        "model_change",
        "thinking_level_change",
        "custom",
        "message",
    ]
    assert [e["id"] for e in written[1:3]] == [ids["model"], ids["thinking"]]
    assert written[-1]["id"] == u


def test_fork_rejects_non_user_entries(stores: Stores) -> None:
    store, ids = conversation(stores)
    with pytest.raises(SessionError, match="Invalid entry ID for forking"):
        fork(store, ids["a1"])
    with pytest.raises(EntryNotFoundError):
        fork(store, "nonexistent")


def test_fork_and_clone_refuse_an_unsaved_session(stores: Stores) -> None:
    store = stores.create()
    store.append_model_change("anthropic", "claude-test")
    assert not store.persisted
    with pytest.raises(SessionError, match="has not been saved yet"):
        clone(store)


def test_clone_with_no_leaf_refuses(stores: Stores) -> None:
    store = stores.create()
    store.append_message(user("q"))
    store.reset_leaf()
    with pytest.raises(SessionError, match="Nothing to clone yet"):
        clone(store)


def test_in_memory_fork_stays_in_memory() -> None:
    store = SessionStore.in_memory("/work/project")
    u1 = store.append_message(user("q1"))
    store.append_message(assistant("a1"))
    u2 = store.append_message(user("q2"))
    new, text = fork(store, u2)
    assert text == "q2"
    assert new.path is None
    assert new.project().messages == store.project(store.get(u2)["parentId"]).messages
    empty, _ = fork(store, u1)
    assert empty.path is None and len(empty) == 0


# --------------------------------------------------------------------------- clone


def test_clone_copies_the_active_branch_up_to_the_leaf(stores: Stores) -> None:
    store, ids = conversation(stores)
    store.branch(ids["side"])
    thinking = store.append_thinking_level_change("high")
    new = stores.keep(clone(store))
    expected = [ids[k] for k in ("model", "thinking", "u1", "a1", "side")] + [thinking]
    assert [n.id for n in new.nodes()] == expected
    assert new.leaf_id == thinking
    assert new.project().messages == store.project().messages
    assert new.project().thinking_level == "high"
    assert new.parent_session == str(store.path)


def test_clone_of_a_read_only_store(stores: Stores) -> None:
    store, _ = conversation(stores)
    assert store.path is not None
    viewer = stores.open(store.path, read_only=True)
    new = stores.keep(clone(viewer))
    assert [n.id for n in new.nodes()] == [n.id for n in viewer.path_to()]


def test_untouched_lines_are_byte_identical(tmp_path: Path, stores: Stores) -> None:
    """Lines are copied as stored (here: spaced, ASCII-escaped JSON), not re-serialized."""
    header = {"type": "session", "version": 3, "id": "src", "timestamp": "2025-01-01T00:00:00.000Z"}
    header["cwd"] = "/work/project"
    entries = [
        raw("u1", None, 1, type="message", message={**user("caf\u00e9 \u2603"), "timestamp": 1.0}),
        raw("a1", "u1", 2, type="message", message={**assistant("r\u00e9ponse"), "x": [1.5, 2.0]}),
        raw("c1", "a1", 3, type="custom", customType="x", data={"z": None}),
        raw("u2", "c1", 4, type="message", message=user("next")),
    ]
    src = tmp_path / "src.jsonl"
    src.write_text("".join(json.dumps(o) + "\n" for o in [header, *entries]), encoding="ascii")
    source_lines = lines_of(src)
    store = stores.open(src)
    new = stores.keep(clone(store))
    assert new.path is not None
    new_lines = lines_of(new.path)
    assert new_lines[1:] == source_lines[1:]
    assert b", " in new_lines[1] and b"\\u00e9" in new_lines[1]


# --------------------------------------------------------------------------- labels


def test_fork_recreates_labels_of_kept_entries(stores: Stores) -> None:
    store, ids = conversation(stores)
    store.append_label(ids["u1"], "start")
    store.append_label(ids["a2"], "good answer")
    store.append_label(ids["a3"], "not kept")
    store.branch(ids["side"])
    store.append_label(ids["side"], "side branch")
    label_times = {
        e["targetId"]: e["timestamp"]
        for e in (store.get(n.id) for n in store.nodes() if n.type == "label")
    }
    new, _ = fork(store, ids["u3"])
    stores.keep(new)
    assert new.labels == {ids["u1"]: "start", ids["a2"]: "good answer"}
    assert new.path is not None
    written = entries_of(new.path)
    labels = [e for e in written if e["type"] == "label"]
    assert [e["targetId"] for e in labels] == [ids["u1"], ids["a2"]]
    # Chained after the last path entry, one after the other, with the original timestamps.
    assert labels[0]["parentId"] == ids["a2"]
    assert labels[1]["parentId"] == labels[0]["id"]
    assert [e["timestamp"] for e in labels] == [label_times[ids["u1"]], label_times[ids["a2"]]]
    assert new.leaf_id == labels[1]["id"]
    # The re-created labels are new entries, not copies of the old ones.
    old_label_ids = {n.id for n in store.nodes() if n.type == "label"}
    assert old_label_ids.isdisjoint(e["id"] for e in labels)
    assert new.project().messages == store.project(ids["a2"]).messages


def test_label_entries_on_the_path_are_dropped_and_parents_rechained(stores: Stores) -> None:
    store = stores.create()
    u1 = store.append_message(user("q1"))
    a1 = store.append_message(assistant("a1"))
    label = store.append_label(u1, "checkpoint")
    u2 = store.append_message(user("q2"))
    a2 = store.append_message(assistant("a2"))
    u3 = store.append_message(user("q3"))
    assert store.get(u2)["parentId"] == label
    assert store.path is not None
    source_lines = {json.loads(line).get("id"): line for line in lines_of(store.path)}

    new, _ = fork(store, u3)
    stores.keep(new)
    assert new.path is not None
    written_lines = lines_of(new.path)
    written = [json.loads(line) for line in written_lines]
    assert [e["id"] for e in written[1:-1]] == [u1, a1, u2, a2]
    assert [e["parentId"] for e in written[1:-1]] == [None, u1, a1, u2]
    assert label not in new
    # Only the re-chained entry changed; the others are the source lines.
    for line, entry in zip(written_lines[1:-1], written[1:-1], strict=True):
        if entry["id"] == u2:
            assert line != source_lines[u2]
            assert {**entry, "parentId": label} == json.loads(source_lines[u2])
        else:
            assert line == source_lines[entry["id"]]
    assert written[-1]["type"] == "label"
    assert written[-1]["targetId"] == u1
    assert written[-1]["parentId"] == a2


def test_first_label_on_path_rechains_to_null(write_session: Any, stores: Stores) -> None:
    path = write_session(
        [
            raw("u0", None, 0, type="message", message=user("q0")),
            raw("L", None, 1, type="label", targetId="u0", label="x"),
            raw("u1", "L", 2, type="message", message=user("q1")),
            raw("a1", "u1", 3, type="message", message=assistant("a1")),
        ]
    )
    store = stores.open(path)
    new = stores.keep(clone(store))
    assert [(n.id, n.parent_id) for n in new.nodes()] == [("u1", None), ("a1", "u1")]
    assert new.labels == {}


def test_compaction_pointing_at_a_dropped_label_is_remapped(stores: Stores) -> None:
    store = stores.create()
    u1 = store.append_message(user("q1"))
    a1 = store.append_message(assistant("a1"))
    label = store.append_label(a1, "keep from here")
    u2 = store.append_message(user("q2"))
    a2 = store.append_message(assistant("a2"))
    compaction = store.append_compaction("summary of q1", label, 1234)
    u3 = store.append_message(user("q3"))
    source = store.project()
    assert [m.get("summary") or m["content"][0]["text"] for m in source.messages] == [
        "summary of q1",
        "q2",
        "a2",
        "q3",
    ]

    new = stores.keep(clone(store))
    assert new.path is not None
    written = {e["id"]: e for e in entries_of(new.path)[1:]}
    assert written[compaction]["firstKeptEntryId"] == u2
    assert written[u2]["parentId"] == a1
    assert label not in written
    assert [n.id for n in new.nodes() if n.type != "label"] == [u1, a1, u2, a2, compaction, u3]
    assert new.project().messages == source.messages
    assert new.labels == {a1: "keep from here"}


def test_session_name_off_the_path_is_not_copied(stores: Stores) -> None:
    store, ids = conversation(stores)
    store.append_session_info("Named on main")
    assert store.session_name == "Named on main"
    new, _ = fork(store, ids["u3"])
    stores.keep(new)
    assert new.session_name is None
    store.branch(ids["a3"])
    named = stores.keep(clone(store))
    assert named.session_name is None  # the leaf is a3, before the rename
    store.branch(list(store.nodes())[-1].id)
    assert stores.keep(clone(store)).session_name == "Named on main"


def test_clone_when_the_leaf_is_a_label(stores: Stores) -> None:
    store, ids = conversation(stores)
    store.append_label(ids["a3"], "done")
    new = stores.keep(clone(store))
    assert [n.id for n in new.nodes() if n.type != "label"] == [n.id for n in store.path_to()][:-1]
    assert new.labels == {ids["a3"]: "done"}
    assert new.project().messages == store.project().messages


def test_recreated_labels_follow_first_labelling_order(stores: Stores) -> None:
    store, ids = conversation(stores)
    store.append_label(ids["u1"], "first")
    store.append_label(ids["a1"], "second")
    store.append_label(ids["u1"], "first, renamed")
    new = stores.keep(clone(store))
    assert new.path is not None
    labels = [e for e in entries_of(new.path) if e["type"] == "label"]
    assert [(e["targetId"], e["label"]) for e in labels] == [
        (ids["u1"], "first, renamed"),
        (ids["a1"], "second"),
    ]


def test_deferred_branch_copies_lines_byte_identical(tmp_path: Path, stores: Stores) -> None:
    header = {"type": "session", "version": 3, "id": "src", "timestamp": "2025-01-01T00:00:00.000Z"}
    header["cwd"] = "/work/project"
    entries = [
        raw("m", None, 0, type="model_change", provider="caf\u00e9", modelId="x"),
        raw("u1", "m", 1, type="message", message=user("q1")),
        raw("a1", "u1", 2, type="message", message=assistant("a1")),
    ]
    src = tmp_path / "src.jsonl"
    src.write_text("".join(json.dumps(o) + "\n" for o in [header, *entries]), encoding="ascii")
    store = stores.open(src)
    new, _ = fork(store, "u1")
    stores.keep(new)
    assert new.path is not None and not new.path.exists()
    new.append_message(user("q1 again"))
    assert lines_of(new.path)[1] == lines_of(src)[1]


def test_clone_of_a_migrated_v1_session(fixtures_dir: Path, tmp_path: Path, stores: Stores) -> None:
    src = tmp_path / "v1.jsonl"
    src.write_bytes((fixtures_dir / "pi-v1-before-compaction.jsonl").read_bytes())
    store = stores.open(src)
    new = stores.keep(clone(store))
    assert new.path is not None
    path = new.path
    new.close()
    written = entries_of(path)
    assert written[0]["version"] == 3
    assert all(isinstance(e.get("id"), str) for e in written[1:])
    reopened = stores.open(path, read_only=True)
    assert [n.id for n in reopened.nodes()] == [n.id for n in store.nodes()]
    assert len(reopened.project().messages) == 446
    assert reopened.project().messages == store.project().messages
    # The v1 source itself is not rewritten by cloning it.
    assert src.read_bytes() == (fixtures_dir / "pi-v1-before-compaction.jsonl").read_bytes()
