"""``pitui -p PROMPT``: run the agent headless.

The assistant's text streams to stdout; tool activity, retries and warnings go to stderr.
With ``--json`` every event is one JSON object per line on stdout instead, the last one always
``done``. Piped stdin is part of the prompt (:mod:`pitui.cli.print_input`).
Exit codes: 0 success, 1 the model or provider failed, 2 bad usage, 130 aborted (Ctrl+C),
143 (SIGTERM) and 129 (SIGHUP, a closed terminal) aborted the same clean way.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
import threading
from typing import Any, TextIO

from pitui.agent.events import (
    AgentEvent,
    ApprovalDecided,
    CheckpointNote,
    CompactionEnd,
    CompactionStart,
    MessageDelta,
    MessageEnd,
    MessageStart,
    ReplyTruncated,
    RetryScheduled,
    RunEnded,
    RunError,
    ToolEnd,
    ToolStart,
)
from pitui.agent.session import AgentError, AgentSession, RunResult
from pitui.agent.tools import kill_running_commands, remove_empty_output_dirs
from pitui.cli.agent_setup import build_agent
from pitui.cli.output import TerminalStream, note, say, terminal_json
from pitui.cli.print_input import print_prompt
from pitui.cli.session_args import open_session, run_cwd, work_dir
from pitui.config import load_settings
from pitui.deepjson import dumps as json_dumps
from pitui.errors import UserError
from pitui.llm.preload import ready as provider_ready
from pitui.session.oneline import tool_call_text
from pitui.session.shapes import message_text
from pitui.text import one_line

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_ABORTED = 0, 1, 2, 130


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _write_quietly(stream: TextIO, text: str) -> bool:
    """Write and flush; False (and nothing raised) when the stream is gone (a closed terminal
    gives EIO, a closed pipe EPIPE): the run must still end cleanly."""
    try:
        stream.write(text)
        stream.flush()
    except (OSError, ValueError):
        return False
    return True


class TextPrinter:
    """Human output: the reply's text on stdout, everything else on stderr, all of it
    sanitized (no escape sequence from a reply or a tool reaches the terminal).

    On a terminal the text streams as it comes. Otherwise (a pipe, a file) each reply's text is
    written when the reply ends, and only if it did not fail: a retried request leaves only
    its final answer in the output.
    """

    def __init__(self, out: TextIO, err: TextIO, stream: bool | None = None) -> None:
        self.out, self.err = out, err
        self.reply = TerminalStream(out)
        self.stream = _isatty(out) if stream is None else stream
        self.wrote_text = False
        self.pending: list[str] = []
        self.streamed_reply = False  # text of the current reply is already on the terminal
        self.discarded = False  # ... and that reply failed

    def _write(self, text: str) -> None:
        if text:
            self.reply.write(text)
            self.wrote_text = True

    def __call__(self, event: AgentEvent) -> None:
        # stdout or stderr may be gone (a closed terminal): keep running, print nothing.
        with contextlib.suppress(OSError, ValueError):
            self._print(event)

    def _print(self, event: AgentEvent) -> None:
        if isinstance(event, MessageDelta) and event.kind == "text":
            if self.stream:
                self._write(event.text)
                self.streamed_reply = True
            else:
                self.pending.append(event.text)
        elif isinstance(event, MessageEnd) and event.message.get("role") == "assistant":
            pending, self.pending = "".join(self.pending), []
            failed = event.message.get("stopReason") == "error"
            if not failed:
                self._write(pending)
            self.discarded = failed and self.streamed_reply
            self.streamed_reply = False
            if self.wrote_text:
                self.reply.finish()
        elif isinstance(event, ReplyTruncated):
            note(f"the reply hit the output limit ({event.output_tokens:,} tokens).", self.err)
        elif isinstance(event, ToolStart):
            say(tool_call_text(event.name, event.arguments), self.err)
        elif isinstance(event, ToolEnd) and event.is_error:
            text = message_text(event.message)
            say(f"  error: {text.strip().splitlines()[0] if text.strip() else ''}", self.err)
        elif isinstance(event, RetryScheduled):
            discarded = "; the partial reply above is discarded" if self.discarded else ""
            self.discarded = False
            note(
                f"{event.error} — retrying in {event.delay:.1f}s "
                f"({event.attempt}/{event.max_attempts}){discarded}",
                self.err,
            )
        elif isinstance(event, RunError):
            note(event.message, self.err)
        elif isinstance(event, CompactionStart):
            note(f"compacting the context ({event.reason})…", self.err)
        elif isinstance(event, CompactionEnd):
            if event.entry_id is not None:
                note(f"compacted from {event.tokens_before:,} tokens.", self.err)
            elif event.error:
                note(f"compaction did not happen: {event.error}", self.err)
        elif isinstance(event, ApprovalDecided) and not event.allowed:
            note(refusal_text(event), self.err)
        elif isinstance(event, CheckpointNote):
            note(event.message, self.err)
        self.err.flush()


def refusal_text(event: ApprovalDecided) -> str:
    """One sentence for stderr when the approval mode refused a tool call."""
    subject = one_line(event.subject, 120)
    if event.by == "no-prompt":
        return (
            f"refused {event.tool} ({subject}): approval mode ask cannot ask in print mode; "
            "allow it in settings (allow) or pass --approve auto"
        )
    if event.by == "read-only":
        return f"refused {event.tool} ({subject}): approval mode read-only"
    return f"refused {event.tool} ({subject})"


class JsonPrinter:
    """``--json``: one event object per line; the last one is always ``done`` (see
    :meth:`finish`)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.done = False

    def write(self, obj: dict[str, Any]) -> None:
        if obj.get("type") == "done":
            if self.done:
                return
            self.done = True
        _write_quietly(self.out, terminal_json(json_dumps(obj, ensure_ascii=False)) + "\n")

    def fail(self, kind: str, message: str) -> None:
        """A failure outside the agent's run (usage, settings, the session): ``error``, then
        ``done``."""
        self.write({"type": "error", "kind": kind, "message": message})
        self.finish("error")

    def finish(self, reason: str) -> None:
        """Write the ``done`` event unless the run already did."""
        self.write({"type": "done", "reason": reason})

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, MessageStart):
            self.write({"type": "message_start", "role": event.role})
        elif isinstance(event, MessageDelta):
            self.write({"type": "message_delta", "kind": event.kind, "text": event.text})
        elif isinstance(event, MessageEnd):
            self.write({"type": "message_end", "entryId": event.entry_id, "message": event.message})
        elif isinstance(event, ToolStart):
            self.write(
                {
                    "type": "tool_start",
                    "toolCallId": event.call_id,
                    "name": event.name,
                    "arguments": event.arguments,
                }
            )
        elif isinstance(event, ToolEnd):
            self.write(
                {
                    "type": "tool_end",
                    "toolCallId": event.call_id,
                    "name": event.name,
                    "entryId": event.entry_id,
                    "isError": event.is_error,
                    "message": event.message,
                }
            )
        elif isinstance(event, RetryScheduled):
            self.write(
                {
                    "type": "retry",
                    "attempt": event.attempt,
                    "maxAttempts": event.max_attempts,
                    "delay": event.delay,
                    "error": event.error,
                }
            )
        elif isinstance(event, RunError):
            self.write({"type": "error", "kind": event.kind, "message": event.message})
        elif isinstance(event, ReplyTruncated):
            self.write({"type": "truncated", "outputTokens": event.output_tokens})
        elif isinstance(event, CompactionStart):
            self.write({"type": "compaction", "phase": "start", "reason": event.reason})
        elif isinstance(event, CompactionEnd):
            self.write(
                {
                    "type": "compaction",
                    "phase": "end",
                    "reason": event.reason,
                    "entryId": event.entry_id,
                    "tokensBefore": event.tokens_before,
                    "error": event.error,
                    "cancelled": event.cancelled,
                    "willRetry": event.will_retry,
                }
            )
        elif isinstance(event, ApprovalDecided):
            self.write(
                {
                    "type": "approval",
                    "tool": event.tool,
                    "subject": event.subject,
                    "allowed": event.allowed,
                    "by": event.by,
                }
            )
        elif isinstance(event, CheckpointNote):
            row: dict[str, Any] = {"type": "checkpoint_note", "message": event.message}
            if event.progress:
                row["progress"] = True
            self.write(row)
        elif isinstance(event, RunEnded):
            self.write({"type": "done", "reason": event.reason})


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Ctrl+C, ``kill``/``timeout``, and a closed terminal: each aborts the run cleanly."""
EXIT_DEADLINE = 3.0
"""Seconds after a stop signal at which the process ends whatever still runs."""


class _Deadline:
    """After the first stop signal: end the process ``EXIT_DEADLINE`` seconds later unless
    :meth:`cancel` is called first (the clean path finished)."""

    timer: threading.Timer | None = None

    @classmethod
    def start(cls, code: int) -> None:
        if cls.timer is None:
            cls.timer = threading.Timer(EXIT_DEADLINE, _end_now, (code,))
            cls.timer.daemon = True
            cls.timer.start()

    @classmethod
    def cancel(cls) -> None:
        if cls.timer is not None:
            cls.timer.cancel()
            cls.timer = None


def _end_now(code: int) -> None:
    kill_running_commands()
    remove_empty_output_dirs()
    os._exit(code)


async def _run_cancellable(agent: AgentSession, prompt: str) -> tuple[RunResult, int | None]:
    """Run the prompt. SIGINT, SIGTERM and SIGHUP abort it instead of killing us: the partial
    reply is stored as aborted and the tools' commands are stopped (SIGKILL for those that
    ignore SIGTERM), within a second. Returns the result and the signal that ended it."""
    loop = asyncio.get_running_loop()

    async def run() -> RunResult:
        # The provider code is imported in a thread (litellm's routes take seconds), so a
        # signal meanwhile is handled now.
        await provider_ready(agent.route)
        return await agent.prompt(prompt)

    task = asyncio.ensure_future(run())
    received: list[int] = []
    stopping: list[asyncio.Future[bool]] = []

    def on_signal(signum: int) -> None:
        if received or not agent.running:  # a second signal, or nothing started yet
            kill_running_commands()
            task.cancel()
        if not received:
            received.append(signum)
            _Deadline.start(128 + signum)
            stopping.append(asyncio.ensure_future(agent.stop()))

    for signum in STOP_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, on_signal, signum)
    try:
        result = await task
    except asyncio.CancelledError:
        result = RunResult(aborted=True)
    finally:
        for signum in STOP_SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signum)
        for waiting in stopping:
            with contextlib.suppress(asyncio.CancelledError):
                await waiting
    if received:
        result.aborted = True
    return result, received[0] if received else None


def run_print(
    args: argparse.Namespace,
    out: TextIO | None = None,
    err: TextIO | None = None,
    stdin: TextIO | None = None,
) -> int:
    """``pitui -p``. With ``--json`` the output ends with a ``done`` event on every path: a
    finished, failed or aborted run, and a usage, settings or session error before the run
    (after an ``error`` event; the exception still propagates to the caller's exit code 2)."""
    out = out or sys.stdout
    err = err or sys.stderr
    printer = JsonPrinter(out) if args.json_events else None
    reason = "error"
    try:
        code = _run_print(args, out, err, sys.stdin if stdin is None else stdin, printer)
        reason = "done" if code == EXIT_OK else "aborted" if code > 128 else "error"
        return code
    except UserError as exc:
        if printer is not None:
            printer.fail(getattr(exc, "kind", "usage"), str(exc))
        raise
    except KeyboardInterrupt:
        reason = "aborted"
        raise
    finally:
        if printer is not None:
            printer.finish(reason)


def _run_print(
    args: argparse.Namespace,
    out: TextIO,
    err: TextIO,
    stdin: TextIO | None,
    printer: JsonPrinter | None,
) -> int:
    cwd = run_cwd(args)
    prompt = print_prompt(args.print_prompt, stdin, err)
    settings = load_settings(cwd)
    for warning in settings.warnings:
        note(f"warning: {warning}", err)
    store = open_session(args, cwd, settings)
    for load_warning in store.warnings:
        note(f"warning: {store.path}: {load_warning}", err)
    try:
        where = work_dir(args, store, cwd)
        agent = build_agent(args, store, cwd, settings, err, where)
        agent.subscribe(printer if printer is not None else TextPrinter(out, err))
        try:
            result, signum = asyncio.run(_run_cancellable(agent, prompt))
        except AgentError:
            return EXIT_FAILED  # already reported through the RunError event
        except KeyboardInterrupt:
            return EXIT_ABORTED
        if result.aborted:
            if printer is None:
                with contextlib.suppress(OSError, ValueError):
                    note("aborted.", err)
            # The shell's convention: 130 for Ctrl+C, 143 for SIGTERM, 129 for SIGHUP.
            return 128 + signum if signum is not None else EXIT_ABORTED
        return EXIT_OK if result.error is None else EXIT_FAILED
    finally:
        try:
            store.close()
        finally:
            _Deadline.cancel()
