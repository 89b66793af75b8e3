"""The agent against the local OpenRouter: Claude on OpenRouter's Messages endpoint (as pi 1.6
sends it: Claude's own signed blocks, in stream order, interleaved thinking), other models on
its chat endpoint (reasoning_details kept and replayed), the underlying model's window and
limits, the reported cost stored, permanent 400s final."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.providers import anthropic
from support.providers.openrouter import API_KEY, PRICES, Failure, OpenRouterServer, reply

from pitui.agent.session import AgentSession
from pitui.config.settings import Settings
from pitui.session import SessionStore

MODEL = "openrouter/anthropic/claude-sonnet-4.5"
FAST = {"retry": {"baseDelayMs": 10, "maxDelayMs": 50, "maxRetries": 2}}


def make_agent(tmp_path: Path, openrouter: OpenRouterServer, model: str = MODEL) -> AgentSession:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    store = SessionStore.create(tmp_path / "sessions", str(project))
    return AgentSession(
        store,
        cwd=project,
        model=model,
        api_base=openrouter.api_base,
        thinking="high",
        settings=Settings.from_dict(FAST),
    )


def assistants(agent: AgentSession) -> list[dict[str, Any]]:
    return [m for m in agent.store.project().messages if m.get("role") == "assistant"]


@pytest.mark.slow
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
    assert (first["api"], first["provider"], first["model"]) == (
        "anthropic-messages",
        "openrouter",
        "anthropic/claude-sonnet-4.5",
    )
    thinking = first["content"][0]
    assert thinking["type"] == "thinking" and thinking["thinking"] == "I should list the folder."
    assert openrouter.messages.verify(thinking["thinking"], thinking["thinkingSignature"])
    last = openrouter.last
    assert last.path == "/api/v1/messages"
    assert last.header("authorization") == f"Bearer {API_KEY}"
    assert last.header("anthropic-beta") == "interleaved-thinking-2025-05-14"
    body = last.body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 16384}
    assert body["max_tokens"] == 64_000
    replayed = body["messages"][-2]["content"][0]
    assert replayed == {
        "type": "thinking",
        "thinking": "I should list the folder.",
        "signature": thinking["thinkingSignature"],
    }
    assert json.dumps(body).count('"cache_control"') == 3  # Claude is cached here too
    # Thinking after the tool result reached the model: the interleaved beta was sent.
    assert second["content"][0]["thinking"] == "Nothing there."
    usage = second["usage"]
    prompt = usage["input"] + usage["cacheRead"] + usage["cacheWrite"]
    expected = round(prompt * PRICES[0] + usage["output"] * PRICES[1], 9)
    assert abs(usage["cost"]["total"] - expected) < 1e-9  # OpenRouter's reported cost
    assert usage["cost"]["total"] > 0


@pytest.mark.slow
async def test_claude_blocks_are_stored_in_stream_order(
    tmp_path: Path, openrouter: OpenRouterServer
) -> None:
    agent = make_agent(tmp_path, openrouter)
    openrouter.script(
        anthropic.reply(
            anthropic.Thinking("First, look."),
            anthropic.Text("Let me check."),
            anthropic.Thinking("ls is enough."),
            anthropic.ToolUse("bash", {"command": "ls"}),
        ),
        anthropic.text("Nothing here."),
    )
    result = await agent.prompt("what is here?")
    assert result.ok, result.error
    first = assistants(agent)[0]
    assert [
        (b["type"], b.get("thinking") or b.get("text") or b.get("name")) for b in first["content"]
    ] == [
        ("thinking", "First, look."),
        ("text", "Let me check."),
        ("thinking", "ls is enough."),
        ("toolCall", "bash"),
    ]
    # The continuation sends the blocks back in that order, so the server accepts it.
    sent = [b["type"] for b in openrouter.last.body["messages"][-2]["content"]]
    assert sent == ["thinking", "text", "thinking", "tool_use"]


@pytest.mark.slow
async def test_other_models_keep_their_reasoning_details(
    tmp_path: Path, openrouter: OpenRouterServer
) -> None:
    agent = make_agent(tmp_path, openrouter, "openrouter/openai/gpt-5")
    openrouter.script(
        reply("", "Listing first.", [("bash", {"command": "ls"})]),
        reply("Empty.", "Done."),
    )
    result = await agent.prompt("what is here?")
    assert result.ok, result.error
    first = assistants(agent)[0]
    assert (first["api"], first["provider"]) == ("openai-completions", "openrouter")
    details = [
        {
            "type": "reasoning.text",
            "text": "Listing first.",
            "signature": openrouter.sign("Listing first."),
            "format": "anthropic-claude-v1",
            "index": 0,
        }
    ]
    assert first["content"][0]["thinking"] == "Listing first."
    assert json.loads(first["content"][0]["thinkingSignature"]) == details
    body = openrouter.last.body
    assert openrouter.last.path == "/api/v1/chat/completions"
    assert body["reasoning"] == {"effort": "high"} and body["usage"] == {"include": True}
    assert body["messages"][-2]["reasoning_details"] == details


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
