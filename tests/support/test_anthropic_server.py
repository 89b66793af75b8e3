"""The local Anthropic Messages server speaks the protocol (through litellm's real code path) and
refuses what the real API refuses."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from support.providers.anthropic import (
    API_KEY,
    AnthropicServer,
    Redacted,
    Text,
    Thinking,
    ToolUse,
    overloaded,
    rate_limited,
    reply,
    text,
)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a command",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]


@pytest.fixture(scope="module")
def server() -> Iterator[AnthropicServer]:
    with AnthropicServer(min_cache_tokens=1) as running:
        yield running


@pytest.fixture
def claude(server: AnthropicServer) -> AnthropicServer:
    server.reset()
    return server


def litellm_module() -> Any:
    from pitui.llm.lazy import litellm

    return litellm()


def call(server: AnthropicServer, messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """One streamed call; the reply's blocks as litellm delivered them (index order)."""

    async def run() -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": "anthropic/claude-sonnet-4-5",
            "api_base": server.base_url,
            "api_key": API_KEY,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": 8000,
            "max_retries": 0,
            "tools": TOOLS,
        }
        kwargs.update(extra)
        response = await litellm_module().acompletion(**kwargs)
        blocks: dict[int, dict[str, Any]] = {}
        out: dict[str, Any] = {"text": "", "calls": [], "usage": None, "finish": None}
        async for chunk in response:
            if getattr(chunk, "usage", None) is not None:
                out["usage"] = chunk.usage
            if not chunk.choices:
                continue
            choice = chunk.choices[0]
            delta = choice.delta
            for block in getattr(delta, "thinking_blocks", None) or []:
                entry = blocks.setdefault(block["index"], {"type": block["type"]})
                if block["type"] == "redacted_thinking":
                    entry["data"] = block["data"]
                else:
                    entry["thinking"] = entry.get("thinking", "") + (block.get("thinking") or "")
                    if block.get("signature"):
                        entry["signature"] = block["signature"]
            out["text"] += delta.content or ""
            for tool in delta.tool_calls or []:
                if tool.id:
                    out["calls"].append(
                        {
                            "id": tool.id,
                            "type": "function",
                            "function": {"name": tool.function.name, "arguments": ""},
                        }
                    )
                if tool.function.arguments:
                    out["calls"][-1]["function"]["arguments"] += tool.function.arguments
            if choice.finish_reason:
                out["finish"] = choice.finish_reason
        out["thinking"] = [blocks[i] for i in sorted(blocks)]
        return out

    return asyncio.run(run())


def error_of(server: AnthropicServer, messages: list[dict[str, Any]], **extra: Any) -> Exception:
    with pytest.raises(Exception) as caught:
        call(server, messages, **extra)
    return caught.value


THINK = {"thinking": {"type": "enabled", "budget_tokens": 2048}}


def tool_loop_start(claude: AnthropicServer) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    claude.script(
        reply(
            Thinking("I should list the files."),
            Redacted(),
            Text("Let me look."),
            Thinking("Then read one."),
            ToolUse("bash", {"command": "ls"}),
        )
    )
    messages: list[dict[str, Any]] = [{"role": "user", "content": "what is here?"}]
    return messages, call(claude, messages, **THINK)


def continuation(
    first: dict[str, Any], content: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    thinking = first["thinking"]
    blocks = (
        content
        if content is not None
        else [
            thinking[0],
            thinking[1],
            {"type": "text", "text": first["text"]},
            thinking[2],
        ]
    )
    return [
        {"role": "user", "content": "what is here?"},
        {"role": "assistant", "content": blocks, "tool_calls": first["calls"]},
        {"role": "tool", "tool_call_id": first["calls"][0]["id"], "content": "a.txt"},
    ]


def test_streams_signed_thinking_redacted_text_and_tool_use(claude: AnthropicServer) -> None:
    _, first = tool_loop_start(claude)
    kinds = [b["type"] for b in first["thinking"]]
    assert kinds == ["thinking", "redacted_thinking", "thinking"]
    assert first["thinking"][0]["thinking"] == "I should list the files."
    assert claude.verify("I should list the files.", first["thinking"][0]["signature"])
    assert first["text"] == "Let me look."
    assert json.loads(first["calls"][0]["function"]["arguments"]) == {"command": "ls"}
    assert first["finish"] == "tool_calls"
    raw = claude.last.body
    assert raw["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert claude.last.path == "/v1/messages" and claude.last.header("x-api-key") == API_KEY


def test_an_unmodified_continuation_in_the_original_order_is_accepted(
    claude: AnthropicServer,
) -> None:
    _, first = tool_loop_start(claude)
    claude.script(text("Two files."))
    second = call(claude, continuation(first), **THINK)
    assert second["text"] == "Two files."
    sent = claude.last.body["messages"][1]["content"]
    assert [b["type"] for b in sent] == [
        "thinking",
        "redacted_thinking",
        "text",
        "thinking",
        "tool_use",
    ]


def test_a_modified_thinking_text_is_refused(claude: AnthropicServer) -> None:
    _, first = tool_loop_start(claude)
    tampered = continuation(first)
    tampered[1]["content"][0] = {**tampered[1]["content"][0], "thinking": "I changed this."}
    error = error_of(claude, tampered, **THINK)
    assert "Invalid `signature` in `thinking` block" in str(error)
    assert getattr(error, "status_code", None) == 400


def test_thinking_blocks_merged_into_one_are_refused(claude: AnthropicServer) -> None:
    _, first = tool_loop_start(claude)
    merged = {
        "type": "thinking",
        "thinking": first["thinking"][0]["thinking"] + first["thinking"][2]["thinking"],
        "signature": first["thinking"][2]["signature"],
    }
    error = error_of(claude, continuation(first, [merged, {"type": "text", "text": "x"}]), **THINK)
    assert "Invalid `signature`" in str(error)


def test_a_missing_signature_is_refused(claude: AnthropicServer) -> None:
    _, first = tool_loop_start(claude)
    unsigned = {"type": "thinking", "thinking": first["thinking"][0]["thinking"], "signature": ""}
    messages = continuation(first, [unsigned])
    messages[1]["content"] = [{"type": "thinking", "thinking": "x", "signature": "bm9wZQ=="}]
    assert "Invalid `signature`" in str(error_of(claude, messages, **THINK))


def test_a_tool_continuation_without_its_thinking_is_refused(claude: AnthropicServer) -> None:
    _, first = tool_loop_start(claude)
    error = error_of(
        claude, continuation(first, [{"type": "text", "text": "Let me look."}]), **THINK
    )
    assert "Expected `thinking` or `redacted_thinking`, but found `text`" in str(error)


def test_dropping_the_redacted_block_is_refused(claude: AnthropicServer) -> None:
    _, first = tool_loop_start(claude)
    thinking = first["thinking"]
    blocks = [thinking[0], {"type": "text", "text": first["text"]}, thinking[2]]
    error = error_of(claude, continuation(first, blocks), **THINK)
    assert "cannot be modified" in str(error)


def test_unpaired_tool_use_and_tool_result_are_refused(claude: AnthropicServer) -> None:
    lonely_result = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "ok"},
        {"role": "tool", "tool_call_id": "toolu_ghost", "content": "x"},
    ]
    assert "unexpected `tool_use_id`" in str(error_of(claude, lonely_result))


def test_max_tokens_must_exceed_the_budget(claude: AnthropicServer) -> None:
    messages = [{"role": "user", "content": "hi"}]
    error = error_of(
        claude, messages, max_tokens=2048, thinking={"type": "enabled", "budget_tokens": 2048}
    )
    assert "`max_tokens` must be greater than `thinking.budget_tokens`" in str(error)
    small = error_of(claude, messages, thinking={"type": "enabled", "budget_tokens": 512})
    assert "greater than or equal to 1024" in str(small)
    assert "maximum allowed number of output tokens" in str(
        error_of(claude, messages, max_tokens=128_000)
    )


def post(
    server: AnthropicServer, body: dict[str, Any], beta: str | None = None
) -> tuple[int, dict[str, Any]]:
    """A raw request (for what litellm itself never sends); a 200 answer is its raw stream."""
    headers = {"x-api-key": API_KEY, "anthropic-version": "2023-06-01"}
    if beta:
        headers["anthropic-beta"] = beta
    request = urllib.request.Request(
        f"{server.base_url}/v1/messages",
        data=json.dumps(body).encode(),
        headers=headers,
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, {"stream": response.read().decode()}
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.parametrize("model", ["claude-opus-4-7", "claude-sonnet-5", "claude-opus-5-5"])
def test_budget_thinking_is_refused_on_models_that_only_think_adaptively(
    claude: AnthropicServer, model: str
) -> None:
    body = {
        "model": model,
        "max_tokens": 20_000,
        "thinking": {"type": "enabled", "budget_tokens": 16_384},
        "messages": [{"role": "user", "content": "hi"}],
    }
    status, answer = post(claude, body)
    assert status == 400 and "thinking.type.enabled is not supported" in answer["error"]["message"]
    claude.script(text("ok"))
    adaptive = {**body, "thinking": {"type": "adaptive"}, "output_config": {"effort": "high"}}
    assert post(claude, adaptive)[0] == 200


def test_adaptive_thinking_and_unknown_efforts_and_betas_are_refused(
    claude: AnthropicServer,
) -> None:
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 2000,
        "thinking": {"type": "adaptive"},
        "messages": [{"role": "user", "content": "hi"}],
    }
    assert "adaptive is not supported" in post(claude, body)[1]["error"]["message"]
    wild = {**body, "model": "claude-opus-4-7", "output_config": {"effort": "extreme"}}
    assert "output_config.effort" in post(claude, wild)[1]["error"]["message"]
    plain = {k: v for k, v in body.items() if k != "thinking"}
    assert "anthropic-beta" in post(claude, plain, beta="made-up-2099")[1]["error"]["message"]


def test_budget_thinking_after_tool_results_needs_the_interleaved_beta(
    claude: AnthropicServer,
) -> None:
    blocks = [
        {"type": "thinking", "thinking": "List it.", "signature": claude.sign("List it.")},
        {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}},
    ]
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 20_000,
        "thinking": {"type": "enabled", "budget_tokens": 16_384},
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": blocks},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": blocks[1]["id"], "content": "a"}
                ],
            },
        ],
    }
    for beta, thinks in ((None, False), ("interleaved-thinking-2025-05-14", True)):
        claude.script(reply(Thinking("It holds a."), Text("Only a.")))
        status, answer = post(claude, body, beta)
        assert status == 200
        assert ("thinking_delta" in answer["stream"]) is thinks
        assert claude.last.thinking_dropped is not thinks


def test_at_most_four_cache_breakpoints(claude: AnthropicServer) -> None:
    marked = {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": [dict(marked) for _ in range(5)]}],
    }
    status, answer = post(claude, body)
    assert status == 400 and answer["error"]["type"] == "invalid_request_error"
    assert (
        answer["error"]["message"]
        == "A maximum of 4 blocks with cache_control may be provided. Found 5."
    )


def test_missing_max_tokens_and_version(claude: AnthropicServer) -> None:
    status, answer = post(claude, {"model": "claude-sonnet-4-5", "messages": []})
    assert (status, answer["error"]["message"]) == (400, "max_tokens: Field required")


def test_missing_key_and_wrong_key(claude: AnthropicServer) -> None:
    error = error_of(claude, [{"role": "user", "content": "hi"}], api_key="sk-ant-wrong")
    assert type(error).__name__ == "AuthenticationError" and "invalid x-api-key" in str(error)


def test_prompt_too_long_is_litellms_context_window_error() -> None:
    with AnthropicServer(context_window=50) as small:
        error = error_of(small, [{"role": "user", "content": "word " * 400}])
    assert type(error).__name__ == "ContextWindowExceededError"
    assert "prompt is too long" in str(error)


def test_overloaded_rate_limited_and_stream_errors(claude: AnthropicServer) -> None:
    messages = [{"role": "user", "content": "hi"}]
    claude.script(overloaded(), rate_limited(7), reply(Text("partial answer"), error_after=4))
    busy = error_of(claude, messages)
    assert "Overloaded" in str(busy)
    limited = error_of(claude, messages)
    assert type(limited).__name__ == "RateLimitError"
    assert limited.litellm_response_headers["retry-after"] == "7"  # type: ignore[attr-defined]
    cut = error_of(claude, messages)
    assert type(cut).__name__ == "MidStreamFallbackError" and "Overloaded" in str(cut)


def test_cache_reads_the_prefix_the_previous_request_wrote(claude: AnthropicServer) -> None:
    system = {
        "role": "system",
        "content": [
            {"type": "text", "text": "You are terse. " * 50, "cache_control": {"type": "ephemeral"}}
        ],
    }
    question = {
        "role": "user",
        "content": [
            {"type": "text", "text": "Hello " * 40, "cache_control": {"type": "ephemeral"}}
        ],
    }
    claude.script(text("one"), text("two"))
    first = call(claude, [system, question])
    assert first["usage"].cache_creation_input_tokens > 0
    assert first["usage"].cache_read_input_tokens == 0
    follow = {
        "role": "user",
        "content": [{"type": "text", "text": "More " * 40, "cache_control": {"type": "ephemeral"}}],
    }
    plain_question = {"role": "user", "content": [{"type": "text", "text": "Hello " * 40}]}
    second = call(claude, [system, plain_question, {"role": "assistant", "content": "one"}, follow])
    assert second["usage"].cache_read_input_tokens == first["usage"].cache_creation_input_tokens
    assert second["usage"].cache_creation_input_tokens > 0
