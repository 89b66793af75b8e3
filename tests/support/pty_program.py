"""A program run in a pseudo-terminal of a fixed size, read until its screen shows something.

Textual and ``-X importtime`` both write to the terminal: :attr:`PtyProgram.text` is all of
it with the escape sequences taken out (a marker split by cursor moves is found)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import termios
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[()][0-9A-Za-z]|.)")


def screen_text(raw: bytes) -> str:
    return ESCAPES.sub("", raw.decode("utf-8", "replace"))


class PtyProgram:
    def __init__(
        self, argv: list[str], env: dict[str, str], cwd: Path, rows: int = 40, cols: int = 120
    ) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
        )
        os.close(slave)
        self.output = b""

    @property
    def text(self) -> str:
        return screen_text(self.output)

    def read_until(self, done: Callable[[str], bool] | str, seconds: float) -> bool:
        """Read until ``done(text)`` (or ``done`` in the text); False when the time is up or
        the program ended first."""
        check = done if callable(done) else (lambda text: done in text)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.master], [], [], 0.2)
            if ready:
                try:
                    self.output += os.read(self.master, 65536)
                except OSError:  # the program ended (EIO)
                    return False
                if check(self.text):
                    return True
            elif self.process.poll() is not None:
                return False
        return False

    def drain(self, seconds: float = 0.2) -> None:
        """Read what is there now (and whatever comes within ``seconds`` of quiet)."""
        with contextlib.suppress(OSError):
            while select.select([self.master], [], [], seconds)[0]:
                chunk = os.read(self.master, 65536)
                if not chunk:
                    return
                self.output += chunk

    def write(self, data: bytes) -> None:
        os.write(self.master, data)

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        with contextlib.suppress(OSError):
            os.close(self.master)

    def __enter__(self) -> PtyProgram:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
