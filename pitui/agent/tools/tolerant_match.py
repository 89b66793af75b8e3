"""Finding an edit's ``oldText`` when it differs from the file only in ways models slip on.

When the exact text is not in the file, :func:`tolerant_find` looks for it again with both sides
normalized: trailing whitespace at the end of each line dropped, typographic quotes read as
ASCII quotes, Unicode dashes and minus signs as ``-``, and no-break and other Unicode spaces as a
plain space (the differences pi's edit tool tolerates). Each normalization maps one character to
one character, apart from the trailing whitespace, so a match found in the normalized text maps
back to an exact span of the original: only that span is replaced, every other byte of the file
is kept as it was. :func:`differences` names the normalizations a match needed, for the result
the model reads.

Unlike pi, Unicode compatibility forms (NFKC: ligatures, full-width letters) are not folded.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

TRAILING_WHITESPACE = "trailing whitespace"
QUOTES = "typographic quotes"
DASHES = "Unicode dashes"
SPACES = "Unicode spaces"
KINDS = (TRAILING_WHITESPACE, QUOTES, DASHES, SPACES)

_CHARACTERS = {
    QUOTES: {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033", '"'),
    },
    DASHES: dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
    SPACES: dict.fromkeys(
        "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "
    ),
}


def _table(kinds: frozenset[str]) -> dict[int, str]:
    table: dict[int, str] = {}
    for kind in kinds:
        for char, plain in _CHARACTERS.get(kind, {}).items():
            table[ord(char)] = plain
    return table


_ALL = frozenset(KINDS)
_ALL_TABLE = _table(_ALL)


def _normalize_line(line: str, table: dict[int, str], strip: bool) -> str:
    line = line.translate(table)
    return line.rstrip() if strip else line


def normalize(text: str, kinds: frozenset[str] = _ALL) -> str:
    """``text`` with line breaks as LF and the ``kinds`` of normalization applied."""
    table = _ALL_TABLE if kinds == _ALL else _table(kinds)
    strip = TRAILING_WHITESPACE in kinds
    lines = text.replace("\r\n", "\n").split("\n")
    return "\n".join(_normalize_line(line, table, strip) for line in lines)


@dataclass(frozen=True)
class Span:
    start: int
    end: int


class NormalizedText:
    """A text normalized line by line, with the way back to the original's offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.split("\n")  # a CRLF line keeps its "\r" (stripped as whitespace)
        self.normal_lines = [_normalize_line(line, _ALL_TABLE, True) for line in self.lines]
        self.starts: list[int] = []
        self.normal_starts: list[int] = []
        offset = normal_offset = 0
        for line, normal in zip(self.lines, self.normal_lines, strict=True):
            self.starts.append(offset)
            self.normal_starts.append(normal_offset)
            offset += len(line) + 1
            normal_offset += len(normal) + 1
        self.normal = "\n".join(self.normal_lines)

    def original(self, position: int, *, end: bool) -> int:
        """The original offset of normalized ``position``. The end of a match at the end of a
        normalized line takes the line's trailing whitespace along (never its ``\\r``)."""
        index = bisect.bisect_right(self.normal_starts, position) - 1
        column = position - self.normal_starts[index]
        if end and column == len(self.normal_lines[index]):
            line = self.lines[index]
            return self.starts[index] + len(line) - (1 if line.endswith("\r") else 0)
        return self.starts[index] + column

    def find_all(self, needle: str) -> list[Span]:
        """Every occurrence (overlapping ones too) of normalized ``needle``, as original spans."""
        spans: list[Span] = []
        if not needle:
            return spans
        index = self.normal.find(needle)
        while index != -1:
            start = self.original(index, end=False)
            spans.append(Span(start, self.original(index + len(needle), end=True)))
            index = self.normal.find(needle, index + 1)
        return spans


def tolerant_find(content: str, old: str) -> list[Span]:
    """Where ``old`` occurs in ``content`` once both are normalized (see the module docstring).

    When ``old`` ends in whitespace that normalizing dropped, a match must end where the file
    has whitespace or a line end too: ``"x = 1 "`` never matches the start of ``"x = 10"``.
    """
    needle = normalize(old)
    if not needle.strip():
        return []  # whitespace alone would match anywhere
    text = NormalizedText(content)
    spans = text.find_all(needle)
    last_given = old.replace("\r\n", "\n").rsplit("\n", 1)[-1]
    if not last_given or not last_given[-1].isspace():
        return spans
    return [span for span in spans if span.end >= len(content) or content[span.end].isspace()]


def differences(found: str, given: str) -> list[str]:
    """The kinds of normalization without which ``found`` (the file's text) and ``given`` (the
    edit's) would not be equal, in :data:`KINDS` order."""
    needed = []
    for kind in KINDS:
        others = _ALL - {kind}
        if normalize(found, others) != normalize(given, others):
            needed.append(kind)
    return needed


def describe(kinds: list[str]) -> str:
    """``"trailing whitespace and typographic quotes"``."""
    if len(kinds) <= 1:
        return "".join(kinds)
    return ", ".join(kinds[:-1]) + " and " + kinds[-1]
