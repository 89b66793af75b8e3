"""The projected branch as compaction sees it: each context entry with the messages it projects.

Compaction works on the projection (pi 1.6): ``context_edit``s applied, system messages in a
kept range already dropped, an omitted entry projecting nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pitui.compaction.estimator import CHARS4, Estimator
from pitui.session.node import Node
from pitui.session.projection import Projection
from pitui.session.store import SessionStore

CUT_ROLES = frozenset({"user", "assistant", "bashExecution", "custom", "branchSummary"})
TURN_START_ROLES = frozenset(
    {"user", "bashExecution", "custom", "branchSummary", "compactionSummary"}
)


@dataclass
class ProjectedEntry:
    node: Node
    messages: list[dict[str, Any]] = field(default_factory=list)
    omitted: bool = False
    replaced: bool = False

    @property
    def id(self) -> str:
        return self.node.id

    @property
    def is_compaction(self) -> bool:
        return self.node.type == "compaction"

    @property
    def roles(self) -> set[str]:
        return {str(m.get("role")) for m in self.messages}

    def tokens(self, estimator: Estimator = CHARS4) -> int:
        return sum(estimator.count(m) for m in self.messages)

    @property
    def is_cut_point(self) -> bool:
        return not self.is_compaction and bool(self.roles & CUT_ROLES)

    @property
    def is_turn_start(self) -> bool:
        return not self.is_compaction and bool(self.roles & TURN_START_ROLES)


def projected_entries(store: SessionStore, projection: Projection) -> list[ProjectedEntry]:
    """One :class:`ProjectedEntry` per context entry, in order."""
    by_source: dict[str, list[dict[str, Any]]] = {}
    for message, source in zip(projection.messages, projection.source_entry_ids, strict=True):
        by_source.setdefault(source, []).append(message)
    out: list[ProjectedEntry] = []
    for entry_id in projection.context_entry_ids:
        node = store.node(entry_id)
        edit_id = projection.edits.get(entry_id)
        omitted = replaced = False
        if edit_id is not None:
            replacement = store.get(edit_id).get("replacement")
            omitted = replacement is None
            replaced = not omitted
        out.append(ProjectedEntry(node, by_source.get(entry_id, []), omitted, replaced))
    return out
