"""How file changes look in the chat: an edit as a diff, a write as a preview of the file.

An edit shows numbered ``-``/``+`` lines (removed red, added green, context dim). The numbers
are the file's, read from the diff the tool stored (pitui's unified diff, or pi's numbered
one); while the edit runs, or when the result has no diff (a failed edit), the diff is computed
from the call's ``oldText``/``newText`` and shows no numbers, since the position in the file is
not known. A write shows the first lines of the file, numbered, and how many lines it has.

Everything here is untrusted: every line is stripped of escapes, cut at ``LINE_CHARS`` and
the number of rows is bounded (a 10 MB ``newText`` costs no more than a short one).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from pitui.text import strip_escapes

MAX_ROWS = 400
"""Rows a diff or preview shows at most (expanded); a note says how many more there are."""
LINE_CHARS = 1000
"""Characters of one line shown at most (even expanded)."""
MAX_DIFF_INPUT_LINES = 500
"""Longer texts are not diffed line by line (difflib is quadratic): all old lines are shown
removed and all new lines added."""

REMOVED = "red"
ADDED = "green"
CONTEXT = "dim"
GUTTER = "dim"

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_NUMBERED = re.compile(r"^([+\- ])( *)(\d*) (.*)$")


@dataclass(frozen=True)
class Row:
    sign: str  # "-", "+", " " or "…" (a gap between hunks or edits)
    number: int | None
    text: str


def _clean(line: str) -> str:
    line = strip_escapes(line).replace("\n", " ")
    if len(line) > LINE_CHARS:
        line = line[:LINE_CHARS] + "…"
    return line.expandtabs(4)


def _lines(text: str) -> list[str]:
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _unified_rows(diff: str) -> tuple[list[Row], int]:
    rows: list[Row] = []
    extra = 0
    old = new = 0
    in_hunk = False
    for line in diff.split("\n"):
        match = _HUNK.match(line)
        if match:
            if rows:
                rows.append(Row("…", None, ""))
            old, new = int(match.group(1)), int(match.group(2))
            in_hunk = True
        elif not in_hunk or line.startswith("\\"):
            continue  # the ---/+++ header, "\ No newline at end of file"
        elif len(rows) > MAX_ROWS:
            extra += 1  # only counted
        elif line.startswith("-"):
            rows.append(Row("-", old, line[1:]))
            old += 1
        elif line.startswith("+"):
            rows.append(Row("+", new, line[1:]))
            new += 1
        else:
            rows.append(Row(" ", new, line[1:]))
            old += 1
            new += 1
    return rows, len(rows) + extra


def _numbered_rows(diff: str) -> tuple[list[Row], int]:
    """pi's display diff: ``+12 text``, ``-12 text``, `` 12 text``, ``   ...``."""
    rows: list[Row] = []
    lines = diff.split("\n")
    for line in lines[: MAX_ROWS + 1]:
        match = _NUMBERED.match(line)
        if match is None:
            rows.append(Row(" ", None, line))
        elif not match.group(3) and match.group(4).strip() == "...":
            rows.append(Row("…", None, ""))
        else:
            number = int(match.group(3)) if match.group(3) else None
            rows.append(Row(match.group(1), number, match.group(4)))
    return rows, len(lines)


def _snippet_rows(old_text: str, new_text: str) -> tuple[list[Row], int]:
    old, new = _lines(old_text), _lines(new_text)
    if len(old) > MAX_DIFF_INPUT_LINES or len(new) > MAX_DIFF_INPUT_LINES:
        removed = [Row("-", None, line) for line in old[: MAX_ROWS + 1]]
        added = [Row("+", None, line) for line in new[: MAX_ROWS + 1]]
        return removed + added, len(old) + len(new)
    rows: list[Row] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            rows.extend(Row(" ", None, line) for line in old[i1:i2])
            continue
        rows.extend(Row("-", None, line) for line in old[i1:i2])
        rows.extend(Row("+", None, line) for line in new[j1:j2])
    return rows, len(rows)


def _edits(arguments: Any) -> list[tuple[str, str]]:
    if not isinstance(arguments, dict):
        return []
    edits = arguments.get("edits")
    if not isinstance(edits, list):
        edits = [arguments] if "oldText" in arguments or "newText" in arguments else []
    found = []
    for edit in edits:
        if isinstance(edit, dict):
            old, new = edit.get("oldText"), edit.get("newText")
            found.append((old if isinstance(old, str) else "", new if isinstance(new, str) else ""))
    return found


def edit_rows(arguments: Any, details: Any = None) -> tuple[list[Row], int]:
    """The rows of an edit (at most ``MAX_ROWS`` and a few) and how many there are in all:
    from the stored diff when there is one, else from the call."""
    diff = details.get("diff") if isinstance(details, dict) else None
    if isinstance(diff, str) and diff.strip():
        if any(_HUNK.match(line) for line in diff.split("\n", 400)[:400]):
            return _unified_rows(diff)
        return _numbered_rows(diff)
    rows: list[Row] = []
    total = 0
    for old, new in _edits(arguments):
        if rows:
            rows.append(Row("…", None, ""))
            total += 1
        if len(rows) > MAX_ROWS:
            total += len(_lines(old)) + len(_lines(new))  # only counted
            continue
        found, count = _snippet_rows(old, new)
        rows.extend(found)
        total += count
    return rows, total


def _render(rows: list[Row], total: int | None = None) -> list[Text]:
    """Rows as styled lines, at most ``MAX_ROWS`` (then a note of how many more)."""
    shown = rows[:MAX_ROWS]
    width = max((len(str(r.number)) for r in shown if r.number is not None), default=0)
    out: list[Text] = []
    for row in shown:
        if row.sign == "…":
            out.append(Text(" " * (width + 1) + "⋯", style=GUTTER))
            continue
        line = Text()
        style = REMOVED if row.sign == "-" else ADDED if row.sign == "+" else CONTEXT
        if width:
            number = str(row.number) if row.number is not None else ""
            line.append(f"{number:>{width}} ", style=GUTTER)
        line.append(f"{row.sign} " if row.sign != " " else "  ", style=style)
        line.append(_clean(row.text), style=style if row.sign != " " else "")
        out.append(line)
    more = (total if total is not None else len(rows)) - len(shown)
    if more > 0:
        out.append(Text(f"… {more} more line{'s' if more != 1 else ''}", style=GUTTER))
    return out


def edit_diff(arguments: Any, details: Any = None) -> list[Text]:
    """An edit call as diff lines (empty when the call names no text)."""
    rows, total = edit_rows(arguments, details)
    return _render(rows, total)


def write_preview(arguments: Any) -> tuple[list[Text], str]:
    """A write call's file: numbered lines (at most ``MAX_ROWS``) and a summary such as
    ``42 lines, 1.2 KB``."""
    content = arguments.get("content") if isinstance(arguments, dict) else None
    if not isinstance(content, str):
        return [], ""
    count = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
    head: list[str] = []
    start = 0
    while len(head) <= MAX_ROWS and start < len(content):
        end = content.find("\n", start)
        if end == -1:
            end = len(content)
        head.append(content[start:end])
        start = end + 1
    width = len(str(min(count, MAX_ROWS)))
    lines = []
    for number, line in enumerate(head[:MAX_ROWS], start=1):
        row = Text(f"{number:>{width}} ", style=GUTTER)
        row.append(_clean(line))
        lines.append(row)
    if count > MAX_ROWS:
        lines.append(Text(f"… {count - MAX_ROWS} more lines", style=GUTTER))
    size = len(content.encode("utf-8", "replace"))
    return lines, f"{count} line{'s' if count != 1 else ''}, {_size(size)}"


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"
