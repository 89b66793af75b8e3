"""Reading a session file into skeleton nodes without ever writing to it.

The fast path decodes only ``type``, ``id``, ``parentId``, ``timestamp`` and the message role of
each line (msgspec skips the rest); the full object is parsed later, when something asks.
Legacy files (v1, v2) are parsed in full and migrated in memory.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections import deque
from dataclasses import dataclass, field
from itertools import accumulate, count, repeat
from operator import attrgetter
from pathlib import Path
from typing import Any

import msgspec

from pitui import collector
from pitui.files import NotRegularFileError, open_regular
from pitui.session import codec
from pitui.session.errors import SessionFileError
from pitui.session.migrate import CURRENT_VERSION, header_version, migrate_entries
from pitui.session.node import LEAF_MARKER_TYPE, Node, make_node

CHUNK_SIZE = 8 * 1024 * 1024
BOM = b"\xef\xbb\xbf"
# Entry types whose full object the store needs at load time (labels, names, leaf markers).
EAGER_TYPES = frozenset({"label", "session_info", "custom"})
_SPECIAL_TYPES = EAGER_TYPES | {"session"}
_type_of = attrgetter("type")


_node_decoder = msgspec.json.Decoder(Node)


@dataclass(frozen=True)
class LoadWarning:
    """Something skipped or repaired while reading; ``line`` is 1-based when known."""

    line: int | None
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line is not None else self.message


@dataclass
class TailState:
    """How the file ends: clean, a complete last line without newline, or a torn last line."""

    kind: str = "clean"  # "clean" | "no_newline" | "torn"
    offset: int = 0  # where the torn bytes start (for "torn")


SIGNATURE_BYTES = 64
"""How many bytes before the end of what was read identify the file's content (see
:class:`FileSnapshot`)."""


@dataclass(frozen=True)
class FileSnapshot:
    """What a session file was when it was last read or written by this process.

    ``size`` bytes were read; ``signature`` is the last ``SIGNATURE_BYTES`` of them. The file is
    still "the same file, maybe appended to" while its device and inode match, it is not
    shorter, and the bytes before ``size`` still end with ``signature``.
    """

    device: int
    inode: int
    size: int
    mtime_ns: int
    signature: bytes


@dataclass
class LoadResult:
    header: dict[str, Any] | None
    nodes: list[Node] = field(default_factory=list)
    warnings: list[LoadWarning] = field(default_factory=list)
    tail: TailState = field(default_factory=TailState)
    migrated: bool = False
    header_raw: bytes = b""
    eager: list[Node] = field(default_factory=list)
    """Label, session_info and custom nodes (parsed in full at load)."""
    snapshot: FileSnapshot | None = None
    end: int = 0
    """Offset after the last line that was read as a line (a torn tail starts here)."""
    lines: int = 0
    """Lines read so far (the next line's number is ``lines + 1``)."""
    fd: int | None = None
    """A read-only descriptor on the file that was read (``keep_open=True``; the caller owns it)."""


def _refuse(path: Path, message: str, kind: str) -> SessionFileError:
    return SessionFileError(message, kind)


def open_session_fd(path: Path) -> tuple[int, os.stat_result]:
    """Open ``path`` for reading: never blocks, refuses anything but a regular file.

    Raises :class:`SessionFileError` (one sentence) when it is missing, unreadable, a
    directory, a FIFO, a device or a socket.
    """
    try:
        return open_regular(path)
    except FileNotFoundError:
        raise _refuse(path, f"Session file {path} does not exist.", "missing") from None
    except NotRegularFileError as exc:
        if exc.is_directory:
            message = f"{path} is a directory, not a session file."
        else:
            message = f"{path} is {exc.kind}, not a regular file, so it cannot be a session file."
        raise _refuse(path, message, "unreadable") from None
    except PermissionError:
        raise _refuse(path, f"Cannot read {path}: permission denied.", "unreadable") from None
    except OSError as exc:
        raise _refuse(path, f"Cannot read {path}: {exc.strerror}.", "unreadable") from None


def load_session_file(path: Path, *, keep_open: bool = False) -> LoadResult:
    """Read ``path``; :class:`SessionFileError` if it is missing, unreadable or not a session.

    Reads exactly the bytes the file held when it was opened (a file that grows meanwhile is
    never chased). An empty (0-byte) file gives ``LoadResult(header=None)``: an empty session.
    With ``keep_open`` the descriptor it read stays open in ``LoadResult.fd``.
    """
    fd, info = open_session_fd(path)
    try:
        with collector.paused():
            result = _read(fd, path, info)
    except OSError as exc:
        os.close(fd)
        if exc.errno == errno.EISDIR:
            message = f"{path} is a directory, not a session file."
            raise _refuse(path, message, "unreadable") from None
        raise _refuse(path, f"Cannot read {path}: {exc.strerror}.", "unreadable") from None
    except BaseException:
        os.close(fd)
        raise
    if keep_open:
        result.fd = fd
    else:
        os.close(fd)
    return result


def snapshot_of(fd: int, info: os.stat_result, size: int) -> FileSnapshot:
    """The :class:`FileSnapshot` of ``fd`` after ``size`` bytes of it are known."""
    start = max(0, size - SIGNATURE_BYTES)
    signature = os.pread(fd, size - start, start) if size else b""
    return FileSnapshot(info.st_dev, info.st_ino, size, info.st_mtime_ns, signature)


class _Reader:
    """Turns lines into nodes; keeps the header and the running state of one load."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.result = LoadResult(header=None)
        self.legacy: list[tuple[int, int, int, dict[str, Any]]] | None = None

    @property
    def ready(self) -> bool:
        """True once the header is read and the file is v3 (the fast path applies)."""
        return self.result.header is not None and self.legacy is None

    def warn(self, line: int | None, message: str) -> None:
        self.result.warnings.append(LoadWarning(line, message))

    def feed(self, line_no: int, offset: int, raw: bytes, is_last_unterminated: bool) -> None:
        if not raw.strip():
            return
        result = self.result
        if result.header is None:
            try:
                obj = codec.loads(raw)
            except ValueError:
                if is_last_unterminated:
                    result.tail = TailState("torn", offset)
                self.warn(line_no, "not valid JSON, skipped")
                return
            if not (
                isinstance(obj, dict)
                and obj.get("type") == "session"
                and isinstance(obj.get("id"), str)
            ):
                raise _refuse(
                    self.path,
                    f"{self.path} is not a pi session file (its first line is not a session "
                    "header).",
                    "invalid",
                )
            result.header = obj
            result.header_raw = raw
            if header_version(obj) < CURRENT_VERSION:
                self.legacy = []
            return
        if self.legacy is not None:
            try:
                obj = codec.loads(raw)
            except ValueError:
                if is_last_unterminated:
                    result.tail = TailState("torn", offset)
                self.warn(line_no, "not valid JSON, skipped")
                return
            if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
                self.warn(line_no, "valid JSON but not a session entry, skipped")
                return
            if obj["type"] == "session":
                self.warn(line_no, "a second session header, ignored")
                return
            self.legacy.append((line_no, offset, len(raw), obj))
            return
        try:
            node = _node_decoder.decode(raw)
            if not raw.isascii():
                raw.decode("utf-8")
        except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, RecursionError):
            self.slow_entry(line_no, offset, raw, is_last_unterminated)
            return
        node.line, node.offset, node.length = line_no, offset, len(raw)
        if node.type in _SPECIAL_TYPES and not self._eager(node, raw):
            return
        result.nodes.append(node)

    def fast_chunk(self, lines: list[bytes], first_line: int, first_offset: int) -> int | None:
        """Decode a chunk of well-formed v3 lines in one go; returns the offset after it, or
        None (nothing changed) if any line needs care.

        Invalid UTF-8 inside skipped fields is not checked here: the full parse later reads it
        the way Node.js does (U+FFFD), see ``codec.loads``.

        Everything per line happens in C (map, accumulate, setattr): this is the hot loop of
        opening a large session.
        """
        try:
            nodes = list(map(_node_decoder.decode, lines))
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            return None
        lengths = list(map(len, lines))
        offsets = list(accumulate(map((1).__add__, lengths), initial=first_offset))
        deque(map(setattr, nodes, repeat("length"), lengths), maxlen=0)
        deque(map(setattr, nodes, repeat("offset"), offsets), maxlen=0)
        deque(map(setattr, nodes, repeat("line"), count(first_line)), maxlen=0)
        types = list(map(_type_of, nodes))
        present = _SPECIAL_TYPES.intersection(types)
        if present:
            special: list[int] = []
            for kind in present:
                i = -1
                for _ in range(types.count(kind)):
                    i = types.index(kind, i + 1)
                    special.append(i)
            dropped = {i for i in sorted(special) if not self._eager(nodes[i], lines[i])}
            if dropped:
                nodes = [n for i, n in enumerate(nodes) if i not in dropped]
        self.result.nodes.extend(nodes)
        return offsets[-1]

    def _eager(self, node: Node, raw: bytes) -> bool:
        """Full parse for labels, names and custom entries; False for a stray header."""
        if node.type == "session":
            self.warn(node.line, "a second session header, ignored")
            return False
        node.data = codec.loads(raw)
        self.result.eager.append(node)
        if node.type == "custom" and node.data.get("customType") == LEAF_MARKER_TYPE:
            node.hidden = True
        return True

    def slow_entry(self, line_no: int, offset: int, raw: bytes, is_last_unterminated: bool) -> None:
        """One v3 line that the fast path refused: parse it in full and say what is wrong."""
        data = self._parse(line_no, offset, raw, is_last_unterminated)
        if data is None:
            return
        entry_type, entry_id = data.get("type"), data.get("id")
        if entry_type == "session":
            self.warn(line_no, "a second session header, ignored")
            return
        if not isinstance(entry_type, str) or not isinstance(entry_id, str):
            self.warn(line_no, "valid JSON but not a session entry (no type or id), skipped")
            return
        parent_id = data.get("parentId")
        if parent_id is not None and not isinstance(parent_id, str):
            self.warn(line_no, f"entry {entry_id} has a parentId that is not a string; made a root")
            parent_id = None
        message = data.get("message")
        role = message.get("role") if isinstance(message, dict) else None
        node = make_node(
            entry_id,
            parent_id,
            entry_type,
            role if isinstance(role, str) else None,
            data.get("timestamp"),
            line=line_no,
            offset=offset,
            length=len(raw),
            data=data,
        )
        if entry_type == "custom" and data.get("customType") == LEAF_MARKER_TYPE:
            node.hidden = True
        if entry_type in EAGER_TYPES:
            self.result.eager.append(node)
        self.result.nodes.append(node)

    def _parse(
        self, line_no: int, offset: int, raw: bytes, is_last_unterminated: bool
    ) -> dict[str, Any] | None:
        """Full parse of one line; None (with a warning) when it is not a JSON object."""
        try:
            obj = codec.loads(raw)
        except ValueError:
            if is_last_unterminated:
                self.result.tail = TailState("torn", offset)
            self.warn(line_no, "not valid JSON, skipped")
            return None
        if not isinstance(obj, dict):
            self.warn(line_no, "valid JSON but not a session entry, skipped")
            return None
        return obj

    def finish_legacy(self) -> None:
        assert self.result.header is not None and self.legacy is not None
        pairs = migrate_entries(self.result.header, [(ln, obj) for ln, _, _, obj in self.legacy])
        self.result.migrated = True
        for (line_no, offset, length, _), (_, obj) in zip(self.legacy, pairs, strict=True):
            if not isinstance(obj.get("id"), str):
                # v2 entries carry their own ids; one without is not an entry (as in v3).
                self.warn(line_no, "valid JSON but not a session entry (no id), skipped")
                continue
            message = obj.get("message")
            role = message.get("role") if isinstance(message, dict) else None
            parent = obj.get("parentId")
            node = make_node(
                obj["id"],
                parent if isinstance(parent, str) else None,
                obj["type"],
                role if isinstance(role, str) else None,
                obj.get("timestamp"),
                line=line_no,
                offset=offset,
                length=length,
                data=obj,
            )
            if node.type == "custom" and obj.get("customType") == LEAF_MARKER_TYPE:
                node.hidden = True
            self.result.nodes.append(node)


def _read(fd: int, path: Path, info: os.stat_result) -> LoadResult:
    reader = _Reader(path)
    size = info.st_size
    end, line_no = _scan(reader, fd, 0, size, 0, strip_bom=True)
    result = reader.result
    result.end, result.lines = end, line_no
    if result.header is None:
        if size == 0:
            result.snapshot = snapshot_of(fd, info, 0)
            return result
        raise _refuse(
            path, f"{path} is not a pi session file (it has no session header).", "invalid"
        )
    if reader.legacy is not None:
        reader.finish_legacy()
    result.snapshot = snapshot_of(fd, info, size)
    return result


def _scan(
    reader: _Reader, fd: int, start: int, stop: int, line_no: int, *, strip_bom: bool = False
) -> tuple[int, int]:
    """Feed the lines of bytes ``[start, stop)`` of ``fd`` to ``reader``.

    Returns ``(end, line_no)``: the offset after the last line read as a line (a last line
    without newline counts when it parses; a torn one does not, and ``reader.result.tail``
    says where it starts) and the number of the last line.
    """
    carry = b""
    carry_offset = start
    first = strip_bom
    pos = start
    while pos < stop:
        chunk = os.pread(fd, min(CHUNK_SIZE, stop - pos), pos)
        if not chunk:
            break  # the file shrank while it was read: what is there is what counts
        pos += len(chunk)
        if first:
            first = False
            if chunk.startswith(BOM):
                chunk = chunk[len(BOM) :]
                carry_offset = start + len(BOM)
        lines = chunk.split(b"\n")
        if carry:
            lines[0] = carry + lines[0]
        carry = lines.pop()
        offset = carry_offset
        index = 0
        while index < len(lines) and not reader.ready:
            line_no += 1
            reader.feed(line_no, offset, lines[index], False)
            offset += len(lines[index]) + 1
            index += 1
        rest = lines[index:] if index else lines
        end = reader.fast_chunk(rest, line_no + 1, offset) if rest and reader.ready else None
        if end is not None:
            line_no += len(rest)
            offset = end
        else:
            for raw in rest:
                line_no += 1
                reader.feed(line_no, offset, raw, False)
                offset += len(raw) + 1
        carry_offset = offset
    result = reader.result
    end = carry_offset
    if carry:
        result.tail = TailState()
        reader.feed(line_no + 1, carry_offset, carry, True)
        if result.tail.kind == "torn":
            return end, line_no  # not a line (yet): its bytes are not consumed
        line_no += 1
        end = carry_offset + len(carry)
        # A complete last line (or trailing blanks) that only lacks its newline.
        result.tail = TailState("no_newline", carry_offset)
    else:
        result.tail = TailState()
    return end, line_no


@dataclass
class MoreLines:
    """Lines another writer appended to an open session (see :func:`read_more`)."""

    nodes: list[Node]
    eager: list[Node]
    warnings: list[LoadWarning]
    end: int
    lines: int
    tail: TailState


def read_more(
    fd: int, path: Path, header: dict[str, Any], start: int, stop: int, line_no: int
) -> MoreLines:
    """Parse the v3 lines in bytes ``[start, stop)`` of an open session file.

    Only complete lines count; a last line without newline that does not parse is left for
    later (it may still be being written), and ``tail`` says where it starts.
    """
    reader = _Reader(path)
    reader.result.header = header
    end, lines = _scan(reader, fd, start, stop, line_no)
    result = reader.result
    return MoreLines(result.nodes, result.eager, result.warnings, end, lines, result.tail)


def read_header(path: Path, limit: int = 1024 * 1024) -> dict[str, Any] | None:
    """The session header of ``path`` (first parsed line within ``limit`` bytes), or None.

    None too for anything that is not a regular file (never blocks on a FIFO)."""
    try:
        fd, _ = open_regular(path)
    except OSError:
        return None
    try:
        data = os.pread(fd, limit, 0)
    except OSError:
        return None
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    if data.startswith(BOM):
        data = data[len(BOM) :]
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            obj = codec.loads(raw)
        except ValueError:
            continue
        if (
            isinstance(obj, dict)
            and obj.get("type") == "session"
            and isinstance(obj.get("id"), str)
        ):
            return obj
        return None
    return None


__all__ = [
    "FileSnapshot",
    "LoadResult",
    "LoadWarning",
    "MoreLines",
    "TailState",
    "load_session_file",
    "open_session_fd",
    "read_header",
    "read_more",
    "snapshot_of",
]
