"""The agent against the local Gemini server: thought signatures kept and sent back, pi's
provider name, RetryInfo honoured, safety and malformed stops stored as errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.providers.gemini import Call, GeminiServer, Text, Thought, quota_exceeded, reply

from pitui.agent.events import RetryScheduled
from pitui.agent.session import AgentSession
from pitui.config.settings import Settings
from pitui.session import SessionStore

FAST = {"retry": {"baseDelayMs": 10, "maxDelayMs": 50, "maxRetries": 2}}


def make_agent(tmp_path: Path, gemini: GeminiServer) -> AgentSession:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "notes.txt").write_text("alpha\n")
    store = SessionStore.create(tmp_path / "sessions", str(project))
    return AgentSession(
        store,
        cwd=project,
        model="gemini/gemini-2.5-pro",
        api_base=gemini.api_base,
        thinking="high",
        settings=Settings.from_dict(FAST),
    )


def assistants(agent: AgentSession) -> list[dict[str, Any]]:
    return [m for m in agent.store.project().messages if m.get("role") == "assistant"]


@pytest.mark.slow
async def test_thought_signatures_survive_a_tool_loop(tmp_path: Path, gemini: GeminiServer) -> None:
    agent = make_agent(tmp_path, gemini)
    gemini.script(
        reply(Thought("List first."), Call("bash", {"command": "ls"})),
        reply(Thought("Read it."), Call("read", {"path": "notes.txt"})),
        reply(Thought("Answer."), Text("It says alpha.")),
    )
    result = await agent.prompt("what do my notes say?")
    assert result.ok, result.error
    first, second, third = assistants(agent)
    for message in (first, second, third):
        assert (message["api"], message["provider"], message["model"]) == (
            "google-generative-ai",
            "google",
            "gemini-2.5-pro",
        )
    thinking, tool = first["content"]
    assert thinking == {"type": "thinking", "thinking": "List first."}
    assert tool["type"] == "toolCall" and "__thought__" not in tool["id"]
    assert gemini.verify("bash", {"command": "ls"}, tool["thoughtSignature"])
    assert third["content"][-1]["type"] == "text" and third["content"][-1]["textSignature"]
    entries = [n for n in agent.store.path_to() if n.type == "model_change"]
    assert agent.store.data(entries[0])["provider"] == "google"
    # The server refuses a signed call coming back without its signature: it accepted them.
    calls = [p for c in gemini.last.body["contents"] for p in c["parts"] if "functionCall" in p]
    assert [bool(p.get("thoughtSignature")) for p in calls] == [True, True]


async def test_per_minute_quota_is_retried_after_retry_info(
    tmp_path: Path, gemini: GeminiServer
) -> None:
    agent = make_agent(tmp_path, gemini)
    retries: list[RetryScheduled] = []
    agent.subscribe(lambda e: retries.append(e) if isinstance(e, RetryScheduled) else None)
    gemini.script(quota_exceeded(0.3), reply(Text("Hello.")))
    result = await agent.prompt("hi")
    assert result.ok, result.error
    assert [r.delay for r in retries] == [0.3]
    assert retries[0].error.startswith("You exceeded your current quota")


async def test_safety_and_malformed_stops_are_errors(tmp_path: Path, gemini: GeminiServer) -> None:
    agent = make_agent(tmp_path, gemini)
    gemini.script(reply(Text("no"), finish_reason="SAFETY"))
    result = await agent.prompt("bad")
    assert result.error is not None and result.error.kind == "refused"
    assert assistants(agent)[-1]["stopReason"] == "error"
    assert "safety" in assistants(agent)[-1]["errorMessage"]
    gemini.script(reply(Text("x"), finish_reason="MALFORMED_FUNCTION_CALL"))
    result = await agent.prompt("call a tool")
    assert assistants(agent)[-1]["stopReason"] == "error"
    assert "malformed function call" in assistants(agent)[-1]["errorMessage"]
