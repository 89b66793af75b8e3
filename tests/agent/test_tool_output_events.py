"""Live bash output: ToolOutput events while the command runs (through the real bash tool and
the scripted server), throttled and bounded, key values redacted, and an abort that keeps what
was printed (stored as pi 1.6 stores it: the output, then ``Command aborted``)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from support.llm_server import ScriptedLLMServer, text, tool_call

from pitui.agent.events import AgentEvent, ToolEnd, ToolOutput
from pitui.agent.session import AgentSession
from pitui.agent.tool_output import OUTPUT_INTERVAL, ToolOutputStream
from pitui.agent.tools.environment import Redactor
from pitui.config.settings import Settings
from pitui.session import SessionStore

SECRET = "ghp_streamed_secret_value_42424242"


def make_agent(tmp_path: Path, llm: ScriptedLLMServer) -> AgentSession:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    store = SessionStore.create(tmp_path / "sessions", str(project))
    return AgentSession(
        store,
        cwd=project,
        model="openai/test-model",
        api_base=f"{llm.url}/v1",
        settings=Settings.from_dict({"retry": {"baseDelayMs": 10}}),
    )


def record(agent: AgentSession) -> list[tuple[float, AgentEvent]]:
    events: list[tuple[float, AgentEvent]] = []
    agent.subscribe(lambda event: events.append((time.monotonic(), event)))
    return events


def outputs(events: list[tuple[float, AgentEvent]]) -> list[tuple[float, ToolOutput]]:
    return [(t, e) for t, e in events if isinstance(e, ToolOutput)]


async def test_each_line_arrives_while_the_command_runs(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    command = "for i in 1 2 3 4; do echo tick $i; sleep 0.4; done"
    llm.script(tool_call("bash", {"command": command}, id="call-1"), text("done"))
    agent = make_agent(tmp_path, llm)
    events = record(agent)
    result = await asyncio.wait_for(agent.prompt("count"), timeout=30)
    assert result.ok
    live = outputs(events)
    assert all(e.call_id == "call-1" for _, e in live)
    assert "".join(e.text for _, e in live) == "tick 1\ntick 2\ntick 3\ntick 4\n"
    end = next(t for t, e in events if isinstance(e, ToolEnd))
    first = next(t for t, e in live if "tick 1" in e.text)
    # The first line was shown long before the command ended, and each line on its own.
    assert end - first > 1.0
    assert len(live) >= 4


async def test_abort_keeps_the_output_printed_so_far(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    llm.script(tool_call("bash", {"command": "echo first; echo second; sleep 30"}))
    agent = make_agent(tmp_path, llm)
    seen: list[str] = []

    def on_event(event: AgentEvent) -> None:
        if isinstance(event, ToolOutput):
            seen.append(event.text)
            if "second" in "".join(seen):
                agent.abort()

    agent.subscribe(on_event)
    result = await asyncio.wait_for(agent.prompt("go"), timeout=20)
    assert result.aborted
    stored = agent.store.project().messages[-1]
    assert stored["role"] == "toolResult" and stored["isError"] is True
    assert stored["content"] == [{"type": "text", "text": "first\nsecond\n\nCommand aborted"}]
    assert stored["details"]["aborted"] is True


async def test_abort_before_any_output_says_only_that(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    llm.script(tool_call("bash", {"command": "sleep 30"}))
    agent = make_agent(tmp_path, llm)
    agent.subscribe(
        lambda e: (
            asyncio.get_running_loop().call_later(0.3, agent.abort)
            if type(e).__name__ == "ToolStart"
            else None
        )
    )
    result = await asyncio.wait_for(agent.prompt("go"), timeout=20)
    assert result.aborted
    stored = agent.store.project().messages[-1]
    assert stored["content"] == [{"type": "text", "text": "Command aborted"}]


async def test_a_chatty_command_gives_a_few_bounded_events(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    lines = 300_000
    llm.script(tool_call("bash", {"command": f"seq 1 {lines}"}), text("ok"))
    agent = make_agent(tmp_path, llm)
    events = record(agent)
    start = time.monotonic()
    assert (await asyncio.wait_for(agent.prompt("flood"), timeout=60)).ok
    elapsed = time.monotonic() - start
    live = [e for _, e in outputs(events)]
    assert len(live) <= elapsed / OUTPUT_INTERVAL + 3
    assert max(len(e.text) for e in live) <= 64 * 1024
    # Every line is accounted for: shown or counted as left out; the newest ones are shown.
    assert sum(e.text.count("\n") + e.omitted_lines for e in live) == lines
    assert live[-1].text.endswith(f"{lines - 1}\n{lines}\n")


async def test_key_values_are_redacted_from_live_output_even_when_split(
    tmp_path: Path, llm: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    half = len(SECRET) // 2
    command = f"printf 'token={SECRET[:half]}'; sleep 0.3; printf '{SECRET[half:]} end\\n'"
    llm.script(tool_call("bash", {"command": command}), text("ok"))
    agent = make_agent(tmp_path, llm)
    events = record(agent)
    assert (await asyncio.wait_for(agent.prompt("leak"), timeout=30)).ok
    live = [e.text for _, e in outputs(events)]
    shown = "".join(live)
    assert shown == "token=[redacted GITHUB_TOKEN] end\n"
    assert not any(SECRET[:half] in piece or SECRET[half:] in piece for piece in live)


def test_stream_redactor_holds_back_only_a_possible_start() -> None:
    stream = Redactor({"abcdef12": "KEY"}).stream()
    assert stream.feed("x=abc") == "x="
    assert stream.feed("d") == ""
    assert stream.feed("ef12 y=ab") == "[redacted KEY] y="
    assert stream.feed("zz") == "abzz"
    assert stream.feed("tail ab") == "tail "
    assert stream.flush() == "ab"
    assert Redactor({}).stream().feed("abc") == "abc"


async def test_stream_keeps_the_newest_text_when_too_much_piles_up() -> None:
    sent: list[AgentEvent] = []
    live = ToolOutputStream("c", Redactor({}), sent.append, interval=10.0, max_pending=20)
    live.feed("first\n")  # sent at once (nothing was sent yet)
    for i in range(10):
        live.feed(f"line {i}\n")
    live.close()
    assert [e.text for e in sent if isinstance(e, ToolOutput)] == [
        "first\n",
        "line 8\nline 9\n",
    ]
    last = sent[-1]
    assert isinstance(last, ToolOutput) and last.omitted_lines == 8 and last.cut
