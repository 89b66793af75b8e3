"""The projection at every node of a session at once, with shared structure.

Exports and comparisons need "what the model saw" at thousands of nodes; calling
:meth:`SessionStore.project` for each would cost O(path) per node. Along a path almost every
node's projection is its parent's plus the node's own messages (the rule the store itself uses
to extend a cached projection on append, :func:`extends_parent_projection`), so each node
records only a *base* node whose projection is a prefix of its own and the messages it adds.
Where that rule does not hold (a compaction, a ``context_edit``, an entry some edit targets) the
node's projection is computed by the store, the one definition, and stored against the longest
prefix its ancestors already hold. ``messages_at(i)`` rebuilds any node's list by walking bases.
"""

from __future__ import annotations

from collections.abc import Callable, Container
from dataclasses import dataclass, field
from typing import Any

from pitui.session.node import Node
from pitui.session.projection import (
    Projection,
    entry_messages,
    extends_parent_projection,
    model_from_entry,
)
from pitui.session.store import SessionStore
from pitui.session.system_prompt import replay_system_messages

# A message variant: (source entry id, how it appears, position among that source's messages).
# "how": "" plain, "head" as the head compaction's checkpoint/summary, else the edit's id.
VariantKey = tuple[str, str, int]


@dataclass
class ProjectionMap:
    """Per node (index into ``nodes``): ``base`` (-1: none), the message variants it adds, the
    model, thinking level and system state (index into ``systems``, -1: none) in effect."""

    nodes: list[Node] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)
    base: list[int] = field(default_factory=list)
    added: list[list[int]] = field(default_factory=list)
    length: list[int] = field(default_factory=list)
    model: list[dict[str, Any] | None] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    system: list[int] = field(default_factory=list)
    # Message variants: the key, the message as the model sees it.
    keys: list[VariantKey] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    systems: list[dict[str, Any]] = field(default_factory=list)
    computed: int = 0
    """How many nodes needed a full projection (for benchmarks and tests)."""

    def messages_at(self, i: int) -> list[int]:
        """Message variant indices of node ``i``'s projection, in order."""
        parts: list[list[int]] = []
        while i >= 0:
            parts.append(self.added[i])
            i = self.base[i]
        out: list[int] = []
        for part in reversed(parts):
            out.extend(part)
        return out

    def source_of(self, variant: int) -> str:
        return self.keys[variant][0]

    def edit_of(self, variant: int) -> str | None:
        how = self.keys[variant][1]
        return how if how not in ("", "head") else None


def _variant_keys(projection: Projection) -> list[VariantKey]:
    keys: list[VariantKey] = []
    seen: dict[tuple[str, str], int] = {}
    head = projection.compaction_id
    in_head = head is not None
    for source in projection.source_entry_ids:
        in_head = in_head and source == head
        how = "head" if in_head else projection.edits.get(source, "")
        count = seen.get((source, how), 0)
        seen[(source, how)] = count + 1
        keys.append((source, how, count))
    return keys


def build_projection_map(
    store: SessionStore,
    within: Container[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ProjectionMap:
    """The projection of every visible node (only those in ``within`` when given, which must
    hold each node's ancestors too), in tree pre-order: parents before children."""
    result = ProjectionMap()
    variant_index: dict[VariantKey, int] = {}
    system_index: dict[tuple[int, ...], int] = {}
    targets: set[str] = set()
    for node in store.nodes():
        if node.type == "context_edit":
            target = store.data(node).get("targetId")
            if isinstance(target, str):
                targets.add(target)

    def variant(key: VariantKey, message: dict[str, Any]) -> int:
        found = variant_index.get(key)
        if found is None:
            found = len(result.keys)
            variant_index[key] = found
            result.keys.append(key)
            result.messages.append(message)
        return found

    def system_state(variants: list[int]) -> int:
        systems = tuple(v for v in variants if result.messages[v].get("role") == "system")
        if not systems:
            return -1
        found = system_index.get(systems)
        if found is None:
            replayed = replay_system_messages([result.messages[v] for v in systems])
            if replayed is None:
                return -1
            found = len(result.systems)
            system_index[systems] = found
            result.systems.append(replayed)
        return found

    total = len(store)
    roots = store.roots()
    if within is not None:
        roots = [n for n in roots if n.id in within]
    stack: list[tuple[Node, int]] = [(n, -1) for n in reversed(roots)]
    while stack:
        node, parent = stack.pop()
        i = len(result.nodes)
        result.nodes.append(node)
        result.index[node.id] = i
        data = store.data(node)
        if parent >= 0 and extends_parent_projection(node) and node.id not in targets:
            added = [
                variant((node.id, "", k), m) for k, m in enumerate(entry_messages(data, False))
            ]
            result.base.append(parent)
            result.added.append(added)
            result.length.append(result.length[parent] + len(added))
            source = model_from_entry(data)
            result.model.append(source if source is not None else result.model[parent])
            if node.type == "thinking_level_change":
                level = data.get("thinkingLevel")
                result.thinking.append(level if isinstance(level, str) else "off")
            else:
                result.thinking.append(result.thinking[parent])
            if any(result.messages[v].get("role") == "system" for v in added):
                result.system.append(system_state(result.messages_at(parent) + added))
            else:
                result.system.append(result.system[parent])
        else:
            result.computed += 1
            projection = store.project(node.id)
            keys = _variant_keys(projection)
            variants = [
                variant(key, message)
                for key, message in zip(keys, projection.messages, strict=True)
            ]
            base, start = _longest_prefix(result, parent, variants)
            result.base.append(base)
            result.added.append(variants[start:])
            result.length.append(len(variants))
            result.model.append(projection.model)
            result.thinking.append(projection.thinking_level)
            result.system.append(system_state(variants))
        if progress is not None and i % 2048 == 0:
            progress(i, total)
        children = store.children(node.id)
        if within is not None:
            children = [n for n in children if n.id in within]
        if children:
            stack.extend((child, i) for child in reversed(children))
    return result


def _longest_prefix(result: ProjectionMap, parent: int, variants: list[int]) -> tuple[int, int]:
    """The ancestor (on ``parent``'s base chain) holding the longest prefix of ``variants``."""
    if parent < 0:
        return -1, 0
    before = result.messages_at(parent)
    common = 0
    for a, b in zip(before, variants, strict=False):
        if a != b:
            break
        common += 1
    cur = parent
    while cur >= 0 and result.length[cur] > common:
        cur = result.base[cur]
    if cur < 0:
        return -1, 0
    return cur, result.length[cur]
