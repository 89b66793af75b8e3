"""The agent loop against the scripted server, through litellm's real code path."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support.llm_server import (
    ScriptedLLMServer,
    cut,
    empty,
    error,
    overflow,
    slow,
    text,
    tool_call,
    tool_calls,
)

from pitui.agent.events import AgentEvent, RetryScheduled, ToolStart
from pitui.agent.session import AgentError, AgentSession
from pitui.config.settings import Settings
from pitui.session import SessionStore

FAST_RETRY = Settings.from_dict({"retry": {"baseDelayMs": 10, "maxDelayMs": 50, "maxRetries": 2}})


def make_agent(
    tmp_path: Path, llm: ScriptedLLMServer, settings: Settings = FAST_RETRY
) -> AgentSession:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    store = SessionStore.create(tmp_path / "sessions", str(project))
    return AgentSession(
        store,
        cwd=project,
        model="openai/test-model",
        api_base=f"{llm.url}/v1",
        settings=settings,
    )


def roles(agent: AgentSession) -> list[str]:
    return [str(m.get("role")) for m in agent.store.project().messages]


def path_types(agent: AgentSession) -> list[str]:
    out = []
    for node in agent.store.path_to():
        out.append(f"{node.type}:{node.role}" if node.type == "message" else node.type)
    return out


async def test_text_reply_is_stored_with_usage_and_cost_fields(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm)
    llm.script(text("Hello there.", usage=(120, 7)))
    result = await agent.prompt("hi")
    assert result.ok
    reply = agent.store.project().messages[-1]
    assert reply["role"] == "assistant" and reply["stopReason"] == "stop"
    assert reply["content"] == [{"type": "text", "text": "Hello there."}]
    assert reply["api"] == "openai-completions" and reply["provider"] == "openai"
    assert reply["model"] == "test-model"
    usage = reply["usage"]
    assert usage["input"] == 120 and usage["output"] == 7 and usage["totalTokens"] == 127
    assert set(usage["cost"]) == {"input", "output", "cacheRead", "cacheWrite", "total"}
    # The first run records the model, thinking level and the whole system prompt, in order.
    assert path_types(agent) == [
        "model_change",
        "thinking_level_change",
        "message:system",
        "message:user",
        "message:assistant",
    ]


async def test_system_prompt_sent_once_and_patched_only_on_change(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm)
    llm.script(text("one"), text("two"), text("three"))
    await agent.prompt("first")
    await agent.prompt("second")
    systems = [n for n in agent.store.path_to() if n.role == "system"]
    assert len(systems) == 1  # nothing changed: no patch
    (agent.cwd / "AGENTS.md").write_text("Always answer in French.\n")
    await agent.prompt("third")
    systems = [agent.store.data(n)["message"] for n in agent.store.path_to() if n.role == "system"]
    assert len(systems) == 2
    assert set(systems[1]["sections"]) == {"project_context"}
    request = llm.requests[-1].body["messages"]
    assert request[0]["role"] == "system"
    assert "Always answer in French." in request[0]["content"]
    assert [m["role"] for m in request].count("system") == 1


@pytest.mark.slow
async def test_tool_calls_run_and_results_are_sent_back(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm)
    (agent.cwd / "notes.txt").write_text("alpha\nbeta\n")
    llm.script(
        tool_calls([("read", {"path": "notes.txt"}), ("bash", {"command": "echo out"})]),
        text("Both done."),
    )
    result = await agent.prompt("look")
    assert result.ok
    assert roles(agent)[-5:] == ["user", "assistant", "toolResult", "toolResult", "assistant"]
    follow_up = llm.requests[1].body["messages"]
    tool_messages = [m for m in follow_up if m["role"] == "tool"]
    assert len(tool_messages) == 2
    assert "alpha" in tool_messages[0]["content"] and "out" in tool_messages[1]["content"]
    assert follow_up[-3]["tool_calls"][0]["function"]["name"] == "read"


async def test_unknown_tool_and_invalid_arguments_become_error_results(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm)
    llm.script(
        tool_calls([("launch_rockets", {"count": 3}), ("read", "{not json")]),
        text("Sorry."),
    )
    result = await agent.prompt("do it")
    assert result.ok
    results = [m for m in agent.store.project().messages if m["role"] == "toolResult"]
    assert [r["isError"] for r in results] == [True, True]
    assert "does not exist" in results[0]["content"][0]["text"]
    assert "Invalid JSON arguments" in results[1]["content"][0]["text"]


async def test_rate_limit_is_retried_and_failed_attempt_omitted(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm)
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    llm.script(error(429, "Rate limit reached", headers={"Retry-After": "0"}), text("ok now"))
    result = await agent.prompt("hi")
    assert result.ok
    assert [e.attempt for e in events if isinstance(e, RetryScheduled)] == [1]
    # The failed attempt stays in the file, hidden from the model by a context edit.
    assert path_types(agent)[-3:] == ["message:assistant", "context_edit", "message:assistant"]
    failed = next(
        agent.store.data(n)["message"] for n in agent.store.path_to() if n.role == "assistant"
    )
    assert failed["stopReason"] == "error" and "Rate limit" in failed["errorMessage"]
    assert [m["role"] for m in agent.store.project().messages][-2:] == ["user", "assistant"]
    assert len(llm.requests) == 2
    assert llm.requests[0].body["messages"] == llm.requests[1].body["messages"]


async def test_server_errors_give_up_after_max_retries(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm)
    llm.script(error(500, "internal"), error(502, "bad gateway"), error(503, "unavailable"))
    result = await agent.prompt("hi")
    assert result.error is not None and result.error.kind == "retryable"
    assert "gave up after 2 retries" in result.error.message
    assert len(llm.requests) == 3


async def test_authentication_error_is_never_retried(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm)
    llm.script(error(401, "Incorrect API key provided"))
    result = await agent.prompt("hi")
    assert result.error is not None and result.error.kind == "auth"
    assert len(llm.requests) == 1


async def test_context_overflow_is_classified(tmp_path: Path, llm: ScriptedLLMServer) -> None:
    agent = make_agent(tmp_path, llm)
    llm.script(overflow())
    result = await agent.prompt("hi")
    assert result.error is not None and result.error.kind == "overflow"
    assert len(llm.requests) == 1


async def test_length_stop_is_recorded(tmp_path: Path, llm: ScriptedLLMServer) -> None:
    agent = make_agent(tmp_path, llm)
    llm.script(text("cut short", finish_reason="length"))
    result = await agent.prompt("hi")
    assert result.ok
    assert agent.store.project().messages[-1]["stopReason"] == "length"


async def test_cut_stream_keeps_partial_output_as_error(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm, Settings.from_dict({"retry": {"enabled": False}}))
    llm.script(cut("partial answer", after_chunks=2, chunks=4))
    result = await agent.prompt("hi")
    stored = [
        agent.store.data(n)["message"] for n in agent.store.path_to() if n.role == "assistant"
    ]
    assert stored, "the failed reply must be stored"
    last = stored[-1]
    if result.error is not None:
        assert last["stopReason"] == "error" and last.get("errorMessage")
    else:  # a provider that ends the stream quietly: what arrived is kept
        assert last["stopReason"] in ("stop", "length")
    assert last["content"] and "partial" in last["content"][0]["text"]


async def test_empty_reply_is_stored(tmp_path: Path, llm: ScriptedLLMServer) -> None:
    agent = make_agent(tmp_path, llm)
    llm.script(empty())
    result = await agent.prompt("hi")
    assert result.ok
    assert agent.store.project().messages[-1]["content"] == []


async def test_abort_mid_stream_stores_aborted_reply(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm)
    llm.script(slow("one two three four five six seven eight", delay_per_chunk=0.3, chunks=8))
    deltas: list[str] = []

    def on_event(event: AgentEvent) -> None:
        if type(event).__name__ == "MessageDelta":
            deltas.append(event.text)  # type: ignore[union-attr]
            if len(deltas) == 2:
                agent.abort()

    agent.subscribe(on_event)
    result = await asyncio.wait_for(agent.prompt("hi"), timeout=30)
    assert result.aborted
    last = agent.store.project().messages[-1]
    assert last["role"] == "assistant" and last["stopReason"] == "aborted"
    assert last["content"][0]["text"] == "".join(deltas)


@pytest.mark.slow
async def test_abort_during_bash_kills_it_and_stores_a_result(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm)
    llm.script(tool_call("bash", {"command": "sleep 30"}))

    def on_event(event: AgentEvent) -> None:
        if isinstance(event, ToolStart):
            asyncio.get_running_loop().call_later(0.3, agent.abort)

    agent.subscribe(on_event)
    result = await asyncio.wait_for(agent.prompt("sleep"), timeout=20)
    assert result.aborted
    last = agent.store.project().messages[-1]
    assert last["role"] == "toolResult" and last["isError"] is True


@pytest.mark.slow
async def test_steering_message_is_delivered_after_the_tool_batch(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm)
    llm.script(tool_call("bash", {"command": "echo working"}), text("first"), text("second"))

    def on_event(event: AgentEvent) -> None:
        if isinstance(event, ToolStart):
            agent.steer("also check the tests")

    agent.subscribe(on_event)
    result = await agent.prompt("start")
    assert result.ok
    texts = [m["content"][0]["text"] for m in agent.store.project().messages if m["role"] == "user"]
    assert texts == ["start", "also check the tests"]
    assert roles(agent)[-4:] == ["assistant", "toolResult", "user", "assistant"]


async def test_missing_model_or_key_refuses_before_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    store = SessionStore.create(tmp_path / "s", str(tmp_path))
    agent = AgentSession(store, cwd=tmp_path, model="anthropic/claude-sonnet-4-5")
    with pytest.raises(AgentError, match="ANTHROPIC_API_KEY"):
        await agent.prompt("hi")
    assert len(store) == 0 and not store.persisted
    agent = AgentSession(store, cwd=tmp_path, model=None)
    with pytest.raises(AgentError, match="--model"):
        await agent.prompt("hi")


async def test_continued_session_uses_its_model_and_full_context(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm)
    llm.script(text("first answer"))
    await agent.prompt("first question")
    path = agent.store.path
    agent.store.close()
    store = SessionStore.open(path)
    again = AgentSession(store, cwd=agent.cwd, api_base=f"{llm.url}/v1", settings=FAST_RETRY)
    assert again.model_name == "openai/test-model"
    llm.script(text("second answer"))
    await again.prompt("second question")
    sent = [(m["role"], m["content"]) for m in llm.requests[-1].body["messages"][1:]]
    assert sent == [
        ("user", "first question"),
        ("assistant", "first answer"),
        ("user", "second question"),
    ]
    store.close()
