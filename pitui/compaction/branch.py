"""Planning a branch summary: what the abandoned path held, newest first within a budget."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pitui.compaction.estimator import CHARS4, Estimator
from pitui.compaction.file_ops import FileOps
from pitui.session.node import Node
from pitui.session.projection import apply_replacement, entry_messages
from pitui.session.store import SessionStore


@dataclass
class BranchEntries:
    entries: list[Node]
    common_ancestor_id: str | None


def collect_branch_entries(
    store: SessionStore, old_leaf_id: str | None, target_id: str
) -> BranchEntries:
    """Entries from the old leaf back to (not including) the common ancestor with the target,
    oldest first. Compactions on the way are included (their summaries are input)."""
    if old_leaf_id is None:
        return BranchEntries([], None)
    old_path = {n.id for n in store.path_to(old_leaf_id)}
    common: str | None = None
    for node in store.path_to(target_id):
        if node.id in old_path:
            common = node.id
    out: list[Node] = []
    cur: Node | None = store.node(old_leaf_id)
    while cur is not None and cur.id != common:
        if not cur.hidden:
            out.append(cur)
        cur = cur.parent
    out.reverse()
    return BranchEntries(out, common)


@dataclass
class BranchPreparation:
    messages: list[dict[str, Any]] = field(default_factory=list)
    file_ops: FileOps = field(default_factory=FileOps)
    total_tokens: int = 0


def prepare_branch_entries(
    store: SessionStore, entries: list[Node], token_budget: int, estimator: Estimator = CHARS4
) -> BranchPreparation:
    """Messages to summarize (newest kept first within the budget), with cumulative file ops."""
    prep = BranchPreparation()
    edits: dict[str, Any] = {}
    for node in entries:
        data = store.data(node)
        if node.type == "context_edit" and isinstance(data.get("targetId"), str):
            edits[data["targetId"]] = data.get("replacement", None)
        if node.type == "branch_summary" and not data.get("fromHook"):
            prep.file_ops.seed(data.get("details"))
    kept: list[dict[str, Any]] = []
    for node in reversed(entries):
        if node.type == "message" and node.role == "toolResult":
            continue
        if node.type not in ("message", "custom_message", "branch_summary", "compaction"):
            continue
        data = store.data(node)
        messages = entry_messages(data, node.type == "compaction")
        messages = [m for m in messages if m.get("role") != "system" or node.type == "message"]
        if node.id in edits:
            replacement = edits[node.id]
            if replacement is None:
                continue
            messages = [apply_replacement(m, replacement) for m in messages]
        for message in messages:
            prep.file_ops.scan([message])
        tokens = sum(estimator.count(m) for m in messages)
        if token_budget > 0 and prep.total_tokens + tokens > token_budget:
            summary_like = node.type in ("compaction", "branch_summary")
            if summary_like and prep.total_tokens < 0.9 * token_budget:
                kept[:0] = messages
                prep.total_tokens += tokens
            break
        kept[:0] = messages
        prep.total_tokens += tokens
    prep.messages = kept
    return prep
