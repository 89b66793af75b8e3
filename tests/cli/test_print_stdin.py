"""``pitui -p``: piped stdin is part of the prompt, ``-p -`` reads it whole, a terminal is never
read; ``--json`` ends with ``done`` on every path and ``tool_end`` carries the result."""

from __future__ import annotations

import io
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from support.llm_server import ScriptedLLMServer, text, tool_call
from support.print_mode import model_args

from pitui.cli import main, print_input
from pitui.cli.errors import CliError
from pitui.cli.print_input import MAX_STDIN_BYTES, print_prompt


def pipe_with(data: bytes) -> IO[str]:
    read_fd, write_fd = os.pipe()

    def feed() -> None:
        with os.fdopen(write_fd, "wb") as f:
            f.write(data)

    threading.Thread(target=feed, daemon=True).start()
    return os.fdopen(read_fd, "r")


@pytest.fixture
def terminal() -> Iterator[IO[str]]:
    """A pseudo-terminal as stdin, with text already typed into it (never to be read)."""
    master, slave = os.openpty()
    os.write(master, b"typed at the terminal\n")
    stream = os.fdopen(slave, "r")
    try:
        yield stream
    finally:
        stream.close()
        os.close(master)


def prompt_of(argument: str, stdin: IO[str] | None) -> str:
    return print_prompt(argument, stdin, io.StringIO())


def test_piped_stdin_comes_before_the_argument() -> None:
    log = b"Traceback (most recent call last):\n  KeyError: 'x'\n\n"
    assert prompt_of("why?", pipe_with(log)) == (
        "Traceback (most recent call last):\n  KeyError: 'x'\n\nwhy?"
    )


def test_dash_reads_the_whole_prompt_from_stdin() -> None:
    assert prompt_of("-", pipe_with(b"  fix the tests\n")) == "fix the tests"


def test_empty_or_blank_stdin_is_no_stdin() -> None:
    assert prompt_of("why?", pipe_with(b"")) == "why?"
    assert prompt_of("why?", pipe_with(b" \n\t\n")) == "why?"
    with pytest.raises(CliError, match="read no prompt from stdin"):
        prompt_of("-", pipe_with(b"\n"))


def test_a_terminal_is_never_read(terminal: IO[str]) -> None:
    started = time.monotonic()
    assert prompt_of("why?", terminal) == "why?"
    assert time.monotonic() - started < 1.0
    with pytest.raises(CliError) as caught:
        prompt_of("-", terminal)
    assert str(caught.value) == (
        "`-p -` reads the prompt from stdin, but stdin is a terminal: pipe the prompt in "
        "(`echo 'fix the tests' | pitui -p -`) or give it as the argument."
    )


def test_a_stdin_without_a_descriptor_is_not_read() -> None:
    assert prompt_of("why?", io.StringIO("not a real stdin")) == "why?"
    assert prompt_of("why?", None) == "why?"


def test_too_much_stdin_is_one_sentence() -> None:
    with pytest.raises(CliError) as caught:
        prompt_of("why?", pipe_with(b"x" * (MAX_STDIN_BYTES + 1)))
    message = str(caught.value)
    assert message.startswith("stdin holds more than 4 MB, too much for one prompt: ")
    assert message.count(". ") == 0 and message.endswith("file.")
    # Exactly the limit is fine.
    assert len(prompt_of("-", pipe_with(b"y" * MAX_STDIN_BYTES))) == MAX_STDIN_BYTES


def test_binary_stdin_is_refused() -> None:
    with pytest.raises(CliError, match="stdin is not text"):
        prompt_of("why?", pipe_with(b"\x7fELF\x00\x01"))


def test_a_silent_pipe_gets_a_note_and_is_still_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(print_input, "WAIT_NOTE_SECONDS", 0.05)
    read_fd, write_fd = os.pipe()

    def late() -> None:
        time.sleep(0.4)
        os.write(write_fd, b"late output\n")
        os.close(write_fd)

    threading.Thread(target=late, daemon=True).start()
    err = io.StringIO()
    with os.fdopen(read_fd, "r") as stdin:
        assert print_prompt("why?", stdin, err) == "late output\n\nwhy?"
    assert err.getvalue().startswith("pitui: waiting for input on stdin")


# ---------------------------------------------------------------------------------- end to end


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-print-stdin")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return folder


def user_texts(body: dict[str, Any]) -> list[str]:
    texts = []
    for message in body["messages"]:
        if message["role"] == "user":
            content = message["content"]
            texts.append(content if isinstance(content, str) else content[0]["text"])
    return texts


def json_lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.slow
def test_piped_log_reaches_the_model(
    project: Path,
    tmp_path: Path,
    llm: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(sys, "stdin", pipe_with(b"ERROR disk full at 12:00\n"))
    llm.script(text("The disk is full."))
    assert main(["-p", "why?", *model_args(llm, tmp_path / "s")]) == 0
    assert capsys.readouterr().out == "The disk is full.\n"
    assert user_texts(llm.requests[0].body) == ["ERROR disk full at 12:00\n\nwhy?"]


@pytest.mark.slow
def test_json_tool_end_carries_the_result_and_done_is_last(
    project: Path,
    tmp_path: Path,
    llm: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(sys, "stdin", pipe_with(b"list the files"))
    llm.script(tool_call("bash", {"command": "echo listed; exit 4"}), text("ok"))
    assert main(["-p", "-", "--json", *model_args(llm, tmp_path / "s")]) == 0
    events = json_lines(capsys.readouterr().out)
    [end] = [e for e in events if e["type"] == "tool_end"]
    assert end["isError"] is True
    assert end["message"]["role"] == "toolResult"
    assert end["message"]["content"] == [{"type": "text", "text": "listed\n\nexit code: 4"}]
    assert end["message"]["details"]["exitCode"] == 4
    assert [e["type"] for e in events].count("done") == 1 and events[-1]["type"] == "done"
    assert user_texts(llm.requests[0].body) == ["list the files"]


@pytest.mark.parametrize(
    ("argv", "kind", "fragment"),
    [
        (["-p", "hi", "--json", "--no-such-flag"], "usage", "unrecognized arguments"),
        (["-p", "-", "--json"], "usage", "read no prompt from stdin"),
        (["-p", "hi", "--json", "--session", "zzz-no-such-id"], "usage", "No session"),
        (["-p", "hi", "--json", "--model", "anthropic/claude-x"], "config", "No API key"),
    ],
)
def test_json_ends_with_done_after_a_failure_before_the_run(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    kind: str,
    fragment: str,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setattr(sys, "stdin", pipe_with(b""))
    with pytest.raises(SystemExit) if "--no-such-flag" in argv else _no_raise():
        code = main(argv)
        assert code in (1, 2)
    events = json_lines(capsys.readouterr().out)
    errors = [e for e in events if e["type"] == "error"]
    assert errors and errors[-1]["kind"] == kind and fragment in errors[-1]["message"]
    assert events[-1] == {"type": "done", "reason": "error"}
    assert [e["type"] for e in events].count("done") == 1


class _no_raise:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
