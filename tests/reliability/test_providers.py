"""Providers misbehaving: no crash, nothing lost, partial output kept, the user told what
happened (through the scripted server and litellm's real code path)."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import pytest
from support.llm_server import (
    ScriptedLLMServer,
    cut,
    empty,
    error,
    malformed,
    overflow,
    slow,
    text,
    tool_calls,
)

from pitui.agent.events import AgentEvent, RetryScheduled, RunError
from pitui.agent.session import AgentSession
from pitui.config.settings import Settings
from pitui.session import SessionStore


def agent_for(tmp_path: Path, api_base: str, **settings: Any) -> AgentSession:
    store = SessionStore.create(tmp_path / "sessions", str(tmp_path))
    merged = {
        "retry": {"baseDelayMs": 10, "maxRetries": 2},
        "models": {"openai/test-model": {"contextWindow": 8192, "maxOutput": 1024}},
        **settings,
    }
    return AgentSession(
        store,
        cwd=tmp_path,
        model="openai/test-model",
        api_base=api_base,
        settings=Settings.from_dict(merged),
    )


def stored_assistants(agent: AgentSession) -> list[dict[str, Any]]:
    return [agent.store.data(n)["message"] for n in agent.store.path_to() if n.role == "assistant"]


@pytest.mark.parametrize(
    ("steps", "retries"),
    [
        ([error(429, "Rate limit reached", headers={"Retry-After": "0"}), text("ok")], 1),
        ([error(429, "Rate limit reached"), text("ok")], 1),
        ([error(500, "internal"), text("ok")], 1),
        ([error(502, "bad gateway"), text("ok")], 1),
        ([error(503, "unavailable"), text("ok")], 1),
        ([cut("partial", after_chunks=1), text("ok")], 1),
        ([malformed(), text("ok")], 1),
    ],
    ids=["429-retry-after", "429", "500", "502", "503", "cut-stream", "malformed-sse"],
)
async def test_transient_failures_are_retried_and_kept(
    tmp_path: Path, llm: ScriptedLLMServer, steps: list[Any], retries: int
) -> None:
    agent = agent_for(tmp_path, f"{llm.url}/v1")
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    llm.script(*steps)
    result = await agent.prompt("hi")
    assert result.ok
    assert sum(isinstance(e, RetryScheduled) for e in events) == retries
    failed, final = stored_assistants(agent)
    assert failed["stopReason"] == "error" and failed["errorMessage"]
    assert final["content"][0]["text"] == "ok"


async def test_connection_refused_is_reported_in_one_sentence(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    agent = agent_for(
        tmp_path, f"http://127.0.0.1:{port}/v1", retry={"maxRetries": 1, "baseDelayMs": 10}
    )
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    result = await asyncio.wait_for(agent.prompt("hi"), timeout=60)
    assert result.error is not None and result.error.kind == "retryable"
    errors = [e for e in events if isinstance(e, RunError)]
    assert len(errors) == 1 and "\n" not in errors[0].message
    assert all(m["stopReason"] == "error" for m in stored_assistants(agent))


async def test_empty_reply_unknown_tool_and_bad_arguments(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = agent_for(tmp_path, f"{llm.url}/v1")
    llm.script(
        tool_calls([("no_such_tool", {"x": 1}), ("bash", "{broken json")]),
        empty(),
    )
    result = await agent.prompt("go")
    assert result.ok
    results = [m for m in agent.store.project().messages if m["role"] == "toolResult"]
    assert [r["isError"] for r in results] == [True, True]
    assert stored_assistants(agent)[-1]["content"] == []


async def test_slow_stream_can_be_aborted(tmp_path: Path, llm: ScriptedLLMServer) -> None:
    agent = agent_for(tmp_path, f"{llm.url}/v1")
    llm.script(slow("one two three four five", delay_per_chunk=1.0, chunks=5))
    task = asyncio.ensure_future(agent.prompt("talk"))
    await asyncio.sleep(1.5)
    agent.abort()
    result = await asyncio.wait_for(task, timeout=20)
    assert result.aborted
    last = stored_assistants(agent)[-1]
    assert last["stopReason"] == "aborted" and last["content"]


async def test_overflow_twice_in_a_row_stops_cleanly(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = agent_for(tmp_path, f"{llm.url}/v1", compaction={"keepRecentTokens": 10})
    for i in range(2):
        llm.script(text(f"answer {i} " + "word " * 300, usage=(500, 300)))
        assert (await agent.prompt(f"question {i} " + "word " * 300)).ok
    summary = "## Goal\nx"
    llm.script(overflow(), text(summary), text("prefix"), overflow())
    llm.fail_on_unscripted = False
    result = await agent.prompt("again")
    assert result.error is not None and result.error.kind == "overflow"
    assert "still too large" in result.error.message
    # Everything that happened is in the file; nothing is lost.
    reopened = SessionStore.open(agent.store.path, read_only=True)  # type: ignore[arg-type]
    assert len(reopened) == len(agent.store)
