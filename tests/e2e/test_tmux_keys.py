"""As a user, in a real terminal (tmux): every key lands where it was meant, whatever the reads.

Text and its Enter in one terminal write send that text (100 prompts, 100 requests with the
exact text); the same prompt split into two writes at every byte boundary gives the same result;
a paste, bracketed or not, is one insertion (its lines never send a prompt each); and keys typed
just before an approval dialog opens go to the editor, never to the dialog.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.llm_server import RecordedRequest, ScriptedLLMServer, Step, text, tool_call
from support.tmux import Terminal

from pitui.ui.widgets.status import SPINNER

MODEL = "openai/test-model"


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    term = Terminal(tmp_path)
    yield term
    term.close()


def start(term: Terminal, llm: ScriptedLLMServer, tmp_path: Path, *extra: str) -> None:
    args = ["--model", MODEL, "--api-base", f"{llm.url}/v1"]
    term.start([*args, "--session-dir", str(tmp_path / "sessions"), *extra])
    term.wait_for(lambda s: "Ask anything" in s, "the prompt editor")


def idle(shown: str) -> bool:
    return MODEL in shown and not any(c in shown for c in SPINNER)


def last_user_text(request: RecordedRequest) -> str:
    content = [m for m in request.messages if m["role"] == "user"][-1]["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


def send_and_wait(
    term: Terminal, llm: ScriptedLLMServer, count: int, send: Callable[[], None], answer: str
) -> None:
    """``send()`` one prompt, then wait for its request and for the answer on an idle screen."""
    llm.script(text(answer))
    send()
    llm.wait_for_requests(count, timeout=30)
    term.wait_for(lambda s: answer in s and idle(s), f"the answer {answer!r}")


@pytest.mark.timeout(420)
def test_a_hundred_prompts_each_in_one_write_with_its_enter(
    terminal: Terminal, llm: ScriptedLLMServer, tmp_path: Path
) -> None:
    start(terminal, llm, tmp_path)
    prompts = [f"fix bug {i}: check the {'warm ' * (i % 3)}path, long please" for i in range(100)]
    for i, prompt in enumerate(prompts):
        send_and_wait(terminal, llm, i + 1, lambda p=prompt: terminal.write(p + "\r"), f"ok {i}.")
    assert [last_user_text(r) for r in llm.requests] == prompts
    assert "fix bug" not in terminal.screen().split("ok 99.")[-1]  # the editor is empty
    terminal.key("C-q")


@pytest.mark.timeout(300)
def test_a_prompt_split_at_every_byte_boundary(
    terminal: Terminal, llm: ScriptedLLMServer, tmp_path: Path
) -> None:
    start(terminal, llm, tmp_path)
    prompt = "fix bug ✓ é 2"
    data = (prompt + "\r").encode()
    for k in range(1, len(data)):

        def send(k: int = k) -> None:
            terminal.write_bytes(data[:k])
            terminal.write_bytes(data[k:])

        send_and_wait(terminal, llm, k, send, f"split {k}.")
    assert [last_user_text(r) for r in llm.requests] == [prompt] * (len(data) - 1)
    terminal.key("C-q")


@pytest.mark.timeout(240)
@pytest.mark.parametrize("bracketed", [True, False], ids=["bracketed", "unbracketed"])
def test_a_paste_is_one_insertion(
    terminal: Terminal, llm: ScriptedLLMServer, tmp_path: Path, bracketed: bool
) -> None:
    start(terminal, llm, tmp_path)
    terminal.paste("line one\nline two\nline three", bracketed=bracketed)
    terminal.wait_for(lambda s: "line three" in s, "the pasted lines in the editor")
    time.sleep(1.0)  # a submit per line would have sent by now
    assert llm.requests == []
    shown = terminal.screen()
    assert "line one" in shown and "line two" in shown
    send_and_wait(terminal, llm, 1, lambda: terminal.key("Enter"), "Three lines.")
    assert last_user_text(llm.requests[0]) == "line one\nline two\nline three"
    terminal.key("C-q")


@pytest.mark.timeout(240)
def test_keys_typed_just_before_the_approval_dialog_choose_nothing(
    terminal: Terminal, llm: ScriptedLLMServer, tmp_path: Path
) -> None:
    """The model asks to run ``rm victim.txt`` while the user types a follow-up: the dialog
    opens right after the keys ("…so far yes" and Enter, in one write) were sent. None of them
    answers it (no ``s`` for "always", no ``y``, no Enter); the typed text is the next prompt."""
    (terminal.project / "victim.txt").write_text("keep me\n")
    start(terminal, llm, tmp_path, "--approve", "ask")

    def tool_step_after_typing(request: Any) -> Step:
        terminal.write("what did you do so far? yes\r")  # just before the dialog opens
        return tool_call("bash", {"command": "rm victim.txt"})

    llm.script(tool_step_after_typing, text("I did not delete it."))
    terminal.write("clean up\r")
    shown = terminal.wait_for(lambda s: "Run this command?" in s, "the approval dialog")
    assert "rm victim.txt" in shown
    time.sleep(1.5)  # every key has arrived, and the pause is over
    shown = terminal.screen()
    assert "Run this command?" in shown, "a typed key answered the dialog"
    assert (terminal.project / "victim.txt").exists()
    terminal.key("n")  # a deliberate answer, after the pause
    terminal.wait_for(lambda s: "I did not delete it." in s and idle(s), "the last answer")
    assert (terminal.project / "victim.txt").read_text() == "keep me\n"
    # The typed text was queued as the next message, delivered after the declined call.
    assert [last_user_text(r) for r in llm.requests] == ["clean up", "what did you do so far? yes"]
    terminal.key("C-q")


@pytest.mark.timeout(240)
def test_quit_flushes_the_session_and_ends_the_process(
    terminal: Terminal, llm: ScriptedLLMServer, tmp_path: Path
) -> None:
    """Ctrl+Q after a request: the session is closed first (its lock released), then the
    process ends as soon as the terminal is back; the next pitui continues the session."""
    start(terminal, llm, tmp_path)
    send_and_wait(terminal, llm, 1, lambda: terminal.write("remember me\r"), "Remembered.")
    (session,) = (tmp_path / "sessions").glob("*.jsonl")
    assert session.with_name(session.name + ".lock").exists()
    terminal.key("C-q")
    deadline = time.monotonic() + 20
    while "pitui" in terminal.run("list-sessions", "-F", "#{session_name}"):
        assert time.monotonic() < deadline, "pitui is still running 20 s after Ctrl+Q"
        time.sleep(0.05)
    assert not session.with_name(session.name + ".lock").exists()
    terminal.start(
        [
            "--continue",
            "--model",
            MODEL,
            "--api-base",
            f"{llm.url}/v1",
            "--session-dir",
            str(tmp_path / "sessions"),
        ]
    )
    terminal.wait_for(lambda s: "Remembered." in s and "remember me" in s, "the session again")
    terminal.key("C-q")
