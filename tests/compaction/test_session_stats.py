"""Session statistics over the tree and per branch (pitui.compaction.session_stats)."""

from __future__ import annotations

import sys
from pathlib import Path

from pitui.compaction.session_stats import describe_stats, session_stats
from pitui.session import SessionStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.sample_session import write_sample_session


def test_sample_session_counts(tmp_path: Path) -> None:
    with SessionStore.open(write_sample_session(tmp_path / "s.jsonl"), read_only=True) as store:
        stats = session_stats(store)
    assert stats.entries == 29
    assert len(stats.branches) == 3 and stats.forks == 2 and stats.roots == 1
    assert stats.messages["user"] == 6 and stats.messages["toolResult"] == 4
    active = stats.active_branch
    assert active is not None and active.tip_id == "e0000029"
    # 10 assistant replies on the tree + the compaction's summary call.
    assert stats.usage.requests == 11
    tree_cost = sum(b.usage.cost for b in stats.branches)
    assert stats.usage.cost < tree_cost  # shared prefixes are counted once for the tree
    assert round(stats.usage.cost, 6) == round(
        sum(0.0005 + t * 3e-6 + 0.0019 for t in (900, 1200, 1500, 1800, 2100, 2300, 2600, 0,
                                                 2900, 3100)) + 0.0165, 6
    )  # fmt: skip
    assert active.compactions == 1 and [c["id"] for c in stats.compactions] == ["e0000023"]
    assert stats.files == {"read": [], "modified": ["wordfreq.py"]}
    lines = describe_stats(stats)
    assert any(line.startswith("branches 3 (forks 2") for line in lines)
    assert any("• e0000029" in line for line in lines)


def test_hostile_numbers_count_as_zero() -> None:
    store = SessionStore.in_memory("/")
    for usage in (
        {"input": "9" * 400, "output": float("nan"), "cost": {"total": float("inf")}},
        {"input": -5, "output": True, "cost": "lots"},
        {"input": 10**30, "cost": {"total": 10**400}},
    ):
        store.append_message({"role": "assistant", "content": [], "usage": usage,
                              "stopReason": "stop", "timestamp": 1})  # fmt: skip
    stats = session_stats(store)
    assert stats.usage.cost == 0 and stats.usage.output == 0
    assert stats.usage.to_json()["requests"] == 3


def test_usage_entries_and_leaf_with_children() -> None:
    store = SessionStore.in_memory("/")
    a = store.append_message({"role": "user", "content": "q", "timestamp": 1})
    store.append_usage("summary", "p", "m", {"input": 5, "output": 1, "cost": {"total": 0.5}})
    store.branch(a)
    stats = session_stats(store)
    assert stats.usage.cost == 0.5
    assert stats.active_branch is not None and stats.active_branch.tip_id == a
    assert len(stats.branches) == 2
