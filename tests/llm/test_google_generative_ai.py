"""The ``google-generative-ai`` module without a network: the request pitui builds from a
projected context (history, signatures, tools, thinking), and the stored reply, usage, stop
and errors it reads from a stream."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from pitui.llm.apis import google_generative_ai as gemini
from pitui.llm.errors import ProviderError, classify
from pitui.llm.models import ModelRef, model_info
from pitui.llm.reply import ReplyBuilder
from pitui.llm.routes import route
from pitui.llm.stream import CallOptions, build_call

SIG = "CiBDXnyjTlF3dHggnxHI5/bH1OyPLJ6sSMEL1GvbUPfDlQ=="
SIG2 = "CiAcEwflKIU+G0EMbLzp6Sdo1YiJoV/FDEniPrL3iLBwhw=="
TOOL = {
    "name": "bash",
    "description": "Run a command",
    "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
}


def builder(model: str = "gemini/gemini-2.5-pro", base: str | None = None) -> ReplyBuilder:
    info = model_info(ModelRef.parse(model))
    return ReplyBuilder(info, route(info, base))


def build(
    messages: list[dict[str, Any]],
    model: str = "gemini/gemini-2.5-pro",
    tools: list[Any] | None = None,
    **options: Any,
) -> dict[str, Any]:
    reply = builder(model)
    options.setdefault("api_key", "key")
    call = build_call(reply.info, messages, tools or [], CallOptions(**options), reply, gemini)
    request = gemini.request(call)
    return {"url": request.url, "headers": request.headers, "body": request.body}


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content, "timestamp": 1}


def own(*blocks: dict[str, Any], model: str = "gemini-2.5-pro", **extra: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": list(blocks),
        "api": "google-generative-ai",
        "provider": "google",
        "model": model,
        "stopReason": extra.pop("stopReason", "toolUse"),
        "timestamp": 2,
        **extra,
    }


def call_block(call_id: str, signature: str | None = None, **args: Any) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "toolCall",
        "id": call_id,
        "name": "bash",
        "arguments": args or {"command": "ls"},
    }
    if signature:
        block["thoughtSignature"] = signature
    return block


def result(call_id: str, *content: dict[str, Any], error: bool = False) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "bash",
        "content": list(content) or [{"type": "text", "text": "ok"}],
        "isError": error,
        "timestamp": 3,
    }


IMAGE = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}


# ------------------------------------------------------------------------------- request


def test_the_request_line_headers_and_body() -> None:
    system = {"role": "system", "content": "Be brief.", "timestamp": 0}
    sent = build([system, user("hi")], tools=[TOOL], thinking="medium")
    assert sent["url"] == (
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro"
        ":streamGenerateContent?alt=sse"
    )
    assert sent["headers"] == {"x-goog-api-key": "key"}
    body = sent["body"]
    assert body["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert body["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "bash",
                    "description": "Run a command",
                    "parametersJsonSchema": TOOL["parameters"],
                }
            ]
        }
    ]
    assert body["generationConfig"] == {
        "maxOutputTokens": 65536,
        "thinkingConfig": {"includeThoughts": True, "thinkingBudget": 8192},
    }
    assert "systemInstruction" not in build([user("hi")])["body"]
    assert "tools" not in build([user("hi")])["body"]


def test_history_parts_and_signatures_of_this_model() -> None:
    reply = own(
        {"type": "thinking", "thinking": "Let me look.", "thinkingSignature": SIG2},
        {"type": "text", "text": "Looking.", "textSignature": SIG},
        {"type": "text", "text": "", "textSignature": SIG2},  # an empty text carrying one
        {"type": "text", "text": "  "},  # nothing to send
        call_block("c1", SIG),
        call_block("c2", command="pwd"),
    )
    messages = [
        user([{"type": "text", "text": "what is this?"}, IMAGE]),
        reply,
        result("c1", {"type": "text", "text": "a.txt"}),
        result("c2", {"type": "text", "text": "boom"}, error=True),
    ]
    contents = build(messages)["body"]["contents"]
    assert contents == [
        {
            "role": "user",
            "parts": [
                {"text": "what is this?"},
                {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
            ],
        },
        {
            "role": "model",
            "parts": [
                {"thought": True, "text": "Let me look.", "thoughtSignature": SIG2},
                {"text": "Looking.", "thoughtSignature": SIG},
                {"text": "", "thoughtSignature": SIG2},
                {
                    "functionCall": {"name": "bash", "args": {"command": "ls"}},
                    "thoughtSignature": SIG,
                },
                {"functionCall": {"name": "bash", "args": {"command": "pwd"}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "bash", "response": {"output": "a.txt"}}},
                {"functionResponse": {"name": "bash", "response": {"error": "boom"}}},
            ],
        },
    ]


def test_another_models_reply_goes_without_its_thinking_and_signatures() -> None:
    reply = own(
        {"type": "thinking", "thinking": "Flash thoughts.", "thinkingSignature": SIG2},
        {"type": "text", "text": "Looking.", "textSignature": SIG},
        call_block("c1", SIG),
        model="gemini-2.5-flash",
    )
    contents = build([user("q"), reply, result("c1")])["body"]["contents"]
    assert contents[1] == {
        "role": "model",
        "parts": [
            {"text": "Looking."},
            {"functionCall": {"name": "bash", "args": {"command": "ls"}}},
        ],
    }


def test_signatures_that_are_not_base64_are_left_out() -> None:
    reply = own(
        {"type": "thinking", "thinking": "", "thinkingSignature": "reasoning_content"},
        {"type": "text", "text": "Hi.", "textSignature": "abc"},  # length not a multiple of 4
        call_block("c1", "not base64!"),
    )
    parts = build([user("q"), reply, result("c1")])["body"]["contents"][1]["parts"]
    assert parts == [
        {"text": "Hi."},
        {"functionCall": {"name": "bash", "args": {"command": "ls"}}},
    ]
    assert gemini.valid_signature(SIG) and not gemini.valid_signature("")


def test_tool_result_images_before_and_from_gemini_3() -> None:
    calls = own(call_block("c1", SIG), call_block("c2"))
    images = [
        user("look"),
        calls,
        result("c1", IMAGE),
        result("c2", {"type": "text", "text": "two"}, IMAGE),
    ]
    old = build(images)["body"]["contents"]
    assert old[2] == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "bash", "response": {"output": "(see attached image)"}}},
            {"functionResponse": {"name": "bash", "response": {"output": "two"}}},
        ],
    }
    inline = {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
    assert old[3] == {"role": "user", "parts": [{"text": "Tool result image:"}, inline, inline]}
    assert len(old) == 4
    model = "gemini/gemini-3.1-pro-preview"
    calls3 = own(call_block("c1", SIG), call_block("c2"), model="gemini-3.1-pro-preview")
    new = build([user("look"), calls3, *images[2:]], model=model)["body"]["contents"]
    assert len(new) == 3
    assert [p["functionCall"]["id"] for p in new[1]["parts"]] == ["c1", "c2"]
    assert new[2]["parts"][0]["functionResponse"] == {
        "name": "bash",
        "response": {"output": "(see attached image)"},
        "parts": [inline],
        "id": "c1",
    }


def test_call_ids_are_renamed_for_gemini_3_and_results_follow() -> None:
    model = "gemini/gemini-3.1-pro-preview"
    other = {
        "role": "assistant",
        "content": [call_block("call_1|fc_9")],
        "api": "openai-responses",
        "provider": "openai",
        "model": "gpt-5",
        "stopReason": "toolUse",
    }
    contents = build([user("q"), other, result("call_1|fc_9")], model=model)["body"]["contents"]
    assert contents[1]["parts"][0]["functionCall"]["id"] == "call_1_fc_9"
    assert contents[2]["parts"][0]["functionResponse"]["id"] == "call_1_fc_9"
    assert gemini.rename_call("x" * 80) == "x" * 64 and gemini.rename_call("") == "call"


def test_schema_conversion_like_pi() -> None:
    schema = {
        "type": "object",
        "$schema": "http://json-schema.org/draft-07/schema#",
        "properties": {
            "mode": {"const": "fast"},
            "const": {"type": "number", "const": 3},  # a property named const
            "flag": {"const": True},  # not a string or number: kept
            "kind": {"const": "a", "enum": ["a"]},  # an enum already: kept
            "list": {"type": "array", "items": {"anyOf": [{"const": 1}, {"type": "null"}]}},
        },
        "default": {"const": "not a schema"},
    }
    assert gemini.gemini_schema(schema) == {
        "type": "object",
        "$schema": "http://json-schema.org/draft-07/schema#",
        "properties": {
            "mode": {"enum": ["fast"]},
            "const": {"type": "number", "enum": [3]},
            "flag": {"const": True},
            "kind": {"const": "a", "enum": ["a"]},
            "list": {"type": "array", "items": {"anyOf": [{"enum": [1]}, {"type": "null"}]}},
        },
        "default": {"const": "not a schema"},
    }


@pytest.mark.parametrize(
    ("model", "thinking", "config"),
    [
        ("gemini-2.5-pro", "minimal", {"includeThoughts": True, "thinkingBudget": 128}),
        ("gemini-2.5-pro", "high", {"includeThoughts": True, "thinkingBudget": 32768}),
        ("gemini-2.5-flash", "high", {"includeThoughts": True, "thinkingBudget": 24576}),
        ("gemini-2.5-flash-lite", "minimal", {"includeThoughts": True, "thinkingBudget": 512}),
        ("gemini-2.5-pro", "off", {"thinkingBudget": 128}),
        ("gemini-2.5-flash", "off", {"thinkingBudget": 0}),
        (
            "gemini-3-flash-preview",
            "minimal",
            {"includeThoughts": True, "thinkingLevel": "MINIMAL"},
        ),
        ("gemini-3.1-pro-preview", "minimal", {"includeThoughts": True, "thinkingLevel": "LOW"}),
        ("gemini-3.1-pro-preview", "medium", {"includeThoughts": True, "thinkingLevel": "MEDIUM"}),
        ("gemini-3-pro-preview", "medium", {"includeThoughts": True, "thinkingLevel": "HIGH"}),
        ("gemini-3.1-pro-preview", "off", {"thinkingLevel": "LOW"}),
        ("gemini-3-flash-preview", "off", {"thinkingLevel": "MINIMAL"}),
        ("gemma-4-31b-it", "low", {"includeThoughts": True, "thinkingLevel": "HIGH"}),
        ("gemini-4-neon", "high", {"includeThoughts": True, "thinkingLevel": "HIGH"}),
        ("gemini-flash-latest", "low", {"includeThoughts": True, "thinkingLevel": "LOW"}),
    ],
)
def test_thinking_as_pi_asks_for_it(model: str, thinking: str, config: dict[str, Any]) -> None:
    body = build([user("hi")], model=f"gemini/{model}", thinking=thinking)["body"]
    assert body["generationConfig"]["thinkingConfig"] == config


def test_no_thinking_config_for_a_model_that_does_not_think() -> None:
    body = build([user("hi")], model="gemini/gemini-exp-1206", thinking="high")["body"]
    assert "thinkingConfig" not in body.get("generationConfig", {})


def test_a_custom_base_url_and_no_key() -> None:
    reply = builder(base="http://127.0.0.1:9/v1beta/")
    call = build_call(reply.info, [user("hi")], [], CallOptions(), reply, gemini)
    request = gemini.request(call)
    assert request.url.startswith("http://127.0.0.1:9/v1beta/models/gemini-2.5-pro:")
    assert request.headers == {}


# ------------------------------------------------------------------------------- stream


async def lines_of(*events: Any) -> AsyncIterator[bytes]:
    for event in events:
        data = event if isinstance(event, str) else json.dumps(event)
        yield f"data: {data}\r\n".encode()
        yield b"\r\n"


def chunk(*parts: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"index": 0}
    if parts:
        candidate["content"] = {"role": "model", "parts": list(parts)}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], **extra}


def read(*events: Any, model: str = "gemini/gemini-2.5-pro") -> ReplyBuilder:
    reply = builder(model)
    asyncio.run(gemini.read(lines_of(*events), reply, "https://example.test/v1beta"))
    return reply


def test_a_reply_is_stored_as_pi_stores_it() -> None:
    usage = {
        "promptTokenCount": 100,
        "cachedContentTokenCount": 40,
        "candidatesTokenCount": 10,
        "thoughtsTokenCount": 5,
        "totalTokenCount": 115,
    }
    reply = read(
        chunk({"text": "Think", "thought": True}),
        chunk({"text": "ing.", "thought": True, "thoughtSignature": SIG2}),
        chunk({"text": "Hello "}),
        chunk({"text": "there.", "thoughtSignature": SIG}),
        chunk(
            {"functionCall": {"name": "bash", "args": {"command": "ls"}}, "thoughtSignature": SIG},
            {"functionCall": {"name": "read", "args": {"path": "a"}}},
            finish="STOP",
            usageMetadata=usage,
        ),
    )
    message = reply.message()
    thinking, text, first, second = message["content"]
    assert thinking == {"type": "thinking", "thinking": "Thinking.", "thinkingSignature": SIG2}
    assert text == {"type": "text", "text": "Hello there.", "textSignature": SIG}
    assert first["thoughtSignature"] == SIG and "thoughtSignature" not in second
    assert (first["name"], first["arguments"]) == ("bash", {"command": "ls"})
    assert first["id"].startswith("bash_") and second["id"].startswith("read_")
    assert first["id"] != second["id"]
    assert message["stopReason"] == "toolUse"
    assert {k: message["usage"][k] for k in ("input", "output", "cacheRead", "cacheWrite")} == {
        "input": 60,
        "output": 15,
        "cacheRead": 40,
        "cacheWrite": 0,
    }
    assert message["usage"]["cost"]["input"] == pytest.approx(60 * 1.25e-06)


def test_call_ids_gemini_gives_are_kept_unless_repeated() -> None:
    reply = read(
        chunk(
            {"functionCall": {"id": "abc", "name": "bash", "args": {}}},
            {"functionCall": {"id": "abc", "name": "bash", "args": {"command": "pwd"}}},
            finish="STOP",
        )
    )
    first, second = reply.message()["content"]
    assert first["id"] == "abc" and second["id"].startswith("bash_")


def test_text_after_a_call_and_empty_parts() -> None:
    reply = read(
        chunk({"text": "A"}),
        chunk({"functionCall": {"name": "bash", "args": {"command": "ls"}}}),
        chunk({"text": ""}),  # nothing: no empty block
        chunk({"text": "B"}, finish="STOP"),
    )
    assert [b["type"] for b in reply.message()["content"]] == ["text", "toolCall", "text"]


@pytest.mark.parametrize(
    ("reason", "parts", "stop", "error"),
    [
        ("STOP", [{"text": "Hi."}], "stop", None),
        ("STOP", [], "error", gemini.GEMINI_EMPTY),
        ("MALFORMED_FUNCTION_CALL", [], "error", gemini.GEMINI_EMPTY),
        ("MAX_TOKENS", [{"text": "Cut"}], "length", None),
        ("SAFETY", [{"text": "No"}], "error", gemini.FILTERED),
        ("RECITATION", [], "error", gemini.FILTERED),
        ("PROHIBITED_CONTENT", [], "error", gemini.FILTERED),
        ("OTHER", [{"text": "?"}], "error", "Gemini stopped the reply (OTHER)."),
    ],
)
def test_finish_reasons(
    reason: str, parts: list[dict[str, Any]], stop: str, error: str | None
) -> None:
    message = read(chunk(*parts, finish=reason)).message()
    assert message["stopReason"] == stop
    assert message.get("errorMessage") == error


def test_a_blocked_prompt_is_an_error() -> None:
    message = read({"promptFeedback": {"blockReason": "SAFETY"}}).message()
    assert message["stopReason"] == "error"
    assert message["errorMessage"].startswith("Gemini blocked the prompt (SAFETY)")


def test_a_stream_that_ends_before_its_finish_reason_is_incomplete() -> None:
    with pytest.raises(ProviderError, match=r"example\.test ended before the reply") as cut:
        read(chunk({"text": "Half"}))
    assert cut.value.retryable is True


def test_an_error_event_carries_gemini_words_and_retry_info() -> None:
    error = {
        "error": {
            "code": 429,
            "message": "Resource has been exhausted (e.g. check quota).",
            "status": "RESOURCE_EXHAUSTED",
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "3s"}],
        }
    }
    with pytest.raises(ProviderError) as failed:
        read(chunk({"text": "Hal"}), error)
    exc = failed.value
    assert (exc.message, exc.status, exc.error_type) == (
        "Resource has been exhausted (e.g. check quota).",
        429,
        "RESOURCE_EXHAUSTED",
    )
    info = classify(exc)
    assert (info.kind, info.retry_after) == ("retryable", 3.0)


def test_an_unreadable_event_and_the_array_form() -> None:
    with pytest.raises(ProviderError, match="unreadable event") as bad:
        read("{not json")
    assert bad.value.retryable is True
    reply = read([chunk({"text": "Hi."}, finish="STOP")])
    assert reply.message()["content"] == [{"type": "text", "text": "Hi."}]
