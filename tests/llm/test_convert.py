"""Projected pi messages → the OpenAI-style request messages litellm takes (no network)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pitui.llm.convert import to_litellm_messages, to_litellm_tools
from pitui.llm.models import ModelRef
from pitui.llm.providers import route_for

NO_RESULT = "No result provided"


# ---------------------------------------------------------------------------------------------
# Message builders (pi's stored shapes)


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content, "timestamp": 1}


def assistant(
    *blocks: dict[str, Any], stop: str = "stop", provider: str = "openai", **extra: Any
) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": list(blocks),
        "api": "litellm",
        "provider": provider,
        "model": "m",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0},
        "stopReason": stop,
        "timestamp": 2,
    }
    message.update(extra)
    return message


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def image(data: str = "QUJD", mime: str = "image/png") -> dict[str, Any]:
    return {"type": "image", "data": data, "mimeType": mime}


def call(call_id: str, name: str = "read", **arguments: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def result(
    call_id: str, *blocks: dict[str, Any], is_error: bool = False, name: str = "read"
) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": list(blocks),
        "isError": is_error,
        "timestamp": 3,
    }


def system(
    sections: dict[str, str | None] | None = None,
    content: str = "",
    tools: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "system", "content": content, "timestamp": 0}
    if sections is not None:
        message["sections"] = sections
    if tools is not None:
        message["toolsAdded"] = tools
    return message


def bash(command: str = "ls", output: str = "", **fields: Any) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "bashExecution",
        "command": command,
        "output": output,
        "exitCode": 0,
        "cancelled": False,
        "truncated": False,
        "timestamp": 4,
    }
    message.update(fields)
    return message


def roles(out: list[dict[str, Any]]) -> list[str]:
    return [m["role"] for m in out]


def only_user_text(out: list[dict[str, Any]]) -> str:
    assert roles(out) == ["user"]
    content = out[0]["content"]
    assert isinstance(content, str)
    return content


# ---------------------------------------------------------------------------------------------
# The system prompt


def test_leading_system_message_from_replayed_sections() -> None:
    messages = [
        system({"preamble": "You are pitui.", "cwd": "<cwd>\n/p\n</cwd>"}),
        user("hi"),
    ]
    out = to_litellm_messages(messages)
    assert out[0] == {"role": "system", "content": "You are pitui.\n\n<cwd>\n/p\n</cwd>"}
    assert out[1] == {"role": "user", "content": "hi"}


def test_later_system_patches_are_folded_into_the_leading_message() -> None:
    messages = [
        system({"preamble": "P", "rules": "R1", "cwd": "C"}),
        user("one"),
        assistant(text("ok")),
        system({"rules": "R2", "cwd": None}),
        user("two"),
        system({"extra": "E"}),
    ]
    out = to_litellm_messages(messages)
    assert roles(out) == ["system", "user", "assistant", "user"]
    # Patched section keeps its place, removed one is gone, new one comes last.
    assert out[0]["content"] == "P\n\nR2\n\nE"
    assert [m["content"] for m in out[1:]] == ["one", "ok", "two"]


def test_system_content_text_comes_before_sections() -> None:
    out = to_litellm_messages([system({"a": "A"}, content="Head"), user("x")])
    assert out[0] == {"role": "system", "content": "Head\n\nA"}


def test_no_system_message_without_one() -> None:
    out = to_litellm_messages([user("hi")])
    assert out == [{"role": "user", "content": "hi"}]


def test_no_system_message_when_system_messages_carry_only_tools() -> None:
    tool = {"name": "read", "description": "Read", "parameters": {"type": "object"}}
    out = to_litellm_messages([system(tools=[tool]), user("hi")])
    assert roles(out) == ["user"]


def test_empty_conversation() -> None:
    assert to_litellm_messages([]) == []


# ---------------------------------------------------------------------------------------------
# User messages


def test_user_string_content_stays_a_string() -> None:
    assert to_litellm_messages([user("hello")]) == [{"role": "user", "content": "hello"}]


def test_user_text_blocks_become_one_string() -> None:
    out = to_litellm_messages([user([text("a"), text("b")])])
    assert out == [{"role": "user", "content": "a\nb"}]


def test_user_text_and_image_become_content_parts_with_data_urls() -> None:
    out = to_litellm_messages([user([text("look"), image("AAAA", "image/jpeg"), image("BBBB")])])
    assert out == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAAA"}},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,BBBB"}},
            ],
        }
    ]


def test_custom_messages_are_user_messages() -> None:
    custom = {
        "role": "custom",
        "customType": "note",
        "content": "remember this",
        "display": False,
        "timestamp": 5,
    }
    custom_blocks = dict(custom, content=[text("see"), image("CCCC")])
    out = to_litellm_messages([custom, custom_blocks])
    assert out[0] == {"role": "user", "content": "remember this"}
    assert out[1] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "see"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,CCCC"}},
        ],
    }


# ---------------------------------------------------------------------------------------------
# Assistant messages and tool calls


def test_assistant_text_and_tool_call() -> None:
    messages = [
        user("read it"),
        assistant(
            text("Reading."),
            call("c1", "read", path="a.py", offset=3),
            call("c2", "bash", command="ls"),
            stop="toolUse",
        ),
        result("c1", text("contents")),
        result("c2", text("a.py")),
    ]
    out = to_litellm_messages(messages)
    assert roles(out) == ["user", "assistant", "tool", "tool"]
    reply = out[1]
    assert reply["content"] == "Reading."
    assert [c["id"] for c in reply["tool_calls"]] == ["c1", "c2"]
    first = reply["tool_calls"][0]
    assert first["type"] == "function"
    assert first["function"]["name"] == "read"
    assert isinstance(first["function"]["arguments"], str)
    assert json.loads(first["function"]["arguments"]) == {"path": "a.py", "offset": 3}
    assert out[2] == {"role": "tool", "tool_call_id": "c1", "content": "contents"}
    assert out[3] == {"role": "tool", "tool_call_id": "c2", "content": "a.py"}


def test_assistant_tool_call_only_has_null_content() -> None:
    out = to_litellm_messages([assistant(call("c1"), stop="toolUse"), result("c1", text("x"))])
    assert out[0]["content"] is None
    assert out[0]["tool_calls"][0]["function"]["arguments"] == "{}"


def test_tool_call_arguments_keep_non_ascii() -> None:
    out = to_litellm_messages([assistant(call("c1", "write", text="héllo"), stop="toolUse")])
    arguments = out[0]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(arguments) == {"text": "héllo"}


def test_assistant_text_blocks_are_joined() -> None:
    out = to_litellm_messages([assistant(text("a"), text("b"))])
    assert out == [{"role": "assistant", "content": "a\nb"}]


@pytest.mark.parametrize("stop", ["error", "aborted"])
def test_error_and_aborted_assistants_are_dropped_with_their_tool_results(stop: str) -> None:
    messages = [
        user("go"),
        assistant(text("partial"), call("bad1"), stop=stop, errorMessage="boom"),
        result("bad1", text("never sent")),
        user("again"),
        assistant(text("done")),
    ]
    out = to_litellm_messages(messages)
    assert roles(out) == ["user", "user", "assistant"]
    assert not any(m["role"] == "tool" for m in out)
    assert [m["content"] for m in out] == ["go", "again", "done"]


def test_orphan_tool_result_without_its_call_is_dropped() -> None:
    out = to_litellm_messages([user("hi"), result("ghost", text("x")), assistant(text("ok"))])
    assert roles(out) == ["user", "assistant"]


def test_missing_result_gets_synthetic_result_after_the_existing_ones() -> None:
    messages = [
        assistant(call("a"), call("b"), call("c"), stop="toolUse"),
        result("c", text("C")),
        result("a", text("A")),
        user("next"),
    ]
    out = to_litellm_messages(messages)
    assert roles(out) == ["assistant", "tool", "tool", "tool", "user"]
    assert [(m["tool_call_id"], m["content"]) for m in out[1:4]] == [
        ("c", "C"),
        ("a", "A"),
        ("b", NO_RESULT),
    ]


def test_missing_results_at_the_end_of_the_conversation() -> None:
    out = to_litellm_messages([user("x"), assistant(call("a"), call("b"), stop="toolUse")])
    assert roles(out) == ["user", "assistant", "tool", "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in out[2:]] == [
        ("a", NO_RESULT),
        ("b", NO_RESULT),
    ]


def test_missing_result_before_a_dropped_aborted_assistant() -> None:
    messages = [
        assistant(call("a"), stop="toolUse"),
        assistant(text("cut"), stop="aborted"),
        user("continue"),
    ]
    out = to_litellm_messages(messages)
    assert roles(out) == ["assistant", "tool", "user"]
    assert out[1] == {"role": "tool", "tool_call_id": "a", "content": NO_RESULT}


def test_every_tool_call_is_answered_exactly_once() -> None:
    messages = [
        user("1"),
        assistant(call("a"), call("b"), stop="toolUse"),
        result("a", text("A")),
        assistant(call("x"), stop="error", errorMessage="overloaded"),
        result("x", text("X")),
        user("2"),
        assistant(call("c"), stop="toolUse"),
        result("c", text("C")),
        result("c", text("duplicate")),
    ]
    out = to_litellm_messages(messages)
    called = [c["id"] for m in out if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    answered = [m["tool_call_id"] for m in out if m["role"] == "tool"]
    assert called == ["a", "b", "c"]
    assert answered == ["a", "b", "c"]


def test_tool_result_with_is_error() -> None:
    messages = [
        assistant(call("a"), call("b"), stop="toolUse"),
        result("a", text("file not found: x.py"), is_error=True),
        result("b", text("Error: permission denied"), is_error=True),
    ]
    out = to_litellm_messages(messages)
    first, second = out[1]["content"], out[2]["content"]
    assert first.startswith("Error")
    assert "file not found: x.py" in first
    assert second == "Error: permission denied"  # not prefixed twice


def test_tool_result_without_text_is_not_empty() -> None:
    out = to_litellm_messages([assistant(call("a"), stop="toolUse"), result("a")])
    assert out[1]["role"] == "tool"
    assert out[1]["content"]


def test_tool_result_images_follow_as_a_user_message() -> None:
    messages = [
        assistant(call("a", "read", path="p.png"), call("b"), stop="toolUse"),
        result("a", text("Read image p.png"), image("IMG", "image/png")),
        result("b", text("B")),
        assistant(text("I see a cat.")),
    ]
    out = to_litellm_messages(messages)
    assert roles(out) == ["assistant", "tool", "tool", "user", "assistant"]
    assert out[1] == {"role": "tool", "tool_call_id": "a", "content": "Read image p.png"}
    assert out[3]["content"] == [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,IMG"}}
    ]


def test_tool_result_images_come_after_synthetic_results() -> None:
    messages = [
        assistant(call("a"), call("b"), stop="toolUse"),
        result("a", text("pic"), image("IMG")),
        user("next"),
    ]
    out = to_litellm_messages(messages)
    assert roles(out) == ["assistant", "tool", "tool", "user", "user"]
    assert out[2] == {"role": "tool", "tool_call_id": "b", "content": NO_RESULT}
    assert out[3]["content"][0]["type"] == "image_url"
    assert out[4] == {"role": "user", "content": "next"}


# ---------------------------------------------------------------------------------------------
# bashExecution (the user's !cmd)


def test_bash_execution_with_output() -> None:
    out = to_litellm_messages([bash("ls -la", "a.py\nb.py")])
    assert only_user_text(out) == "Ran `ls -la`\n```\na.py\nb.py\n```"


def test_bash_execution_without_output() -> None:
    out = to_litellm_messages([bash("true", "")])
    assert only_user_text(out) == "Ran `true`\n(no output)"


def test_bash_execution_cancelled() -> None:
    out = to_litellm_messages([bash("sleep 9", "", cancelled=True, exitCode=None)])
    assert only_user_text(out) == "Ran `sleep 9`\n(no output)\n\n(command cancelled)"


def test_bash_execution_cancelled_wins_over_exit_code() -> None:
    out = to_litellm_messages([bash("sleep 9", "x", cancelled=True, exitCode=130)])
    text_out = only_user_text(out)
    assert text_out.endswith("\n\n(command cancelled)")
    assert "exited with code" not in text_out


def test_bash_execution_non_zero_exit_code() -> None:
    out = to_litellm_messages([bash("false", "oops", exitCode=1)])
    assert only_user_text(out) == "Ran `false`\n```\noops\n```\n\nCommand exited with code 1"


@pytest.mark.parametrize("code", [0, None])
def test_bash_execution_zero_or_missing_exit_code_adds_nothing(code: int | None) -> None:
    out = to_litellm_messages([bash("ls", "x", exitCode=code)])
    assert only_user_text(out) == "Ran `ls`\n```\nx\n```"


def test_bash_execution_truncated_with_full_output_path() -> None:
    out = to_litellm_messages(
        [bash("cat big", "tail", exitCode=2, truncated=True, fullOutputPath="/tmp/out.txt")]
    )
    assert only_user_text(out) == (
        "Ran `cat big`\n```\ntail\n```\n\nCommand exited with code 2"
        "\n\n[Output truncated. Full output: /tmp/out.txt]"
    )


def test_bash_execution_truncated_without_path_adds_nothing() -> None:
    out = to_litellm_messages([bash("cat big", "tail", truncated=True)])
    assert only_user_text(out) == "Ran `cat big`\n```\ntail\n```"


def test_bash_execution_excluded_from_context_is_dropped() -> None:
    out = to_litellm_messages([user("a"), bash("secret", "x", excludeFromContext=True), user("b")])
    assert out == [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]


# ---------------------------------------------------------------------------------------------
# Summaries


def test_compaction_summary_in_summary_tags() -> None:
    message = {"role": "compactionSummary", "summary": "We did X.", "tokensBefore": 9}
    content = only_user_text(to_litellm_messages([message]))
    prefix, _, rest = content.partition("<summary>\n")
    assert prefix.endswith("\n\n") and prefix.strip()
    assert rest == "We did X.\n</summary>"


def test_branch_summary_in_summary_tags_without_newline_before_closing() -> None:
    message = {"role": "branchSummary", "summary": "Tried Y.", "fromId": "abc"}
    content = only_user_text(to_litellm_messages([message]))
    prefix, _, rest = content.partition("<summary>\n")
    assert prefix.endswith("\n\n") and prefix.strip()
    assert rest == "Tried Y.</summary>"  # pi's asymmetric suffix


def test_summary_and_conversation_order() -> None:
    messages = [
        system({"preamble": "P"}),
        {"role": "compactionSummary", "summary": "S", "tokensBefore": 1},
        user("q"),
        assistant(text("a")),
    ]
    assert roles(to_litellm_messages(messages)) == ["system", "user", "user", "assistant"]


# ---------------------------------------------------------------------------------------------
# Thinking


CLAUDE = route_for("anthropic/claude-sonnet-4-5")


def _thinking_reply(
    provider: str = "anthropic",
    signature: str | None = "sig-1",
    model: str = "claude-sonnet-4-5",
    api: str = "anthropic-messages",
) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "thinking", "thinking": "Let me think."}
    if signature:
        block["thinkingSignature"] = signature
    return assistant(block, text("Answer."), provider=provider, model=model, api=api)


def test_signed_thinking_goes_back_to_the_model_that_signed_it_in_order() -> None:
    reply = assistant(
        {"type": "thinking", "thinking": "First.", "thinkingSignature": "sig-1"},
        text("Let me look."),
        {"type": "thinking", "thinking": "Second.", "thinkingSignature": "sig-2"},
        call("c1"),
        provider="anthropic",
        model="claude-sonnet-4-5",
        api="anthropic-messages",
        stopReason="toolUse",
    )
    out = to_litellm_messages([user("q"), reply, result("c1", text("x"))], CLAUDE)
    assert out[1]["content"] == [
        {"type": "thinking", "thinking": "First.", "signature": "sig-1"},
        {"type": "text", "text": "Let me look."},
        {"type": "thinking", "thinking": "Second.", "signature": "sig-2"},
    ]
    assert [c["id"] for c in out[1]["tool_calls"]] == ["c1"]


def test_thinking_of_an_older_pitui_session_counts_as_the_models_own() -> None:
    out = to_litellm_messages([user("q"), _thinking_reply(api="litellm")], CLAUDE)
    assert out[1]["content"][0] == {
        "type": "thinking",
        "thinking": "Let me think.",
        "signature": "sig-1",
    }


@pytest.mark.parametrize(
    ("stored", "target"),
    [
        (_thinking_reply(), route_for("openai/gpt-4.1")),
        (_thinking_reply(model="claude-opus-4-5"), CLAUDE),
        (_thinking_reply(provider="openai", api="openai-completions"), CLAUDE),
        (_thinking_reply(), route_for(ModelRef("", ""))),
    ],
)
def test_thinking_never_goes_to_another_model(stored: dict[str, Any], target: Any) -> None:
    out = to_litellm_messages([stored], target)
    assert out[0]["content"] == "Answer."
    assert "Let me think." not in json.dumps(out) and "sig-1" not in json.dumps(out)


def test_unsigned_thinking_not_forwarded() -> None:
    out = to_litellm_messages([_thinking_reply(signature=None)], CLAUDE)
    assert out[0]["content"] == "Answer."
    assert "Let me think." not in json.dumps(out)


def test_thinking_only_assistant_is_not_sent_as_empty_message() -> None:
    block = {"type": "thinking", "thinking": "hmm", "thinkingSignature": "s"}
    own = {"provider": "anthropic", "model": "claude-sonnet-4-5", "api": "anthropic-messages"}
    out = to_litellm_messages([user("q"), assistant(block, **own)], CLAUDE)
    assert roles(out) == ["user"]


def test_redacted_thinking_forwarded_with_data() -> None:
    block = {
        "type": "thinking",
        "thinking": "[Reasoning redacted]",
        "thinkingSignature": "OPAQUE",
        "redacted": True,
    }
    own = {"provider": "anthropic", "model": "claude-sonnet-4-5", "api": "anthropic-messages"}
    out = to_litellm_messages([assistant(block, text("Answer."), **own)], CLAUDE)
    assert out[0]["content"] == [
        {"type": "redacted_thinking", "data": "OPAQUE"},
        {"type": "text", "text": "Answer."},
    ]


def test_responses_reasoning_items_replayed_for_the_same_model() -> None:
    item = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "ENC"}
    block = {"type": "thinking", "thinking": "", "thinkingSignature": json.dumps(item)}
    own = {"provider": "openai", "model": "gpt-5-codex", "api": "openai-responses"}
    reply = assistant(block, call("call_1"), stopReason="toolUse", **own)
    out = to_litellm_messages([user("q"), reply], route_for("openai/gpt-5-codex"))
    assert out[1]["reasoning_items"] == [item]


def test_gemini_thought_signatures_on_tool_calls() -> None:
    signed = {**call("c1"), "thoughtSignature": "SIG"}
    own = {"provider": "google", "model": "gemini-2.5-pro", "api": "google-generative-ai"}
    reply = assistant(signed, stopReason="toolUse", **own)
    out = to_litellm_messages([user("q"), reply], route_for("gemini/gemini-2.5-pro"))
    assert out[1]["tool_calls"][0]["provider_specific_fields"] == {"thought_signature": "SIG"}
    other = to_litellm_messages([user("q"), reply], route_for("gemini/gemini-2.5-flash"))
    assert "provider_specific_fields" not in other[1]["tool_calls"][0]


# ---------------------------------------------------------------------------------------------
# Tools


def test_to_litellm_tools_shape() -> None:
    declarations = [
        {
            "name": "read",
            "description": "Read a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
        {"name": "noop"},
        {"description": "nameless"},
        "garbage",
    ]
    tools = to_litellm_tools(declarations)  # type: ignore[arg-type]
    assert tools == [
        {
            "type": "function",
            "function": {
                "name": "read",
                "description": "Read a file",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            },
        },
        {
            "type": "function",
            "function": {
                "name": "noop",
                "description": "",
                "parameters": {"type": "object", "properties": {}},
            },
        },
    ]


def test_to_litellm_tools_empty() -> None:
    assert to_litellm_tools([]) == []
