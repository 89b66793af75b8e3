"""Compaction through the scripted server: threshold between turns, overflow recovery, manual."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from support.llm_server import ScriptedLLMServer, error, overflow, slow, text, tool_call

from pitui.agent.compactor import CompactionFailed
from pitui.agent.events import AgentEvent, CompactionEnd, CompactionStart
from pitui.agent.session import AgentSession
from pitui.config.settings import Settings
from pitui.llm.apis import openai_completions
from pitui.llm.reply import ReplyBuilder
from pitui.llm.stream import build_call
from pitui.session import SessionStore

SUMMARY = "## Goal\nKeep going.\n\n## Progress\n### Done\n- [x] earlier work"
SMALL = {"models": {"openai/test-model": {"contextWindow": 8192, "maxOutput": 1024}}}


def make_agent(tmp_path: Path, llm: ScriptedLLMServer, **extra: Any) -> AgentSession:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    settings = Settings.from_dict({**SMALL, "retry": {"baseDelayMs": 10}, **extra})
    store = SessionStore.create(tmp_path / "sessions", str(project))
    return AgentSession(
        store, cwd=project, model="openai/test-model", api_base=f"{llm.url}/v1", settings=settings
    )


def compactions(agent: AgentSession) -> list[dict[str, Any]]:
    return [agent.store.data(n) for n in agent.store.path_to() if n.type == "compaction"]


def events_of(agent: AgentSession) -> list[AgentEvent]:
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    return events


def words(n: int) -> str:
    return " ".join(f"word{i}" for i in range(n))


async def seed_history(agent: AgentSession, llm: ScriptedLLMServer, turns: int = 3) -> None:
    """A few long turns (about 1,500 tokens each) with modest usage figures."""
    for i in range(turns):
        llm.script(text(f"answer {i} " + words(600), usage=(1000 + 1500 * i, 800)))
        result = await agent.prompt(f"question {i} " + words(600))
        assert result.ok


@pytest.mark.slow
async def test_threshold_compaction_between_turns(tmp_path: Path, llm: ScriptedLLMServer) -> None:
    agent = make_agent(tmp_path, llm)
    await seed_history(agent, llm)
    events = events_of(agent)
    # The tool turn's usage pushes the context past 8192 - 2048: compaction happens before the
    # next request of the same run.
    llm.script(
        tool_call("bash", {"command": "echo checked"}, usage=(6500, 40)),
        text(SUMMARY),
        text("All done after compaction.", usage=(2500, 10)),
    )
    result = await agent.prompt("please check " + words(50))
    assert result.ok
    [entry] = compactions(agent)
    assert entry["summary"].startswith(SUMMARY)
    assert entry["tokensBefore"] > 6144
    assert entry["fromHook"] is False and "systemMessage" in entry
    assert [type(e).__name__ for e in events if isinstance(e, CompactionStart | CompactionEnd)] == [
        "CompactionStart",
        "CompactionEnd",
    ]
    assert next(e for e in events if isinstance(e, CompactionStart)).reason == "threshold"
    # The summary request carried the structured prompt.
    summary_request = llm.requests[-2].body["messages"]
    assert summary_request[0]["role"] == "system"
    assert "<conversation>" in summary_request[1]["content"]
    assert "## Goal" in summary_request[1]["content"]
    # The request after the compaction is exactly the projection: checkpoint + summary + kept.
    projection = agent.store.project(result.entry_ids[-1])
    before_reply = agent.store.node(result.entry_ids[-1]).parent
    assert before_reply is not None
    context = agent.store.project(before_reply.id)
    info, target = agent.model_info, agent.route
    assert info is not None and target is not None
    call = build_call(
        info, context.messages, context.tools, agent.call_options(), ReplyBuilder(info, target)
    )
    expected = openai_completions.messages(call)
    sent = llm.requests[-1].body["messages"]
    assert [{k: v for k, v in m.items() if v is not None} for m in sent] == [
        {k: v for k, v in m.items() if v is not None} for m in expected
    ]
    roles = [m["role"] for m in projection.messages]
    assert roles[:2] == ["system", "compactionSummary"]
    assert "question 0" not in str(llm.requests[-1].body["messages"])


async def test_overflow_recovers_with_exactly_one_retry(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm)
    await seed_history(agent, llm)
    llm.script(overflow(), text(SUMMARY), text("Recovered answer.", usage=(2000, 10)))
    result = await agent.prompt("one more " + words(100))
    assert result.ok
    assert result.last_message is not None
    assert result.last_message["content"][0]["text"] == "Recovered answer."
    # The failed attempt is in the file, hidden by a context edit, then the compaction.
    types = [n.type for n in agent.store.path_to()]
    i = types.index("compaction")
    assert types[i - 2 : i] == ["message", "context_edit"]
    failed = agent.store.data(agent.store.path_to()[i - 2])["message"]
    assert failed["stopReason"] == "error"
    assert len(llm.requests) == 3 + 3  # seed, overflow, summary, retry
    retry_messages = llm.requests[-1].body["messages"]
    assert "maximum context length" not in str(retry_messages)
    assert retry_messages[-1]["role"] == "user" or retry_messages[-2]["role"] == "user"


async def test_second_overflow_stops_with_one_sentence(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm)
    await seed_history(agent, llm)
    llm.script(overflow(), text(SUMMARY), overflow())
    result = await agent.prompt("again " + words(100))
    assert result.error is not None and result.error.kind == "overflow"
    assert "still too large after compacting once" in result.error.message
    assert len(compactions(agent)) == 1
    assert len(llm.requests) == 3 + 3


@pytest.mark.slow
async def test_compaction_off_is_a_hard_off_switch(tmp_path: Path, llm: ScriptedLLMServer) -> None:
    """compaction.enabled false: an overflow ends the run with a sentence saying what to do,
    with no context edit, no compaction and no retry; no threshold compaction either."""
    agent = make_agent(tmp_path, llm, compaction={"enabled": False})
    await seed_history(agent, llm)
    llm.script(tool_call("bash", {"command": "echo x"}, usage=(7000, 40)), overflow())
    result = await agent.prompt("more " + words(100))
    assert result.error is not None and result.error.kind == "overflow"
    assert "compaction is off" in result.error.message and "/compact" in result.error.message
    assert compactions(agent) == []
    assert not [n for n in agent.store.path_to() if n.type == "context_edit"]
    assert len(llm.requests) == 3 + 2  # no summary request, no retry
    # A manual /compact still runs.
    llm.script(text(SUMMARY))
    await agent.compact()
    assert len(compactions(agent)) == 1


async def test_explicit_token_settings_are_never_clamped(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm, compaction={"keepRecentTokens": 6000})
    settings = agent.compactor.settings()
    # The 8k window clamps only the default reserve (to 2048), never the value the user set.
    assert (settings.reserve_tokens, settings.keep_recent_tokens) == (2048, 6000)
    overridden = make_agent(
        tmp_path,
        llm,
        compaction={"modelOverrides": {"openai/test-model": {"reserveTokens": 3000}}},
    )
    assert overridden.compactor.settings().reserve_tokens == 3000
    assert overridden.compactor.settings().keep_recent_tokens == 4096


async def test_failed_recovery_compaction_keeps_edits_and_appends_nothing(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm, retry={"enabled": False})
    await seed_history(agent, llm)
    llm.script(overflow(), error(400, "summarizer refused"))
    result = await agent.prompt("again " + words(100))
    assert result.error is not None and result.error.kind == "overflow"
    assert "compacting it failed" in result.error.message
    assert compactions(agent) == []
    assert agent.store.path_to()[-1].type == "context_edit"


async def test_manual_compaction_and_its_refusals(tmp_path: Path, llm: ScriptedLLMServer) -> None:
    agent = make_agent(tmp_path, llm, compaction={"enabled": False, "keepRecentTokens": 500})
    with pytest.raises(CompactionFailed, match="too small"):
        await agent.compact()
    await seed_history(agent, llm)
    # The cut splits the last turn: one request for the history, one for the turn's prefix.
    llm.script(text(SUMMARY), text("## Original Request\nquestion 2"))
    result = await agent.compact("focus on the answers")
    assert result.tokens_before > 0 and result.from_hook is False
    history, prefix = (r.body["messages"][1]["content"] for r in llm.requests[-2:])
    assert "<conversation>" in history and "Additional focus: focus on the answers" in history
    assert prefix.startswith("# Conversation") and "Additional focus" in prefix
    assert "**Turn Context (split turn):**" in result.summary
    with pytest.raises(CompactionFailed, match="Already compacted"):
        await agent.compact()
    # The projection now starts with the checkpoint and the summary.
    assert [m["role"] for m in agent.store.project().messages][:2] == [
        "system",
        "compactionSummary",
    ]


async def test_cancelling_a_compaction_appends_nothing(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm, compaction={"keepRecentTokens": 500})
    await seed_history(agent, llm)
    count = len(agent.store)
    llm.script(slow(SUMMARY, delay_per_chunk=0.5, chunks=10))
    task = asyncio.ensure_future(agent.compact())
    await asyncio.sleep(0.8)
    agent.abort()
    with pytest.raises(CompactionFailed, match="cancelled"):
        await task
    assert len(agent.store) == count and compactions(agent) == []


async def test_repeated_compaction_summarizes_the_previous_kept_tail(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm, compaction={"keepRecentTokens": 1000})
    await seed_history(agent, llm, turns=3)
    llm.script(text(SUMMARY), text("prefix one"))
    first = await agent.compact()
    await seed_history(agent, llm, turns=2)
    llm.script(text(SUMMARY + " (updated)"), text("prefix two"))
    await agent.compact()
    request = llm.requests[-2].body["messages"][1]["content"]
    # The previous summary is given for an update, and what it kept is summarized now.
    assert "<previous-summary>" in request
    kept_text = agent.store.get(first.first_kept_entry_id)["message"]["content"]
    sample = (kept_text if isinstance(kept_text, str) else kept_text[0]["text"])[:40]
    assert sample in request


async def test_print_json_reports_compaction_events(tmp_path: Path, llm: ScriptedLLMServer) -> None:
    from pitui.cli.print_mode import JsonPrinter

    agent = make_agent(tmp_path, llm)
    await seed_history(agent, llm)
    lines: list[str] = []

    class Out:
        def write(self, s: str) -> None:
            lines.append(s)

        def flush(self) -> None:
            pass

    agent.subscribe(JsonPrinter(Out()))  # type: ignore[arg-type]
    llm.script(overflow(), text(SUMMARY), text("fine", usage=(100, 5)))
    assert (await agent.prompt("x")).ok
    joined = "".join(lines)
    assert '"type": "compaction", "phase": "start", "reason": "overflow"' in joined
    assert '"phase": "end"' in joined and '"willRetry": true' in joined
