"""Where to cut: pi 1.6's ``findProjectedCutPoint`` over the projected entries ``[start, end)``."""

from __future__ import annotations

from dataclasses import dataclass

from pitui.compaction.estimator import CHARS4, Estimator
from pitui.compaction.projected import ProjectedEntry


@dataclass(frozen=True)
class CutPoint:
    first_kept_index: int
    turn_start_index: int  # -1 when the cut does not split a turn
    is_split_turn: bool


def _omission_suffix(entries: list[ProjectedEntry], cut: int, end: int) -> bool:
    """The recovery-omission-suffix rule: after the cut only invisible or omitted entries,
    at least one of them an omitted assistant, and no edit replacing something else."""
    suffix = entries[cut + 1 : end]
    if not suffix:
        return False
    omitted_ids = {e.id for e in suffix if e.omitted}
    saw_omitted_assistant = False
    for entry in suffix:
        if entry.is_compaction:
            return False
        if entry.messages and not entry.omitted:
            return False
        if entry.omitted and entry.node.type == "message" and entry.node.role == "assistant":
            saw_omitted_assistant = True
        if entry.node.type == "context_edit":
            data = entry.node.data or {}
            if data.get("replacement") is not None and data.get("targetId") not in omitted_ids:
                return False
    return saw_omitted_assistant


def find_cut_point(
    entries: list[ProjectedEntry],
    start: int,
    end: int,
    keep_recent_tokens: int,
    estimator: Estimator = CHARS4,
) -> CutPoint:
    """Keep about ``keep_recent_tokens`` of the newest entries; never cut at a tool result."""
    cut_points = [i for i in range(start, end) if entries[i].is_cut_point]
    if not cut_points:
        return CutPoint(start, -1, False)
    total = 0
    cut: int | None = None
    reached = False
    for i in range(end - 1, start - 1, -1):
        tokens = entries[i].tokens(estimator)
        if tokens == 0:
            continue
        total += tokens
        if total >= keep_recent_tokens:
            reached = True
            later = [c for c in cut_points if c >= i]
            cut = later[0] if later else cut_points[-1]
            break
    if cut is None:
        cut = cut_points[0]
    if reached and _omission_suffix(entries, cut, end):
        cut += 1
    # Pull preceding context-invisible metadata (labels, model changes, ...) into the kept side.
    while cut > start and not entries[cut - 1].is_compaction and not entries[cut - 1].messages:
        cut -= 1
    if entries[cut].is_turn_start:
        return CutPoint(cut, -1, False)
    for j in range(cut, start - 1, -1):
        if entries[j].is_turn_start:
            return CutPoint(cut, j, True)
    return CutPoint(cut, -1, False)
