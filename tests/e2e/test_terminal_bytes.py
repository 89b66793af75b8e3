"""The bytes the TUI writes to a real terminal carry none of a session's hostile escapes.

pitui runs on a pseudo-terminal with a session whose every field holds terminal escapes (OSC
titles and clipboard writes, CSI in 7-bit and C1 form, DCS, bells, bidi overrides). We read
everything it writes while the chat, the tree browser, each details tab and the session picker
show that session (and a toast: the load warning naming an entry whose id is hostile), and
look for any piece of the hostile text's escapes. Textual's own drawing
sequences are allowed; the session's never are.
"""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))
import contextlib

from corpus import CASES, HOSTILE

# Fragments only the session's text can produce (Textual never writes these).
FORBIDDEN = [
    b"\x1b]0;PWNED",  # an OSC 0 window title
    b"\x1b]52;c;aGVsbG8",  # an OSC 52 clipboard write (Textual's own copies carry other data)
    b"\x1b[2J \xc2",  # the hostile clear-screen, where it stands in the text
    b"\x1bP+q",  # a DCS request
    b"\xc2\x9b",  # C1 CSI (UTF-8)
    b"\xc2\x90",  # C1 DCS (UTF-8)
    "\u202e".encode(),  # right-to-left override
    "\u2028".encode(),  # line separator
    b"\x07bell",  # a bell inside text
    b"\x08bs",  # a backspace inside text
    b"\x7fdel",  # DEL inside text
]


def _read_until(fd: int, until: float, sink: bytearray) -> None:
    while time.monotonic() < until:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:
                return
            if not data:
                return
            sink.extend(data)


def _wait_for(fd: int, sink: bytearray, needle: bytes, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    start = len(sink)
    while time.monotonic() < deadline:
        _read_until(fd, min(deadline, time.monotonic() + 0.2), sink)
        if needle in sink[start:]:
            return
    raise AssertionError(f"timed out waiting for {needle!r}")


@pytest.mark.timeout(180)
def test_tui_writes_no_session_escapes_to_the_terminal(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    path = sessions / "2025-01-01T00-00-00-000Z_esc.jsonl"
    header, _, rest = CASES["escapes_everywhere"]().partition(b"\n")
    # An entry whose id and parent are hostile: the load warning naming them is a toast.
    orphan = {
        "type": "message",
        "id": f"orphan{HOSTILE}",
        "parentId": f"gone{HOSTILE}",
        "timestamp": "2025-01-01T00:00:00.500Z",
        "message": {"role": "user", "content": "orphan", "timestamp": 1},
    }
    path.write_bytes(header + b"\n" + json.dumps(orphan).encode() + b"\n" + rest)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "TERM": "xterm-256color",
        "COLUMNS": "120",
        "LINES": "40",
        "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
    }
    pid, fd = pty.fork()
    if pid == 0:  # the child: pitui on the pty
        os.chdir(tmp_path)
        argv = [sys.executable, "-m", "pitui", "--session", str(path)]
        # The file's stored working directory is not on this machine: work here.
        argv += ["--session-dir", str(sessions), "--cwd", str(tmp_path)]
        os.execve(sys.executable, argv, env)
    out = bytearray()
    try:
        import fcntl
        import struct
        import termios

        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        _wait_for(fd, out, b"bell dcs", 60)  # the chat shows the session

        def press(keys: bytes, settle: float = 1.5) -> None:
            os.write(fd, keys)
            _read_until(fd, time.monotonic() + settle, out)

        os.write(fd, b"\x14")  # Ctrl+T: the tree browser with the details pane
        _wait_for(fd, out, "← leaf".encode(), 30)
        for _ in range(6):
            press(b"\x1b[A", 0.6)  # up through entries (the details pane follows)
        press(b"\t", 1.0)
        press(b"\x1b", 1.5)  # close the tree
        press(b"/resume\r", 3.0)  # the session picker lists it (name, first message, cwd)
        press(b"\x1b", 1.5)
        press(b"\x11", 3.0)  # Ctrl+Q
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
    assert len(out) > 10_000, "pitui drew almost nothing"
    assert b"has a missing parent" in out, "the load warning's toast was not shown"
    for fragment in FORBIDDEN:
        index = out.find(fragment)
        assert index < 0, (
            f"{fragment!r} reached the terminal: …{bytes(out[max(0, index - 60) : index + 40])!r}…"
        )
