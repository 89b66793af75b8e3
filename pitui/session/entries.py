"""New headers and file names (pi's shapes live in :mod:`pitui.session.shapes`)."""

from __future__ import annotations

from typing import Any

from pitui.session.errors import SessionError
from pitui.session.ids import file_timestamp, is_valid_session_id, new_session_id, now_iso


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
