"""Planning a compaction (no LLM): pi 1.6's ``prepareCompaction`` on the projected branch.

Fixes kept from pi 1.6: repeated compaction re-summarizes the previous compaction's kept tail
(pi 0.58 lost it, #2608); a split turn with no new history keeps the previous summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pitui.compaction.cut_point import CutPoint, find_cut_point
from pitui.compaction.estimator import CHARS4, Estimator, remembered
from pitui.compaction.file_ops import FileOps
from pitui.compaction.projected import ProjectedEntry, projected_entries
from pitui.compaction.serialize import serialize_conversation
from pitui.compaction.settings import CompactionSettings, should_compact
from pitui.compaction.tokens import (
    context_estimate,
    last_assistant_usage_tokens,
)
from pitui.session.projection import Projection
from pitui.session.store import SessionStore

ALREADY_COMPACTED = "already compacted"
NOTHING_TO_SUMMARIZE = (
    "nothing to summarize (no messages before the cut point, or no kept entry id)"
)


@dataclass
class CompactionPreparation:
    """Everything needed to summarize and append a compaction (given to hooks too)."""

    first_kept_entry_id: str
    messages_to_summarize: list[dict[str, Any]]
    messages_to_summarize_ids: list[str]
    turn_prefix_messages: list[dict[str, Any]]
    turn_prefix_ids: list[str]
    is_split_turn: bool
    turn_start_entry_id: str | None
    tokens_before: int
    previous_summary: str | None
    file_ops: FileOps
    settings: CompactionSettings
    kept_context_entry_ids: list[str] = field(default_factory=list)

    @property
    def serialized_conversation(self) -> str:
        return serialize_conversation(self.messages_to_summarize)

    @property
    def serialized_turn_prefix(self) -> str | None:
        if not self.is_split_turn:
            return None
        return serialize_conversation(self.turn_prefix_messages)


def projected_context_tokens(
    store: SessionStore, projection: Projection, estimator: Estimator = CHARS4
) -> dict[str, Any]:
    """pi 1.6's ``estimateProjectedContextTokens``: trusted usage + what follows, unless a
    context_edit or compaction comes after that usage on the branch; else chars/4 of the
    current system prompt (once) plus every other projected message."""
    messages = projection.messages
    estimate = context_estimate(messages, estimator.count)
    index = estimate["lastUsageIndex"]
    if index is not None:
        source = projection.source_entry_ids[index]
        # Walk up from the leaf to the usage's entry (usually a few steps, never the path).
        cur = store.node(projection.leaf_id) if projection.leaf_id else None
        trusted = True
        while cur is not None and cur.id != source:
            if cur.type in ("context_edit", "compaction"):
                trusted = False
                break
            cur = cur.parent
        if trusted:
            return estimate
    system = projection.system_message
    tokens = estimator.count(system) if system else 0
    tokens += sum(estimator.count(m) for m in messages if m.get("role") != "system")
    return {"tokens": tokens, "usageTokens": 0, "trailingTokens": tokens, "lastUsageIndex": None}


def _messages(entries: list[ProjectedEntry]) -> tuple[list[dict[str, Any]], list[str]]:
    messages: list[dict[str, Any]] = []
    ids: list[str] = []
    for entry in entries:
        if entry.is_compaction:
            continue
        for message in entry.messages:
            if message.get("role") == "system":
                continue
            messages.append(message)
            ids.append(entry.id)
    return messages, ids


def prepare_compaction(
    store: SessionStore,
    leaf_id: str | None,
    settings: CompactionSettings,
    estimator: Estimator = CHARS4,
) -> CompactionPreparation | str:
    """The plan at ``leaf_id`` (default: the current leaf), or the reason there is none
    (``ALREADY_COMPACTED`` or ``NOTHING_TO_SUMMARIZE``)."""
    leaf_id = leaf_id or store.leaf_id
    if leaf_id is None:
        return NOTHING_TO_SUMMARIZE
    estimator = remembered(estimator)
    if store.node(leaf_id).type == "compaction":
        return ALREADY_COMPACTED
    projection = store.project(leaf_id)
    entries = projected_entries(store, projection)
    head = entries[0] if entries and entries[0].is_compaction and entries[0].messages else None
    start = 1 if head is not None else 0
    previous_summary: str | None = None
    if head is not None:
        summary = store.data(head.node).get("summary")
        previous_summary = summary if isinstance(summary, str) else None
    tokens_before = projected_context_tokens(store, projection, estimator)["tokens"]
    cut: CutPoint = find_cut_point(
        entries, start, len(entries), settings.keep_recent_tokens, estimator
    )
    if cut.first_kept_index >= len(entries):
        return NOTHING_TO_SUMMARIZE
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_index
    history, history_ids = _messages(entries[start:history_end])
    prefix: list[dict[str, Any]] = []
    prefix_ids: list[str] = []
    if cut.is_split_turn:
        prefix, prefix_ids = _messages(entries[cut.turn_start_index : cut.first_kept_index])
    if not history and not prefix:
        return NOTHING_TO_SUMMARIZE
    file_ops = FileOps()
    if head is not None:
        head_data = store.data(head.node)
        if not head_data.get("fromHook"):
            file_ops.seed(head_data.get("details"))
    file_ops.scan(history)
    file_ops.scan(prefix)
    return CompactionPreparation(
        first_kept_entry_id=entries[cut.first_kept_index].id,
        messages_to_summarize=history,
        messages_to_summarize_ids=history_ids,
        turn_prefix_messages=prefix,
        turn_prefix_ids=prefix_ids,
        is_split_turn=cut.is_split_turn,
        turn_start_entry_id=entries[cut.turn_start_index].id if cut.is_split_turn else None,
        tokens_before=tokens_before,
        previous_summary=previous_summary,
        file_ops=file_ops,
        settings=settings,
        kept_context_entry_ids=[e.id for e in entries[cut.first_kept_index :]],
    )


def kept_tokens(projection: Projection, kept_ids: list[str], estimator: Estimator) -> int:
    """Tokens of what a compaction keeps verbatim: the kept entries' messages and the system
    prompt (the summary comes on top)."""
    kept = set(kept_ids)
    total = 0
    for message, source in zip(projection.messages, projection.source_entry_ids, strict=True):
        if source in kept and message.get("role") != "system":
            total += estimator.count(message)
    system = projection.system_message
    return total + (estimator.count(system) if system else 0)


def plan_json(
    store: SessionStore,
    leaf_id: str | None,
    settings: CompactionSettings,
    context_window: int,
    model_key: str | None = None,
    estimator: Estimator = CHARS4,
) -> dict[str, Any]:
    """The ``pitui compact --dry-run --json`` object (pi 1.6's shape, plus a few extras)."""
    leaf_id = leaf_id or store.leaf_id
    estimator = remembered(estimator)
    projection = store.project(leaf_id)
    estimate = projected_context_tokens(store, projection, estimator)
    tokens = estimate["tokens"]
    out: dict[str, Any] = {
        "leafId": projection.leaf_id,
        "settings": settings.to_json(),
        "settingsModel": model_key,
        "contextWindow": context_window,
        "threshold": context_window - settings.reserve_tokens,
        "contextTokens": tokens,
        "contextEstimate": estimate,
        "estimator": estimator.name,
        "messagesContextEstimate": context_estimate(projection.messages, estimator.count),
        "lastAssistantUsageTokens": last_assistant_usage_tokens(projection.messages),
        "shouldCompact": should_compact(tokens, context_window, settings),
        "perMessageTokens": [
            {
                "sourceEntryId": source,
                "role": message.get("role"),
                "tokens": estimator.count(message),
            }
            for message, source in zip(
                projection.messages, projection.source_entry_ids, strict=True
            )
        ],
    }
    plan = prepare_compaction(store, leaf_id, settings, estimator)
    if isinstance(plan, str):
        out["prepared"] = False
        out["notPreparedReason"] = plan
        return out
    out.update(
        {
            "prepared": True,
            "firstKeptEntryId": plan.first_kept_entry_id,
            "isSplitTurn": plan.is_split_turn,
            "turnStartEntryId": plan.turn_start_entry_id,
            "messagesToSummarizeIds": plan.messages_to_summarize_ids,
            "turnPrefixMessageIds": plan.turn_prefix_ids,
            "keptContextEntryIds": plan.kept_context_entry_ids,
            "previousSummary": plan.previous_summary,
            "tokensBefore": plan.tokens_before,
            "keptTokens": kept_tokens(projection, plan.kept_context_entry_ids, estimator),
            "preparationSettings": settings.to_json(),
            "fileOps": plan.file_ops.to_json(),
            "serializedConversation": plan.serialized_conversation,
            "serializedTurnPrefix": plan.serialized_turn_prefix,
        }
    )
    return out
