"""What the details pane shows, built without widgets: entry text and metadata, the context
view (what the model saw at an entry) and the compaction view. Pure functions over the store,
so they are cheap to test and to cache.

Everything shown comes from the session file and is untrusted: it goes through ``Content(...)``
(never parsed as markup) after escape sequences are removed; tool output keeps SGR colours only.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from textual.content import Content

from pitui.compaction.prepare import projected_context_tokens
from pitui.compaction.tokens import cache_hit_ratio, estimate_tokens
from pitui.deepjson import clip
from pitui.deepjson import dumps as json_dumps
from pitui.llm.models import ModelRef, model_info
from pitui.session.errors import EntryNotFoundError
from pitui.session.oneline import entry_text
from pitui.session.shapes import message_text, tool_calls
from pitui.text import js_len, one_line, strip_escapes
from pitui.ui.sanitize import tool_output_text

if TYPE_CHECKING:
    from pitui.agent.session import AgentSession
    from pitui.session.projection import Projection
    from pitui.session.store import SessionStore

DEBOUNCE = 0.05  # seconds between the last show() and the rebuild
ROW_CAP = 300  # context rows mounted before "show more"
TEXT_CAP = 20_000  # characters of one text block shown in the entry tab
LINE_CAP = 120  # lines of one text block shown in the entry tab (all are rendered at once)
BLOCK_CAP = 20  # content blocks, system sections or tools of one entry shown in the entry tab
RAW_CAP = 200_000  # characters of raw JSON shown
RAW_LINE_CAP = 5_000  # lines of raw JSON shown
PREVIEW = 160  # characters of a context row's preview
CACHE_SIZE = 32  # context views kept

KEY_STYLE = "$text-muted"
"""The style of keys and notes (muted)."""
_HEAD = "bold $accent"

ROLE_NAMES = {
    "toolResult": "tool",
    "compactionSummary": "summary",
    "branchSummary": "branch",
    "bashExecution": "bash",
}


# ----------------------------------------------------------------------------- text helpers


def _cap(text: str, limit: int = TEXT_CAP, lines: int = LINE_CAP) -> tuple[str, int]:
    """``text`` cut to ``limit`` characters and ``lines`` lines, and how many characters were
    cut (the pane renders every line it is given: a 2,000-line tool output would stall it)."""
    end = min(len(text), limit)
    at = -1
    for _ in range(lines):
        at = text.find("\n", at + 1, end)
        if at < 0:
            break
    else:
        end = at
    if end >= len(text):
        return text, 0
    return text[:end], len(text) - end


def plain(
    text: str, limit: int = TEXT_CAP, lines: int = LINE_CAP, rest: str = "see raw JSON"
) -> Content:
    """Untrusted text, literal: no markup, no escapes; very long text is cut with a note."""
    shown, cut = _cap(text, limit, lines)
    content = Content(strip_escapes(shown))
    if cut:
        content = content + Content.styled(f"\n… {cut:,} more characters ({rest})", KEY_STYLE)
    return content


def tool_output(text: str) -> Content:
    """Tool output: SGR colours kept, every other escape removed, no markup."""
    shown, cut = _cap(text)
    content = Content.from_rich_text(tool_output_text(shown))
    if cut:
        content = content + Content.styled(f"\n… {cut:,} more characters (see raw JSON)", KEY_STYLE)
    return content


def heading(text: str) -> Content:
    return Content.styled(text, _HEAD)


def _kv(key: str, value: str | Content) -> Content:
    shown = value if isinstance(value, Content) else Content(strip_escapes(value))
    return Content.assemble((f"{key:<11}", KEY_STYLE), shown)


def join_lines(parts: list[Content]) -> Content:
    return Content("\n").join(parts)


def _number(value: Any) -> int | float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def _fmt_int(value: Any) -> str:
    number = _number(value)
    if number is None:
        return "?"
    if isinstance(number, int):
        return f"{number:,}"
    try:
        return f"{number:,.0f}"
    except (OverflowError, ValueError):
        return "?"


def _json(value: Any) -> str:
    # Bounded for hostile nesting (~1,000 levels): deeper parts show as "…".
    return json_dumps(clip(value, 32), indent=2, ensure_ascii=False, default=str)


def usage_text(usage: Any) -> str | None:
    """``input 559 · output 21 · cache read 0 · cache write 0 · total 580``."""
    if not isinstance(usage, dict):
        return None
    parts = [
        f"{label} {_fmt_int(usage.get(key))}"
        for key, label in (
            ("input", "input"),
            ("output", "output"),
            ("cacheRead", "cache read"),
            ("cacheWrite", "cache write"),
            ("totalTokens", "total"),
        )
        if _number(usage.get(key)) is not None
    ]
    return " · ".join(parts) if parts else None


def cost_text(usage: Any) -> str | None:
    """``$0.001992 (input $0.001677 · output $0.000315)``."""
    cost = usage.get("cost") if isinstance(usage, dict) else None
    if not isinstance(cost, dict):
        return None
    total = _number(cost.get("total"))
    parts = [
        f"{key} ${value:.6f}"
        for key in ("input", "output", "cacheRead", "cacheWrite")
        if (value := _number(cost.get(key)))
    ]
    head = f"${total:.6f}" if total is not None else "?"
    return f"{head} ({' · '.join(parts)})" if parts else head


def tokens_of(text: str) -> int:
    return math.ceil(js_len(text) / 4)


# ----------------------------------------------------------------------------- entry tab


def entry_meta(entry: dict[str, Any], label: str | None = None) -> Content:
    """The entry's metadata: id, parent, type, timestamp, model, usage, cost, stop reason."""
    lines = [
        _kv("id", str(entry.get("id"))),
        _kv("parent", str(entry.get("parentId") or "(root)")),
    ]
    kind = str(entry.get("type"))
    message = entry.get("message")
    role = message.get("role") if isinstance(message, dict) else None
    lines.append(_kv("type", f"{kind} · {role}" if role else kind))
    if entry.get("timestamp") is not None:
        lines.append(_kv("timestamp", str(entry.get("timestamp"))))
    if label:
        lines.append(_kv("label", label))
    if isinstance(message, dict):
        if message.get("model") or message.get("provider"):
            model = "/".join(str(p) for p in (message.get("provider"), message.get("model")) if p)
            lines.append(_kv("model", model))
        usage = usage_text(message.get("usage"))
        if usage:
            lines.append(_kv("usage", usage))
        hit = cache_hit_ratio(message.get("usage"))
        if hit is not None:
            lines.append(_kv("cache", f"{hit:.0%} of the prompt read from the cache"))
        cost = cost_text(message.get("usage"))
        if cost:
            lines.append(_kv("cost", cost))
        if message.get("stopReason"):
            lines.append(_kv("stopReason", str(message.get("stopReason"))))
    elif kind == "model_change":
        lines.append(_kv("model", f"{entry.get('provider')}/{entry.get('modelId')}"))
    return join_lines(lines)


def more_blocks(hidden: int, what: str = "blocks") -> Content:
    """``… 199,980 more blocks not shown (pitui context --json has them all)``."""
    return Content.styled(
        f"… {hidden:,} more {what} not shown (pitui context --json has them all)", KEY_STYLE
    )


def _content_body(content: Any, output: Callable[[str], Content] = plain) -> list[Content]:
    """One part per content block (text, image placeholder), at most ``BLOCK_CAP``."""
    if isinstance(content, str):
        return [output(content)]
    parts: list[Content] = []
    if isinstance(content, list):
        for index, block in enumerate(content):
            if len(parts) >= BLOCK_CAP:
                parts.append(more_blocks(len(content) - index))
                break
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                parts.append(output(block["text"]))
            elif kind == "image":
                data = block.get("data")
                size = f", {len(data):,} base64 characters" if isinstance(data, str) else ""
                parts.append(Content.styled(f"(image: {block.get('mimeType')}{size})", KEY_STYLE))
            else:
                parts.append(Content.styled(f"({kind} block)", KEY_STYLE))
    return parts


def _block(title: str, *lines: Content) -> Content:
    """A heading and the lines under it (blocks are separated by a blank line)."""
    return join_lines([heading(strip_escapes(title)), *lines])


def _assistant_body(message: dict[str, Any]) -> list[Content]:
    blocks: list[Content] = []
    content = message.get("content")
    items = content if isinstance(content, list) else [content]
    for index, block in enumerate(items):
        if len(blocks) >= BLOCK_CAP:
            blocks.append(more_blocks(len(items) - index))
            break
        if isinstance(block, str):
            blocks.append(plain(block))
            continue
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            blocks.append(plain(block["text"]))
        elif kind == "thinking":
            thinking = block.get("thinking")
            if block.get("redacted") or not isinstance(thinking, str):
                blocks.append(_block("thinking", Content.styled("(redacted)", KEY_STYLE)))
            else:
                blocks.append(_block("thinking", plain(thinking).stylize("italic $text-muted")))
        elif kind == "toolCall":
            title = f"tool call · {block.get('name')} · {block.get('id')}"
            blocks.append(_block(title, plain(_json(block.get("arguments")))))
        else:
            blocks.append(Content.styled(f"({kind} block)", KEY_STYLE))
    stop = message.get("stopReason")
    if stop == "error":
        error = message.get("errorMessage") or "error"
        blocks.append(Content.assemble(("error: ", "bold $error"), plain(str(error))))
    elif stop == "aborted":
        blocks.append(Content.styled("(aborted)", "bold $warning"))
    if not blocks:
        blocks.append(Content.styled("(no content)", KEY_STYLE))
    return blocks


def _system_body(message: dict[str, Any]) -> list[Content]:
    blocks = [p for p in _content_body(message.get("content")) if p.plain]
    sections = message.get("sections")
    if isinstance(sections, dict):
        for index, (name, value) in enumerate(sections.items()):
            if index >= BLOCK_CAP:
                blocks.append(more_blocks(len(sections) - index, "sections"))
                break
            text = (
                plain(value) if isinstance(value, str) else Content.styled("(removed)", KEY_STYLE)
            )
            blocks.append(_block(f"section {name}", text))
    for key, title in (("toolsAdded", "tools added"), ("toolsRemoved", "tools removed")):
        tools = message.get(key)
        if isinstance(tools, list) and tools:
            lines = [tool_line(t) for t in tools[:BLOCK_CAP] if isinstance(t, dict)]
            if len(tools) > BLOCK_CAP:
                lines.append(more_blocks(len(tools) - BLOCK_CAP, "tools"))
            blocks.append(_block(title, *lines))
    return blocks


def tool_line(tool: dict[str, Any]) -> Content:
    description = tool.get("description")
    name = Content.styled(strip_escapes(str(tool.get("name"))), "bold")
    if isinstance(description, str) and description:
        return Content.assemble(name, " — ", plain(one_line(description, 400)))
    return name


def _message_body(message: dict[str, Any]) -> list[Content]:
    role = message.get("role")
    if role == "assistant":
        return _assistant_body(message)
    if role == "toolResult":
        title = f"tool result · {message.get('toolName')} · {message.get('toolCallId')}"
        if message.get("isError"):
            title += " · error"
        return [_block(title, *_content_body(message.get("content"), tool_output))]
    if role == "system":
        return _system_body(message)
    if role == "bashExecution":
        lines = [plain(f"$ {message.get('command') or ''}")]
        lines.append(tool_output(str(message.get("output") or "")))
        if message.get("exitCode") is not None:
            lines.append(_kv("exit code", str(message.get("exitCode"))))
        return [_block("bash", *lines)]
    if role in ("branchSummary", "compactionSummary"):
        return [_block(str(role), plain(str(message.get("summary") or "")))]
    if role == "custom":
        title = f"custom · {message.get('customType')}"
        return [_block(title, *_content_body(message.get("content")))]
    return _content_body(message.get("content")) or [Content.styled("(no content)", KEY_STYLE)]


def entry_body(entry: dict[str, Any]) -> Content:
    """The whole entry as literal text (tool output with its SGR colours), block by block."""
    kind = entry.get("type")
    blocks: list[Content]
    if kind == "message" and isinstance(entry.get("message"), dict):
        blocks = _message_body(entry["message"])
    elif kind == "custom_message":
        lines = _content_body(entry.get("content"))
        if entry.get("display") is False:
            lines.append(Content.styled("(hidden from the chat)", KEY_STYLE))
        blocks = [_block(f"custom message · {entry.get('customType')}", *lines)]
    elif kind == "compaction":
        facts = join_lines(
            [
                _kv("first kept", str(entry.get("firstKeptEntryId"))),
                _kv("tokens", f"{_fmt_int(entry.get('tokensBefore'))} before"),
                Content.styled("(details in the Compaction tab)", KEY_STYLE),
            ]
        )
        blocks = [facts, _block("summary", plain(str(entry.get("summary") or "")))]
    elif kind == "branch_summary":
        blocks = [
            _kv("from", str(entry.get("fromId"))),
            _block("summary", plain(str(entry.get("summary") or ""))),
        ]
    elif kind == "context_edit":
        replacement = entry.get("replacement")
        blocks = [_kv("target", str(entry.get("targetId")))]
        if replacement is None:
            blocks.append(Content.styled("omits the target from the context", "bold $warning"))
        else:
            content = replacement.get("content") if isinstance(replacement, dict) else None
            blocks.append(_block("replaced by", *_content_body(content)))
    elif kind == "thinking_level_change":
        blocks = [_kv("thinking", str(entry.get("thinkingLevel")))]
    elif kind == "model_change":
        blocks = [_kv("model", f"{entry.get('provider')}/{entry.get('modelId')}")]
    elif kind == "label":
        target = _kv("target", str(entry.get("targetId")))
        blocks = [join_lines([target, _kv("label", str(entry.get("label")))])]
    elif kind == "session_info":
        blocks = [_kv("name", str(entry.get("name")))]
    else:
        data = {k: v for k, v in entry.items() if k not in ("type", "id", "parentId", "timestamp")}
        blocks = [plain(_json(data))] if data else []
    return Content("\n\n").join(blocks) if blocks else Content.styled("(nothing else)", KEY_STYLE)


def raw_json(entry: dict[str, Any]) -> Content:
    return plain(_json(entry), RAW_CAP, RAW_LINE_CAP, "in the session file")


# ----------------------------------------------------------------------------- context tab


RowKind = Literal["message", "omitted"]


@dataclass(frozen=True)
class ContextRow:
    """One line of the context list: a projected message, or an entry omitted by an edit."""

    kind: RowKind
    entry_id: str
    role: str
    tokens: int | None  # chars/4
    message_index: int | None  # index into projection.messages
    preview: str
    markers: tuple[str, ...] = ()  # compaction, checkpoint, kept, edited, omitted, prompt
    note: str = ""


@dataclass
class ContextView:
    """Everything the context tab shows for one entry (tiktoken counts arrive later)."""

    entry_id: str
    projection: Projection
    rows: list[ContextRow]
    estimate: int  # chars/4: the folded system prompt once, plus every other message
    used: int  # pi's projected context tokens (last usage + what follows, or the estimate)
    from_usage: bool
    window: int | None
    model_name: str | None
    sections: list[tuple[str, str]] = field(default_factory=list)
    system_tokens: int = 0


def _role(message: dict[str, Any]) -> str:
    role = str(message.get("role"))
    return ROLE_NAMES.get(role, role)


def message_preview(message: dict[str, Any]) -> str:
    role = message.get("role")
    if role in ("compactionSummary", "branchSummary"):
        return one_line(str(message.get("summary") or ""), PREVIEW)
    if role == "system":
        bits = []
        sections = message.get("sections")
        if isinstance(sections, dict) and sections:
            bits.append("sections " + ", ".join(str(s) for s in sections))
        for key, sign in (("toolsAdded", "+"), ("toolsRemoved", "-")):
            tools = message.get(key)
            if isinstance(tools, list) and tools:
                names = [str(t.get("name")) for t in tools if isinstance(t, dict)]
                bits.append("tools " + ", ".join(sign + n for n in names))
        return one_line("; ".join(bits) or message_text(message, " "), PREVIEW)
    if role == "toolResult":
        return one_line(f"{message.get('toolName')}: {message_text(message, ' ')}", PREVIEW)
    if role == "bashExecution":
        return one_line(f"$ {message.get('command')}", PREVIEW)
    if role == "assistant":
        text = message_text(message, " ")
        calls = [
            f"{b.get('name')}({json_dumps(clip(b.get('arguments'), 32), ensure_ascii=False)})"
            for b in tool_calls(message)
        ]
        if calls:
            text = (text + " " if text else "") + " ".join("→ " + c for c in calls)
        if not text and message.get("stopReason") in ("error", "aborted"):
            text = f"({message.get('stopReason')}) {message.get('errorMessage') or ''}"
        return one_line(text, PREVIEW)
    return one_line(message_text(message, " "), PREVIEW)


def summarized_count(store: SessionStore, compaction_id: str) -> int | None:
    """How many entries on the path before the compaction's first kept entry it summarizes."""
    try:
        data = store.get(compaction_id)
        path = store.path_to(compaction_id)
    except EntryNotFoundError:
        return None
    first = data.get("firstKeptEntryId")
    ids = [n.id for n in path[:-1]]
    if isinstance(first, str) and first in ids:
        return ids.index(first)
    return len(ids)


def resolve_model(
    projection: Projection,
    agent: AgentSession | None,
    model_name: str | None,
    window: int | None,
) -> tuple[str | None, int | None]:
    """The model name (for tiktoken) and its context window: explicit values first, then the
    agent's model, then the session's model at this entry."""
    name = model_name
    if name is None and agent is not None:
        name = agent.model_name
        if window is None:
            info = agent.model_info
            window = info.context_window if info is not None else None
    session = projection.model
    session_name = (
        f"{session.get('provider')}/{session.get('modelId')}"
        if session and session.get("provider") and session.get("modelId")
        else None
    )
    if name is None:
        name = session_name
    if window is None:
        for candidate in (name, session_name):
            if candidate:
                window = model_info(ModelRef.parse(candidate)).context_window
                if window:
                    break
    return name, window


def build_context_view(
    store: SessionStore,
    entry_id: str,
    *,
    agent: AgentSession | None = None,
    model_name: str | None = None,
    window: int | None = None,
) -> ContextView:
    """The context the model would see with the leaf at ``entry_id``, row by row."""
    projection = store.project(entry_id)
    messages = projection.messages
    sources = projection.source_entry_ids
    compaction_id = projection.compaction_id
    after: set[str] = set()
    if compaction_id is not None:
        path_ids = [n.id for n in store.path_to(entry_id)]
        if compaction_id in path_ids:
            after = set(path_ids[path_ids.index(compaction_id) + 1 :])
    summarized = summarized_count(store, compaction_id) if compaction_id else None

    by_source: dict[str, list[int]] = {}
    for index, source in enumerate(sources):
        by_source.setdefault(source, []).append(index)

    rows: list[ContextRow] = []
    for context_id in projection.context_entry_ids:
        indexes = by_source.get(context_id)
        edit_id = projection.edits.get(context_id)
        if not indexes:
            if edit_id is not None:
                rows.append(_omitted_row(store, context_id, edit_id))
            continue
        for index in indexes:
            message = messages[index]
            role = message.get("role")
            markers: list[str] = []
            note = ""
            if context_id == compaction_id:
                if role == "compactionSummary":
                    markers.append("compaction")
                    note = f"{summarized} earlier entries summarized" if summarized else ""
                    before = _number(message.get("tokensBefore"))
                    if before is not None:
                        note += (" · " if note else "") + f"{_fmt_int(before)} tokens before"
                else:
                    markers.append("checkpoint")
            elif compaction_id is not None and context_id not in after:
                markers.append("kept")
            if edit_id is not None:
                markers.append("edited")
                note = f"by {edit_id}"
            if role == "system" and not markers:
                markers.append("prompt")
            rows.append(
                ContextRow(
                    "message",
                    context_id,
                    _role(message),
                    estimate_tokens(message),
                    index,
                    message_preview(message),
                    tuple(markers),
                    note,
                )
            )

    system = projection.system_message
    system_tokens = estimate_tokens(system) if system else 0
    estimate = system_tokens + sum(
        row.tokens or 0
        for row in rows
        if row.message_index is not None and messages[row.message_index].get("role") != "system"
    )
    projected = projected_context_tokens(store, projection)
    name, window = resolve_model(projection, agent, model_name, window)
    sections: list[tuple[str, str]] = []
    if system:
        content = message_text(system, "\n\n")
        if content:
            sections.append(("(content)", content))
        raw_sections = system.get("sections")
        if isinstance(raw_sections, dict):
            sections += [(str(k), v) for k, v in raw_sections.items() if isinstance(v, str) and v]
    return ContextView(
        entry_id,
        projection,
        rows,
        estimate,
        int(projected["tokens"]),
        projected["lastUsageIndex"] is not None,
        window,
        name,
        sections,
        system_tokens,
    )


def _omitted_row(store: SessionStore, entry_id: str, edit_id: str) -> ContextRow:
    entry = store.find(entry_id) or {}
    message = entry.get("message")
    role = _role(message) if isinstance(message, dict) else str(entry.get("type"))
    preview = (
        message_preview(message)
        if isinstance(message, dict)
        else one_line(entry_text(entry), PREVIEW)
    )
    return ContextRow("omitted", entry_id, role, None, None, preview, ("omitted",), f"by {edit_id}")


_MARKER_STYLES = {
    "compaction": "bold $accent",
    "checkpoint": "$accent",
    "kept": "$secondary",
    "edited": "bold $warning",
    "omitted": "bold $error",
    "prompt": "$text-muted",
}


def row_prompt(row: ContextRow, tiktoken: int | Literal["…", "-"] | None) -> Content:
    """One context row: role, chars/4 tokens, tiktoken tokens, marker, preview."""
    est = f"{row.tokens:,}" if row.tokens is not None else "—"
    if row.kind == "omitted":
        tt = "—"
    elif isinstance(tiktoken, int):
        tt = f"{tiktoken:,}"
    else:
        tt = tiktoken or "-"
    parts: list[Content | tuple[str, str] | str] = [
        (f"{row.role:<9}", "bold" if row.kind == "message" else "$text-muted"),
        f"{est:>7} {tt:>8}  ",
    ]
    for marker in row.markers:
        parts.append((marker, _MARKER_STYLES.get(marker, "")))
        parts.append(" ")
    if row.note:
        parts.append((f"({row.note}) ", "$text-muted"))
    preview = Content(row.preview)
    if row.kind == "omitted":
        preview = preview.stylize("strike $text-muted")
    parts.append(preview)
    return Content.assemble(*parts)


HEADER_ROW = Content.styled(f"{'role':<9}{'chars/4':>7} {'tiktoken':>8}  message", "bold underline")


# ----------------------------------------------------------------------------- compaction tab


@dataclass
class CompactionView:
    compaction_id: str
    entry: dict[str, Any]
    is_entry: bool  # the shown entry is the compaction itself
    tokens_after: int
    summarized: int | None
    first_kept: str | None
    first_kept_text: str | None


def build_compaction_view(store: SessionStore, entry_id: str) -> CompactionView | None:
    projection = store.project(entry_id)
    compaction_id = projection.compaction_id
    if compaction_id is None:
        return None
    entry = store.get(compaction_id)
    after = projected_context_tokens(store, store.project(compaction_id))
    first = entry.get("firstKeptEntryId")
    first_kept = first if isinstance(first, str) else None
    first_entry = store.find(first_kept) if first_kept else None
    return CompactionView(
        compaction_id,
        entry,
        compaction_id == entry_id,
        int(after["tokens"]),
        summarized_count(store, compaction_id),
        first_kept,
        one_line(entry_text(first_entry), 60) if first_entry else None,
    )


def compaction_facts(view: CompactionView) -> Content:
    entry = view.entry
    lines = [
        _kv(
            "tokens",
            f"{_fmt_int(entry.get('tokensBefore'))} before → ~{view.tokens_after:,} "
            "after (chars/4)",
        ),
    ]
    if view.summarized is not None:
        lines.append(_kv("summarized", f"{view.summarized} earlier entries"))
    lines.append(_kv("first kept", view.first_kept or "(none)"))
    if view.first_kept and view.first_kept_text is None:
        lines.append(_kv("", Content.styled("(not in this session)", "$warning")))
    elif view.first_kept_text:
        lines.append(_kv("", Content.styled(view.first_kept_text, KEY_STYLE)))
    usage = usage_text(entry.get("usage"))
    lines.append(_kv("usage", usage or "(not recorded)"))
    cost = cost_text(entry.get("usage"))
    if cost:
        lines.append(_kv("cost", cost))
    lines.append(_kv("fromHook", "yes" if entry.get("fromHook") else "no"))
    if entry.get("timestamp") is not None:
        lines.append(_kv("timestamp", str(entry.get("timestamp"))))
    return join_lines(lines)


def _file_list(title: str, files: Any) -> list[Content]:
    names = [str(f) for f in files] if isinstance(files, list) else []
    out = [heading(f"{title} ({len(names)})")]
    out += [Content.assemble("  ", Content(strip_escapes(n))) for n in names]
    if not names:
        out.append(Content.styled("  (none)", KEY_STYLE))
    return out


def compaction_files(entry: dict[str, Any]) -> Content:
    details = entry.get("details")
    details = details if isinstance(details, dict) else {}
    return join_lines(
        _file_list("read files", details.get("readFiles"))
        + _file_list("modified files", details.get("modifiedFiles"))
    )


def literal_title(text: str) -> Any:
    """A Collapsible title that is never parsed as markup (Collapsible accepts Content)."""
    return Content(strip_escapes(text))
