"""Walking and searching the prompt history, as the editor does it (no widget here).

:class:`HistoryWalk` is Up/Down: the text being edited when the walk starts is the *draft*;
walking down past the newest prompt gives it back, so nothing typed is lost by looking at
older prompts. Editing a recalled prompt makes it the draft.

:class:`ReverseSearch` is Ctrl+R, as in a shell: each key typed narrows the search to prompts
containing the query (case-insensitive unless the query has a capital), newest first; Ctrl+R
again finds the next older match, Ctrl+S the next newer one; a query nothing matches is
*failing* and keeps the last match shown.
"""

from __future__ import annotations

from dataclasses import dataclass


class HistoryWalk:
    """Up/Down over ``entries`` (oldest first) from a draft."""

    def __init__(self, entries: list[str]) -> None:
        self.entries = entries
        self.index: int | None = None
        """The entry shown; None: the draft (not walking)."""
        self.draft = ""

    @property
    def walking(self) -> bool:
        return self.index is not None

    def shown(self) -> str | None:
        """The entry shown while walking."""
        if self.index is None or self.index >= len(self.entries):
            return None
        return self.entries[self.index]

    def older(self, current: str) -> str | None:
        """The entry before the one shown (``current`` is the editor's text: kept as the draft
        when the walk starts, or when it is no longer the entry shown). None: nothing older."""
        if not self.entries:
            return None
        if self.index is None or current != self.shown():
            self.draft = current
            self.index = len(self.entries)
        if self.index == 0:
            return None
        self.index -= 1
        return self.entries[self.index]

    def newer(self, current: str) -> str | None:
        """The entry after the one shown, or the draft past the newest. None: not walking (or
        the text was edited: it is the draft now)."""
        if self.index is None:
            return None
        if current != self.shown():
            self.stop()
            return None
        self.index += 1
        if self.index >= len(self.entries):
            self.index = None
            return self.draft
        return self.entries[self.index]

    def stop(self) -> None:
        """The text shown is the editor's own now (edited, submitted, replaced)."""
        self.index = None

    def add(self, text: str) -> None:
        """A submitted prompt: the newest entry (not twice in a row); the walk ends."""
        if not self.entries or self.entries[-1] != text:
            self.entries.append(text)
        self.index = None
        self.draft = ""


@dataclass(frozen=True)
class Match:
    index: int
    start: int
    """Where the query starts in the entry (characters)."""


class ReverseSearch:
    """Ctrl+R over ``entries`` (oldest first); ``original`` is the text it started from."""

    def __init__(self, entries: list[str], original: str) -> None:
        self.entries = entries
        self.original = original
        self.query = ""
        self.match: Match | None = None
        self.failing = False

    def _find(self, query: str, start: int, step: int) -> Match | None:
        fold = query == query.lower()
        needle = query.lower() if fold else query
        index = start
        while 0 <= index < len(self.entries):
            entry = self.entries[index]
            at = (entry.lower() if fold else entry).find(needle)
            if at >= 0:
                return Match(index, at)
            index += step
        return None

    def _update(self, found: Match | None) -> None:
        if found is None:
            self.failing = True  # the last match stays shown
        else:
            self.failing = False
            self.match = found

    def type(self, text: str) -> None:
        """The query grew: the newest match at or older than the one shown."""
        self.query += text
        start = self.match.index if self.match is not None else len(self.entries) - 1
        self._update(self._find(self.query, start, -1) if self.query else None)

    def backspace(self) -> None:
        """The query shrank: search again from the newest."""
        self.query = self.query[:-1]
        if not self.query:
            self.match = None
            self.failing = False
            return
        self._update(self._find(self.query, len(self.entries) - 1, -1))

    def older(self) -> None:
        """Ctrl+R again: the next older match."""
        if not self.query:
            return
        start = self.match.index - 1 if self.match is not None else len(self.entries) - 1
        self._update(self._find(self.query, start, -1))

    def newer(self) -> None:
        """Ctrl+S: the next newer match."""
        if not self.query or self.match is None:
            return
        self._update(self._find(self.query, self.match.index + 1, 1))

    @property
    def text(self) -> str:
        """What the editor shows: the match, or the original text before any."""
        return self.entries[self.match.index] if self.match is not None else self.original

    def prompt(self) -> str:
        """The search line, as a shell shows it."""
        word = "failing reverse-i-search" if self.failing else "reverse-i-search"
        return f"({word})`{self.query}'"
