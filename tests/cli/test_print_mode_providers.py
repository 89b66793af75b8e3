"""``pitui -p`` (through its main) runs a thinking tool loop against every local provider server
and writes the session as pi stores it; a retried request prints only its final answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.pi_check import pi_context
from support.providers import anthropic as anthropic_api
from support.providers.loops import ANSWER, LOOPS

from pitui.cli import main


def thinking_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in message["content"] if b.get("type") == "thinking"]


def run_print(
    capsys: pytest.CaptureFixture[str],
    project: Path,
    sessions: Path,
    model: str,
    base: str,
    *extra: str,
) -> tuple[int, str, str]:
    args = ["-p", "what do my notes say?", "--model", model, "--api-base", base]
    args += ["--thinking", "high", "--session-dir", str(sessions), *extra]
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def session_assistants(sessions: Path) -> list[dict[str, Any]]:
    [path] = sorted(sessions.glob("*.jsonl"))
    entries = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    return [
        e["message"]
        for e in entries
        if e["type"] == "message" and e["message"]["role"] == "assistant"
    ]


@pytest.mark.parametrize("case", sorted(LOOPS))
def test_thinking_tool_loop_in_print_mode(
    case: str,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop = LOOPS[case]
    server = request.getfixturevalue(loop.fixture)
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("alpha\n")
    monkeypatch.chdir(project)
    loop.script(server)
    code, out, err = run_print(
        capsys, project, tmp_path / "sessions", loop.model, loop.api_base(server)
    )
    assert code == 0, err
    assert out == ANSWER + "\n"
    assert "[bash: ls]" in err and "[read: notes.txt]" in err
    replies = session_assistants(tmp_path / "sessions")
    assert len(replies) == 3 and len(server.requests) == 3
    for reply in replies:
        assert (reply["api"], reply["provider"], reply["model"]) == loop.names
        assert [b for b in reply["content"] if b["type"] == "thinking"], reply
    # pi 1.6 reads the file with the same context and keeps every thinking block.
    [path] = sorted((tmp_path / "sessions").glob("*.jsonl"))
    pi = pi_context(path)
    kept = [m for m in pi["transformed"] if m.get("role") == "assistant"]
    assert [thinking_of(m) for m in kept] == [thinking_of(m) for m in replies]
    assert [m["role"] for m in pi["messages"]] == [
        "system",
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "toolResult",
        "assistant",
    ]


def test_a_retried_request_prints_only_its_final_answer(
    claude: anthropic_api.AnthropicServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    A = anthropic_api
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    (project / ".pitui").mkdir()
    (project / ".pitui" / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 10}}))
    claude.script(A.reply(A.Text("Half of an ans"), error_after=4), A.text("The final answer."))
    code, out, err = run_print(
        capsys, project, tmp_path / "sessions", "anthropic/claude-sonnet-4-5", claude.base_url
    )
    assert code == 0, err
    assert out == "The final answer.\n"
    assert "Overloaded" in err and "retrying" in err


def test_on_a_terminal_the_text_streams_and_a_discarded_partial_reply_is_said() -> None:
    import io

    from pitui.agent.events import MessageDelta, MessageEnd, RetryScheduled
    from pitui.cli.print_mode import TextPrinter

    out, err = io.StringIO(), io.StringIO()
    printer = TextPrinter(out, err, stream=True)
    printer(MessageDelta("text", "Half"))
    assert out.getvalue() == "Half"  # streamed at once
    printer(MessageEnd("e1", {"role": "assistant", "stopReason": "error"}))
    printer(RetryScheduled(1, 3, 2.0, "Overloaded"))
    assert err.getvalue() == (
        "pitui: Overloaded — retrying in 2.0s (1/3); the partial reply above is discarded\n"
    )
    piped = TextPrinter(io.StringIO(), io.StringIO(), stream=False)
    piped(MessageDelta("text", "Half"))
    piped(MessageEnd("e1", {"role": "assistant", "stopReason": "error"}))
    piped(MessageDelta("text", "Whole."))
    piped(MessageEnd("e2", {"role": "assistant", "stopReason": "stop"}))
    assert piped.out.getvalue() == "Whole.\n"  # type: ignore[attr-defined]
