"""The ``edit`` tool: exact, unique text replacements, all or nothing.

Edits apply in order, each against the result of the previous one; each ``oldText`` must occur
exactly once at that point. If any edit fails the file is left untouched. Line endings are kept:
in a CRLF file, ``oldText``/``newText`` written with ``\\n`` are matched and inserted as
``\\r\\n``. A UTF-8 byte order mark is kept too. ``details["diff"]`` holds a unified diff.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import os
import re
from pathlib import Path
from typing import Any

from pitui.agent.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    format_size,
    os_error,
    resolve_path,
)
from pitui.agent.tools.write import not_regular, write_text_file
from pitui.files import NotRegularFileError, open_regular

MAX_EDIT_BYTES = 32 * 1024 * 1024
"""Files larger than this are not loaded for an edit (the model is told to use bash)."""
_BOM = "\ufeff"
_EXCERPT_CHARS = 60
_LINE_NUMBER_PREFIX = re.compile(r"^ *\d+\t")


def detect_line_ending(text: str) -> str:
    """``"\\r\\n"`` when most line breaks are CRLF, else ``"\\n"``."""
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    return "\r\n" if crlf > lf else "\n"


def to_line_ending(text: str, eol: str) -> str:
    normalized = text.replace("\r\n", "\n")
    return normalized.replace("\n", eol) if eol != "\n" else normalized


def count_occurrences(haystack: str, needle: str) -> int:
    """Occurrences of ``needle`` in ``haystack``, overlapping ones included."""
    count = 0
    index = haystack.find(needle)
    while index != -1:
        count += 1
        index = haystack.find(needle, index + 1)
    return count


def _excerpt(text: str) -> str:
    short = text if len(text) <= _EXCERPT_CHARS else text[:_EXCERPT_CHARS] + "…"
    return json.dumps(short, ensure_ascii=False)


def _first_changed_line(before: str, after: str) -> int:
    old_lines = before.split("\n")
    new_lines = after.split("\n")
    for number, (a, b) in enumerate(zip(old_lines, new_lines, strict=False), start=1):
        if a != b:
            return number
    return min(len(old_lines), len(new_lines)) + 1


def _diff_lines(text: str) -> list[str]:
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the text ends with a line break
    return lines


def unified_diff(before: str, after: str, path: str) -> str:
    """A unified diff (3 lines of context) of two texts, line endings normalized to LF."""
    a = _diff_lines(before)
    b = _diff_lines(after)
    return "\n".join(difflib.unified_diff(a, b, fromfile=path, tofile=path, lineterm=""))


def apply_edits(content: str, edits: list[dict[str, str]], path: Path) -> str:
    """Apply ``edits`` in order to ``content`` (BOM already removed); raise on the first failure."""
    eol = detect_line_ending(content)
    current = content
    many = len(edits) > 1
    for index, edit in enumerate(edits):
        old_given = edit["oldText"]
        new_given = edit["newText"]
        which = f"the oldText of edit {index + 1}" if many else "the oldText"
        if old_given == "":
            raise ToolError(
                f"{which[0].upper()}{which[1:]} is empty; use write to create or overwrite a "
                "whole file. The file was not changed."
            )
        old = to_line_ending(old_given, eol)
        new = to_line_ending(new_given, eol)
        count = count_occurrences(current, old)
        if count == 0 and old != old_given:
            # A file with mixed line endings: try the text exactly as given.
            count = count_occurrences(current, old_given)
            if count:
                old, new = old_given, new_given
        if count == 0:
            raise ToolError(
                f"Could not find {which} in {path}: {_excerpt(old_given)}. It must match the "
                f"file exactly, including whitespace and line breaks.{_hint(old_given, current)}"
                " The file was not changed."
            )
        if count > 1:
            raise ToolError(
                f"{which[0].upper()}{which[1:]} occurs {count} times in {path}: "
                f"{_excerpt(old_given)}; include more surrounding context so that it matches "
                "exactly once. The file was not changed."
            )
        current = current.replace(old, new, 1)
    return current


def _hint(old: str, content: str) -> str:
    lines = [line for line in old.splitlines() if line.strip()]
    if lines and all(_LINE_NUMBER_PREFIX.match(line) for line in lines):
        return " It seems to include line numbers from read's output; leave them out."
    if " ".join(old.split()) in " ".join(content.split()):
        return " A match exists when whitespace is ignored; check indentation and line breaks."
    return ""


class EditTool(Tool):
    name = "edit"
    description = (
        "Edit a file using exact text replacement. Each oldText must match the file exactly "
        "(including whitespace) and occur exactly once; edits apply in order, and if any fails "
        "the file is left unchanged. Do not include the line numbers shown by read."
    )
    parameters: dict[str, Any] = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "Path to the file to edit (relative or absolute)",
            },
            "edits": {
                "type": "array",
                "description": "Replacements to apply in order",
                "items": {
                    "type": "object",
                    "properties": {
                        "oldText": {
                            "type": "string",
                            "description": "Exact text to find (must occur exactly once)",
                        },
                        "newText": {"type": "string", "description": "Text to replace it with"},
                    },
                    "required": ["oldText", "newText"],
                },
            },
        },
        "required": ["path", "edits"],
    }

    def prepare_arguments(self, args: dict[str, Any]) -> dict[str, Any]:
        """Accept the older single-edit shape ``{path, oldText, newText}`` too."""
        if args.get("edits") is None and ("oldText" in args or "newText" in args):
            rest = {k: v for k, v in args.items() if k not in ("oldText", "newText", "edits")}
            rest["edits"] = [{"oldText": args.get("oldText"), "newText": args.get("newText")}]
            return rest
        return args

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = resolve_path(args["path"], ctx.cwd)
        edits: list[dict[str, str]] = args["edits"]
        if not edits:
            raise ToolError("No edits were given; 'edits' needs at least one {oldText, newText}.")
        # File I/O and the diff of a large file stay off the event loop.
        return await asyncio.to_thread(_edit_file, path, edits)


def _edit_file(path: Path, edits: list[dict[str, str]]) -> ToolResult:
    """Read, apply ``edits`` (all or nothing), write back; the result with its diff."""
    original = _read_for_edit(path)
    bom = original.startswith(_BOM)
    body = original[1:] if bom else original
    updated = apply_edits(body, edits, path)
    if updated == body:
        raise ToolError(f"No changes made to {path}: the replacement produced identical content.")
    write_text_file(path, ((_BOM if bom else "") + updated).encode("utf-8"))
    diff = unified_diff(body, updated, str(path))
    return ToolResult.from_text(
        f"Successfully replaced {len(edits)} block(s) in {path}.",
        details={
            "path": str(path),
            "diff": diff,
            "firstChangedLine": _first_changed_line(
                body.replace("\r\n", "\n"), updated.replace("\r\n", "\n")
            ),
        },
    )


def _read_for_edit(path: Path) -> str:
    """The file's text; refuses directories, FIFOs, devices and files over MAX_EDIT_BYTES."""
    try:
        fd, info = open_regular(path)
    except FileNotFoundError:
        raise ToolError(f"File not found: {path}") from None
    except NotRegularFileError as exc:
        if exc.is_directory:
            raise ToolError(f"{path} is a directory, not a file.") from None
        raise not_regular(exc, "edit only works on regular files") from None
    except OSError as exc:
        raise os_error("read", path, exc) from None
    try:
        if info.st_size > MAX_EDIT_BYTES:
            raise _too_large(path, info.st_size)
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            total += len(chunk)
            if total > MAX_EDIT_BYTES:  # it grew while being read
                raise _too_large(path, total)
        data = b"".join(chunks)
    except OSError as exc:
        raise os_error("read", path, exc) from None
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{path} is not valid UTF-8 text, so it cannot be edited safely.") from None


def _too_large(path: Path, size: int) -> ToolError:
    return ToolError(
        f"{path} is too large to edit ({format_size(size)}; the limit is "
        f"{format_size(MAX_EDIT_BYTES)}); use bash (for example sed) instead. "
        "The file was not changed."
    )
