"""The session tree as pi's tree selector lays it out, kept as chains ("segments").

pi flattens the tree depth-first, pre-order; at each node the child holding the active leaf comes
first and the others follow in tree order (timestamp, ties in file order). Filtered-out entries
are skipped and their children re-attach to the nearest shown ancestor. Rows nest only at
branch points: a run of single-child entries stays at one indentation.

So the rows are a sequence of *segments*: a segment is a chain of shown entries in which each one
is the only shown child of the one before; it ends at an entry with no shown child or with two or
more (a branch point), whose children each start a segment of their own. A 1M-entry session has
a few tens of thousands of segments, so everything about nesting (connectors, ``│`` gutters,
folds, the active path, which display line an entry is on) is kept per segment, never per row:
per row there is only the entry itself in its segment's list. Gutters are strings made on demand
for the rows on screen, never stored for every row.

Building walks the file-order entry list in C-speed scans (runs of "parent is the previous
line"), so only branch points are handled in Python. Appends, leaf moves and the leaf-only
visibility of text-less assistant messages are applied incrementally.

Pure: no Textual. Iterative throughout (chains can be 100k entries deep).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from itertools import islice, repeat
from operator import attrgetter, is_

from pitui.lru import LruCache
from pitui.session.ids import iso_to_ms
from pitui.session.node import Node
from pitui.session.store import SessionStore

Shown = Callable[[Node, "Node | None"], bool]
"""``shown(node, leaf)``: is ``node`` a row while ``leaf`` is the current leaf."""

Tick = Callable[[int, int], None]
"""``tick(done, total)``, called now and then by long operations; it may raise to cancel."""

TICK_EVERY = 1 << 12
SEARCH_TICK_EVERY = 1 << 9
"""A search checks entries one by one (some are parsed): it can be cancelled more often."""

BRANCH = "├─ "
LAST_BRANCH = "└─ "
GUIDE = "│  "
BLANK = "   "

_parent_of = attrgetter("parent")
_id_of = attrgetter("id")


def timestamp_key(node: Node) -> float:
    """pi's tree order of siblings: by timestamp (unreadable ones last), ties in file order."""
    ms = iso_to_ms(node.timestamp)
    return ms if ms is not None else math.inf


def shown_parent(node: Node) -> Node | None:
    """The parent, skipping the store's hidden markers (they have no row in any mode)."""
    parent = node.parent
    while parent is not None and parent.hidden:
        parent = parent.parent
    return parent


class Segment:
    """A chain of shown entries; its children start where its last entry branches."""

    __slots__ = ("children", "folded", "level", "nodes", "parent", "path", "row", "size", "slot")

    def __init__(self, nodes: list[Node], parent: Segment | None) -> None:
        self.nodes = nodes
        self.parent = parent
        self.children: list[Segment] = []
        self.folded = False
        self.path = 0
        """How many of the first entries are on the root → leaf path."""
        # Display index (TreeLayout.reindex):
        self.slot = -1
        """Index among the segments on display (-1 when a folded ancestor hides it)."""
        self.level = 0
        """Gutter columns before the head's connector."""
        self.row = 0
        """First row, folds ignored."""
        self.size = 0
        """Rows of the subtree, folds ignored."""

    @property
    def branch(self) -> bool:
        """Its head hangs off a branch point (it has a ``├─``/``└─`` connector)."""
        parent = self.parent
        return parent is not None and len(parent.children) > 1

    @property
    def last(self) -> bool:
        """The last child of its parent (``└─``, and blank gutters below)."""
        parent = self.parent
        return parent is None or parent.children[-1] is self

    @property
    def foldable(self) -> bool:
        """pi: has children and is a top-level entry or the first of a branch (a head)."""
        return len(self.nodes) > 1 or bool(self.children)

    def __repr__(self) -> str:
        head = self.nodes[0].id if self.nodes else "root"
        return f"<Segment {head} ×{len(self.nodes)} kids={len(self.children)} path={self.path}>"


class _Frame:
    """While building: the shown entry new rows attach to (the last of ``seg``)."""

    __slots__ = ("kids", "seg", "split")

    def __init__(self, seg: Segment) -> None:
        self.seg = seg
        self.kids = 0
        self.split = 0  # index in seg.nodes of the first child, once there is one


class TreeLayout:
    """The rows of the session tree for one filter; see the module doc.

    Lines are rows minus those under folds. ``at(line)`` gives ``(segment, k)``: the entry is
    ``segment.nodes[k]``.
    """

    def __init__(self, shown: Shown, leaf: Node | None) -> None:
        self.shown = shown
        self.leaf = leaf
        self.root = Segment([], None)
        self.heads: dict[str, Segment] = {}
        self._path_segs: list[Segment] = []
        """Segments with entries on the path, deepest first."""
        self._order: list[Segment] = []
        self._lines = _Counts([])
        """Display lines per segment on display (a Fenwick tree: appends update it in O(log))."""
        self._rows_dirty = True
        self._count = 0
        self._rows = 0
        self._dirty = True
        self._gutters: LruCache[Segment, str] = LruCache(512)
        self._folds: list[Segment] = []
        """The segments folded since the folds were last cleared (some may be unfolded)."""
        self.version = 0
        """Bumped by every change of rows or path marks."""
        self.order_exact = True
        """The order is what a fresh build would give (False once the leaf moved elsewhere or
        a new branch was put first at an existing branch point)."""
        self.built_from: frozenset[str] = frozenset()
        """Ids of the last entries the build saw (their append events may still be on the way:
        :meth:`appended` ignores them)."""

    # ------------------------------------------------------------------ building

    @classmethod
    def build(cls, store: SessionStore, shown: Shown, *, tick: Tick | None = None) -> TreeLayout:
        """Lay out every entry of ``store`` that ``shown`` admits."""
        leaf = store.leaf
        layout = cls(shown, leaf)
        nodes = list(store.nodes())
        n = len(nodes)
        if not n:
            return layout
        layout.built_from = frozenset(node.id for node in nodes[-64:])
        # cont[i]: entry i's parent is entry i - 1 (the common case, checked in C).
        cont = bytearray(1)
        cont += bytes(map(is_, map(_parent_of, islice(nodes, 1, None)), nodes))
        roots: list[int] = []
        extra: dict[str, list[int]] = {}  # parent id → its children that start a run
        head = cont.find(0)
        while head >= 0:
            parent = shown_parent(nodes[head])
            if parent is None:
                roots.append(head)
            else:
                extra.setdefault(parent.id, []).append(head)
            head = cont.find(0, head + 1)
        forks = bytearray(map(extra.__contains__, map(_id_of, nodes))) if extra else bytearray(n)
        fork_at: dict[str, int] = {}
        j = forks.find(1)
        while j >= 0:
            fork_at[nodes[j].id] = j
            j = forks.find(1, j + 1)

        # The leaf's ancestors, run by run: which child of each branch point is on the path.
        path_child: dict[int, int] = {}
        path_root = -1
        at = -1
        end_of_path = leaf
        while end_of_path is not None and end_of_path.hidden:
            end_of_path = end_of_path.parent  # the leaf can be one of the store's markers
        if end_of_path is not None:
            at = (
                n - 1
                if nodes[-1] is end_of_path
                else bytearray(map(is_, nodes, repeat(end_of_path))).find(1)
            )
        while at >= 0:
            run = cont.rfind(0, 0, at + 1)
            j = forks.find(1, run, at)
            while j >= 0:
                path_child[j] = j + 1
                j = forks.find(1, j + 1, at)
            parent = shown_parent(nodes[run])
            if parent is None:
                path_root = run
                break
            at = fork_at[parent.id]
            path_child[at] = run
        if path_root in roots and roots[0] != path_root:
            roots.remove(path_root)
            roots.insert(0, path_root)

        root = layout.root
        heads = layout.heads
        top = _Frame(root)
        # (first entry, last entry of its run, anchor, on the path)
        work: list[tuple[int, int, _Frame, bool]] = []
        for r in reversed(roots):
            work.append((r, -1, top, r == path_root))
        done = 0
        next_tick = TICK_EVERY
        while work:
            start, run_end, frame, on_path = work.pop()
            if run_end < 0:
                stop = cont.find(0, start + 1)
                run_end = (stop if stop >= 0 else n) - 1
            fork = forks.find(1, start, run_end + 1)
            end = run_end if fork < 0 else fork
            own = False  # ``frame`` was made in this run: nobody else attaches to it
            for lo in range(start, end + 1, TICK_EVERY):
                hi = min(lo + TICK_EVERY, end + 1)
                for node in nodes[lo:hi]:
                    if shown(node, leaf):
                        if own:
                            frame.seg.nodes.append(node)  # the chain goes on (the common case)
                        elif frame.kids == 0 and frame is not top:
                            seg = frame.seg
                            seg.nodes.append(node)
                            frame.kids = 1
                            frame.split = len(seg.nodes) - 1
                            frame = _Frame(seg)
                            own = True
                        else:
                            frame = _attach(node, frame, root, heads)
                            own = True
                        if on_path:
                            frame.seg.path = len(frame.seg.nodes)
                    if on_path and node is end_of_path:
                        on_path = False
                done += hi - lo
                if tick is not None and done >= next_tick:
                    next_tick = done + TICK_EVERY
                    tick(done, n)
            if fork < 0:
                continue
            kids = extra[nodes[fork].id]
            chain = fork + 1 if fork + 1 < n and cont[fork + 1] else -1  # same run goes on
            if chain >= 0:
                kids = [chain, *kids]
            if len(kids) > 1:
                kids = sorted(sorted(kids), key=lambda i: timestamp_key(nodes[i]))
                if on_path:
                    chosen = path_child.get(fork)
                    if chosen is not None and kids[0] != chosen:
                        kids.remove(chosen)
                        kids.insert(0, chosen)
            for kid in reversed(kids):
                work.append(
                    (
                        kid,
                        run_end if kid == chain else -1,
                        frame,
                        on_path and kid == path_child.get(fork),
                    )
                )
        layout._find_path()
        return layout

    # ------------------------------------------------------------------ the display index

    def reindex(self) -> None:
        """Recompute lines, rows and levels (after a change; cheap: one pass over segments)."""
        order: list[Segment] = []
        counts: list[int] = []
        line = 0
        row = 0
        visited: list[Segment] = []
        stack: list[tuple[Segment, int, bool]] = [
            (s, 0, False) for s in reversed(self.root.children)
        ]
        pop, push = stack.pop, stack.append
        while stack:
            seg, level, hidden = pop()
            visited.append(seg)
            seg.row = row
            count = len(seg.nodes)
            row += count
            seg.level = level
            if hidden:
                seg.slot = -1
            else:
                seg.slot = len(order)
                order.append(seg)
                shown = 1 if seg.folded else count
                counts.append(shown)
                line += shown
            kids = seg.children
            if kids:
                child_level = level + 1 if seg.branch else level
                child_hidden = hidden or seg.folded
                for kid in reversed(kids):
                    push((kid, child_level, child_hidden))
        for seg in reversed(visited):
            kids = seg.children
            seg.size = (kids[-1].row + kids[-1].size - seg.row) if kids else len(seg.nodes)
        self._order = order
        self._lines = _Counts(counts)
        self._count = line
        self._rows = row
        self._dirty = False
        self._rows_dirty = False
        self._gutters.clear()

    def ensure_indexed(self) -> None:
        """Reindex if something changed (lines and levels are read after this)."""
        if self._dirty:
            self.reindex()

    def ensure_rows(self) -> None:
        """Reindex if rows moved (``row``/``size``, for :meth:`restrict`; appends only shift
        lines, cheaply)."""
        if self._dirty or self._rows_dirty:
            self.reindex()

    def _grew(self, seg: Segment, delta: int) -> None:
        """``seg`` got ``delta`` more entries at its end: the lines after it move down."""
        if self._dirty:
            return
        self._rows_dirty = True
        if seg.slot < 0 or seg.folded:
            return  # hidden under a fold, or folded: the lines on display do not change
        self._lines.add(seg.slot, delta)
        self._count += delta

    def seg_line(self, seg: Segment) -> int:
        """First display line of ``seg``, -1 when a fold hides it."""
        self.ensure_indexed()
        return self._lines.before(seg.slot) if seg.slot >= 0 else -1

    def changed(self) -> None:
        """The structure or the folds changed: lines are recomputed when next asked for."""
        self._dirty = True

    @property
    def line_count(self) -> int:
        self.ensure_indexed()
        return self._count

    @property
    def row_count(self) -> int:
        """Rows, folds ignored."""
        self.ensure_rows()
        return self._rows

    def at(self, line: int) -> tuple[Segment, int]:
        """The segment and index of display line ``line`` (0 ≤ line < line_count)."""
        self.ensure_indexed()
        slot, k = self._lines.find(line)
        return self._order[slot], k

    def node_at(self, line: int) -> Node:
        seg, k = self.at(line)
        return seg.nodes[k]

    def line_of(self, seg: Segment, k: int) -> int | None:
        """Display line of ``seg.nodes[k]``, None when a fold hides it."""
        self.ensure_indexed()
        if seg.slot < 0 or (seg.folded and k > 0):
            return None
        return self._lines.before(seg.slot) + k

    def segments(self) -> Iterator[Segment]:
        """Every segment, pre-order (folds ignored)."""
        stack = list(reversed(self.root.children))
        while stack:
            seg = stack.pop()
            yield seg
            stack.extend(reversed(seg.children))

    def iter_nodes(self) -> Iterator[Node]:
        """Every row's entry, top to bottom (folds ignored)."""
        for seg in self.segments():
            yield from seg.nodes

    # ------------------------------------------------------------------ one row

    def gutter(self, seg: Segment) -> str:
        """The ``│  `` / ``   `` columns before ``seg``'s head (made on demand, cached)."""
        # The cache is cleared by a reindex: a change of structure since (a segment split
        # or joined by an append) must not leave a gutter of the segment's old place.
        self.ensure_indexed()
        cached = self._gutters.get(seg)
        if cached is not None:
            return cached
        cells: list[str] = []
        parent = seg.parent
        while parent is not None:
            if parent.branch:
                cells.append(BLANK if parent.last else GUIDE)
            parent = parent.parent
        text = "".join(reversed(cells))
        self._gutters.put(seg, text)
        return text

    def row_gutter(self, seg: Segment, k: int) -> str:
        """The gutter of row ``k`` of ``seg`` (the chain under a branch head is indented)."""
        base = self.gutter(seg)
        if k and seg.branch:
            return base + (BLANK if seg.last else GUIDE)
        return base

    @staticmethod
    def connector(seg: Segment, k: int) -> str:
        if k or not seg.branch:
            return ""
        return LAST_BRANCH if seg.last else BRANCH

    @staticmethod
    def indent(seg: Segment) -> int:
        """Columns of gutter and connector of every row of ``seg`` (after ``reindex``)."""
        return 3 * (seg.level + (1 if seg.branch else 0))

    @staticmethod
    def kids(seg: Segment, k: int) -> int:
        """Number of shown children of ``seg.nodes[k]``."""
        return 1 if k < len(seg.nodes) - 1 else len(seg.children)

    # ------------------------------------------------------------------ finding entries

    def nearest(self, node: Node | None) -> tuple[Segment, int] | None:
        """Where ``node`` is, or else its nearest shown ancestor; None if neither is shown.

        Walks up to the first segment head, then matches the walked chain against that
        segment's entries (no filter call: hidden entries are simply not in the segment).
        """
        heads = self.heads
        chain: list[Node] = []
        cur = node
        seg: Segment | None = None
        while cur is not None:
            seg = heads.get(cur.id)
            if seg is not None and seg.nodes and seg.nodes[0] is cur:
                break
            seg = None
            chain.append(cur)
            cur = cur.parent
        if seg is None:
            return None
        nodes = seg.nodes
        k = 0
        last = len(nodes) - 1
        for walked in reversed(chain):
            if k < last and nodes[k + 1] is walked:
                k += 1
        return seg, k

    def locate(self, node: Node) -> tuple[Segment, int] | None:
        """Where ``node`` is shown, or None."""
        found = self.nearest(node)
        if found is None or found[0].nodes[found[1]] is not node:
            return None
        return found

    def leaf_row(self) -> tuple[Segment, int] | None:
        """Where the leaf is, or its nearest shown ancestor (see :meth:`leaf_shown`)."""
        if not self._path_segs:
            return None
        seg = self._path_segs[0]
        return seg, seg.path - 1

    def leaf_shown(self) -> bool:
        """The leaf itself has a row (else :meth:`leaf_row` is its nearest shown ancestor)."""
        found = self.leaf_row()
        return found is not None and found[0].nodes[found[1]] is self.leaf

    # ------------------------------------------------------------------ the active path

    def _find_path(self) -> None:
        """Record the segments marked as on the path (after a build), deepest first."""
        segs: list[Segment] = []
        seg = self.root
        while True:
            nxt = next((c for c in seg.children if c.path), None)
            if nxt is None:
                break
            segs.append(nxt)
            if nxt.path < len(nxt.nodes):
                break
            seg = nxt
        segs.reverse()
        self._path_segs = segs

    def _set_path(self, found: tuple[Segment, int] | None) -> None:
        """Mark the path ending at ``found`` (the leaf's row or its nearest shown ancestor).

        Only what changed is touched: from ``found`` up to where it meets the old path."""
        old = self._path_segs
        if found is None:
            for seg in old:
                seg.path = 0
            self._path_segs = []
            return
        seg, k = found
        if old and old[0] is seg:
            seg.path = k + 1  # the common case: the leaf moved along its segment
            return
        root = self.root
        chain: list[Segment] = []
        meet: Segment | None = seg if seg.path else None
        cur: Segment | None = seg
        while meet is None and cur is not None and cur is not root:
            chain.append(cur)
            cur = cur.parent
            if cur is not None and cur is not root and cur.path:
                meet = cur
        keep = 0
        if meet is not None:
            while keep < len(old) and old[keep] is not meet:
                old[keep].path = 0  # left the path
                keep += 1
        else:
            for stale in old:
                stale.path = 0
            keep = len(old)
        if chain:
            chain[0].path = k + 1
            for ancestor in chain[1:]:
                ancestor.path = len(ancestor.nodes)
            if meet is not None:
                meet.path = len(meet.nodes)
        elif meet is not None:
            meet.path = k + 1
        self._path_segs = chain + old[keep:]

    def move_leaf(self, leaf: Node | None) -> bool:
        """The leaf moved (no append). Returns False when the rows themselves would change
        (a text-less assistant message is shown only while it is the leaf): rebuild then."""
        old = self.leaf
        if old is leaf:
            return True
        self.order_exact = False
        if (old is not None and self.shown(old, old) != self.shown(old, leaf)) or (
            leaf is not None and self.shown(leaf, leaf) != self.shown(leaf, old)
        ):
            self.leaf = leaf
            return False
        self.leaf = leaf
        self._set_path(self.nearest(leaf))
        self.version += 1
        return True

    # ------------------------------------------------------------------ appends

    def appended(self, node: Node) -> bool:
        """``node`` was just appended at the leaf (it becomes the leaf). Returns False when
        the change is not a plain append (then the layout must be rebuilt)."""
        if node.hidden or node is self.leaf or node.id in self.built_from:
            return True  # a marker (never a row), or already laid out
        old = self.leaf
        if shown_parent(node) is not old:
            return False
        where = self.leaf_row()
        self.leaf = node
        if (
            old is not None
            and where is not None
            and where[0].nodes[where[1]] is old
            and not self.shown(old, node)
        ):
            # A text-less assistant message was shown only while it was the leaf.
            seg, k = where
            if k < len(seg.nodes) - 1 or seg.children:
                return False
            where = self._remove_last(seg)
        if self.shown(node, node):
            where = self._insert_leaf(node, where)
        self._set_path(where)
        self.version += 1
        return True

    def _insert_leaf(self, node: Node, anchor: tuple[Segment, int] | None) -> tuple[Segment, int]:
        """Add ``node`` as the first child of ``anchor`` (None: a new first top-level row)."""
        heads = self.heads
        if anchor is None:
            self._dirty = True
            seg = Segment([node], self.root)
            if self.root.children:
                self.order_exact = False
            self.root.children.insert(0, seg)
            heads[node.id] = seg
            return seg, 0
        seg, k = anchor
        if k == len(seg.nodes) - 1 and not seg.children:
            seg.nodes.append(node)
            self._grew(seg, 1)
            return seg, k + 1
        self._dirty = True  # a new segment: reindex
        if k < len(seg.nodes) - 1:
            # The anchor had one child (the next in its chain): it becomes a branch point.
            _split(seg, k + 1, heads)
        else:
            self.order_exact = False  # the others were ordered with another child first
        new = Segment([node], seg)
        seg.children.insert(0, new)
        heads[node.id] = new
        return new, 0

    def _remove_last(self, seg: Segment) -> tuple[Segment, int] | None:
        """Remove the last row of ``seg`` (it has no children); returns where the removed
        entry's nearest shown ancestor is."""
        node = seg.nodes.pop()
        if seg.nodes:
            seg.path = min(seg.path, len(seg.nodes))
            self._grew(seg, -1)
            return seg, len(seg.nodes) - 1
        self._dirty = True
        heads = self.heads
        heads.pop(node.id, None)
        parent = seg.parent
        assert parent is not None
        parent.children.remove(seg)
        if parent is self.root:
            return None
        if len(parent.children) == 1:
            # The branch point is a plain chain again: its remaining child joins it.
            only = parent.children[0]
            heads.pop(only.nodes[0].id, None)
            joined = len(parent.nodes)
            parent.nodes.extend(only.nodes)
            parent.children = only.children
            for child in parent.children:
                child.parent = parent
            if only.path:
                parent.path = joined + only.path
            return parent, joined - 1
        return parent, len(parent.nodes) - 1

    def path_first(self) -> bool:
        """Is every segment of the active path the first of its siblings (as a fresh build
        orders them)? False after the leaf moved into a later branch."""
        return all(seg.parent is None or seg.parent.children[0] is seg for seg in self._path_segs)

    # ------------------------------------------------------------------ folds

    def fold(self, seg: Segment) -> bool:
        if seg.folded or not seg.foldable:
            return False
        seg.folded = True
        self._folds.append(seg)
        self._dirty = True
        return True

    def unfold(self, seg: Segment) -> bool:
        if not seg.folded:
            return False
        seg.folded = False
        self._dirty = True
        return True

    def clear_folds(self) -> None:
        """Unfold everything: O(folds made), not a walk of every segment (Esc on a search of
        a big session clears the folds of the rows it restores)."""
        changed = False
        for seg in self._folds:
            if seg.folded:
                seg.folded = False
                changed = True
        self._folds.clear()
        if changed:
            self._dirty = True

    # ------------------------------------------------------------------ subsets

    def restrict(
        self,
        keep: Callable[[Node], bool],
        *,
        tick: Tick | None = None,
        candidates: Callable[[list[Node]], list[int] | None] | None = None,
    ) -> TreeLayout:
        """The layout of the rows ``keep`` admits (a search): same order, each kept row under
        its nearest kept ancestor. One pass over the rows, nothing else is walked.

        ``candidates(nodes)``: the indices of a segment's entries that ``keep`` may admit (the
        others are skipped without calling it; None: all of them), for a fast prefilter.

        Only reads this layout (a worker thread may run it while the UI reads it too); it must
        be indexed (:meth:`ensure_indexed`) and must not change meanwhile."""
        if self._dirty or self._rows_dirty:
            raise RuntimeError("restrict() needs an indexed layout (ensure_rows)")
        out = TreeLayout(lambda n, leaf: self.shown(n, leaf) and keep(n), self.leaf)
        root, heads = out.root, out.heads
        top = _Frame(root)
        # (end row of the subtree, anchor frame)
        stack: list[tuple[int, _Frame]] = []
        done = 0
        next_tick = SEARCH_TICK_EVERY
        total = self._rows
        for seg in self.segments():
            row = seg.row
            end = row + seg.size
            while stack and stack[-1][0] <= row:
                stack.pop()
            frame = stack[-1][1] if stack else top
            pushed = False
            nodes = seg.nodes
            path = seg.path
            picked = candidates(nodes) if candidates is not None else None
            count = len(picked) if picked is not None else len(nodes)
            for lo in range(0, count, SEARCH_TICK_EVERY):
                for j in range(lo, min(lo + SEARCH_TICK_EVERY, count)):
                    k = picked[j] if picked is not None else j
                    node = nodes[k]
                    if not keep(node):
                        continue
                    if frame.kids == 0 and frame is not top:
                        sub = frame.seg
                        sub.nodes.append(node)
                        frame.kids = 1
                        frame.split = len(sub.nodes) - 1
                        frame = _Frame(sub)
                    else:
                        frame = _attach(node, frame, root, heads)
                    if k < path:
                        frame.seg.path = len(frame.seg.nodes)
                    if pushed:
                        stack[-1] = (end, frame)
                    else:
                        stack.append((end, frame))
                        pushed = True
                if picked is None:
                    done += min(SEARCH_TICK_EVERY, count - lo)
                if tick is not None and done >= next_tick:
                    next_tick = done + SEARCH_TICK_EVERY
                    tick(done, total)
            if picked is not None:
                done += len(nodes)
                if tick is not None and done >= next_tick:
                    next_tick = done + SEARCH_TICK_EVERY
                    tick(done, total)
        out._find_path()
        return out


def _attach(node: Node, frame: _Frame, root: Segment, heads: dict[str, Segment]) -> _Frame:
    """Attach ``node`` as a further child of ``frame``'s entry (a branch point or the top)."""
    seg = frame.seg
    if seg is not root and frame.kids == 1:
        # The second child: the first one's chain leaves the parent's segment.
        _split(seg, frame.split, heads)
    new = Segment([node], seg)
    seg.children.append(new)
    heads[node.id] = new
    frame.kids += 1
    return _Frame(new)


def _split(seg: Segment, at: int, heads: dict[str, Segment]) -> Segment:
    """Cut ``seg`` before entry ``at``: the rest becomes its only child segment (for now)."""
    tail = Segment(seg.nodes[at:], seg)
    del seg.nodes[at:]
    tail.children = seg.children
    for child in tail.children:
        child.parent = tail
    tail.path = max(0, seg.path - at)
    seg.path = min(seg.path, at)
    seg.children = [tail]
    heads[tail.nodes[0].id] = tail
    return tail


class _Counts:
    """Numbers with prefix sums and search in O(log n) (a Fenwick tree): the display lines of
    the segments on display, so an append does not shift every line after it."""

    __slots__ = ("_size", "_top", "_tree")

    def __init__(self, counts: list[int]) -> None:
        n = len(counts)
        tree = [0, *counts]
        for i in range(1, n + 1):
            j = i + (i & -i)
            if j <= n:
                tree[j] += tree[i]
        self._tree = tree
        self._size = n
        self._top = 1 << (n.bit_length() - 1) if n else 0

    def add(self, index: int, delta: int) -> None:
        tree, n = self._tree, self._size
        i = index + 1
        while i <= n:
            tree[i] += delta
            i += i & -i

    def before(self, index: int) -> int:
        """Sum of the numbers before ``index``."""
        tree = self._tree
        total = 0
        i = index
        while i > 0:
            total += tree[i]
            i -= i & -i
        return total

    def find(self, value: int) -> tuple[int, int]:
        """``(index, rest)``: the number at ``index`` covers ``value`` (``before(index) +
        rest == value``, ``0 <= rest < number``)."""
        tree, n = self._tree, self._size
        pos = 0
        rest = value
        bit = self._top
        while bit:
            nxt = pos + bit
            if nxt <= n and tree[nxt] <= rest:
                pos = nxt
                rest -= tree[nxt]
            bit >>= 1
        return pos, rest
