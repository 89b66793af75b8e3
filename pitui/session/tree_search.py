"""Searching the session tree as pi's tree selector does, without parsing every entry.

pi's rule: the query is lowercased and split on whitespace; an entry matches when every token
is a substring of its searchable text: its label, role, one-line text, the start of its content
(200 characters), a bash command, its customType, and a few words by kind (``branch summary``,
``title <name>``, ``context edit omit|replace <target>``).

Parsing every entry for that costs seconds on a 200k-entry session, so :class:`Matcher` first
looks for each token in the entry's stored line (and, for a tool result, in the lines of the
assistant messages that may hold its call). Only an entry whose line contains every token is
parsed and checked exactly. That prefilter never drops a match: a token that could come from
text the line does not contain verbatim (a decoration such as ``[read: ``, a computed number, a
``~`` home directory, an escape sequence removed for display, JSON escapes) sends the entry to
the exact check instead (see :func:`token_needs_parse`).
"""

from __future__ import annotations

import os
import re
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from itertools import islice
from operator import add, attrgetter, ge
from typing import Any

from pitui.lru import LruCache
from pitui.session import codec
from pitui.session.node import Node
from pitui.session.oneline import entry_text
from pitui.session.shapes import message_text, tool_calls
from pitui.session.store import SessionStore
from pitui.text import terminal_line

LINE_LIMIT = 400
"""Characters of an entry's one-line text that the tree shows (and searches)."""

CALL_LOOKBACK = 64
"""How far up the tree a tool result looks for the assistant message holding its call."""

Read = Callable[[Node], bytes]

# Words the one-line texts and the searchable text add around what the entry holds.
_DECORATION_WORDS = (
    *("user", "assistant", "aborted", "error", "no", "content", "read", "write", "edit", "ls"),
    *("bash", "grep", "in", "find", "tool", "system", "compaction", "k", "tokens", "branch"),
    *("summary", "model", "thinking", "custom", "label", "cleared", "title", "empty"),
    *("context", "omit", "replace", "usage", "message", "bashexecution"),
)
# Characters those decorations add (brackets, colons, ``~``, ``...``, ``/pattern/``, JSON).
_DECORATION_CHARS = frozenset('[]():~-./?"\\{}')
# A stored line whose decoded text differs from its bytes beyond what tokens can contain:
# \u escapes, \b and \f (removed as controls), C1 controls (removed as escapes).
_C1_BYTES = re.compile(rb"\xc2[\x80-\x9f]")


def _line_needs_parse(raw: bytes) -> bool:
    return (
        b"\\u" in raw
        or b"\\b" in raw
        or b"\\f" in raw
        or (b"\xc2" in raw and _C1_BYTES.search(raw) is not None)
    )


def query_tokens(query: str) -> list[str]:
    return query.lower().split()


def token_needs_parse(token: str) -> bool:
    """Could ``token`` match text that no stored line holds verbatim (then entries are checked
    by parsing them)? True for tokens with decoration characters, and for pieces of the
    decoration words (``ser``, ``tok``...)."""
    if any(c in _DECORATION_CHARS for c in token):
        return True
    return any(token in word for word in _DECORATION_WORDS)


def _has_digit(token: str) -> bool:
    return any(c.isdigit() for c in token)


def _peek(store: SessionStore, node: Node, read: Read) -> dict[str, Any]:
    """The entry object, without keeping it parsed (the store caches what it parses)."""
    data: Any = node.data
    if isinstance(data, dict):
        return data
    try:
        data = codec.loads(read(node))
    except (ValueError, OSError):
        return store.data(node)
    return data if isinstance(data, dict) else {}


def find_call(
    store: SessionStore,
    node: Node,
    call_id: str,
    read: Read,
    parsed: Callable[[Node], dict[str, Any]] | None = None,
) -> dict[str, Any] | None:
    """The tool call ``call_id`` of a tool result: in the nearest assistant messages above."""
    cur = node.parent
    for _ in range(CALL_LOOKBACK):
        if cur is None:
            return None
        if cur.type == "message" and cur.role == "assistant":
            data = parsed(cur) if parsed is not None else _peek(store, cur, read)
            for block in tool_calls(data.get("message")):
                if block.get("id") == call_id:
                    return block
        cur = cur.parent
    return None


def entry_line(
    store: SessionStore,
    node: Node,
    read: Read | None = None,
    parsed: Callable[[Node], dict[str, Any]] | None = None,
) -> str:
    """pi's one-line text of an entry, escapes removed, on one line, cut to LINE_LIMIT."""
    reader = read or store.raw_line
    data = parsed(node) if parsed is not None else _peek(store, node, reader)

    def call(call_id: str) -> dict[str, Any] | None:
        return find_call(store, node, call_id, reader, parsed)

    raw = entry_text(data, call)
    return terminal_line(raw)[:LINE_LIMIT]


def search_text(
    store: SessionStore,
    node: Node,
    read: Read | None = None,
    parsed: Callable[[Node], dict[str, Any]] | None = None,
) -> str:
    """pi's searchable text, lowercased (the label is not in it: see :class:`Matcher`)."""
    reader = read or store.raw_line
    data = parsed(node) if parsed is not None else _peek(store, node, reader)
    parts = [node.role or "", entry_line(store, node, reader, parsed)]
    message = data.get("message")
    if isinstance(message, dict):
        parts.append(message_text(message, " ")[:200])
        command = message.get("command")
        if isinstance(command, str):
            parts.append(command)
    kind = node.type
    if kind == "branch_summary":
        parts.append("branch summary")
    elif kind == "session_info":
        parts.append(f"title {data.get('name') or ''}")
    elif kind == "context_edit":
        verb = "omit" if data.get("replacement") is None else "replace"
        parts.append(f"context edit {verb} {data.get('targetId')}")
    custom_type = data.get("customType")
    if isinstance(custom_type, str):
        parts.append(custom_type)
    return " ".join(parts).lower()


def matches_exactly(
    store: SessionStore, node: Node, tokens: list[str], read: Read | None = None
) -> bool:
    """The plain rule, parsing the entry (what :class:`Matcher` must agree with)."""
    text = search_text(store, node, read)
    label = store.label_of(node.id)
    if label:
        text = f"{label.lower()} {text}"
    return all(token in text for token in tokens)


class Matcher:
    """``matcher(node)``: does the entry match every token. Reads lines through ``read``."""

    def __init__(self, store: SessionStore, tokens: list[str], read: Read) -> None:
        self.store = store
        self.tokens = tokens
        self.read = read
        self._safe = [not token_needs_parse(t) for t in tokens]
        """Tokens whose absence from the stored lines rules an entry out (the others are only
        checked by parsing the entries that pass)."""
        self._ascii = all(t.isascii() for t in tokens)
        self._btokens = [t.encode() for t in tokens]
        self._digits = [_has_digit(t) for t in tokens]
        self._parsed: LruCache[str, dict[str, Any]] = LruCache(16)
        self._hay_of: bytes | None = None
        self._hay: bytes | str = b""
        self.parsed_count = 0
        """How many entries needed the exact check (a measure of the prefilter)."""
        self.scan: FileScan | None = None
        """Where the tokens are in the file (:meth:`scan_file`); without it, each entry's line
        is read and searched."""
        self._maybe: set[int] | None = None
        self._labeled: set[str] = set()

    def scan_file(
        self, tick: Callable[[int, int], None] | None = None, index: FileIndex | None = None
    ) -> None:
        """Find the tokens in the whole session file at once (much faster than per entry on a
        large session). Entries the scan does not cover are still checked one by one.
        ``index``: the file's :class:`FileIndex` when one was made already."""
        usable = [i for i, t in enumerate(self.tokens) if self._safe[i] and t.isascii()]
        if usable:
            self.scan = FileScan.run(self.store, self.tokens, usable, self.read, tick, index)

    def candidates(self, nodes: list[Node]) -> list[int] | None:
        """Indices of the entries of ``nodes`` that may match (the others cannot), found at
        C speed from the file scan; None when every entry must be checked."""
        scan = self.scan
        if scan is None:
            return None
        if self._maybe is None:
            self._maybe = scan.maybe()
            self._labeled = set(self.store.labels)
        maybe = self._maybe
        if maybe is None:
            return None
        offsets = list(map(_offset_of, nodes))
        flags = bytearray(map(maybe.__contains__, offsets))
        # An entry appended after the scan is checked alone; a label can hold the tokens.
        covered = bytes(map(scan.lines.__contains__, offsets))  # a range: in C
        at = covered.find(0)
        while at >= 0:
            flags[at] = 1
            at = covered.find(0, at + 1)
        if self._labeled:
            labeled = bytes(map(self._labeled.__contains__, map(_id_of, nodes)))
            at = labeled.find(1)
            while at >= 0:
                flags[at] = 1
                at = labeled.find(1, at + 1)
        out = []
        at = flags.find(1)
        while at >= 0:
            out.append(at)
            at = flags.find(1, at + 1)
        return out

    def _parse(self, node: Node) -> dict[str, Any]:
        """Parsed entries, a few kept (tool results of one assistant share its calls)."""
        cached = self._parsed.get(node.id)
        if cached is not None:
            return cached
        data = _peek(self.store, node, self.read)
        self._parsed.put(node.id, data)
        return data

    def _exact(self, node: Node, tokens: list[str]) -> bool:
        self.parsed_count += 1
        text = search_text(self.store, node, self.read, self._parse)
        return all(token in text for token in tokens)

    def __call__(self, node: Node) -> bool:
        tokens = self.tokens
        label = self.store.label_of(node.id)
        if label:
            lowered = label.lower()
            pending = [i for i, t in enumerate(tokens) if t not in lowered]
            if not pending:
                return True
        else:
            pending = list(range(len(tokens)))
        role = node.role
        if role:
            # The searchable text starts with the role: a token in it matches without parsing.
            lowered = role.lower()
            pending = [i for i in pending if tokens[i] not in lowered]
            if not pending:
                return True
        rest = [tokens[i] for i in pending]
        safe = self._safe
        pending = [i for i in pending if safe[i]]
        if not pending:
            return self._exact(node, rest)
        scan = self.scan
        if scan is not None and node.offset in scan.lines:
            return scan.admits(node, pending) and self._exact(node, rest)
        raw = self.read(node)
        if _line_needs_parse(raw):
            return self._exact(node, rest)
        calls: list[bytes] | None = None
        for i in pending:
            if self._present(raw, i):
                if self._digits[i] and self._computed_digits(node, raw):
                    return self._exact(node, rest)
                continue
            if self._digits[i] and self._computed_digits(node, raw):
                return self._exact(node, rest)
            if role != "toolResult":
                return False
            if calls is None:
                calls = self._call_lines(node, raw)
            if not calls:
                return False
            for line in calls:
                if _line_needs_parse(line) or (self._digits[i] and b'"limit"' in line):
                    return self._exact(node, rest)
            if not any(self._present(line, i) for line in calls):
                return False
        return self._exact(node, rest)

    def _present(self, raw: bytes, i: int) -> bool:
        if raw is not self._hay_of:
            self._hay_of = raw
            if self._ascii and raw.isascii():
                self._hay = raw.lower()
            else:
                self._hay = raw.decode("utf-8", "replace").lower()
        hay = self._hay
        if isinstance(hay, bytes):
            return self._btokens[i] in hay
        return self.tokens[i] in hay

    @staticmethod
    def _computed_digits(node: Node, raw: bytes) -> bool:
        """Digits the one-line text computes: ``[compaction: 12k tokens]``, read ranges."""
        return node.type == "compaction" or (
            node.role in ("assistant", "toolResult") and b'"limit"' in raw
        )

    def _call_lines(self, node: Node, raw: bytes) -> list[bytes]:
        """Lines of the assistant messages above that mention this tool result's call id."""
        match = _CALL_ID.search(raw)
        if match is None:
            return []
        value = match.group(1)
        keys = (b'"id":"' + value + b'"', b'"id": "' + value + b'"')
        out: list[bytes] = []
        cur = node.parent
        for _ in range(CALL_LOOKBACK):
            if cur is None:
                break
            if cur.type == "message" and cur.role == "assistant":
                line = self.read(cur)
                if keys[0] in line or keys[1] in line:
                    out.append(line)  # the call (a JSON key "id" with this value)
                    break
                if b"\\u" in line:
                    out.append(line)  # may spell the id with escapes: checked by parsing
            cur = cur.parent
        return out


_CALL_ID = re.compile(rb'"toolCallId"\s*:\s*"((?:[^"\\]|\\.)*)"')


# ----------------------------------------------------------------------------- the file scan

SCAN_BLOCK = 1 << 22
"""Bytes of the session file scanned at a time."""

_ID = re.compile(rb'"id"\s*:\s*"((?:[^"\\]|\\.)*)"')
# The escapes that make a line need parsing (``\u``, ``\b``, ``\f``), found in one pass: three
# ``bytes.find`` passes took 11.5 ms per 4 MB block of a generated session, one regex 1.8.
_ESCAPE_MARKERS = re.compile(rb"\\[ubf]")
_offset_of = attrgetter("offset")
_length_of = attrgetter("length")
_id_of = attrgetter("id")


class FileIndex:
    """What every search needs to know about the stored lines, whatever the query: where each
    line is, which lines need parsing (escapes), which hold a ``"limit"``, which tool results
    name which call id, where the compactions are. Made once by scanning the file
    (:meth:`build`) and shared by the searches that follow (it is never changed after it is
    made, so worker threads can read it together). Entries appended later are not covered:
    searches check them one by one."""

    def __init__(self, starts: array[int], ends: array[int], nodes: list[Node]) -> None:
        self.starts = starts
        self.ends = ends
        self.nodes = nodes
        """The entries covered, in file order (``starts[i]`` is where ``nodes[i]`` is)."""
        self.lines = range(starts[0], ends[-1])
        """Where the lines covered are: every entry shown whose line starts in this range (an
        entry appended later starts after it)."""
        self.needs_parse: set[int] = set()
        self.limit: set[int] = set()
        self.calls: dict[int, int | list[int]] = {}
        """``hash`` of a call id as the lines spell it -> the line (offset) of the tool result
        naming it, or a list of them when there are several. Hashes and the entries' own
        offset objects, no copies: at 1M entries this was 62 of the index's 137 MiB as bytes
        keys with a list each. Two ids with one hash would only add a candidate, which the
        exact check drops."""
        self._compactions: set[int] | None = None

    def results_naming(self, call_id: bytes) -> Sequence[int]:
        """The lines (offsets) of the tool results whose ``toolCallId`` is spelled ``call_id``
        (a superset: see :attr:`calls`)."""
        found = self.calls.get(hash(call_id))
        if found is None:
            return ()
        return (found,) if isinstance(found, int) else found

    def node_at(self, offset: int) -> Node:
        """The entry whose line starts at ``offset`` (one of :attr:`lines`)."""
        return self.nodes[bisect_left(self.starts, offset)]

    @property
    def compactions(self) -> set[int]:
        """Offsets of the compaction entries (made when first asked for)."""
        found = self._compactions
        if found is None:
            found = self._compactions = {n.offset for n in self.nodes if n.type == "compaction"}
        return found

    @property
    def first(self) -> int:
        return self.starts[0]

    @property
    def end(self) -> int:
        return self.ends[-1]

    @classmethod
    def build(
        cls, store: SessionStore, tick: Callable[[int, int], None] | None = None
    ) -> FileIndex | None:
        """Scan the session file once (None: its lines are not stored as-is, or it is empty)."""
        path = store.path
        if path is None or not store.lines_as_stored:
            return None
        nodes = [n for n in store.nodes() if n.offset >= 0]
        if not nodes:
            return None
        # Straight into arrays: a list of a million new ints for the ends was ~30 MiB more.
        starts = array("q", map(_offset_of, nodes))
        if any(map(ge, starts, islice(starts, 1, None))):
            return None  # not in file order (never expected): check line by line
        ends = array("q", map(add, starts, map(_length_of, nodes)))
        index = cls(starts, ends, nodes)
        calls = index.calls
        first, end = starts[0], ends[-1]
        blocks = _file_blocks(path, first, end, 4096, tick)
        if blocks is None:
            return None
        for pos, size, data in blocks:
            _mark(data, _ESCAPE_MARKERS, pos, size, starts, ends, index.needs_parse)
            c1 = _C1_BYTES.search(data, 0, size + 1)
            while c1 is not None and c1.start() < size:
                line = _line_at(pos + c1.start(), starts, ends)
                if line is not None:
                    index.needs_parse.add(starts[line])
                c1 = _C1_BYTES.search(data, c1.start() + 1, size + 1)
            _mark(data, b'"limit"', pos, size, starts, ends, index.limit)
            for match in _CALL_ID.finditer(data, 0, size + 4096):
                if match.start() >= size:
                    break
                line = _line_at(pos + match.start(), starts, ends)
                if line is None:
                    continue
                key = hash(match.group(1))
                offset = nodes[line].offset  # the entry's own int object
                known = calls.get(key)
                if known is None:
                    calls[key] = offset
                elif isinstance(known, int):
                    calls[key] = [known, offset]
                else:
                    known.append(offset)
        return index


def _file_blocks(
    path: str | os.PathLike[str],
    first: int,
    end: int,
    overlap: int,
    tick: Callable[[int, int], None] | None,
) -> Iterator[tuple[int, int, bytes]] | None:
    """Blocks of bytes ``first``..``end`` of the file: (position, size, the block and
    ``overlap`` bytes more, so a match that starts in the block is whole); ``tick(done,
    total)`` after each. None when the file cannot be opened."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    return _blocks(fd, first, end, overlap, tick)


def _blocks(
    fd: int, first: int, end: int, overlap: int, tick: Callable[[int, int], None] | None
) -> Iterator[tuple[int, int, bytes]]:
    try:
        pos = first
        while pos < end:
            size = min(SCAN_BLOCK, end - pos)
            yield pos, size, os.pread(fd, size + overlap, pos)
            pos += size
            if tick is not None:
                tick(pos - first, end - first)
    finally:
        os.close(fd)


class FileScan:
    """Which stored lines hold each token, found by scanning the session file in large blocks
    (lowercased in C, then ``find``), instead of reading and searching line by line.

    For token ``i`` an entry can match only if its line holds the token, or its line needs
    parsing (escapes), or it is a tool result whose call's line holds it, or (a token with
    digits) its text computes digits (a compaction, a ``read`` with a ``limit``). Those are
    the same rules as :class:`Matcher`'s line-by-line check, for every line at once. What does
    not depend on the tokens comes from a :class:`FileIndex`.
    """

    def __init__(self, index: FileIndex, tokens: int) -> None:
        self.index = index
        self.lines = index.lines
        """Where the lines the scan covers are (see :attr:`FileIndex.lines`)."""
        self.hits: list[set[int]] = [set() for _ in range(tokens)]
        self.calls: list[set[int]] = [set() for _ in range(tokens)]
        self.needs_parse = index.needs_parse
        self.limit = index.limit
        self.digits: list[bool] = [False] * tokens
        self.scanned: set[int] = set()
        """The tokens looked for (ASCII ones: bytes are lowercased as ASCII only)."""

    def admits(self, node: Node, pending: list[int]) -> bool:
        """Can ``node`` (a scanned line) hold every pending token (then it is parsed)?"""
        offset = node.offset
        if offset in self.needs_parse:
            return True
        tool = node.role == "toolResult"
        for i in pending:
            if i not in self.scanned or offset in self.hits[i]:
                continue
            if tool and offset in self.calls[i]:
                continue
            if self.digits[i] and (node.type == "compaction" or offset in self.limit):
                continue
            return False
        return True

    def maybe(self) -> set[int] | None:
        """Offsets of the covered lines that can match whatever else holds (a superset of
        :meth:`admits` over every token scanned, labels aside); None: no token was scanned."""
        index = self.index
        allowed: set[int] | None = None
        for i in sorted(self.scanned):
            ok = self.hits[i] | self.calls[i]
            if self.digits[i]:
                ok |= self.limit | index.compactions
            allowed = ok if allowed is None else allowed & ok
        if allowed is None:
            return None
        return allowed | self.needs_parse

    @classmethod
    def run(
        cls,
        store: SessionStore,
        tokens: list[str],
        usable: list[int],
        read: Read,
        tick: Callable[[int, int], None] | None,
        index: FileIndex | None = None,
    ) -> FileScan | None:
        if index is None:
            index = FileIndex.build(store)
        if index is None:
            return None
        scan = cls(index, len(tokens))
        scan.scanned = set(usable)
        for i in usable:
            scan.digits[i] = _has_digit(tokens[i])
        needles = [(i, tokens[i].encode()) for i in usable]
        starts, ends = index.starts, index.ends
        first, end = index.first, index.end
        overlap = max(4096, *(len(needle) for _, needle in needles))
        path = store.path
        if path is None:
            return None
        blocks = _file_blocks(path, first, end, overlap, tick)
        if blocks is None:
            return None
        for pos, size, data in blocks:
            low = data.lower()
            for i, needle in needles:
                _mark(low, needle, pos, size, starts, ends, scan.hits[i])
        for i in usable:
            hot = scan.hits[i] | scan.needs_parse
            if scan.digits[i]:
                hot |= scan.limit
            for offset in hot:
                node = index.node_at(offset)
                if node.role != "assistant":
                    continue
                for call_id in _call_ids(store, node, read, offset in scan.needs_parse):
                    scan.calls[i].update(index.results_naming(call_id))
        return scan


def _line_at(position: int, starts: Sequence[int], ends: Sequence[int]) -> int | None:
    """Index of the stored line holding byte ``position`` (None: a header or marker line)."""
    index = bisect_right(starts, position) - 1
    if index >= 0 and position < ends[index]:
        return index
    return None


def _mark(
    data: bytes,
    needle: bytes | re.Pattern[bytes],
    base: int,
    size: int,
    starts: Sequence[int],
    ends: Sequence[int],
    out: set[int],
) -> None:
    """Add the offset of every line of ``data`` (at file offset ``base``) holding ``needle``
    or a match of it (occurrences starting in the first ``size`` bytes)."""

    def find(at: int) -> int:
        if isinstance(needle, bytes):
            return data.find(needle, at)
        found = needle.search(data, at)
        return -1 if found is None else found.start()

    at = find(0)
    while 0 <= at < size:
        line = _line_at(base + at, starts, ends)
        if line is None:
            at = find(at + 1)
            continue
        out.add(starts[line])
        at = find(max(at + 1, ends[line] - base))


def _call_ids(store: SessionStore, node: Node, read: Read, parse: bool) -> list[bytes]:
    """The ids of an assistant message's tool calls, as a tool result's line spells them
    (every ``"id"`` value of the line: a superset)."""
    line = read(node)
    ids = [m.group(1) for m in _ID.finditer(line)]
    if parse:
        data = _peek(store, node, read)
        for block in tool_calls(data.get("message")):
            value = block.get("id")
            if isinstance(value, str):
                ids.append(value.encode())
    return ids
