"""The local OpenAI Responses server speaks the protocol through litellm's Responses bridge and
refuses what the real API refuses."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from support.providers.openai_responses import (
    API_KEY,
    FunctionCall,
    Message,
    Reasoning,
    ResponsesServer,
    rate_limited,
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
OPTIONS = {
    "store": False,
    "include": ["reasoning.encrypted_content"],
    "reasoning_effort": {"effort": "high", "summary": "auto"},
}


def call(server: ResponsesServer, messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    from pitui.llm.lazy import litellm

    async def run() -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": "openai/responses/gpt-5-codex",
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
        out: dict[str, Any] = {
            "reasoning": "",
            "text": "",
            "calls": [],
            "items": [],
            "finish": None,
        }
        async for chunk in response:
            if getattr(chunk, "usage", None) is not None:
                out["usage"] = chunk.usage
            if not chunk.choices:
                continue
            delta = chunk.choices[0].delta
            out["reasoning"] += getattr(delta, "reasoning_content", None) or ""
            out["text"] += delta.content or ""
            out["items"] += [dict(i) for i in getattr(delta, "reasoning_items", None) or []]
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
            if chunk.choices[0].finish_reason:
                out["finish"] = chunk.choices[0].finish_reason
        return out

    return asyncio.run(run())


def start(responses: ResponsesServer) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    responses.script(
        reply(
            Reasoning("List the folder first."),
            Message("Looking."),
            FunctionCall("bash", {"command": "ls"}),
        )
    )
    messages: list[dict[str, Any]] = [{"role": "user", "content": "what is here?"}]
    return messages, call(responses, messages, **OPTIONS)


def follow_up(first: dict[str, Any], items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "what is here?"},
        {
            "role": "assistant",
            "content": first["text"],
            "tool_calls": first["calls"],
            "reasoning_items": items,
        },
        {"role": "tool", "tool_call_id": first["calls"][0]["id"], "content": "a.txt"},
    ]


def test_streams_reasoning_summary_text_and_function_calls(responses: ResponsesServer) -> None:
    _, first = start(responses)
    assert first["reasoning"] == "List the folder first."
    assert first["text"] == "Looking."
    assert first["finish"] == "tool_calls"
    (item,) = first["items"]
    assert item["id"].startswith("rs_") and responses.decrypt(item["encrypted_content"])
    body = responses.last.body
    assert responses.last.path == "/v1/responses"
    assert body["store"] is False and body["include"] == ["reasoning.encrypted_content"]
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}


def test_encrypted_reasoning_only_when_included(responses: ResponsesServer) -> None:
    responses.script(reply(Reasoning("Hidden."), Message("Hi.")))
    out = call(responses, [{"role": "user", "content": "hi"}])
    assert [i.get("encrypted_content") for i in out["items"]] == [None]


def test_replayed_reasoning_is_accepted(responses: ResponsesServer) -> None:
    _, first = start(responses)
    responses.script(reply(Message("Two files.")))
    second = call(responses, follow_up(first, first["items"]), **OPTIONS)
    assert second["text"] == "Two files."
    sent = responses.last.body["input"]
    assert [i.get("type") for i in sent][1:] == [
        "reasoning",
        "message",
        "function_call",
        "function_call_output",
    ]
    assert sent[1]["encrypted_content"] == first["items"][0]["encrypted_content"]


def test_reasoning_by_id_without_store_is_not_found(responses: ResponsesServer) -> None:
    _, first = start(responses)
    bare = [{"type": "reasoning", "id": first["items"][0]["id"], "summary": []}]
    with pytest.raises(Exception, match="Items are not persisted when `store` is set to false"):
        call(responses, follow_up(first, bare), **OPTIONS)


def test_tampered_encrypted_reasoning_is_refused(responses: ResponsesServer) -> None:
    _, first = start(responses)
    item = dict(first["items"][0])
    item["encrypted_content"] = item["encrypted_content"][:-6] + "AAAAAA"
    with pytest.raises(Exception, match="could not be decrypted or parsed"):
        call(responses, follow_up(first, [item]), **OPTIONS)


def test_unpaired_function_call_output_is_refused(responses: ResponsesServer) -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "ok"},
        {"role": "tool", "tool_call_id": "call_ghost", "content": "x"},
    ]
    with pytest.raises(Exception, match="No tool call found for function call output"):
        call(responses, messages)


def test_wrong_key_and_rate_limit(responses: ResponsesServer) -> None:
    with pytest.raises(Exception, match="Incorrect API key provided") as wrong:
        call(responses, [{"role": "user", "content": "hi"}], api_key="sk-wrong")
    assert type(wrong.value).__name__ == "AuthenticationError"
    responses.script(rate_limited(3))
    with pytest.raises(Exception) as limited:
        call(responses, [{"role": "user", "content": "hi"}])
    assert type(limited.value).__name__ == "RateLimitError"
    assert limited.value.litellm_response_headers["retry-after"] == "3"  # type: ignore[attr-defined]


def test_incomplete_reply_is_length(responses: ResponsesServer) -> None:
    responses.script(reply(Message("cut"), incomplete="max_output_tokens"))
    assert call(responses, [{"role": "user", "content": "hi"}])["finish"] == "length"
