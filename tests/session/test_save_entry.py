"""pi's save-entry and custom-session-id tests (pi-reference §8 items 52–53), pi 1.6 rules."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pitui.session import SessionError, SessionStore

UUID7 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def test_custom_entry_between_messages(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, "/work/project")
    user_id = store.append_message({"role": "user", "content": "hello", "timestamp": 1})
    custom_id = store.append_custom("my_data", {"foo": "bar"})
    assistant_id = store.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "hi"}],
            "provider": "anthropic",
            "model": "claude-test",
            "timestamp": 2,
        }
    )
    assert len(store) == 3
    custom = store.get(custom_id)
    assert custom["parentId"] == user_id
    assert (custom["customType"], custom["data"]) == ("my_data", {"foo": "bar"})
    assert [n.id for n in store.path_to()] == [user_id, custom_id, assistant_id]
    projection = store.project()
    assert [m["role"] for m in projection.messages] == ["user", "assistant"]
    path = store.path
    store.close()

    assert path is not None
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["type"] for line in lines] == ["session", "message", "custom", "message"]
    assert lines[2] == custom
    reopened = SessionStore.open(path, read_only=True)
    try:
        assert [n.id for n in reopened.path_to()] == [user_id, custom_id, assistant_id]
        assert reopened.project().messages == projection.messages
    finally:
        reopened.close()


def test_custom_session_id(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, "/work/project", session_id="my-custom-id")
    assert store.session_id == "my-custom-id"
    assert store.header["id"] == "my-custom-id"
    assert store.path is not None
    assert store.path.name.endswith("_my-custom-id.jsonl")
    store.append_message({"role": "user", "content": "hello", "timestamp": 1})
    store.close()
    header = json.loads(store.path.read_text().splitlines()[0])
    assert header["id"] == "my-custom-id"


def test_generated_session_ids(tmp_path: Path) -> None:
    plain = SessionStore.create(tmp_path, "/work/project")
    child = SessionStore.create(tmp_path, "/work/project", parent_session="/x/parent.jsonl")
    # pi 1.6 gives new sessions UUIDv7 ids.
    assert UUID7.match(plain.session_id)
    assert UUID7.match(child.session_id)
    assert plain.session_id != child.session_id
    assert child.parent_session == "/x/parent.jsonl"
    assert child.header["parentSession"] == "/x/parent.jsonl"
    assert "parentSession" not in plain.header


@pytest.mark.parametrize("bad", ["-leading", "trailing.", "has space", "a/b", "é"])
def test_invalid_custom_session_id_is_refused(tmp_path: Path, bad: str) -> None:
    with pytest.raises(SessionError):
        SessionStore.create(tmp_path, "/work/project", session_id=bad)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("good", ["a", "A1", "my.id_2-x"])
def test_valid_custom_session_ids(tmp_path: Path, good: str) -> None:
    assert SessionStore.create(tmp_path, "/work/project", session_id=good).session_id == good


def test_session_name_latest_wins_and_empty_clears(tmp_path: Path) -> None:
    """pi 1.6: CR/LF runs become one space, the name is trimmed, and "" clears it."""
    store = SessionStore.create(tmp_path, "/work/project")
    root = store.append_message({"role": "user", "content": "hello", "timestamp": 1})
    assert store.session_name is None
    info_id = store.append_session_info("  First\r\n\nname  ")
    assert store.get(info_id)["name"] == "First name"
    assert store.session_name == "First name"
    store.branch(root)
    store.append_session_info("Side branch name")
    # The latest session_info in file order wins, on any branch.
    store.branch(info_id)
    assert store.session_name == "Side branch name"
    path = store.path
    store.close()

    assert path is not None
    reopened = SessionStore.open(path)
    try:
        assert reopened.session_name == "Side branch name"
        reopened.append_session_info("   ")
        assert reopened.session_name is None
    finally:
        reopened.close()
    again = SessionStore.open(path, read_only=True)
    try:
        assert again.session_name is None
    finally:
        again.close()


@pytest.mark.parametrize("first_role", ["user", "assistant"])
def test_file_appears_at_first_user_or_assistant_message(tmp_path: Path, first_role: str) -> None:
    """pi 1.6: bookkeeping, system, custom and bash entries alone never create the file."""
    store = SessionStore.create(tmp_path, "/work/project")
    assert store.path is not None
    store.append_model_change("anthropic", "claude-test")
    store.append_thinking_level_change("off")
    store.append_message({"role": "system", "content": "", "sections": {"preamble": "Hi"}})
    store.append_custom_message("note", "a note", display=True)
    store.append_message(
        {"role": "bashExecution", "command": "ls", "output": "", "exitCode": 0, "timestamp": 1}
    )
    store.append_custom("state", {"n": 1})
    assert not store.path.exists()
    assert not store.persisted
    store.append_message({"role": first_role, "content": [], "timestamp": 2})
    assert store.persisted
    lines = [json.loads(line) for line in store.path.read_text().splitlines()]
    store.close()
    assert [line["type"] for line in lines] == [
        "session",
        "model_change",
        "thinking_level_change",
        "message",
        "custom_message",
        "message",
        "custom",
        "message",
    ]
    assert lines[-1]["message"]["role"] == first_role
    assert [line["parentId"] for line in lines[1:]] == [None, *[e["id"] for e in lines[1:-1]]]


def test_in_memory_session_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    store = SessionStore.in_memory(str(tmp_path))
    store.append_message({"role": "user", "content": "hello", "timestamp": 1})
    store.append_message({"role": "assistant", "content": [], "timestamp": 2})
    store.close()
    assert store.path is None
    assert list(tmp_path.iterdir()) == []
