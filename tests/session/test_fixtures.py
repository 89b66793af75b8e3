"""Real pi session files against pi 1.6's own projections (``fixtures/expected``).

The v3 files are compared exactly with what pi 1.6 computed. The two v1 files get random ids
from pi when migrated, so they are compared structurally with pi's reference numbers
(pi-reference §10) and with their own raw lines.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from support.fixtures import expected_files

from pitui.session import SessionStore

EXPECTED_NAMES = [p.name for p in expected_files("*.project.json")]

COMPARED_KEYS = (
    "leafId",
    "model",
    "thinkingLevel",
    "messages",
    "sourceEntryIds",
    "pathIds",
    "children",
    "labels",
    "sessionName",
    "contextEntryIds",
    "currentSystemMessage",
    "systemPromptText",
    "currentToolNames",
)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _actual(store: SessionStore, leaf_id: str) -> dict[str, Any]:
    projection = store.project(leaf_id)
    return {
        "leafId": projection.leaf_id,
        "model": projection.model,
        "thinkingLevel": projection.thinking_level,
        "messages": projection.messages,
        "sourceEntryIds": projection.source_entry_ids,
        "pathIds": [n.id for n in store.path_to(leaf_id)],
        "children": store.tree(),
        "labels": store.labels,
        "sessionName": store.session_name,
        "contextEntryIds": projection.context_entry_ids,
        "currentSystemMessage": projection.system_message,
        "systemPromptText": projection.system_prompt_text,
        "currentToolNames": projection.tool_names,
    }


@pytest.mark.parametrize("expected_name", EXPECTED_NAMES)
def test_projection_matches_pi(fixtures_dir: Path, expected_name: str) -> None:
    fixture, leaf = expected_name.removesuffix(".project.json").rsplit(".", 1)
    expected = json.loads((fixtures_dir / "expected" / expected_name).read_text())
    path = fixtures_dir / f"{fixture}.jsonl"
    before = _digest(path)
    store = SessionStore.open(path, read_only=True)
    try:
        assert store.leaf_id == expected["defaultLeafId"]
        leaf_id = store.leaf_id if leaf == "default" else leaf
        assert leaf_id is not None
        actual = _actual(store, leaf_id)
        for key in COMPARED_KEYS:
            assert actual[key] == expected[key], f"{expected_name}: {key} differs from pi 1.6"
        header = expected["header"]
        assert store.session_id == header["id"]
        assert store.header["version"] == header["version"]
        assert store.cwd == header["cwd"]
        assert store.parent_session == header["parentSession"]
        assert len(store) == expected["entryCount"]
        assert store.warnings == []
    finally:
        store.close()
    assert _digest(path) == before, "opening a fixture must not change it"


# --------------------------------------------------------------------------- v1 files


def _raw_entries(path: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["type"] == "session"
    return lines[1:]


def _raw_messages(raw: list[dict[str, Any]], start: int, stop: int) -> list[dict[str, Any]]:
    return [e["message"] for e in raw[start:stop] if e["type"] == "message"]


@pytest.fixture(scope="module")
def large(fixtures_dir: Path) -> Any:
    path = fixtures_dir / "pi-v1-large-session.jsonl"
    store = SessionStore.open(path, read_only=True)
    yield store, _raw_entries(path)
    store.close()


@pytest.fixture(scope="module")
def before_compaction(fixtures_dir: Path) -> Any:
    path = fixtures_dir / "pi-v1-before-compaction.jsonl"
    store = SessionStore.open(path, read_only=True)
    yield store, _raw_entries(path)
    store.close()


def _check_migrated_ids(store: SessionStore, path: Path) -> None:
    nodes = list(store.nodes())
    entry_ids = [n.id for n in nodes]
    assert len(set(entry_ids)) == len(entry_ids), "migrated ids must be unique"
    assert [n.parent_id for n in nodes] == [None, *entry_ids[:-1]], "v1 migrates to one chain"
    assert [n.id for n in store.roots()] == [entry_ids[0]]
    again = SessionStore.open(path, read_only=True)
    try:
        assert [n.id for n in again.nodes()] == entry_ids, "migrated ids must be deterministic"
    finally:
        again.close()


def test_large_session_reference_numbers(large: Any) -> None:
    store, _ = large
    assert store.header["version"] == 3
    assert len(store) == 1018
    types = Counter(n.type for n in store.nodes())
    assert types == {"message": 914, "thinking_level_change": 103, "model_change": 1}
    assert list(store.nodes())[2].type == "model_change"
    projection = store.project()
    assert len(projection.messages) == 914
    assert projection.model == {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}
    assert projection.thinking_level == "off"
    assert store.leaf_id == list(store.nodes())[-1].id


def test_large_session_messages_match_raw_lines(large: Any) -> None:
    store, raw = large
    projection = store.project()
    expected = _raw_messages(raw, 0, len(raw))
    assert [m["role"] for m in projection.messages] == [m["role"] for m in expected]
    assert projection.messages == expected
    roles = Counter(m["role"] for m in projection.messages)
    assert roles == {"user": 88, "assistant": 453, "toolResult": 373}


def test_large_session_migrated_ids(large: Any, fixtures_dir: Path) -> None:
    _check_migrated_ids(large[0], fixtures_dir / "pi-v1-large-session.jsonl")


def test_before_compaction_structure(before_compaction: Any) -> None:
    store, raw = before_compaction
    nodes = list(store.nodes())
    assert len(nodes) == len(raw) == 1002
    index = {n.id: i for i, n in enumerate(nodes)}
    compactions = [i for i, n in enumerate(nodes) if n.type == "compaction"]
    assert compactions == [358, 627]
    first_kept = [index[store.get(nodes[i].id)["firstKeptEntryId"]] for i in compactions]
    assert first_kept == [292, 550]
    for i in compactions:
        assert "firstKeptEntryIndex" not in store.get(nodes[i].id)
    assert nodes[-1].type == "thinking_level_change"


def test_before_compaction_default_leaf(before_compaction: Any) -> None:
    store, raw = before_compaction
    projection = store.project()
    assert len(projection.messages) == 446
    assert projection.model == {"provider": "anthropic", "modelId": "claude-opus-4-5"}
    assert projection.thinking_level == "off"
    head = projection.messages[0]
    assert head["role"] == "compactionSummary"
    assert head["summary"] == raw[627]["summary"]
    assert head["tokensBefore"] == 185014
    assert projection.messages[1:] == [
        *_raw_messages(raw, 550, 627),
        *_raw_messages(raw, 628, len(raw)),
    ]


def test_before_compaction_leaf_before_second_compaction(before_compaction: Any) -> None:
    store, raw = before_compaction
    leaf = list(store.nodes())[626]
    projection = store.project(leaf.id)
    assert len(projection.messages) == 335
    assert projection.messages[0]["role"] == "compactionSummary"
    assert projection.messages[0]["summary"] == raw[358]["summary"]
    assert projection.messages[0]["tokensBefore"] == 175004
    assert projection.messages[1:] == [
        *_raw_messages(raw, 292, 358),
        *_raw_messages(raw, 359, 627),
    ]


def test_before_compaction_leaf_before_any_compaction(before_compaction: Any) -> None:
    store, raw = before_compaction
    leaf = list(store.nodes())[357]
    projection = store.project(leaf.id)
    assert len(projection.messages) == 354
    assert projection.messages == _raw_messages(raw, 0, 358)
    assert all(m["role"] != "compactionSummary" for m in projection.messages)


def test_before_compaction_migrated_ids(before_compaction: Any, fixtures_dir: Path) -> None:
    _check_migrated_ids(before_compaction[0], fixtures_dir / "pi-v1-before-compaction.jsonl")


@pytest.mark.parametrize("name", ["pi-v1-large-session.jsonl", "pi-v1-before-compaction.jsonl"])
def test_opening_v1_fixture_read_only_leaves_it_unchanged(fixtures_dir: Path, name: str) -> None:
    path = fixtures_dir / name
    before = _digest(path)
    store = SessionStore.open(path, read_only=True)
    store.project()
    store.close()
    assert _digest(path) == before
    assert not path.with_name(name + ".bak").exists()
