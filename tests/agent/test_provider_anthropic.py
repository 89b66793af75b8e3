"""The agent against the local Anthropic Messages server (litellm's real code path): Claude
thinking that never breaks a session, pi's output budgets, prompt caching, Claude's own stops
and errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.providers.anthropic import (
    API_KEY,
    AnthropicServer,
    Redacted,
    Text,
    Thinking,
    ToolUse,
    overloaded,
    rate_limited,
    reply,
    text,
    too_long,
)

from pitui.agent.events import AgentEvent, ReplyTruncated, RetryScheduled, RunError
from pitui.agent.session import AgentSession
from pitui.config.settings import Settings
from pitui.session import SessionStore

MODEL = "anthropic/claude-sonnet-4-5"
FAST = {"retry": {"baseDelayMs": 10, "maxDelayMs": 50, "maxRetries": 2}}


def make_agent(
    tmp_path: Path, claude: AnthropicServer, thinking: str = "high", **settings: Any
) -> AgentSession:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "notes.txt").write_text("alpha\nbeta\n")
    store = SessionStore.create(tmp_path / "sessions", str(project))
    return AgentSession(
        store,
        cwd=project,
        model=MODEL,
        api_base=claude.base_url,
        thinking=thinking,
        settings=Settings.from_dict({**FAST, **settings}),
    )


def assistants(agent: AgentSession) -> list[dict[str, Any]]:
    return [m for m in agent.store.project().messages if m.get("role") == "assistant"]


def interleaved_tool_loop(claude: AnthropicServer) -> None:
    claude.script(
        reply(
            Thinking("The user wants the files."),
            Redacted(),
            Text("Let me look."),
            Thinking("ls first, then read."),
            ToolUse("bash", {"command": "ls"}),
        ),
        reply(Thinking("notes.txt exists; read it."), ToolUse("read", {"path": "notes.txt"})),
        reply(Thinking("Done."), Text("notes.txt holds alpha and beta.")),
    )


@pytest.mark.slow
async def test_tool_loop_with_interleaved_and_redacted_thinking_is_stored_as_pi_stores_it(
    tmp_path: Path, claude: AnthropicServer
) -> None:
    agent = make_agent(tmp_path, claude)
    interleaved_tool_loop(claude)
    result = await agent.prompt("what is in this folder?")
    assert result.ok, result.error
    first, second, third = assistants(agent)
    assert [b["type"] for b in first["content"]] == [
        "thinking",
        "thinking",
        "text",
        "thinking",
        "toolCall",
    ]
    one, redacted, _, two, _ = first["content"]
    assert one["thinking"] == "The user wants the files."
    assert claude.verify(one["thinking"], one["thinkingSignature"])
    assert claude.verify(two["thinking"], two["thinkingSignature"])
    assert one["thinkingSignature"] != two["thinkingSignature"]
    assert redacted == {
        "type": "thinking",
        "thinking": "[Reasoning redacted]",
        "thinkingSignature": redacted["thinkingSignature"],
        "redacted": True,
    }
    assert claude.verify_redacted(redacted["thinkingSignature"])
    for message in (first, second, third):
        assert (message["api"], message["provider"], message["model"]) == (
            "anthropic-messages",
            "anthropic",
            "claude-sonnet-4-5",
        )
    assert third["stopReason"] == "stop" and third["content"][-1]["text"].startswith("notes.txt")
    # Every continuation carried the reply's own blocks, unchanged and in order.
    sent = claude.requests[1].body["messages"][1]["content"]
    assert [b["type"] for b in sent] == [
        "thinking",
        "redacted_thinking",
        "text",
        "thinking",
        "tool_use",
    ]


@pytest.mark.slow
async def test_a_second_prompt_resends_every_signed_block(
    tmp_path: Path, claude: AnthropicServer
) -> None:
    agent = make_agent(tmp_path, claude)
    interleaved_tool_loop(claude)
    assert (await agent.prompt("what is in this folder?")).ok
    claude.script(reply(Thinking("Short answer."), Text("Yes.")))
    result = await agent.prompt("is that all?")
    assert result.ok, result.error
    history = claude.last.body["messages"]
    signed = [
        b
        for m in history
        for b in m["content"]
        if isinstance(m["content"], list) and b.get("type") == "thinking"
    ]
    assert len(signed) == 4 and all(claude.verify(b["thinking"], b["signature"]) for b in signed)


async def test_output_and_thinking_budgets_like_pi(tmp_path: Path, claude: AnthropicServer) -> None:
    agent = make_agent(tmp_path, claude, thinking="medium")
    claude.script(text("ok"))
    assert (await agent.prompt("hi")).ok
    body = claude.last.body
    assert body["max_tokens"] == 64_000  # Claude Sonnet 4.5's maximum output
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    agent.set_thinking("off")
    claude.script(text("ok"))
    assert (await agent.prompt("again")).ok
    assert "thinking" not in claude.last.body and claude.last.body["max_tokens"] == 64_000


async def test_a_reply_at_max_tokens_is_length_and_never_compacts(
    tmp_path: Path, claude: AnthropicServer
) -> None:
    agent = make_agent(tmp_path, claude)
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    claude.script(
        reply(Thinking("Long."), Text("A very long answer that stops"), stop_reason="max_tokens")
    )
    result = await agent.prompt("write a novel")
    assert result.ok  # the paid answer is kept and shown, not hidden by a recovery
    (message,) = assistants(agent)
    assert message["stopReason"] == "length"
    assert message["content"][-1]["text"] == "A very long answer that stops"
    assert [e for e in events if isinstance(e, ReplyTruncated)] == [ReplyTruncated(64_000)]
    assert not any(n.type == "compaction" for n in agent.store.path_to())
    assert len(claude.requests) == 1


@pytest.mark.slow
async def test_prompt_caching_breakpoints_and_cache_accounting(
    tmp_path: Path, claude: AnthropicServer
) -> None:
    agent = make_agent(tmp_path, claude)
    interleaved_tool_loop(claude)
    assert (await agent.prompt("what is in this folder?")).ok
    for request in claude.requests:
        body = request.body
        assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
        assert all("cache_control" not in t for t in body["tools"][:-1])
        assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
        last = body["messages"][-1]["content"][-1]
        assert last["cache_control"] == {"type": "ephemeral"}
        marks = json.dumps(body).count('"cache_control"')
        assert marks == 3
    first, second, third = assistants(agent)
    assert first["usage"]["cacheWrite"] > 1000 and first["usage"]["cacheRead"] == 0
    assert second["usage"]["cacheRead"] >= first["usage"]["cacheWrite"]
    assert third["usage"]["cacheRead"] > second["usage"]["cacheRead"]
    info = agent.model_info
    assert info is not None
    assert (
        second["usage"]["cost"]["cacheRead"] == second["usage"]["cacheRead"] * info.cache_read_cost
    )
    assert second["usage"]["input"] < 200  # only what follows the cached prefix is full price


async def test_refusal_is_an_error_with_the_explanation(
    tmp_path: Path, claude: AnthropicServer
) -> None:
    agent = make_agent(tmp_path, claude)
    errors: list[RunError] = []
    agent.subscribe(lambda e: errors.append(e) if isinstance(e, RunError) else None)
    claude.script(
        reply(
            Text(""),
            stop_reason="refusal",
            stop_details={
                "type": "refusal",
                "explanation": "This request breaks the usage policy.",
            },
        ),
        reply(Text("Plain answer.")),
    )
    result = await agent.prompt("something bad")
    (message,) = assistants(agent)
    assert message["stopReason"] == "error"
    assert message["errorMessage"] == "This request breaks the usage policy."
    assert (
        result.error is not None and errors[-1].message == "This request breaks the usage policy."
    )
    assert len(claude.requests) == 1  # a refusal is not retried
    assert (await agent.prompt("something else")).ok


async def test_pause_turn_is_a_normal_stop(tmp_path: Path, claude: AnthropicServer) -> None:
    agent = make_agent(tmp_path, claude)
    claude.script(reply(Text("Paused here."), stop_reason="pause_turn"))
    result = await agent.prompt("search the web")
    assert result.ok and assistants(agent)[0]["stopReason"] == "stop"
    assert not any(n.type == "compaction" for n in agent.store.path_to())


async def test_overloaded_and_rate_limited_are_retried_with_readable_errors(
    tmp_path: Path, claude: AnthropicServer
) -> None:
    agent = make_agent(tmp_path, claude)
    retries: list[RetryScheduled] = []
    agent.subscribe(lambda e: retries.append(e) if isinstance(e, RetryScheduled) else None)
    claude.script(overloaded(), rate_limited(0.2), text("Finally."))
    result = await agent.prompt("hi")
    assert result.ok
    assert retries[0].error == "Overloaded"
    assert retries[1].error.startswith("This request would exceed the rate limit")
    assert retries[1].delay >= 0.2  # retry-after honoured
    stored = [m.get("errorMessage") for m in assistants(agent)[:0]]
    failed = [
        agent.store.data(n)["message"]
        for n in agent.store.path_to()
        if n.type == "message" and n.role == "assistant"
    ]
    assert [m.get("errorMessage") for m in failed[:2]] == [retries[0].error, retries[1].error]
    assert all("b'" not in str(m.get("errorMessage")) for m in failed) and not stored


async def test_a_failed_stream_keeps_the_input_usage(
    tmp_path: Path, claude: AnthropicServer
) -> None:
    agent = make_agent(tmp_path, claude)
    claude.script(reply(Text("partial words here"), error_after=4), text("Whole answer."))
    result = await agent.prompt("hi")
    assert result.ok
    failed = next(
        agent.store.data(n)["message"]
        for n in agent.store.path_to()
        if n.type == "message" and n.role == "assistant"
    )
    assert failed["stopReason"] == "error" and failed["errorMessage"] == "Overloaded"
    usage = failed["usage"]
    assert usage["input"] + usage["cacheWrite"] + usage["cacheRead"] > 0
    assert failed["usage"]["cost"]["total"] > 0


async def test_auth_errors_name_the_variable(
    tmp_path: Path, claude: AnthropicServer, monkeypatch: Any
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-wrong")
    agent = make_agent(tmp_path, claude)
    result = await agent.prompt("hi")
    assert result.error is not None and result.error.kind == "auth"
    assert result.error.message == (
        "The provider refused the API key (invalid x-api-key): check ANTHROPIC_API_KEY."
    )


async def test_prompt_too_long_compacts_and_retries_once(
    tmp_path: Path, claude: AnthropicServer
) -> None:
    agent = make_agent(tmp_path, claude, compaction={"keepRecentTokens": 10})
    claude.script(text("First answer " * 20))
    assert (await agent.prompt("start " * 40)).ok
    claude.script(too_long(), text("## Goal\n- summarized"), text("After compaction."))
    result = await agent.prompt("next")
    assert result.ok, result.error
    assert any(n.type == "compaction" for n in agent.store.path_to())
    assert assistants(agent)[-1]["content"][-1]["text"] == "After compaction."


async def test_a_stream_that_goes_silent_is_retried_as_stalled(
    tmp_path: Path, claude: AnthropicServer
) -> None:
    agent = make_agent(tmp_path, claude, thinking="off", httpIdleTimeoutMs=300)
    claude.script(
        reply(Text("This reply stops halfway."), stall_after=3, stall_seconds=5),
        text("The retried answer."),
    )
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    result = await agent.prompt("hi")
    assert result.ok, result.error
    retries = [e for e in events if isinstance(e, RetryScheduled)]
    assert len(retries) == 1 and "stalled" in retries[0].error
    assert "sent nothing for 0.3 s" in retries[0].error
    assert assistants(agent)[-1]["content"] == [{"type": "text", "text": "The retried answer."}]
    assert len(claude.requests) == 2


async def test_pings_keep_a_slow_stream_alive(tmp_path: Path, claude: AnthropicServer) -> None:
    agent = make_agent(tmp_path, claude, thinking="off", httpIdleTimeoutMs=300)
    claude.script(
        reply(
            Text("Thinking long, but pinging."), stall_after=3, stall_seconds=1.0, stall_pings=True
        )
    )
    result = await agent.prompt("hi")
    assert result.ok, result.error
    assert assistants(agent)[-1]["content"] == [
        {"type": "text", "text": "Thinking long, but pinging."}
    ]
    assert len(claude.requests) == 1


@pytest.mark.slow
async def test_claude_opus_4_7_thinks_adaptively_with_pis_effort(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    with AnthropicServer(max_output=128_000) as server:
        project = tmp_path / "project"
        project.mkdir()
        agent = AgentSession(
            SessionStore.create(tmp_path / "sessions", str(project)),
            cwd=project,
            model="anthropic/claude-opus-4-7",
            api_base=server.base_url,
            thinking="high",
            settings=Settings.from_dict(FAST),
        )
        server.script(
            reply(Thinking("Look first."), ToolUse("bash", {"command": "ls"})),
            reply(Thinking("Now answer."), Text("Nothing here.")),
        )
        result = await agent.prompt("what is here?")
        assert result.ok, result.error
        for request in server.requests:
            assert request.body["thinking"] == {"type": "adaptive", "display": "summarized"}
            assert request.body["output_config"] == {"effort": "high"}  # high, not xhigh
            assert request.header("anthropic-beta") is None
            assert request.thinking_dropped is False  # adaptive thinking interleaves
        first, second = assistants(agent)
        assert first["content"][0]["thinking"] == "Look first."
        assert second["content"][0]["thinking"] == "Now answer."
