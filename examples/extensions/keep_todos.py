"""Example pitui extension: keep the user's TODO lines through a compaction.

Load it by adding its path to ``extensions`` in ``<config dir>/settings.json``::

    {"extensions": ["~/src/pitui/examples/extensions/keep_todos.py"]}

``before_compact``: if the user messages about to be summarized contain lines starting with
"TODO", the hook writes the summary itself: the previous summary (if any), the user's requests,
and an "## Open TODOs" section. A ``Summary`` replaces the model's summary entirely, so with no
TODO lines it returns ``None`` and the model summarizes as usual.

``before_tree``: only counts its calls (``calls["before_tree"]``); returning ``None`` means
"no opinion", so ``/tree`` behaves as if the extension were not there.
"""

from __future__ import annotations

from typing import Any

from pitui.agent.extensions import ExtensionAPI, Summary, TreePreparation
from pitui.compaction.prepare import CompactionPreparation

calls = {"before_tree": 0}


def _user_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if b.get("type") == "text")
    return ""


def register(api: ExtensionAPI) -> None:
    @api.on_before_compact
    def keep_todos(
        preparation: CompactionPreparation, reason: str, will_retry: bool
    ) -> Summary | None:
        messages = preparation.messages_to_summarize + preparation.turn_prefix_messages
        texts = [_user_text(m) for m in messages if m.get("role") == "user"]
        todos = [
            line.strip()
            for text in texts
            for line in text.splitlines()
            if line.strip().startswith("TODO")
        ]
        if not todos:
            return None  # no opinion: the model writes the summary
        parts = [preparation.previous_summary] if preparation.previous_summary else []
        parts.append(
            "## User requests\n"
            + "\n".join(f"- {t.strip().splitlines()[0][:200]}" for t in texts if t.strip())
        )
        parts.append("## Open TODOs\n" + "\n".join(f"- {todo}" for todo in todos))
        return Summary("\n\n".join(parts), details={"todos": todos})

    @api.on_before_tree
    def count(preparation: TreePreparation) -> None:
        calls["before_tree"] += 1
