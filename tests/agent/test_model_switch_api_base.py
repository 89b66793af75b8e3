"""The API base belongs to a model: switching models never sends a request (or a key) to the
previous model's server."""

from __future__ import annotations

from pathlib import Path

from support.providers import anthropic as anthropic_api
from support.providers import ollama as ollama_api

from pitui.agent.session import AgentSession
from pitui.config.settings import Settings
from pitui.session import SessionStore


async def test_model_switch_uses_the_new_models_own_endpoint(
    tmp_path: Path, ollama: ollama_api.OllamaServer, claude: anthropic_api.AnthropicServer
) -> None:
    store = SessionStore.create(tmp_path / "sessions", str(tmp_path))
    settings = Settings.from_dict(
        {"models": {"anthropic/claude-sonnet-4-5": {"apiBase": claude.base_url}}}
    )
    agent = AgentSession(
        store, cwd=tmp_path, model="ollama_chat/qwen3", api_base=ollama.api_base, settings=settings
    )
    ollama.script(ollama_api.reply(ollama_api.Say("local answer")))
    assert (await agent.prompt("hi")).ok
    agent.set_model("anthropic/claude-sonnet-4-5")
    assert agent.api_base == claude.base_url
    claude.script(anthropic_api.text("claude answer"))
    assert (await agent.prompt("and you?")).ok
    assert len(ollama.requests) == 1 and len(claude.requests) == 1
    assert all("x-api-key" not in r.headers for r in ollama.requests)
    assert claude.last.header("x-api-key") == anthropic_api.API_KEY
    agent.set_model("openai/gpt-4.1")
    assert agent.api_base is None  # OpenAI's own endpoint, not Ollama's host
    agent.set_model("ollama_chat/qwen3")
    assert agent.api_base == ollama.api_base  # --api-base came with this model


def test_api_base_without_model_belongs_to_the_sessions_model(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path / "sessions", str(tmp_path))
    store.append_model_change("ollama", "qwen3")
    agent = AgentSession(store, cwd=tmp_path, api_base="http://gpu-box:11434", settings=Settings())
    assert agent.model_name == "ollama/qwen3" and agent.api_base == "http://gpu-box:11434"
    agent.set_model("anthropic/claude-sonnet-4-5")
    assert agent.api_base is None
    assert agent.api_base_for("ollama_chat/qwen3") == "http://gpu-box:11434"
