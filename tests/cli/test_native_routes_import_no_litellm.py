"""A model on one of the four wire APIs pitui speaks itself never imports litellm (nor the
OpenAI SDK it pulls in): not in ``pitui -p``, not in the TUI from start to the reply on screen.

Each run is a fresh interpreter with ``-X importtime``, whose import log names every module
imported anywhere in the process (a lazy import in a thread included)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.llm_server import ScriptedLLMServer, text
from support.print_mode import isolated_env
from support.providers import anthropic
from support.providers import gemini as gemini_api
from support.providers import openai_responses as responses_api
from support.providers import openrouter as openrouter_api
from support.providers.loops import ANSWER, LOOPS
from support.pty_program import PtyProgram
from test_headless_imports import imported_modules, logged_modules

LITELLM = ("litellm", "openai")


def litellm_modules(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in LITELLM)


def run_logged(tmp_path: Path, argv: list[str], **keys: str) -> tuple[str, set[str]]:
    """``python -X importtime -m pitui ARGV``: its stdout and the modules it imported."""
    env = isolated_env(tmp_path)
    env.update(keys)
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "pitui", *argv],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, imported_modules(done.stderr)


def test_print_mode_on_an_openai_compatible_server(tmp_path: Path, llm: ScriptedLLMServer) -> None:
    llm.script(text("native reply zq7"))
    argv = ["-p", "hi", "--model", "openai/test-model", "--api-base", f"{llm.url}/v1"]
    out, modules = run_logged(tmp_path, [*argv, "--session-dir", str(tmp_path / "s")])
    assert "native reply zq7" in out
    assert "pitui.llm.apis.openai_completions" in modules  # the log covers the request
    assert litellm_modules(modules) == []


KEYS = {
    "ANTHROPIC_API_KEY": anthropic.API_KEY,
    "OPENAI_API_KEY": responses_api.API_KEY,
    "GEMINI_API_KEY": gemini_api.API_KEY,
    "OPENROUTER_API_KEY": openrouter_api.API_KEY,
}


@pytest.mark.parametrize("case", sorted(LOOPS))
def test_print_mode_tool_loops_on_every_native_api(
    case: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    loop = LOOPS[case]
    server = request.getfixturevalue(loop.fixture)
    loop.script(server)
    (tmp_path / "notes.txt").write_text("alpha\n")
    argv = ["-p", "what do my notes say?", "--model", loop.model, "--thinking", "high"]
    argv += ["--api-base", loop.api_base(server), "--session-dir", str(tmp_path / "s")]
    out, modules = run_logged(tmp_path, argv, **KEYS)
    assert ANSWER in out
    assert f"pitui.llm.apis.{loop.names[0].replace('-', '_')}" in modules
    assert litellm_modules(modules) == []


def test_the_import_log_sees_litellm_on_its_own_route(tmp_path: Path) -> None:
    """The checks above can fail: a model outside the four APIs does import litellm (its
    request then fails offline; the import is what counts)."""
    argv = [
        "-p",
        "hi",
        "--model",
        "mistral/mistral-small-latest",
        "--api-base",
        "http://127.0.0.1:9",
    ]
    env = isolated_env(tmp_path)
    env["MISTRAL_API_KEY"] = "unused"
    env["PITUI_RETRY"] = "0"
    settings = tmp_path / "config" / "pitui"
    settings.mkdir(parents=True)
    (settings / "settings.json").write_text('{"retry": {"enabled": false}}')
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "pitui", *argv, "--session-dir", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert "litellm" in imported_modules(done.stderr), done.stderr[-2000:]


@pytest.mark.timeout(240)
def test_the_tui_sends_a_prompt_and_shows_the_reply_without_litellm(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    llm.script(text("Reply zqtuinative on screen."))
    env = isolated_env(tmp_path)
    env.update(TERM="xterm-256color", HOME=str(tmp_path / "home"))
    for name in ("TEXTUAL_DRIVER", "TEXTUAL"):
        env.pop(name, None)
    argv = [sys.executable, "-X", "importtime", "-m", "pitui", "--model", "openai/test-model"]
    argv += ["--api-base", f"{llm.url}/v1", "--session-dir", str(tmp_path / "s")]
    with PtyProgram(argv, env, tmp_path) as tui:
        assert tui.read_until("Ask anything", 90), tui.text[-2000:]  # the editor is up
        tui.write(b"hello there")
        assert tui.read_until("hello there", 30), tui.text[-2000:]
        tui.write(b"\r")
        assert tui.read_until("zqtuinative", 60), tui.text[-3000:]
        tui.drain(0.5)  # anything imported as the reply ends is logged too
        modules = logged_modules(tui.text)
    assert "pitui.llm.apis.openai_completions" in modules
    assert litellm_modules(modules) == []
    assert llm.last.body["messages"][-1]["content"] == "hello there"
