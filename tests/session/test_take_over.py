"""A second view of a held session: it follows the writer, sees the lock go, and takes over;
and a fork of a whole session into another working directory (a stored cwd that is gone)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.fixtures import copy_fixture

from pitui.session import ReadOnlySessionError, SessionStore, WriterChanged, fork_from


def user(text: str) -> dict[str, object]:
    return {"role": "user", "content": text, "timestamp": 1}


def test_a_second_view_follows_the_writer_and_takes_over_when_it_closes(tmp_path: Path) -> None:
    path = copy_fixture("pi-v3-branches.jsonl", tmp_path)
    writer = SessionStore.open(path)
    view = SessionStore.open(path)
    assert view.read_only and view.held_elsewhere
    assert view.holder == f"pid {os.getpid()}"
    assert view.read_only_reason is not None and "read-only" in view.read_only_reason
    assert not view.lock_is_free()
    assert not view.take_over()  # still held: nothing changes
    assert view.read_only and view.held_elsewhere

    written = writer.append_message(user("from the writer"))
    writer.close()
    events: list[object] = []
    view.subscribe(events.append)
    assert view.lock_is_free()
    assert view.take_over()
    assert not view.read_only and view.read_only_reason is None and not view.held_elsewhere
    assert written in view  # what the writer appended before closing was taken in first
    assert any(isinstance(e, WriterChanged) for e in events)

    view.branch(written)
    mine = view.append_message(user("from the view"))
    third = SessionStore.open(path)
    assert third.read_only and third.held_elsewhere  # the view holds the lock now
    third.close()
    view.close()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [e["id"] for e in lines].count(mine) == 1
    assert [e["id"] for e in lines].count(written) == 1


def test_a_view_of_a_changed_file_cannot_take_over(tmp_path: Path) -> None:
    path = copy_fixture("pi-v3-branches.jsonl", tmp_path)
    writer = SessionStore.open(path)
    view = SessionStore.open(path)
    writer.close()
    path.write_bytes(path.read_bytes()[:100])  # cut short by another program
    assert not view.take_over()
    assert view.read_only
    with pytest.raises(ReadOnlySessionError):
        view.append_message(user("x"))
    view.close()


def test_read_only_by_request_is_not_held_elsewhere(tmp_path: Path) -> None:
    path = copy_fixture("pi-v3-branches.jsonl", tmp_path)
    with SessionStore.open(path, read_only=True) as store:
        assert store.read_only and not store.held_elsewhere and not store.lock_is_free()


def test_stored_cwd_missing(tmp_path: Path) -> None:
    path = copy_fixture("pi-v3-branches.jsonl", tmp_path)
    with SessionStore.open(path, read_only=True) as store:
        assert store.cwd and not os.path.isdir(store.cwd)
        assert store.stored_cwd_missing
    assert not SessionStore.create(tmp_path / "s", "/nowhere/at/all").stored_cwd_missing


def test_fork_from_copies_every_branch_into_the_new_working_directory(tmp_path: Path) -> None:
    path = copy_fixture("pi-v3-branches.jsonl", tmp_path)
    before = path.read_bytes()
    with SessionStore.open(path) as source:
        leaf = next(n.id for n in source.nodes() if n.id != source.leaf_id)
        source.branch(leaf)
        new = fork_from(source, str(tmp_path), tmp_path / "here")
        source_ids = [n.id for n in source.all_nodes()]
    try:
        assert new.cwd == str(tmp_path) and not new.stored_cwd_missing
        assert new.parent_session == str(path.absolute())
        assert new.session_id != source.session_id
        assert new.path is not None and new.path.parent == tmp_path / "here"
        assert [n.id for n in new.all_nodes()] == source_ids
        assert new.leaf_id == leaf
        copied = new.path.read_bytes().split(b"\n", 1)[1]
        assert copied == before.split(b"\n", 1)[1]  # entries byte for byte
    finally:
        new.close()
    assert path.read_bytes().startswith(before)
