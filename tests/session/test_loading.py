"""Loading session files: tolerance, warnings with line numbers, the file table, legacy files.

Every test checks what a user would notice: which entries show up, the leaf, the warnings
(with their line numbers), and that the file on disk is never touched by reading.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

import pitui.session.loader as loader_module
from pitui.session import LoadWarning, SessionFileError, SessionStore

HEADER: dict[str, Any] = {
    "type": "session",
    "version": 3,
    "id": "0190a6f2-0000-7000-8000-000000000001",
    "timestamp": "2025-01-01T00:00:00.000Z",
    "cwd": "/proj",
}


def ts(n: int) -> str:
    return f"2025-01-01T00:{n // 60:02d}:{n % 60:02d}.000Z"


def msg(
    entry_id: str, parent: str | None, role: str = "user", text: str | None = None, n: int = 1
) -> dict[str, Any]:
    body: dict[str, Any] = {"role": role, "content": text if text is not None else entry_id}
    if role == "assistant":
        body["content"] = [{"type": "text", "text": text if text is not None else entry_id}]
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": ts(n),
        "message": body,
    }


def jline(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def write_session(path: Path, *items: bytes | dict[str, Any], header: bool = True) -> bytes:
    """Write a session file from entries (dicts) and raw lines (bytes); return its bytes."""
    parts = [jline(HEADER)] if header else []
    parts.extend(item if isinstance(item, bytes) else jline(item) for item in items)
    data = b"".join(parts)
    path.write_bytes(data)
    return data


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file in ``folder`` with its bytes and mtime (to prove nothing was written)."""
    return {
        p.name: (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(folder.iterdir())
        if p.is_file()
    }


def ids(store: SessionStore) -> list[str]:
    return [n.id for n in store.nodes()]


def warning_lines(store: SessionStore) -> list[int | None]:
    return [w.line for w in store.warnings]


def use_everything(store: SessionStore) -> None:
    """Touch every read path a UI would: full entries, tree, paths, projection."""
    for node in store.nodes():
        store.get(node.id)
        store.path_to(node.id)
    store.tree()
    store.project()


# ---------------------------------------------------------------------------- never writes


def _torn(path: Path) -> bytes:
    return write_session(path, msg("a", None), b'{"type":"message","id":"b","parentId":"a","mes')


def _no_newline(path: Path) -> bytes:
    return write_session(path, msg("a", None), jline(msg("b", "a", "assistant"))[:-1])


def _garbage(path: Path) -> bytes:
    return write_session(path, msg("a", None), b"not json at all\n", b"42\n", msg("b", "a"))


def _cycle(path: Path) -> bytes:
    return write_session(path, msg("a", "b"), msg("b", "a"))


def _legacy(path: Path) -> bytes:
    data = jline({k: v for k, v in HEADER.items() if k != "version"}) + jline(
        {"type": "message", "timestamp": ts(1), "message": {"role": "user", "content": "hi"}}
    )
    path.write_bytes(data)
    return data


def _crlf_bom(path: Path) -> bytes:
    data = b"\xef\xbb\xbf" + write_session(path, msg("a", None)).replace(b"\n", b"\r\n")
    path.write_bytes(data)
    return data


def _empty(path: Path) -> bytes:
    path.write_bytes(b"")
    return b""


def _header_only(path: Path) -> bytes:
    return write_session(path)


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    "make",
    [_torn, _no_newline, _garbage, _cycle, _legacy, _crlf_bom, _empty, _header_only],
    ids=lambda f: f.__name__.strip("_"),
)
@pytest.mark.parametrize("read_only", [False, True])
def test_loading_never_writes(tmp_path: Path, make: Any, read_only: bool) -> None:
    path = tmp_path / "s.jsonl"
    original = make(path)
    before = snapshot(tmp_path)
    store = SessionStore.open(path, read_only=read_only)
    use_everything(store)
    store.close()
    assert path.read_bytes() == original
    assert snapshot(tmp_path) == before  # no side file, no .bak, lock file gone again


# ---------------------------------------------------------------------------- skipped lines


def test_unparseable_and_non_entry_lines_are_skipped_with_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(
        path,
        msg("a", None),  # line 2
        b"this is not json\n",  # 3
        b"42\n",  # 4
        b'"a string"\n',  # 5
        b"[1, 2, 3]\n",  # 6
        b"null\n",  # 7
        b'{"foo": 1}\n',  # 8
        b'{"type": "message", "parentId": null}\n',  # 9: no id
        b'{"type": 5, "id": "x"}\n',  # 10: type not a string
        b'{"type": "message", "id": 7}\n',  # 11: id not a string
        b'{"type":"message","id":"trail"} trailing\n',  # 12: garbage after JSON
        msg("b", "a", "assistant", n=2),  # 13
    )
    store = SessionStore.open(path)
    assert ids(store) == ["a", "b"]
    assert store.leaf_id == "b"
    assert [n.id for n in store.path_to()] == ["a", "b"]
    assert all(isinstance(w, LoadWarning) for w in store.warnings)
    assert warning_lines(store) == [3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
    assert all(str(w).startswith(f"line {w.line}: ") for w in store.warnings)
    store.close()


def test_warning_line_numbers_count_blank_lines_bom_and_crlf(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    body = b"".join(
        [
            b"\xef\xbb\xbf",
            jline(HEADER).replace(b"\n", b"\r\n"),  # 1
            b"\r\n",  # 2 blank
            jline(msg("a", None)).replace(b"\n", b"\r\n"),  # 3
            b"   \n",  # 4 blank (spaces)
            b"\n",  # 5 blank
            b"{broken\r\n",  # 6
            jline(msg("b", "a", "assistant", n=2)).replace(b"\n", b"\r\n"),  # 7
        ]
    )
    path.write_bytes(body)
    store = SessionStore.open(path)
    assert store.header["id"] == HEADER["id"]
    assert ids(store) == ["a", "b"]
    assert store.leaf_id == "b"
    assert warning_lines(store) == [6]
    assert store.get("a")["message"]["content"] == "a"
    assert store.get("b")["message"]["content"][0]["text"] == "b"
    assert store.node("a").line == 3 and store.node("b").line == 7
    # The stored line is the exact bytes of the file (CR kept, BOM not part of any line).
    assert store.raw_line(store.node("a")) == jline(msg("a", None))[:-1] + b"\r"
    store.close()
    assert path.read_bytes() == body


@pytest.mark.parametrize("chunk_size", [3, 5, 7, 64])
def test_lines_split_across_read_chunks_load_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk_size: int
) -> None:
    path = tmp_path / "s.jsonl"
    lines = [
        jline(HEADER),
        jline(msg("a", None, text="é ünïcode ✓")),
        b"\n",
        b"garbage\n",
        jline(msg("b", "a", "assistant", n=2)).replace(b"\n", b"\r\n"),
        jline(msg("c", "b", n=3))[:-1],  # last line without newline
    ]
    path.write_bytes(b"\xef\xbb\xbf" + b"".join(lines))
    monkeypatch.setattr(loader_module, "CHUNK_SIZE", chunk_size)
    store = SessionStore.open(path, read_only=True)
    assert ids(store) == ["a", "b", "c"]
    assert warning_lines(store) == [4]
    assert store.get("a")["message"]["content"] == "é ünïcode ✓"
    assert store.raw_line(store.node("a")) == lines[1][:-1]
    assert store.raw_line(store.node("b")) == lines[4][:-1]
    assert store.raw_line(store.node("c")) == lines[5]
    store.close()


@pytest.mark.parametrize(
    "bad",
    [
        b'{"type":"message","id":"x","parentId":null,"message":"oops", broken\n',
        b"[1, 2, \n",
        b"[1, 2",  # torn last line
    ],
    ids=["message-not-object", "array-broken", "torn-array"],
)
def test_wrong_shape_invalid_json_is_skipped_not_a_crash(tmp_path: Path, bad: bytes) -> None:
    path = tmp_path / "s.jsonl"
    original = write_session(path, msg("a", None), bad)
    store = SessionStore.open(path)
    assert ids(store) == ["a"]
    assert warning_lines(store) == [3]
    store.close()
    assert path.read_bytes() == original


@pytest.mark.parametrize(
    "bad",
    [
        b'{"type":"message","id":"bad","parentId":"a","timestamp":"t",'
        b'"message":{"role":"user","content":"caf\xe9 \xff"}}\n',
        b'{"type":"label","id":"bad","parentId":"a","timestamp":"t","targetId":"a",'
        b'"label":"caf\xe9"}\n',
    ],
    ids=["message", "label"],
)
def test_invalid_utf8_line_is_skipped_or_readable(tmp_path: Path, bad: bytes) -> None:
    path = tmp_path / "s.jsonl"
    write_session(path, msg("a", None), bad, msg("b", "a", n=2))
    store = SessionStore.open(path)
    if "bad" in ids(store):
        store.get("bad")  # must not raise
    else:
        assert 3 in warning_lines(store)
    for node in store.nodes():
        store.get(node.id)
    store.close()


def test_second_session_header_is_not_an_entry(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    second = {**HEADER, "id": "0190a6f2-0000-7000-8000-000000000002"}
    write_session(path, msg("a", None), second)
    store = SessionStore.open(path)
    assert ids(store) == ["a"]
    assert store.leaf_id == "a"
    assert warning_lines(store) == [3]
    store.close()


def test_torn_last_line_is_skipped_with_a_warning_and_not_written(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    torn = b'{"type":"message","id":"b","parentId":"a","message":{"role":"assist'
    original = write_session(path, msg("a", None), torn)
    store = SessionStore.open(path)
    assert ids(store) == ["a"]
    assert store.leaf_id == "a"
    assert warning_lines(store) == [3]
    store.close()
    assert path.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


def test_complete_last_line_without_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    original = write_session(path, msg("a", None), jline(msg("b", "a", "assistant", n=2))[:-1])
    store = SessionStore.open(path)
    assert ids(store) == ["a", "b"]
    assert store.leaf_id == "b"
    assert store.warnings == []
    store.close()
    assert path.read_bytes() == original


# ---------------------------------------------------------------------------- tree repair


def test_orphans_become_roots_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(
        path,
        msg("a", None, n=1),
        msg("o", "gone", n=2),  # line 3: parent missing
        msg("p", "o", "assistant", n=3),
    )
    store = SessionStore.open(path)
    assert [n.id for n in store.roots()] == ["a", "o"]
    assert store.tree() == {"null": ["a", "o"], "o": ["p"]}
    assert [n.id for n in store.path_to()] == ["o", "p"]
    assert warning_lines(store) == [3]
    assert "o" in store.warnings[0].message and "gone" in store.warnings[0].message
    store.close()


@pytest.mark.timeout(10)
def test_self_parent_is_a_root_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(path, msg("a", "a", n=1), msg("b", "a", "assistant", n=2))
    store = SessionStore.open(path)
    assert [n.id for n in store.roots()] == ["a"]
    assert store.tree() == {"null": ["a"], "a": ["b"]}
    assert [n.id for n in store.path_to()] == ["a", "b"]
    assert warning_lines(store) == [2]
    assert "a" in store.warnings[0].message
    store.close()


@pytest.mark.timeout(10)
def test_two_entry_cycle_breaks_at_the_last_entry_reached(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    # Walking up from the leaf b: b -> a -> (b again): stop, a is treated as a root.
    write_session(path, msg("a", "b", n=1), msg("b", "a", "assistant", n=2))
    store = SessionStore.open(path)
    assert store.leaf_id == "b"
    assert [n.id for n in store.path_to()] == ["a", "b"]
    assert [n.id for n in store.roots()] == ["a"]
    assert store.tree() == {"null": ["a"], "a": ["b"]}
    assert warning_lines(store) == [2]
    assert "a" in store.warnings[0].message
    assert store.project().source_entry_ids == ["a", "b"]
    store.close()


@pytest.mark.timeout(10)
def test_cycle_with_a_tail_and_a_normal_branch(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(
        path,
        msg("r", None, n=1),
        msg("c1", "c3", n=2),
        msg("c2", "c1", n=3),
        msg("c3", "c2", n=4),
        msg("t", "c2", n=5),  # hangs off the cycle
        msg("s", "r", n=6),
        msg("leaf", "t", n=7),
    )
    store = SessionStore.open(path)
    assert store.leaf_id == "leaf"
    path_ids = [n.id for n in store.path_to()]
    assert path_ids[-3:] == ["c2", "t", "leaf"]
    assert len(path_ids) == len(set(path_ids)) == 5
    assert path_ids[0] in {"c1", "c3"}
    assert len([w for w in store.warnings if w.line is not None]) == 1
    _assert_forest_covers_everything(store)
    store.close()


def _assert_forest_covers_everything(store: SessionStore) -> None:
    tree = store.tree()
    seen: list[str] = []
    stack = list(reversed(tree.get("null", [])))
    while stack:
        node_id = stack.pop()
        seen.append(node_id)
        assert len(seen) <= len(ids(store)), "tree() revisits entries"
        stack.extend(reversed(tree.get(node_id, [])))
    assert sorted(seen) == sorted(ids(store))
    for node_id in ids(store):
        chain = [n.id for n in store.path_to(node_id)]
        assert chain[-1] == node_id
        assert len(chain) == len(set(chain))
        assert chain[0] in tree["null"]


@pytest.mark.timeout(10)
def test_random_parent_graphs_never_hang_and_form_a_forest(tmp_path: Path) -> None:
    for seed in range(150):
        rng = random.Random(seed)
        count = rng.randint(1, 12)
        names = [f"e{i}" for i in range(count)]
        entries = []
        for i, name in enumerate(names):
            parent = rng.choice([None, "missing", name, *names])
            entries.append(msg(name, parent, n=i + 1))
        if rng.random() < 0.3:
            dup = rng.choice(names)
            entries.append(msg(dup, rng.choice([None, *names]), n=count + 1))
        path = tmp_path / f"s{seed}.jsonl"
        write_session(path, *entries)
        store = SessionStore.open(path, read_only=True)
        assert sorted(ids(store)) == sorted(names), seed
        _assert_forest_covers_everything(store)
        store.project()
        store.close()


def test_duplicate_ids_the_later_line_wins(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(
        path,
        msg("a", None, text="first", n=1),  # line 2
        msg("b", "a", "assistant", n=2),  # line 3
        msg("a", None, text="second", n=3),  # line 4
    )
    store = SessionStore.open(path)
    assert ids(store) == ["b", "a"]
    assert store.get("a")["message"]["content"] == "second"
    assert store.leaf_id == "a"
    assert warning_lines(store) == [4]
    assert "a" in store.warnings[0].message and "2" in store.warnings[0].message
    # b's parent id now resolves to the surviving "a".
    assert [n.id for n in store.path_to("b")] == ["a", "b"]
    store.close()


# ---------------------------------------------------------------------------- the file table


def test_empty_file_is_an_empty_session_and_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"")
    store = SessionStore.open(path)
    assert len(store) == 0 and store.leaf is None and store.warnings == []
    assert not store.read_only
    store.append_model_change("anthropic", "claude")
    assert path.read_bytes() == b""
    store.close()
    assert path.read_bytes() == b""


@pytest.mark.parametrize("newline", [True, False])
def test_header_only_file_is_an_empty_session(tmp_path: Path, newline: bool) -> None:
    path = tmp_path / "s.jsonl"
    data = jline(HEADER) if newline else jline(HEADER)[:-1]
    path.write_bytes(data)
    store = SessionStore.open(path)
    assert len(store) == 0 and store.leaf is None and store.tree() == {}
    assert store.warnings == []
    assert store.session_id == HEADER["id"]
    store.close()
    assert path.read_bytes() == data


def test_bom_crlf_and_blank_lines_load_normally(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    body = b"\n\r\n" + jline(HEADER) + b"\n" + jline(msg("a", None)) + b"\r\n\r\n"
    body += jline(msg("b", "a", "assistant", n=2))
    data = b"\xef\xbb\xbf" + body.replace(b"}\n", b"}\r\n")
    path.write_bytes(data)
    store = SessionStore.open(path)
    assert ids(store) == ["a", "b"]
    assert store.leaf_id == "b"
    assert store.warnings == []
    assert store.project().source_entry_ids == ["a", "b"]
    store.close()
    assert path.read_bytes() == data


@pytest.mark.parametrize(
    "first",
    [
        jline(msg("a", None)),
        b"[1, 2]\n",
        b'{"type": "session"}\n',  # no id
        b'{"type": "session", "id": 12}\n',
        b'"session"\n',
    ],
    ids=["entry", "array", "header-without-id", "header-numeric-id", "string"],
)
def test_non_session_file_is_refused_and_never_written(tmp_path: Path, first: bytes) -> None:
    path = tmp_path / "s.jsonl"
    data = first + jline(HEADER) + jline(msg("b", None))
    path.write_bytes(data)
    with pytest.raises(SessionFileError) as info:
        SessionStore.open(path)
    assert info.value.kind == "invalid"
    assert str(info.value).endswith(".")
    assert path.read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


def test_missing_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "nope.jsonl"
    with pytest.raises(SessionFileError) as info:
        SessionStore.open(path)
    assert info.value.kind == "missing"
    assert str(path) in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_directory_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "dir.jsonl"
    path.mkdir()
    with pytest.raises(SessionFileError) as info:
        SessionStore.open(path)
    assert info.value.kind == "unreadable"
    assert "directory" in str(info.value)
    assert [p.name for p in tmp_path.iterdir()] == ["dir.jsonl"]
    assert list(path.iterdir()) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read a chmod-000 file")
def test_unreadable_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(path, msg("a", None))
    path.chmod(0)
    try:
        with pytest.raises(SessionFileError) as info:
            SessionStore.open(path)
        assert info.value.kind == "unreadable"
    finally:
        path.chmod(0o600)


def test_open_or_create_on_a_missing_path_gives_a_new_session_there(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "mine.jsonl"
    store = SessionStore.open_or_create(path, "/my/project")
    assert store.path == path
    assert store.cwd == "/my/project"
    assert len(store) == 0 and store.leaf is None
    assert not path.exists()
    user = store.append_message({"role": "user", "content": "hello", "timestamp": 1})
    lines = path.read_bytes().splitlines()
    assert json.loads(lines[0])["cwd"] == "/my/project"
    assert json.loads(lines[0])["id"] == store.session_id
    assert json.loads(lines[1])["id"] == user
    store.close()


def test_open_or_create_on_an_existing_file_opens_it(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    original = write_session(path, msg("a", None))
    store = SessionStore.open_or_create(path, "/elsewhere")
    assert ids(store) == ["a"]
    assert store.cwd == "/proj"
    store.close()
    assert path.read_bytes() == original


def test_open_or_create_on_an_empty_file_uses_the_given_cwd(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"")
    store = SessionStore.open_or_create(path, "/my/project")
    assert store.cwd == "/my/project"
    store.append_message({"role": "user", "content": "hello", "timestamp": 1})
    store.close()
    assert json.loads(path.read_bytes().splitlines()[0])["cwd"] == "/my/project"


# ---------------------------------------------------------------------------- legacy files


def _v1_file(path: Path) -> bytes:
    header = {k: v for k, v in HEADER.items() if k != "version"}
    lines = [
        jline(header),
        jline({"type": "message", "timestamp": ts(1), "message": {"role": "user", "content": "q"}}),
        jline(
            {
                "type": "message",
                "timestamp": ts(2),
                "message": {"role": "assistant", "content": [{"type": "text", "text": "a"}]},
            }
        ),
        jline({"type": "thinking_level_change", "timestamp": ts(3), "thinkingLevel": "high"}),
    ]
    data = b"".join(lines)
    path.write_bytes(data)
    return data


def test_v1_file_migrates_in_memory_only(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    original = _v1_file(path)
    store = SessionStore.open(path)
    assert store.header["version"] == 3
    nodes = list(store.nodes())
    assert [n.type for n in nodes] == ["message", "message", "thinking_level_change"]
    assert [n.parent_id for n in nodes] == [None, nodes[0].id, nodes[1].id]
    assert all(isinstance(n.id, str) and n.id for n in nodes)
    assert store.leaf_id == nodes[-1].id
    assert store.project().thinking_level == "high"
    first_ids = [n.id for n in nodes]
    store.close()
    assert path.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.jsonl"]
    # The migrated ids are the same every time the file is read.
    again = SessionStore.open(path, read_only=True)
    assert ids(again) == first_ids
    again.close()


def test_v2_hook_message_role_becomes_custom_in_memory(tmp_path: Path) -> None:
    path = tmp_path / "v2.jsonl"
    header = {**HEADER, "version": 2}
    hook = {
        "type": "message",
        "id": "h",
        "parentId": "a",
        "timestamp": ts(2),
        "message": {"role": "hookMessage", "customType": "x", "content": "from a hook"},
    }
    data = jline(header) + jline(msg("a", None)) + jline(hook)
    path.write_bytes(data)
    store = SessionStore.open(path)
    assert ids(store) == ["a", "h"]
    assert store.node("h").role == "custom"
    assert store.get("h")["message"]["role"] == "custom"
    store.close()
    assert path.read_bytes() == data


def test_legacy_file_skips_bad_lines_with_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    header = {k: v for k, v in HEADER.items() if k != "version"}
    data = (
        jline(header)
        + jline(
            {"type": "message", "timestamp": ts(1), "message": {"role": "user", "content": "q"}}
        )
        + b"{oops\n"
        + b"[1]\n"
        + jline({"type": "custom", "timestamp": ts(2), "customType": "x"})
    )
    path.write_bytes(data)
    store = SessionStore.open(path)
    assert [n.type for n in store.nodes()] == ["message", "custom"]
    assert warning_lines(store) == [3, 4]
    store.close()
    assert path.read_bytes() == data
