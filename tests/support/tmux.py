"""pitui in a real terminal: a private tmux server (socket in the test's tmp dir, no tmux.conf),
one window running ``python -m pitui``, and what the test types into it as terminal writes.

``write(text)`` is one write to the terminal (``send-keys -l``: the program may read it in one
read), ``write_bytes(data)`` sends raw bytes (``send-keys -H``), ``screen()`` is what the
terminal shows. Skipped where tmux is absent; under CI=true a missing tmux is a failure.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

NAME = "pitui"


def require_tmux() -> None:
    if shutil.which("tmux") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("tmux is required under CI=true (.ci/run installs it)")
        pytest.skip("tmux not installed")


class Terminal:
    """One tmux window of ``width`` x ``height`` for pitui; :meth:`close` ends the server."""

    def __init__(self, tmp_path: Path, width: int = 120, height: int = 36) -> None:
        require_tmux()
        self.width, self.height = width, height
        self.tmux = ["tmux", "-S", str(tmp_path / "tmux.sock"), "-f", os.devnull]
        self.project = tmp_path / "project"
        self.project.mkdir(exist_ok=True)
        env = {
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "OPENAI_API_KEY": "sk-test",
            "TERM": "xterm-256color",
            "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
        }
        self.exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        # A session that outlives pitui's, so the server does not exit when pitui quits.
        self.run("new-session", "-d", "-s", "keepalive", "sleep 100000")

    def run(self, *args: str) -> str:
        result = subprocess.run([*self.tmux, *args], capture_output=True, text=True, timeout=30)
        return result.stdout

    def start(self, args: list[str]) -> None:
        self.run("kill-session", "-t", NAME)
        command = (
            f"cd {shlex.quote(str(self.project))} && env {self.exports} "
            f"{shlex.quote(sys.executable)} -m pitui {' '.join(shlex.quote(a) for a in args)}"
        )
        size = ["-x", str(self.width), "-y", str(self.height)]
        self.run("new-session", "-d", "-s", NAME, *size, command)

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", NAME)

    def wait_for(self, predicate: Callable[[str], bool], what: str, timeout: float = 40.0) -> str:
        deadline = time.monotonic() + timeout
        shown = ""
        while time.monotonic() < deadline:
            shown = self.screen()
            if predicate(shown):
                return shown
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}; the screen shows:\n{shown}")

    def write(self, text: str) -> None:
        """``text`` in one write to the terminal (tmux sends it at once)."""
        self.run("send-keys", "-t", NAME, "-l", text)

    def write_bytes(self, data: bytes) -> None:
        """``data`` in one write, byte for byte."""
        self.run("send-keys", "-t", NAME, "-H", *(f"{b:02x}" for b in data))

    def key(self, name: str) -> None:
        """A named key (``Enter``, ``Escape``, ``C-q``)."""
        self.run("send-keys", "-t", NAME, name)

    def paste(self, text: str, *, bracketed: bool) -> None:
        """Paste ``text`` as tmux does (``paste-buffer``: line breaks sent as CR; with
        ``bracketed``, inside the bracketed-paste markers the program asked for)."""
        self.run("set-buffer", "-b", "test-paste", text)
        self.run("paste-buffer", "-b", "test-paste", "-t", NAME, *(["-p"] if bracketed else []))

    def close(self) -> None:
        self.run("kill-server")
