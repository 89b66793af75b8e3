"""A session file that changes under an open session, and a torn tail with a second writer.

Another program may append (pi does, without locking: it first ends a torn last line with a
newline), replace the file (git checkout, a sync tool, an editor saving by rename), truncate
it or delete it. pitui takes in what was appended; for anything else it stops writing, says so
in one sentence, and offers to reopen the file or save a copy of what it holds.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pitui.errors import UserError
from pitui.session import (
    LEAF_MARKER_TYPE,
    SessionChangedError,
    SessionStore,
)
from pitui.session.events import EntriesReloaded, FileChanged

HEADER = {
    "type": "session",
    "version": 3,
    "id": "0190a6f2-0000-7000-8000-0000000000cc",
    "timestamp": "2026-01-01T00:00:00.000Z",
    "cwd": "/proj",
}


def jline(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def entry(entry_id: str, parent: str | None, text: str | None = None) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": text or entry_id, "timestamp": 1},
    }


def pi_append(path: Path, *entries: dict[str, Any]) -> None:
    """Append as pi 1.6 does: end a torn last line with a newline first, then one
    ``appendFileSync`` per entry."""
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with open(path, "ab") as f:
            f.write(b"\n")
    for item in entries:
        with open(path, "ab") as f:
            f.write(jline(item))


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": 1}


def file_ids(path: Path) -> list[str]:
    out = []
    for raw in path.read_bytes().split(b"\n")[1:]:
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if obj.get("customType") != LEAF_MARKER_TYPE:
            out.append(obj["id"])
    return out


def side_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.torn-*"))


def conversation(path: Path, count: int = 4) -> bytes:
    parts = [jline(HEADER)]
    parent = None
    for i in range(count):
        parts.append(jline(entry(f"e{i}", parent)))
        parent = f"e{i}"
    data = b"".join(parts)
    path.write_bytes(data)
    return data


def events_of(store: SessionStore) -> list[object]:
    seen: list[object] = []
    store.subscribe(seen.append)
    return seen


# ------------------------------------------------------------------ item 3: torn tail + pi


def test_torn_tail_that_pi_then_appends_to_keeps_pis_turn(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    conversation(path, 2)
    torn = b'{"type":"message","id":"torn","parentId":"e1","timest'
    with open(path, "ab") as f:
        f.write(torn)
    store = SessionStore.open(path)
    # pi opens the same file, ends the torn line, and appends a whole turn.
    pi_append(path, entry("pi-user", "e1", "from pi"), entry("pi-answer", "pi-user", "pi says"))
    mine = store.append_message(user("from pitui"))
    store.close()

    assert side_files(tmp_path) == [], "a complete line must never be set aside"
    assert file_ids(path) == ["e0", "e1", "pi-user", "pi-answer", mine]
    assert torn + b"\n" in path.read_bytes()  # pi's repair stays, as pi leaves it
    reopened = SessionStore.open(path, read_only=True)
    assert {"pi-user", "pi-answer", mine} <= {n.id for n in reopened.nodes()}
    assert reopened.get("pi-answer")["message"]["content"] == "pi says"
    assert [w.message for w in reopened.warnings] == ["not valid JSON, skipped"]
    reopened.close()


def test_torn_tail_nobody_touched_is_still_set_aside(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    good = conversation(path, 2)
    torn = b'{"type":"message","id":"torn","par'
    with open(path, "ab") as f:
        f.write(torn)
    store = SessionStore.open(path)
    mine = store.append_message(user("next"))
    store.close()
    [side] = side_files(tmp_path)
    assert side.read_bytes() == torn
    assert path.read_bytes().startswith(good)
    assert file_ids(path) == ["e0", "e1", mine]


def test_pi_repairing_a_torn_tail_written_after_open_is_followed(tmp_path: Path) -> None:
    """The tail was clean at open; pi crashed mid-line later, then pi appended again."""
    path = tmp_path / "s.jsonl"
    conversation(path, 2)
    store = SessionStore.open(path)
    with open(path, "ab") as f:
        f.write(b'{"type":"message","id":"half')  # pi killed mid-write
    pi_append(path, entry("pi-next", "e1"))
    mine = store.append_message(user("mine"))
    store.close()
    assert side_files(tmp_path) == []
    assert file_ids(path) == ["e0", "e1", "pi-next", mine]


# A small alphabet of operations on one file: pitui (holding the file open) appends, pi
# appends (with its newline repair), pi dies mid-line, pitui closes and reopens.
operation = st.one_of(
    st.tuples(st.just("pitui"), st.integers(1, 3)),
    st.tuples(st.just("pi"), st.integers(1, 3)),
    st.tuples(st.just("torn"), st.integers(1, 60)),
    st.tuples(st.just("reopen"), st.just(0)),
)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=st.lists(operation, min_size=1, max_size=12), torn_at_open=st.booleans())
def test_two_writers_never_lose_or_move_a_complete_line(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, int]], torn_at_open: bool
) -> None:
    folder = tmp_path_factory.mktemp("two-writers")
    path = folder / "s.jsonl"
    conversation(path, 2)
    written = ["e0", "e1"]  # every complete entry line, in file order
    fragments: list[bytes] = []
    counter = 0

    def fragment(size: int) -> bytes:
        nonlocal counter
        counter += 1
        raw = jline(entry(f"torn{counter}", written[-1]))
        cut = raw[: max(1, min(size, len(raw) - 3))]  # never a whole object
        fragments.append(cut)
        return cut

    if torn_at_open:
        with open(path, "ab") as f:
            f.write(fragment(30))
    store = SessionStore.open(path)
    for kind, n in ops:
        if kind == "pitui":
            for _ in range(n):
                written.append(store.append_message(user("pitui")))
        elif kind == "pi":
            for _ in range(n):
                counter += 1
                pi_append(path, entry(f"pi{counter}", written[-1]))
                written.append(f"pi{counter}")
        elif kind == "torn":  # pi opens (ending a torn line) and dies in the middle of a line
            pi_append(path)
            with open(path, "ab") as f:
                f.write(fragment(n))
        else:
            store.close()
            store = SessionStore.open(path)
        assert not store.read_only, store.read_only_reason
    store.refresh()
    assert set(written) <= {node.id for node in store.nodes()}
    store.close()

    # Every complete line is in the file, once, in order; nothing complete was set aside.
    assert file_ids(path) == written
    for side in side_files(folder):
        assert side.read_bytes() in fragments
    # The file only holds complete entries, fragments pi terminated, and maybe a last torn one.
    lines = path.read_bytes().split(b"\n")
    for raw in lines[1:-1]:
        if raw not in fragments:
            json.loads(raw)
    assert lines[-1] == b"" or lines[-1] in fragments
    again = SessionStore.open(path, read_only=True)
    assert [n.id for n in again.nodes()] == written
    again.close()


# ------------------------------------------------------------------ item 4: changes underneath


def test_lines_another_writer_appends_are_taken_in(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    conversation(path)
    store = SessionStore.open(path)
    seen = events_of(store)
    leaf = store.leaf_id
    pi_append(path, entry("p1", "e3", "first from pi"), entry("p2", "p1", "second"))
    # Asking for an entry pitui has not seen yet reads the file again.
    assert store.get("p2")["message"]["content"] == "second"
    assert store.leaf_id == leaf  # the user's branch does not jump
    assert [n.id for n in store.children("e3")] == ["p1"]
    assert EntriesReloaded(("p1", "p2")) in seen
    pi_append(path, entry("p3", "p2"))
    mine = store.append_message(user("after pi"))
    assert "p3" in store
    assert store.node(mine).parent_id == "e3"
    store.close()
    assert file_ids(path) == ["e0", "e1", "e2", "e3", "p1", "p2", "p3", mine]


def _replace(path: Path, data: bytes) -> None:
    tmp = path.with_name("incoming.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _truncate(path: Path, data: bytes) -> None:
    with open(path, "r+b") as f:
        f.truncate(len(jline(HEADER)) + 10)


def _delete(path: Path, data: bytes) -> None:
    path.unlink()


def _rewrite(path: Path, data: bytes) -> None:
    info = path.stat()
    with open(path, "r+b") as f:  # same inode, same size, other bytes (an editor in place)
        f.seek(info.st_size - 20)
        f.write(b"X" * 19)
    # An editor saves later than pitui's read; within one clock tick the mtime could not move.
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))


CHANGES = {"replaced": _replace, "truncated": _truncate, "deleted": _delete, "modified": _rewrite}


@pytest.mark.parametrize("kind", sorted(CHANGES))
def test_a_file_changed_underneath_stops_writing_with_one_sentence(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "s.jsonl"
    conversation(path, 6)
    store = SessionStore.open(path)
    seen = events_of(store)
    store.get("e0")  # parsed before the change: still shown afterwards
    replacement = jline({**HEADER, "id": "someone-else"}) + jline(entry("x", None))
    CHANGES[kind](path, replacement)
    after = path.read_bytes() if path.exists() else None

    with pytest.raises(SessionChangedError) as info:
        store.append_message(user("must not be written"))
    error = info.value
    assert isinstance(error, UserError) and error.kind == kind
    message = str(error)
    assert message.startswith(f"The session file {path} ")
    assert message.count(".") == 1 + str(path).count(".") and message.endswith(".")
    assert "\n" not in message
    assert store.read_only and store.read_only_reason == message
    assert store.file_change is error
    assert [e for e in seen if isinstance(e, FileChanged)] == [
        FileChanged(kind, message, kind != "deleted")
    ]
    # Nothing more is ever written to it, not even by close().
    store.branch("e2")
    with pytest.raises(SessionChangedError):
        store.append_message(user("again"))
    store.close()
    assert (path.read_bytes() if path.exists() else None) == after
    assert not path.with_name(path.name + ".lock").exists()
    assert store.get("e0")["message"]["content"] == "e0"


@pytest.mark.parametrize("kind", ["replaced", "deleted"])
def test_a_replaced_or_deleted_file_can_still_be_read_and_saved_whole(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "s.jsonl"
    original = conversation(path, 6)
    store = SessionStore.open(path)
    CHANGES[kind](path, jline({**HEADER, "id": "other"}))
    store.refresh()
    assert store.file_change is not None and store.file_change.kind == kind
    # Every entry still reads from the file as it was opened.
    assert [store.get(f"e{i}")["message"]["content"] for i in range(6)] == [
        f"e{i}" for i in range(6)
    ]
    copy = tmp_path / "copy.jsonl"
    assert store.save_copy(copy) == 0
    assert copy.read_bytes() == original
    store.close()


def test_a_truncated_file_raises_a_user_error_on_read_never_a_json_error(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    conversation(path, 6)
    store = SessionStore.open(path)
    kept = store.get("e0")
    _truncate(path, b"")
    with pytest.raises(SessionChangedError) as info:
        store.get("e5")
    assert info.value.kind == "truncated"
    assert store.get("e0") is kept  # what was read before is still there
    copy = tmp_path / "copy.jsonl"
    lost = store.save_copy(copy)
    assert lost == 5
    assert [json.loads(x)["id"] for x in copy.read_bytes().splitlines()[1:]] == ["e0"]
    store.close()


def test_reopen_after_a_replacement_shows_the_new_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    conversation(path, 3)
    store = SessionStore.open(path)
    _replace(path, jline(HEADER) + jline(entry("new", None, "the new version")))
    store.refresh()
    assert store.file_change is not None and store.file_change.can_reopen
    fresh = store.reopen()
    assert not fresh.read_only
    assert [n.id for n in fresh.nodes()] == ["new"]
    added = fresh.append_message(user("continues"))
    fresh.close()
    assert file_ids(path) == ["new", added]


def test_touching_the_file_is_not_a_change(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    conversation(path, 2)
    store = SessionStore.open(path)
    os.utime(path, ns=(1, 1))
    added = store.append_message(user("still fine"))
    store.close()
    assert file_ids(path) == ["e0", "e1", added]


def test_a_line_appended_in_the_instant_before_ours_is_taken_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pi writes between pitui's check of the file and pitui's own write."""
    from pitui.session import writer as writer_module

    path = tmp_path / "s.jsonl"
    conversation(path, 2)
    store = SessionStore.open(path)
    real_append = writer_module.AppendWriter.append

    def racing(self: Any, data: bytes) -> int:
        pi_append(path, entry("racer", "e1", "pi, just in time"))
        monkeypatch.setattr(writer_module.AppendWriter, "append", real_append)
        return real_append(self, data)

    monkeypatch.setattr(writer_module.AppendWriter, "append", racing)
    mine = store.append_message(user("mine"))
    assert "racer" in store
    assert [n.id for n in store.nodes()] == ["e0", "e1", "racer", mine]
    assert store.get(mine)["message"]["content"] == "mine"
    store.close()
    assert file_ids(path) == ["e0", "e1", "racer", mine]
    assert json.loads(path.read_bytes().splitlines()[-1])["id"] == mine  # no leaf marker needed
