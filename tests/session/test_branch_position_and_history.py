"""``SessionStore.branch_position`` (the status line's "branch i of n", computed without the
whole-tree children index) and ``recent_user_texts`` (the prompt history, newest first,
parsing only what it returns)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from pitui.session import SessionStore
from pitui.session.node import LEAF_MARKER_TYPE
from pitui.session.shapes import message_text


def reference_position(store: SessionStore, leaf_id: str) -> tuple[tuple[int, int] | None, int]:
    """What the status line computed before: tree_children along the path (index built)."""
    path = store.path_to(leaf_id)
    branch = None
    for node in reversed(path):
        parent = node.parent
        while parent is not None and parent.hidden:
            parent = parent.parent
        siblings = store.tree_children(parent.id if parent is not None else None)
        if len(siblings) > 1:
            index = next(i for i, s in enumerate(siblings) if s.id == node.id)
            branch = (index + 1, len(siblings))
            break
    return branch, len(store.children(leaf_id))


def entry(entry_id: str, parent: str | None, n: int, role: str = "user") -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}.000Z",
        "message": {"role": role, "content": [{"type": "text", "text": f"text {n % 7}"}]},
    }


def random_tree(write_session: Any, seed: int) -> Path:
    """A random tree with forks, equal and out-of-order timestamps and hidden leaf markers."""
    rng = random.Random(seed)
    entries: list[dict[str, Any]] = []
    for n in range(120):
        parent = rng.choice(entries)["id"] if entries and rng.random() < 0.9 else None
        if entries and rng.random() < 0.6:
            parent = entries[-1]["id"]
        e = entry(
            f"e{n:03d}", parent, rng.choice([n, n, 5, 200 - n]), rng.choice(["user", "assistant"])
        )
        if rng.random() < 0.05:
            e = {
                "type": "custom",
                "id": e["id"],
                "parentId": parent,
                "timestamp": e["timestamp"],
                "customType": LEAF_MARKER_TYPE,
            }
        entries.append(e)
    return write_session(entries, name=f"tree-{seed}.jsonl")  # type: ignore[no-any-return]


@pytest.mark.parametrize("seed", range(6))
def test_branch_position_matches_the_tree_order_everywhere(write_session: Any, seed: int) -> None:
    path = random_tree(write_session, seed)
    scanning = SessionStore.open(path, read_only=True)
    indexed = SessionStore.open(path, read_only=True)
    for node in list(indexed.nodes()):
        expected = reference_position(indexed, node.id)  # builds the index on `indexed`
        got = scanning.branch_position(node.id)
        assert (got.branch, got.leaf_children) == expected, node.id
        again = indexed.branch_position(node.id)
        assert (again.branch, again.leaf_children) == expected, node.id
    assert not scanning._children_built  # the scan never built the index


def test_branch_position_text_and_fixture(fixtures_dir: Path) -> None:
    store = SessionStore.open(fixtures_dir / "pi-v3-branches.jsonl", read_only=True)
    assert store.branch_position().text() == "branch 2 of 2"
    store.branch("2eb29f80")
    assert store.branch_position().text() == "branch 1 of 2"
    empty = SessionStore.in_memory("/tmp")
    assert empty.branch_position().text() == ""


def old_history(store: SessionStore, limit: int) -> list[str]:
    texts: list[str] = []
    for node in store.nodes():
        if node.type == "message" and node.role == "user":
            text = message_text(store.data(node).get("message"), "").strip()
            if text and (not texts or texts[-1] != text):
                texts.append(text)
    return texts[-limit:]


@pytest.mark.parametrize("limit", [1, 3, 10, 500])
def test_recent_user_texts_is_the_tail_of_the_history(write_session: Any, limit: int) -> None:
    store = SessionStore.open(random_tree(write_session, 7), read_only=True)
    assert store.recent_user_texts(limit) == old_history(store, limit)


def test_recent_user_texts_parses_only_what_it_returns(write_session: Any) -> None:
    entries = [entry(f"u{n:03d}", f"u{n - 1:03d}" if n else None, n) for n in range(100)]
    store = SessionStore.open(write_session(entries), read_only=True)
    assert store.recent_user_texts(3)
    parsed = [n for n in store.nodes() if n.data is not None]
    assert len(parsed) < 10
