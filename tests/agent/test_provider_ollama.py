"""The agent against the local Ollama server: ``num_ctx`` always sent (from settings or the
server's reported window), thinking for local reasoning models, mid-stream errors retried."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.providers.ollama import OllamaServer, Say, Think, Tool, reply

from pitui.agent.session import AgentSession
from pitui.config.settings import Settings
from pitui.session import SessionStore

FAST = {"retry": {"baseDelayMs": 10, "maxDelayMs": 50, "maxRetries": 2}}


def make_agent(
    tmp_path: Path, ollama: OllamaServer, thinking: str = "high", **settings: Any
) -> AgentSession:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    store = SessionStore.create(tmp_path / "sessions", str(project))
    return AgentSession(
        store,
        cwd=project,
        model="ollama_chat/qwen3",
        api_base=ollama.api_base,
        thinking=thinking,
        settings=Settings.from_dict({**FAST, **settings}),
    )


def assistants(agent: AgentSession) -> list[dict[str, Any]]:
    return [m for m in agent.store.project().messages if m.get("role") == "assistant"]


async def test_num_ctx_from_the_server_and_thinking_in_a_tool_loop(
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
        assert request.body["options"]["num_ctx"] == 40960  # /api/show's qwen3.context_length
        assert request.body["think"] is True
        assert request.truncated is False  # the system prompt alone exceeds Ollama's default
    first, second = assistants(agent)
    assert (first["api"], first["provider"], first["model"]) == (
        "openai-completions",
        "ollama",
        "qwen3",
    )
    assert first["content"][0]["thinking"] == "Need ls."
    sent = ollama.last.body["messages"]
    assert [m.get("thinking") for m in sent if m["role"] == "assistant"] == ["Need ls."]
    assert second["content"][-1] == {"type": "text", "text": "Empty folder."}
    assert agent.compactor.context_window == 40960  # compaction knows the window too


async def test_num_ctx_from_settings(tmp_path: Path, ollama: OllamaServer) -> None:
    agent = make_agent(
        tmp_path, ollama, thinking="off", models={"ollama_chat/qwen3": {"contextWindow": 16384}}
    )
    ollama.script(reply(Say("hi")))
    assert (await agent.prompt("hi")).ok
    assert ollama.last.body["options"]["num_ctx"] == 16384 and "think" not in ollama.last.body


async def test_a_mid_stream_error_is_retried(tmp_path: Path, ollama: OllamaServer) -> None:
    agent = make_agent(tmp_path, ollama, thinking="off")
    ollama.script(reply(Say("half an answer"), error_after=2), reply(Say("The whole answer.")))
    result = await agent.prompt("hi")
    assert result.ok, result.error
    failed, final = assistants(agent)[0], assistants(agent)[-1]
    raw = [
        agent.store.data(n)["message"]
        for n in agent.store.path_to()
        if n.type == "message" and n.role == "assistant"
    ]
    assert raw[0]["stopReason"] == "error"
    assert (
        raw[0]["errorMessage"]
        == "Ollama: an error was encountered while running the model: unexpected EOF"
    )
    assert final["content"][-1]["text"] == "The whole answer." and failed is final
