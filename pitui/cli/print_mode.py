"""``pitui -p PROMPT``: run the agent headless.

The assistant's text streams to stdout; tool activity, retries and warnings go to stderr.
With ``--json`` every event is one JSON object per line on stdout instead.
Exit codes: 0 success, 1 the model or provider failed, 2 bad usage, 130 aborted (Ctrl+C).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
from typing import Any, TextIO

from pitui.agent.events import (
    AgentEvent,
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
from pitui.cli.agent_setup import build_agent
from pitui.cli.output import TerminalStream, note, say, terminal_json
from pitui.cli.session_args import open_session
from pitui.config import load_settings
from pitui.session.oneline import tool_call_text
from pitui.session.shapes import message_text

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_ABORTED = 0, 1, 2, 130


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


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
        self.err.flush()


class JsonPrinter:
    """``--json``: one event object per line."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def write(self, obj: dict[str, Any]) -> None:
        self.out.write(terminal_json(json.dumps(obj, ensure_ascii=False)) + "\n")
        self.out.flush()

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
        elif isinstance(event, RunEnded):
            self.write({"type": "done", "reason": event.reason})


async def _run_cancellable(agent: AgentSession, prompt: str) -> RunResult:
    """Run the prompt; SIGINT aborts it (the partial reply is stored) instead of killing us."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(agent.prompt(prompt))
    interrupted = False

    def on_sigint() -> None:
        nonlocal interrupted
        interrupted = True
        agent.abort()

    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, on_sigint)
    try:
        result = await task
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)
    if interrupted:
        result.aborted = True
    return result


def run_print(
    args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    cwd = os.getcwd()
    settings = load_settings(cwd)
    for warning in settings.warnings:
        note(f"warning: {warning}", err)
    store = open_session(args, cwd, settings)
    for load_warning in store.warnings:
        note(f"warning: {store.path}: {load_warning}", err)
    try:
        agent = build_agent(args, store, cwd, settings, err)
        agent.subscribe(JsonPrinter(out) if args.json_events else TextPrinter(out, err))
        try:
            result = asyncio.run(_run_cancellable(agent, args.print_prompt))
        except AgentError:
            return EXIT_FAILED  # already reported through the RunError event
        except KeyboardInterrupt:
            return EXIT_ABORTED
        if result.aborted:
            if not args.json_events:
                note("aborted.", err)
            return EXIT_ABORTED
        return EXIT_OK if result.error is None else EXIT_FAILED
    finally:
        store.close()
