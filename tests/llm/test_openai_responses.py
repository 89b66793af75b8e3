"""The ``openai-responses`` module without a network: the request body (history conversion and
item pairing included), stream parsing into the stored message, usage and errors."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from pitui.llm.apis import openai_responses as api
from pitui.llm.call import Call, CallOptions
from pitui.llm.context import Context
from pitui.llm.errors import ProviderError, classify
from pitui.llm.models import ModelInfo, ModelRef, model_info
from pitui.llm.reply import ReplyBuilder, TextDelta, ThinkingDelta, ToolCallDelta
from pitui.llm.routes import OPENAI_RESPONSES, Route, route
from pitui.llm.stream import build_call

BASE = "http://llm.test/v1"
OWN = {"api": "openai-responses", "provider": "openai", "model": "gpt-5-codex"}
ENCRYPTED = "gAAAAAencrypted"


def model(name: str = "openai/gpt-5-codex") -> tuple[ModelInfo, Route]:
    info = model_info(ModelRef.parse(name))
    return info, route(info, BASE, OPENAI_RESPONSES)


def make_call(
    messages: list[dict[str, Any]], *, thinking: str = "high", system: str = "", **options: Any
) -> Call:
    info, target = model()
    return Call(
        info,
        target,
        Context(system, messages, []),
        CallOptions(api_base=BASE, thinking=thinking, **options),
    )


def reasoning_block(item_id: str = "rs_1", text: str = "Think.", **extra: Any) -> dict[str, Any]:
    item = {
        "id": item_id,
        "type": "reasoning",
        "encrypted_content": ENCRYPTED,
        "summary": [{"type": "summary_text", "text": text}],
        **extra,
    }
    return {"type": "thinking", "thinking": text, "thinkingSignature": json.dumps(item)}


def text_block(text: str, item_id: str | None = "msg_1") -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if item_id:
        block["textSignature"] = json.dumps({"v": 1, "id": item_id})
    return block


def call_block(call_id: str = "call_1|fc_1", command: str = "ls") -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": "bash", "arguments": {"command": command}}


def assistant(*blocks: dict[str, Any], **names: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks), **(names or OWN), "stopReason": "stop"}


def tool_result(call_id: str = "call_1|fc_1", text: str = "a.txt", **extra: Any) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "bash",
        "content": [{"type": "text", "text": text}],
        "isError": False,
        **extra,
    }


def user(text: str = "hi") -> dict[str, Any]:
    return {"role": "user", "content": text}


# ------------------------------------------------------------------------------- request


def test_request_body() -> None:
    call = make_call([user()], system="Be brief.", api_key="sk-test")
    call.context.tools.append(
        {"name": "bash", "description": "Run", "parameters": {"type": "object"}}
    )
    request = api.request(call)
    assert request.url == f"{BASE}/responses"
    assert request.headers == {"authorization": "Bearer sk-test"}
    body = request.body
    assert body["model"] == "gpt-5-codex" and body["stream"] is True
    assert body["store"] is False and body["include"] == ["reasoning.encrypted_content"]
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert body["max_output_tokens"] == 128_000
    assert body["tools"] == [
        {
            "type": "function",
            "name": "bash",
            "description": "Run",
            "parameters": {"type": "object"},
            "strict": False,
        }
    ]
    assert body["input"] == [
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
    ]


def test_thinking_off_asks_for_no_effort_but_keeps_the_reasoning_replayable() -> None:
    body = api.request(make_call([user()], thinking="off")).body
    assert "reasoning" not in body
    assert body["include"] == ["reasoning.encrypted_content"] and body["store"] is False


def test_a_model_that_does_not_reason() -> None:
    info = model_info(ModelRef.parse("openai/gpt-4.1"))
    target = route(info, BASE, OPENAI_RESPONSES)
    call = Call(info, target, Context("Sys", [user()], []), CallOptions(thinking="high"))
    body = api.request(call).body
    assert "reasoning" not in body and "include" not in body  # encrypted content is refused
    assert body["input"][0] == {"role": "system", "content": "Sys"}


def test_output_limit_is_at_least_what_the_api_takes() -> None:
    assert api.request(make_call([user()], max_tokens=5)).body["max_output_tokens"] == 16


def test_user_images_and_tool_results() -> None:
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "look"}, image]},
        assistant(call_block("call_1|fc_1"), call_block("call_2|fc_2"), call_block("call_3|fc_3")),
        tool_result("call_1|fc_1", "boom", isError=True),
        {**tool_result("call_2|fc_2"), "content": [image]},
        {**tool_result("call_3|fc_3"), "content": []},
    ]
    items = api.request(make_call(messages)).body["input"]
    url = "data:image/png;base64,AAAA"
    assert items[0] == {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "look"},
            {"type": "input_image", "detail": "auto", "image_url": url},
        ],
    }
    outputs = [i for i in items if i.get("type") == "function_call_output"]
    assert outputs == [
        {"type": "function_call_output", "call_id": "call_1", "output": "Error: boom"},
        {
            "type": "function_call_output",
            "call_id": "call_2",
            "output": [{"type": "input_image", "detail": "auto", "image_url": url}],
        },
        {"type": "function_call_output", "call_id": "call_3", "output": "(no output)"},
    ]


def test_an_own_reply_goes_back_with_every_id_in_order() -> None:
    messages = [
        user(),
        assistant(reasoning_block(), text_block("Looking."), call_block()),
        tool_result(),
    ]
    items = api.request(make_call(messages)).body["input"]
    assert items[1:4] == [
        {
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "Think."}],
            "encrypted_content": ENCRYPTED,
            "id": "rs_1",
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Looking.", "annotations": []}],
            "status": "completed",
            "id": "msg_1",
        },
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "bash",
            "arguments": '{"command": "ls"}',
            "id": "fc_1",
        },
    ]
    assert items[4] == {"type": "function_call_output", "call_id": "call_1", "output": "a.txt"}


@pytest.mark.parametrize(
    "blocks",
    [
        # stored by pitui before item ids were kept: a bare call id, no text signature
        [reasoning_block(), text_block("Looking.", None), call_block("call_1")],
        # a reasoning item without its encrypted content cannot go back (404 with store false)
        [
            {
                **reasoning_block(),
                "thinkingSignature": json.dumps({"id": "rs_1", "type": "reasoning"}),
            },
            text_block("Looking."),
            call_block(),
        ],
        # a reasoning item last: nothing it preceded is sent
        [text_block("Looking."), call_block(), reasoning_block()],
    ],
    ids=["old-pitui", "no-encrypted-content", "reasoning-last"],
)
def test_a_reply_whose_ids_are_not_all_known_goes_back_without_any(
    blocks: list[dict[str, Any]],
) -> None:
    call_id = next(b["id"] for b in blocks if b["type"] == "toolCall")
    messages = [user(), assistant(*blocks), tool_result(call_id)]
    items = api.request(make_call(messages)).body["input"][1:]
    assert not [i for i in items if "id" in i or "status" in i]
    assert [i["type"] for i in items if i["type"] == "function_call"] == ["function_call"]
    assert all(i["call_id"] == "call_1" for i in items if "call_id" in i)
    for item in (i for i in items if i["type"] == "reasoning"):
        assert item["encrypted_content"] == ENCRYPTED


def test_another_models_reply_goes_back_without_its_reasoning_or_ids() -> None:
    info, target = model()
    other = {"api": "openai-responses", "provider": "openai", "model": "gpt-5.1-codex"}
    messages = [
        user(),
        assistant(reasoning_block(), text_block("Looking."), call_block(), **other),
        tool_result(),
    ]
    builder = ReplyBuilder(info, target)
    call = build_call(info, messages, [], CallOptions(thinking="high"), builder, api)
    items = api.request(call).body["input"]
    assert [i.get("type") for i in items] == [
        None,
        "message",
        "function_call",
        "function_call_output",
    ]
    assert not [i for i in items if "id" in i]


def test_tool_call_ids_of_other_providers_are_made_to_fit() -> None:
    assert api.rename_call("call_abc|fc_def") == "call_abc|fc_def"
    assert api.rename_call("toolu_01.x/y") == "toolu_01_x_y"
    assert api.rename_call("x" * 80) == "x" * 64
    assert api.split_call_id("call_abc|fc_def") == ("call_abc", "fc_def")
    assert api.split_call_id("call_abc") == ("call_abc", None)
    assert api.split_call_id("call_abc|item") == ("call_abc", None)  # not a function call item


def test_text_signatures() -> None:
    assert api.message_id('{"v":1,"id":"msg_a","phase":"final_answer"}') == (
        "msg_a",
        "final_answer",
    )
    assert api.message_id("msg_legacy") == ("msg_legacy", None)
    assert api.message_id("not an id") == (None, None)
    assert api.message_id(None) == (None, None)


# ------------------------------------------------------------------------------- stream


def sse(*events: dict[str, Any]) -> list[bytes]:
    out: list[bytes] = []
    for event in events:
        out += [
            f"event: {event['type']}\n".encode(),
            f"data: {json.dumps(event)}\n".encode(),
            b"\n",
        ]
    return out


async def lines_of(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


async def read(*events: dict[str, Any]) -> tuple[ReplyBuilder, list[Any]]:
    info, target = model()
    seen: list[Any] = []
    builder = ReplyBuilder(info, target, emit=seen.append)
    await api.read(lines_of(sse(*events)), builder, f"{BASE}/responses")
    return builder, seen


def added(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def done(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index, "item": item}


def summary(index: int, part: int, delta: str) -> dict[str, Any]:
    return {
        "type": "response.reasoning_summary_text.delta",
        "output_index": index,
        "summary_index": part,
        "delta": delta,
    }


def completed(usage: dict[str, Any] | None = None, **response: Any) -> dict[str, Any]:
    return {
        "type": "response.completed",
        "response": {"status": "completed", "usage": usage, **response},
    }


RS = {"id": "rs_1", "type": "reasoning", "summary": []}
MSG = {"id": "msg_1", "type": "message", "role": "assistant", "content": []}
FC = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "bash", "arguments": ""}


async def test_a_reply_is_stored_as_pi_stores_it() -> None:
    summaries = [
        {"type": "summary_text", "text": "First."},
        {"type": "summary_text", "text": "Second."},
    ]
    builder, seen = await read(
        {"type": "response.created", "response": {"id": "resp_1"}},
        added(0, RS),
        summary(0, 0, "Fir"),
        summary(0, 0, "st."),
        summary(0, 1, "Second."),
        done(0, {**RS, "summary": summaries, "encrypted_content": ENCRYPTED}),
        added(1, MSG),
        {"type": "response.output_text.delta", "output_index": 1, "delta": "Look"},
        {"type": "response.output_text.delta", "output_index": 1, "delta": "ing."},
        done(1, {**MSG, "content": [{"type": "output_text", "text": "Looking."}]}),
        added(2, FC),
        {"type": "response.function_call_arguments.delta", "output_index": 2, "delta": '{"comm'},
        {
            "type": "response.function_call_arguments.delta",
            "output_index": 2,
            "delta": 'and":"ls"}',
        },
        done(2, {**FC, "arguments": '{"command":"ls"}'}),
        completed(
            {
                "input_tokens": 1000,
                "input_tokens_details": {"cached_tokens": 600},
                "output_tokens": 50,
            }
        ),
    )
    message = builder.message()
    assert message["content"] == [
        {
            "type": "thinking",
            "thinking": "First.\n\nSecond.",
            "thinkingSignature": json.dumps(
                {
                    "id": "rs_1",
                    "type": "reasoning",
                    "encrypted_content": ENCRYPTED,
                    "summary": summaries,
                },
                separators=(",", ":"),
            ),
        },
        {"type": "text", "text": "Looking.", "textSignature": '{"v":1,"id":"msg_1"}'},
        {"type": "toolCall", "id": "call_1|fc_1", "name": "bash", "arguments": {"command": "ls"}},
    ]
    assert message["stopReason"] == "toolUse"
    assert (message["api"], message["provider"], message["model"]) == tuple(OWN.values())
    usage = message["usage"]
    assert (usage["input"], usage["cacheRead"], usage["output"]) == (400, 600, 50)
    assert usage["totalTokens"] == 1050
    assert [e for e in seen if isinstance(e, ThinkingDelta)] == [
        ThinkingDelta("Fir"),
        ThinkingDelta("st."),
        ThinkingDelta("\n\n"),
        ThinkingDelta("Second."),
    ]
    assert TextDelta("ing.") in seen
    assert seen[-1] == ToolCallDelta(0, "bash", '{"command":"ls"}')


async def test_a_reasoning_item_without_a_summary_still_gets_its_thinking_block() -> None:
    builder, seen = await read(
        added(0, RS),
        done(0, {**RS, "encrypted_content": ENCRYPTED}),
        added(1, MSG),
        {"type": "response.output_text.delta", "output_index": 1, "delta": "Hi."},
        done(1, {**MSG, "content": [{"type": "output_text", "text": "Hi."}]}),
        completed(),
    )
    thinking, text = builder.message()["content"]
    assert thinking["thinking"] == "" and json.loads(thinking["thinkingSignature"]) == {
        "id": "rs_1",
        "type": "reasoning",
        "encrypted_content": ENCRYPTED,
        "summary": [],
    }
    assert text["text"] == "Hi." and builder.message()["stopReason"] == "stop"
    assert not [e for e in seen if isinstance(e, ThinkingDelta)]


async def test_items_only_the_done_events_carry() -> None:
    """A server that streams no deltas: the finished items give the text and the arguments;
    encrypted content only in the final response is taken from there."""
    builder, _ = await read(
        done(0, {**RS, "summary": [{"type": "summary_text", "text": "Quiet."}]}),
        done(1, {**MSG, "content": [{"type": "output_text", "text": "Hi."}]}),
        done(2, {**FC, "arguments": '{"command":"pwd"}'}),
        completed(output=[{**RS, "encrypted_content": ENCRYPTED}]),
    )
    thinking, text, tool = builder.message()["content"]
    assert thinking["thinking"] == "Quiet."
    assert json.loads(thinking["thinkingSignature"])["encrypted_content"] == ENCRYPTED
    assert text["text"] == "Hi." and tool["arguments"] == {"command": "pwd"}


async def test_a_reply_only_the_final_response_carries() -> None:
    output = [
        {**RS, "encrypted_content": ENCRYPTED},
        {**MSG, "content": [{"type": "output_text", "text": "Hi."}]},
    ]
    builder, _ = await read(completed({"input_tokens": 5, "output_tokens": 2}, output=output))
    thinking, text = builder.message()["content"]
    assert json.loads(thinking["thinkingSignature"])["id"] == "rs_1"
    assert text == {"type": "text", "text": "Hi.", "textSignature": '{"v":1,"id":"msg_1"}'}


async def test_final_arguments_replace_what_the_deltas_gave() -> None:
    builder, _ = await read(
        added(0, FC),
        {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": '{"x":'},
        {
            "type": "response.function_call_arguments.done",
            "output_index": 0,
            "arguments": '{"command":"id"}',
        },
        done(0, {**FC, "arguments": '{"command":"id"}'}),
        completed(),
    )
    assert builder.message()["content"][0]["arguments"] == {"command": "id"}


@pytest.mark.parametrize(
    ("reason", "stop", "error"),
    [
        ("max_output_tokens", "length", None),
        ("content_filter", "error", api.FILTERED),
        ("something_new", "error", "The reply is incomplete (something_new)."),
    ],
)
async def test_incomplete_replies(reason: str, stop: str, error: str | None) -> None:
    builder, _ = await read(
        added(0, MSG),
        {"type": "response.output_text.delta", "output_index": 0, "delta": "cut"},
        {
            "type": "response.incomplete",
            "response": {
                "status": "incomplete",
                "incomplete_details": {"reason": reason},
                "usage": {"input_tokens": 10, "output_tokens": 5},
            },
        },
    )
    message = builder.message()
    assert message["stopReason"] == stop and message.get("errorMessage") == error
    assert message["content"][-1]["text"] == "cut" and message["usage"]["output"] == 5


async def test_a_failed_response_raises_the_providers_words_and_keeps_the_usage() -> None:
    info, target = model()
    builder = ReplyBuilder(info, target)
    failed = {
        "type": "response.failed",
        "response": {
            "status": "failed",
            "error": {
                "code": "server_error",
                "message": "The server had an error while processing.",
            },
            "usage": {"input_tokens": 10, "output_tokens": 2},
        },
    }
    with pytest.raises(ProviderError) as raised:
        await api.read(lines_of(sse(added(0, MSG), failed)), builder, BASE)
    assert str(raised.value) == "The server had an error while processing."
    assert raised.value.status == 500 and classify(raised.value).kind == "retryable"
    assert builder.usage is not None and builder.usage["output"] == 2


@pytest.mark.parametrize(
    ("event", "words", "kind"),
    [
        (
            {
                "type": "error",
                "code": "rate_limit_exceeded",
                "message": "Rate limit reached.",
                "param": None,
            },
            "Rate limit reached.",
            "retryable",
        ),
        (
            {
                "type": "error",
                "code": "context_length_exceeded",
                "message": "Your input exceeds the context window of this model.",
            },
            "Your input exceeds the context window of this model.",
            "overflow",
        ),
        (
            {"type": "error", "code": "invalid_prompt", "message": ""},
            "The provider stopped the reply (invalid_prompt).",
            "other",
        ),
    ],
)
async def test_error_events(event: dict[str, Any], words: str, kind: str) -> None:
    with pytest.raises(ProviderError) as raised:
        await read(added(0, MSG), event)
    assert str(raised.value) == words and classify(raised.value).kind == kind


async def test_a_stream_that_ends_early_is_a_retryable_error() -> None:
    with pytest.raises(ProviderError, match="ended before the reply was complete") as raised:
        await read(
            added(0, MSG), {"type": "response.output_text.delta", "output_index": 0, "delta": "Hi"}
        )
    assert raised.value.retryable is True
