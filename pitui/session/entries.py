"""Helpers over entry and message objects (no store state)."""

from __future__ import annotations

from typing import Any

from pitui.session.errors import SessionError
from pitui.session.ids import file_timestamp, is_valid_session_id, new_session_id, now_iso


def message_text(message: Any, joiner: str = "") -> str:
    """Text of a message's content: a string, or its text blocks joined."""
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return joiner.join(
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


def new_header(
    cwd: str, parent_session: str | None = None, session_id: str | None = None
) -> dict[str, Any]:
    """A v3 session header in pi's key order."""
    if session_id is not None and not is_valid_session_id(session_id):
        raise SessionError(f"Invalid session id {session_id!r}.")
    header: dict[str, Any] = {
        "type": "session",
        "version": 3,
        "id": session_id or new_session_id(),
        "timestamp": now_iso(),
        "cwd": cwd,
    }
    if parent_session:
        header["parentSession"] = parent_session
    return header


def session_file_name(header: dict[str, Any]) -> str:
    """``<timestamp with : and . as ->_<session id>.jsonl``, as pi names files."""
    return f"{file_timestamp(str(header['timestamp']))}_{header['id']}.jsonl"


def bash_execution_text(message: dict[str, Any]) -> str:
    """A user's ``!cmd`` run, as the model reads it."""
    output = str(message.get("output") or "")
    text = f"Ran `{message.get('command', '')}`\n"
    text += f"```\n{output}\n```" if output else "(no output)"
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif isinstance(message.get("exitCode"), int) and message["exitCode"] != 0:
        text += f"\n\nCommand exited with code {message['exitCode']}"
    if message.get("truncated") and message.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {message['fullOutputPath']}]"
    return text


COMPACTION_PREFIX = (
    "Earlier parts of this conversation were compacted into the summary below; "
    "continue from it.\n\n<summary>\n"
)
COMPACTION_SUFFIX = "\n</summary>"
BRANCH_PREFIX = (
    "The user explored another branch of this conversation and came back; "
    "this summarizes that branch.\n\n<summary>\n"
)
BRANCH_SUFFIX = "</summary>"


def summary_text(message: dict[str, Any]) -> str:
    """A compaction or branch summary as the model reads it (a user message)."""
    summary = str(message.get("summary") or "")
    if message.get("role") == "branchSummary":
        return BRANCH_PREFIX + summary + BRANCH_SUFFIX
    return COMPACTION_PREFIX + summary + COMPACTION_SUFFIX
