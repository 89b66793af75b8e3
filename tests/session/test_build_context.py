"""pi's build-context tests (pi-reference §8 items 1–14), adapted to pi 1.6 and our API.

Sessions are written by hand with arbitrary ids ("1", "2", …) like pi's tests, then opened.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pitui.session import EntryNotFoundError, SessionStore

WriteSession = Callable[..., Path]
OpenSession = Callable[..., SessionStore]

_clock = iter(range(10_000))


def _ts() -> str:
    """Distinct, increasing ISO timestamps (file order = time order)."""
    n = next(_clock)
    return f"2025-01-01T00:{n // 60 % 60:02d}:{n % 60:02d}.000Z"


def msg(entry_id: str, parent: str | None, role: str, text: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}]}
    if role == "user":
        message["content"] = text
    if role == "assistant":
        message.update(
            api="anthropic-messages",
            provider="anthropic",
            model="claude-test",
            stopReason="stop",
        )
    message["timestamp"] = 1_700_000_000_000
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": _ts(),
        "message": message,
    }


def compaction(entry_id: str, parent: str, summary: str, first_kept: str) -> dict[str, Any]:
    return {
        "type": "compaction",
        "id": entry_id,
        "parentId": parent,
        "timestamp": _ts(),
        "summary": summary,
        "firstKeptEntryId": first_kept,
        "tokensBefore": 1000,
    }


def branch_summary(entry_id: str, parent: str, summary: str) -> dict[str, Any]:
    return {
        "type": "branch_summary",
        "id": entry_id,
        "parentId": parent,
        "timestamp": _ts(),
        "fromId": parent,
        "summary": summary,
    }


def thinking(entry_id: str, parent: str, level: str) -> dict[str, Any]:
    return {
        "type": "thinking_level_change",
        "id": entry_id,
        "parentId": parent,
        "timestamp": _ts(),
        "thinkingLevel": level,
    }


def model_change(entry_id: str, parent: str, provider: str, model_id: str) -> dict[str, Any]:
    return {
        "type": "model_change",
        "id": entry_id,
        "parentId": parent,
        "timestamp": _ts(),
        "provider": provider,
        "modelId": model_id,
    }


def text_of(message: dict[str, Any]) -> str:
    """The text a user would read for a projected message."""
    if message["role"] in ("compactionSummary", "branchSummary"):
        return str(message["summary"])
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(b["text"] for b in content if b.get("type") == "text")


@pytest.fixture
def load(write_session: WriteSession, open_session: OpenSession) -> Any:
    def load_(entries: list[dict[str, Any]]) -> SessionStore:
        return open_session(write_session(entries), read_only=True)

    return load_


# --------------------------------------------------------------------------- trivial cases


def test_no_entries_gives_empty_context(load: Any) -> None:
    store = load([])
    projection = store.project()
    assert store.leaf_id is None
    assert projection.messages == []
    assert projection.thinking_level == "off"
    assert projection.model is None


def test_explicit_null_leaf_gives_empty_context(load: Any) -> None:
    store = load([msg("1", None, "user", "hello"), msg("2", "1", "assistant", "hi")])
    projection = store.project(None)
    assert projection.messages == []
    assert projection.thinking_level == "off"
    assert projection.model is None


def test_in_memory_session_starts_with_empty_context() -> None:
    store = SessionStore.in_memory("/tmp")
    projection = store.project()
    assert (projection.messages, projection.thinking_level, projection.model) == ([], "off", None)


def test_single_user_message(load: Any) -> None:
    projection = load([msg("1", None, "user", "hello")]).project()
    assert [m["role"] for m in projection.messages] == ["user"]
    assert projection.source_entry_ids == ["1"]


def test_simple_conversation_in_order(load: Any) -> None:
    store = load(
        [
            msg("1", None, "user", "hello"),
            msg("2", "1", "assistant", "hi there"),
            msg("3", "2", "user", "how are you"),
            msg("4", "3", "assistant", "great"),
        ]
    )
    projection = store.project()
    assert [m["role"] for m in projection.messages] == ["user", "assistant", "user", "assistant"]
    assert [text_of(m) for m in projection.messages] == [
        "hello",
        "hi there",
        "how are you",
        "great",
    ]
    assert projection.source_entry_ids == ["1", "2", "3", "4"]


def test_thinking_level_change_sets_level_and_emits_nothing(load: Any) -> None:
    store = load(
        [
            msg("1", None, "user", "hello"),
            thinking("2", "1", "high"),
            msg("3", "2", "assistant", "thinking hard"),
        ]
    )
    projection = store.project()
    assert projection.thinking_level == "high"
    assert len(projection.messages) == 2
    assert projection.source_entry_ids == ["1", "3"]


def test_model_comes_from_assistant_message(load: Any) -> None:
    store = load([msg("1", None, "user", "hello"), msg("2", "1", "assistant", "hi")])
    assert store.project().model == {"provider": "anthropic", "modelId": "claude-test"}


def test_later_assistant_overrides_model_change(load: Any) -> None:
    store = load(
        [
            msg("1", None, "user", "hello"),
            model_change("2", "1", "openai", "gpt-4"),
            msg("3", "2", "assistant", "hi"),
        ]
    )
    assert store.project().model == {"provider": "anthropic", "modelId": "claude-test"}
    # At the model change itself (before the assistant), the model change is in effect.
    assert store.project("2").model == {"provider": "openai", "modelId": "gpt-4"}


def test_later_model_change_overrides_assistant(load: Any) -> None:
    store = load(
        [
            msg("1", None, "user", "hello"),
            msg("2", "1", "assistant", "hi"),
            model_change("3", "2", "openai", "gpt-4"),
        ]
    )
    assert store.project().model == {"provider": "openai", "modelId": "gpt-4"}


# --------------------------------------------------------------------------- compaction


def test_compaction_keeps_from_first_kept_entry(load: Any) -> None:
    store = load(
        [
            msg("1", None, "user", "first"),
            msg("2", "1", "assistant", "response1"),
            msg("3", "2", "user", "second"),
            msg("4", "3", "assistant", "response2"),
            compaction("5", "4", "Summary of first exchange", "3"),
            msg("6", "5", "user", "third"),
            msg("7", "6", "assistant", "response3"),
        ]
    )
    projection = store.project()
    assert len(projection.messages) == 5
    assert projection.messages[0]["role"] == "compactionSummary"
    assert "Summary of first exchange" in projection.messages[0]["summary"]
    assert projection.messages[0]["tokensBefore"] == 1000
    assert [text_of(m) for m in projection.messages[1:]] == [
        "second",
        "response2",
        "third",
        "response3",
    ]
    assert projection.source_entry_ids == ["5", "3", "4", "6", "7"]
    assert projection.context_entry_ids == ["5", "3", "4", "6", "7"]


def test_compaction_keeping_from_the_first_message(load: Any) -> None:
    store = load(
        [
            msg("1", None, "user", "first"),
            msg("2", "1", "assistant", "response1"),
            compaction("3", "2", "Summary", "1"),
            msg("4", "3", "user", "second"),
        ]
    )
    projection = store.project()
    assert [m["role"] for m in projection.messages] == [
        "compactionSummary",
        "user",
        "assistant",
        "user",
    ]
    assert [text_of(m) for m in projection.messages[1:]] == ["first", "response1", "second"]


def test_only_the_latest_compaction_is_used(load: Any) -> None:
    store = load(
        [
            msg("1", None, "user", "a"),
            msg("2", "1", "assistant", "b"),
            compaction("3", "2", "First summary", "1"),
            msg("4", "3", "user", "c"),
            msg("5", "4", "assistant", "d"),
            compaction("6", "5", "Second summary", "4"),
            msg("7", "6", "user", "e"),
        ]
    )
    projection = store.project()
    assert len(projection.messages) == 4
    assert projection.messages[0]["summary"] == "Second summary"
    assert [text_of(m) for m in projection.messages[1:]] == ["c", "d", "e"]
    assert all(m.get("summary") != "First summary" for m in projection.messages)


def test_older_compaction_inside_kept_range_projects_nothing(load: Any) -> None:
    """pi 1.6: a compaction inside the newer one's kept range contributes no messages."""
    store = load(
        [
            msg("1", None, "user", "a"),
            msg("2", "1", "assistant", "b"),
            compaction("3", "2", "First summary", "1"),
            msg("4", "3", "user", "c"),
            compaction("5", "4", "Second summary", "2"),
            msg("6", "5", "user", "d"),
        ]
    )
    projection = store.project()
    assert [text_of(m) for m in projection.messages] == ["Second summary", "b", "c", "d"]
    assert projection.context_entry_ids == ["5", "2", "3", "4", "6"]


def test_compaction_retain_none_keeps_only_summary(load: Any) -> None:
    """pi 1.6: a compaction whose firstKeptEntryId is its own id keeps nothing before it."""
    store = load(
        [
            msg("1", None, "user", "a"),
            msg("2", "1", "assistant", "b"),
            compaction("3", "2", "Everything so far", "3"),
            msg("4", "3", "user", "c"),
        ]
    )
    assert [text_of(m) for m in store.project().messages] == ["Everything so far", "c"]


def test_compaction_with_first_kept_off_the_path_keeps_nothing_before_it(load: Any) -> None:
    store = load(
        [
            msg("1", None, "user", "a"),
            msg("2", "1", "assistant", "b"),
            msg("x", "1", "assistant", "other branch"),
            compaction("3", "2", "Summary", "x"),
            msg("4", "3", "user", "c"),
        ]
    )
    assert [text_of(m) for m in store.project().messages] == ["Summary", "c"]


def test_model_and_thinking_come_from_the_whole_path_despite_compaction(load: Any) -> None:
    store = load(
        [
            msg("1", None, "user", "a"),
            thinking("2", "1", "medium"),
            msg("3", "2", "assistant", "b"),
            msg("4", "3", "user", "c"),
            compaction("5", "4", "Summary", "4"),
            msg("6", "5", "user", "d"),
        ]
    )
    projection = store.project()
    assert [text_of(m) for m in projection.messages] == ["Summary", "c", "d"]
    assert projection.thinking_level == "medium"
    assert projection.model == {"provider": "anthropic", "modelId": "claude-test"}


# --------------------------------------------------------------------------- branches


def test_branches_project_their_own_path(load: Any) -> None:
    store = load(
        [
            msg("1", None, "user", "start"),
            msg("2", "1", "assistant", "response"),
            msg("3", "2", "user", "branch A"),
            msg("4", "2", "user", "branch B"),
        ]
    )
    at_a = store.project("3")
    assert len(at_a.messages) == 3
    assert text_of(at_a.messages[-1]) == "branch A"
    at_b = store.project("4")
    assert len(at_b.messages) == 3
    assert text_of(at_b.messages[-1]) == "branch B"
    assert "branch B" not in [text_of(m) for m in at_a.messages]


def test_branch_summary_is_emitted_in_place(load: Any) -> None:
    store = load(
        [
            msg("1", None, "user", "start"),
            msg("2", "1", "assistant", "response"),
            msg("3", "2", "user", "abandoned path"),
            branch_summary("4", "2", "Summary of abandoned work"),
            msg("5", "4", "user", "new direction"),
        ]
    )
    projection = store.project("5")
    assert len(projection.messages) == 4
    assert projection.messages[2]["role"] == "branchSummary"
    assert "Summary of abandoned work" in projection.messages[2]["summary"]
    assert text_of(projection.messages[3]) == "new direction"
    assert "abandoned path" not in [text_of(m) for m in projection.messages]


def test_empty_branch_summary_emits_nothing(load: Any) -> None:
    store = load(
        [
            msg("1", None, "user", "start"),
            branch_summary("2", "1", ""),
            msg("3", "2", "user", "next"),
        ]
    )
    assert [text_of(m) for m in store.project().messages] == ["start", "next"]


COMPLEX_TREE = [
    msg("1", None, "user", "start"),
    msg("2", "1", "assistant", "r1"),
    msg("3", "2", "user", "q2"),
    msg("4", "3", "assistant", "r2"),
    compaction("5", "4", "Compacted history", "3"),
    msg("6", "5", "user", "q3"),
    msg("7", "6", "assistant", "r3"),
    msg("8", "3", "user", "wrong path"),
    msg("9", "8", "assistant", "wrong response"),
    branch_summary("10", "3", "Tried wrong approach"),
    msg("11", "10", "user", "better approach"),
]


def test_complex_tree_main_path_uses_its_compaction(load: Any) -> None:
    projection = load(COMPLEX_TREE).project("7")
    assert [text_of(m) for m in projection.messages] == [
        "Compacted history",
        "q2",
        "r2",
        "q3",
        "r3",
    ]


def test_complex_tree_side_branch_ignores_other_branch_compaction(load: Any) -> None:
    projection = load(COMPLEX_TREE).project("11")
    assert [m["role"] for m in projection.messages] == [
        "user",
        "assistant",
        "user",
        "branchSummary",
        "user",
    ]
    assert [text_of(m) for m in projection.messages] == [
        "start",
        "r1",
        "q2",
        "Tried wrong approach",
        "better approach",
    ]


# --------------------------------------------------------------------------- leaf fallbacks


def test_unknown_leaf_raises_entry_not_found(load: Any) -> None:
    store = load([msg("1", None, "user", "hello"), msg("2", "1", "assistant", "hi")])
    with pytest.raises(EntryNotFoundError, match="Entry nonexistent not found"):
        store.project("nonexistent")


def test_reopened_file_uses_last_entry_in_file_order_as_leaf(load: Any) -> None:
    store = load([msg("1", None, "user", "hello"), msg("2", "1", "assistant", "hi")])
    assert store.leaf_id == "2"
    assert len(store.project().messages) == 2


def test_reopened_leaf_is_last_line_even_on_an_older_branch(load: Any) -> None:
    store = load(
        [
            msg("1", None, "user", "start"),
            msg("2", "1", "assistant", "deep"),
            msg("3", "2", "user", "deeper"),
            msg("4", "1", "assistant", "written last"),
        ]
    )
    assert store.leaf_id == "4"
    assert [text_of(m) for m in store.project().messages] == ["start", "written last"]


def test_orphan_becomes_root_and_is_projected_alone(
    write_session: WriteSession, open_session: OpenSession
) -> None:
    path = write_session(
        [msg("1", None, "user", "hello"), msg("2", "missing", "assistant", "orphan")]
    )
    store = open_session(path, read_only=True)
    projection = store.project("2")
    assert [text_of(m) for m in projection.messages] == ["orphan"]
    assert [n.id for n in store.roots()] == ["1", "2"]
    assert [n.id for n in store.path_to("2")] == ["2"]
    assert any("missing" in str(w) for w in store.warnings)
