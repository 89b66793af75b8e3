"""The local OpenAI Responses server speaks the protocol to pitui's own Responses code
(:mod:`pitui.llm.apis.openai_responses`, through :func:`pitui.llm.stream.stream_reply`) and
refuses what the real API refuses; pitui's requests pass those checks."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from pitui.llm.call import CallOptions
from pitui.llm.errors import ProviderError, classify
from pitui.llm.models import ModelRef, model_info
from pitui.llm.reply import ReplyBuilder
from pitui.llm.routes import OPENAI_RESPONSES, route
from pitui.llm.stream import stream_reply
from pitui.llm.transport import HttpRequest, open_stream
from support.providers.openai_responses import (
    API_KEY,
    FunctionCall,
    Message,
    Reasoning,
    ResponsesServer,
    rate_limited,
    reply,
)

MODEL = "openai/gpt-5-codex"
TOOLS = [
    {
        "name": "bash",
        "description": "Run a command",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
    }
]


def call(
    server: ResponsesServer,
    messages: list[dict[str, Any]],
    *,
    thinking: str = "high",
    key: str = API_KEY,
    model: str = MODEL,
) -> dict[str, Any]:
    """One streamed call through pitui's provider code; the message pitui would store."""
    info = model_info(ModelRef.parse(model))
    builder = ReplyBuilder(info, route(info, server.api_base, OPENAI_RESPONSES))
    options = CallOptions(api_base=server.api_base, api_key=key, thinking=thinking)

    async def run() -> None:
        await stream_reply(info, messages, TOOLS, options, builder, lambda event: None)

    asyncio.run(run())
    return builder.message()


def post(server: ResponsesServer, body: dict[str, Any]) -> None:
    """A hand-written body, sent with pitui's transport (for what pitui itself never sends)."""

    async def run() -> None:
        request = HttpRequest(
            f"{server.api_base}/responses", {"authorization": f"Bearer {API_KEY}"}, body
        )
        async with open_stream(request) as lines:
            async for _ in lines:
                pass

    asyncio.run(run())


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def result(call_id: str, text: str = "a.txt") -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "bash",
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 2,
    }


def start(responses: ResponsesServer) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    responses.script(
        reply(
            Reasoning("List the folder first."),
            Message("Looking."),
            FunctionCall("bash", {"command": "ls"}),
        )
    )
    messages = [user("what is here?")]
    return messages, call(responses, messages)


def follow_up(first: dict[str, Any]) -> list[dict[str, Any]]:
    calls = [b for b in first["content"] if b["type"] == "toolCall"]
    return [user("what is here?"), first, result(calls[0]["id"])]


def stored_item(message: dict[str, Any]) -> dict[str, Any]:
    thinking = next(b for b in message["content"] if b["type"] == "thinking")
    item = json.loads(thinking["thinkingSignature"])
    assert isinstance(item, dict)
    return item


def test_streams_reasoning_summary_text_and_function_calls(responses: ResponsesServer) -> None:
    _, first = start(responses)
    thinking, text, tool = first["content"]
    assert thinking["thinking"] == "List the folder first."
    assert (text["type"], text["text"]) == ("text", "Looking.")
    assert (tool["name"], tool["arguments"]) == ("bash", {"command": "ls"})
    assert first["stopReason"] == "toolUse"
    item = stored_item(first)
    assert list(item) == ["id", "type", "encrypted_content", "summary"]  # as pitui always stored
    assert item["id"].startswith("rs_") and responses.decrypt(item["encrypted_content"])
    request = responses.last
    assert request.path == "/v1/responses"
    assert request.header("authorization") == f"Bearer {API_KEY}"
    body = request.body
    assert body["store"] is False and body["include"] == ["reasoning.encrypted_content"]
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert body["stream"] is True and body["max_output_tokens"] > 100_000
    assert body["tools"] == [{"type": "function", **TOOLS[0], "strict": False}]
    assert body["input"] == [
        {"role": "user", "content": [{"type": "input_text", "text": "what is here?"}]}
    ]


def test_usage_and_no_effort_when_thinking_is_off(responses: ResponsesServer) -> None:
    responses.script(reply(Message("Hi.")))
    message = call(responses, [user("hi")], thinking="off")
    assert message["usage"]["input"] > 0 and message["usage"]["cacheRead"] == 0
    assert message["usage"]["output"] > 0
    assert "reasoning" not in responses.last.body  # thinking off: no effort is asked for


def test_encrypted_reasoning_only_when_included(responses: ResponsesServer) -> None:
    responses.script(reply(Reasoning("Hidden."), Message("Hi.")))
    post(responses, {"model": "gpt-5-codex", "input": "hi", "stream": True})
    assert "encrypted_content" not in responses.outputs[-1][0]
    responses.script(reply(Reasoning("Shown."), Message("Hi.")))
    message = call(responses, [user("hi")])
    assert responses.decrypt(stored_item(message)["encrypted_content"])


def test_replayed_reasoning_is_accepted(responses: ResponsesServer) -> None:
    _, first = start(responses)
    responses.script(reply(Message("Two files.")))
    second = call(responses, follow_up(first))
    assert second["content"][-1]["text"] == "Two files."
    sent = responses.last.body["input"]
    assert [i.get("type") for i in sent][1:] == [
        "reasoning",
        "message",
        "function_call",
        "function_call_output",
    ]
    produced = responses.outputs[0]
    # Every item goes back with the id it was produced with, in the order it was produced.
    assert [i.get("id") for i in sent[1:4]] == [i["id"] for i in produced]
    assert sent[1]["encrypted_content"] == stored_item(first)["encrypted_content"]
    assert sent[3]["call_id"] == sent[4]["call_id"] == produced[2]["call_id"]


def test_a_tool_loop_with_reasoning_passes_the_pairing_checks(responses: ResponsesServer) -> None:
    """Three rounds: reasoning before a message and calls, reasoning alone before a call, and
    two reasoning items in one reply; every request pitui sends is accepted."""
    messages = [user("look around")]
    responses.script(
        reply(Reasoning("First."), Message("Looking."), FunctionCall("bash", {"command": "ls"})),
        reply(
            Reasoning("Second."),
            FunctionCall("bash", {"command": "pwd"}),
            FunctionCall("bash", {"command": "id"}),
        ),
        reply(Reasoning("Third."), Reasoning("Fourth."), Message("Done.")),
        reply(Message("Bye.")),
    )
    for _ in range(3):
        message = call(responses, messages)
        assert message["stopReason"] != "error", message
        messages.append(message)
        for block in message["content"]:
            if block["type"] == "toolCall":
                messages.append(result(block["id"]))
    messages.append(user("thanks"))
    assert call(responses, messages)["content"][-1]["text"] == "Bye."
    sent = responses.last.body["input"]
    reasoning = [i for i in sent if i.get("type") == "reasoning"]
    assert len(reasoning) == 4 and all(i["id"].startswith("rs_") for i in reasoning)
    assert [i.get("id") for i in sent if i.get("type") == "function_call"] == [
        i["id"] for out in responses.outputs[:2] for i in out if i["type"] == "function_call"
    ]


def test_a_reasoning_item_without_its_following_item_is_refused(
    responses: ResponsesServer,
) -> None:
    _, first = start(responses)
    item = stored_item(first)
    # What litellm sent: the reasoning item with its id, then the message and the call without.
    body = {
        "model": "gpt-5-codex",
        "store": False,
        "input": [
            {"role": "user", "content": "what is here?"},
            item,
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Looking."}],
            },
            {"type": "function_call", "call_id": "call_x", "name": "bash", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_x", "output": "a.txt"},
        ],
    }
    with pytest.raises(ProviderError) as refused:
        post(responses, body)
    assert refused.value.status == 400
    assert str(refused.value) == (
        f"Item '{item['id']}' of type 'reasoning' was provided without its required following item."
    )
    assert classify(refused.value).kind == "other"  # not retried


def test_a_function_call_without_its_reasoning_item_is_refused(responses: ResponsesServer) -> None:
    responses.script(reply(Reasoning("Think."), FunctionCall("bash", {"command": "ls"})))
    first = call(responses, [user("go")])
    (tool,) = [b for b in first["content"] if b["type"] == "toolCall"]
    call_id, item_id = tool["id"].split("|")
    body = {
        "model": "gpt-5-codex",
        "store": False,
        "input": [
            {"role": "user", "content": "go"},
            {
                "type": "function_call",
                "id": item_id,
                "call_id": call_id,
                "name": "bash",
                "arguments": "{}",
            },
            {"type": "function_call_output", "call_id": call_id, "output": "a.txt"},
        ],
    }
    with pytest.raises(ProviderError) as refused:
        post(responses, body)
    reasoning = stored_item(first)["id"]
    assert str(refused.value) == (
        f"Item '{item_id}' of type 'function_call' was provided without its required "
        f"'reasoning' item: '{reasoning}'."
    )


def test_a_reply_of_another_model_goes_back_without_ids(responses: ResponsesServer) -> None:
    """Its reasoning is dropped (it only verifies for its own model), so the item ids that
    were paired with that reasoning must not be sent either."""
    responses.script(reply(Reasoning("Think."), FunctionCall("bash", {"command": "ls"})))
    first = call(responses, [user("go")])
    responses.script(reply(Message("Done.")))
    later = call(responses, follow_up(first), model="openai/gpt-5.1-codex")
    assert later["content"][-1]["text"] == "Done."
    sent = responses.last.body["input"]
    assert [i.get("type") for i in sent] == [None, "function_call", "function_call_output"]
    assert "id" not in sent[1] and sent[1]["call_id"] == sent[2]["call_id"]


def test_a_session_stored_before_item_ids_replays(responses: ResponsesServer) -> None:
    """Older pitui versions stored a tool call's id as the bare call_id and text without its
    item id: those replies go back without any item id (the encrypted content carries the
    reasoning), which the API accepts."""
    _, first = start(responses)
    old = json.loads(json.dumps(first))
    for block in old["content"]:
        block.pop("textSignature", None)
        if block["type"] == "toolCall":
            block["id"] = block["id"].split("|")[0]
    responses.script(reply(Message("Two files.")))
    second = call(responses, [user("what is here?"), old, result(old["content"][2]["id"])])
    assert second["content"][-1]["text"] == "Two files."
    sent = responses.last.body["input"][1:4]
    assert [i["type"] for i in sent] == ["reasoning", "message", "function_call"]
    assert not [i for i in sent if "id" in i]
    assert responses.decrypt(sent[0]["encrypted_content"])


def test_reasoning_by_id_without_store_is_not_found(responses: ResponsesServer) -> None:
    _, first = start(responses)
    bare = {"type": "reasoning", "id": stored_item(first)["id"], "summary": []}
    with pytest.raises(ProviderError, match="Items are not persisted when `store` is set to false"):
        post(responses, {"model": "gpt-5-codex", "store": False, "input": [bare]})
    # pitui never sends such an item: a reasoning item without its content is left out.
    block = next(b for b in first["content"] if b["type"] == "thinking")
    unsent = {k: v for k, v in stored_item(first).items() if k != "encrypted_content"}
    block["thinkingSignature"] = json.dumps(unsent)
    responses.script(reply(Message("Two files.")))
    assert call(responses, follow_up(first))["stopReason"] == "stop"
    assert not [i for i in responses.last.body["input"] if i.get("type") == "reasoning"]
    assert not [i for i in responses.last.body["input"] if "id" in i]


def test_tampered_encrypted_reasoning_is_refused(responses: ResponsesServer) -> None:
    _, first = start(responses)
    block = next(b for b in first["content"] if b["type"] == "thinking")
    item = stored_item(first)
    item["encrypted_content"] = item["encrypted_content"][:-6] + "AAAAAA"
    block["thinkingSignature"] = json.dumps(item)
    with pytest.raises(ProviderError, match="could not be decrypted or parsed") as refused:
        call(responses, follow_up(first))
    assert refused.value.status == 400


def test_unpaired_function_call_output_is_refused(responses: ResponsesServer) -> None:
    body = {
        "model": "gpt-5-codex",
        "input": [
            {"role": "user", "content": "hi"},
            {"type": "function_call_output", "call_id": "call_ghost", "output": "x"},
        ],
    }
    with pytest.raises(ProviderError, match="No tool call found for function call output"):
        post(responses, body)


def test_wrong_key_and_rate_limit(responses: ResponsesServer) -> None:
    with pytest.raises(ProviderError, match="Incorrect API key provided") as wrong:
        call(responses, [user("hi")], key="sk-wrong")
    assert wrong.value.status == 401 and classify(wrong.value).kind == "auth"
    responses.script(rate_limited(3))
    with pytest.raises(ProviderError) as limited:
        call(responses, [user("hi")])
    assert limited.value.status == 429 and limited.value.retry_after == 3
    assert str(limited.value).startswith("Rate limit reached for gpt-5-codex")
    assert classify(limited.value).kind == "retryable"


def test_incomplete_reply_is_length(responses: ResponsesServer) -> None:
    responses.script(reply(Message("cut"), incomplete="max_output_tokens"))
    message = call(responses, [user("hi")])
    assert message["stopReason"] == "length" and message["content"][-1]["text"] == "cut"
