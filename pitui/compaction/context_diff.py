"""What changed in the model's context between two nodes (``pitui context --diff``, the TUI's
"compare with…").

Both sides are the store's own projections. A message is identified by the entry it came from
(and its place among that entry's messages); system messages are compared as one replayed
system prompt (sections, tools) instead. A message only in the first context is *omitted* when
a ``context_edit`` on the second side hides it, *compacted* when the second side's head
compaction summarized it (it lies on that compaction's path), *summarized* when a branch
summary on the second side covers the branch it was on, else *dropped*. A message on both sides
whose content differs was *edited* (replaced, or restored when an edit no longer applies).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pitui.compaction.tokens import estimate_tokens
from pitui.session.projection import Projection
from pitui.session.shapes import message_text, tool_calls
from pitui.session.store import SessionStore
from pitui.text import one_line

Counter = Callable[[dict[str, Any]], int]
PREVIEW = 120


@dataclass
class DiffedMessage:
    """One message that differs; ``by`` is the entry responsible (compaction, branch summary,
    context_edit) when there is one."""

    entry_id: str
    role: str
    tokens: int
    text: str
    by: str | None = None
    kind: str = ""
    tokens_after: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "entryId": self.entry_id,
            "role": self.role,
            "tokens": self.tokens,
            "text": self.text,
        }
        if self.by is not None:
            out["by"] = self.by
        if self.kind:
            out["kind"] = self.kind
        if self.tokens_after is not None:
            out["tokensAfter"] = self.tokens_after
        return out


@dataclass
class Side:
    leaf_id: str | None
    messages: int
    tokens: int
    model: dict[str, Any] | None
    thinking_level: str

    def to_json(self) -> dict[str, Any]:
        return {
            "leafId": self.leaf_id,
            "messages": self.messages,
            "tokens": self.tokens,
            "model": self.model,
            "thinkingLevel": self.thinking_level,
        }


@dataclass
class SystemDiff:
    content_changed: bool = False
    sections_added: list[str] = field(default_factory=list)
    sections_removed: list[str] = field(default_factory=list)
    sections_changed: list[str] = field(default_factory=list)
    tools_added: list[str] = field(default_factory=list)
    tools_removed: list[str] = field(default_factory=list)
    tools_changed: list[str] = field(default_factory=list)
    tokens_before: int = 0
    tokens_after: int = 0

    @property
    def changed(self) -> bool:
        return bool(
            self.content_changed
            or self.sections_added
            or self.sections_removed
            or self.sections_changed
            or self.tools_added
            or self.tools_removed
            or self.tools_changed
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "changed": self.changed,
            "contentChanged": self.content_changed,
            "sections": {
                "added": self.sections_added,
                "removed": self.sections_removed,
                "changed": self.sections_changed,
            },
            "tools": {
                "added": self.tools_added,
                "removed": self.tools_removed,
                "changed": self.tools_changed,
            },
            "tokensBefore": self.tokens_before,
            "tokensAfter": self.tokens_after,
        }


@dataclass
class ContextDiff:
    before: Side
    after: Side
    added: list[DiffedMessage] = field(default_factory=list)
    dropped: list[DiffedMessage] = field(default_factory=list)
    compacted: list[DiffedMessage] = field(default_factory=list)
    summarized: list[DiffedMessage] = field(default_factory=list)
    edited: list[DiffedMessage] = field(default_factory=list)
    unchanged: int = 0
    system: SystemDiff = field(default_factory=SystemDiff)

    @property
    def token_change(self) -> int:
        return self.after.tokens - self.before.tokens

    @property
    def identical(self) -> bool:
        return not (
            self.added
            or self.dropped
            or self.compacted
            or self.summarized
            or self.edited
            or self.system.changed
            or self.before.model != self.after.model
            or self.before.thinking_level != self.after.thinking_level
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "from": self.before.to_json(),
            "to": self.after.to_json(),
            "tokenChange": self.token_change,
            "added": [m.to_json() for m in self.added],
            "dropped": [m.to_json() for m in self.dropped],
            "compacted": [m.to_json() for m in self.compacted],
            "branchSummarized": [m.to_json() for m in self.summarized],
            "edited": [m.to_json() for m in self.edited],
            "unchanged": self.unchanged,
            "system": self.system.to_json(),
            "modelChanged": self.before.model != self.after.model,
            "thinkingLevelChanged": self.before.thinking_level != self.after.thinking_level,
        }


def preview(message: dict[str, Any], limit: int = PREVIEW) -> str:
    """A one-line preview of a message (raw: callers sanitize for their output)."""
    role = message.get("role")
    if role in ("compactionSummary", "branchSummary"):
        text = str(message.get("summary") or "")
    elif role == "bashExecution":
        text = f"$ {message.get('command', '')}"
    else:
        text = message_text(message, " ")
        if not text and role == "assistant":
            names = [str(call.get("name")) for call in tool_calls(message)]
            text = " ".join(f"{name}(…)" for name in names) or f"({message.get('stopReason')})"
    return one_line(text, limit, keep_escapes=True)


_Key = tuple[str, int]


def _keyed(projection: Projection) -> dict[_Key, dict[str, Any]]:
    """Non-system messages by (source entry, position among that source's messages)."""
    out: dict[_Key, dict[str, Any]] = {}
    counts: dict[str, int] = {}
    for message, source in zip(projection.messages, projection.source_entry_ids, strict=True):
        if message.get("role") == "system":
            continue
        position = counts.get(source, 0)
        counts[source] = position + 1
        out[(source, position)] = message
    return out


def _side(projection: Projection, count: Counter) -> Side:
    return Side(
        projection.leaf_id,
        len(projection.messages),
        sum(count(m) for m in projection.messages),
        projection.model,
        projection.thinking_level,
    )


def _tools(system: dict[str, Any] | None) -> dict[str, Any]:
    tools = system.get("toolsAdded") if system else None
    if not isinstance(tools, list):
        return {}
    return {t["name"]: t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)}


def _sections(system: dict[str, Any] | None) -> dict[str, Any]:
    sections = system.get("sections") if system else None
    return dict(sections) if isinstance(sections, dict) else {}


def diff_system(
    before: dict[str, Any] | None, after: dict[str, Any] | None, count: Counter = estimate_tokens
) -> SystemDiff:
    """Sections and tools added, removed or changed between two replayed system messages."""
    out = SystemDiff()
    a_sections, b_sections = _sections(before), _sections(after)
    out.sections_added = [name for name in b_sections if name not in a_sections]
    out.sections_removed = [name for name in a_sections if name not in b_sections]
    out.sections_changed = [
        name for name in b_sections if name in a_sections and a_sections[name] != b_sections[name]
    ]
    a_tools, b_tools = _tools(before), _tools(after)
    out.tools_added = [name for name in b_tools if name not in a_tools]
    out.tools_removed = [name for name in a_tools if name not in b_tools]
    out.tools_changed = [
        name for name in b_tools if name in a_tools and a_tools[name] != b_tools[name]
    ]
    a_content = before.get("content") if before else None
    b_content = after.get("content") if after else None
    out.content_changed = (a_content or "") != (b_content or "")
    out.tokens_before = count(before) if before else 0
    out.tokens_after = count(after) if after else 0
    return out


def diff_contexts(
    store: SessionStore,
    before_id: str | None,
    after_id: str | None,
    count: Counter = estimate_tokens,
) -> ContextDiff:
    """How the context at ``after_id`` differs from the context at ``before_id``."""
    a = store.project(before_id)
    b = store.project(after_id)
    result = ContextDiff(_side(a, count), _side(b, count))
    a_messages, b_messages = _keyed(a), _keyed(b)

    def item(key: _Key, message: dict[str, Any], **extra: Any) -> DiffedMessage:
        return DiffedMessage(
            key[0], str(message.get("role")), count(message), preview(message), **extra
        )

    head = b.compaction_id if b.compaction_id != a.compaction_id else None
    compacted_ids = {n.id for n in store.path_to(head)} if head is not None else set()
    # Going the other way: messages that the first side had compacted come back in full.
    head_a = a.compaction_id if a.compaction_id != b.compaction_id else None
    uncompacted_ids = {n.id for n in store.path_to(head_a)} if head_a is not None else set()
    summaries = _new_branch_summaries(store, a, b)

    for key, message in a_messages.items():
        source = key[0]
        if key in b_messages:
            other = b_messages[key]
            if other == message:
                result.unchanged += 1
                continue
            edit = b.edits.get(source)
            kind = "replaced" if edit is not None else "restored"
            result.edited.append(
                item(
                    key,
                    message,
                    by=edit if edit is not None else a.edits.get(source),
                    kind=kind,
                    tokens_after=count(other),
                )
            )
        elif source in b.edits and source not in a.edits:
            result.edited.append(item(key, message, by=b.edits[source], kind="omitted"))
        elif source in compacted_ids and source != head:
            result.compacted.append(item(key, message, by=head))
        else:
            summary = next((s for s, covered in summaries if source in covered), None)
            if summary is not None:
                result.summarized.append(item(key, message, by=summary))
            else:
                result.dropped.append(item(key, message))
    for key, message in b_messages.items():
        if key in a_messages:
            continue
        source = key[0]
        if source in a.edits and source not in b.edits:
            result.edited.append(
                item(key, message, by=a.edits[source], kind="restored", tokens_after=None)
            )
        elif source in uncompacted_ids and source != head_a:
            result.added.append(item(key, message, by=head_a, kind="uncompacted"))
        else:
            result.added.append(item(key, message))
    result.system = diff_system(a.system_message, b.system_message, count)
    return result


def _new_branch_summaries(
    store: SessionStore, a: Projection, b: Projection
) -> list[tuple[str, set[str]]]:
    """Branch summaries in ``b``'s context but not ``a``'s, each with the entries it covers:
    the path to its ``fromId`` (the abandoned leaf) that is not on the summary's own path."""
    in_a = set(a.context_entry_ids)
    out: list[tuple[str, set[str]]] = []
    for entry_id in b.context_entry_ids:
        if entry_id in in_a:
            continue
        entry = store.find(entry_id)
        if entry is None or entry.get("type") != "branch_summary":
            continue
        from_id = entry.get("fromId")
        if not isinstance(from_id, str) or from_id not in store:
            continue
        own = {n.id for n in store.path_to(entry_id)}
        covered = {n.id for n in store.path_to(from_id)} - own
        out.append((entry_id, covered))
    return out


# ----------------------------------------------------------------------------- as text


def _model_name(model: dict[str, Any] | None) -> str:
    if not model:
        return "(none)"
    return f"{model.get('provider')}/{model.get('modelId')}"


def _signed(value: int) -> str:
    return f"+{value:,}" if value > 0 else (f"−{-value:,}" if value < 0 else "±0")


def _names(prefix: str, names: list[str]) -> list[str]:
    return [f"{prefix}{name}" for name in names]


def describe_diff(diff: ContextDiff) -> list[str]:
    """The diff as plain lines for people (raw session text: sanitize before a terminal)."""
    a, b = diff.before, diff.after
    lines = [
        f"context at {a.leaf_id or '(none)'} → at {b.leaf_id or '(none)'}",
        f"messages {a.messages:,} → {b.messages:,}   tokens ~{a.tokens:,} → ~{b.tokens:,} "
        f"({_signed(diff.token_change)}, chars/4 estimate)",
    ]
    if a.model != b.model:
        lines.append(f"model {_model_name(a.model)} → {_model_name(b.model)}")
    if a.thinking_level != b.thinking_level:
        lines.append(f"thinking {a.thinking_level} → {b.thinking_level}")
    system = diff.system
    if system.changed:
        parts = []
        sections = (
            _names("+", system.sections_added)
            + _names("−", system.sections_removed)
            + _names("~", system.sections_changed)
        )
        if system.content_changed:
            sections.insert(0, "~content")
        if sections:
            parts.append("sections " + " ".join(sections))
        tools = (
            _names("+", system.tools_added)
            + _names("−", system.tools_removed)
            + _names("~", system.tools_changed)
        )
        if tools:
            parts.append("tools " + " ".join(tools))
        lines.append(
            f"system prompt changed: {'; '.join(parts)} "
            f"(~{system.tokens_before:,} → ~{system.tokens_after:,} tokens)"
        )
    else:
        lines.append("system prompt and tools: unchanged")
    if diff.identical:
        lines.append("")
        lines.append(f"The contexts are identical ({diff.unchanged:,} messages).")
        return lines

    def section(title: str, items: list[DiffedMessage], mark: str, sign: int) -> None:
        if not items:
            return
        tokens = sum(m.tokens for m in items)
        lines.append("")
        lines.append(f"{title} ({len(items):,}, {_signed(sign * tokens)} tokens)")
        for m in items:
            by = f"  [{m.by}]" if m.by else ""
            lines.append(f"  {mark} {m.entry_id:<8} {m.role:<17} {m.tokens:>7,}  {m.text}{by}")

    section("added", [m for m in diff.added if m.kind != "uncompacted"], "+", 1)
    back = [m for m in diff.added if m.kind == "uncompacted"]
    section(
        f"added back in full (compacted by {back[0].by} on the first side)" if back else "",
        back,
        "+",
        1,
    )
    section("dropped (not on the other path)", diff.dropped, "-", -1)
    by_compaction: dict[str | None, list[DiffedMessage]] = {}
    for m in diff.compacted:
        by_compaction.setdefault(m.by, []).append(m)
    for head, items in by_compaction.items():
        section(f"replaced by compaction {head}", items, "~", -1)
    by_summary: dict[str | None, list[DiffedMessage]] = {}
    for m in diff.summarized:
        by_summary.setdefault(m.by, []).append(m)
    for summary, items in by_summary.items():
        section(f"replaced by branch summary {summary}", items, "~", -1)
    if diff.edited:
        lines.append("")
        lines.append(f"edited by a context_edit ({len(diff.edited):,})")
        for m in diff.edited:
            after = "omitted" if m.kind == "omitted" else f"{m.tokens_after or 0:,}"
            lines.append(
                f"  * {m.entry_id:<8} {m.role:<17} {m.tokens:>7,} → {after:<7}  "
                f"{m.kind} by {m.by}: {m.text}"
            )
    lines.append("")
    lines.append(f"unchanged: {diff.unchanged:,} messages")
    return lines
