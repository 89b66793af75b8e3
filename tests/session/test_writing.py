"""Writing session files: when the file appears, one line per append, torn tails, failed writes,
legacy rewrites, permissions, and byte-identical round trips.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pitui.session.writer as writer_module
from pitui.session import SessionStore, SessionWriteError, fork
from pitui.session.events import SessionEvent

HEADER: dict[str, Any] = {
    "type": "session",
    "version": 3,
    "id": "0190a6f2-0000-7000-8000-0000000000aa",
    "timestamp": "2025-01-01T00:00:00.000Z",
    "cwd": "/proj",
}


def ts(n: int) -> str:
    return f"2025-01-01T00:{n // 60:02d}:{n % 60:02d}.000Z"


def msg(entry_id: str, parent: str | None, role: str = "user", n: int = 1) -> dict[str, Any]:
    content: Any = entry_id if role == "user" else [{"type": "text", "text": entry_id}]
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": ts(n),
        "message": {"role": role, "content": content},
    }


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


def jline(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def write_session(path: Path, *items: bytes | dict[str, Any]) -> bytes:
    data = jline(HEADER) + b"".join(i if isinstance(i, bytes) else jline(i) for i in items)
    path.write_bytes(data)
    return data


def ids(store: SessionStore) -> list[str]:
    return [n.id for n in store.nodes()]


def state(store: SessionStore) -> dict[str, Any]:
    """Everything about a store a user could see."""
    return {
        "ids": ids(store),
        "len": len(store),
        "leaf": store.leaf_id,
        "path": [n.id for n in store.path_to()],
        "labels": store.labels,
        "name": store.session_name,
        "tree": store.tree(),
        "persisted": store.persisted,
        "messages": list(store.project().source_entry_ids),
    }


def assert_one_sentence(message: str, *needles: str) -> None:
    assert "\n" not in message
    assert message.endswith(".")
    assert message[0].isupper()
    for needle in needles:
        assert needle in message


def side_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if ".torn-" in p.name)


@pytest.fixture
def umask022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


@contextlib.contextmanager
def disk_full_after_partial_write(
    monkeypatch: pytest.MonkeyPatch, err: int = errno.ENOSPC, only: Path | None = None
) -> Iterator[list[int]]:
    """``os.write`` in the writer writes half of the first chunk, then fails with ``err``.

    With ``only``, writes to other files (a side file, a temp file) go through untouched.
    """
    real_write = os.write
    calls: list[int] = []

    def fake_write(fd: int, data: Any) -> int:
        if only is not None and not os.path.samestat(os.fstat(fd), os.stat(only)):
            return real_write(fd, data)
        calls.append(len(data))
        if len(calls) == 1 and len(data) > 1:
            return real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(err, os.strerror(err))

    with monkeypatch.context() as m:
        m.setattr(writer_module.os, "write", fake_write)
        yield calls


# ---------------------------------------------------------------------------- when the file appears


@pytest.mark.parametrize("first_role", ["user", "assistant"])
def test_new_session_file_appears_at_the_first_conversation_message(
    tmp_path: Path, first_role: str
) -> None:
    folder = tmp_path / "sessions"
    store = SessionStore.create(folder, "/proj")
    assert store.path is not None
    model = store.append_model_change("anthropic", "claude-test")
    thinking = store.append_thinking_level_change("high")
    assert not store.path.exists()
    assert not store.persisted
    assert len(store) == 2 and store.leaf_id == thinking

    first = store.append_message(user("hi") if first_role == "user" else assistant("hello"))
    assert store.persisted
    lines = store.path.read_bytes().splitlines(keepends=True)
    assert len(lines) == 4
    header = json.loads(lines[0])
    assert header["type"] == "session" and header["version"] == 3
    assert header["id"] == store.session_id and header["cwd"] == "/proj"
    entries = [json.loads(x) for x in lines[1:]]
    assert [e["id"] for e in entries] == [model, thinking, first]
    assert [e["parentId"] for e in entries] == [None, model, thinking]
    assert entries[0]["type"] == "model_change" and entries[0]["modelId"] == "claude-test"
    assert entries[1]["thinkingLevel"] == "high"
    assert entries[2]["message"]["role"] == first_role

    # After that, every entry is exactly one appended line.
    before = store.path.read_bytes()
    for i in range(3):
        new_id = store.append_message(assistant(f"a{i}"))
        after = store.path.read_bytes()
        assert after.startswith(before)
        added = after[len(before) :]
        assert added.count(b"\n") == 1 and added.endswith(b"\n")
        assert json.loads(added) == store.get(new_id)
        assert store.raw_line(store.node(new_id)) == added[:-1]
        before = after
    store.close()

    reopened = SessionStore.open(store.path)
    assert len(reopened) == 6 and reopened.warnings == []
    reopened.close()


def test_no_file_without_a_conversation_message(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    store = SessionStore.create(folder, "/proj")
    store.append_model_change("anthropic", "claude-test")
    store.append_thinking_level_change("low")
    store.append_model_change("openai", "gpt-test")
    store.close()
    assert not folder.exists() or list(folder.iterdir()) == []


def test_in_memory_session_never_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    store = SessionStore.in_memory(str(tmp_path))
    store.append_message(user("hi"))
    store.append_message(assistant("hello"))
    store.close()
    assert list(tmp_path.iterdir()) == []


def test_new_file_is_0600_and_new_folder_is_0700(tmp_path: Path, umask022: None) -> None:
    folder = tmp_path / "sessions"
    store = SessionStore.create(folder, "/proj")
    store.append_message(user("hi"))
    assert store.path is not None
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    lock = store.path.with_name(store.path.name + ".lock")
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600
    store.close()


def test_every_new_folder_is_0700(tmp_path: Path, umask022: None) -> None:
    folder = tmp_path / "a" / "b" / "c"
    store = SessionStore.create(folder, "/proj")
    store.append_message(user("hi"))
    store.close()
    for made in (tmp_path / "a", tmp_path / "a" / "b", folder):
        assert stat.S_IMODE(made.stat().st_mode) == 0o700, made


def test_open_or_create_writes_at_the_given_path(tmp_path: Path, umask022: None) -> None:
    path = tmp_path / "named" / "my-session.jsonl"
    store = SessionStore.open_or_create(path, "/proj")
    store.append_model_change("anthropic", "claude-test")
    assert not path.exists()
    uid = store.append_message(user("hi"))
    assert path.exists()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_bytes().splitlines()[-1])["id"] == uid
    store.close()


def test_empty_file_is_filled_at_the_first_message(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"")
    store = SessionStore.open(path)
    store.append_model_change("anthropic", "claude-test")
    assert path.read_bytes() == b""
    uid = store.append_message(user("hi"))
    lines = path.read_bytes().splitlines()
    assert len(lines) == 3
    assert json.loads(lines[0])["type"] == "session"
    assert json.loads(lines[2])["id"] == uid
    store.close()
    again = SessionStore.open(path)
    assert len(again) == 2 and again.warnings == []
    again.close()


# ---------------------------------------------------------------------------- tails


def test_torn_last_line_moves_to_a_side_file_before_the_first_append(
    tmp_path: Path, umask022: None
) -> None:
    path = tmp_path / "s.jsonl"
    torn = b'{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.0'
    good = write_session(path, msg("a", None))
    path.write_bytes(good + torn)

    store = SessionStore.open(path)
    assert ids(store) == ["a"]
    assert [w.line for w in store.warnings] == [3]
    assert path.read_bytes() == good + torn  # reading never writes
    assert side_files(tmp_path) == []

    new_id = store.append_message(assistant("after the tear"))
    [side] = side_files(tmp_path)
    assert side.name.startswith("s.jsonl.torn-")
    assert side.read_bytes() == torn
    assert stat.S_IMODE(side.stat().st_mode) == 0o600
    data = path.read_bytes()
    assert data.startswith(good)
    new_line = data[len(good) :]
    assert new_line.count(b"\n") == 1
    assert json.loads(new_line)["id"] == new_id
    assert json.loads(new_line)["parentId"] == "a"
    assert any(side.name in w.message for w in store.warnings)
    store.append_message(user("more"))
    assert len(side_files(tmp_path)) == 1
    store.close()

    again = SessionStore.open(path)
    assert again.warnings == []
    assert len(again) == 3 and [n.id for n in again.path_to()][:2] == ["a", new_id]
    again.close()


def test_complete_last_line_without_newline_gets_one_before_the_append(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    last = jline(msg("b", "a", "assistant", 2))[:-1]
    original = write_session(path, msg("a", None), last)
    store = SessionStore.open(path)
    new_id = store.append_message(user("next"))
    data = path.read_bytes()
    assert data.startswith(original + b"\n")
    assert json.loads(data[len(original) + 1 :])["parentId"] == "b"
    assert side_files(tmp_path) == []
    store.append_message(assistant("again"))
    store.close()
    again = SessionStore.open(path)
    assert again.warnings == []
    assert [n.id for n in again.path_to()][:3] == ["a", "b", new_id]
    again.close()


def test_crlf_file_appends_keep_old_lines(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    original = b"\xef\xbb\xbf" + write_session(path, msg("a", None)).replace(b"\n", b"\r\n")
    path.write_bytes(original)
    store = SessionStore.open(path)
    new_id = store.append_message(assistant("ok"))
    store.close()
    assert path.read_bytes().startswith(original)
    again = SessionStore.open(path)
    assert ids(again) == ["a", new_id] and again.warnings == []
    again.close()


# ---------------------------------------------------------------------------- failed writes


def test_disk_full_on_append_leaves_store_and_file_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    original = write_session(path, msg("a", None), msg("b", "a", "assistant", 2))
    store = SessionStore.open(path)
    events: list[SessionEvent] = []
    store.subscribe(events.append)
    before = state(store)

    with (
        disk_full_after_partial_write(monkeypatch) as calls,
        pytest.raises(SessionWriteError) as info,
    ):
        store.append_message(user("x" * 5000))
    assert len(calls) >= 2  # a partial chunk really was written before the failure
    assert_one_sentence(str(info.value), "disk is full", str(path))
    assert path.read_bytes() == original
    assert state(store) == before
    assert events == []

    # Once the cause is gone, appending works again.
    new_id = store.append_message(user("retry"))
    data = path.read_bytes()
    assert data.startswith(original) and data[len(original) :].count(b"\n") == 1
    assert store.leaf_id == new_id and len(store) == 3
    store.close()
    again = SessionStore.open(path)
    assert ids(again) == ["a", "b", new_id] and again.warnings == []
    again.close()


@pytest.mark.parametrize("kind", ["label", "name", "custom", "model", "branch_summary"])
def test_failed_write_of_any_entry_kind_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    path = tmp_path / "s.jsonl"
    write_session(
        path,
        msg("a", None),
        msg("b", "a", "assistant", 2),
        {
            "type": "label",
            "id": "l",
            "parentId": "b",
            "timestamp": ts(3),
            "targetId": "a",
            "label": "old",
        },
        {"type": "session_info", "id": "n", "parentId": "l", "timestamp": ts(4), "name": "Old"},
    )
    original = path.read_bytes()
    store = SessionStore.open(path)
    before = state(store)
    assert before["labels"] == {"a": "old"} and before["name"] == "Old"
    actions = {
        "label": lambda: store.append_label("a", "new"),
        "name": lambda: store.append_session_info("New"),
        "custom": lambda: store.append_custom("ext", {"k": 1}),
        "model": lambda: store.append_model_change("openai", "gpt"),
        "branch_summary": lambda: store.branch_with_summary("a", "summary"),
    }
    with disk_full_after_partial_write(monkeypatch), pytest.raises(SessionWriteError):
        actions[kind]()
    assert path.read_bytes() == original
    assert state(store) == before
    actions[kind]()
    assert len(store) == before["len"] + 1
    store.close()


def test_disk_full_after_a_line_without_newline_keeps_it_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    original = write_session(path, msg("a", None), jline(msg("b", "a", "assistant", 2))[:-1])
    store = SessionStore.open(path)
    before = state(store)
    with disk_full_after_partial_write(monkeypatch), pytest.raises(SessionWriteError):
        store.append_message(user("lost"))
    assert path.read_bytes() == original
    assert state(store) == before
    new_id = store.append_message(user("kept"))
    data = path.read_bytes()
    assert data.startswith(original + b"\n{")
    assert data.count(b"\n") == original.count(b"\n") + 2
    store.close()
    again = SessionStore.open(path)
    assert ids(again) == ["a", "b", new_id] and again.warnings == []
    again.close()


def test_disk_full_at_the_first_write_of_a_new_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "sessions"
    store = SessionStore.create(folder, "/proj")
    model = store.append_model_change("anthropic", "claude-test")
    before = state(store)
    assert store.path is not None
    with disk_full_after_partial_write(monkeypatch), pytest.raises(SessionWriteError) as info:
        store.append_message(user("hello"))
    assert_one_sentence(str(info.value), "disk is full")
    assert not store.path.exists()
    assert state(store) == before
    assert not store.persisted

    uid = store.append_message(user("hello again"))
    lines = store.path.read_bytes().splitlines()
    assert [json.loads(x)["id"] for x in lines[1:]] == [model, uid]
    store.close()


def test_disk_full_after_the_torn_tail_was_set_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    good = write_session(path, msg("a", None))
    torn = b'{"type":"message","id":"b","par'
    path.write_bytes(good + torn)
    store = SessionStore.open(path)
    before = state(store)
    with (
        disk_full_after_partial_write(monkeypatch, only=path) as calls,
        pytest.raises(SessionWriteError),
    ):
        store.append_message(user("lost"))
    assert len(calls) >= 2
    assert state(store) == before
    # The torn bytes were moved aside before the append; the failed line left nothing behind.
    assert [s.read_bytes() for s in side_files(tmp_path)] == [torn]
    assert path.read_bytes() == good
    new_id = store.append_message(user("kept"))
    store.close()
    assert [s.read_bytes() for s in side_files(tmp_path)] == [torn]
    assert path.read_bytes().startswith(good)
    again = SessionStore.open(path)
    assert ids(again) == ["a", new_id] and again.warnings == []
    again.close()


def test_disk_full_while_setting_aside_a_torn_tail_leaves_no_partial_side_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    good = write_session(path, msg("a", None))
    torn = b'{"type":"message","id":"b","parentId":"a","timestamp":"2025'
    path.write_bytes(good + torn)
    store = SessionStore.open(path)
    before = state(store)
    with disk_full_after_partial_write(monkeypatch), pytest.raises(SessionWriteError):
        store.append_message(user("lost"))
    assert state(store) == before
    sides = side_files(tmp_path)
    if sides:  # either the move completed, or nothing moved at all
        assert [s.read_bytes() for s in sides] == [torn]
        assert path.read_bytes() == good
    else:
        assert path.read_bytes() == good + torn
    store.append_message(user("kept"))
    store.close()
    assert [s.read_bytes() for s in side_files(tmp_path)] == [torn]


_RLIMIT_CHILD = textwrap.dedent(
    """
    import json, os, resource, sys
    from pathlib import Path
    from pitui.session import SessionStore, SessionWriteError

    mode, target = sys.argv[1], Path(sys.argv[2])
    if mode == "existing":
        store = SessionStore.open(target)
        store.append_model_change("anthropic", "warm-up")  # lock and writer are open
        limit = target.stat().st_size + 40
    else:
        store = SessionStore.create(target, "/proj")
        store.append_model_change("anthropic", "pending")
        limit = 40
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    if hard != resource.RLIM_INFINITY and hard < 1 << 20:
        print(json.dumps({"skip": "hard RLIMIT_FSIZE too low"}))
        sys.exit(0)
    before = {"len": len(store), "leaf": store.leaf_id}
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    out = {"before": before}
    try:
        store.append_message({"role": "user", "content": "x" * 4000, "timestamp": 1})
        out["error"] = None
    except SessionWriteError as exc:
        out["error"] = str(exc)
    out["after"] = {"len": len(store), "leaf": store.leaf_id}
    out["size"] = store.path.stat().st_size if store.path.exists() else None
    out["exists"] = store.path.exists()
    resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
    out["retry"] = store.append_message({"role": "user", "content": "y" * 4000, "timestamp": 2})
    out["path"] = str(store.path)
    store.close()
    print(json.dumps(out))
    """
)


def _run_child(*args: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", _RLIMIT_CHILD, *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    if "skip" in out:
        pytest.skip(out["skip"])
    return out


@pytest.mark.timeout(60)
@pytest.mark.slow
def test_real_file_size_limit_on_append(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(path, msg("a", None))
    out = _run_child("existing", str(path))
    assert out["error"] is not None
    assert_one_sentence(out["error"], "file size limit")
    assert out["after"] == out["before"]
    data = path.read_bytes()
    lines = data.splitlines()
    # The failed line left nothing behind: the warm-up line is followed directly by the retry.
    assert out["size"] == len(data) - len(lines[-1]) - 1
    assert len(lines) == 4
    assert json.loads(lines[-1])["id"] == out["retry"]
    assert b"x" * 10 not in data
    store = SessionStore.open(path)
    assert store.warnings == [] and len(store) == 3
    store.close()


@pytest.mark.timeout(60)
@pytest.mark.slow
def test_real_file_size_limit_on_first_write(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    out = _run_child("new", str(folder))
    assert out["error"] is not None
    assert_one_sentence(out["error"], "file size limit")
    assert out["exists"] is False
    assert out["after"] == out["before"]
    data = Path(out["path"]).read_bytes()
    lines = data.splitlines()
    assert len(lines) == 3
    assert json.loads(lines[1])["modelId"] == "pending"
    assert json.loads(lines[2])["id"] == out["retry"]
    assert b"x" * 10 not in data


# ---------------------------------------------------------------------------- legacy rewrite


def _v1(path: Path) -> bytes:
    header = {k: v for k, v in HEADER.items() if k != "version"}
    data = b"".join(
        [
            jline(header),
            jline({"type": "message", "timestamp": ts(1), "message": user("q1")}),
            jline({"type": "message", "timestamp": ts(2), "message": assistant("a1")}),
            jline({"type": "message", "timestamp": ts(3), "message": user("q2")}),
        ]
    )
    path.write_bytes(data)
    return data


def test_legacy_file_is_rewritten_atomically_at_the_first_append(
    tmp_path: Path, umask022: None
) -> None:
    path = tmp_path / "old.jsonl"
    original = _v1(path)
    store = SessionStore.open(path)
    migrated = ids(store)
    assert path.read_bytes() == original
    new_id = store.append_message(assistant("a2"))

    bak = tmp_path / "old.jsonl.bak"
    assert bak.read_bytes() == original
    lines = path.read_bytes().splitlines()
    assert json.loads(lines[0])["version"] == 3
    assert json.loads(lines[0])["id"] == HEADER["id"]
    entries = [json.loads(x) for x in lines[1:]]
    assert [e["id"] for e in entries] == [*migrated, new_id]
    assert [e["parentId"] for e in entries] == [None, *migrated]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    leftovers = [p.name for p in tmp_path.iterdir() if p.name not in ("old.jsonl", "old.jsonl.bak")]
    assert leftovers in ([], ["old.jsonl.lock"])

    # Later appends are plain appends; the backup is not touched again.
    before = path.read_bytes()
    store.append_message(user("q3"))
    assert path.read_bytes().startswith(before)
    assert bak.read_bytes() == original
    store.close()

    again = SessionStore.open(path)
    assert ids(again)[:4] == [*migrated, new_id]
    assert again.warnings == []
    again.close()


def test_legacy_file_with_a_torn_tail_is_repaired_then_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    good = _v1(path)
    torn = b'{"type":"message","timestamp":"2025-01-01T00:00:09.000Z","message":{"ro'
    path.write_bytes(good + torn)
    store = SessionStore.open(path)
    migrated = ids(store)
    assert len(migrated) == 3 and [w.line for w in store.warnings] == [5]
    assert path.read_bytes() == good + torn
    new_id = store.append_message(assistant("a2"))
    store.close()
    assert [s.read_bytes() for s in side_files(tmp_path)] == [torn]
    again = SessionStore.open(path)
    assert ids(again) == [*migrated, new_id]
    assert again.warnings == []
    again.close()


def test_disk_full_during_legacy_rewrite_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "old.jsonl"
    original = _v1(path)
    store = SessionStore.open(path)
    before = state(store)
    with disk_full_after_partial_write(monkeypatch), pytest.raises(SessionWriteError):
        store.append_message(assistant("a2"))
    assert path.read_bytes() == original
    assert state(store) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.jsonl", "old.jsonl.lock"]
    store.append_message(assistant("a2"))
    assert (tmp_path / "old.jsonl.bak").read_bytes() == original
    store.close()


# ---------------------------------------------------------------------------- round trips

_ODD_LINES = [
    b'{ "type" : "message", "id":"a1" , "parentId": null, "timestamp":"2025-01-01T00:00:01.000Z",'
    b' "message": {"role":"user","content":"caf\\u00e9 \\ud83d\\ude00 \\/"}, "x-unknown": [1, 2.50,'
    b" true, 1e3] }\n",
    b'{"type":"mystery_entry","id":"m1","parentId":"a1","timestamp":"2025-01-01T00:00:02.000Z",'
    b'"payload":{"nested":{"deep":null}},"n":-0.0}\n',
    '{"type":"message","id":"b1","parentId":"m1","timestamp":"2025-01-01T00:00:03.000Z",'
    '"message":{"role":"assistant","content":[{"type":"text","text":"ünï ✓"}],'
    '"usage":{"input":1}},"extra":"x"}\n'.encode(),
    b'{"type":"label","id":"l1","parentId":"b1","timestamp":"2025-01-01T00:00:04.000Z",'
    b'"targetId":"a1","label":"start" }\n',
    b'{"type":"custom","id":"c1","parentId":"l1","timestamp":"2025-01-01T00:00:05.000Z",'
    b'"customType":"ext","data":{"k":1.0}}\r\n',
    b'{"type":"session_info","id":"s1","parentId":"c1","timestamp":"2025-01-01T00:00:06.000Z",'
    b'"name":"Odd\\tname"}\n',
]


def _odd_file(path: Path) -> bytes:
    return write_session(path, *_ODD_LINES)


def test_appends_keep_untouched_lines_byte_identical(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    original = _odd_file(path)
    store = SessionStore.open(path)
    assert ids(store) == ["a1", "m1", "b1", "l1", "c1", "s1"]
    assert store.warnings == []
    assert store.labels == {"a1": "start"}
    store.append_message(user("new"))
    store.branch("a1")
    store.append_message(user("on a branch"))
    store.close()
    assert path.read_bytes().startswith(original)


def test_save_copy_keeps_entry_lines_byte_identical(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    original = _odd_file(path)
    store = SessionStore.open(path)
    new_id = store.append_message(user("new"))
    dest = tmp_path / "copy.jsonl"
    store.save_copy(dest)
    store.close()
    copied = dest.read_bytes().split(b"\n")
    source = path.read_bytes().split(b"\n")
    assert copied[1:] == source[1:]
    assert json.loads(copied[0]) == HEADER
    assert stat.S_IMODE(dest.stat().st_mode) == 0o600
    clone = SessionStore.open(dest)
    assert ids(clone) == ["a1", "m1", "b1", "l1", "c1", "s1", new_id]
    assert clone.warnings == []
    clone.close()
    assert path.read_bytes().startswith(original)


def test_save_copy_keeps_an_oddly_formatted_header_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    header_line = (
        b'{ "type": "session", "version": 3, "id": "0190a6f2-0000-7000-8000-0000000000aa",'
        b' "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/pr\\u006fj", "x-extra": true }\n'
    )
    path.write_bytes(header_line + jline(msg("a", None)))
    store = SessionStore.open(path)
    dest = tmp_path / "copy.jsonl"
    store.save_copy(dest)
    store.close()
    assert dest.read_bytes() == path.read_bytes()


def test_save_copy_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _odd_file(path)
    dest = tmp_path / "taken.jsonl"
    dest.write_bytes(b"precious")
    store = SessionStore.open(path)
    with pytest.raises(SessionWriteError):
        store.save_copy(dest)
    store.close()
    assert dest.read_bytes() == b"precious"


def test_save_copy_of_a_legacy_file_keeps_its_entries(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    _v1(path)
    store = SessionStore.open(path)
    migrated = ids(store)
    dest = tmp_path / "copy.jsonl"
    store.save_copy(dest)
    store.close()
    copy = SessionStore.open(dest)
    assert ids(copy) == migrated
    assert copy.warnings == []
    copy.close()


def test_fork_of_a_legacy_file_keeps_the_path(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    _v1(path)
    store = SessionStore.open(path)
    q1, a1, q2 = ids(store)
    new, text = fork(store, q2)
    assert text == "q2"
    assert ids(new) == [q1, a1]
    assert new.warnings == []
    new.close()
    store.close()


def test_lone_surrogate_text_survives_a_reopen(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    store = SessionStore.create(folder, "/proj")
    uid = store.append_message(user("cut emoji \ud83d"))
    aid = store.append_message(assistant("ok"))
    assert store.path is not None
    path = store.path
    store.close()
    again = SessionStore.open(path)
    assert ids(again) == [uid, aid]
    assert again.warnings == []
    assert again.get(uid)["message"]["content"] == "cut emoji \ud83d"
    again.close()
