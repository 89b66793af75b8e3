"""Fuzzy search over file paths, ranked as a user expects of a file picker.

The query's characters must appear in the path in order (case-insensitive; spaces are
ignored). Among the paths that match, the best are those where:

- the query is in the file's own name (``chat`` finds ``widgets/chat.py`` before
  ``chatter/log.txt``), best of all the whole name or its start;
- matched characters start path segments or words (``/``, ``_``, ``-``, ``.``, a capital in
  ``camelCase``: ``wcp`` finds ``widgets/chat_prompt.py``) and follow each other;
- fewer characters lie between them, and the path is shorter.

A query with a ``/`` matches across folders (``ui/prompt`` finds ``pitui/ui/widgets/prompt.py``).

Fast on 100k paths: a compiled pattern picks the candidates at C speed (a query that extends
the previous one searches only its candidates, see :class:`PathSearch`), a cheap ordering keeps
the most promising few thousand of a huge set, and only those get the full score. Call it from
a thread.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

SCORED = 3000
"""Candidates that get the full score when a short query matches more (the cheap order
chooses them)."""
_BOUNDARY = frozenset("/_-. ")


def _pattern(query: str) -> re.Pattern[str]:
    return re.compile(".*?".join(re.escape(c) for c in query))


def _at_boundary(path: str, i: int) -> bool:
    if i == 0:
        return True
    before = path[i - 1]
    return before in _BOUNDARY or (before.islower() and path[i].isupper())


def _boundary_bonus(path: str, i: int) -> float:
    """A word start after ``.`` (an extension) counts less than after ``/``, ``_``, ``-``."""
    return 3.0 if i > 0 and path[i - 1] == "." else 8.0


def _subsequence_score(
    query: str, path: str, lowered: str, start: int
) -> tuple[float, bool] | None:
    """``(score, clean)`` of a good greedy alignment of ``query`` in ``lowered[start:]``
    (None: no match; ``clean``: every character starts a word or follows the previous one).
    Each character prefers the next occurrence that starts a word, when the rest of the
    query still matches after it."""
    score = 0.0
    clean = True
    position = start
    previous = -2
    for k, char in enumerate(query):
        found = lowered.find(char, position)
        if found < 0:
            return None
        if found != previous + 1 and not _at_boundary(path, found):
            better = found
            while True:
                better = lowered.find(char, better + 1)
                if better < 0 or better - found > 24:
                    break
                if _at_boundary(path, better):
                    rest = query[k + 1 :]
                    if not rest or _pattern(rest).search(lowered, better + 1):
                        found = better
                    break
        gap = found - previous - 1 if previous >= 0 else 0
        if found == previous + 1:
            score += 6
        elif _at_boundary(path, found):
            score += _boundary_bonus(path, found) - min(4.0, gap * 0.1)
        else:
            clean = False
            score -= min(6.0, gap * 0.25)
        previous = found
        position = found + 1
    return score, clean


def score(query: str, path: str, lowered: str | None = None) -> float | None:
    """How well ``path`` matches ``query`` (lower-cased, no spaces); None: it does not."""
    lowered = lowered if lowered is not None else path.lower()
    if not query:
        return -len(path) * 0.01
    name_at = lowered.rfind("/") + 1
    name = lowered[name_at:]
    stem = name.split(".", 1)[0] if not name.startswith(".") else name
    length_penalty = len(path) * 0.01 + lowered.count("/") * 0.2
    if "/" not in query:
        contiguous = name.find(query)
        if contiguous >= 0:
            bonus = 60.0
            if name == query or stem == query:
                bonus += 40
            elif contiguous == 0:
                bonus += 25
            elif _at_boundary(path, name_at + contiguous):
                bonus += 12
            return bonus + len(query) * 6 - length_penalty
        in_name = _subsequence_score(query, path, lowered, name_at)
        if in_name is not None:
            # Every character at a word start or after the previous one ("wcp" in
            # "web_client_pool"): nearly as good as the name itself; else only a little
            # better than matching across folders.
            value, clean = in_name
            whole = _subsequence_score(query, path, lowered, 0)
            best = max(value + (20.0 if clean else 4.0), whole[0] if whole else -1e9)
            return best - length_penalty
    else:
        folders, _, file = query.rpartition("/")
        file_score = _name_score(file, path, lowered, name_at) if file else 0.0
        folder_match = _subsequence_score(folders, path, lowered[:name_at], 0) if folders else None
        in_folders = folder_match[0] if folder_match else None if folders else 0.0
        if file_score is not None and in_folders is not None:
            # ui/prompt: folders in the folders, the file in the file's name.
            segment = 10.0 if f"/{folders}/" in f"/{lowered[:name_at]}" else 0.0
            return 40.0 + file_score + in_folders + segment - length_penalty
    whole = _subsequence_score(query, path, lowered, 0)
    if whole is None:
        return None
    bonus = 10.0 if query in lowered else 0.0
    return whole[0] + bonus - length_penalty


def _name_score(query: str, path: str, lowered: str, name_at: int) -> float | None:
    name = lowered[name_at:]
    at = name.find(query)
    if at >= 0:
        return len(query) * 6 + (10.0 if at == 0 else 0.0)
    found = _subsequence_score(query, path, lowered, name_at)
    return found[0] if found else None


def _cheap_key(query: str, lowered: str) -> tuple[int, int]:
    """An ordering to keep the likely best of a huge candidate set (smaller first)."""
    name_at = lowered.rfind("/") + 1
    in_name = lowered.find(query, name_at)
    return (0 if in_name == name_at else 1 if in_name >= 0 else 2, len(lowered))


def normalize(query: str) -> str:
    return "".join(query.lower().split())


def rank(query: str, paths: Sequence[str], limit: int = 50) -> list[str]:
    """The ``limit`` best matches of ``query`` among ``paths``, best first."""
    return PathSearch(paths).search(query, limit)


@dataclass
class PathSearch:
    """Searches one list of paths; remembers the last query's candidates so that typing one
    more character searches only those."""

    paths: Sequence[str]
    lowered: list[str] = field(default_factory=list)
    _last: tuple[str, list[int]] | None = None

    def __post_init__(self) -> None:
        if not self.lowered:
            self.lowered = [p.lower() for p in self.paths]

    def candidates(self, query: str) -> list[int]:
        """Indexes of the paths that contain ``query``'s characters in order."""
        last = self._last
        if last is not None and query.startswith(last[0]):
            pool: Sequence[int] = last[1]
        else:
            pool = range(len(self.paths))
        if not query:
            found = list(pool)
        else:
            search = _pattern(query).search
            lowered = self.lowered
            found = [i for i in pool if search(lowered[i])]
        self._last = (query, found)
        return found

    def search(self, query: str, limit: int = 50) -> list[str]:
        query = normalize(query)
        found = self.candidates(query)
        lowered = self.lowered
        if len(found) > SCORED:
            found.sort(key=lambda i: _cheap_key(query, lowered[i]))
            found = found[:SCORED]
        scored: list[tuple[float, str]] = []
        for i in found:
            value = score(query, self.paths[i], lowered[i])
            if value is not None:
                scored.append((-value, self.paths[i]))
        scored.sort()
        return [path for _, path in scored[:limit]]
