"""Listing session files: one file at a time, never more than one file's entries in memory."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import msgspec

from pitui.files import open_regular
from pitui.session import codec
from pitui.session.ids import iso_to_ms, ms_to_iso
from pitui.session.loader import BOM, read_header
from pitui.session.shapes import message_text


class _ListMessage(msgspec.Struct, gc=False):
    role: Any = None
    timestamp: Any = None


class _ListSkeleton(msgspec.Struct, gc=False):
    type: Any = None
    timestamp: Any = None
    name: Any = None
    message: _ListMessage | None = None


_decoder = msgspec.json.Decoder(_ListSkeleton)


@dataclass(frozen=True)
class SessionInfo:
    path: str
    id: str
    name: str | None
    firstMessage: str
    created: str | None
    modified: str
    messageCount: int
    cwd: str
    parentSession: str | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def modified_ms(self) -> float:
        return iso_to_ms(self.modified) or 0.0


def read_session_info(path: Path) -> SessionInfo | None:
    """Summary of one file, or None when it is not a session (no header) or not a regular
    file (a FIFO in the folder must not block the listing)."""
    try:
        fd, info = open_regular(path)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as f:
            return _scan(path, f, info.st_mtime * 1000)
    except OSError:
        return None


def _scan(path: Path, lines: Iterable[bytes], mtime: float) -> SessionInfo | None:
    header: dict[str, Any] | None = None
    name: str | None = None
    first_message: str | None = None
    count = 0
    modified: float | None = None
    for raw in lines:
        if not raw.strip():
            continue
        if header is None:
            if raw.startswith(BOM):
                raw = raw[len(BOM) :]
            try:
                obj = codec.loads(raw)
            except ValueError:
                continue
            if not isinstance(obj, dict) or obj.get("type") != "session":
                return None
            header = obj
            continue
        try:
            sk = _decoder.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
        if sk.type == "session_info":
            name = sk.name.strip() if isinstance(sk.name, str) and sk.name.strip() else None
        elif sk.type == "message" and sk.message is not None:
            count += 1
            role = sk.message.role
            if role in ("user", "assistant"):
                ts = sk.message.timestamp
                ms = ts if isinstance(ts, int | float) and not isinstance(ts, bool) else None
                if ms is None:
                    ms = iso_to_ms(sk.timestamp)
                if ms is not None and (modified is None or ms > modified):
                    modified = ms
            if role == "user" and first_message is None:
                try:
                    entry = codec.loads(raw)
                except ValueError:
                    entry = {}
                text = message_text(entry.get("message"), " ")
                first_message = text
    if header is None:
        return None
    if modified is None:
        modified = iso_to_ms(header.get("timestamp"))
    if modified is None:
        modified = mtime
    cwd = header.get("cwd")
    parent = header.get("parentSession")
    return SessionInfo(
        path=str(path),
        id=str(header.get("id")),
        name=name,
        firstMessage=first_message if first_message is not None else "(no messages)",
        created=header.get("timestamp") if isinstance(header.get("timestamp"), str) else None,
        modified=ms_to_iso(int(modified)),
        messageCount=count,
        cwd=cwd if isinstance(cwd, str) else "",
        parentSession=parent if isinstance(parent, str) else None,
    )


def session_files(folder: Path) -> list[Path]:
    try:
        return [p for p in folder.iterdir() if p.suffix == ".jsonl" and p.is_file()]
    except OSError:
        return []


def list_sessions(folders: Iterable[Path], cwd: str | None = None) -> list[SessionInfo]:
    """Sessions in ``folders`` (newest first); only those whose header cwd is ``cwd`` if given."""
    out: list[SessionInfo] = []
    for folder in folders:
        for path in session_files(folder):
            info = read_session_info(path)
            if info is None:
                continue
            if cwd is not None and info.cwd != cwd:
                continue
            out.append(info)
    out.sort(key=lambda i: i.modified_ms, reverse=True)
    return out


def find_most_recent(folder: Path, cwd: str | None = None) -> Path | None:
    """The valid session file with the newest modification time (as pi's ``--continue``)."""
    best: tuple[float, Path] | None = None
    for path in session_files(folder):
        header = read_header(path)
        if header is None:
            continue
        if cwd is not None and header.get("cwd") != cwd:
            continue
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        if best is None or mtime > best[0]:
            best = (mtime, path)
    return best[1] if best else None


def unique_prefixes(ids: list[str], minimum: int = 8) -> dict[str, str]:
    """The shortest prefix of each id (at least ``minimum`` characters) that no other id in
    ``ids`` starts with, like git's abbreviated hashes; an id that is a prefix of another is
    given whole."""
    ordered = sorted(set(ids))
    out: dict[str, str] = {}
    for index, value in enumerate(ordered):
        need = minimum
        for other in (
            ordered[index - 1] if index else None,
            ordered[index + 1] if index + 1 < len(ordered) else None,
        ):
            if other is None:
                continue
            common = 0
            for a, b in zip(value, other, strict=False):
                if a != b:
                    break
                common += 1
            need = max(need, common + 1)
        out[value] = value[:need]
    return out
