"""A real terminal for the TUI benchmarks: a private tmux server driven through control mode.

``Terminal`` starts its own tmux server (a socket in a temp folder, ``-f /dev/null``: no user
configuration, never the user's tmux), one session of a fixed size, and a control-mode client
(``tmux -C attach``) kept open for the whole run. Keys are sent and the screen is captured
through that one connection (no process spawned per poll), and tmux tells the client about
every byte the program writes (``%output`` notifications), so the poller captures the pane as
soon as something changed instead of on a blind timer.

Times are ``time.monotonic()`` (the scripted model server uses the same clock). A measured
"visible at" time is when the capture that first showed the expected text was *issued*: the
text appeared after the previous capture and no later than that. ``calibrate()`` measures
what this costs (a capture round trip; key -> echo through ``cat``, which the kernel echoes
at once; a program's write -> seen).
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EXIT_MARK = "__BENCH_EXITED__"
COMMAND_TIMEOUT = 30.0
"""Seconds to wait for tmux to answer a command (a loaded machine takes seconds, rarely)."""
CLIENT_ENDED = "the tmux control client ended"
"""What a command waiting for its answer gets when the control client ends first."""


class TerminalError(RuntimeError):
    pass


@dataclass
class Seen:
    """A capture that satisfied a predicate: when it was issued and what it showed."""

    at: float
    screen: str
    captures: int


class _Pending:
    __slots__ = ("done", "error", "lines")

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.done = threading.Event()
        self.error = False


class Terminal:
    """One tmux session of ``width`` x ``height`` running a command; see the module doc."""

    def __init__(self, width: int = 120, height: int = 40, min_interval: float = 0.001) -> None:
        if shutil.which("tmux") is None:
            raise TerminalError("tmux is not installed (apt-get install tmux)")
        self.width, self.height = width, height
        self.min_interval = min_interval
        self._dir = Path(tempfile.mkdtemp(prefix="pitui-bench-tmux-"))
        self.socket = str(self._dir / "sock")
        self._control: subprocess.Popen[bytes] | None = None
        self._pending: deque[_Pending] = deque()
        self._write_lock = threading.Lock()
        self._output = threading.Condition()
        self._output_count = 0
        self._output_bytes = 0
        self.last_output_at = 0.0
        self.captures = 0
        self._reader: threading.Thread | None = None
        self._session = "bench"
        self._started = False
        self._runs = 0
        self.reconnects = 0
        """Control clients started again after one died (reported with the results)."""
        self._watches: dict[str, Callable[[str], bool]] = {}
        self.seen: dict[str, float] = {}

    # ---------------------------------------------------------------------------- lifecycle

    def _tmux(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(
            ["tmux", "-S", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            timeout=30,
        )
        if check and proc.returncode != 0:
            raise TerminalError(f"tmux {' '.join(args)}: {proc.stderr.strip()}")
        return proc.stdout

    def start(self) -> Terminal:
        # A placeholder shell keeps the session alive between programs (respawn-pane -k).
        self._tmux(
            "new-session",
            "-d",
            "-s",
            self._session,
            "-x",
            str(self.width),
            "-y",
            str(self.height),
            "sleep 100000",
        )
        for option in (
            ("-g", "window-size", "manual"),
            ("-g", "escape-time", "0"),
            ("-g", "status", "off"),
            ("-g", "history-limit", "2000"),
            ("-g", "remain-on-exit", "on"),
        ):
            self._tmux("set", *option)
        self._tmux(
            "resize-window", "-t", self._session, "-x", str(self.width), "-y", str(self.height)
        )
        self._attach()
        size = self.command("display", "-p", "#{window_width}x#{window_height}")
        if size != [f"{self.width}x{self.height}"]:
            raise TerminalError(f"tmux window is {size}, wanted {self.width}x{self.height}")
        self._started = True
        return self

    def _attach(self) -> None:
        """Start the control-mode client (and its reader), with a queue of its own: a client
        that died fails only the commands it was given."""
        self._control = subprocess.Popen(
            ["tmux", "-S", self.socket, "-f", "/dev/null", "-C", "attach", "-t", self._session],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
        )
        self._pending = deque()
        self._reader = threading.Thread(
            target=self._read_loop,
            args=(self._control, self._pending),
            name="tmux-control",
            daemon=True,
        )
        self._reader.start()
        self.command("display", "-p", "ready")  # the attach block and this one answered

    def reconnect(self) -> None:
        """A new control client after the old one died (a busy machine: tmux dropped it, and
        writing to it raised ``BrokenPipeError``); the tmux server and its session are started
        again if they are gone too. What ran in the pane is lost in that case."""
        self.reconnects += 1
        old, self._control = self._control, None
        if old is not None:
            with contextlib.suppress(OSError):
                assert old.stdin is not None
                old.stdin.close()
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                old.kill()
                old.wait(timeout=5)
        alive = subprocess.run(
            ["tmux", "-S", self.socket, "-f", "/dev/null", "has-session", "-t", self._session],
            capture_output=True,
            timeout=30,
        )
        if alive.returncode != 0:
            self._tmux("kill-server", check=False)
            self.start()
            return
        self._attach()

    @property
    def alive(self) -> bool:
        """The control client runs (it can take commands)."""
        return self._control is not None and self._control.poll() is None

    def close(self) -> None:
        if self._control is not None:
            try:
                assert self._control.stdin is not None
                self._control.stdin.close()
            except OSError:
                pass
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._control.wait(timeout=5)
            self._control = None
        self._tmux("kill-server", check=False)
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> Terminal:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------------------ control

    def _read_loop(self, control: subprocess.Popen[bytes], pendings: deque[_Pending]) -> None:
        assert control.stdout is not None
        stream = open(  # noqa: SIM115 (lives as long as the thread)
            control.stdout.fileno(), "rb", buffering=1 << 16, closefd=False
        )
        current: _Pending | None = None
        begin_tag = b""
        for raw in stream:
            if current is not None:
                if (
                    raw.startswith((b"%end ", b"%error "))
                    and raw.rstrip(b"\n").split(b" ", 1)[1] == begin_tag.split(b" ", 1)[1]
                ):
                    current.error = raw.startswith(b"%error")
                    current.done.set()
                    current = None
                else:
                    current.lines.append(raw.decode("utf-8", "replace").rstrip("\n"))
                continue
            if raw.startswith(b"%output "):
                with self._output:
                    self._output_count += 1
                    self._output_bytes += len(raw)
                    self.last_output_at = time.monotonic()
                    self._output.notify_all()
            elif raw.startswith(b"%begin "):
                begin_tag = raw.rstrip(b"\n")
                # flags 1: the answer to a command of this client (in order); else not ours
                ours = begin_tag.endswith(b" 1") and pendings
                current = pendings.popleft() if ours else _Pending()
            elif raw.startswith(b"%exit"):
                break
        for pending in pendings:
            pending.error = True
            pending.lines.append(CLIENT_ENDED)
            pending.done.set()

    def _send(self, line: str) -> _Pending:
        """Give the control client ``line``; a client that died is replaced once (see
        :meth:`reconnect`) before this fails with a :class:`TerminalError`."""
        for attempt in (1, 2):
            if not self.alive:
                self._reconnect_or_fail(attempt)
            control = self._control
            assert control is not None and control.stdin is not None
            pending = _Pending()
            with self._write_lock:
                self._pending.append(pending)
                try:
                    control.stdin.write(line.encode() + b"\n")
                    return pending
                except OSError as exc:  # BrokenPipeError: the client is gone
                    with contextlib.suppress(ValueError):
                        self._pending.remove(pending)
                    if attempt == 2:
                        raise TerminalError(f"the tmux control client is gone ({exc})") from exc
            with contextlib.suppress(OSError):
                control.kill()
        raise TerminalError("unreachable")

    def _reconnect_or_fail(self, attempt: int) -> None:
        if not self._started and self._control is None:
            raise TerminalError("the terminal is not running")
        try:
            self.reconnect()
        except (OSError, subprocess.SubprocessError) as exc:
            raise TerminalError(f"tmux could not be reached again ({exc})") from exc
        if attempt == 2 and not self.alive:
            raise TerminalError("the tmux control client died again")

    def command(self, *args: str, timeout: float = COMMAND_TIMEOUT) -> list[str]:
        """Run one tmux command and return its answer. A command that met a control client
        on its way out (the write went through, then the client ended before answering: the
        server was killed in between) is sent once more to the replacement client."""
        for attempt in (1, 2):
            pending = self._send(" ".join(_quote(a) for a in args))
            if not pending.done.wait(timeout):
                raise TerminalError(f"tmux did not answer {args!r}")
            if pending.error and pending.lines == [CLIENT_ENDED] and attempt == 1:
                if self._control is not None:
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        self._control.wait(timeout=10)
                continue
            if pending.error:
                raise TerminalError(f"tmux {args!r}: {' '.join(pending.lines)}")
            return pending.lines
        raise TerminalError("unreachable")

    # ------------------------------------------------------------------------------- programs

    def run(self, argv: list[str], env: dict[str, str], cwd: str) -> None:
        """Replace whatever runs in the pane with ``argv`` (in ``cwd`` with exactly ``env``
        plus TERM); when it exits the pane shows ``EXIT_MARK`` and its exit code."""
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(env.items()))
        program = " ".join(shlex.quote(a) for a in argv)
        script = (
            f"cd {shlex.quote(cwd)} && exec env -i {exports} sh -c "
            + shlex.quote(f'{program}; printf "\\n{EXIT_MARK}%s\\n" $?; exec sleep 100000')
            + "\n"
        )
        self._runs += 1
        path = self._dir / f"run-{self._runs}.sh"
        path.write_text(script)
        self._respawn(f"sh {path}")

    def _respawn(self, command: str) -> None:
        # tmux rarely refuses a respawn-pane -k with no message (a race with the dying
        # program, seen once in many hundred runs): try again
        for attempt in range(5):
            try:
                self.command("respawn-pane", "-k", "-t", self._session, command)
                return
            except TerminalError:
                if attempt == 4:
                    raise
                time.sleep(0.2)

    def stop_program(self) -> None:
        """Kill what runs in the pane (the processes this terminal started, by pid) and put
        the placeholder back."""
        try:
            root = self.pane_pid()
        except TerminalError:
            root = None
        if root is not None:
            for pid in reversed(descendants(root)):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        self._respawn("sleep 100000")

    def pane_pid(self) -> int:
        return int(self.command("display", "-p", "-t", self._session, "#{pane_pid}")[0])

    def program_pid(self, name_hint: str, timeout: float = 10.0) -> int | None:
        """The pid of the program under the pane's ``sh`` whose command line or executable
        mentions ``name_hint`` (the agent, not the wrapper shell; pi renames its process)."""
        deadline = time.monotonic() + timeout
        root = self.pane_pid()
        while time.monotonic() < deadline:
            for pid in descendants(root):
                try:
                    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
                    exe = os.readlink(f"/proc/{pid}/exe")
                except OSError:
                    continue
                if cmdline.startswith(b"sh ") or os.path.basename(exe) in ("sh", "dash"):
                    continue
                if name_hint.encode() in cmdline or name_hint in os.path.basename(exe):
                    return pid
            time.sleep(0.01)
        return None

    # ---------------------------------------------------------------------------------- input

    def send(self, *keys: str, literal: bool = False) -> float:
        """Send keys (tmux key names, or text with ``literal``); returns when they were sent."""
        args = ["send-keys", "-t", self._session, *(["-l"] if literal else []), *keys]
        line = " ".join(_quote(a) for a in args)
        at = time.monotonic()
        self._send(line)  # answered in order; nobody waits for it
        return at

    # --------------------------------------------------------------------------------- screen

    def capture(self) -> str:
        """The pane's text now. Every watch (``watch()``) is checked on every capture."""
        self.captures += 1
        issued = time.monotonic()
        screen = "\n".join(self.command("capture-pane", "-p", "-t", self._session))
        for name, predicate in list(self._watches.items()):
            if predicate(screen):
                self.seen[name] = issued
                del self._watches[name]
        return screen

    def watch(self, name: str, predicate: Callable[[str], bool]) -> None:
        """Record in ``seen[name]`` the first capture (by anyone) where ``predicate`` holds,
        so an event that shows up while the harness waits for something else is timed."""
        self.seen.pop(name, None)
        self._watches[name] = predicate

    def unwatch_all(self) -> None:
        self._watches.clear()
        self.seen.clear()

    def wait_settled(self, after: float, quiet: float = 0.2, timeout: float = 60.0) -> float:
        """The time of the program's last write once it has been quiet for ``quiet`` s,
        counting only writes after ``after`` (e.g. a click): when the screen stopped changing."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._output:
                last = self.last_output_at
            now = time.monotonic()
            if last > after and now - last >= quiet:
                return last
            time.sleep(0.01)
        raise TerminalError(f"the screen did not settle within {timeout:.0f} s")

    def send_hex(self, data: bytes) -> float:
        """Send raw bytes (e.g. an SGR mouse report) to the program."""
        at = time.monotonic()
        self._send("send-keys -t " + self._session + " -H " + " ".join(f"{b:02x}" for b in data))
        return at

    def wheel(self, x: int, y: int, up: bool = True, count: int = 1) -> float:
        """``count`` mouse-wheel notches at 0-based column ``x``, row ``y`` (SGR mouse)."""
        button = 64 if up else 65
        return self.send_hex(f"\x1b[<{button};{x + 1};{y + 1}M".encode() * count)

    def click(self, x: int, y: int) -> float:
        """A left click at 0-based column ``x``, row ``y`` (SGR mouse: press then release)."""
        press = f"\x1b[<0;{x + 1};{y + 1}M".encode()
        release = f"\x1b[<0;{x + 1};{y + 1}m".encode()
        at = self.send_hex(press)
        self.send_hex(release)
        return at

    def output_count(self) -> int:
        with self._output:
            return self._output_count

    def wait_for(
        self,
        predicate: Callable[[str], bool],
        timeout: float = 30.0,
        what: str = "",
        idle_poll: float = 0.02,
    ) -> Seen:
        """Capture until ``predicate(screen)`` holds: at once, then whenever the program wrote
        something (at most every ``min_interval``), and every ``idle_poll`` anyway."""
        deadline = time.monotonic() + timeout
        captures = 0
        screen = ""
        while True:
            with self._output:
                seen_outputs = self._output_count
            issued = time.monotonic()
            screen = self.capture()
            captures += 1
            if predicate(screen):
                return Seen(issued, screen, captures)
            now = time.monotonic()
            if now > deadline:
                raise TerminalError(
                    f"timed out after {timeout:.0f} s waiting for {what or predicate!r}; "
                    f"the screen shows:\n{screen}"
                )
            with self._output:
                if self._output_count == seen_outputs:
                    self._output.wait(min(idle_poll, deadline - now))
            # The first change after the initial capture is captured at once; while the program
            # keeps writing, captures are spaced ``min_interval`` apart (the poller's own CPU).
            pause = issued + self.min_interval - time.monotonic()
            if captures > 1 and pause > 0:
                time.sleep(pause)

    def wait_text(self, text: str, timeout: float = 30.0) -> Seen:
        return self.wait_for(lambda s: text in s, timeout, what=repr(text))

    def wait_gone(self, text: str, timeout: float = 30.0) -> Seen:
        return self.wait_for(lambda s: text not in s, timeout, what=f"{text!r} to go")

    def wait_quiet(self, quiet: float = 0.3, timeout: float = 30.0) -> bool:
        """Until the program has written nothing for ``quiet`` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._output:
                last = self.last_output_at
            idle = time.monotonic() - last
            if idle >= quiet:
                return True
            time.sleep(min(quiet - idle, 0.05))
        return False

    # ---------------------------------------------------------------------------- calibration

    def calibrate(self, samples: int = 60) -> dict[str, Any]:
        """What the instrument itself costs, on this machine, at this size. Each of the three
        figures is measured on its own: one that fails (a loaded machine) says why in its place
        (``{"error": ...}``) and the others are still measured."""
        out: dict[str, Any] = {
            "size": f"{self.width}x{self.height}",
            "min_interval_ms": self.min_interval * 1e3,
        }
        for name, measure in (
            ("capture_rtt_ms", self._capture_round_trips),
            ("key_echo_floor_ms", self._key_echo_floor),
            ("write_to_seen_ms", self._write_to_seen),
        ):
            try:
                out[name] = _ms_summary(measure(samples))
            except (TerminalError, OSError, ValueError) as exc:
                out[name] = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"}
            finally:
                with contextlib.suppress(TerminalError, OSError):
                    self.stop_program()
        return out

    def _capture_round_trips(self, samples: int) -> list[float]:
        """A capture round trip on a full screen of text."""
        filler = "\n".join(f"{i:04d} " + "x" * (self.width - 6) for i in range(self.height))
        self.run(
            [
                sys.executable,
                "-c",
                f"print({filler!r}, end='', flush=True); import time; time.sleep(100000)",
            ],
            env=_base_env(),
            cwd="/",
        )
        self.wait_text(f"{self.height - 1:04d} ", timeout=60)
        rtts = []
        for _ in range(samples):
            t0 = time.monotonic()
            self.capture()
            rtts.append(time.monotonic() - t0)
        return rtts

    def _key_echo_floor(self, samples: int) -> list[float]:
        """Key -> echo through the kernel's tty echo (cat): the harness's own floor."""
        self.run(["cat"], env=_base_env(), cwd="/")
        time.sleep(0.3)
        echoes = []
        chars = "abcdefghijklmnopqrstuvwxyz"
        typed = ""
        for i in range(samples):
            if len(typed) >= self.width - 10:
                self.send("Enter")
                self.wait_quiet(0.05)
                typed = ""
            ch = chars[i % len(chars)]
            typed += ch
            target = typed
            t0 = self.send(ch, literal=True)
            seen = self.wait_for(lambda s, t=target: t in s, timeout=30)
            echoes.append(seen.at - t0)
        return echoes

    def _write_to_seen(self, samples: int) -> list[float]:
        """A program's write -> seen (the program records when it wrote). A mark the poller
        did not catch before the next one replaced it (a loaded machine) is not counted: the
        wait is for any later mark, never for one that is gone."""
        stamp_file = self._dir / "stamps"
        writer = (
            "import time, sys\n"
            f"out = open({str(stamp_file)!r}, 'w')\n"
            f"for i in range({samples}):\n"
            "    time.sleep(0.05)\n"
            "    t = time.monotonic()\n"
            "    sys.stdout.write(f'\\x1b[H\\x1b[2Jmark-{i:04d}'); sys.stdout.flush()\n"
            "    out.write(f'{t!r}\\n'); out.flush()\n"
            "time.sleep(100000)\n"
        )
        self.run([sys.executable, "-c", writer], env=_base_env(), cwd="/")
        seen_at: dict[int, float] = {}
        last = -1
        deadline = time.monotonic() + 30 + samples * 0.2
        while last < samples - 1 and time.monotonic() < deadline:
            seen = self.wait_for(
                lambda s, after=last: _mark(s) > after,
                timeout=max(1.0, deadline - time.monotonic()),
                what="the next mark",
            )
            last = _mark(seen.screen)
            seen_at[last] = seen.at
        written = [float(x) for x in stamp_file.read_text().split()]
        delays = [at - written[i] for i, at in seen_at.items() if i < len(written)]
        if not delays:
            raise TerminalError("no mark was seen")
        return delays


def _mark(screen: str) -> int:
    """The number of the calibration mark on ``screen`` (-1: none)."""
    found = re.search(r"mark-(\d{4})", screen)
    return int(found.group(1)) if found else -1


def _ms_summary(values: list[float]) -> dict[str, float]:
    ms = sorted(v * 1e3 for v in values)
    return {
        "median": round(statistics.median(ms), 3),
        "p95": round(ms[min(len(ms) - 1, int(len(ms) * 0.95))], 3),
        "max": round(ms[-1], 3),
        "n": len(ms),
    }


def _base_env() -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "HOME": tempfile.gettempdir(),
    }


_SAFE = re.compile(r"^[A-Za-z0-9_./:=@%^,+-]+$")


def _quote(arg: str) -> str:
    """Quote for tmux's command parser (control mode lines are parsed like a config file)."""
    if arg and _SAFE.match(arg):
        return arg
    if "'" not in arg:
        return "'" + arg + "'"  # tmux: nothing is replaced inside single quotes
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$") + '"'


def descendants(pid: int) -> list[int]:
    out: list[int] = []
    stack = [pid]
    while stack:
        p = stack.pop()
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                children = Path(f"/proc/{p}/task/{task}/children").read_text().split()
            except OSError:
                continue
            for c in children:
                out.append(int(c))
                stack.append(int(c))
    return out


def cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` (all its threads) from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def hwm_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


if __name__ == "__main__":
    for w, h in ((120, 40), (80, 24)):
        with Terminal(w, h) as term:
            print(term.calibrate())
