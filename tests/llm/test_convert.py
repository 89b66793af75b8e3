"""Projected pi messages → a request's messages: pi's rules for every API
(:func:`pitui.llm.context.build_context`), in OpenAI chat's shape (``openai-completions``),
Claude's (``anthropic-messages``) and litellm's (its routes). No network."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pitui.llm.apis import anthropic_messages, api_module, openai_completions
from pitui.llm.call import Call
from pitui.llm.fallback.convert import to_litellm_messages as litellm_messages
from pitui.llm.models import ModelRef, model_info
from pitui.llm.reply import ReplyBuilder
from pitui.llm.routes import route
from pitui.llm.stream import CallOptions, build_call

# A call without a result gets pi's synthetic error result; chat models read it as an error.
NO_RESULT = "Error: No result provided"
CHAT = "openai/gpt-4.1"
CLAUDE = "anthropic/claude-sonnet-4-5"


def call_for(
    messages: list[dict[str, Any]], model: str = CHAT, tools: list[Any] | None = None
) -> Call:
    info = model_info(ModelRef.parse(model))
    target = route(info)
    api = api_module(target.api) if target.native else None
    return build_call(info, messages, tools or [], CallOptions(), ReplyBuilder(info, target), api)


def chat(messages: list[dict[str, Any]], model: str = CHAT) -> list[dict[str, Any]]:
    """The request's messages for ``model`` in its API's shape (chat-like APIs only)."""
    call = call_for(messages, model)
    if not call.route.native:
        return litellm_messages(call.context, call.route)
    return openai_completions.messages(call)


def claude(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return anthropic_messages.messages(call_for(messages, CLAUDE))


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
    out = chat(messages)
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
    out = chat(messages)
    assert roles(out) == ["system", "user", "assistant", "user"]
    # Patched section keeps its place, removed one is gone, new one comes last.
    assert out[0]["content"] == "P\n\nR2\n\nE"
    assert [m["content"] for m in out[1:]] == ["one", "ok", "two"]


def test_system_content_text_comes_before_sections() -> None:
    out = chat([system({"a": "A"}, content="Head"), user("x")])
    assert out[0] == {"role": "system", "content": "Head\n\nA"}


def test_no_system_message_without_one() -> None:
    out = chat([user("hi")])
    assert out == [{"role": "user", "content": "hi"}]


def test_no_system_message_when_system_messages_carry_only_tools() -> None:
    tool = {"name": "read", "description": "Read", "parameters": {"type": "object"}}
    out = chat([system(tools=[tool]), user("hi")])
    assert roles(out) == ["user"]


def test_empty_conversation() -> None:
    assert chat([]) == []


# ---------------------------------------------------------------------------------------------
# User messages


def test_user_string_content_stays_a_string() -> None:
    assert chat([user("hello")]) == [{"role": "user", "content": "hello"}]


def test_user_text_blocks_become_one_string() -> None:
    out = chat([user([text("a"), text("b")])])
    assert out == [{"role": "user", "content": "a\nb"}]


def test_user_text_and_image_become_content_parts_with_data_urls() -> None:
    out = chat([user([text("look"), image("AAAA", "image/jpeg"), image("BBBB")])])
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
    out = chat([custom, custom_blocks])
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
    out = chat(messages)
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
    out = chat([assistant(call("c1"), stop="toolUse"), result("c1", text("x"))])
    assert out[0]["content"] is None
    assert out[0]["tool_calls"][0]["function"]["arguments"] == "{}"


def test_tool_call_arguments_keep_non_ascii() -> None:
    out = chat([assistant(call("c1", "write", text="héllo"), stop="toolUse")])
    arguments = out[0]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(arguments) == {"text": "héllo"}


def test_assistant_text_blocks_are_joined() -> None:
    out = chat([assistant(text("a"), text("b"))])
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
    out = chat(messages)
    assert roles(out) == ["user", "user", "assistant"]
    assert not any(m["role"] == "tool" for m in out)
    assert [m["content"] for m in out] == ["go", "again", "done"]


def test_orphan_tool_result_without_its_call_is_dropped() -> None:
    out = chat([user("hi"), result("ghost", text("x")), assistant(text("ok"))])
    assert roles(out) == ["user", "assistant"]


def test_missing_result_gets_synthetic_result_after_the_existing_ones() -> None:
    messages = [
        assistant(call("a"), call("b"), call("c"), stop="toolUse"),
        result("c", text("C")),
        result("a", text("A")),
        user("next"),
    ]
    out = chat(messages)
    assert roles(out) == ["assistant", "tool", "tool", "tool", "user"]
    assert [(m["tool_call_id"], m["content"]) for m in out[1:4]] == [
        ("c", "C"),
        ("a", "A"),
        ("b", NO_RESULT),
    ]


def test_missing_results_at_the_end_of_the_conversation() -> None:
    out = chat([user("x"), assistant(call("a"), call("b"), stop="toolUse")])
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
    out = chat(messages)
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
    out = chat(messages)
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
    out = chat(messages)
    first, second = out[1]["content"], out[2]["content"]
    assert first.startswith("Error")
    assert "file not found: x.py" in first
    assert second == "Error: permission denied"  # not prefixed twice


def test_tool_result_without_text_is_not_empty() -> None:
    out = chat([assistant(call("a"), stop="toolUse"), result("a")])
    assert out[1]["role"] == "tool"
    assert out[1]["content"]


def test_tool_result_images_follow_as_a_user_message() -> None:
    messages = [
        assistant(call("a", "read", path="p.png"), call("b"), stop="toolUse"),
        result("a", text("Read image p.png"), image("IMG", "image/png")),
        result("b", text("B")),
        assistant(text("I see a cat.")),
    ]
    out = chat(messages)
    assert roles(out) == ["assistant", "tool", "tool", "user", "assistant"]
    assert out[1] == {"role": "tool", "tool_call_id": "a", "content": "Read image p.png"}
    assert out[3]["content"] == [
        {"type": "text", "text": "Attached image(s) from tool result:"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,IMG"}},
    ]


def test_tool_result_images_come_after_synthetic_results() -> None:
    messages = [
        assistant(call("a"), call("b"), stop="toolUse"),
        result("a", text("pic"), image("IMG")),
        user("next"),
    ]
    out = chat(messages)
    assert roles(out) == ["assistant", "tool", "tool", "user", "user"]
    assert out[2] == {"role": "tool", "tool_call_id": "b", "content": NO_RESULT}
    assert out[3]["content"][1]["type"] == "image_url"
    assert out[4] == {"role": "user", "content": "next"}


# ---------------------------------------------------------------------------------------------
# bashExecution (the user's !cmd)


def test_bash_execution_with_output() -> None:
    out = chat([bash("ls -la", "a.py\nb.py")])
    assert only_user_text(out) == "Ran `ls -la`\n```\na.py\nb.py\n```"


def test_bash_execution_without_output() -> None:
    out = chat([bash("true", "")])
    assert only_user_text(out) == "Ran `true`\n(no output)"


def test_bash_execution_cancelled() -> None:
    out = chat([bash("sleep 9", "", cancelled=True, exitCode=None)])
    assert only_user_text(out) == "Ran `sleep 9`\n(no output)\n\n(command cancelled)"


def test_bash_execution_cancelled_wins_over_exit_code() -> None:
    out = chat([bash("sleep 9", "x", cancelled=True, exitCode=130)])
    text_out = only_user_text(out)
    assert text_out.endswith("\n\n(command cancelled)")
    assert "exited with code" not in text_out


def test_bash_execution_non_zero_exit_code() -> None:
    out = chat([bash("false", "oops", exitCode=1)])
    assert only_user_text(out) == "Ran `false`\n```\noops\n```\n\nCommand exited with code 1"


@pytest.mark.parametrize("code", [0, None])
def test_bash_execution_zero_or_missing_exit_code_adds_nothing(code: int | None) -> None:
    out = chat([bash("ls", "x", exitCode=code)])
    assert only_user_text(out) == "Ran `ls`\n```\nx\n```"


def test_bash_execution_truncated_with_full_output_path() -> None:
    out = chat([bash("cat big", "tail", exitCode=2, truncated=True, fullOutputPath="/tmp/out.txt")])
    assert only_user_text(out) == (
        "Ran `cat big`\n```\ntail\n```\n\nCommand exited with code 2"
        "\n\n[Output truncated. Full output: /tmp/out.txt]"
    )


def test_bash_execution_truncated_without_path_adds_nothing() -> None:
    out = chat([bash("cat big", "tail", truncated=True)])
    assert only_user_text(out) == "Ran `cat big`\n```\ntail\n```"


def test_bash_execution_excluded_from_context_is_dropped() -> None:
    out = chat([user("a"), bash("secret", "x", excludeFromContext=True), user("b")])
    assert out == [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]


# ---------------------------------------------------------------------------------------------
# Summaries


def test_compaction_summary_in_summary_tags() -> None:
    message = {"role": "compactionSummary", "summary": "We did X.", "tokensBefore": 9}
    content = only_user_text(chat([message]))
    prefix, _, rest = content.partition("<summary>\n")
    assert prefix.endswith("\n\n") and prefix.strip()
    assert rest == "We did X.\n</summary>"


def test_branch_summary_in_summary_tags_without_newline_before_closing() -> None:
    message = {"role": "branchSummary", "summary": "Tried Y.", "fromId": "abc"}
    content = only_user_text(chat([message]))
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
    assert roles(chat(messages)) == ["system", "user", "user", "assistant"]


# ---------------------------------------------------------------------------------------------
# Thinking


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


OWN_CLAUDE = {"provider": "anthropic", "model": "claude-sonnet-4-5", "api": "anthropic-messages"}


def test_signed_thinking_goes_back_to_the_model_that_signed_it_in_order() -> None:
    reply = assistant(
        {"type": "thinking", "thinking": "First.", "thinkingSignature": "sig-1"},
        text("Let me look."),
        {"type": "thinking", "thinking": "Second.", "thinkingSignature": "sig-2"},
        call("c1"),
        stopReason="toolUse",
        **OWN_CLAUDE,
    )
    out = claude([user("q"), reply, result("c1", text("x"))])
    assert out[1]["content"] == [
        {"type": "thinking", "thinking": "First.", "signature": "sig-1"},
        {"type": "text", "text": "Let me look."},
        {"type": "thinking", "thinking": "Second.", "signature": "sig-2"},
        {"type": "tool_use", "id": "c1", "name": "read", "input": {}},
    ]
    assert out[2]["content"][0]["type"] == "tool_result"


def test_thinking_of_an_older_pitui_session_counts_as_the_models_own() -> None:
    out = claude([user("q"), _thinking_reply(api="litellm")])
    assert out[1]["content"][0] == {
        "type": "thinking",
        "thinking": "Let me think.",
        "signature": "sig-1",
    }


@pytest.mark.parametrize(
    ("stored", "model"),
    [
        (_thinking_reply(), CHAT),
        (_thinking_reply(model="claude-opus-4-5"), CLAUDE),
        (_thinking_reply(provider="openai", api="openai-completions"), CLAUDE),
        (_thinking_reply(), "mistral/mistral-large-latest"),  # litellm's route
    ],
)
def test_thinking_never_goes_to_another_model(stored: dict[str, Any], model: str) -> None:
    out = claude([user("q"), stored]) if model == CLAUDE else chat([user("q"), stored], model)
    assert "Let me think." not in json.dumps(out) and "sig-1" not in json.dumps(out)
    assert "Answer." in json.dumps(out)


def test_unsigned_thinking_not_forwarded() -> None:
    out = claude([user("q"), _thinking_reply(signature=None)])
    assert out[1]["content"] == [{"type": "text", "text": "Answer."}]


def test_thinking_only_assistant_is_not_sent_as_empty_message() -> None:
    block = {"type": "thinking", "thinking": "hmm", "thinkingSignature": "s"}
    out = claude([user("q"), assistant(block, **OWN_CLAUDE)])
    assert [m["role"] for m in out] == ["user"]


def test_redacted_thinking_forwarded_with_data() -> None:
    block = {
        "type": "thinking",
        "thinking": "[Reasoning redacted]",
        "thinkingSignature": "OPAQUE",
        "redacted": True,
    }
    out = claude([user("q"), assistant(block, text("Answer."), **OWN_CLAUDE)])
    assert out[1]["content"] == [
        {"type": "redacted_thinking", "data": "OPAQUE"},
        {"type": "text", "text": "Answer."},
    ]


def test_claude_tool_call_ids_are_made_valid_for_anthropic_and_stay_paired() -> None:
    odd = "call_abc|fc_123.x"  # an OpenAI Responses id, refused by Anthropic's pattern
    reply = assistant(call(odd), stopReason="toolUse", provider="openai", model="gpt-5")
    out = claude([user("q"), reply, result(odd, text("done"))])
    use = out[1]["content"][0]
    assert use["type"] == "tool_use" and use["id"] == "call_abc_fc_123_x"
    assert out[2]["content"][0]["tool_use_id"] == use["id"]


def test_claude_tool_results_of_one_turn_are_one_user_message() -> None:
    reply = assistant(call("a"), call("b"), stopReason="toolUse", **OWN_CLAUDE)
    out = claude([user("q"), reply, result("a", text("A")), result("b", text("B"), is_error=True)])
    assert [m["role"] for m in out] == ["user", "assistant", "user"]
    assert out[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "a", "content": [{"type": "text", "text": "A"}]},
        {
            "type": "tool_result",
            "tool_use_id": "b",
            "content": [{"type": "text", "text": "B"}],
            "is_error": True,
        },
    ]


def test_claude_images_of_an_error_result_follow_the_results() -> None:
    reply = assistant(call("a"), stopReason="toolUse", **OWN_CLAUDE)
    out = claude([user("q"), reply, result("a", text("bad"), image("IMG"), is_error=True)])
    blocks = out[2]["content"]
    assert blocks[0]["content"] == [
        {"type": "text", "text": "bad\n(image attached after the tool results)"}
    ]
    assert blocks[-1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "IMG"},
    }


def test_ollama_thinking_goes_back_in_the_field_it_came_in() -> None:
    block = {"type": "thinking", "thinking": "Hmm.", "thinkingSignature": "reasoning"}
    own = {"provider": "ollama", "model": "qwen3", "api": "openai-completions"}
    out = chat([user("q"), assistant(block, text("A."), **own)], "ollama/qwen3")
    assert out[1] == {"role": "assistant", "content": "A.", "reasoning": "Hmm."}
    other = chat([user("q"), assistant(block, text("A."), **own)], "ollama/llama3")
    assert other[1] == {"role": "assistant", "content": "A."}


# ---------------------------------------------------------------------------------------------
# Tools


def test_tool_declarations_shape() -> None:
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
    call = call_for([user("hi")], CHAT, declarations)
    assert openai_completions.tools(call) == [
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
    tools = anthropic_messages.request(call_for([user("hi")], CLAUDE, declarations)).body["tools"]
    assert [t["name"] for t in tools] == ["read", "noop"]
    assert tools[0]["input_schema"] == declarations[0]["parameters"]  # type: ignore[index]


def test_no_tools() -> None:
    assert openai_completions.tools(call_for([user("hi")])) == []


def test_responses_call_ids_fit_chat_completions_and_stay_paired() -> None:
    long = "call_abc|fc_" + "x" * 400
    other = "call_abc|fc_" + "y" * 400  # same call_id, another item: must stay apart
    reply = assistant(call(long), call(other), stop="toolUse", provider="openai", model="gpt-5")
    out = chat([user("q"), reply, result(long, text("A")), result(other, text("B"))])
    ids = [c["id"] for c in out[1]["tool_calls"]]
    assert all(len(i) <= 40 for i in ids) and len(set(ids)) == 2
    assert [m["tool_call_id"] for m in out[2:4]] == ids
    short = chat([user("q"), assistant(call("call_1|fc_2"), stop="toolUse"), result("call_1|fc_2")])
    assert short[1]["tool_calls"][0]["id"] == "call_1_fc_2"
