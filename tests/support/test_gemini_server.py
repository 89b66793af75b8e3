"""The local Gemini server speaks streamGenerateContent through litellm's real code path and
refuses what the real API refuses."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from support.providers.gemini import (
    API_KEY,
    Call,
    GeminiServer,
    Text,
    Thought,
    quota_exceeded,
    reply,
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


def call(server: GeminiServer, messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    from pitui.llm.lazy import litellm

    async def run() -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": "gemini/gemini-2.5-pro",
            "api_base": server.api_base,
            "api_key": API_KEY,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_retries": 0,
            "tools": TOOLS,
            "reasoning_effort": "high",
            **extra,
        }
        response = await litellm().acompletion(**kwargs)
        out: dict[str, Any] = {"reasoning": "", "text": "", "calls": [], "finish": None}
        async for chunk in response:
            if getattr(chunk, "usage", None) is not None:
                out["usage"] = chunk.usage
            if not chunk.choices:
                continue
            delta = chunk.choices[0].delta
            out["reasoning"] += getattr(delta, "reasoning_content", None) or ""
            out["text"] += delta.content or ""
            for tool in delta.tool_calls or []:
                out["calls"].append(tool.model_dump())
            if chunk.choices[0].finish_reason:
                out["finish"] = chunk.choices[0].finish_reason
        return out

    return asyncio.run(run())


def start(gemini: GeminiServer) -> dict[str, Any]:
    gemini.script(
        reply(Thought("List the folder."), Text("Looking."), Call("bash", {"command": "ls"}))
    )
    return call(gemini, [{"role": "user", "content": "what is here?"}])


def continuation(first: dict[str, Any], fields: dict[str, Any] | None) -> list[dict[str, Any]]:
    tool = first["calls"][0]
    sent: dict[str, Any] = {
        "id": tool["id"].split("__thought__")[0],
        "type": "function",
        "function": {"name": "bash", "arguments": tool["function"]["arguments"]},
    }
    if fields is not None:
        sent["provider_specific_fields"] = fields
    return [
        {"role": "user", "content": "what is here?"},
        {"role": "assistant", "content": first["text"], "tool_calls": [sent]},
        {"role": "tool", "tool_call_id": sent["id"], "content": "a.txt"},
    ]


def test_streams_thoughts_text_and_a_signed_function_call(gemini: GeminiServer) -> None:
    first = start(gemini)
    assert first["reasoning"] == "List the folder."
    assert first["text"] == "Looking."
    signature = first["calls"][0]["provider_specific_fields"]["thought_signature"]
    assert gemini.verify("bash", {"command": "ls"}, signature)
    assert first["finish"] == "tool_calls"
    request = gemini.last
    assert request.path == "/models/gemini-2.5-pro:streamGenerateContent"
    assert request.query == {"alt": "sse"} and request.header("x-goog-api-key") == API_KEY
    thinking = request.body["generationConfig"]["thinkingConfig"]
    assert thinking["includeThoughts"] is True


def test_the_signed_call_goes_back_with_its_signature(gemini: GeminiServer) -> None:
    first = start(gemini)
    signature = first["calls"][0]["provider_specific_fields"]["thought_signature"]
    gemini.script(reply(Text("Two files.")))
    out = call(gemini, continuation(first, {"thought_signature": signature}))
    assert out["text"] == "Two files."
    parts = gemini.last.body["contents"][1]["parts"]
    assert parts[-1]["thoughtSignature"] == signature


def test_a_missing_or_corrupted_signature_is_refused(gemini: GeminiServer) -> None:
    first = start(gemini)
    with pytest.raises(Exception, match="missing a thought_signature"):
        call(gemini, continuation(first, None))
    with pytest.raises(Exception, match="Corrupted thought signature"):
        call(gemini, continuation(first, {"thought_signature": "AAAA" + "B" * 40}))


def test_function_responses_must_answer_a_call_turn(gemini: GeminiServer) -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "ok"},
        {"role": "tool", "tool_call_id": "x", "content": "a", "name": "bash"},
    ]
    with pytest.raises(Exception, match="function response turn comes immediately after"):
        call(gemini, messages)


def test_finish_reasons(gemini: GeminiServer) -> None:
    gemini.script(
        reply(Text("nope"), finish_reason="SAFETY"),
        reply(Text("cut"), finish_reason="MAX_TOKENS"),
        reply(Text("x"), finish_reason="MALFORMED_FUNCTION_CALL"),
    )
    assert call(gemini, [{"role": "user", "content": "a"}])["finish"] == "content_filter"
    assert call(gemini, [{"role": "user", "content": "b"}])["finish"] == "length"
    malformed = call(gemini, [{"role": "user", "content": "c"}])
    assert malformed["text"] == "" and malformed["calls"] == []


def test_quota_429_carries_retry_info(gemini: GeminiServer) -> None:
    gemini.script(quota_exceeded(7.5))
    with pytest.raises(Exception) as caught:
        call(gemini, [{"role": "user", "content": "hi"}])
    assert getattr(caught.value, "status_code", None) == 429
    assert "RESOURCE_EXHAUSTED" in str(caught.value) and '"retryDelay": "7.5s"' in str(caught.value)


def test_bad_key_and_output_range(gemini: GeminiServer) -> None:
    with pytest.raises(Exception, match="API key not valid"):
        call(gemini, [{"role": "user", "content": "hi"}], api_key="wrong")
    with pytest.raises(Exception, match="supported range is from 1"):
        call(gemini, [{"role": "user", "content": "hi"}], max_tokens=128_000)
    assert (
        json.loads(json.dumps(gemini.requests[-1].body))["generationConfig"]["max_output_tokens"]
        == 128_000
    )
