"""pi's message shapes and the one walk over them (pitui.session.shapes)."""

from __future__ import annotations

from typing import Any

from pitui.compaction.tiktoken_count import IMAGE_TOKENS, TiktokenEstimator
from pitui.compaction.tokens import estimate_tokens, message_chars
from pitui.session.shapes import (
    BOOKKEEPING_TYPES,
    as_user_text,
    content_images,
    content_text,
    counted_parts,
    has_text,
    is_conversation,
    message_text,
    tool_calls,
)

ASSISTANT: dict[str, Any] = {
    "role": "assistant",
    "content": [
        {"type": "thinking", "thinking": "hmm"},
        {"type": "text", "text": "Reading it."},
        "not a block",
        {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.py", "n": 1.0}},
        {"type": "text", "text": 5},
    ],
}


def test_text_of_any_content_value() -> None:
    assert content_text("plain") == "plain"
    blocks = [
        {"type": "text", "text": "a"},
        {"type": "image", "data": "x"},
        {"type": "text", "text": "b"},
    ]
    assert content_text(blocks, "\n") == "a\nb"
    assert content_text(None) == content_text(7) == ""
    assert message_text(ASSISTANT, " ") == "Reading it."
    assert message_text("not a message") == ""
    assert content_images(blocks) == 1 and content_images("x") == 0
    assert has_text(ASSISTANT) and not has_text({"content": [{"type": "text", "text": "  "}]})


def test_tool_calls_in_order_and_only_blocks() -> None:
    assert [c["id"] for c in tool_calls(ASSISTANT)] == ["c1"]
    assert tool_calls({"content": "text"}) == [] and tool_calls(None) == []


def test_the_role_walk_feeds_both_estimators() -> None:
    texts, images = counted_parts(ASSISTANT)
    # JSON.stringify writes 1.0 as 1.
    assert texts == ["hmm", "Reading it.", "read", '{"path":"a.py","n":1}'] and images == 0
    assert message_chars(ASSISTANT) == sum(len(t) for t in texts)
    user = {"role": "user", "content": [{"type": "text", "text": "hi 😀"}, {"type": "image"}]}
    assert message_chars(user) == len("hi ") + 2 + 4800  # the emoji is two UTF-16 units
    assert estimate_tokens(user) == -(-(5 + 4800) // 4)
    tiktoken = TiktokenEstimator()
    assert tiktoken.count(user) == tiktoken.tokens("hi 😀") + IMAGE_TOKENS
    system = {
        "role": "system",
        "content": "c",
        "sections": {"a": "x", "b": None},
        "toolsAdded": [{"name": "t"}],
    }
    assert counted_parts(system) == (["c", "x", '[{"name":"t"}]'], 0)
    assert counted_parts({"role": "compactionSummary", "summary": "s"}) == (["s"], 0)
    assert counted_parts({"role": "bashExecution", "command": "ls", "output": 3}) == (["ls"], 0)
    assert counted_parts({"role": "unknown"}) == ([], 0)


def test_non_llm_roles_as_the_model_reads_them() -> None:
    bash = {"role": "bashExecution", "command": "ls", "output": "a", "exitCode": 2}
    assert as_user_text(bash) == "Ran `ls`\n```\na\n```\n\nCommand exited with code 2"
    assert as_user_text({**bash, "excludeFromContext": True}) is None
    assert as_user_text({"role": "branchSummary", "summary": "S"}).endswith("S</summary>")  # type: ignore[union-attr]
    assert as_user_text({"role": "compactionSummary", "summary": "S"}).endswith("S\n</summary>")  # type: ignore[union-attr]
    assert as_user_text({"role": "user", "content": "x"}) is None


def test_which_entries_are_conversation() -> None:
    assert is_conversation("message", "toolResult") and not is_conversation("message", "system")
    assert is_conversation("compaction", None) and not is_conversation("label", None)
    assert "label" in BOOKKEEPING_TYPES and "message" not in BOOKKEEPING_TYPES
