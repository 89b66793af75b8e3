"""The local Gemini server speaks streamGenerateContent to pitui's own provider code
(``pitui.llm.apis.google_generative_ai`` through ``stream_reply``) and refuses what the real
API refuses, so the requests pitui makes are checked against those refusals."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from pitui.llm.apis.google_generative_ai import FILTERED, GEMINI_EMPTY
from pitui.llm.errors import ProviderError, classify
from pitui.llm.models import ModelRef, model_info
from pitui.llm.reply import ReplyBuilder
from pitui.llm.routes import route
from pitui.llm.stream import CallOptions, stream_reply
from support.providers.gemini import (
    API_KEY,
    Call,
    GeminiServer,
    Text,
    Thought,
    overloaded,
    quota_exceeded,
    reply,
)

TOOLS = [
    {
        "name": "bash",
        "description": "Run a command",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
    }
]
QUESTION = {"role": "user", "content": "what is here?", "timestamp": 1}


async def call(
    server: GeminiServer,
    messages: list[dict[str, Any]],
    *,
    model: str = "gemini/gemini-2.5-pro",
    thinking: str = "high",
    api_key: str = API_KEY,
    max_tokens: int | None = None,
) -> dict[str, Any]:
    """One streamed call through pitui's provider code; the assistant message it stores."""
    info = model_info(ModelRef.parse(model))
    builder = ReplyBuilder(info, route(info, server.api_base))
    options = CallOptions(
        api_base=server.api_base, api_key=api_key, thinking=thinking, max_tokens=max_tokens
    )
    await stream_reply(info, messages, TOOLS, options, builder, lambda event: None)
    return builder.message()


def post(server: GeminiServer, body: dict[str, Any], model: str = "gemini-2.5-pro") -> Any:
    """A raw request (what another client could send): the server's answer, or its refusal."""
    request = urllib.request.Request(
        f"{server.api_base}/models/{model}:streamGenerateContent?alt=sse",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "x-goog-api-key": API_KEY},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())["error"]["message"]


async def start(gemini: GeminiServer) -> dict[str, Any]:
    gemini.script(
        reply(Thought("List the folder."), Text("Looking."), Call("bash", {"command": "ls"}))
    )
    return await call(gemini, [QUESTION])


def continuation(first: dict[str, Any], **changes: Any) -> list[dict[str, Any]]:
    """The conversation after ``first`` (its tool call changed by ``changes``; a value of
    None removes the field) and the call's result."""
    content = [dict(block) for block in first["content"]]
    tool = next(block for block in content if block["type"] == "toolCall")
    for key, value in changes.items():
        if value is None:
            tool.pop(key, None)
        else:
            tool[key] = value
    result = {
        "role": "toolResult",
        "toolCallId": tool["id"],
        "toolName": "bash",
        "content": [{"type": "text", "text": "a.txt"}],
        "isError": False,
        "timestamp": 3,
    }
    return [QUESTION, {**first, "content": content}, result]


async def test_streams_thoughts_text_and_a_signed_function_call(gemini: GeminiServer) -> None:
    first = await start(gemini)
    thinking, text, tool = first["content"]
    assert thinking == {"type": "thinking", "thinking": "List the folder."}
    assert text == {"type": "text", "text": "Looking."}
    assert tool["name"] == "bash" and tool["arguments"] == {"command": "ls"}
    assert tool["id"].startswith("bash_")
    assert gemini.verify("bash", {"command": "ls"}, tool["thoughtSignature"])
    assert first["stopReason"] == "toolUse"
    assert (first["api"], first["provider"], first["model"]) == (
        "google-generative-ai",
        "google",
        "gemini-2.5-pro",
    )
    usage = first["usage"]
    assert usage["input"] > 0 and usage["output"] > 0 and usage["cacheRead"] == 0
    request = gemini.last
    assert request.path == "/models/gemini-2.5-pro:streamGenerateContent"
    assert request.query == {"alt": "sse"} and request.header("x-goog-api-key") == API_KEY
    config = request.body["generationConfig"]
    assert config["thinkingConfig"] == {"includeThoughts": True, "thinkingBudget": 32768}
    assert config["maxOutputTokens"] == 65536
    declaration = request.body["tools"][0]["functionDeclarations"][0]
    assert declaration["parametersJsonSchema"] == TOOLS[0]["parameters"]


async def test_the_signed_call_goes_back_with_its_signature(gemini: GeminiServer) -> None:
    first = await start(gemini)
    gemini.script(reply(Thought("Two."), Text("Two files.")))
    out = await call(gemini, continuation(first))
    assert [b["type"] for b in out["content"]] == ["thinking", "text"]
    assert out["content"][1]["text"] == "Two files." and out["stopReason"] == "stop"
    assert out["content"][1]["textSignature"]  # a reply without calls signs its text
    model_turn, results = gemini.last.body["contents"][1:]
    assert model_turn["role"] == "model"
    assert model_turn["parts"][0] == {"thought": True, "text": "List the folder."}
    assert model_turn["parts"][-1]["thoughtSignature"] == first["content"][2]["thoughtSignature"]
    assert results == {
        "role": "user",
        "parts": [{"functionResponse": {"name": "bash", "response": {"output": "a.txt"}}}],
    }


async def test_a_missing_or_corrupted_signature_is_refused(gemini: GeminiServer) -> None:
    first = await start(gemini)
    with pytest.raises(ProviderError, match="missing a thought_signature") as missing:
        await call(gemini, continuation(first, thoughtSignature=None))
    assert missing.value.status == 400
    with pytest.raises(ProviderError, match="Corrupted thought signature"):
        await call(gemini, continuation(first, thoughtSignature="AAAA" + "B" * 40))


async def test_signatures_that_are_not_base64_are_refused_and_never_sent(
    gemini: GeminiServer,
) -> None:
    status, message = post(
        gemini,
        {"contents": [{"role": "model", "parts": [{"text": "a", "thoughtSignature": "not b64!"}]}]},
    )
    assert status == 400
    assert message == (
        "Invalid value at 'contents[0].parts[0].thought_signature' (TYPE_BYTES), "
        'Base64 decoding failed for "not b64!"'
    )
    # A stored reply of this model with a text signature that is not base64 (a hand-edited
    # or foreign file): pitui sends the text without it, and the request is accepted.
    own = {"api": "google-generative-ai", "provider": "google", "model": "gemini-2.5-pro"}
    earlier = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Hm.", "thinkingSignature": "%%%"},
            {"type": "text", "text": "Hello.", "textSignature": "not b64!"},
        ],
        "stopReason": "stop",
        "timestamp": 2,
        **own,
    }
    gemini.script(reply(Text("Again.")))
    out = await call(gemini, [QUESTION, earlier, {**QUESTION, "content": "and now?"}])
    assert out["content"][0]["text"] == "Again."
    assert gemini.last.body["contents"][1]["parts"] == [
        {"thought": True, "text": "Hm."},
        {"text": "Hello."},
    ]


async def test_function_responses_must_answer_a_call_turn(gemini: GeminiServer) -> None:
    orphan = {"functionResponse": {"name": "bash", "response": {"output": "a"}}}
    status, message = post(
        gemini,
        {
            "contents": [
                {"role": "user", "parts": [{"text": "hi"}]},
                {"role": "model", "parts": [{"text": "ok"}]},
                {"role": "user", "parts": [orphan]},
            ]
        },
    )
    assert status == 400 and "function response turn comes immediately after" in message
    # pitui drops a result whose call was not sent, so the same history is accepted.
    gemini.script(reply(Text("Fine.")))
    history = [
        {"role": "user", "content": "hi", "timestamp": 1},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "stopReason": "stop"},
        {"role": "toolResult", "toolCallId": "x", "toolName": "bash", "content": "a"},
        {"role": "user", "content": "go on", "timestamp": 4},
    ]
    out = await call(gemini, history)
    assert out["stopReason"] == "stop"
    assert [c["role"] for c in gemini.last.body["contents"]] == ["user", "model", "user"]


async def test_finish_reasons(gemini: GeminiServer) -> None:
    gemini.script(
        reply(Text("nope"), finish_reason="SAFETY"),
        reply(Text("cut"), finish_reason="MAX_TOKENS"),
        reply(Text("x"), finish_reason="MALFORMED_FUNCTION_CALL"),
    )
    safety = await call(gemini, [QUESTION])
    assert (safety["stopReason"], safety["errorMessage"]) == ("error", FILTERED)
    assert (await call(gemini, [QUESTION]))["stopReason"] == "length"
    malformed = await call(gemini, [QUESTION])
    assert malformed["content"] == []
    assert (malformed["stopReason"], malformed["errorMessage"]) == ("error", GEMINI_EMPTY)


async def test_a_stream_without_its_finish_reason_is_cut(gemini: GeminiServer) -> None:
    gemini.script(reply(Text("It is a long answer"), chunks=4, cut_after=2))
    info = model_info(ModelRef.parse("gemini/gemini-2.5-pro"))
    builder = ReplyBuilder(info, route(info, gemini.api_base))
    options = CallOptions(api_base=gemini.api_base, api_key=API_KEY)
    with pytest.raises(ProviderError, match="ended before the reply was complete") as cut:
        await stream_reply(info, [QUESTION], TOOLS, options, builder, lambda event: None)
    builder_text = builder.text
    assert builder_text and "It is a long answer".startswith(builder_text[0])
    assert builder_text[0] != "It is a long answer"
    assert classify(cut.value).kind == "retryable"


async def test_an_error_event_mid_stream(gemini: GeminiServer) -> None:
    gemini.script(reply(Text("Half"), error=overloaded()))
    with pytest.raises(ProviderError, match="The model is overloaded") as failed:
        await call(gemini, [QUESTION])
    assert failed.value.status == 503 and failed.value.error_type == "UNAVAILABLE"
    assert classify(failed.value).kind == "retryable"


async def test_quota_429_carries_retry_info(gemini: GeminiServer) -> None:
    gemini.script(quota_exceeded(7.5))
    with pytest.raises(ProviderError) as caught:
        await call(gemini, [QUESTION])
    assert caught.value.status == 429 and caught.value.error_type == "RESOURCE_EXHAUSTED"
    assert caught.value.message.startswith("You exceeded your current quota")
    error = classify(caught.value)
    assert (error.kind, error.retry_after) == ("retryable", 7.5)


async def test_bad_key_and_output_range(gemini: GeminiServer) -> None:
    with pytest.raises(ProviderError, match="API key not valid") as refused:
        await call(gemini, [QUESTION], api_key="wrong")
    error = classify(refused.value, "GEMINI_API_KEY")  # a 400, but about the key
    assert error.kind == "auth" and "check GEMINI_API_KEY" in error.message
    with pytest.raises(ProviderError, match="supported range is from 1"):
        await call(gemini, [QUESTION], max_tokens=128_000)
    assert gemini.requests[-1].body["generationConfig"]["maxOutputTokens"] == 128_000


async def test_thinking_off_sends_what_each_model_takes(gemini: GeminiServer) -> None:
    status, message = post(
        gemini,
        {
            "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "generationConfig": {"thinkingConfig": {"thinkingBudget": 0}},
        },
    )
    assert status == 400
    assert message == "Budget 0 is invalid. This model only works in thinking mode."
    gemini.script(reply(Text("Hi.")), reply(Text("Hi.")), reply(Text("Hi.")))
    sent = {}
    for model in ("gemini-2.5-pro", "gemini-2.5-flash", "gemini-3-flash-preview"):
        out = await call(gemini, [QUESTION], model=f"gemini/{model}", thinking="off")
        assert out["stopReason"] == "stop", model
        sent[model] = gemini.last.body["generationConfig"]["thinkingConfig"]
    assert sent == {
        "gemini-2.5-pro": {"thinkingBudget": 128},  # it refuses 0 (pi 1.6 sends 0)
        "gemini-2.5-flash": {"thinkingBudget": 0},
        "gemini-3-flash-preview": {"thinkingLevel": "MINIMAL"},
    }


async def test_a_gemini_3_tool_loop_with_thinking(gemini: GeminiServer) -> None:
    """Gemini 3: a thinking level the model takes, and call ids sent back with the calls and
    their results; the server checks every signature on the way."""
    model = "gemini/gemini-3.1-pro-preview"
    gemini.script(
        reply(Thought("List."), Call("bash", {"command": "ls"}), Call("bash", {"command": "pwd"}))
    )
    first = await call(gemini, [QUESTION], model=model, thinking="minimal")
    assert gemini.last.body["generationConfig"]["thinkingConfig"] == {
        "includeThoughts": True,
        "thinkingLevel": "LOW",  # it takes no "minimal": the next level up
    }
    calls = [b for b in first["content"] if b["type"] == "toolCall"]
    assert len({c["id"] for c in calls}) == 2
    assert "thoughtSignature" in calls[0] and "thoughtSignature" not in calls[1]
    results = [
        {
            "role": "toolResult",
            "toolCallId": c["id"],
            "toolName": "bash",
            "content": [{"type": "text", "text": out}],
            "isError": False,
        }
        for c, out in zip(calls, ("a.txt", "/tmp"), strict=True)
    ]
    gemini.script(reply(Thought("Done."), Text("One file, in /tmp.")))
    second = await call(gemini, [QUESTION, first, *results], model=model, thinking="minimal")
    assert second["content"][-1]["text"] == "One file, in /tmp."
    model_turn, answers = gemini.last.body["contents"][1:]
    assert [p["functionCall"]["id"] for p in model_turn["parts"][1:]] == [c["id"] for c in calls]
    assert [p["functionResponse"]["id"] for p in answers["parts"]] == [c["id"] for c in calls]
