"""Checkpoints as the session records them: ``custom`` entries of type ``pitui.checkpoint``.

A checkpoint entry records the working directory at its parent entry (and at itself). The
files *at* a node of the tree are found by walking up from it: the latest checkpoint attached
to the node itself, else the nearest checkpoint entry above it. When a tool that changes files
ran in between (a tool result of ``write``, ``edit``, ``bash``…, or a user's ``!command``), the
answer is approximate: nothing recorded the files at that exact point (it is inside a run).

A node with no checkpoint at or above it (the entries before a session's first prompt, the
first prompt itself, a run's start before its first change) takes the first checkpoint below
it, in file order, when no entry between the two changed files: a run's first checkpoint is
taken before its first change, so it holds the files as they were at every node above it.
Such a checkpoint has no checkpoint above it (a *top* checkpoint); there are few of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

from pitui.checkpoint.store import Capture, Change, display_path
from pitui.lru import LruCache
from pitui.session.node import Node
from pitui.session.shapes import CHECKPOINT_TYPE, CheckpointData
from pitui.session.store import SessionStore

MAX_LISTED = 300
MAX_ENTRY_BYTES = 1_000_000
NEAREST_KEPT = 256  # remembered answers of CheckpointIndex._nearest_at and _below
READ_ONLY_TOOL_NAMES = frozenset({"read", "ls", "grep", "find"})
"""Tools that never change files: their results do not make a node's files uncertain."""
_SHA = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class CheckpointRef:
    """One checkpoint entry of a session."""

    entry_id: str
    parent_id: str | None
    data: CheckpointData

    @property
    def commit(self) -> str:
        return self.data.get("commit", "")

    @property
    def reason(self) -> str:
        return str(self.data.get("reason", ""))

    @property
    def changed_count(self) -> int:
        counts = self.data.get("counts") or {}
        return sum(v for v in counts.values() if isinstance(v, int))


@dataclass(frozen=True)
class StateAt:
    """The checkpoint holding the files at a node; ``exact`` False: a tool changed files after
    it (the node is in the middle of a run)."""

    checkpoint: CheckpointRef
    exact: bool


def checkpoint_data(entry: Any) -> CheckpointData | None:
    """The data of a checkpoint entry, if ``entry`` is one and names a commit (else None)."""
    if not isinstance(entry, dict) or entry.get("type") != "custom":
        return None
    if entry.get("customType") != CHECKPOINT_TYPE:
        return None
    data = entry.get("data")
    if not isinstance(data, dict) or not _SHA.fullmatch(str(data.get("commit", ""))):
        return None
    return cast(CheckpointData, data)


class CheckpointIndex:
    """The checkpoint entries of a session store, kept current as entries are appended."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self._by_id: dict[str, CheckpointRef] = {}
        self._by_parent: dict[str | None, list[CheckpointRef]] = {}
        self._seen = 0  # entries of the store looked at (hidden ones included)
        # entry id -> (the nearest checkpoint entry at or above it, whether no entry between
        # changed files): a few recent answers, so that a look from a new leaf stops at its
        # parent's answer instead of walking the whole path again.
        self._nearest: LruCache[str, tuple[CheckpointRef | None, bool]] = LruCache(NEAREST_KEPT)
        # The checkpoints with none above them, in file order (see the module docstring), how
        # many of ``_by_id`` were sorted into them, and answers of :meth:`_below` (cleared when
        # a new top checkpoint appears: it may be the answer for nodes that had none).
        self._tops: list[CheckpointRef] = []
        self._sorted = 0
        self._below_answers: LruCache[str | None, CheckpointRef | None] = LruCache(NEAREST_KEPT)
        self._scan()

    def _scan(self) -> None:
        store = self.store
        if store.entry_count < self._seen:  # the file was replaced by a shorter one
            self._by_id.clear()
            self._by_parent.clear()
            self._nearest.clear()
            self._tops.clear()
            self._sorted = 0
            self._below_answers.clear()
            self._seen = 0
        for node in store.nodes_from(self._seen):  # only what was appended (O(new))
            if not node.hidden:
                self._consider(node)
        self._seen = store.entry_count

    def _consider(self, node: Node) -> None:
        if node.type != "custom" or node.id in self._by_id:
            return
        if node.data is None and node.length > MAX_ENTRY_BYTES:
            return  # not one of ours (they stay small); never parse a hostile 50 MB line here
        data = checkpoint_data(self.store.data(node))
        if data is None:
            return
        ref = CheckpointRef(node.id, node.parent_id, data)
        self._by_id[node.id] = ref
        self._by_parent.setdefault(node.parent_id, []).append(ref)

    def refresh(self) -> None:
        """Pick up entries appended since the last look."""
        self._scan()

    def all(self) -> list[CheckpointRef]:
        self.refresh()
        return list(self._by_id.values())

    def get(self, entry_id: str) -> CheckpointRef | None:
        self.refresh()
        return self._by_id.get(entry_id)

    def attached(self, entry_id: str | None) -> list[CheckpointRef]:
        """Checkpoints whose parent is ``entry_id``, in file order."""
        self.refresh()
        return list(self._by_parent.get(entry_id, ()))

    def commits(self) -> set[str]:
        return {ref.commit for ref in self.all()}

    def state_at(self, entry_id: str | None) -> StateAt | None:
        """The files at ``entry_id`` (None: the empty session before any entry)."""
        self.refresh()
        store = self.store
        if entry_id is None:  # the empty session, before the first entry
            below = self._below(None)
            return StateAt(below, True) if below is not None else None
        node = store.node(entry_id)
        # Checkpoints attached to the node itself are the latest look at its files (a restore
        # away from it saves the folder there).
        attached = self._by_parent.get(node.id)
        if attached:
            return StateAt(attached[-1], True)
        ref, exact = self._nearest_at(node)
        if ref is not None:
            return StateAt(ref, exact)
        below = self._below(node)
        return StateAt(below, True) if below is not None else None

    def _top_checkpoints(self) -> list[CheckpointRef]:
        """The checkpoints with no checkpoint above them, in file order (sorted once each: a
        walk up parent links, no entry parsed)."""
        refs = list(self._by_id.values())
        if self._sorted < len(refs):
            for ref in refs[self._sorted :]:
                if not self._checkpoint_above(self.store.node(ref.entry_id).parent):
                    self._tops.append(ref)
                    self._below_answers.clear()
            self._sorted = len(refs)
        return self._tops

    def _checkpoint_above(self, node: Node | None) -> bool:
        """Is there a checkpoint entry at ``node`` or above it?"""
        cur = node
        while cur is not None:
            if cur.id in self._by_id:
                return True
            known = self._nearest.get(cur.id)
            if known is not None:
                return known[0] is not None
            cur = cur.parent
        return False

    def _below(self, node: Node | None) -> CheckpointRef | None:
        """The first top checkpoint below ``node`` (None: the root) with no entry between the
        two that changed files: the files at ``node`` (see the module docstring)."""
        tops = self._top_checkpoints()
        key = node.id if node is not None else None
        if key in self._below_answers:
            return self._below_answers.get(key)
        store = self.store
        found: CheckpointRef | None = None
        for top in tops:
            top_node = store.node(top.entry_id)
            if node is not None and (top_node is node or not store.is_on_path(node, top_node)):
                continue
            cur = top_node.parent
            while cur is not None and cur is not node and not changes_files(store, cur):
                cur = cur.parent
            if cur is node:  # reached ``node`` (or the root) without a change on the way
                found = top
                break
        self._below_answers.put(key, found)
        return found

    def _nearest_at(self, node: Node) -> tuple[CheckpointRef | None, bool]:
        """(The nearest checkpoint entry at or above ``node``, whether no entry from ``node``
        up to it changed files). Walks up to the first remembered answer (the parent's, after
        an append), so a look from the growing leaf costs O(1), not O(path)."""
        store = self.store
        chain: list[Node] = []
        cur: Node | None = node
        found: tuple[CheckpointRef | None, bool] = (None, False)
        while cur is not None:
            known = self._nearest.get(cur.id)
            if known is not None:
                found = known
                break
            ref = self._by_id.get(cur.id)
            if ref is not None:
                found = (ref, True)
                break
            chain.append(cur)
            cur = cur.parent
        ref, exact = found
        if ref is not None:
            for below in reversed(chain):  # from the checkpoint down to ``node``
                if exact and changes_files(store, below):
                    exact = False
        answer = (ref, exact)
        self._nearest.put(node.id, answer)
        return answer

    def previous_for_leaf(self) -> CheckpointRef | None:
        """The checkpoint a new one at the current leaf follows (the leaf's state)."""
        state = self.state_at(self.store.leaf_id)
        return state.checkpoint if state is not None else None

    def path_commits(self, leaf_id: str | None) -> set[str]:
        """Commits of the checkpoints on the path to ``leaf_id`` and attached to it, and of
        the top checkpoints (the files at the nodes above the path's first checkpoint)."""
        self.refresh()
        out: set[str] = set()
        if leaf_id is None:
            return out
        store = self.store
        cur: Node | None = store.node(leaf_id)
        while cur is not None:  # from checkpoint to checkpoint, not entry by entry
            ref = self._nearest_at(cur)[0]
            if ref is None:
                break
            out.add(ref.commit)
            cur = store.node(ref.entry_id).parent
        if cur is not None:
            # The nodes above the path's first checkpoint have their files in a top
            # checkpoint below them (this branch's or an earlier one's): keep them all (few).
            out.update(top.commit for top in self._top_checkpoints())
        out.update(ref.commit for ref in self._by_parent.get(leaf_id, ()))
        return out

    def run_markers(self) -> dict[str, int]:
        """Entry id → how many files its run changed (for the tree's marker)."""
        self.refresh()
        out: dict[str, int] = {}
        for ref in self._by_id.values():
            if ref.reason == "after-run" and ref.parent_id is not None and ref.changed_count:
                out[ref.parent_id] = ref.changed_count
        return out


def changes_files(store: SessionStore, node: Node) -> bool:
    """Did this entry change files (a tool result of a writing tool, or a ``!command``)?"""
    if node.type != "message":
        return False
    if node.role == "bashExecution":
        return True
    if node.role != "toolResult":
        return False
    message = store.data(node).get("message")
    if not isinstance(message, dict):
        return False
    if message.get("toolName") in READ_ONLY_TOOL_NAMES:
        return False
    details = message.get("details")
    return not (isinstance(details, dict) and details.get("pituiRefused"))


def entry_data(
    capture: Capture,
    reason: str,
    previous: CheckpointRef | None,
    changes: Iterable[Change],
    *,
    restore_to: str | None = None,
) -> dict[str, Any]:
    """The ``data`` of a new checkpoint entry."""
    items = list(changes)
    counts = {"added": 0, "modified": 0, "deleted": 0}
    words = {"A": "added", "M": "modified", "D": "deleted"}
    for change in items:
        counts[words[change.status]] += 1
    data: dict[str, Any] = {
        "v": 1,
        "commit": capture.commit,
        "tree": capture.tree,
        "reason": reason,
        "previous": previous.entry_id if previous is not None else None,
        "changes": [{"path": display_path(c.path), "status": c.status} for c in items[:MAX_LISTED]],
        "counts": counts,
    }
    if len(items) > MAX_LISTED:
        data["more"] = len(items) - MAX_LISTED
    if capture.skipped:
        data["skipped"] = [
            {"path": display_path(s.path), "reason": s.reason, "size": s.size}
            for s in capture.skipped[:MAX_LISTED]
        ]
    if restore_to is not None:
        data["restoreTo"] = restore_to
    return data
