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
    ApprovalDecided,
    CheckpointNote,
    CompactionEnd,
    CompactionStart,
    MessageDelta,
    MessageEnd,
    MessageStart,
    RetryScheduled,
    RunEnded,
    RunError,
    ToolEnd,
    ToolStart,
)
from pitui.agent.session import AgentError, AgentSession, RunResult
from pitui.cli.agent_setup import build_agent
from pitui.cli.session_args import open_session
from pitui.config import load_settings
from pitui.session.oneline import tool_call_text
from pitui.session.shapes import message_text

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_ABORTED = 0, 1, 2, 130


class TextPrinter:
    """Human output: the reply's text on stdout, everything else on stderr."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out, self.err = out, err
        self.ended_with_newline = True
        self.wrote_text = False

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, MessageDelta) and event.kind == "text":
            self.out.write(event.text)
            self.out.flush()
            self.wrote_text = True
            self.ended_with_newline = event.text.endswith("\n")
        elif isinstance(event, MessageEnd) and event.message.get("role") == "assistant":
            if self.wrote_text and not self.ended_with_newline:
                self.out.write("\n")
                self.out.flush()
                self.ended_with_newline = True
        elif isinstance(event, ToolStart):
            self.err.write(f"{tool_call_text(event.name, event.arguments)}\n")
        elif isinstance(event, ToolEnd) and event.is_error:
            text = message_text(event.message)
            self.err.write(f"  error: {text.strip().splitlines()[0] if text.strip() else ''}\n")
        elif isinstance(event, RetryScheduled):
            self.err.write(
                f"pitui: {event.error} — retrying in {event.delay:.1f}s "
                f"({event.attempt}/{event.max_attempts})\n"
            )
        elif isinstance(event, RunError):
            self.err.write(f"pitui: {event.message}\n")
        elif isinstance(event, CompactionStart):
            self.err.write(f"pitui: compacting the context ({event.reason})…\n")
        elif isinstance(event, CompactionEnd):
            if event.entry_id is not None:
                self.err.write(f"pitui: compacted from {event.tokens_before:,} tokens.\n")
            elif event.error:
                self.err.write(f"pitui: compaction did not happen: {event.error}\n")
        elif isinstance(event, ApprovalDecided) and not event.allowed:
            self.err.write(f"pitui: {refusal_text(event)}\n")
        elif isinstance(event, CheckpointNote):
            self.err.write(f"pitui: {event.message}\n")
        self.err.flush()


def refusal_text(event: ApprovalDecided) -> str:
    """One sentence for stderr when the approval mode refused a tool call."""
    subject = " ".join(event.subject.split())[:120]
    if event.by == "no-prompt":
        return (
            f"refused {event.tool} ({subject}): approval mode ask cannot ask in print mode; "
            "allow it in settings (allow) or pass --approve auto"
        )
    if event.by == "read-only":
        return f"refused {event.tool} ({subject}): approval mode read-only"
    return f"refused {event.tool} ({subject})"


class JsonPrinter:
    """``--json``: one event object per line."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def write(self, obj: dict[str, Any]) -> None:
        self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")
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
            self.write({"type": "checkpoint_note", "message": event.message})
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
        err.write(f"pitui: warning: {warning}\n")
    store = open_session(args, cwd, settings)
    for load_warning in store.warnings:
        err.write(f"pitui: warning: {store.path}: {load_warning}\n")
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
                err.write("pitui: aborted.\n")
            return EXIT_ABORTED
        return EXIT_OK if result.error is None else EXIT_FAILED
    finally:
        store.close()
