"""Projection edge cases on long paths: kept ranges far back, leaf moves across compactions."""

from __future__ import annotations

from pathlib import Path

from pitui.session import SessionStore


def user(text: str) -> dict[str, object]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def build_chain(store: SessionStore, count: int) -> list[str]:
    return [store.append_message(user(f"m{i}")) for i in range(count)]


def test_kept_range_longer_than_a_short_walk_is_kept(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, str(tmp_path))
    ids = build_chain(store, 3000)
    store.append_compaction("summary", ids[10], 1234)
    after = store.append_message(user("after"))
    projection = store.project()
    texts = [m["content"][0]["text"] for m in projection.messages if m["role"] == "user"]
    assert texts[0] == "m10" and texts[-2] == "m2999" and texts[-1] == "after"
    assert len(texts) == 2990 + 1
    path = store.path
    store.close()
    # The same answer from a cold open (depths unknown until needed).
    reopened = SessionStore.open(path, read_only=True)
    assert reopened.project().source_entry_ids == projection.source_entry_ids
    assert reopened.leaf_id == after


def test_first_kept_entry_on_another_branch_keeps_nothing(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, str(tmp_path))
    ids = build_chain(store, 2500)
    store.branch(ids[5])
    side = store.append_message(user("side"))
    store.branch(ids[-1])
    store.append_compaction("summary", side, 99)
    projection = store.project()
    assert [m["role"] for m in projection.messages] == ["compactionSummary"]


def test_leaf_moves_give_the_same_projection_as_a_fresh_open(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, str(tmp_path))
    ids = build_chain(store, 50)
    store.append_compaction("first", ids[40], 500)
    tail = build_chain(store, 5)
    store.branch(ids[20])
    side = build_chain(store, 3)
    path = store.path
    expected = {leaf: store.project(leaf).source_entry_ids for leaf in (*ids, *tail, *side)}
    store.close()
    fresh = SessionStore.open(path, read_only=True)
    for leaf, sources in expected.items():
        assert fresh.project(leaf).source_entry_ids == sources
