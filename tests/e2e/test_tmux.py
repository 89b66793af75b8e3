"""As a user, in a real terminal: pitui inside tmux against the scripted server.

Type a prompt and wait for the answer on screen; open the tree (Esc Esc); move to the first
prompt, edit and resubmit it; the screen shows the new branch and the tree shows both; quit;
``pitui --continue`` reopens on the same branch. Skipped where tmux is absent (.ci/run installs
it; under CI=true a missing tmux is a failure).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.llm_server import ScriptedLLMServer, text

from pitui.ui.widgets.status import SPINNER

SESSION = "pitui-e2e"
# The terminal fixture points this at a private tmux server (socket in the test's tmp dir, no
# tmux.conf): runs of the suite side by side, or a developer's own tmux, never see this session.
TMUX = ["tmux"]
WIDTH, HEIGHT = 120, 36


def tmux(*args: str) -> str:
    result = subprocess.run([*TMUX, *args], capture_output=True, text=True, timeout=30)
    return result.stdout


def screen() -> str:
    return tmux("capture-pane", "-p", "-t", SESSION)


def wait_for(predicate: Callable[[str], bool], what: str, timeout: float = 40.0) -> str:
    deadline = time.monotonic() + timeout
    shown = ""
    while time.monotonic() < deadline:
        shown = screen()
        if predicate(shown):
            return shown
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}; the screen shows:\n{shown}")


def main_screen(shown: str) -> bool:
    """The main screen is up (its status line shows the model), not the tree or a dialog."""
    return "openai/test-model" in shown and "Session tree" not in shown


def idle_with(answer: str) -> Callable[[str], bool]:
    """The main screen shows ``answer`` and the agent is done (no spinner): Esc no longer aborts."""
    return lambda s: main_screen(s) and answer in s and not any(c in s for c in SPINNER)


def keys(*names: str, pause: float = 0.15) -> None:
    for name in names:
        tmux("send-keys", "-t", SESSION, name)
        time.sleep(pause)


def type_text(value: str) -> None:
    tmux("send-keys", "-t", SESSION, "-l", value)
    time.sleep(0.2)


@pytest.fixture
def terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[list[str]], None]]:
    if shutil.which("tmux") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("tmux is required under CI=true (.ci/run installs it)")
        pytest.skip("tmux not installed")
    monkeypatch.setitem(globals(), "TMUX", ["tmux", "-S", str(tmp_path / "tmux"), "-f", os.devnull])
    # A session that outlives pitui's, so the server does not exit (and race the next start)
    # when pitui quits.
    subprocess.run(
        [*TMUX, "new-session", "-d", "-s", "keepalive", "sleep 100000"], check=True, timeout=30
    )
    env = {
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "OPENAI_API_KEY": "sk-test",
        "TERM": "xterm-256color",
        "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
    }
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    project = tmp_path / "project"
    project.mkdir()

    def start(args: list[str]) -> None:
        tmux("kill-session", "-t", SESSION)
        command = (
            f"cd {shlex.quote(str(project))} && env {exports} "
            f"{shlex.quote(sys.executable)} -m pitui {' '.join(shlex.quote(a) for a in args)}"
        )
        subprocess.run(
            [
                *TMUX,
                "new-session",
                "-d",
                "-s",
                SESSION,
                "-x",
                str(WIDTH),
                "-y",
                str(HEIGHT),
                command,
            ],
            check=True,
            timeout=30,
        )

    yield start
    tmux("kill-server")


@pytest.mark.timeout(240)
def test_edit_and_resubmit_in_a_real_terminal(
    terminal: Callable[[list[str]], None], llm: ScriptedLLMServer, tmp_path: Path
) -> None:
    args = [
        "--model",
        "openai/test-model",
        "--api-base",
        f"{llm.url}/v1",
        "--session-dir",
        str(tmp_path / "sessions"),
    ]
    terminal(args)
    wait_for(lambda s: "Ask anything" in s, "the prompt editor")

    llm.script(text("First answer from the model."))
    type_text("hello world")
    keys("Enter")
    wait_for(idle_with("First answer from the model."), "the first answer")

    keys("Escape", "Escape", pause=0.1)
    # Wait for the rows, not only the frame: keys sent before the tree is filled are lost.
    wait_for(lambda s: "Session tree" in s and "user: hello world" in s, "the tree browser")
    keys("Up")
    wait_for(lambda s: "› " in s and "user: hello world" in s, "the first prompt selected")
    keys("Enter")
    wait_for(lambda s: "Summarize the branch" in s, "the summary question")
    keys("Home", "Enter")
    wait_for(
        lambda s: main_screen(s) and "Ask anything" not in s and "hello world" in s,
        "the prompt in the editor",
    )

    llm.script(text("Second answer on a new branch."))
    type_text(" again")
    keys("Enter")
    shown = wait_for(idle_with("Second answer on a new branch."), "the second answer")
    assert "First answer from the model." not in shown  # the chat shows the new branch

    keys("Escape", "Escape", pause=0.1)
    wait_for(
        lambda s: (
            "Session tree" in s
            and "First answer from the model." in s
            and "Second answer on a new branch." in s
        ),
        "both branches in the tree browser",
    )
    keys("Escape")
    keys("C-q")
    wait_for(lambda s: "Ask anything" not in s, "pitui to quit", timeout=20)

    terminal(["--continue", *args])
    shown = wait_for(lambda s: "Second answer on a new branch." in s, "the reopened session")
    assert "First answer from the model." not in shown
    assert len(llm.requests) == 2
    keys("C-q")
