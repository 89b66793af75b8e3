"""``@path`` in a prompt: the file's content goes into the message, as pi puts an ``@file``.

A mention starts a word (the start of the prompt, or after a space or an opening bracket or
quote) and names a regular file: ``@src/app.py``, ``@~/notes.md``, ``@/etc/hosts``, or
``@"a name with spaces.txt"``. Punctuation ending a sentence is not part of it (``look at
@a.py.``). Anything else (``@property``, ``user@example.com``, a folder, a missing file) stays
text as typed.

The message is the prompt as typed, after one text block per file in pi's form (the absolute
path, then the content)::

    <file name="/home/me/app/a.py">
    print("hi")
    </file>

and ``pituiFiles`` records them (:class:`pitui.session.shapes.AttachedFile`; pi ignores the
field and reads the blocks as the text it would have sent). What is too big is cut at the read
tool's limits (2000 lines or 50 KB) with a note saying how to read on; a binary file, or one
that cannot be read, is named with a note and none of its bytes.

Reads files: call :func:`expand_mentions` from a thread.
"""

from __future__ import annotations

import codecs
import html
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pitui.agent.tools.base import format_size
from pitui.files import NotRegularFileError, check_regular, open_regular
from pitui.session.shapes import ATTACHED_FILES

MAX_LINES = 2000
MAX_BYTES = 50 * 1024
MAX_FILES = 20
"""Mentions beyond these stay text."""
_SNIFF = 8192
_MENTION = re.compile(r'(?:^|(?<=[\s(\[{<"\'`]))@(?:"([^"\n]+)"|(\S+))')
_TRAILING = ".,;:!?)]}>'\"`"


@dataclass(frozen=True)
class FileBlock:
    """One attached file: its record and the text block the model reads."""

    record: dict[str, Any]
    text: str


@dataclass(frozen=True)
class Prompt:
    """A prompt as typed and the files it mentions."""

    text: str
    files: tuple[FileBlock, ...] = field(default_factory=tuple)

    def content(self) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": f.text} for f in self.files]
        blocks.append({"type": "text", "text": self.text})
        return blocks

    def message_fields(self) -> dict[str, Any]:
        """The fields of the user message besides role and timestamp."""
        fields: dict[str, Any] = {"content": self.content()}
        if self.files:
            fields[ATTACHED_FILES] = [f.record for f in self.files]
        return fields


def might_mention(text: str) -> bool:
    """Cheap: could ``text`` mention a file (worth a thread to look)?"""
    return "@" in text and _MENTION.search(text) is not None


def mention_candidates(text: str) -> list[str]:
    """The paths as typed after each ``@`` that starts a word, in order (not yet checked)."""
    return [m.group(1) or m.group(2) for m in _MENTION.finditer(text)]


def _resolve(typed: str, cwd: Path) -> Path | None:
    """The regular file ``typed`` names (trailing punctuation dropped if need be), or None."""
    tries = [typed]
    stripped = typed.rstrip(_TRAILING)
    if stripped and stripped != typed:
        tries.append(stripped)
    for candidate in tries:
        path = Path(os.path.expanduser(candidate))
        if not path.is_absolute():
            path = cwd / path
        try:
            if check_regular(path) is not None:
                return Path(os.path.normpath(path))
        except NotRegularFileError:
            continue
    return None


def shown_path(path: Path, cwd: Path) -> str:
    """``path`` relative to ``cwd`` when inside it, else with ``~`` for the home folder."""
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        pass
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home) :] if text.startswith(home + os.sep) else text


def _read_head(path: Path) -> tuple[bytes, int]:
    """The first ``MAX_BYTES`` + a little of the file, and its size."""
    fd, info = open_regular(path)
    try:
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_BYTES + 4)
    finally:
        os.close(fd)
    return data, info.st_size


def _binary(data: bytes) -> bool:
    if b"\0" in data[:_SNIFF]:
        return True
    try:
        codecs.getincrementaldecoder("utf-8")("strict").decode(data[:_SNIFF], final=False)
    except UnicodeDecodeError:
        return True
    return False


def read_attachment(path: Path, cwd: Path) -> FileBlock:
    """The block and record for one mentioned file."""
    shown = shown_path(path, cwd)
    name = html.escape(str(path), quote=True)
    record: dict[str, Any] = {"path": shown}
    try:
        data, size = _read_head(path)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        record.update(size=0, lines=0, omitted=f"unreadable: {reason}")
        return FileBlock(record, f'<file name="{name}">(could not be read: {reason})</file>\n')
    record["size"] = size
    if _binary(data):
        record.update(lines=0, omitted="binary")
        note = f"(a binary file of {format_size(size)}: its content is not included)"
        return FileBlock(record, f'<file name="{name}">{note}</file>\n')
    whole = len(data) <= MAX_BYTES
    text = codecs.getincrementaldecoder("utf-8")("replace").decode(data[:MAX_BYTES], whole)
    text = text.removeprefix("\ufeff")
    lines = text.split("\n")
    cut = size > MAX_BYTES or len(lines) > MAX_LINES + (1 if text.endswith("\n") else 0)
    if cut:
        lines = lines[:MAX_LINES]
        if size > MAX_BYTES and len(lines) > 1:
            lines = lines[:-1]  # the last one is cut in the middle
        text = "\n".join(lines)
        shown_lines = len(lines)
        text += (
            f"\n\n[Only lines 1-{shown_lines} are included (the file has "
            f"{format_size(size)}; limit {MAX_LINES} lines or {format_size(MAX_BYTES)}). "
            f"Use the read tool with offset={shown_lines + 1} to read on.]"
        )
        record.update(lines=shown_lines, truncated=True)
    else:
        text = text.removesuffix("\n")
        record["lines"] = len(text.split("\n")) if text else 0
    body = f"\n{text}\n" if size else ""
    return FileBlock(record, f'<file name="{name}">{body}</file>\n')


def expand_mentions(text: str, cwd: str | os.PathLike[str]) -> Prompt:
    """``text`` and the files its ``@`` mentions name (each once, at most ``MAX_FILES``)."""
    root = Path(os.path.abspath(cwd))
    files: list[FileBlock] = []
    seen: set[Path] = set()
    for typed in mention_candidates(text):
        if len(files) >= MAX_FILES:
            break
        path = _resolve(typed, root)
        if path is None or path in seen:
            continue
        seen.add(path)
        files.append(read_attachment(path, root))
    return Prompt(text, tuple(files))


def attachment_line(record: dict[str, Any]) -> str:
    """One line about an attached file for the transcript: ``@ a.py · 40 lines, 1.2 KB``."""
    path = str(record.get("path") or "?")
    size = record.get("size")
    size_part = format_size(size) if isinstance(size, int) else "?"
    omitted = record.get("omitted")
    if isinstance(omitted, str) and omitted:
        if omitted == "binary":
            return f"@ {path} · binary file ({size_part}): not included"
        return f"@ {path} · {omitted}: not included"
    lines = record.get("lines")
    count = f"{lines} line{'s' if lines != 1 else ''}" if isinstance(lines, int) else "?"
    if record.get("truncated"):
        return f"@ {path} · first {count} of {size_part} (cut at the limit)"
    if size == 0:
        return f"@ {path} · empty"
    return f"@ {path} · {count}, {size_part}"
