"""The local OpenRouter speaks its chat-completions dialect (reasoning_details, usage.cost)
through litellm's openrouter path and refuses a Claude continuation without its reasoning."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from support.providers.openrouter import API_KEY, OpenRouterServer, reply

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run",
            "parameters": {"type": "object", "properties": {}},
        },
    }
]
REASONING = {"extra_body": {"reasoning": {"effort": "high"}}}


def call(server: OpenRouterServer, messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    from pitui.llm.lazy import litellm

    async def run() -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": "openrouter/anthropic/claude-sonnet-4.5",
            "api_base": server.api_base,
            "api_key": API_KEY,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_retries": 0,
            "tools": TOOLS,
            **extra,
        }
        response = await litellm().acompletion(**kwargs)
        out: dict[str, Any] = {"reasoning": "", "details": [], "text": "", "calls": []}
        async for chunk in response:
            if getattr(chunk, "usage", None) is not None:
                out["usage"] = chunk.usage
            if not chunk.choices:
                continue
            delta = chunk.choices[0].delta
            out["reasoning"] += getattr(delta, "reasoning_content", None) or ""
            out["details"] += getattr(delta, "reasoning_details", None) or []
            out["text"] += delta.content or ""
            out["calls"] += [t.model_dump() for t in delta.tool_calls or []]
        return out

    return asyncio.run(run())


def test_reasoning_details_and_reported_cost(openrouter: OpenRouterServer) -> None:
    openrouter.script(reply("Looking.", "I should list.", [("bash", {})]))
    out = call(openrouter, [{"role": "user", "content": "hi"}], **REASONING)
    assert out["reasoning"] == "I should list."
    assert "".join(d["text"] for d in out["details"]) == "I should list."
    assert out["details"][-1]["signature"] == openrouter.sign("I should list.")
    assert out["usage"].cost > 0
    body = openrouter.last.body
    assert openrouter.last.path == "/api/v1/chat/completions"
    assert body["reasoning"] == {"effort": "high"} and body["usage"] == {"include": True}


def test_claude_continuation_without_reasoning_details_is_a_permanent_400(
    openrouter: OpenRouterServer,
) -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": "Looking.",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
    ]
    with pytest.raises(Exception) as caught:
        call(openrouter, messages, **REASONING)
    assert getattr(caught.value, "status_code", None) == 400
    assert "Provider returned error" in str(caught.value)
    assert "Expected `thinking` or `redacted_thinking`" in str(caught.value)
    details = [
        {
            "type": "reasoning.text",
            "text": "I should list.",
            "signature": openrouter.sign("I should list."),
            "index": 0,
        }
    ]
    messages[1]["reasoning_details"] = details
    openrouter.script(reply("Done."))
    assert call(openrouter, messages, **REASONING)["text"] == "Done."
    details[0]["text"] = "Something else."
    with pytest.raises(Exception, match="Invalid `signature`"):
        call(openrouter, messages, **REASONING)
