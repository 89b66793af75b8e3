"""The ``bash`` tool: run a command, keep a head+tail window of its output.

The command runs as ``bash -c COMMAND`` in the context's folder with stdin from ``/dev/null``,
stdout and stderr merged, in a new session (so its own process group). On timeout or
cancellation the whole group gets SIGTERM, then SIGKILL after 2 seconds, and the shell is
reaped. When the shell exits while background children still hold the output pipe open, they
get 0.5 s to finish and are then stopped the same way; background children that redirected their
output (``cmd > log 2>&1 &``) are left running while pitui runs. When pitui goes away (exit,
SIGTERM, SIGHUP, a closed terminal) every group it started that is still alive gets SIGKILL
(:func:`kill_running_commands`): nothing is left behind.

The command's environment is pitui's without credential variables (see
:mod:`pitui.agent.tools.environment`).

Output is streamed. Up to 2000 lines / 50 KB it is kept whole; beyond that the full output goes
to a file (mode 0600, keys redacted as in the result) in ``ctx.output_dir`` as it arrives, and
only the first 20% and the last 80% of the budget are kept in memory, joined by
``... [N lines truncated] ...``. The folder is
created (mode 0700) only when the first output is saved; the session's folder in the temp dir
(:func:`new_output_dir`) is removed at exit when it is empty (:func:`remove_empty_output_dirs`).
Each piece read is also passed to ``ctx.on_output`` (the agent shows it live). When the command
is aborted, what it printed so far is kept: ``ctx.partial`` holds it with ``Command aborted``
(as pi 1.6 stores it) and the cancellation propagates.
"""

from __future__ import annotations

import asyncio
import atexit
import codecs
import contextlib
import errno
import logging
import os
import secrets
import shutil
import signal
import stat
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from pitui.agent.tools.base import Tool, ToolContext, ToolError, ToolResult
from pitui.agent.tools.environment import Redactor, tool_environment
from pitui.private import ensure_private_folder

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 120.0
MAX_LINES = 2000
MAX_BYTES = 50 * 1024
HEAD_SHARE = 0.2
KILL_GRACE = 2.0  # seconds between SIGTERM and SIGKILL
DRAIN_GRACE = 0.5  # seconds background children may keep the output open after the shell exits
READ_CHUNK = 64 * 1024
_POLL = 0.02
_EXIT_POLL = 0.05


def _utf8_prefix(data: bytes) -> str:
    """Decode ``data`` cut at an arbitrary byte, dropping an incomplete last character."""
    return codecs.getincrementaldecoder("utf-8")("replace").decode(data, final=False)


def _utf8_suffix(data: bytes) -> bytes:
    """Drop continuation bytes at the start of ``data`` (it was cut inside a character)."""
    start = 0
    while start < min(3, len(data)) and data[start] & 0xC0 == 0x80:
        start += 1
    return data[start:]


def private_folder(folder: Path) -> None:
    """Create ``folder`` (mode 0700) unless it exists; raise ``OSError`` unless it is then a
    real folder of this user that nobody else can open (never a symlink someone planted in
    the temp dir)."""
    ensure_private_folder(folder)
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise OSError(errno.EPERM, f"{folder} is not a private folder of this user")
    if stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(folder, 0o700)


_output_dirs: set[Path] = set()
"""Folders handed out by :func:`new_output_dir`, removed at exit when empty."""


def new_output_dir() -> Path:
    """A fresh, unguessable folder name in the temp dir for a session's saved outputs.

    Nothing is created here: the folder appears when a command's full output is first saved.
    """
    path = Path(tempfile.gettempdir()) / f"pitui-output-{secrets.token_hex(8)}"
    _output_dirs.add(path)
    return path


def remove_empty_output_dirs() -> None:
    """Remove the folders of :func:`new_output_dir` that hold nothing (saved outputs stay)."""
    for path in list(_output_dirs):
        with contextlib.suppress(OSError):
            path.rmdir()  # fails, harmlessly, while the folder holds a file
        if not os.path.lexists(path):
            _output_dirs.discard(path)


atexit.register(remove_empty_output_dirs)


class OutputWindow:
    """Collects a command's output: whole while small, else head + rolling tail + a full file."""

    def __init__(
        self,
        output_dir: Path,
        *,
        max_lines: int = MAX_LINES,
        max_bytes: int = MAX_BYTES,
        head_share: float = HEAD_SHARE,
        file_prefix: str = "bash-",
        redactor: Redactor | None = None,
    ) -> None:
        self.output_dir = output_dir
        # Keys are redacted from the full-output file as from the tool result.
        self._redact = redactor.byte_stream() if redactor else None
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self.head_lines = max(1, int(max_lines * head_share))
        self.head_bytes = max(1, int(max_bytes * head_share))
        self.tail_lines = max(1, max_lines - self.head_lines)
        self.tail_bytes = max(1, max_bytes - self.head_bytes)
        self.file_prefix = file_prefix
        self.total_bytes = 0
        self.total_newlines = 0
        self.full_output_path: Path | None = None
        self.save_error: str | None = None
        self._last = b""
        self._spilled = False
        self._buffer = bytearray()  # the whole output, until it exceeds the budget
        self._head = b""
        self._tail = bytearray()  # the last tail_bytes + 1 bytes, or a bit more
        self._file: BinaryIO | None = None

    @property
    def total_lines(self) -> int:
        partial = 1 if self.total_bytes and self._last != b"\n" else 0
        return self.total_newlines + partial

    @property
    def truncated(self) -> bool:
        return self._spilled

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        self.total_bytes += len(chunk)
        self.total_newlines += chunk.count(b"\n")
        self._last = chunk[-1:]
        if not self._spilled:
            self._buffer += chunk
            if self.total_bytes > self.max_bytes or self.total_lines > self.max_lines:
                self._spill()
            return
        self._write(chunk)
        self._tail += chunk
        if len(self._tail) > 2 * self.tail_bytes + 1:
            del self._tail[: len(self._tail) - (self.tail_bytes + 1)]

    def _spill(self) -> None:
        self._spilled = True
        data = bytes(self._buffer)
        self._buffer = bytearray()
        self._head = data[: self.head_bytes]
        self._tail = bytearray(data[-(self.tail_bytes + 1) :])
        try:
            private_folder(self.output_dir)
            stamp = time.strftime("%Y%m%d-%H%M%S")
            fd, name = tempfile.mkstemp(
                prefix=f"{self.file_prefix}{stamp}-", suffix=".log", dir=self.output_dir
            )
        except OSError as exc:
            self.save_error = exc.strerror or str(exc)
            log.warning("could not create a file for the full output: %s", exc)
            return
        self._file = os.fdopen(fd, "wb")  # mkstemp creates it with mode 0600
        self.full_output_path = Path(name)
        self._write(data)

    def _write(self, data: bytes) -> None:
        if self._file is None:
            return
        if self._redact is not None:
            data = self._redact.feed(data)
        try:
            self._file.write(data)
        except OSError as exc:
            self.save_error = exc.strerror or str(exc)
            log.warning("could not save the full output to %s: %s", self.full_output_path, exc)
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None
            self.full_output_path = None

    def close(self) -> None:
        """Flush and close the full-output file (kept on disk)."""
        if self._file is not None:
            try:
                if self._redact is not None:
                    self._file.write(self._redact.flush())
                self._file.close()
            except OSError as exc:
                self.save_error = exc.strerror or str(exc)
                self.full_output_path = None
            self._file = None

    def discard(self) -> None:
        """Close and delete the full-output file."""
        self.close()
        if self.full_output_path is not None:
            with contextlib.suppress(OSError):
                self.full_output_path.unlink()
            self.full_output_path = None

    def _head_part(self) -> tuple[bytes, str]:
        raw = self._head
        index = -1
        for _ in range(self.head_lines):
            found = raw.find(b"\n", index + 1)
            if found == -1:
                break
            index = found
        if index == -1:  # one very long first line: cut inside it
            return raw, _utf8_prefix(raw)
        head = raw[: index + 1]
        return head, head.decode("utf-8", "replace")

    def _tail_part(self) -> bytes:
        buf = bytes(self._tail)
        buf_start = self.total_bytes - len(buf)
        win_start = max(0, len(buf) - self.tail_bytes)
        window = buf[win_start:]
        at_boundary = buf_start + win_start == 0 or buf[win_start - 1 : win_start] == b"\n"
        if not at_boundary:
            newline = window.find(b"\n")
            if newline != -1 and newline + 1 < len(window):
                window = window[newline + 1 :]
            else:  # the window lies inside one very long line
                window = _utf8_suffix(window)
        body = window[:-1] if window.endswith(b"\n") else window
        position = len(body)
        for _ in range(self.tail_lines):
            position = body.rfind(b"\n", 0, position)
            if position == -1:
                break
        if position != -1:
            window = window[position + 1 :]
        return window

    def render(self) -> str:
        """The kept output: everything, or head + ``... [N lines truncated] ...`` + tail."""
        if not self._spilled:
            return self._buffer.decode("utf-8", "replace")
        head, head_text = self._head_part()
        tail = self._tail_part()
        omitted_bytes = self.total_bytes - len(head) - len(tail)
        omitted_lines = self.total_newlines - head.count(b"\n") - tail.count(b"\n")
        if omitted_lines > 0:
            marker = f"... [{omitted_lines} lines truncated] ..."
        else:
            marker = f"... [{omitted_bytes} bytes truncated] ..."
        if head_text and not head_text.endswith("\n"):
            head_text += "\n"
        return f"{head_text}{marker}\n{tail.decode('utf-8', 'replace')}"


@dataclass
class CommandResult:
    output: str  # the kept window (see OutputWindow.render)
    exit_code: int | None  # None when timed out; 128+N when the shell died of signal N
    timed_out: bool
    truncated: bool
    full_output_path: Path | None
    total_lines: int
    save_error: str | None = None


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


_running_groups: set[int] = set()
"""Process groups of commands started by this process and not yet known to be gone."""


def kill_running_commands(sig: signal.Signals = signal.SIGKILL) -> int:
    """Signal the process group of every command still running; returns how many.

    The last guard when pitui itself is going away (SIGTERM, SIGHUP, a closed terminal, exit):
    the commands run in their own sessions, so nothing else would stop them. Safe to call from
    any thread or a signal handler.
    """
    groups = list(_running_groups)
    for pgid in groups:
        _signal_group(pgid, sig)
    return len(groups)


def _forget_finished_groups() -> None:
    """Drop groups that are gone (so a recycled pid is never signalled later)."""
    for pgid in list(_running_groups):
        if not group_alive(pgid):
            _running_groups.discard(pgid)


atexit.register(kill_running_commands)


def group_alive(pgid: int) -> bool:
    """Whether any process of group ``pgid`` is still running (zombies do not count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        names = os.listdir("/proc")
    except OSError:
        return True  # no /proc: trust killpg
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                data = f.read()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2 :].split()
        if len(fields) > 2 and fields[2] == str(pgid).encode() and fields[0] not in (b"Z", b"X"):
            return True
    return False


async def _wait_group_gone(pgid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while group_alive(pgid):
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(_POLL)
    return True


async def terminate_group(proc: asyncio.subprocess.Process, grace: float = KILL_GRACE) -> None:
    """SIGTERM the process group of ``proc``, SIGKILL it after ``grace`` seconds, reap ``proc``.

    If cancelled meanwhile, the group gets SIGKILL at once and the cancellation propagates.
    """
    pgid = proc.pid
    try:
        _signal_group(pgid, signal.SIGTERM)
        if not await _wait_group_gone(pgid, grace):
            _signal_group(pgid, signal.SIGKILL)
            await _wait_group_gone(pgid, 1.0)
        # Reap the shell. Not proc.wait(): that also waits for the pipes to close.
        deadline = time.monotonic() + 1.0
        while proc.returncode is None and time.monotonic() < deadline:
            await asyncio.sleep(_POLL)
    except asyncio.CancelledError:
        _signal_group(pgid, signal.SIGKILL)
        raise


async def _pump(
    stream: asyncio.StreamReader,
    window: OutputWindow,
    on_output: Callable[[str], None] | None,
) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")("replace") if on_output else None
    while True:
        chunk = await stream.read(READ_CHUNK)
        if not chunk:
            break
        window.feed(chunk)
        if on_output is not None and decoder is not None:
            text = decoder.decode(chunk)
            if text:
                on_output(text)
    if on_output is not None and decoder is not None:
        rest = decoder.decode(b"", final=True)
        if rest:
            on_output(rest)


async def _wait_for_exit_or_eof(
    proc: asyncio.subprocess.Process, reader: asyncio.Task[None]
) -> None:
    """Return at EOF on the output, or once the shell has exited and DRAIN_GRACE has passed.

    ``proc.wait()`` cannot be used for the exit: asyncio resolves it only after the pipes close,
    which background children can delay forever. ``proc.returncode`` is set at the exit itself.
    """
    while not reader.done():
        if proc.returncode is not None:
            await asyncio.wait({reader}, timeout=DRAIN_GRACE)
            return
        await asyncio.wait({reader}, timeout=_EXIT_POLL)


def _close_transport(proc: asyncio.subprocess.Process) -> None:
    """Close the pipes asyncio holds for ``proc`` (when a reader was abandoned)."""
    transport = getattr(proc, "_transport", None)
    close = getattr(transport, "close", None)
    if callable(close):
        with contextlib.suppress(Exception):
            close()


def _bash_path() -> str:
    return shutil.which("bash") or "/bin/bash"


async def _spawn(command: str, cwd: Path, env: dict[str, str] | None) -> asyncio.subprocess.Process:
    """Start the shell. A cancellation during the start still kills what was started."""
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            _bash_path(),
            "-c",
            command,
            cwd=cwd,
            env=env if env is not None else tool_environment(os.environ, ()),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    )
    try:
        return await asyncio.shield(spawn)
    except OSError as exc:
        raise ToolError(f"Could not start bash: {exc.strerror or exc}.") from None
    except asyncio.CancelledError:
        # asyncio would only SIGKILL the shell itself; stop its whole group instead.
        try:
            proc = await spawn
        except Exception:
            raise asyncio.CancelledError() from None
        try:
            await terminate_group(proc)
        finally:
            _close_transport(proc)
        raise


async def run_command(
    command: str,
    *,
    cwd: Path,
    output_dir: Path,
    timeout: float | None = DEFAULT_TIMEOUT,
    on_output: Callable[[str], None] | None = None,
    env: dict[str, str] | None = None,
    on_cancel: Callable[[CommandResult], None] | None = None,
    redactor: Redactor | None = None,
) -> CommandResult:
    """Run ``command`` with ``bash -c`` (see the module docstring); never leaves it running.

    ``env`` is the command's environment (default: pitui's without credential variables, see
    :mod:`pitui.agent.tools.environment`). ``on_output`` receives decoded output as it arrives.
    Raises :class:`ToolError` if the shell cannot be started; :class:`asyncio.CancelledError`
    propagates after the group is killed, once ``on_cancel`` got the output read until then
    (its full-output file, if any, is kept; without ``on_cancel`` it is deleted).
    """
    if not cwd.is_dir():
        raise ToolError(f"The working directory {cwd} does not exist.")
    _forget_finished_groups()
    proc = await _spawn(command, cwd, env)
    _running_groups.add(proc.pid)
    try:
        return await _supervise(proc, output_dir, timeout, on_output, on_cancel, redactor)
    finally:
        if proc.returncode is not None and not group_alive(proc.pid):
            _running_groups.discard(proc.pid)


async def _supervise(
    proc: asyncio.subprocess.Process,
    output_dir: Path,
    timeout: float | None,
    on_output: Callable[[str], None] | None,
    on_cancel: Callable[[CommandResult], None] | None = None,
    redactor: Redactor | None = None,
) -> CommandResult:
    assert proc.stdout is not None
    window = OutputWindow(output_dir, redactor=redactor)
    reader = asyncio.create_task(_pump(proc.stdout, window, on_output))
    timed_out = False
    finished = False
    cancelled = False
    try:
        try:
            async with asyncio.timeout(timeout):
                await _wait_for_exit_or_eof(proc, reader)
                if reader.done():
                    await proc.wait()  # the output is closed; the shell may still be running
        except TimeoutError:
            timed_out = True
        if timed_out or not reader.done():
            await terminate_group(proc)
        try:
            await asyncio.wait_for(asyncio.shield(reader), 1.0)
        except TimeoutError:
            # Something outside the group (e.g. a setsid'd grandchild) still holds the pipe.
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
            _close_transport(proc)
        finished = True
    except asyncio.CancelledError:
        cancelled = True
        raise
    finally:
        if not finished:
            try:
                if proc.returncode is None or group_alive(proc.pid):
                    await terminate_group(proc)
            finally:
                reader.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await reader
                _close_transport(proc)
                if cancelled and on_cancel is not None:
                    window.close()
                    on_cancel(_command_result(window, proc, timed_out=False))
                else:
                    window.discard()
    window.close()
    return _command_result(window, proc, timed_out=timed_out)


def _command_result(
    window: OutputWindow, proc: asyncio.subprocess.Process, *, timed_out: bool
) -> CommandResult:
    code = proc.returncode
    exit_code: int | None
    if timed_out:
        exit_code = None
    elif code is not None and code < 0:
        exit_code = 128 - code
    else:
        exit_code = code
    return CommandResult(
        output=window.render(),
        exit_code=exit_code,
        timed_out=timed_out,
        truncated=window.truncated,
        full_output_path=window.full_output_path,
        total_lines=window.total_lines,
        save_error=window.save_error,
    )


def format_seconds(seconds: float) -> str:
    """``120 seconds``, ``1 second``, ``0.5 seconds``."""
    text = f"{seconds:g}"
    return f"{text} second" if text == "1" else f"{text} seconds"


ABORTED = "Command aborted"


def format_command_result(
    result: CommandResult, timeout: float | None, *, aborted: bool = False
) -> str:
    """The text the model reads: output, truncation note, then exit code, timeout or abort
    (an aborted command without output is only ``Command aborted``, as in pi 1.6)."""
    output = result.output.rstrip("\n")
    parts = [output] if output else [] if aborted else ["(no output)"]
    if result.truncated:
        if result.full_output_path is not None:
            parts.append(f"[Output truncated. Full output: {result.full_output_path}]")
        else:
            reason = result.save_error or "unknown error"
            parts.append(f"[Output truncated. The full output could not be saved: {reason}]")
    if aborted:
        parts.append(ABORTED)
    elif result.timed_out:
        parts.append(f"Command timed out after {format_seconds(timeout or 0)}")
    else:
        parts.append(f"exit code: {result.exit_code}")
    return "\n\n".join(parts)


class BashTool(Tool):
    name = "bash"
    description = (
        "Execute a bash command in the current working directory. stdout and stderr are merged; "
        "stdin is empty. Output beyond 2000 lines or 50 KB keeps its beginning and end, and the "
        "full output is saved to a file. The exit code is reported; a non-zero exit code makes the "
        "result an error. Background processes must "
        "redirect their output (cmd > log 2>&1 &), otherwise they are stopped when the command "
        "finishes."
    )
    parameters: dict[str, Any] = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "Shell command to execute"},
            "timeout": {
                "type": "number",
                "description": f"Timeout in seconds (default {DEFAULT_TIMEOUT:g})",
            },
        },
        "required": ["command"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command: str = args["command"]
        if not command.strip():
            raise ToolError("The command is empty.")
        timeout = args.get("timeout", DEFAULT_TIMEOUT)
        if not isinstance(timeout, int | float) or timeout <= 0:
            raise ToolError(f"The timeout must be a positive number of seconds, not {timeout}.")

        def keep_partial(partial: CommandResult) -> None:
            ctx.partial = _tool_result(partial, timeout, aborted=True)

        result = await run_command(
            command,
            cwd=ctx.cwd,
            output_dir=ctx.output_dir,
            timeout=float(timeout),
            env=ctx.command_env(),
            on_output=ctx.on_output,
            on_cancel=keep_partial,
            redactor=ctx.redactor(),
        )
        return _tool_result(result, timeout, aborted=False)


def _tool_result(result: CommandResult, timeout: float, *, aborted: bool) -> ToolResult:
    details: dict[str, Any] = {
        "exitCode": None if aborted else result.exit_code,
        "truncated": result.truncated,
        "timedOut": result.timed_out,
    }
    if aborted:
        details["aborted"] = True
    if result.full_output_path is not None:
        details["fullOutputPath"] = str(result.full_output_path)
    return ToolResult.from_text(
        format_command_result(result, timeout, aborted=aborted),
        # As pi: a command that fails (non-zero exit, killed, timed out) is an error result.
        is_error=result.timed_out or aborted or result.exit_code != 0,
        details=details,
    )
