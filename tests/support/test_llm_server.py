"""The scripted LLM server, driven through litellm's real code path (no mocks)."""

from __future__ import annotations

import asyncio
import json
import os
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm
from litellm.exceptions import MidStreamFallbackError

from support.llm_server import (
    OVERFLOW_MESSAGE,
    RecordedRequest,
    ScriptedLLMServer,
    Step,
    cut,
    empty,
    error,
    malformed,
    overflow,
    reasoning,
    register_test_models,
    slow,
    text,
    tool_calls,
)

litellm.suppress_debug_info = True
register_test_models()

MESSAGES = [{"role": "user", "content": "hi"}]


@dataclass
class Collected:
    chunks: list[Any] = field(default_factory=list)
    text: str = ""
    reasoning: str = ""
    roles: list[str] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Any = None
    calls: dict[int, dict[str, str]] = field(default_factory=dict)


def kwargs(server: ScriptedLLMServer, **extra: Any) -> dict[str, Any]:
    return {
        "model": "openai/test-model",
        "api_base": f"{server.url}/v1",
        "api_key": "sk-test",
        "messages": MESSAGES,
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_retries": 0,
        **extra,
    }


async def consume(stream: Any, out: Collected) -> Collected:
    async for chunk in stream:
        out.chunks.append(chunk)
        if getattr(chunk, "usage", None) is not None:
            out.usage = chunk.usage
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        delta = choice.delta
        if delta.role:
            out.roles.append(delta.role)
        out.text += delta.content or ""
        out.reasoning += getattr(delta, "reasoning_content", None) or ""
        for tc in delta.tool_calls or []:
            call = out.calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
            call["id"] = tc.id or call["id"]
            call["name"] += tc.function.name or ""
            call["arguments"] += tc.function.arguments or ""
        if choice.finish_reason:
            out.finish_reason = choice.finish_reason
    return out


async def run(server: ScriptedLLMServer, **extra: Any) -> Collected:
    stream = await litellm.acompletion(**kwargs(server, **extra))
    return await consume(stream, Collected())


async def test_text_deltas_and_usage(llm: ScriptedLLMServer) -> None:
    llm.script(text("hello world", chunks=3, usage=(12, 3), cached=4))
    out = await run(llm)
    assert out.text == "hello world"
    # The server sends three deltas; pitui's client may merge those that arrive together
    # (pitui.llm.coalesce), so litellm sees at most three, and their text in order.
    texts = [
        c.choices[0].delta.content for c in out.chunks if c.choices and c.choices[0].delta.content
    ]
    assert 1 <= len(texts) <= 3 and "".join(texts) == "hello world"
    assert out.roles == ["assistant"]
    assert out.finish_reason == "stop"
    assert out.usage.prompt_tokens == 12
    assert out.usage.completion_tokens == 3
    assert out.usage.total_tokens == 15
    assert out.usage.prompt_tokens_details.cached_tokens == 4
    assert out.chunks[-1].choices == []  # the usage chunk comes last, without choices

    [request] = llm.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "test-model"
    assert request.body["messages"] == MESSAGES
    assert request.body["stream"] is True
    assert request.body["stream_options"] == {"include_usage": True}
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.header("Authorization") == "Bearer sk-test"
    assert request.completed and not request.disconnected
    assert request.events_sent == 6  # three deltas, the finish, the usage, [DONE]
    assert llm.pending == 0


async def test_finish_reason_length_and_auto_usage(llm: ScriptedLLMServer) -> None:
    llm.script(text("truncat", finish_reason="length"), text("no usage", usage=False))
    out = await run(llm)
    assert (out.text, out.finish_reason) == ("truncat", "length")
    assert out.usage.prompt_tokens > 0 and out.usage.completion_tokens > 0
    out = await run(llm)
    assert out.text == "no usage"
    # The server sent no usage chunk: litellm then synthesizes one from its own token count
    # (no prompt_tokens_details), so "usage missing" is not observable through litellm.
    assert out.usage is not None
    assert out.usage.prompt_tokens_details is None
    assert out.chunks[-1].choices == []


async def test_script_is_fifo_and_records_every_request(llm: ScriptedLLMServer) -> None:
    llm.script(text("one"), text("two"))
    assert (await run(llm)).text == "one"
    second = [*MESSAGES, {"role": "assistant", "content": "one"}, {"role": "user", "content": "?"}]
    assert (await run(llm, messages=second)).text == "two"
    assert [r.index for r in llm.requests] == [0, 1]
    assert llm.last.messages == second


async def test_reasoning_content_then_text(llm: ScriptedLLMServer) -> None:
    llm.script(reasoning("think hard", then="answer"))
    out = await run(llm)
    assert out.reasoning == "think hard"
    assert out.text == "answer"
    first = out.chunks[0].choices[0].delta  # reasoning deltas are never merged with text
    assert first.reasoning_content in ("think", "think hard")
    assert first.content is None
    assert out.usage.completion_tokens_details.reasoning_tokens > 0


async def test_parallel_tool_calls_assemble(llm: ScriptedLLMServer) -> None:
    llm.script(
        tool_calls(
            [("read", {"path": "a.txt"}), ("bash", {"command": "ls"})],
            text="Let me look.",
            usage=(30, 20),
        )
    )
    tools = [
        {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
        for n in ("read", "bash")
    ]
    out = await run(llm, tools=tools)
    assert out.text == "Let me look."
    assert out.finish_reason == "tool_calls"
    assert out.calls == {
        0: {"id": "call_1", "name": "read", "arguments": '{"path":"a.txt"}'},
        1: {"id": "call_2", "name": "bash", "arguments": '{"command":"ls"}'},
    }
    fragments = [
        tc.function.arguments
        for c in out.chunks
        if c.choices
        for tc in c.choices[0].delta.tool_calls or []
        if tc.index == 0 and not tc.id
    ]
    assert len(fragments) == 3  # arguments really are streamed in pieces
    assert llm.last.tool_names == ["read", "bash"]


async def test_raw_arguments_unknown_tool_and_explicit_id(llm: ScriptedLLMServer) -> None:
    llm.script(tool_calls([("nope", '{"path": "a.t'), ("read", {}, "call_custom")]))
    out = await run(llm)
    assert out.calls[0] == {"id": "call_1", "name": "nope", "arguments": '{"path": "a.t'}
    assert out.calls[1] == {"id": "call_custom", "name": "read", "arguments": "{}"}


async def test_429_rate_limit_exposes_retry_after(llm: ScriptedLLMServer) -> None:
    llm.script(error(429, "Rate limit reached", headers={"Retry-After": "1"}))
    with pytest.raises(litellm.RateLimitError) as info:
        await run(llm)
    exc = info.value
    assert exc.status_code == 429
    assert "Rate limit reached" in str(exc)
    assert exc.response.headers["retry-after"] == "1"
    assert getattr(exc, "litellm_response_headers", {})["Retry-After"] == "1"
    assert isinstance(exc.body, dict) and exc.body["code"] == "rate_limit_exceeded"
    assert len(llm.requests) == 1  # max_retries=0: litellm did not retry


async def test_litellm_retries_internally_by_default(llm: ScriptedLLMServer) -> None:
    llm.script(error(500, "internal"), text("recovered"))
    out = await run(llm, max_retries=None)  # i.e. litellm's (OpenAI SDK's) default of 2
    assert out.text == "recovered"
    assert len(llm.requests) == 2


async def test_num_retries_zero_also_disables_retries(llm: ScriptedLLMServer) -> None:
    llm.script(error(500, "internal"), text("unused"))
    with pytest.raises(litellm.InternalServerError):
        await run(llm, max_retries=None, num_retries=0)
    assert len(llm.requests) == 1


async def test_overflow_is_context_window_exceeded(llm: ScriptedLLMServer) -> None:
    llm.script(overflow())
    with pytest.raises(litellm.ContextWindowExceededError) as info:
        await run(llm)
    assert isinstance(info.value, litellm.BadRequestError)
    assert info.value.status_code == 400
    assert OVERFLOW_MESSAGE in str(info.value)


@pytest.mark.parametrize(
    ("step", "exc_type", "status"),
    [
        (error(401, "Incorrect API key provided"), litellm.AuthenticationError, 401),
        (error(500, "internal"), litellm.InternalServerError, 500),
        (error(503, "overloaded"), litellm.ServiceUnavailableError, 503),
        (error(400, "bad request"), litellm.BadRequestError, 400),
        (error(404, "no such model"), litellm.NotFoundError, 404),
    ],
)
async def test_http_errors_map_to_litellm_exceptions(
    llm: ScriptedLLMServer, step: Step, exc_type: type[Exception], status: int
) -> None:
    llm.script(step)
    with pytest.raises(exc_type) as info:
        await run(llm)
    assert info.value.status_code == status  # type: ignore[attr-defined]
    assert step.body["error"]["message"] in str(info.value)
    assert len(llm.requests) == 1


async def test_cut_stream_raises_mid_stream_error(llm: ScriptedLLMServer) -> None:
    llm.script(cut("partial text here", after_chunks=2))
    out = Collected()
    stream = await litellm.acompletion(**kwargs(llm))
    with pytest.raises(MidStreamFallbackError) as info:
        await consume(stream, out)
    assert out.text == "partial text"  # the deltas before the cut were delivered
    exc = info.value
    assert isinstance(exc, litellm.ServiceUnavailableError)
    assert isinstance(exc.original_exception, litellm.APIConnectionError)
    assert "Connection error" in str(exc)
    assert exc.generated_content == "partial text"
    assert exc.is_pre_first_chunk is False
    assert len(llm.requests) == 1 and not llm.last.completed


async def test_malformed_sse_line_raises(llm: ScriptedLLMServer) -> None:
    llm.script(malformed("hello world", after_chunks=2))
    out = Collected()
    stream = await litellm.acompletion(**kwargs(llm))
    with pytest.raises(MidStreamFallbackError) as info:
        await consume(stream, out)
    assert out.text == "hello wo"
    assert isinstance(info.value.original_exception, litellm.APIConnectionError)
    assert "Unterminated string" in str(info.value)


async def test_empty_stream(llm: ScriptedLLMServer) -> None:
    llm.script(empty())
    out = await run(llm)
    assert out.text == ""
    assert out.finish_reason == "stop"
    assert out.calls == {}


async def test_unscripted_request_is_a_clear_500(llm: ScriptedLLMServer) -> None:
    with pytest.raises(litellm.InternalServerError, match="no scripted reply"):
        await run(llm)
    assert len(llm.unscripted) == 1
    llm.fail_on_unscripted = False  # otherwise the fixture fails this test at teardown


async def test_abort_slow_stream_is_seen_by_server(llm: ScriptedLLMServer) -> None:
    llm.script(slow("a b c d e f g h i j k l", 0.05))
    stream = await litellm.acompletion(**kwargs(llm))
    got = ""
    async for chunk in stream:
        if chunk.choices:
            got += chunk.choices[0].delta.content or ""
        if len(got) >= 4:
            break
    await stream.aclose()
    assert got == "a b "
    deadline = time.monotonic() + 5
    while not llm.last.disconnected and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert llm.last.disconnected and not llm.last.completed


async def test_stop_does_not_wait_for_slow_streams() -> None:
    with ScriptedLLMServer() as server:
        server.script(slow("a b c", delay_per_chunk=20))
        task = asyncio.create_task(run(server))
        await asyncio.to_thread(server.wait_for_requests, 1, 5.0)
        started = time.monotonic()
        await asyncio.to_thread(server.stop)
        assert time.monotonic() - started < 2
        with pytest.raises(MidStreamFallbackError):
            await asyncio.wait_for(task, 5)


async def test_non_streaming_completion(llm: ScriptedLLMServer) -> None:
    llm.script(reasoning("hmm", then="Reading.", calls=[("read", {"path": "a.txt"})], usage=(5, 6)))
    response = await litellm.acompletion(**kwargs(llm, stream=False, stream_options=None))
    message = response.choices[0].message
    assert message.content == "Reading."
    assert message.reasoning_content == "hmm"
    assert message.tool_calls[0].id == "call_1"
    assert message.tool_calls[0].function.name == "read"
    assert json.loads(message.tool_calls[0].function.arguments) == {"path": "a.txt"}
    assert response.choices[0].finish_reason == "tool_calls"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (5, 6)
    assert llm.last.stream is False


def test_sync_litellm_completion(llm: ScriptedLLMServer) -> None:
    llm.script(text("sync works"))
    stream = litellm.completion(**kwargs(llm))
    pieces = [c.choices[0].delta.content or "" for c in stream if c.choices]
    assert "".join(pieces) == "sync works"


def test_callable_step_sees_the_request(llm: ScriptedLLMServer) -> None:
    def echo(request: RecordedRequest) -> Step:
        return text(f"you said {request.messages[-1]['content']}")

    llm.script(echo)
    stream = litellm.completion(**kwargs(llm))
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "you said hi"


def _post(url: str, body: dict[str, Any]) -> tuple[int, bytes]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_wire_format_without_v1_prefix(llm: ScriptedLLMServer) -> None:
    llm.script(text("hi!", chunks=2, usage=(3, 1), cached=2), text("no usage chunk"))
    body = {"model": "m", "messages": MESSAGES, "stream": True}
    status, raw = _post(
        f"{llm.url}/chat/completions", {**body, "stream_options": {"include_usage": True}}
    )
    assert status == 200
    events = raw.decode().split("\n\n")
    assert events[-2:] == ["data: [DONE]", ""]
    payloads = [json.loads(e.removeprefix("data: ")) for e in events[:-2]]
    assert all(p["object"] == "chat.completion.chunk" and p["model"] == "m" for p in payloads)
    assert payloads[0]["choices"][0]["delta"] == {"role": "assistant", "content": "hi"}
    assert payloads[1]["choices"][0]["delta"] == {"content": "!"}
    assert payloads[2]["choices"][0] == {
        "index": 0,
        "delta": {},
        "logprobs": None,
        "finish_reason": "stop",
    }
    assert payloads[3]["choices"] == []
    assert payloads[3]["usage"]["total_tokens"] == 4
    assert payloads[3]["usage"]["prompt_tokens_details"] == {"cached_tokens": 2}
    assert llm.last.path == "/chat/completions"

    status, raw = _post(f"{llm.url}/v1/chat/completions", body)
    assert status == 200
    assert b'"usage"' not in raw  # no include_usage, no usage chunk


def test_models_and_error_bodies(llm: ScriptedLLMServer) -> None:
    with urllib.request.urlopen(f"{llm.url}/v1/models", timeout=5) as resp:
        models = json.loads(resp.read())
    assert models["object"] == "list"
    assert "test-model" in [m["id"] for m in models["data"]]

    llm.script(overflow(), error(418, "teapot", body={"detail": "custom"}))
    status, raw = _post(f"{llm.api_base}/chat/completions", {"messages": []})
    assert status == 400
    assert json.loads(raw) == {
        "error": {
            "message": OVERFLOW_MESSAGE,
            "type": "invalid_request_error",
            "param": None,
            "code": "context_length_exceeded",
        }
    }
    status, raw = _post(f"{llm.api_base}/chat/completions", {"messages": []})
    assert (status, json.loads(raw)) == (418, {"detail": "custom"})
    assert llm.requests[0].body == {"messages": []}
