"""Conversation turns appended to a session store by tests (plain text, fixed wording)."""

from __future__ import annotations

from pitui.session import SessionStore


def append_answer(store: SessionStore, text: str) -> None:
    """An assistant message of plain text that ended normally (what a streamed reply stores)."""
    store.append_message(
        {"role": "assistant", "content": [{"type": "text", "text": text}], "stopReason": "stop"}
    )


def fill_turns(store: SessionStore, turns: int, prefix: str = "") -> None:
    """``turns`` questions, each answered (``{prefix}question {i}``, ``{prefix}answer {i}``)."""
    for i in range(turns):
        store.append_message(
            {"role": "user", "content": [{"type": "text", "text": f"{prefix}question {i}"}]}
        )
        append_answer(store, f"{prefix}answer {i}")
