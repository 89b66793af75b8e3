"""The ``read`` tool: a text file as it is (pi 1.6's output), or with line numbers like
``cat -n`` when the ``tools.read.lineNumbers`` setting asks; or an image.

Without numbers a file costs the model what pi 1.6 pays for it (numbers add about an eighth to
a typical source file: a read-heavy loop cost 1.1x pi's). Text output is cut at 2000 lines or
50 KB, whichever comes first, with a note telling the model how to continue (``offset=N``).
Lines longer than 2000 characters are cut with a marker. Files are streamed, so a huge file
costs only the lines shown (plus a newline count for the total).
"""

from __future__ import annotations

import asyncio
import base64
import codecs
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from pitui.agent.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    format_size,
    os_error,
    resolve_path,
)
from pitui.files import NotRegularFileError, open_regular

MAX_LINES = 2000
MAX_BYTES = 50 * 1024
MAX_LINE_CHARS = 2000
SNIFF_BYTES = 8192
MAX_IMAGE_BYTES = 3_932_160  # 3.75 MB raw, about 5 MB once base64-encoded
_CHUNK = 1 << 20
# Enough bytes for MAX_LINE_CHARS characters of up to 4 bytes each, plus "\r\n".
_LINE_CAP = MAX_LINE_CHARS * 4 + 2
_NUMBER_WIDTH = 6


def sniff_image(head: bytes) -> str | None:
    """The image MIME type from magic bytes (png, jpeg, gif, webp), or ``None``."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(head) >= 12 and head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def format_line(number: int, text: str) -> str:
    """One output line: right-aligned number, a tab, the text (long lines cut with a marker)."""
    return f"{number:>{_NUMBER_WIDTH}}\t{text}"


def cut_long_line(text: str, total_chars: int | None = None) -> str:
    """Cut ``text`` to MAX_LINE_CHARS chars, adding ``... [line truncated: N more characters]``."""
    total = len(text) if total_chars is None else total_chars
    if total <= MAX_LINE_CHARS:
        return text
    return f"{text[:MAX_LINE_CHARS]}... [line truncated: {total - MAX_LINE_CHARS} more characters]"


def _strip_eol(raw: bytes) -> bytes:
    if raw.endswith(b"\n"):
        raw = raw[:-1]
        if raw.endswith(b"\r"):
            raw = raw[:-1]
    return raw


@dataclass
class _Listing:
    lines: list[str]
    total_lines: int
    stop_reason: str | None  # "bytes" | "lines" | "limit" | None (reached the end)


def _skip_lines(f: BinaryIO, count: int) -> tuple[int, bytes]:
    """Skip ``count`` lines; return (newlines skipped, the last byte read)."""
    skipped = 0
    last = b"\n"
    while skipped < count:
        start = f.tell()
        chunk = f.read(_CHUNK)
        if not chunk:
            break
        newlines = chunk.count(b"\n")
        if skipped + newlines < count:
            skipped += newlines
            last = chunk[-1:]
            continue
        index = -1
        for _ in range(count - skipped):
            index = chunk.index(b"\n", index + 1)
        f.seek(start + index + 1)
        return count, b"\n"
    return skipped, last


def _count_rest(f: BinaryIO) -> int:
    """Lines from the current position to the end (an unterminated last line counts)."""
    lines = 0
    last = b"\n"
    while True:
        chunk = f.read(_CHUNK)
        if not chunk:
            break
        lines += chunk.count(b"\n")
        last = chunk[-1:]
    if last != b"\n":
        lines += 1
    return lines


def _read_long_line_rest(f: BinaryIO, first: bytes) -> int:
    """Consume the rest of a line longer than ``_LINE_CAP``; return its total character count."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    chars = len(decoder.decode(first))
    while True:
        more = f.readline(_CHUNK)
        if not more:
            break
        if more.endswith(b"\n"):
            chars += len(decoder.decode(_strip_eol(more), final=True))
            return chars
        chars += len(decoder.decode(more))
    chars += len(decoder.decode(b"", final=True))
    return chars


def _list_lines(f: BinaryIO, start: int, limit: int | None, numbers: bool) -> _Listing:
    skipped, last = _skip_lines(f, start - 1)
    if skipped < start - 1:
        total = skipped + (0 if last == b"\n" else 1)
        raise ToolError(f"Offset {start} is beyond the end of the file ({total} lines total).")
    max_lines = min(limit, MAX_LINES) if limit is not None else MAX_LINES
    limit_binds = limit is not None and limit <= MAX_LINES
    lines: list[str] = []
    used = 0
    stop_reason: str | None = None
    consumed = 0  # lines read from the file in this phase (shown or not)
    number = start
    while True:
        if len(lines) >= max_lines:
            stop_reason = "limit" if limit_binds else "lines"
            break
        raw = f.readline(_LINE_CAP)
        if not raw:
            break
        consumed += 1
        total_chars: int | None = None
        if not raw.endswith(b"\n") and len(raw) == _LINE_CAP:
            total_chars = _read_long_line_rest(f, raw)
        text = _strip_eol(raw).decode("utf-8", "replace")
        if number == 1 and text.startswith("\ufeff"):
            text = text[1:]
            if total_chars is not None:
                total_chars -= 1
        line = cut_long_line(text, total_chars)
        if numbers:
            line = format_line(number, line)
        size = len(line.encode("utf-8")) + 1
        if used + size > MAX_BYTES and lines:
            stop_reason = "bytes"
            break
        lines.append(line)
        used += size
        number += 1
    total = (start - 1) + consumed + _count_rest(f)
    if start > 1 and start > total:
        raise ToolError(f"Offset {start} is beyond the end of the file ({total} lines total).")
    if stop_reason is not None and total <= start - 1 + len(lines):
        stop_reason = None  # stopped exactly at the end of the file
    return _Listing(lines, total, stop_reason)


def _read_file(path: Path, offset: int, limit: int | None, numbers: bool = False) -> ToolResult:
    try:
        fd, info = open_regular(path)  # never blocks on a FIFO, never reads a device
    except FileNotFoundError:
        raise ToolError(f"File not found: {path}") from None
    except NotRegularFileError as exc:
        if exc.is_directory:
            raise ToolError(
                f"{path} is a directory, not a file; use bash (ls) to list it."
            ) from None
        raise ToolError(
            f"{path} is {exc.kind}, not a regular file; read only reads regular files."
        ) from None
    except OSError as exc:
        raise os_error("read", path, exc) from None
    try:
        with os.fdopen(fd, "rb") as f:
            head = f.read(SNIFF_BYTES)
            mime = sniff_image(head)
            if mime is not None:
                return _image_result(path, f, head, mime, info.st_size)
            if b"\0" in head:
                raise ToolError(f"{path} is a binary file and cannot be shown as text.")
            f.seek(0)
            listing = _list_lines(f, offset, limit, numbers)
    except OSError as exc:
        raise os_error("read", path, exc) from None

    end = offset + len(listing.lines) - 1
    details: dict[str, Any] = {
        "path": str(path),
        "startLine": offset,
        "endLine": end,
        "totalLines": listing.total_lines,
        "truncated": listing.stop_reason is not None,
    }
    if listing.total_lines == 0:
        return ToolResult.from_text("(empty file)", details=details)
    text = "\n".join(listing.lines)
    if listing.stop_reason == "bytes":
        note = (
            f"[Showing lines {offset}-{end} of {listing.total_lines} "
            f"({format_size(MAX_BYTES)} limit). Use offset={end + 1} to continue.]"
        )
    elif listing.stop_reason == "lines":
        note = (
            f"[Showing lines {offset}-{end} of {listing.total_lines}. "
            f"Use offset={end + 1} to continue.]"
        )
    elif listing.stop_reason == "limit":
        note = (
            f"[{listing.total_lines - end} more lines in file. Use offset={end + 1} to continue.]"
        )
    else:
        note = ""
    if note:
        text = f"{text}\n\n{note}"
    return ToolResult.from_text(text, details=details)


def _image_result(path: Path, f: BinaryIO, head: bytes, mime: str, size: int) -> ToolResult:
    if size > MAX_IMAGE_BYTES:
        raise ToolError(
            f"The image {path} is too large to send ({format_size(size)}; "
            f"the limit is {format_size(MAX_IMAGE_BYTES)})."
        )
    data = head + f.read()
    return ToolResult(
        [
            {"type": "text", "text": f"Read image file [{mime}]"},
            {"type": "image", "data": base64.b64encode(data).decode("ascii"), "mimeType": mime},
        ],
        details={"path": str(path), "mimeType": mime, "bytes": len(data)},
    )


DESCRIPTION = (
    "Read the contents of a file. Supports text files and images (png, jpeg, gif, webp). "
    f"Text is cut at {MAX_LINES} lines or {format_size(MAX_BYTES)}, whichever comes first; "
    "use offset and limit to read large files in parts."
)
NUMBERED_DESCRIPTION = DESCRIPTION.replace("Text is cut", "Text is shown with line numbers and cut")


class ReadTool(Tool):
    name = "read"
    read_only = True
    description = DESCRIPTION
    parameters: dict[str, Any] = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "Path to the file to read (relative or absolute)",
            },
            "offset": {
                "type": "number",
                "description": "Line number to start reading from (1-indexed)",
            },
            "limit": {"type": "number", "description": "Maximum number of lines to read"},
        },
        "required": ["path"],
    }

    def __init__(self, line_numbers: bool = False) -> None:
        self.line_numbers = line_numbers
        if line_numbers:
            self.description = NUMBERED_DESCRIPTION

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = resolve_path(args["path"], ctx.cwd)
        offset = _whole_number(args.get("offset"), "offset", default=1, minimum=0) or 1
        limit = _whole_number(args.get("limit"), "limit", default=None, minimum=1)
        return await asyncio.to_thread(_read_file, path, offset, limit, self.line_numbers)


def _whole_number(value: Any, name: str, *, default: int | None, minimum: int) -> int | None:
    if value is None:
        return default
    if isinstance(value, float):
        if not value.is_integer():
            raise ToolError(f"The {name} must be a whole number, not {value}.")
        value = int(value)
    if not isinstance(value, int) or value < minimum:
        raise ToolError(f"The {name} must be at least {minimum}, not {value}.")
    return value
