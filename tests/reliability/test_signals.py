"""SIGTERM, SIGHUP and closing the terminal window take the same clean path as Ctrl+Q, within a
second: the run is aborted, the partial reply is stored as ``aborted``, the bash tool's process
group is killed, the leaf marker is written and the lock is released.

Real processes: ``pitui -p`` as a child, and the TUI on a pseudo-terminal (closing the pty's
master is what closing a terminal window does: the kernel sends SIGHUP), both against the
scripted LLM server with a slow stream or a long-running tool.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from support.llm_server import ScriptedLLMServer, slow, text, tool_call
from support.print_mode import isolated_env, model_args

from pitui.cli.print_mode import EXIT_DEADLINE

ROOT = Path(__file__).resolve().parents[2]
WORDS = " ".join(f"word{i}" for i in range(40))
# Seconds from the signal to the process being gone: before the deadline that would end it
# anyway (the clean path itself is checked by what it leaves: the exit code, "pitui:
# aborted.", the session). A 1 s budget failed on a loaded CI machine (1.63 s).
BUDGET = EXIT_DEADLINE


@dataclass
class Run:
    """One pitui process, its folders and what the test needs to judge the outcome."""

    tmp: Path
    llm: ScriptedLLMServer
    pgid_file: Path = field(init=False)

    def __post_init__(self) -> None:
        self.pgid_file = self.tmp / "pgid"
        (self.tmp / "project").mkdir(parents=True, exist_ok=True)

    @property
    def env(self) -> dict[str, str]:
        return {
            **{k: v for k, v in isolated_env(self.tmp).items() if not k.startswith("PYTEST")},
            "TERM": "xterm-256color",
            "PYTHONPATH": str(ROOT),
        }

    def args(self) -> list[str]:
        return model_args(self.llm, self.tmp / "sessions")

    def script(self, what: str) -> None:
        if what == "stream":
            self.llm.script(slow(WORDS, 0.25))
        else:
            command = f"echo $$ > {self.pgid_file}; sleep 300"
            self.llm.script(tool_call("bash", {"command": command}), text("never reached"))

    def wait_until_busy(self, what: str, output: Callable[[], bytes]) -> None:
        """Until the reply is streaming (some words arrived) or the tool's command runs."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            # To a pipe, print mode writes a reply when it ends: watch what the model sent.
            sent = self.llm.requests[-1].events_sent if self.llm.requests else 0
            if what == "stream" and (b"word3" in output() or sent >= 9):
                time.sleep(0.5)  # a chunk's time for the last words to reach pitui
                return
            if what == "tool" and self.pgid_file.exists() and self.pgid_file.read_text().strip():
                time.sleep(0.2)
                return
            time.sleep(0.05)
        raise AssertionError(f"pitui never got busy ({what}); output: {output()[-2000:]!r}")

    def session_file(self) -> Path:
        [path] = (self.tmp / "sessions").glob("*.jsonl")
        return path

    def check_clean(self, what: str) -> None:
        path = self.session_file()
        entries = [json.loads(x) for x in path.read_bytes().splitlines()]
        messages = [e["message"] for e in entries if e.get("type") == "message"]
        assert messages[-1 if what == "stream" else -2]["role"] == "assistant"
        if what == "stream":
            reply = messages[-1]
            assert reply["stopReason"] == "aborted"
            assert reply["content"][0]["text"].startswith("word0 word1 word2 word3")
        else:
            assert messages[-1]["role"] == "toolResult" and messages[-1]["isError"] is True
            pgid = int(self.pgid_file.read_text())
            assert live_members(pgid) == [], "the tool's processes outlived pitui"
        assert not path.with_name(path.name + ".lock").exists(), "the lock note stayed"
        # The lock itself is free: another pitui may write now.
        from pitui.session import SessionStore

        again = SessionStore.open(path)
        assert not again.read_only, again.read_only_reason
        again.close()


def live_members(pgid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            data = Path(f"/proc/{name}/stat").read_bytes()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            found.append(int(name))
    return found


def kill_leftovers(run: Run) -> None:
    if run.pgid_file.exists() and run.pgid_file.read_text().strip():
        for pid in live_members(int(run.pgid_file.read_text())):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def run(tmp_path: Path, llm: ScriptedLLMServer) -> Iterator[Run]:
    llm.fail_on_unscripted = False
    current = Run(tmp_path, llm)
    yield current
    kill_leftovers(current)


# ---------------------------------------------------------------------------- print mode

SIGNALS = {"TERM": signal.SIGTERM, "HUP": signal.SIGHUP}
# One handler takes every stop signal: SIGTERM with a streaming reply and with a running tool,
# SIGHUP (its own exit code) once. (Ctrl+C: tests/agent/test_print_mode.py.)
PRINT_CASES = [("TERM", "stream"), ("TERM", "tool"), ("HUP", "stream")]


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("name", "what"), PRINT_CASES)
def test_print_mode_signal_takes_the_clean_path(run: Run, name: str, what: str) -> None:
    run.script(what)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pitui", *run.args(), "-p", "go"],
        cwd=run.tmp / "project",
        env=run.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out = bytearray()
    assert proc.stdout is not None

    def pump() -> None:
        assert proc.stdout is not None
        while chunk := proc.stdout.read1(65536):
            out.extend(chunk)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        run.wait_until_busy(what, lambda: bytes(out))
        started = time.monotonic()
        proc.send_signal(SIGNALS[name])
        code = proc.wait(10)
        elapsed = time.monotonic() - started
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(5)
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    assert code == 128 + SIGNALS[name], err
    assert elapsed < BUDGET, f"took {elapsed:.2f}s"
    assert "Traceback" not in err and err.strip().endswith("pitui: aborted.")
    run.check_clean(what)


# ---------------------------------------------------------------------------- the TUI


class Terminal:
    """pitui on a pseudo-terminal of 100x30; output is drained in a thread."""

    def __init__(self, run: Run) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # pragma: no cover - the child
            os.chdir(run.tmp / "project")
            os.execvpe(sys.executable, [sys.executable, "-m", "pitui", *run.args()], run.env)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        self.output = bytearray()
        self.closed = False
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()

    def _pump(self) -> None:
        while not self.closed:
            try:
                ready, _, _ = select.select([self.fd], [], [], 0.1)
                if ready:
                    data = os.read(self.fd, 65536)
                    if not data:
                        return
                    self.output.extend(data)
            except OSError:
                return

    def wait_for(self, needle: bytes, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.output:
            if time.monotonic() > deadline:
                raise AssertionError(f"{needle!r} never shown: {bytes(self.output[-2000:])!r}")
            time.sleep(0.05)

    def type(self, data: bytes) -> None:
        os.write(self.fd, data)

    def close_window(self) -> None:
        self.closed = True
        os.close(self.fd)

    def wait_exit(self, timeout: float) -> int | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            time.sleep(0.01)
        return None

    def kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        if not self.closed:
            self.close_window()


def start_tui(run: Run, what: str) -> Terminal:
    run.script(what)
    term = Terminal(run)
    term.wait_for(b"Ask anything")
    time.sleep(0.5)  # let the editor take focus
    term.type(b"go")
    time.sleep(0.2)
    term.type(b"\r")
    run.wait_until_busy(what, lambda: bytes(term.output))
    return term


ENDINGS: dict[str, Callable[[Terminal], None]] = {
    "ctrl+q": lambda t: t.type(b"\x11"),
    "SIGTERM": lambda t: os.kill(t.pid, signal.SIGTERM),
    "SIGHUP": lambda t: os.kill(t.pid, signal.SIGHUP),
    "window closed": Terminal.close_window,
}
EXIT_CODES = {"ctrl+q": 0, "SIGTERM": 128 + 15, "SIGHUP": 128 + 1, "window closed": 128 + 1}
# The distinct ways out: Ctrl+Q (the reference, once); SIGTERM (the signal handler) and a
# closed window (the kernel's SIGHUP, through the same handler, to a terminal that is gone)
# with a streaming reply and with a running tool. A SIGHUP sent by hand is a closed window's
# signal with the terminal still there: the SIGTERM cases cover that path, once is enough.
TUI_CASES = [
    ("ctrl+q", "stream"),
    ("SIGTERM", "stream"),
    ("SIGTERM", "tool"),
    ("SIGHUP", "stream"),
    ("window closed", "stream"),
    ("window closed", "tool"),
]


@pytest.mark.timeout(150)
@pytest.mark.parametrize(("ending", "what"), TUI_CASES)
def test_tui_ending_takes_the_clean_path(run: Run, ending: str, what: str) -> None:
    term = start_tui(run, what)
    try:
        started = time.monotonic()
        ENDINGS[ending](term)
        code = term.wait_exit(10)
        elapsed = time.monotonic() - started
    finally:
        term.kill()
    assert code == EXIT_CODES[ending], bytes(term.output[-1500:])
    assert elapsed < BUDGET, f"took {elapsed:.2f}s"
    assert b"Traceback" not in term.output
    run.check_clean(what)


async def test_a_signal_in_the_tui_writes_the_leaf_marker(tmp_path: Path) -> None:
    """The leaf moved without an append: SIGTERM must still record it (as Ctrl+Q does)."""
    from pitui.config.settings import Settings
    from pitui.session import LEAF_MARKER_TYPE, SessionStore
    from pitui.ui.app import PituiApp

    path = tmp_path / "s.jsonl"
    store = SessionStore.create_at(path, str(tmp_path))
    first = store.append_message({"role": "user", "content": "one", "timestamp": 1})
    store.append_message({"role": "user", "content": "two", "timestamp": 2})
    store.close()
    store = SessionStore.open(path)
    app = PituiApp(store, settings=Settings.from_dict({"ui": {"cursorBlink": False}}), cwd=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        store.branch(first)
        # Without pitui's handler the signal would end the test process itself.
        assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None), "no handler"
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(200):
            if app.return_code is not None:
                break
            await pilot.pause(0.01)
    assert app.return_code == 128 + 15
    last: dict[str, Any] = json.loads(path.read_bytes().splitlines()[-1])
    assert last["customType"] == LEAF_MARKER_TYPE and last["parentId"] == first
    assert not path.with_name(path.name + ".lock").exists()
