"""``NoticeBlock``: a notice in the transcript (what a command answered, why a prompt was not
sent, a run's error, another program's appends), where it stays to be read, as Claude Code and
Codex show them. Toasts are kept for the transient (copied, label set).

A notice is the UI's, not the session's: it is never written to the file, and a re-render of
the branch (a leaf move, another session) starts without the old ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from textual.content import Content
from textual.widgets import Static

from pitui.text import terminal_text

Severity = Literal["information", "warning", "error"]
MARKS: dict[str, str] = {"information": "•", "warning": "⚠", "error": "✗"}


@dataclass(frozen=True)
class Notice:
    """One notice for the transcript (untrusted text: shown literally, escapes removed)."""

    text: str
    severity: Severity = "information"


class NoticeBlock(Static):
    DEFAULT_CSS: ClassVar[str] = """
    NoticeBlock { margin: 1 0 0 0; padding: 0 1; color: $text-muted; }
    NoticeBlock.-warning { color: $text-warning; }
    NoticeBlock.-error { color: $text-error; border-left: thick $error; }
    """

    def __init__(self, notice: Notice) -> None:
        severity = notice.severity if notice.severity in MARKS else "information"
        text = terminal_text(notice.text).strip() or "(empty notice)"
        super().__init__(Content(f"{MARKS[severity]} {text}"), markup=False, classes=f"-{severity}")
        self.notice = notice
