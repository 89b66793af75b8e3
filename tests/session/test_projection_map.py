"""The projection of every node at once equals the store's own projection at each node."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from support.fixtures import FIXTURES_DIR as DATA
from support.sample_session import write_sample_session

from pitui.session import SessionStore
from pitui.session.projection_map import build_projection_map

ROOT = Path(__file__).resolve().parents[2]


def assert_matches_store(store: SessionStore) -> None:
    pmap = build_projection_map(store)
    assert len(pmap.nodes) == len(store)
    for i, node in enumerate(pmap.nodes):
        projection = store.project(node.id)
        variants = pmap.messages_at(i)
        assert [pmap.messages[v] for v in variants] == projection.messages, node.id
        assert [pmap.source_of(v) for v in variants] == projection.source_entry_ids, node.id
        assert pmap.model[i] == projection.model
        assert pmap.thinking[i] == projection.thinking_level
        system = pmap.systems[pmap.system[i]] if pmap.system[i] >= 0 else None
        assert system == projection.system_message, node.id
        edited = {pmap.source_of(v): pmap.edit_of(v) for v in variants if pmap.edit_of(v)}
        assert edited == {k: v for k, v in projection.edits.items() if k in edited}


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.jsonl")))
def test_pi_sessions(name: str) -> None:
    with SessionStore.open(DATA / name, read_only=True) as store:
        assert_matches_store(store)


def test_sample_session(tmp_path: Path) -> None:
    with SessionStore.open(write_sample_session(tmp_path / "s.jsonl"), read_only=True) as store:
        assert_matches_store(store)
        pmap = build_projection_map(store)
        # Only roots, compactions, context_edits and edit targets are computed in full.
        assert pmap.computed <= 4


def test_generated_session_with_forks_and_compactions(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from generate import generate  # type: ignore[import-not-found]

    path = tmp_path / "g.jsonl"
    generate(1500, 3, path)
    with SessionStore.open(path, read_only=True) as store:
        assert_matches_store(store)


def test_edit_that_targets_a_later_entry_and_hidden_markers(tmp_path: Path) -> None:
    """A hostile order (the edit comes before its target) and a pitui.leaf marker in a chain."""
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z",
         "cwd": "/"},
        {"type": "message", "id": "a", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
         "message": {"role": "user", "content": "one", "timestamp": 1}},
        {"type": "context_edit", "id": "e", "parentId": "a",
         "timestamp": "2026-01-01T00:00:02.000Z", "targetId": "c",
         "replacement": {"content": "edited before it existed"}},
        {"type": "custom", "id": "m", "parentId": "e", "timestamp": "2026-01-01T00:00:03.000Z",
         "customType": "pitui.leaf"},
        {"type": "message", "id": "c", "parentId": "m", "timestamp": "2026-01-01T00:00:04.000Z",
         "message": {"role": "user", "content": "three", "timestamp": 3}},
        {"type": "message", "id": "d", "parentId": "c", "timestamp": "2026-01-01T00:00:05.000Z",
         "message": {"role": "user", "content": "four", "timestamp": 4}},
    ]  # fmt: skip
    path = tmp_path / "h.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with SessionStore.open(path, read_only=True) as store:
        assert_matches_store(store)
        assert store.project("d").messages[1]["content"] == "edited before it existed"


def test_only_the_given_nodes(tmp_path: Path) -> None:
    shutil.copy(DATA / "pi-v3-branch-summary.jsonl", tmp_path / "b.jsonl")
    with SessionStore.open(tmp_path / "b.jsonl", read_only=True) as store:
        path = {n.id for n in store.path_to()}
        pmap = build_projection_map(store, path)
        assert {n.id for n in pmap.nodes} == path
        leaf = pmap.index[store.leaf_id or ""]
        assert [pmap.source_of(v) for v in pmap.messages_at(leaf)] == (
            store.project().source_entry_ids
        )
