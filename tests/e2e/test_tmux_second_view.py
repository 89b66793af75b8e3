"""As a user, in a real terminal: two pitui processes on one session file. The second opens it
read-only with a banner, refuses a prompt with one sentence offering fork and clone, and, once
the first quits, offers to take over and then writes. Also: a session whose working directory
is gone asks where to work. Skipped where tmux is absent (under CI=true that is a failure)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.fixtures import copy_fixture

WIDTH, HEIGHT = 120, 30


class Terminals:
    def __init__(self, tmp_path: Path) -> None:
        self.tmux = ["tmux", "-S", str(tmp_path / "tmux"), "-f", os.devnull]
        self.project = tmp_path / "project"
        self.project.mkdir()
        env = {
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "TERM": "xterm-256color",
            "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
        }
        self.exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        self.run(
            "new-session", "-d", "-s", "keepalive", "-x", str(WIDTH), "-y", str(HEIGHT), "sleep 1d"
        )

    def run(self, *args: str) -> str:
        result = subprocess.run([*self.tmux, *args], capture_output=True, text=True, timeout=30)
        return result.stdout

    def start(self, name: str, args: list[str]) -> None:
        command = (
            f"cd {shlex.quote(str(self.project))} && env {self.exports} "
            f"{shlex.quote(sys.executable)} -m pitui {' '.join(shlex.quote(a) for a in args)}"
        )
        self.run("new-session", "-d", "-s", name, "-x", str(WIDTH), "-y", str(HEIGHT), command)

    def screen(self, name: str) -> str:
        return self.run("capture-pane", "-p", "-t", name)

    def wait_for(self, name: str, predicate: Callable[[str], bool], what: str) -> str:
        deadline = time.monotonic() + 40
        shown = ""
        while time.monotonic() < deadline:
            shown = self.screen(name)
            if predicate(shown):
                return shown
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}; {name} shows:\n{shown}")

    def keys(self, name: str, *keys: str) -> None:
        for key in keys:
            self.run("send-keys", "-t", name, key)
            time.sleep(0.15)

    def type(self, name: str, text: str) -> None:
        self.run("send-keys", "-t", name, "-l", text)
        time.sleep(0.2)


@pytest.fixture
def terminals(tmp_path: Path) -> Iterator[Terminals]:
    if shutil.which("tmux") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("tmux is required under CI=true (.ci/run installs it)")
        pytest.skip("tmux not installed")
    t = Terminals(tmp_path)
    yield t
    t.run("kill-server")


def has(shown: str, text: str) -> bool:
    """``text`` is on the screen, wherever the dialog wrapped its lines (the borders and the
    spaces around them left out)."""
    lines = [line.split("│")[1] if line.count("│") >= 2 else line for line in shown.splitlines()]
    return "".join(text.split()) in "".join("".join(lines).split())


def session_in(folder: Path, cwd: str) -> Path:
    """The branches fixture, working in ``cwd``."""
    path = copy_fixture("pi-v3-branches.jsonl", folder)
    lines = path.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["cwd"] = cwd
    path.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    return path


@pytest.mark.timeout(240)
def test_a_second_pitui_views_read_only_and_takes_over(
    terminals: Terminals, tmp_path: Path
) -> None:
    path = session_in(tmp_path / "sessions", str(terminals.project))
    terminals.start("first", ["--session", str(path)])
    terminals.wait_for("first", lambda s: "Ask anything" in s, "the first pitui")
    terminals.start("second", ["--session", str(path)])
    shown = terminals.wait_for("second", lambda s: "read-only · open in pid" in s, "the banner")
    assert "read-only · open in pid" not in terminals.screen("first")
    before = path.read_bytes()

    terminals.type("second", "hello")
    terminals.keys("second", "Enter")
    shown = terminals.wait_for("second", lambda s: "f fork · c clone" in s, "the refusal")
    assert has(shown, "open in another pitui") and has(shown, "cannot be changed here")
    terminals.keys("second", "Escape")

    terminals.keys("first", "C-q")
    shown = terminals.wait_for(
        "second", lambda s: "closed this session" in s, "the offer to take over"
    )
    assert has(shown, "t take over")
    terminals.keys("second", "t")
    # The banner goes (the transcript keeps the notice that said why it was read-only).
    terminals.wait_for("second", lambda s: "read-only ·" not in s, "the banner to go")
    # The refused prompt was kept in the editor (for a fork or a clone): clear it first.
    terminals.wait_for("second", lambda s: "hello" in s, "the refused prompt kept")
    terminals.keys("second", "C-u")
    terminals.type("second", "/name taken over")
    terminals.keys("second", "Enter")
    terminals.wait_for("second", lambda s: "Session name: taken over" in s, "the new name")
    terminals.keys("second", "C-q")
    deadline = time.monotonic() + 20
    while b"taken over" not in path.read_bytes() and time.monotonic() < deadline:
        time.sleep(0.2)
    after = path.read_bytes()
    assert after.startswith(before[: len(before) - 200])
    assert b'"name":"taken over"' in after


@pytest.mark.timeout(240)
def test_a_session_whose_directory_is_gone_asks_where_to_work(
    terminals: Terminals, tmp_path: Path
) -> None:
    gone = tmp_path / "deleted-checkout"
    path = session_in(tmp_path / "sessions", str(gone))
    terminals.start("one", ["--session", str(path)])
    shown = terminals.wait_for("one", lambda s: "Esc  quit" in s, "the question")
    assert has(shown, f"no longer exists: {gone}")
    assert has(shown, f"continue in {terminals.project}") and has(shown, "fork into")
    terminals.keys("one", "c")
    terminals.wait_for("one", lambda s: "Working in" in s, "the choice")
    terminals.keys("one", "C-q")
    assert not gone.exists()
