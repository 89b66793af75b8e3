"""Running ``python -m pitui`` (mostly ``-p``) as a real child process in tests, with an
isolated environment: its own config, data and state folders, no real API keys, litellm's
bundled cost map (offline), and the scripted LLM server as the model."""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO

from support.llm_server import ScriptedLLMServer
from support.slow_lane import CHILD_EVENT


def isolated_env(tmp_path: Path, api_key: str = "sk-test") -> dict[str, str]:
    """This process's environment without API keys or a session folder, with XDG folders in
    ``tmp_path`` and ``api_key`` as the OpenAI key (the scripted server takes any)."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("PITUI_SESSION_DIR", None)
    env.update(
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_STATE_HOME=str(tmp_path / "state"),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        OPENAI_API_KEY=api_key,
    )
    return env


def model_args(llm: ScriptedLLMServer, sessions: Path) -> list[str]:
    """The scripted server as the model; sessions in ``sessions``."""
    return [
        "--model",
        "openai/test-model",
        "--api-base",
        f"{llm.url}/v1",
        "--session-dir",
        str(sessions),
    ]


def pitui_argv(*args: str) -> list[str]:
    """The command line of ``python -m pitui *args`` with this interpreter."""
    return [sys.executable, "-m", "pitui", *args]


def run_pitui(
    args: list[str], cwd: Path, env: dict[str, str], timeout: float = 90
) -> subprocess.CompletedProcess[str]:
    """``pitui *args`` in ``cwd`` to its end, stdin empty, output captured as text: a fork of
    this test process's warmed interpreter (see :class:`WarmPitui`)."""
    global _warm
    if _warm is None:
        _warm = WarmPitui()
        atexit.register(_warm.close)
    return _warm.run(args, cwd, env, timeout)


# ------------------------------------------------------------------------ a warmed interpreter

_SERVER = r"""
import json, os, runpy, socket, sys, threading

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ.setdefault("LITELLM_LOG", "ERROR")
# What every `python -m pitui -p` imports besides pitui itself: once, here.
import httpx, msgspec, orjson, platformdirs  # noqa: E401, F401

assert threading.active_count() == 1, "a thread would not survive fork()"
server = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
server.bind(sys.argv[1])
server.listen()
server.settimeout(2.0)
parent = os.getppid()
print("ready", flush=True)
while True:
    try:
        conn, _ = server.accept()
    except TimeoutError:
        if os.getppid() != parent:  # the test process is gone: so are we
            sys.exit(0)
        continue
    conn.settimeout(None)
    message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
    if not message:
        sys.exit(0)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        break
    for fd in fds:
        os.close(fd)
    conn.send(str(pid).encode())
    _, status = os.waitpid(pid, 0)
    conn.send(str(os.waitstatus_to_exitcode(status)).encode())
    conn.close()
# The child: `python -m pitui ARGS` in the request's folder and environment.
request = json.loads(message)
conn.close()
server.close()
for target, fd in enumerate(fds):
    os.dup2(fd, target)
    os.close(fd)
os.chdir(request["cwd"])
os.environ.clear()
os.environ.update(request["env"])
if "tempfile" in sys.modules:  # read TMPDIR again, as a new process would
    sys.modules["tempfile"].tempdir = None
sys.path[0] = request["cwd"]  # as -m puts the working directory first
sys.argv = ["pitui", *request["args"]]
runpy.run_module("pitui", run_name="__main__", alter_sys=True)
"""


class WarmPitui:
    """``run_pitui`` through one interpreter that has imported pitui's dependencies already
    (httpx and the JSON libraries): each run is a fork of it that becomes
    ``python -m pitui ARGS`` with its own folder, environment, stdin, stdout and stderr, and
    ends with its own exit code (atexit handlers run, as in a fresh process). pitui itself is
    imported fresh by every run. For runs to their end; signals and timing need a real child
    (``pitui_argv``)."""

    def __init__(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="pitui-warm-")
        self.address = os.path.join(self.folder, "sock")
        self.process = subprocess.Popen(
            [sys.executable, "-c", _SERVER, self.address],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        ready = self.process.stdout.readline()
        assert ready == "ready\n", f"the warm pitui server did not start: {ready!r}"

    def run(
        self, args: list[str], cwd: Path, env: dict[str, str], timeout: float = 90
    ) -> subprocess.CompletedProcess[str]:
        sys.audit(CHILD_EVENT, pitui_argv(*args))  # a process of its own, if not of ours
        request = json.dumps({"args": args, "cwd": str(cwd), "env": env}).encode()
        with (
            open(os.devnull, "rb") as stdin,
            tempfile.TemporaryFile() as out,
            tempfile.TemporaryFile() as err,
            socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as conn,
        ):
            conn.connect(self.address)
            socket.send_fds(conn, [request], [stdin.fileno(), out.fileno(), err.fileno()])
            conn.settimeout(timeout)
            pid = int(conn.recv(64))
            try:
                code = int(conn.recv(64))
            except TimeoutError:
                os.kill(pid, signal.SIGKILL)
                raise subprocess.TimeoutExpired(pitui_argv(*args), timeout) from None
            stdout, stderr = (_text(f) for f in (out, err))
        return subprocess.CompletedProcess(pitui_argv(*args), code, stdout, stderr)

    def close(self) -> None:
        with (
            contextlib.suppress(OSError),
            socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as c,
        ):
            c.connect(self.address)
            c.send(b"")
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


_warm: WarmPitui | None = None


def _text(file: IO[bytes]) -> str:
    """What ``subprocess.run(..., text=True)`` makes of the bytes (locale, universal newlines)."""
    file.seek(0)
    return io.TextIOWrapper(io.BytesIO(file.read())).read()
