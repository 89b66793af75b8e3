"""Session statistics (``pitui stats``, ``/session``, the HTML export's totals).

Over the whole tree and per branch (each tip's path from the root): entries, messages per role,
provider-reported tokens and cost. Usage comes from assistant messages, compaction and branch
summary entries (the summary call) and ``usage`` entries, as pi 1.6 counts cost. Numbers in a
session file are untrusted: anything that is not a finite non-negative number counts as 0.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pitui.compaction.file_ops import FileOps
from pitui.compaction.tokens import context_estimate
from pitui.session.node import Node
from pitui.session.oneline import entry_text
from pitui.session.shapes import entry_message
from pitui.session.store import SessionStore
from pitui.text import one_line

USAGE_KEYS = ("input", "output", "cacheRead", "cacheWrite")


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    if isinstance(value, float) and not math.isfinite(value):
        return 0.0
    try:
        number = float(value)
    except OverflowError:
        return 0.0
    return number if number >= 0 else 0.0


@dataclass
class UsageTotals:
    """Summed provider usage: token counts and cost in dollars."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0
    requests: int = 0

    @property
    def tokens(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write

    def add_usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        self.requests += 1
        self.input += int(_number(usage.get("input")))
        self.output += int(_number(usage.get("output")))
        self.cache_read += int(_number(usage.get("cacheRead")))
        self.cache_write += int(_number(usage.get("cacheWrite")))
        self.cost += usage_cost(usage)

    def add(self, other: UsageTotals) -> None:
        self.input += other.input
        self.output += other.output
        self.cache_read += other.cache_read
        self.cache_write += other.cache_write
        self.cost += other.cost
        self.requests += other.requests

    def copy(self) -> UsageTotals:
        return UsageTotals(
            self.input, self.output, self.cache_read, self.cache_write, self.cost, self.requests
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "input": self.input,
            "output": self.output,
            "cacheRead": self.cache_read,
            "cacheWrite": self.cache_write,
            "tokens": self.tokens,
            "cost": round(self.cost, 6),
        }


def usage_cost(usage: Any) -> float:
    """``usage.cost.total``, or the sum of its parts when the total is missing."""
    if not isinstance(usage, dict):
        return 0.0
    cost = usage.get("cost")
    if not isinstance(cost, dict):
        return 0.0
    total = _number(cost.get("total"))
    if total:
        return total
    return sum(_number(cost.get(key)) for key in USAGE_KEYS)


def entry_usage(entry: dict[str, Any]) -> Any:
    """The provider usage an entry records (an assistant reply, a summary call, a usage entry)."""
    message = entry_message(entry)
    if message is not None:
        return message.get("usage") if message.get("role") == "assistant" else None
    if entry.get("type") in ("compaction", "branch_summary", "usage"):
        return entry.get("usage")
    return None


@dataclass
class BranchStats:
    """One branch: the path from the root to a tip (an entry with no children)."""

    tip_id: str
    tip_text: str
    label: str | None
    active: bool
    entries: int = 0
    messages: int = 0
    compactions: int = 0
    usage: UsageTotals = field(default_factory=UsageTotals)

    def to_json(self) -> dict[str, Any]:
        return {
            "tipId": self.tip_id,
            "tipText": self.tip_text,
            "label": self.label,
            "active": self.active,
            "entries": self.entries,
            "messages": self.messages,
            "compactions": self.compactions,
            "usage": self.usage.to_json(),
        }


@dataclass
class SessionStats:
    session_id: str
    name: str | None
    leaf_id: str | None
    entries: int = 0
    entry_types: dict[str, int] = field(default_factory=dict)
    roots: int = 0
    forks: int = 0
    messages: dict[str, int] = field(default_factory=dict)
    active_messages: dict[str, int] = field(default_factory=dict)
    usage: UsageTotals = field(default_factory=UsageTotals)
    branches: list[BranchStats] = field(default_factory=list)
    compactions: list[dict[str, Any]] = field(default_factory=list)
    files: dict[str, list[str]] = field(default_factory=dict)
    active_files: dict[str, list[str]] = field(default_factory=dict)
    models: dict[str, int] = field(default_factory=dict)
    context_tokens: int = 0
    context_messages: int = 0
    first_timestamp: str | None = None
    last_timestamp: str | None = None

    @property
    def active_branch(self) -> BranchStats | None:
        return next((b for b in self.branches if b.active), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "sessionId": self.session_id,
            "sessionName": self.name,
            "leafId": self.leaf_id,
            "entries": self.entries,
            "entryTypes": self.entry_types,
            "roots": self.roots,
            "forks": self.forks,
            "branchCount": len(self.branches),
            "messages": self.messages,
            "activeBranchMessages": self.active_messages,
            "usage": self.usage.to_json(),
            "branches": [b.to_json() for b in self.branches],
            "compactions": self.compactions,
            "files": self.files,
            "activeBranchFiles": self.active_files,
            "models": self.models,
            "context": {"messages": self.context_messages, "tokens": self.context_tokens},
            "firstTimestamp": self.first_timestamp,
            "lastTimestamp": self.last_timestamp,
        }


def _files(ops: FileOps) -> dict[str, list[str]]:
    read_only, modified = ops.lists()
    return {"read": read_only, "modified": modified}


def session_stats(store: SessionStore) -> SessionStats:
    """Statistics of the whole tree, every branch and the active one."""
    stats = SessionStats(store.session_id, store.session_name, store.leaf_id)
    path = store.path_to()
    on_path = {n.id for n in path}
    types: Counter[str] = Counter()
    roles: Counter[str] = Counter()
    models: Counter[str] = Counter()
    tree_ops = FileOps()
    # Per node, along its path: (entries, messages, compactions, usage).
    cumulative: dict[str, tuple[int, int, int, UsageTotals]] = {}
    stack: list[tuple[Node, str | None]] = [(n, None) for n in reversed(store.roots())]
    stats.roots = len(stack)
    calls: dict[str, dict[str, Any]] = {}
    while stack:
        node, parent = stack.pop()
        entry = store.data(node)
        types[node.type] += 1
        timestamp = entry.get("timestamp")
        if isinstance(timestamp, str):
            if stats.first_timestamp is None or timestamp < stats.first_timestamp:
                stats.first_timestamp = timestamp
            if stats.last_timestamp is None or timestamp > stats.last_timestamp:
                stats.last_timestamp = timestamp
        message = entry_message(entry)
        is_message = message is not None or node.type == "custom_message"
        if message is not None:
            role = str(message.get("role"))
            roles[role] += 1
            if role == "assistant":
                tree_ops.scan([message])
                provider, model = message.get("provider"), message.get("model")
                if isinstance(model, str) and model:
                    models[f"{provider}/{model}" if isinstance(provider, str) else model] += 1
                for call in message.get("content") or []:
                    if isinstance(call, dict) and call.get("type") == "toolCall":
                        calls[str(call.get("id"))] = call
        elif node.type == "custom_message":
            roles["custom"] += 1
        if node.type == "compaction":
            stats.compactions.append(
                {
                    "id": node.id,
                    "tokensBefore": int(_number(entry.get("tokensBefore"))),
                    "firstKeptEntryId": entry.get("firstKeptEntryId"),
                    "onActivePath": node.id in on_path,
                }
            )
        own = UsageTotals()
        own.add_usage(entry_usage(entry))
        stats.usage.add(own)
        if parent is None:
            entries, messages, compactions, usage = 0, 0, 0, UsageTotals()
        else:
            entries, messages, compactions, usage = cumulative[parent]
            usage = usage.copy()
        usage.add(own)
        here = (
            entries + 1,
            messages + (1 if is_message else 0),
            compactions + (1 if node.type == "compaction" else 0),
            usage,
        )
        cumulative[node.id] = here
        children = store.children(node.id)
        if len(children) > 1:
            stats.forks += 1
        if children:
            stack.extend((child, node.id) for child in reversed(children))
        else:
            label = store.label_of(node.id)
            branch = BranchStats(
                node.id,
                entry_text(entry, calls.get),
                label,
                bool(path) and node is path[-1],
                here[0],
                here[1],
                here[2],
                here[3],
            )
            stats.branches.append(branch)
    # The leaf may have children (an earlier point of a longer branch): it is a branch too.
    if path and not any(b.active for b in stats.branches):
        leaf = path[-1]
        entries, messages, compactions, usage = cumulative[leaf.id]
        stats.branches.insert(
            0,
            BranchStats(
                leaf.id,
                entry_text(store.data(leaf), calls.get),
                store.label_of(leaf.id),
                True,
                entries,
                messages,
                compactions,
                usage,
            ),
        )
    stats.entries = sum(types.values())
    stats.entry_types = dict(types.most_common())
    stats.messages = dict(roles.most_common())
    stats.models = dict(models.most_common())
    stats.files = _files(tree_ops)
    active_roles: Counter[str] = Counter()
    active_ops = FileOps()
    for node in path:
        entry = store.data(node)
        message = entry_message(entry)
        if message is not None:
            active_roles[str(message.get("role"))] += 1
            if message.get("role") == "assistant":
                active_ops.scan([message])
        elif node.type == "custom_message":
            active_roles["custom"] += 1
    stats.active_messages = dict(active_roles.most_common())
    stats.active_files = _files(active_ops)
    projection = store.project()
    stats.context_messages = len(projection.messages)
    stats.context_tokens = int(context_estimate(projection.messages)["tokens"])
    return stats


# ----------------------------------------------------------------------------- as text


def _roles(counts: dict[str, int]) -> str:
    return ", ".join(f"{role} {count:,}" for role, count in counts.items()) or "none"


def _usage_line(usage: UsageTotals) -> str:
    return (
        f"{usage.tokens:,} tokens (input {usage.input:,}, output {usage.output:,}, "
        f"cache read {usage.cache_read:,}, cache write {usage.cache_write:,}), "
        f"${usage.cost:,.4f} over {usage.requests:,} requests"
    )


def describe_stats(stats: SessionStats, max_branches: int | None = 20) -> list[str]:
    """The statistics as plain lines for people (raw session text: sanitize before a terminal)."""
    active = stats.active_branch
    lines = [
        f"session {stats.session_id}" + (f"  “{stats.name}”" if stats.name else ""),
        f"entries {stats.entries:,}: "
        + ", ".join(f"{kind} {count:,}" for kind, count in stats.entry_types.items()),
        f"branches {len(stats.branches):,} (forks {stats.forks:,}, roots {stats.roots:,})",
        f"messages: {_roles(stats.messages)}",
        f"usage, whole tree: {_usage_line(stats.usage)}",
    ]
    if active is not None:
        lines.append(
            f"active branch (leaf {stats.leaf_id}): {active.entries:,} entries, "
            f"messages {_roles(stats.active_messages)}"
        )
        lines.append(f"usage, active branch: {_usage_line(active.usage)}")
    lines.append(
        f"context at the leaf: {stats.context_messages:,} messages, ~{stats.context_tokens:,} "
        "tokens"
    )
    if stats.models:
        lines.append(
            "models: " + ", ".join(f"{name} ({count:,})" for name, count in stats.models.items())
        )
    if stats.first_timestamp:
        lines.append(f"time: {stats.first_timestamp} → {stats.last_timestamp}")
    lines.append("")
    lines.append(f"compactions: {len(stats.compactions):,}")
    for c in stats.compactions:
        where = "active branch" if c["onActivePath"] else "other branch"
        lines.append(
            f"  {c['id']}  {c['tokensBefore']:,} tokens before, first kept "
            f"{c['firstKeptEntryId']}  ({where})"
        )
    lines.append("")
    read, modified = stats.files.get("read", []), stats.files.get("modified", [])
    lines.append(f"files touched: {len(modified):,} modified, {len(read):,} only read")
    for path in modified[:50]:
        lines.append(f"  M {path}")
    for path in read[:50]:
        lines.append(f"  R {path}")
    hidden = max(0, len(modified) - 50) + max(0, len(read) - 50)
    if hidden:
        lines.append(f"  … and {hidden:,} more (--json lists all)")
    lines.append("")
    branches = sorted(stats.branches, key=lambda b: (not b.active, -b.usage.cost, -b.entries))
    shown = branches if max_branches is None else branches[:max_branches]
    lines.append(f"branches ({len(branches):,}; active first, then by cost):")
    lines.append(f"  {'tip':<8}  {'entries':>7} {'msgs':>6} {'tokens':>14} {'cost':>10}  tip")
    for b in shown:
        mark = "•" if b.active else " "
        label = f"[{b.label}] " if b.label else ""
        text = one_line(b.tip_text, 60)
        lines.append(
            f"{mark} {b.tip_id:<8}  {b.entries:>7,} {b.messages:>6,} {b.usage.tokens:>14,} "
            f"{'$' + format(b.usage.cost, ',.4f'):>10}  {label}{text}"
        )
    if len(shown) < len(branches):
        lines.append(f"  … and {len(branches) - len(shown):,} more (--json lists all)")
    return lines
