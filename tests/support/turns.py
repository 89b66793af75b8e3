"""Conversation turns appended to a session store by tests (plain text, fixed wording)."""

from __future__ import annotations

from pitui.session import SessionStore


def fill_turns(store: SessionStore, turns: int, prefix: str = "") -> None:
    """``turns`` questions, each answered (``{prefix}question {i}``, ``{prefix}answer {i}``)."""
    for i in range(turns):
        store.append_message(
            {"role": "user", "content": [{"type": "text", "text": f"{prefix}question {i}"}]}
        )
        store.append_message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": f"{prefix}answer {i}"}],
                "stopReason": "stop",
            }
        )
