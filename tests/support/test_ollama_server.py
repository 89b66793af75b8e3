"""The local Ollama server speaks /api/chat NDJSON through litellm's ``ollama_chat`` path,
truncates like the real one without ``num_ctx``, and fails mid-stream on request."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from typing import Any

import pytest

from support.providers.ollama import OllamaServer, Say, Think, Tool, reply


def call(server: OllamaServer, messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    from pitui.llm.lazy import litellm

    async def run() -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": "ollama_chat/qwen3",
            "api_base": server.api_base,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_retries": 0,
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
            out["calls"] += [t.model_dump() for t in delta.tool_calls or []]
            out["finish"] = chunk.choices[0].finish_reason or out["finish"]
        return out

    return asyncio.run(run())


def test_streams_thinking_text_and_tool_calls(ollama: OllamaServer) -> None:
    ollama.script(reply(Think("Hmm."), Say("Looking."), Tool("bash", {"command": "ls"})))
    out = call(ollama, [{"role": "user", "content": "hi"}], reasoning_effort="high", num_ctx=40960)
    assert (out["reasoning"], out["text"]) == ("Hmm.", "Looking.")
    assert json.loads(out["calls"][0]["function"]["arguments"]) == {"command": "ls"}
    body = ollama.last.body
    assert body["think"] is True and body["options"]["num_ctx"] == 40960


def test_without_num_ctx_a_long_prompt_is_silently_truncated(ollama: OllamaServer) -> None:
    ollama.script(reply(Say("ok")), reply(Say("ok")))
    long = [{"role": "user", "content": "word " * 5000}]
    call(ollama, long)
    assert ollama.last.truncated is True
    assert call(ollama, long, num_ctx=40960)["text"] == "ok"
    assert ollama.last.truncated is False


def test_show_reports_the_context_length(ollama: OllamaServer) -> None:
    request = urllib.request.Request(
        f"{ollama.url}/api/show", data=json.dumps({"model": "qwen3"}).encode(), method="POST"
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        assert json.loads(response.read())["model_info"]["qwen3.context_length"] == 40960


def test_refuses_think_without_the_capability_and_unknown_models(ollama: OllamaServer) -> None:
    with pytest.raises(Exception, match="does not support thinking"):
        call(
            ollama,
            [{"role": "user", "content": "hi"}],
            model="ollama_chat/llama3",
            reasoning_effort="high",
        )
    with pytest.raises(Exception, match="not found, try pulling it first"):
        call(ollama, [{"role": "user", "content": "hi"}], model="ollama_chat/nope")


def test_mid_stream_error_line(ollama: OllamaServer) -> None:
    ollama.script(reply(Say("partial words here"), error_after=2))
    with pytest.raises(Exception, match="unexpected EOF"):
        call(ollama, [{"role": "user", "content": "hi"}])
