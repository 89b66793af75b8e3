"""The agent against the local Ollama server: its OpenAI-compatible endpoint as pi 1.6 uses
it (no context size sent, so Ollama never allocates the whole window), the window it reports
learned for the gauge and compaction, thinking for local reasoning models, ``numCtx`` through
litellm's ``/api/chat`` when settings ask for a context size, mid-stream errors retried."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.providers.ollama import OllamaServer, Say, Think, Tool, reply

from pitui.agent.session import AgentSession
from pitui.config.settings import Settings
from pitui.session import SessionStore

FAST = {"retry": {"baseDelayMs": 10, "maxDelayMs": 50, "maxRetries": 2}}


def make_agent(
    tmp_path: Path,
    ollama: OllamaServer,
    thinking: str = "high",
    model: str = "ollama_chat/qwen3",
    **settings: Any,
) -> AgentSession:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    store = SessionStore.create(tmp_path / "sessions", str(project))
    return AgentSession(
        store,
        cwd=project,
        model=model,
        api_base=ollama.api_base,
        thinking=thinking,
        settings=Settings.from_dict({**FAST, **settings}),
    )


def assistants(agent: AgentSession) -> list[dict[str, Any]]:
    return [m for m in agent.store.project().messages if m.get("role") == "assistant"]


@pytest.mark.slow
async def test_openai_endpoint_without_a_context_size_and_thinking_in_a_tool_loop(
    tmp_path: Path, ollama: OllamaServer
) -> None:
    agent = make_agent(tmp_path, ollama)
    ollama.script(
        reply(Think("Need ls."), Tool("bash", {"command": "ls"})),
        reply(Think("Done."), Say("Empty folder.")),
    )
    result = await agent.prompt("list")
    assert result.ok, result.error
    for request in ollama.requests:
        assert request.path == "/v1/chat/completions"
        assert "options" not in request.body and "num_ctx" not in request.body
        assert request.body["reasoning_effort"] == "high"
    first, second = assistants(agent)
    assert (first["api"], first["provider"], first["model"]) == (
        "openai-completions",
        "ollama",
        "qwen3",
    )
    assert first["content"][0] == {
        "type": "thinking",
        "thinking": "Need ls.",
        "thinkingSignature": "reasoning",
    }
    sent = ollama.last.body["messages"]
    assert [m.get("reasoning") for m in sent if m["role"] == "assistant"] == ["Need ls."]
    assert second["content"][-1] == {"type": "text", "text": "Empty folder."}
    # The window /api/show reports (qwen3.context_length) is what the gauge and compaction use.
    assert agent.compactor.context_window == 40960


async def test_an_ollama_model_named_ollama_slash_and_a_v1_base_go_to_the_same_endpoint(
    tmp_path: Path, ollama: OllamaServer
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    store = SessionStore.create(tmp_path / "sessions", str(project))
    agent = AgentSession(
        store,
        cwd=project,
        model="ollama/qwen3",
        api_base=ollama.api_base + "/v1/",
        settings=Settings.from_dict(FAST),
    )
    ollama.script(reply(Say("hi")))
    assert (await agent.prompt("hi")).ok
    assert ollama.last.path == "/v1/chat/completions" and "reasoning_effort" not in ollama.last.body


async def test_num_ctx_from_settings_goes_to_ollamas_own_api(
    tmp_path: Path, ollama: OllamaServer
) -> None:
    agent = make_agent(
        tmp_path, ollama, thinking="high", models={"ollama_chat/qwen3": {"numCtx": 16384}}
    )
    ollama.script(reply(Think("Short."), Say("hi")))
    assert (await agent.prompt("hi")).ok
    request = ollama.last
    assert request.path == "/api/chat"
    assert request.body["options"]["num_ctx"] == 16384 and request.body["think"] is True
    assert request.truncated is False
    (stored,) = assistants(agent)
    assert stored["provider"] == "ollama" and stored["content"][-1]["text"] == "hi"


async def test_a_mid_stream_error_is_retried(tmp_path: Path, ollama: OllamaServer) -> None:
    agent = make_agent(tmp_path, ollama, thinking="off")
    ollama.script(reply(Say("half an answer"), error_after=2), reply(Say("The whole answer.")))
    result = await agent.prompt("hi")
    assert result.ok, result.error
    raw = [
        agent.store.data(n)["message"]
        for n in agent.store.path_to()
        if n.type == "message" and n.role == "assistant"
    ]
    assert raw[0]["stopReason"] == "error"
    assert raw[0]["errorMessage"] == (
        "an error was encountered while running the model: unexpected EOF"
    )
    (partial,) = raw[0]["content"]  # what arrived before the failure is kept
    assert (
        partial["type"] == "text"
        and partial["text"]
        and "half an answer".startswith(partial["text"])
    )
    assert assistants(agent)[-1]["content"][-1]["text"] == "The whole answer."
