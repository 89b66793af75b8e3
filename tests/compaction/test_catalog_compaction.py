"""pi's compaction behaviour catalog (pi-reference.md §8 items 55–70), adapted to pi 1.6, plus
the 1.6 compaction rules (pi-1.6-vs-reference.md items 13–16, pi-1.6-semantics.md §4, §6, §8).

Stores are built in memory; no LLM is involved.

Skipped catalog items:
- 65: ``compact()`` of the large fixture needs a real LLM; the summary flow through the scripted
  server is covered by tests/agent/test_catalog_agent.py.
- 69/70 are adapted: pi 1.6 sends the session thinking level (not a fixed ``"high"``) and only
  when the model reasons and the level is not ``off``; checked on the request body every
  summary request of an OpenAI-compatible server gets.
"""

from __future__ import annotations

from typing import Any

import pytest
from support.fixtures import fixture_path

from pitui.compaction.cut_point import CutPoint, find_cut_point
from pitui.compaction.prepare import (
    ALREADY_COMPACTED,
    NOTHING_TO_SUMMARIZE,
    CompactionPreparation,
    prepare_compaction,
)
from pitui.compaction.projected import ProjectedEntry, projected_entries
from pitui.compaction.serialize import serialize_conversation
from pitui.compaction.settings import (
    CompactionSettings,
    SettingsError,
    resolve_settings,
    should_compact,
)
from pitui.compaction.tokens import (
    assistant_usage,
    calculate_context_tokens,
    context_estimate,
    last_assistant_usage_tokens,
)
from pitui.config.settings import deep_merge
from pitui.llm.apis import openai_completions
from pitui.llm.models import ModelInfo, ModelRef
from pitui.llm.reply import ReplyBuilder
from pitui.llm.routes import route
from pitui.llm.stream import CallOptions, build_call
from pitui.session import SessionStore

LARGE = fixture_path("pi-v1-large-session.jsonl")

Message = dict[str, Any]


# --- builders -------------------------------------------------------------------------------


def usage(
    input: int = 0,
    output: int = 0,
    cache_read: int = 0,
    cache_write: int = 0,
    total: int | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "input": input,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
    }
    if total is not None:
        out["totalTokens"] = total
    return out


def user(text: str) -> Message:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def assistant(
    text: str = "ok",
    *,
    use: dict[str, Any] | None = None,
    stop: str = "stop",
    calls: list[tuple[str, dict[str, Any]]] | None = None,
) -> Message:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for i, (name, args) in enumerate(calls or []):
        content.append({"type": "toolCall", "id": f"call_{i}", "name": name, "arguments": args})
    message: Message = {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": use if use is not None else usage(10, 5),
        "stopReason": "toolUse" if calls else stop,
        "timestamp": 1,
    }
    if stop == "error":
        message["errorMessage"] = "529 overloaded"
    return message


def tool_result(text: str, call_id: str = "call_0", name: str = "read") -> Message:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 1,
    }


def tokens(n: int, fill: str = "x") -> str:
    """A text worth exactly ``n`` chars/4 tokens."""
    return fill * (4 * n)


def store_with(*messages: Message) -> tuple[SessionStore, list[str]]:
    store = SessionStore.in_memory("/work/project")
    return store, [store.append_message(m) for m in messages]


def entries_of(store: SessionStore) -> list[ProjectedEntry]:
    return projected_entries(store, store.project())


def cut(store: SessionStore, keep: int, start: int = 0) -> CutPoint:
    entries = entries_of(store)
    return find_cut_point(entries, start, len(entries), keep)


def prepared(store: SessionStore, keep: int) -> CompactionPreparation:
    plan = prepare_compaction(store, None, CompactionSettings(True, 16384, keep))
    assert isinstance(plan, CompactionPreparation), plan
    return plan


def texts(messages: list[Message]) -> list[str]:
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            out.append("".join(b.get("text", "") for b in content if b.get("type") == "text"))
        else:
            out.append(str(content))
    return out


# --- 55–57: token accounting and the threshold ------------------------------------------------


def test_55_calculate_context_tokens_prefers_total_then_sums() -> None:
    assert calculate_context_tokens(usage(1000, 500, 200, 100, total=1800)) == 1800
    assert calculate_context_tokens(usage(0, 0, 0, 0, total=0)) == 0
    # totalTokens 0 or missing falls back to the sum (falsy-or).
    assert calculate_context_tokens(usage(1000, 500, 200, 100, total=0)) == 1800
    assert calculate_context_tokens(usage(1000, 500, 200, 100)) == 1800


def test_56_last_usage_skips_aborted_error_and_zero_usage_assistants() -> None:
    first = assistant("one", use=usage(100, 10))
    second = assistant("two", use=usage(200, 10))
    assert last_assistant_usage_tokens([user("q"), first, user("q"), second]) == 210
    assert assistant_usage(second) == second["usage"]
    aborted = assistant("three", use=usage(300, 10), stop="aborted")
    assert last_assistant_usage_tokens([user("q"), first, user("q"), aborted]) == 110
    errored = assistant("", use=usage(300, 10), stop="error")
    zero = assistant("four", use=usage(0, 0, total=0))
    assert last_assistant_usage_tokens([first, errored, zero]) == 110
    assert assistant_usage(aborted) is None and assistant_usage(errored) is None
    assert assistant_usage(zero) is None
    assert last_assistant_usage_tokens([user("only a question")]) is None
    assert last_assistant_usage_tokens([]) is None
    # The estimate: last trusted usage plus chars/4 of what follows it.
    estimate = context_estimate([first, errored, user(tokens(7))])
    assert estimate["lastUsageIndex"] == 0 and estimate["tokens"] == 110 + 7
    none = context_estimate([user(tokens(5)), errored])
    assert none["lastUsageIndex"] is None and none["tokens"] == 5


def test_57_should_compact_is_strict_and_respects_enabled() -> None:
    settings = CompactionSettings(True, 10000, 20000)
    assert should_compact(95000, 100000, settings) is True
    assert should_compact(89000, 100000, settings) is False
    assert should_compact(90000, 100000, settings) is False  # strictly greater
    assert should_compact(90001, 100000, settings) is True
    assert should_compact(95000, 100000, CompactionSettings(False, 10000, 20000)) is False


# --- 58–61: the cut point -------------------------------------------------------------------


def test_58_cut_on_alternating_messages_lands_on_user_or_assistant() -> None:
    messages = [user(tokens(250)) if i % 2 == 0 else assistant(tokens(250, "y")) for i in range(20)]
    store, ids = store_with(*messages)
    entries = entries_of(store)
    point = cut(store, 2500)
    assert entries[point.first_kept_index].node.role in ("user", "assistant")
    # 10 entries of 250 tokens reach the budget exactly at index 10, a user message.
    assert point == CutPoint(10, -1, False)
    assert entries[point.first_kept_index].id == ids[10]


def test_59_single_assistant_keeps_index_0() -> None:
    store, _ = store_with(assistant("just one reply"))
    point = cut(store, 1000)
    assert point.first_kept_index == 0 and point.is_split_turn is False


def test_60_big_budget_keeps_everything() -> None:
    store, _ = store_with(user("a"), assistant("b"), user("c"), assistant("d"))
    assert cut(store, 50000).first_kept_index == 0


def test_61_cut_on_assistant_is_a_split_turn_from_its_user_message() -> None:
    store, ids = store_with(
        user("first"),
        assistant("first answer"),
        user("second"),
        assistant("", calls=[("read", {"path": "a.py"})]),
        tool_result(tokens(50)),
        assistant(tokens(400)),
    )
    point = cut(store, 300)
    assert point == CutPoint(5, 2, True)
    plan = prepared(store, 300)
    assert plan.first_kept_entry_id == ids[5] and plan.turn_start_entry_id == ids[2]
    assert plan.messages_to_summarize_ids == ids[:2]
    assert plan.turn_prefix_ids == ids[2:5]


def test_cut_never_lands_on_a_tool_result() -> None:
    store, ids = store_with(
        user("go"),
        assistant("", calls=[("read", {"path": "a.py"})]),
        tool_result(tokens(1000)),
        assistant("done"),
    )
    entries = entries_of(store)
    point = cut(store, 500)
    # The budget is reached on the tool result; the next cut point after it is kept.
    assert entries[point.first_kept_index].id == ids[3]
    assert point.is_split_turn and entries[point.turn_start_index].id == ids[0]


def test_budget_reached_after_the_last_cut_point_cuts_at_the_last_one() -> None:
    """pi 1.6: when no cut point follows the entry that fills the budget, use the last one."""
    store, ids = store_with(
        user("go"),
        assistant("", calls=[("read", {"path": "big.txt"})]),
        tool_result(tokens(5000)),
    )
    point = cut(store, 1000)
    entries = entries_of(store)
    assert entries[point.first_kept_index].id == ids[1]
    assert point.is_split_turn and entries[point.turn_start_index].id == ids[0]


def test_branch_summary_is_counted_and_not_pulled_into_the_kept_side() -> None:
    store, (u0, a0) = store_with(user(tokens(100)), assistant(tokens(100)))
    summary = store.branch_with_summary(a0, tokens(100, "s"))
    u1 = store.append_message(user(tokens(100)))
    store.append_message(assistant(tokens(100)))
    plan = prepared(store, 200)
    # pi 1.6 stops the pull-back at entries that project messages (0.58 pulled it in).
    assert plan.first_kept_entry_id == u1 and not plan.is_split_turn
    assert plan.messages_to_summarize_ids == [u0, a0, summary]
    # The summary's tokens count in the budget walk (0.58 counted only message entries).
    wider = prepared(store, 250)
    assert wider.first_kept_entry_id == summary and not wider.is_split_turn
    assert wider.messages_to_summarize_ids == [u0, a0]


def test_empty_branch_summary_is_pulled_into_the_kept_side() -> None:
    store, (_, a0) = store_with(user(tokens(100)), assistant(tokens(100)))
    empty = store.branch_with_summary(a0, "")
    u1 = store.append_message(user(tokens(100)))
    store.append_message(assistant(tokens(100)))
    plan = prepared(store, 200)
    assert plan.first_kept_entry_id == empty
    assert plan.kept_context_entry_ids[:2] == [empty, u1]


def test_cut_on_a_custom_message_is_not_a_split_turn() -> None:
    store, (u0, a0) = store_with(user(tokens(100)), assistant(tokens(100)))
    custom = store.append_custom_message("note", tokens(100, "c"))
    store.append_message(assistant(tokens(100)))
    plan = prepared(store, 200)
    assert plan.first_kept_entry_id == custom and not plan.is_split_turn
    assert plan.messages_to_summarize_ids == [u0, a0]


# --- 62–64: projection with compactions, model and thinking -----------------------------------


def test_62_projection_with_compactions() -> None:
    store, ids = store_with(user("first"), assistant("r1"), user("second"), assistant("r2"))
    projection = store.project()
    assert len(projection.messages) == 4 and projection.thinking_level == "off"
    assert projection.model == {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}

    store.append_compaction("Summary of the start.", ids[2], 1000)
    store.append_message(user("third"))
    store.append_message(assistant("r3"))
    messages = store.project().messages
    assert len(messages) == 5
    assert messages[0]["role"] == "compactionSummary"
    assert "Summary of the start." in messages[0]["summary"]
    assert texts(messages[1:]) == ["second", "r2", "third", "r3"]

    # A second compaction wins: only its summary and its kept range are used.
    last = store.leaf_id
    assert last is not None
    store.append_compaction("Second summary.", last, 2000)
    store.append_message(user("fourth"))
    store.append_message(assistant("r4"))
    messages = store.project().messages
    assert [m["role"] for m in messages].count("compactionSummary") == 1
    assert messages[0]["summary"] == "Second summary."
    assert texts(messages[1:]) == ["r3", "fourth", "r4"]


def test_62_compaction_keeping_the_first_entry_keeps_everything() -> None:
    store, ids = store_with(user("first"), assistant("r1"), user("second"), assistant("r2"))
    store.append_compaction("Everything kept.", ids[0], 1000)
    messages = store.project().messages
    assert len(messages) == 5
    assert messages[0]["role"] == "compactionSummary"
    assert texts(messages[1:]) == ["first", "r1", "second", "r2"]


def test_63_model_from_the_assistant_thinking_from_the_change() -> None:
    store = SessionStore.in_memory("/work/project")
    store.append_message(user("hi"))
    store.append_model_change("openai", "gpt-4")
    store.append_message(assistant("hello"))
    store.append_thinking_level_change("high")
    projection = store.project()
    assert projection.model == {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}
    assert projection.thinking_level == "high"
    assert len(projection.messages) == 2


def test_64_large_session_cut_and_projection() -> None:
    store = SessionStore.open(LARGE, read_only=True)
    try:
        assert len(store) > 100
        assert sum(1 for n in store.path_to() if n.type == "message") > 100
        entries = entries_of(store)
        point = find_cut_point(entries, 0, len(entries), 20000)
        assert entries[point.first_kept_index].node.role in ("user", "assistant")
        projection = store.project()
        assert len(projection.messages) > 100 and projection.model is not None
    finally:
        store.close()


# --- 66–68: serialization -------------------------------------------------------------------


def test_66_long_tool_result_is_cut_at_2000_with_the_marker() -> None:
    out = serialize_conversation([tool_result("x" * 5000)])
    assert out.startswith("[Tool result]: ")
    assert "[... 3000 more characters truncated]" in out
    assert "x" * 2000 in out and "x" * 2001 not in out
    assert out == "[Tool result]: " + "x" * 2000 + "\n\n[... 3000 more characters truncated]"


def test_67_tool_result_under_the_limit_is_untouched() -> None:
    content = "y" * 1500
    out = serialize_conversation([tool_result(content)])
    assert out == "[Tool result]: " + content
    assert "truncated" not in out


def test_68_user_and_assistant_text_is_never_truncated() -> None:
    long_user, long_reply = "u" * 5000, "a" * 5000
    out = serialize_conversation([user(long_user), assistant(long_reply)])
    assert out == f"[User]: {long_user}\n\n[Assistant]: {long_reply}"
    assert "truncated" not in out


def test_tool_result_cut_never_splits_a_surrogate_pair() -> None:
    content = "x" * 1999 + "\U0001f600" + "y" * 100  # 2101 UTF-16 units
    out = serialize_conversation([tool_result(content)])
    assert out == "[Tool result]: " + "x" * 1999 + "\n\n[... 101 more characters truncated]"


def test_empty_text_block_still_gives_an_assistant_part_and_empty_user_is_skipped() -> None:
    out = serialize_conversation([user(""), assistant("")])
    assert out == ""  # no text block at all: nothing
    reply = assistant("")
    reply["content"] = [{"type": "text", "text": ""}]
    assert serialize_conversation([user(""), reply]) == "[Assistant]: "


def test_serialization_of_tool_calls_and_thinking() -> None:
    reply = assistant("Reading.", calls=[("read", {"path": "a.py", "limit": 10})])
    reply["content"].insert(0, {"type": "thinking", "thinking": "secret plan"})
    out = serialize_conversation([reply])
    assert out == '[Assistant]: Reading.\n\n[Assistant tool calls]: read(path="a.py", limit=10)'
    assert "secret plan" not in out  # pi 1.6 omits thinking


# --- 69–70 (adapted to 1.6): reasoning effort in summary requests ----------------------------


@pytest.mark.parametrize(
    ("reasons", "level", "expected"),
    [
        (True, "high", "high"),
        (True, "low", "low"),
        (True, "off", None),
        (False, "high", None),
        (False, "off", None),
    ],
)
def test_69_70_reasoning_only_for_reasoning_models_with_thinking_on(
    reasons: bool, level: str, expected: str | None
) -> None:
    info = ModelInfo(ModelRef("openai", "test-reasoner"), 8192, 1024, supports_reasoning=reasons)
    # An OpenAI-compatible server (chat completions): the effort is sent as it is.
    options = CallOptions(api_base="http://127.0.0.1:9/v1", api_key="sk-test", thinking=level)
    builder = ReplyBuilder(info, route(info, options.api_base))
    messages = [{"role": "user", "content": "summarize"}]
    request = openai_completions.request(build_call(info, messages, [], options, builder))
    assert request.headers["authorization"] == "Bearer sk-test"
    kwargs = request.body
    if expected is None:
        assert "reasoning_effort" not in kwargs and "reasoning" not in kwargs
    else:
        assert kwargs["reasoning_effort"] == expected


# --- pi 1.6 preparation rules ---------------------------------------------------------------


def test_repeated_compaction_resummarizes_the_previous_kept_range() -> None:
    store, ids = store_with(
        user(tokens(100)),
        assistant(tokens(100)),
        user("kept question " + tokens(100)),
        assistant("kept answer " + tokens(100)),
    )
    store.append_compaction("First summary.", ids[2], 500)
    u3 = store.append_message(user(tokens(100)))
    a3 = store.append_message(assistant(tokens(100)))
    plan = prepared(store, 200)
    # #2608: the range the first compaction kept is summarized now, not lost.
    assert plan.messages_to_summarize_ids == [ids[2], ids[3]]
    assert plan.previous_summary == "First summary."
    assert plan.first_kept_entry_id == u3 and not plan.is_split_turn
    assert plan.kept_context_entry_ids == [u3, a3]
    assert ids[0] not in plan.messages_to_summarize_ids


def test_retain_none_compaction_keeps_nothing_and_next_starts_after_it() -> None:
    store, ids = store_with(user("old question"), assistant("old answer"))
    compaction = store.append_compaction("All of it.", None, 123)
    assert store.get(compaction)["firstKeptEntryId"] == compaction
    assert [m["role"] for m in store.project().messages] == ["compactionSummary"]
    u3 = store.append_message(user(tokens(100)))
    a3 = store.append_message(assistant(tokens(100)))
    u4 = store.append_message(user(tokens(100)))
    store.append_message(assistant(tokens(100)))
    plan = prepared(store, 200)
    assert plan.messages_to_summarize_ids == [u3, a3]
    assert plan.first_kept_entry_id == u4
    assert plan.previous_summary == "All of it."
    assert not set(ids) & set(plan.messages_to_summarize_ids)


def test_pull_back_over_an_omitted_attempt_makes_a_split_turn() -> None:
    """pi-1.6-vs-reference item 14: ``u0 a0 [omitted a1] [edit] u2 a2``, cut at u2."""
    store, (u0, a0, a1) = store_with(
        user(tokens(100)), assistant(tokens(100)), assistant(tokens(100), stop="error")
    )
    store.append_context_edit(a1, None)
    u2 = store.append_message(user(tokens(100)))
    store.append_message(assistant(tokens(100)))
    entries = entries_of(store)
    point = cut(store, 200)
    assert entries[point.first_kept_index].id == a1
    assert point.is_split_turn and entries[point.turn_start_index].id == u0
    plan = prepared(store, 200)
    assert plan.first_kept_entry_id == a1
    assert plan.messages_to_summarize == [] and plan.turn_prefix_ids == [u0, a0]
    assert u2 in plan.kept_context_entry_ids


def test_recovery_omission_suffix_summarizes_an_overflowing_input_as_turn_prefix() -> None:
    store, (u0, a0, huge, failed) = store_with(
        user("small question"),
        assistant("small answer"),
        user("huge paste " + tokens(10000)),
        assistant("", use=usage(0, 0), stop="error"),
    )
    store.append_context_edit(failed, None)
    entries = entries_of(store)
    point = cut(store, 2000)
    # The cut advances past the over-budget input onto the omitted attempt.
    assert entries[point.first_kept_index].id == failed
    assert point.is_split_turn and entries[point.turn_start_index].id == huge
    plan = prepared(store, 2000)
    assert plan.first_kept_entry_id == failed
    assert plan.messages_to_summarize_ids == [u0, a0]
    assert plan.turn_prefix_ids == [huge]
    # Once compacted, the projection holds only the summary: the huge input is gone.
    store.append_compaction("summary", plan.first_kept_entry_id, plan.tokens_before)
    assert [m["role"] for m in store.project().messages] == ["compactionSummary"]


def test_omission_suffix_does_not_apply_without_an_omitted_assistant() -> None:
    store, (_, _, huge, after) = store_with(
        user("small question"),
        assistant("small answer"),
        user("huge paste " + tokens(10000)),
        assistant("short reply"),
    )
    point = cut(store, 2000)
    assert entries_of(store)[point.first_kept_index].id == huge
    assert point.is_split_turn is False
    assert after


def test_pull_back_over_a_label_makes_the_label_first_kept() -> None:
    store, (u0, a0, u1, a1) = store_with(
        user(tokens(100)), assistant(tokens(100)), user(tokens(100)), assistant(tokens(100))
    )
    label = store.append_label(a0, "checkpoint")
    u2 = store.append_message(user(tokens(100)))
    a2 = store.append_message(assistant(tokens(100)))
    plan = prepared(store, 200)
    assert plan.first_kept_entry_id == label
    assert plan.kept_context_entry_ids == [label, u2, a2]
    # The label starts no turn, so the turn before it becomes the prefix.
    assert plan.is_split_turn and plan.turn_start_entry_id == u1
    assert plan.messages_to_summarize_ids == [u0, a0] and plan.turn_prefix_ids == [u1, a1]


def test_already_compacted_when_the_leaf_is_a_compaction() -> None:
    store, ids = store_with(user(tokens(100)), assistant(tokens(100)))
    store.append_compaction("done", ids[1], 10)
    plan = prepare_compaction(store, None, CompactionSettings(True, 16384, 1))
    assert plan == ALREADY_COMPACTED


def test_nothing_to_summarize() -> None:
    empty = SessionStore.in_memory("/work/project")
    assert prepare_compaction(empty, None, CompactionSettings()) == NOTHING_TO_SUMMARIZE
    store, _ = store_with(user("hi"), assistant("hello"))
    # Everything fits in the kept budget: pi 1.6 returns nothing (no empty preparation).
    assert prepare_compaction(store, None, CompactionSettings()) == NOTHING_TO_SUMMARIZE


def _file_ops_store(from_hook: bool) -> SessionStore:
    store, ids = store_with(user("start"), assistant("fine"))
    store.append_compaction(
        "earlier",
        ids[1],
        100,
        details={"readFiles": ["old_read.py"], "modifiedFiles": ["old_edit.py"]},
        from_hook=from_hook,
    )
    store.append_message(user("read it"))
    store.append_message(assistant("", calls=[("read", {"path": "new_read.py"})]))
    store.append_message(tool_result("contents"))
    store.append_message(assistant("done " + tokens(10)))
    store.append_message(user(tokens(100)))
    # A tool call in the kept range is not scanned.
    store.append_message(assistant(tokens(100), calls=[("edit", {"path": "kept.py"})]))
    return store


def test_file_ops_seeded_from_previous_compaction_details() -> None:
    plan = prepared(_file_ops_store(from_hook=False), 200)
    read_files, modified = plan.file_ops.lists()
    assert read_files == ["new_read.py", "old_read.py"]
    assert modified == ["old_edit.py"]


def test_file_ops_not_seeded_from_a_hook_compaction() -> None:
    plan = prepared(_file_ops_store(from_hook=True), 200)
    read_files, modified = plan.file_ops.lists()
    assert read_files == ["new_read.py"] and modified == []


def test_nested_calls_of_tool_results_count_as_file_ops() -> None:
    result = tool_result("ran a script", name="bash")
    # pi 1.6's shape: {"calls": [...]} (a bare list is not how pi stores them).
    result["nestedCalls"] = {
        "calls": [
            {"name": "write", "arguments": {"path": "written.py"}},
            {"name": "read", "arguments": {"path": "peeked.py"}},
            {"name": "grep", "arguments": {"path": "ignored.py"}},
        ]
    }
    ignored = tool_result("old shape", name="bash")
    ignored["nestedCalls"] = [{"name": "write", "arguments": {"path": "not-counted.py"}}]
    store, _ = store_with(
        user("go"),
        assistant("", calls=[("bash", {"command": "python gen.py"})]),
        result,
        assistant("", calls=[("bash", {"command": "python old.py"})]),
        ignored,
        assistant("done"),
        user(tokens(100)),
        assistant(tokens(100)),
    )
    plan = prepared(store, 200)
    assert plan.file_ops.lists() == (["peeked.py"], ["written.py"])


# --- settings -------------------------------------------------------------------------------


def test_small_window_clamp() -> None:
    clamped = CompactionSettings().for_window(8192)
    assert (clamped.reserve_tokens, clamped.keep_recent_tokens) == (2048, 4096)
    assert CompactionSettings().for_window(200000) == CompactionSettings()
    assert CompactionSettings().for_window(None) == CompactionSettings()
    assert CompactionSettings(False, 100, 200).for_window(8192) == CompactionSettings(
        False, 100, 200
    )


def test_per_model_overrides_resolve_field_by_field() -> None:
    section = {
        "enabled": False,
        "reserveTokens": 1000,
        "keepRecentTokens": 2000,
        "modelOverrides": {
            "openai/x": {"keepRecentTokens": 500},
            "openrouter/anthropic/claude": {"reserveTokens": 7},
        },
    }
    assert resolve_settings(section, "openai/x") == CompactionSettings(False, 1000, 500)
    assert resolve_settings(section, "openrouter/anthropic/claude") == CompactionSettings(
        False, 7, 2000
    )
    assert resolve_settings(section, "OpenAI/x") == CompactionSettings(False, 1000, 2000)
    assert resolve_settings(section, None) == CompactionSettings(False, 1000, 2000)
    defaults = resolve_settings({"modelOverrides": {"a/b": {"reserveTokens": 1}}}, "a/b")
    assert defaults == CompactionSettings(True, 1, 20000)
    assert resolve_settings(None, "a/b") == CompactionSettings()


def test_global_model_override_beats_project_ordinary_value() -> None:
    """Settings files are deep-merged first (pi's deepMergeSettings), then resolved."""
    global_ = {"compaction": {"modelOverrides": {"openai/x": {"reserveTokens": 10}}}}
    project = {"compaction": {"reserveTokens": 500, "keepRecentTokens": 600}}
    merged = deep_merge(global_, project)
    assert resolve_settings(merged["compaction"], "openai/x") == CompactionSettings(True, 10, 600)
    assert resolve_settings(merged["compaction"], "openai/y") == CompactionSettings(True, 500, 600)


@pytest.mark.parametrize(
    ("section", "name"),
    [
        ({"reserveTokens": "lots"}, "compaction.reserveTokens"),
        ({"keepRecentTokens": -1}, "compaction.keepRecentTokens"),
        ({"reserveTokens": True}, "compaction.reserveTokens"),
        (
            {"reserveTokens": "bad", "modelOverrides": {"openai/x": {"reserveTokens": 10}}},
            "compaction.reserveTokens",
        ),
        (
            {"modelOverrides": {"openai/x": {"keepRecentTokens": "many"}}},
            'compaction.modelOverrides["openai/x"].keepRecentTokens',
        ),
        ({"modelOverrides": {"openai/x": 5}}, 'compaction.modelOverrides["openai/x"]'),
        ({"enabled": "yes"}, "compaction.enabled"),
    ],
)
def test_invalid_settings_name_the_setting(section: dict[str, Any], name: str) -> None:
    with pytest.raises(SettingsError) as info:
        resolve_settings(section, "openai/x")
    assert name in str(info.value)
