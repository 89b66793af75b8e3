"""The single-writer lock and the durable leaf (the ``pitui.leaf`` marker written on close)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pitui.session import (
    LEAF_MARKER_TYPE,
    ReadOnlySessionError,
    SessionStore,
    clone,
    fork,
)

HEADER: dict[str, Any] = {
    "type": "session",
    "version": 3,
    "id": "0190a6f2-0000-7000-8000-0000000000bb",
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


def marker(entry_id: str, parent: str | None, n: int = 50) -> dict[str, Any]:
    return {
        "type": "custom",
        "id": entry_id,
        "parentId": parent,
        "timestamp": ts(n),
        "customType": LEAF_MARKER_TYPE,
    }


def jline(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def write_session(path: Path, *items: dict[str, Any]) -> bytes:
    data = jline(HEADER) + b"".join(jline(i) for i in items)
    path.write_bytes(data)
    return data


def ids(store: SessionStore) -> list[str]:
    return [n.id for n in store.nodes()]


def lock_path(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


def conversation(path: Path) -> bytes:
    """u1 -> a1 -> u2 -> a2, with a second branch u1 -> a1 -> u3."""
    return write_session(
        path,
        msg("u1", None, n=1),
        msg("a1", "u1", "assistant", n=2),
        msg("u2", "a1", n=3),
        msg("a2", "u2", "assistant", n=4),
        msg("u3", "a1", n=5),
        msg("a3", "u3", "assistant", n=6),
    )


def new_lines(path: Path, before: bytes) -> list[dict[str, Any]]:
    data = path.read_bytes()
    assert data.startswith(before)
    return [json.loads(x) for x in data[len(before) :].splitlines()]


# ---------------------------------------------------------------------------- single writer


def test_second_open_in_the_same_process_is_read_only(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    original = conversation(path)
    first = SessionStore.open(path)
    assert not first.read_only and first.read_only_reason is None
    assert lock_path(path).exists()

    second = SessionStore.open(path)
    assert second.read_only
    reason = second.read_only_reason
    assert reason is not None
    assert f"pid {os.getpid()}" in reason
    assert "\n" not in reason and reason.endswith(".")
    assert ids(second) == ids(first)
    with pytest.raises(ReadOnlySessionError) as info:
        second.append_message({"role": "user", "content": "nope", "timestamp": 1})
    assert str(info.value) == reason
    with pytest.raises(ReadOnlySessionError):
        second.append_label("u1", "x")
    assert ids(second) == ids(first)
    assert path.read_bytes() == original

    # The writer is unaffected.
    first.append_message({"role": "user", "content": "mine", "timestamp": 1})
    second.branch("u2")
    second.close()  # a read-only store never writes, not even a leaf marker
    # Closing the second store's descriptors must not release the first store's lock.
    probe = SessionStore.open(path)
    assert probe.read_only
    probe.close()
    first.close()
    assert not lock_path(path).exists()

    third = SessionStore.open(path)
    assert not third.read_only
    third.append_message({"role": "user", "content": "free again", "timestamp": 2})
    third.close()


def test_read_only_open_takes_no_lock(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    original = conversation(path)
    viewer = SessionStore.open(path, read_only=True)
    assert viewer.read_only
    assert not lock_path(path).exists()
    with pytest.raises(ReadOnlySessionError):
        viewer.append_message({"role": "user", "content": "nope", "timestamp": 1})
    writer = SessionStore.open(path)
    assert not writer.read_only
    writer.close()
    viewer.close()
    assert path.read_bytes() == original


def test_fork_and_clone_work_from_a_read_only_store(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    original = conversation(path)
    holder = SessionStore.open(path)
    viewer = SessionStore.open(path)
    assert viewer.read_only

    forked, text = fork(viewer, "u2")
    assert text == "u2"
    assert not forked.read_only
    assert forked.path is not None and forked.path != path and forked.path.exists()
    assert forked.parent_session == str(path)
    assert [n.id for n in forked.path_to()] == ["u1", "a1"]
    added = forked.append_message({"role": "user", "content": "edited", "timestamp": 1})
    forked.close()

    viewer.branch("a3")
    cloned = clone(viewer)
    assert not cloned.read_only
    assert [n.id for n in cloned.path_to()] == ["u1", "a1", "u3", "a3"]
    cloned.close()

    viewer.close()
    holder.close()
    assert path.read_bytes() == original
    reopened = SessionStore.open(forked.path)
    assert [n.id for n in reopened.path_to()] == ["u1", "a1", added]
    reopened.close()


_HOLDER = textwrap.dedent(
    """
    import sys
    from pitui.session import SessionStore
    store = SessionStore.open(sys.argv[1])
    print("read_only" if store.read_only else "writer", flush=True)
    sys.stdin.readline()
    store.close()
    """
)

_SECOND = textwrap.dedent(
    """
    import json, sys
    from pitui.session import ReadOnlySessionError, SessionStore
    store = SessionStore.open(sys.argv[1])
    out = {"read_only": store.read_only, "reason": store.read_only_reason, "pid": None}
    try:
        store.append_message({"role": "user", "content": "from the child", "timestamp": 1})
        out["append"] = "written"
    except ReadOnlySessionError as exc:
        out["append"] = str(exc)
    store.close()
    print(json.dumps(out))
    """
)


@pytest.fixture
def holder_process(tmp_path: Path) -> Iterator[Any]:
    procs: list[subprocess.Popen[str]] = []

    def start(path: Path) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        procs.append(proc)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "writer"
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)


@pytest.mark.timeout(60)
@pytest.mark.slow
def test_second_open_in_another_process_is_read_only(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    original = conversation(path)
    store = SessionStore.open(path)
    child = subprocess.run(
        [sys.executable, "-c", _SECOND, str(path)], capture_output=True, text=True, timeout=30
    )
    assert child.returncode == 0, child.stderr
    out = json.loads(child.stdout)
    assert out["read_only"] is True
    assert f"pid {os.getpid()}" in out["reason"]
    assert out["append"] == out["reason"]
    assert path.read_bytes() == original
    store.close()


@pytest.mark.timeout(60)
@pytest.mark.slow
def test_this_process_is_read_only_while_another_holds_the_session(
    tmp_path: Path, holder_process: Any
) -> None:
    path = tmp_path / "s.jsonl"
    original = conversation(path)
    proc = holder_process(path)
    store = SessionStore.open(path)
    assert store.read_only
    assert store.read_only_reason is not None and f"pid {proc.pid}" in store.read_only_reason
    with pytest.raises(ReadOnlySessionError):
        store.append_message({"role": "user", "content": "nope", "timestamp": 1})
    store.close()
    assert path.read_bytes() == original

    # A clean exit of the holder frees the session.
    assert proc.stdin is not None
    proc.stdin.write("\n")
    proc.stdin.flush()
    assert proc.wait(timeout=30) == 0
    again = SessionStore.open(path)
    assert not again.read_only
    again.close()


@pytest.mark.timeout(60)
@pytest.mark.slow
def test_lock_of_a_killed_process_is_taken_over(tmp_path: Path, holder_process: Any) -> None:
    path = tmp_path / "s.jsonl"
    original = conversation(path)
    proc = holder_process(path)
    blocked = SessionStore.open(path)
    assert blocked.read_only
    blocked.close()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert lock_path(path).read_text().strip() == str(proc.pid)  # the stale lock file stays

    store = SessionStore.open(path)
    assert not store.read_only and store.read_only_reason is None
    assert lock_path(path).read_text().strip() == str(os.getpid())
    new_id = store.append_message({"role": "user", "content": "after the crash", "timestamp": 1})
    store.close()
    lines = new_lines(path, original)
    assert [e["id"] for e in lines] == [new_id]


# ---------------------------------------------------------------------------- durable leaf


def test_close_after_moving_the_leaf_writes_one_marker(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    original = conversation(path)
    store = SessionStore.open(path)
    assert store.leaf_id == "a3"
    for target in ("u1", "a2", "u3", "a1", "a2"):
        store.branch(target)
        assert path.read_bytes() == original  # never a marker per navigation
    store.close()

    [entry] = new_lines(path, original)
    assert entry["type"] == "custom"
    assert entry["customType"] == LEAF_MARKER_TYPE
    assert entry["parentId"] == "a2"
    assert isinstance(entry["id"], str) and isinstance(entry["timestamp"], str)

    reopened = SessionStore.open(path)
    assert reopened.leaf_id == "a2"
    assert ids(reopened) == ["u1", "a1", "u2", "a2", "u3", "a3"]
    assert len(reopened) == 6
    assert entry["id"] not in json.dumps(reopened.tree())
    assert [n.id for n in reopened.path_to()] == ["u1", "a1", "u2", "a2"]
    assert reopened.project().source_entry_ids == ["u1", "a1", "u2", "a2"]
    assert reopened.warnings == []
    with_marker = path.read_bytes()
    reopened.close()
    assert path.read_bytes() == with_marker  # reopen + close without moving writes nothing


def test_close_without_moving_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    original = conversation(path)
    store = SessionStore.open(path)
    store.branch("u1")
    store.branch("a3")  # back where it was
    store.close()
    assert path.read_bytes() == original


def test_appending_then_closing_writes_no_marker(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    original = conversation(path)
    store = SessionStore.open(path)
    store.branch("a2")
    new_id = store.append_message({"role": "user", "content": "on a2", "timestamp": 1})
    store.close()
    [entry] = new_lines(path, original)
    assert entry["id"] == new_id and entry["parentId"] == "a2"


def test_reset_leaf_survives_a_reopen(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    original = conversation(path)
    store = SessionStore.open(path)
    store.reset_leaf()
    store.close()
    [entry] = new_lines(path, original)
    assert entry["customType"] == LEAF_MARKER_TYPE and entry["parentId"] is None

    reopened = SessionStore.open(path)
    assert reopened.leaf is None
    assert reopened.tree()["null"] == ["u1"]
    assert reopened.path_to() == []
    root = reopened.append_message({"role": "user", "content": "fresh", "timestamp": 1})
    assert reopened.node(root).parent_id is None
    assert reopened.tree()["null"] == ["u1", root]
    reopened.close()
    final = SessionStore.open(path)
    assert final.leaf_id == root
    final.close()


def test_new_entries_after_a_reopen_hang_off_the_leaf_not_the_marker(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    conversation(path)
    store = SessionStore.open(path)
    store.branch("u2")
    store.close()
    store = SessionStore.open(path)
    before = path.read_bytes()
    new_id = store.append_message({"role": "assistant", "content": [], "timestamp": 1})
    store.close()
    [entry] = new_lines(path, before)
    assert entry["id"] == new_id and entry["parentId"] == "u2"
    again = SessionStore.open(path)
    assert again.leaf_id == new_id
    assert again.tree()["u2"] == ["a2", new_id]
    again.close()


def test_moving_back_to_the_last_entry_after_a_marker_records_it(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    original = write_session(
        path,
        msg("u1", None, n=1),
        msg("a1", "u1", "assistant", n=2),
        msg("u2", "u1", n=3),
        marker("m1", "a1"),
    )
    store = SessionStore.open(path)
    assert store.leaf_id == "a1"
    store.branch("u2")  # the last real entry, but the file reopens on a1
    store.close()
    [entry] = new_lines(path, original)
    assert entry["customType"] == LEAF_MARKER_TYPE and entry["parentId"] == "u2"
    again = SessionStore.open(path)
    assert again.leaf_id == "u2"
    again.close()


def test_markers_are_invisible_everywhere(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(
        path,
        msg("u1", None, n=1),
        msg("a1", "u1", "assistant", n=2),
        marker("m0", "u1", n=3),  # an old marker in the middle of the file
        msg("u2", "a1", n=4),
        marker("m1", "a1", n=5),
    )
    store = SessionStore.open(path)
    assert store.leaf_id == "a1"
    assert ids(store) == ["u1", "a1", "u2"]
    assert len(store) == 3
    assert store.tree() == {"null": ["u1"], "u1": ["a1"], "a1": ["u2"]}
    assert [n.id for n in store.path_to("u2")] == ["u1", "a1", "u2"]
    assert [n.id for n in store.children("u1")] == ["a1"]
    assert store.warnings == []
    store.close()


def test_child_appended_under_a_marker_by_pi_is_lifted(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    original = write_session(
        path,
        msg("u1", None, n=1),
        msg("a1", "u1", "assistant", n=2),
        msg("u2", "a1", n=3),
        marker("m1", "u1", n=4),
        msg("p1", "m1", n=5),  # pi knows nothing about markers: it chained onto it
        msg("p2", "p1", "assistant", n=6),
    )
    store = SessionStore.open(path)
    assert store.leaf_id == "p2"
    assert ids(store) == ["u1", "a1", "u2", "p1", "p2"]
    assert store.tree() == {"null": ["u1"], "u1": ["a1", "p1"], "a1": ["u2"], "p1": ["p2"]}
    assert [n.id for n in store.children("u1")] == ["a1", "p1"]
    assert [n.id for n in store.path_to()] == ["u1", "p1", "p2"]
    assert store.project().source_entry_ids == ["u1", "p1", "p2"]
    store.close()
    assert path.read_bytes() == original


def test_marker_under_a_root_marker_child_is_lifted_to_the_roots(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(
        path,
        msg("u1", None, n=1),
        marker("m1", None, n=2),
        msg("p1", "m1", n=3),
    )
    store = SessionStore.open(path)
    assert store.tree() == {"null": ["u1", "p1"]}
    assert [n.id for n in store.roots()] == ["u1", "p1"]
    assert [n.id for n in store.path_to()] == ["p1"]
    store.close()


def test_read_only_store_never_writes_a_marker(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    original = conversation(path)
    for asked_read_only in (True, False):
        # Asked for read-only, or made read-only because another store holds the lock.
        holder = None if asked_read_only else SessionStore.open(path)
        store = SessionStore.open(path, read_only=asked_read_only)
        assert store.read_only
        store.branch("u1")
        store.close()
        if holder is not None:
            holder.close()
        assert path.read_bytes() == original


def test_unsaved_new_session_writes_no_marker(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    store = SessionStore.create(folder, "/proj")
    first = store.append_model_change("anthropic", "claude-test")
    store.append_thinking_level_change("high")
    store.branch(first)
    store.close()
    assert not folder.exists() or list(folder.iterdir()) == []


def test_new_session_marker_after_the_file_exists(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    store = SessionStore.create(folder, "/proj")
    u1 = store.append_message({"role": "user", "content": "q", "timestamp": 1})
    store.append_message({"role": "assistant", "content": [], "timestamp": 2})
    assert store.path is not None
    path = store.path
    before = path.read_bytes()
    store.branch(u1)
    store.close()
    [entry] = new_lines(path, before)
    assert entry["customType"] == LEAF_MARKER_TYPE and entry["parentId"] == u1
    again = SessionStore.open(path)
    assert again.leaf_id == u1 and len(again) == 2
    again.close()
