"""What changed in the context between two nodes (pitui.compaction.context_diff)."""

from __future__ import annotations

from typing import Any

from pitui.compaction.context_diff import describe_diff, diff_contexts, diff_system
from pitui.session import SessionStore


def user(store: SessionStore, text: str) -> str:
    return store.append_message({"role": "user", "content": [{"type": "text", "text": text}],
                                 "timestamp": 1})  # fmt: skip


def assistant(store: SessionStore, text: str, model: str = "m1") -> str:
    return store.append_message(
        {"role": "assistant", "content": [{"type": "text", "text": text}], "api": "x",
         "provider": "p", "model": model, "usage": {}, "stopReason": "stop", "timestamp": 2}
    )  # fmt: skip


def system(store: SessionStore, sections: dict[str, Any], tools: list[str], removed=()) -> str:
    return store.append_message(
        {"role": "system", "content": "", "sections": sections,
         "toolsAdded": [{"name": t, "description": t, "parameters": {}} for t in tools],
         "toolsRemoved": [{"name": t} for t in removed], "timestamp": 0}
    )  # fmt: skip


def test_identical_contexts() -> None:
    store = SessionStore.in_memory("/")
    user(store, "hi")
    a = assistant(store, "hello")
    diff = diff_contexts(store, a, a)
    assert diff.identical and diff.unchanged == 2 and diff.token_change == 0
    assert "identical" in describe_diff(diff)[-1]


def test_added_messages_and_token_change() -> None:
    store = SessionStore.in_memory("/")
    first = user(store, "hi")
    assistant(store, "hello " * 10)
    last = user(store, "more")
    diff = diff_contexts(store, first, last)
    assert [m.entry_id for m in diff.added] == [diff.added[0].entry_id, last]
    assert diff.unchanged == 1 and not diff.dropped
    assert diff.token_change == sum(m.tokens for m in diff.added) > 0
    back = diff_contexts(store, last, first)
    assert len(back.dropped) == 2 and back.token_change == -diff.token_change


def test_compaction_replaces_older_messages() -> None:
    store = SessionStore.in_memory("/")
    old = user(store, "old question")
    old_reply = assistant(store, "old answer")
    kept = user(store, "kept question")
    before = assistant(store, "kept answer")
    compaction = store.append_compaction("summary of the old part", kept, 1000)
    diff = diff_contexts(store, before, compaction)
    assert {m.entry_id for m in diff.compacted} == {old, old_reply}
    assert all(m.by == compaction for m in diff.compacted)
    assert [m.role for m in diff.added] == ["compactionSummary"]
    assert diff.unchanged == 2  # the kept range
    text = "\n".join(describe_diff(diff))
    assert f"replaced by compaction {compaction}" in text
    # The other way: the compacted messages come back in full.
    back = diff_contexts(store, compaction, before)
    assert {m.entry_id for m in back.added if m.kind == "uncompacted"} == {old, old_reply}


def test_branch_summary_replaces_the_abandoned_branch() -> None:
    store = SessionStore.in_memory("/")
    user(store, "start")
    fork = assistant(store, "ok")
    abandoned_q = user(store, "try something else")
    abandoned = assistant(store, "tried")
    summary = store.branch_with_summary(fork, "they tried something else")
    diff = diff_contexts(store, abandoned, summary)
    assert {m.entry_id for m in diff.summarized} == {abandoned_q, abandoned}
    assert all(m.by == summary for m in diff.summarized)
    assert [m.role for m in diff.added] == ["branchSummary"]


def test_context_edits_omit_replace_and_restore() -> None:
    store = SessionStore.in_memory("/")
    user(store, "q")
    failed = assistant(store, "a long failed attempt " * 20)
    before = user(store, "again")
    omit = store.append_context_edit(failed, None)
    diff = diff_contexts(store, before, omit)
    assert [(m.entry_id, m.kind, m.by) for m in diff.edited] == [(failed, "omitted", omit)]
    assert diff.token_change < 0
    back = diff_contexts(store, omit, before)
    assert [(m.entry_id, m.kind) for m in back.edited] == [(failed, "restored")]
    store.branch(before)
    replace = store.append_context_edit(failed, {"content": "short"})
    diff = diff_contexts(store, before, replace)
    [edited] = diff.edited
    assert (edited.kind, edited.by) == ("replaced", replace)
    assert edited.tokens_after is not None and edited.tokens_after < edited.tokens


def test_system_prompt_tools_model_and_thinking_changes() -> None:
    store = SessionStore.in_memory("/")
    system(store, {"preamble": "be good", "rules": "r1"}, ["read", "bash"])
    a = user(store, "q")
    system(store, {"rules": "r2", "skills": "s"}, ["edit"], removed=["bash"])
    store.append_thinking_level_change("high")
    b = assistant(store, "x", model="m2")
    diff = diff_contexts(store, a, b)
    assert diff.system.sections_added == ["skills"]
    assert diff.system.sections_changed == ["rules"]
    assert diff.system.tools_added == ["edit"] and diff.system.tools_removed == ["bash"]
    assert diff.before.thinking_level == "off" and diff.after.thinking_level == "high"
    assert diff.after.model == {"provider": "p", "modelId": "m2"}
    text = "\n".join(describe_diff(diff))
    assert "sections +skills ~rules" in text and "tools +edit −bash" in text
    assert "thinking off → high" in text
    assert not diff_system(None, None).changed


def test_diff_against_no_leaf() -> None:
    store = SessionStore.in_memory("/")
    a = user(store, "q")
    diff = diff_contexts(store, None, a)
    assert [m.entry_id for m in diff.added] == [a] and diff.before.messages == 0
