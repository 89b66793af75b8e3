"""The Markdown export: the active branch as a readable document.

Every entry on the path from the root to the leaf, as the chat shows it (compacted messages
included, with the compaction where it happened). Assistant text stays Markdown; tool arguments
and output go in code fences longer than any backtick run inside them. Escape sequences and
control characters are removed, and HTML tags in message text are neutralized (``<`` written as
``&lt;`` outside code) so no renderer turns session text into markup.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from pitui.compaction.session_stats import UsageTotals, entry_usage, usage_cost
from pitui.session.ids import iso_to_ms
from pitui.session.oneline import tool_call_text
from pitui.session.shapes import blocks, content_text, entry_message
from pitui.session.store import SessionStore
from pitui.text import js_stringify, strip_escapes

_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BACKTICKS = re.compile(r"`+")


def _clean(text: Any) -> str:
    return strip_escapes(text) if isinstance(text, str) else ""


def fence(text: str, info: str = "") -> str:
    """``text`` in a code fence that nothing inside it can close."""
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}{info}\n{text}\n{marks}"


def neutralize_html(text: str) -> str:
    """Markdown text with ``<`` of would-be HTML tags escaped outside code fences and spans."""
    out: list[str] = []
    in_fence: str | None = None
    for line in text.split("\n"):
        match = _FENCE_LINE.match(line)
        if in_fence is not None:
            if match and match.group(1)[0] == in_fence[0] and len(match.group(1)) >= len(in_fence):
                in_fence = None
            out.append(line)
            continue
        if match:
            in_fence = match.group(1)
            out.append(line)
            continue
        parts = re.split(r"(`+[^`]*`+)", line)
        out.append("".join(p if p.startswith("`") else _TAG_START.sub("&lt;", p) for p in parts))
    return "\n".join(out)


def _when(entry: dict[str, Any]) -> str:
    ms = iso_to_ms(entry.get("timestamp"))
    if ms is None:
        return ""
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return ""


def _heading(title: str, entry: dict[str, Any], extra: str = "") -> str:
    parts = [title]
    when = _when(entry)
    if when:
        parts.append(when)
    if extra:
        parts.append(extra)
    parts.append(f"`{_clean(str(entry.get('id')))}`")
    return "### " + neutralize_html(" · ".join(parts))


def _arguments(arguments: Any) -> str:
    try:
        return json.dumps(arguments, indent=2, ensure_ascii=False, default=str)
    except (RecursionError, ValueError):
        return js_stringify(arguments)


def _content(content: Any) -> list[str]:
    out: list[str] = []
    if isinstance(content, str):
        return [_clean(content)]
    for block in blocks(content):
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            out.append(_clean(block["text"]))
        elif block.get("type") == "image":
            out.append(f"*[image: {_clean(str(block.get('mimeType')))}]*")
    return out


def _message(entry: dict[str, Any], message: dict[str, Any], labels: dict[str, str]) -> list[str]:
    role = message.get("role")
    label = labels.get(str(entry.get("id")))
    tag = f"[{_clean(label)}]" if label else ""
    if role == "user":
        text = "\n\n".join(_content(message.get("content")))
        return [_heading("User", entry, tag), "", neutralize_html(text)]
    if role == "assistant":
        model = _clean(str(message.get("model") or ""))
        usage = message.get("usage")
        facts = [model] if model else []
        if isinstance(usage, dict):
            totals = UsageTotals()
            totals.add_usage(usage)
            facts.append(f"{totals.input:,} in / {totals.output:,} out")
            facts.append(f"${usage_cost(usage):.4f}")
        if tag:
            facts.append(tag)
        lines = [_heading("Assistant", entry, " · ".join(facts)), ""]
        for block in blocks(message.get("content")):
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                lines += [neutralize_html(_clean(block["text"])), ""]
            elif kind == "thinking":
                thinking = _clean(block.get("thinking")) or "(redacted)"
                quoted = "\n".join("> " + line if line else ">" for line in thinking.split("\n"))
                lines += ["> **Thinking**", ">", neutralize_html(quoted), ""]
            elif kind == "toolCall":
                name = _clean(str(block.get("name") or "tool"))
                title = _clean(tool_call_text(name, block.get("arguments")))
                lines += [f"**Tool call** {title.replace('`', '')}", ""]
                lines += [fence(_clean(_arguments(block.get("arguments"))), "json"), ""]
        stop = message.get("stopReason")
        if stop == "error":
            lines += [f"*Error: {neutralize_html(_clean(str(message.get('errorMessage'))))}*", ""]
        elif stop == "aborted":
            lines += ["*(aborted)*", ""]
        return lines
    if role == "toolResult":
        name = _clean(str(message.get("toolName") or "tool"))
        title = "Tool error" if message.get("isError") else "Tool result"
        text = "\n".join(_content(message.get("content")))
        return [_heading(f"{title} ({name})", entry, tag), "", fence(text, "text")]
    if role == "bashExecution":
        command = _clean(str(message.get("command") or ""))
        output = _clean(str(message.get("output") or ""))
        code = message.get("exitCode")
        extra = f"exit code {code}" if isinstance(code, int) else ""
        return [
            _heading("Bash (user)", entry, extra),
            "",
            fence(f"$ {command}\n{output}".rstrip(), "text"),
        ]
    if role == "custom":
        kind = _clean(str(message.get("customType") or "custom"))
        text = _clean(content_text(message.get("content"), "\n"))
        return [_heading(f"Custom ({kind})", entry), "", neutralize_html(text)]
    return []


def render_markdown(store: SessionStore) -> str:
    """The active branch (root → leaf) as Markdown."""
    path = store.path_to()
    labels = store.labels
    title = _clean(store.session_name or f"pitui session {store.session_id}")
    total = UsageTotals()
    for node in path:
        total.add_usage(entry_usage(store.data(node)))
    projection = store.project()
    lines = [
        f"# {neutralize_html(title)}",
        "",
        f"- Session: `{_clean(store.session_id)}`",
        f"- Working directory: `{_clean(store.cwd).replace('`', '')}`",
        f"- Leaf: `{_clean(store.leaf_id or '(none)')}` ({len(path):,} entries on this branch)",
        f"- Usage on this branch: {total.tokens:,} tokens over {total.requests:,} requests, "
        f"${total.cost:.4f}",
        f"- Context at the leaf: {len(projection.messages):,} messages",
        "",
    ]
    for node in path:
        entry = store.data(node)
        message = entry_message(entry)
        part: list[str] = []
        if message is not None:
            if message.get("role") == "system":
                continue
            part = _message(entry, message, labels)
        elif node.type == "custom_message":
            part = _message(
                entry,
                {"role": "custom", "customType": entry.get("customType"),
                 "content": entry.get("content")},
                labels,
            )  # fmt: skip
        elif node.type == "compaction":
            tokens = entry.get("tokensBefore")
            first = _clean(str(entry.get("firstKeptEntryId")))
            extra = f"from {tokens:,} tokens" if isinstance(tokens, int) else ""
            part = [
                _heading("Compaction", entry, extra),
                "",
                f"*Earlier messages were summarized; the first kept entry is `{first}`.*",
                "",
                neutralize_html(_clean(str(entry.get("summary") or ""))),
            ]
        elif node.type == "branch_summary":
            part = [
                _heading("Branch summary", entry),
                "",
                neutralize_html(_clean(str(entry.get("summary") or ""))),
            ]
        elif node.type == "model_change":
            model = _clean(f"{entry.get('provider')}/{entry.get('modelId')}")
            part = [f"*Model: {neutralize_html(model)}*"]
        elif node.type == "thinking_level_change":
            part = [f"*Thinking level: {neutralize_html(_clean(str(entry.get('thinkingLevel'))))}*"]
        elif node.type == "context_edit":
            verb = "hidden from" if entry.get("replacement") is None else "replaced in"
            target = _clean(str(entry.get("targetId")))
            part = [f"*Entry `{target}` {verb} the model's context from here on.*"]
        if part:
            lines += [*part, ""]
    return "\n".join(lines).rstrip("\n") + "\n"
