"""The agent against the local OpenRouter: the underlying model's window and limits, thinking
sent, reasoning_details kept and replayed, the reported cost stored, permanent 400s final."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.providers.openrouter import PRICES, Failure, OpenRouterServer, reply

from pitui.agent.session import AgentSession
from pitui.config.settings import Settings
from pitui.session import SessionStore

MODEL = "openrouter/anthropic/claude-sonnet-4.5"
FAST = {"retry": {"baseDelayMs": 10, "maxDelayMs": 50, "maxRetries": 2}}


def make_agent(tmp_path: Path, openrouter: OpenRouterServer) -> AgentSession:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    store = SessionStore.create(tmp_path / "sessions", str(project))
    return AgentSession(
        store,
        cwd=project,
        model=MODEL,
        api_base=openrouter.api_base,
        thinking="high",
        settings=Settings.from_dict(FAST),
    )


def assistants(agent: AgentSession) -> list[dict[str, Any]]:
    return [m for m in agent.store.project().messages if m.get("role") == "assistant"]


async def test_claude_through_openrouter_keeps_its_reasoning_in_a_tool_loop(
    tmp_path: Path, openrouter: OpenRouterServer
) -> None:
    agent = make_agent(tmp_path, openrouter)
    info = agent.model_info
    assert info is not None and info.context_window == 200_000 and info.supports_reasoning
    openrouter.script(
        reply("Looking.", "I should list the folder.", [("bash", {"command": "ls"})]),
        reply("The folder is empty.", "Nothing there."),
    )
    result = await agent.prompt("what is here?")
    assert result.ok, result.error
    first, second = assistants(agent)
    # Stored as pi stores Claude on OpenRouter (the Messages API's shape: one signed block).
    assert (first["api"], first["provider"], first["model"]) == (
        "anthropic-messages",
        "openrouter",
        "anthropic/claude-sonnet-4.5",
    )
    signature = openrouter.sign("I should list the folder.")
    assert first["content"][0] == {
        "type": "thinking",
        "thinking": "I should list the folder.",
        "thinkingSignature": signature,
    }
    details = [
        {
            "type": "reasoning.text",
            "text": "I should list the folder.",
            "signature": signature,
            "format": "anthropic-claude-v1",
            "index": 0,
        }
    ]
    body = openrouter.last.body
    assert body["reasoning"] == {"effort": "high"} and body["max_tokens"] == 64_000
    assert body["messages"][-2]["reasoning_details"] == details
    marks = json.dumps(body).count('"cache_control"')
    assert marks == 3  # Claude is cached through OpenRouter too
    usage = second["usage"]
    expected = round(
        (usage["input"] + usage["cacheRead"]) * PRICES[0] + usage["output"] * PRICES[1], 9
    )
    assert abs(usage["cost"]["total"] - expected) < 1e-9  # OpenRouter's reported cost
    assert usage["cost"]["total"] > 0


async def test_a_permanent_400_is_not_retried(tmp_path: Path, openrouter: OpenRouterServer) -> None:
    agent = make_agent(tmp_path, openrouter)
    raw = json.dumps(
        {"type": "error", "error": {"type": "invalid_request_error", "message": "Bad thing."}}
    )
    openrouter.script(
        Failure(400, "Provider returned error", {"raw": raw, "provider_name": "Anthropic"})
    )
    result = await agent.prompt("hi")
    assert result.error is not None and result.error.kind == "other"
    assert result.error.message == "Provider returned error: Bad thing."
    assert len(openrouter.requests) == 1
